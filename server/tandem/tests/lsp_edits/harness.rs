//! The test client: spawns `tandem lsp`, frames JSON-RPC by hand, answers or withholds
//! answers to the server's requests, and collects `tandem/event`s per session.
//!
//! Each server gets its own temp agent dir (a `models.json` whose `script/t` model uses the
//! `scripted` api with a script file as baseUrl) holding an empty `project` folder, which is
//! the server's cwd and workspace root.

use crate::lsp_support::read_message;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any one wait for the server may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// A running `tandem lsp` and the client side of its connection.
pub struct Lsp {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Messages received but not consumed yet (notifications, server requests).
    seen: Vec<Value>,
    /// Every message received, consumed or not, in order.
    pub log: Vec<Value>,
    dir: tempfile::TempDir,
}

/// A temp agent dir whose `script/t` model replays `script`, with an empty `project` folder.
fn agent_dir(script: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let models = json!({"providers": {"script": {"api": "scripted", "apiKey": "none",
        "baseUrl": script_path.display().to_string(), "models": [{"id": "t"}]}}});
    std::fs::write(dir.path().join("models.json"), models.to_string()).unwrap();
    std::fs::create_dir_all(dir.path().join("project")).unwrap();
    dir
}

/// What the test client declares at `initialize`.
#[derive(Clone, Copy)]
pub struct Client {
    /// `experimental.tandem.events`.
    pub events: bool,
    /// `workspace.applyEdit`.
    pub apply_edit: bool,
    /// `workspace.workspaceEdit.documentChanges`.
    pub document_changes: bool,
    /// `workspace.workspaceEdit.changeAnnotationSupport`.
    pub annotations: bool,
}

/// A client with versioned document changes but no change annotations.
pub const PLAIN: Client = Client {
    events: true,
    apply_edit: true,
    document_changes: true,
    annotations: false,
};

/// A client that previews edits annotated with `needsConfirmation`.
pub const ANNOTATING: Client = Client {
    events: true,
    apply_edit: true,
    document_changes: true,
    annotations: true,
};

impl Lsp {
    pub fn start(script: &Value) -> Lsp {
        let dir = agent_dir(script);
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .arg("lsp")
            .current_dir(dir.path().join("project"))
            .env("HOME", dir.path())
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
            log: Vec::new(),
            dir,
        }
    }

    /// Starts the server and initializes it with `client`'s capabilities and `extra` options
    /// (merged over the model and the agent dir).
    pub fn started(script: &Value, client: Client, extra: Value) -> Lsp {
        let mut lsp = Lsp::start(script);
        let mut options = json!({"model": "script/t",
            "agentDir": lsp.dir.path().display().to_string()});
        if let (Some(o), Some(e)) = (options.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        lsp.initialize(client, options);
        lsp
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn uri(&self, name: &str) -> String {
        format!("file://{}", self.project().join(name).display())
    }

    pub fn write(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.write(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Answers the server's request `id`.
    pub fn respond(&mut self, id: &Value, result: Value) {
        self.write(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// The next message from the server, before `deadline`.
    pub fn receive(&mut self, deadline: Instant, what: &str) -> Value {
        let msg = self
            .incoming
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
        self.log.push(msg.clone());
        msg
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
            let msg = self.receive(deadline, method);
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
            self.seen.push(msg);
        }
    }

    pub fn initialize(&mut self, client: Client, options: Value) {
        let root = format!("file://{}", self.project().display());
        let mut workspace_edit = json!({"documentChanges": client.document_changes});
        if client.annotations {
            workspace_edit["changeAnnotationSupport"] = json!({"groupsOnLabel": true});
        }
        let mut caps = json!({"general": {"positionEncodings": ["utf-16"]},
            "workspace": {"applyEdit": client.apply_edit, "workspaceEdit": workspace_edit}});
        if client.events {
            caps["experimental"] = json!({"tandem": {"events": true}});
        }
        let r = self.request(
            "initialize",
            json!({"processId": null, "rootUri": root, "initializationOptions": options,
                "capabilities": caps}),
        );
        assert_eq!(
            r["result"]["capabilities"]["positionEncoding"], "utf-16",
            "{r}"
        );
        self.notify("initialized", json!({}));
    }

    pub fn open(&mut self, name: &str, version: i32, text: &str) -> String {
        let uri = self.uri(name);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "rust", "version": version,
                "text": text}}),
        );
        uri
    }

    /// Takes the first unconsumed message matching `pred`, waiting for it if needed.
    pub fn take(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.seen.iter().position(&pred) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let msg = self.receive(deadline, what);
            if pred(&msg) {
                return msg;
            }
            self.seen.push(msg);
        }
    }

    /// The server's next request of `method` (consumed).
    pub fn server_request(&mut self, method: &str) -> Value {
        self.take(method, |m| m["method"] == method && m.get("id").is_some())
    }

    /// `tandem/event`s of `session` until its `settled`, consumed and in arrival order.
    pub fn events_until_settled(&mut self, session: &Value) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let msg = self.take("settled", |m| {
                m["method"] == "tandem/event" && &m["params"]["session"] == session
            });
            let params = msg["params"].clone();
            let done = params["event"]["type"] == "settled";
            events.push(params);
            if done {
                return events;
            }
        }
    }

    /// Every message received so far whose method is `method`.
    pub fn received(&self, method: &str) -> Vec<&Value> {
        self.log.iter().filter(|m| m["method"] == method).collect()
    }

    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `type` of a `tandem/event`'s params.
