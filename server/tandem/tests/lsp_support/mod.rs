//! The stdio LSP client the `tandem lsp` black-box tests share: Content-Length framing, a
//! reader thread, requests and notifications, and a temp agent dir whose models.json points the
//! `scripted` provider at a script.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const WAIT: Duration = Duration::from_secs(20);

pub struct Lsp {
    pub child: Child,
    pub stdin: ChildStdin,
    pub incoming: Receiver<Value>,
    pub next_id: i64,
    /// Notifications and server requests received while waiting for responses.
    pub seen: Vec<Value>,
    pub _dir: tempfile::TempDir,
}

pub fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
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
    serde_json::from_slice(&body).ok()
}

/// A temp agent dir whose `script/t` model replays `script`.
pub fn agent_dir(script: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let models = json!({"providers": {"script": {"api": "scripted", "apiKey": "none",
        "baseUrl": script_path.display().to_string(), "models": [{"id": "t"}]}}});
    std::fs::write(dir.path().join("models.json"), models.to_string()).unwrap();
    std::fs::create_dir_all(dir.path().join("project")).unwrap();
    dir
}

impl Lsp {
    pub fn start(script: &Value) -> Lsp {
        let dir = agent_dir(script);
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .arg("lsp")
            .current_dir(dir.path().join("project"))
            .env("HOME", dir.path())
            // No PI_CODING_AGENT_DIR: the agent dir comes from initializationOptions.
            .env_remove("PI_CODING_AGENT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
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
        Lsp {
            child,
            stdin,
            incoming,
            next_id: 0,
            seen: Vec::new(),
            _dir: dir,
        }
    }

    pub fn dir(&self) -> &Path {
        self._dir.path()
    }

    pub fn write(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.write(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.write(msg);
        let deadline = Instant::now() + WAIT;
        loop {
            let msg = self
                .incoming
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
            self.seen.push(msg);
        }
    }

    pub fn initialize(&mut self, encodings: Value, options: Value) -> Value {
        let root = format!("file://{}", self.dir().join("project").display());
        let response = self.request(
            "initialize",
            json!({"processId": null, "rootUri": root, "initializationOptions": options,
                "capabilities": {"general": {"positionEncodings": encodings},
                    "experimental": {"tandem": {"events": true}}}}),
        );
        self.notify("initialized", json!({}));
        response
    }

    /// `tandem/event`s of `session` until its `settled` (those already seen included).
    pub fn events_until_settled(&mut self, session: &Value) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        loop {
            let events: Vec<Value> = self
                .seen
                .iter()
                .filter(|m| m["method"] == "tandem/event" && &m["params"]["session"] == session)
                .map(|m| m["params"].clone())
                .collect();
            if events.iter().any(|e| e["event"]["type"] == "settled") {
                return events;
            }
            let msg = self
                .incoming
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("no settled event");
            self.seen.push(msg);
        }
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn options(lsp: &Lsp) -> Value {
    json!({"model": "script/t", "agentDir": lsp.dir().display().to_string()})
}
