//! A stdio LSP client for black-box tests that keep many things in flight: requests are sent
//! without waiting, every response is kept by id, notifications and server requests are kept in
//! order, and server requests are answered by a closure the test chooses (the editor's
//! behaviour: apply edits, answer questions). The server's stderr goes to a file, so a test can
//! read every line the server logged.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any wait may take before the test fails (a hang guard, never a timing assertion).
pub const GUARD: Duration = Duration::from_secs(90);

/// What the client answers to a server request (`method`, `params`) → `result`, or
/// `{"$error": {code, message}}` for an error response.
pub type Answer = Box<dyn FnMut(&str, &Value) -> Value + Send>;

/// The server process, what it sent, and the raw bytes of everything it wrote to stdout.
pub struct Client {
    pub child: Child,
    stdin: ChildStdin,
    incoming: Receiver<(Value, usize)>,
    next_id: i64,
    /// Notifications and server requests, in arrival order.
    pub seen: Vec<Value>,
    /// Responses by request id.
    pub responses: HashMap<i64, Value>,
    /// Every message as received (responses, notifications, requests), in order.
    pub wire: Vec<Value>,
    /// Bytes read from stdout (headers included).
    pub bytes: usize,
    answer: Answer,
    stderr: PathBuf,
}

fn read_message(reader: &mut impl BufRead) -> Option<(Value, usize)> {
    let mut length = None;
    let mut bytes = 0;
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).ok()?;
        if n == 0 {
            return None;
        }
        bytes += n;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    bytes += body.len();
    Some((serde_json::from_slice(&body).ok()?, bytes))
}

impl Client {
    /// Starts `command` (`tandem lsp` with its environment) with stderr going to `stderr`.
    pub fn spawn(mut command: Command, stderr: &Path, answer: Answer) -> Client {
        let log = std::fs::File::create(stderr).expect("stderr file");
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("starts tandem lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut reader) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            incoming,
            next_id: 0,
            seen: Vec::new(),
            responses: HashMap::new(),
            wire: Vec::new(),
            bytes: 0,
            answer,
            stderr: stderr.to_path_buf(),
        }
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    pub fn write(&mut self, msg: &Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request without waiting; its id.
    pub fn send(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Handles one incoming message; false when none came before `deadline`.
    pub fn pump_until(&mut self, deadline: Instant) -> bool {
        let wait = deadline.saturating_duration_since(Instant::now());
        let Ok((msg, bytes)) = self.incoming.recv_timeout(wait) else {
            return false;
        };
        self.take(msg, bytes);
        true
    }

    /// Handles every message already received, without waiting.
    pub fn drain(&mut self) {
        while let Ok((msg, bytes)) = self.incoming.try_recv() {
            self.take(msg, bytes);
        }
    }

    fn take(&mut self, msg: Value, bytes: usize) {
        self.bytes += bytes;
        self.wire.push(msg.clone());
        match (msg.get("id"), msg["method"].as_str()) {
            (Some(id), Some(method)) => {
                let result = (self.answer)(method, &msg["params"]);
                let id = id.clone();
                // An answer `{"$error": {...}}` is sent as the request's error (an editor that
                // does not implement the method).
                match result.get("$error") {
                    Some(error) => self.write(&json!({"jsonrpc": "2.0", "id": id, "error": error})),
                    None => self.write(&json!({"jsonrpc": "2.0", "id": id, "result": result})),
                }
                self.seen.push(msg);
            }
            (Some(id), None) => {
                let id = id.as_i64().expect("numeric response id");
                self.responses.insert(id, msg);
            }
            _ => self.seen.push(msg),
        }
    }

    /// Pumps until `done` holds; panics naming `what` after [`GUARD`].
    pub fn wait(&mut self, what: &str, mut done: impl FnMut(&Client) -> bool) {
        let deadline = Instant::now() + GUARD;
        while !done(self) {
            assert!(self.pump_until(deadline), "waited too long for {what}");
        }
    }

    /// The response to request `id`, waiting for it.
    pub fn response(&mut self, id: i64) -> Value {
        self.wait(&format!("the response to request {id}"), |c| {
            c.responses.contains_key(&id)
        });
        self.responses[&id].clone()
    }

    /// Sends a request and waits for its response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.response(id)
    }

    /// The `result` of a request; panics on an error response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// `initialize` + `initialized` with the workspace folder `root`.
    pub fn initialize(&mut self, root: &Path, capabilities: Value, options: Value) -> Value {
        let uri = file_uri(root);
        let r = self.call(
            "initialize",
            json!({"processId": null, "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "project"}],
                "capabilities": capabilities, "initializationOptions": options}),
        );
        self.notify("initialized", json!({}));
        r
    }

    /// The `tandem/event` params of `session`, in order.
    pub fn events(&self, session: &str) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "tandem/event" && m["params"]["session"] == session)
            .map(|m| m["params"]["event"].clone())
            .collect()
    }

    /// How many `settled` events `session` sent.
    pub fn settled(&self, session: &str) -> usize {
        self.events(session)
            .iter()
            .filter(|e| e["type"] == "settled")
            .count()
    }

    /// Waits until `session` has sent `n` `settled` events.
    pub fn wait_settled(&mut self, session: &str, n: usize) {
        let s = session.to_string();
        self.wait(&format!("settled #{n} of {session}"), |c| {
            c.settled(&s) >= n
        });
    }

    /// Server requests with `method`, params only.
    pub fn server_requests(&self, method: &str) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == method && m.get("id").is_some())
            .map(|m| m["params"].clone())
            .collect()
    }

    /// `shutdown` + `exit`, then waits for the process (killed if it does not exit).
    pub fn shutdown(&mut self) {
        let id = self.send("shutdown", Value::Null);
        self.response(id);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            self.drain();
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `file://` URI of an absolute path (no characters needing escapes in tests).
pub fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Concatenated `text_delta`s of each assistant message of `events`, in order.
pub fn assistant_texts(events: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for e in events {
        match e["type"].as_str() {
            Some("message_start") if e["role"] == "assistant" => current = Some(String::new()),
            Some("text_delta") => {
                if let Some(c) = current.as_mut() {
                    c.push_str(e["delta"].as_str().unwrap_or_default());
                }
            }
            Some("message_end") => {
                if let Some(c) = current.take() {
                    out.push(c);
                }
            }
            _ => {}
        }
    }
    out
}