pub fn event_type(e: &Value) -> &str {
    e["event"]["type"].as_str().unwrap_or("")
}

/// The `tool_end` of the first call of tool `name`.
pub fn tool_end<'a>(events: &'a [Value], name: &str) -> &'a Value {
    let id = events
        .iter()
        .find(|e| event_type(e) == "tool_start" && e["event"]["name"] == name)
        .unwrap_or_else(|| panic!("no tool_start for {name}: {events:?}"))["event"]["toolCallId"]
        .clone();
    events
        .iter()
        .find(|e| event_type(e) == "tool_end" && e["event"]["toolCallId"] == id)
        .unwrap_or_else(|| panic!("no tool_end for {name}"))
}

/// The text of the last assistant message.
pub fn answer_text(events: &[Value]) -> String {
    let last_assistant = events
        .iter()
        .rev()
        .find(|e| event_type(e) == "message_end" && e["event"]["message"]["role"] == "assistant")
        .expect("an assistant message");
    let content = last_assistant["event"]["message"]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    content.iter().filter_map(|b| b["text"].as_str()).collect()
}

/// Asserts that the events' seqs are 1, 2, 3, …
pub fn assert_contiguous(events: &[Value]) {
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

/// A script that edits `path` (replacing `old` with `new`), then answers `answer`.
pub fn edit_script(path: &str, old: &str, new: &str, answer: &str) -> Value {
    json!({"turns": [
        {"toolCalls": [{"name": "edit", "arguments":
            {"path": path, "edits": [{"oldText": old, "newText": new}]}}]},
        {"text": answer}]})
}

/// Prompts and asserts a run started; returns the session.
pub fn prompt(lsp: &mut Lsp, params: Value) -> Value {
    let r = lsp.request("tandem/prompt", params);
    assert_eq!(r["result"]["queued"], false, "{r}");
    r["result"]["session"].clone()
}

/// The text edits of `edit` for `uri`, whichever shape carries them (`changes` or
/// `documentChanges`).
pub fn edits_for(edit: &Value, uri: &str) -> Value {
    if let Some(edits) = edit["changes"].get(uri) {
        return edits.clone();
    }
    edit["documentChanges"]
        .as_array()
        .and_then(|docs| docs.iter().find(|d| d["textDocument"]["uri"] == uri))
        .map(|d| d["edits"].clone())
        .unwrap_or_else(|| panic!("no edits for {uri} in {edit}"))
}
