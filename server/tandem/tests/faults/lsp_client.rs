//! A small stdio client for `tandem lsp` in a [`Sandbox`]: Content-Length framing, a reader
//! thread, requests whose answers are awaited with a hang guard, server requests that are
//! recorded and, unless the test answers them, left unanswered. The server's stderr goes to a
//! file so the test can check it for panics.

#![allow(dead_code)]

use crate::lsp_support::read_message;
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc::{self, Receiver};
use std::time::Instant;

use serde_json::{json, Value};

use super::harness::{command, wait_or_fail, HANG_GUARD};
use crate::support::{Sandbox, MODEL};

/// The stderr file name in the sandbox's home.
const STDERR: &str = "lsp.stderr";

/// A running `tandem lsp` and the client side of its connection.
pub struct LspClient {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Messages received and not consumed yet (notifications, server requests).
    pub pending: Vec<Value>,
    /// Every message received, in order.
    pub log: Vec<Value>,
    stderr_path: std::path::PathBuf,
}

/// The `type` of a `tandem/event` notification's event.
pub fn event_type(msg: &Value) -> &str {
    msg["params"]["event"]["type"].as_str().unwrap_or_default()
}

impl LspClient {
    /// Starts `tandem lsp` in `sandbox` and initializes it: a client with `applyEdit`,
    /// versioned document changes, no change annotations, `showMessage` and events;
    /// `options` are merged over the sandbox's model and agent dir.
    pub fn start(sandbox: &Sandbox, options: Value) -> LspClient {
        let mut child = command(sandbox, &["lsp"], STDERR)
            .spawn()
            .expect("spawns tandem lsp");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut reader) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        let mut client = LspClient {
            child,
            stdin,
            incoming,
            next_id: 0,
            pending: Vec::new(),
            log: Vec::new(),
            stderr_path: sandbox.home.join(STDERR),
        };
        let mut opts = json!({"model": MODEL, "agentDir": sandbox.agent_dir.display().to_string()});
        if let (Some(o), Some(extra)) = (opts.as_object_mut(), options.as_object()) {
            for (k, v) in extra {
                o.insert(k.clone(), v.clone());
            }
        }
        let root = format!("file://{}", sandbox.cwd.display());
        let init = client.request(
            "initialize",
            json!({"processId": null, "rootUri": root, "initializationOptions": opts,
                "capabilities": {
                    "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
                    "window": {"showMessage": {"messageActionItem": {}}},
                    "experimental": {"tandem": {"events": true}}}}),
        );
        assert!(init.get("error").is_none(), "{init}");
        client.notify("initialized", json!({}));
        client
    }

    /// The server's stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Sends one framed message.
    pub fn write(&mut self, msg: Value) {
        let body = msg.to_string();
        let stdin = self.stdin.as_mut().expect("stdin still open");
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write to server");
        stdin.flush().expect("flush");
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.write(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Answers the server's request `id`.
    pub fn respond(&mut self, id: &Value, result: Value) {
        self.write(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn receive(&mut self, deadline: Instant, what: &str) -> Value {
        let msg = self
            .incoming
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("waiting for {what}: nothing within {HANG_GUARD:?}"));
        self.log.push(msg.clone());
        msg
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            let msg = self.receive(deadline, method);
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
            self.pending.push(msg);
        }
    }

    /// Takes the first message (pending or new) matching `pred`.
    pub fn take(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&pred) {
            return self.pending.remove(i);
        }
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            let msg = self.receive(deadline, what);
            if pred(&msg) {
                return msg;
            }
            self.pending.push(msg);
        }
    }

    /// Takes the server's next request of `method`.
    pub fn server_request(&mut self, method: &str) -> Value {
        self.take(method, |m| m["method"] == method && m.get("id").is_some())
    }

    /// Starts a run in a new session; returns the session id.
    pub fn prompt(&mut self, text: &str) -> Value {
        let r = self.request("tandem/prompt", json!({"text": text}));
        assert!(r.get("error").is_none(), "{r}");
        r["result"]["session"].clone()
    }

    /// The `tandem/event` params of `session` received so far, in order.
    pub fn events(&self, session: &Value) -> Vec<Value> {
        self.log
            .iter()
            .filter(|m| m["method"] == "tandem/event" && &m["params"]["session"] == session)
            .map(|m| m["params"]["event"].clone())
            .collect()
    }

    /// Waits for `session`'s `settled` (and, after a persistence failure, its `error`, which
    /// comes after `settled`); returns the session's events.
    pub fn until_settled(&mut self, session: &Value) -> Vec<Value> {
        let s = session.clone();
        self.take("settled", |m| {
            m["method"] == "tandem/event"
                && m["params"]["session"] == s
                && event_type(m) == "settled"
        });
        self.events(session)
    }

    /// `tandem/state` of `session`.
    pub fn state(&mut self, session: &Value) -> Value {
        let r = self.request("tandem/state", json!({"session": session}));
        assert!(r.get("error").is_none(), "{r}");
        r["result"].clone()
    }

    /// The session's file, from `tandem/state`.
    pub fn session_file(&mut self, session: &Value) -> std::path::PathBuf {
        let state = self.state(session);
        state["sessionFile"]
            .as_str()
            .unwrap_or_else(|| panic!("no session file: {state}"))
            .into()
    }

    /// Closes the server's stdin (the editor went away).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the process to exit (hang guard).
    pub fn wait_exit(&mut self) -> ExitStatus {
        wait_or_fail(&mut self.child, HANG_GUARD, "tandem lsp")
    }

    /// `kill -9`s the server and reaps it.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        let _ = self.child.wait();
    }

    /// `shutdown` then `exit`; waits for the process.
    pub fn shutdown(&mut self) -> ExitStatus {
        let r = self.request("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        self.close_stdin();
        self.wait_exit()
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
