//! A minimal LSP client over a child process's stdio, for `tandem demo`: Content-Length framing,
//! request ids, and the messages the server sends unasked (notifications and server→client
//! requests) handed to the caller in arrival order.
//!
//! It is deliberately blocking and single-threaded for the caller (one reader thread feeds a
//! channel): the demo is a script, not an editor, and every wait has a deadline so a stuck server
//! becomes a clear error instead of a hang.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A JSON-RPC error object as a reader wants it: its message (and code), not its JSON.
fn error_text(error: &Value) -> String {
    match (error["message"].as_str(), error["code"].as_i64()) {
        (Some(message), Some(code)) => format!("{message} (error {code})"),
        _ => error.to_string(),
    }
}

/// What went wrong talking to the language server.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server process could not be started.
    #[error("cannot start the language server `{program}`: {source}")]
    Spawn {
        /// The program that was run.
        program: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Writing to the server's stdin failed (it probably exited; see its stderr).
    #[error("cannot write to the language server (did it exit? see its messages above): {0}")]
    Write(std::io::Error),
    /// The server closed its stdout.
    #[error("the language server closed its output (it exited; see its messages above)")]
    Closed,
    /// Nothing arrived before the deadline.
    #[error("the language server did not answer within {0:?} (waiting for {1})")]
    Timeout(Duration, String),
    /// The server answered a request with an error.
    #[error("the language server refused `{method}`: {}", error_text(.error))]
    Refused {
        /// The request's method.
        method: String,
        /// The JSON-RPC error object.
        error: Value,
    },
}

/// A message the server sent on its own: a notification, or a request awaiting [`Client::reply`].
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// The method.
    pub method: String,
    /// The request id when the server expects an answer.
    pub id: Option<Value>,
    /// The params (`null` when absent).
    pub params: Value,
}

/// An LSP client driving a child process.
pub struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    timeout: Duration,
    deadline: Instant,
    /// Server-initiated messages received while waiting for a response.
    pending: std::collections::VecDeque<Incoming>,
}

/// Reads one Content-Length framed message; `None` at end of stream or on a malformed frame.
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
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// Frames `msg` with its Content-Length header.
pub fn frame(msg: &Value) -> Vec<u8> {
    let body = msg.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

impl Client {
    /// Starts `command` (its stdin and stdout become the connection; stderr is inherited) and
    /// gives the whole conversation until `timeout` from now.
    pub fn spawn(mut command: Command, timeout: Duration) -> Result<Client, ClientError> {
        let program = command.get_program().to_string_lossy().into_owned();
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| ClientError::Spawn { program, source })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(ClientError::Closed);
        };
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut reader) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        Ok(Client {
            child,
            stdin,
            incoming,
            next_id: 0,
            timeout,
            deadline: Instant::now() + timeout,
            pending: Default::default(),
        })
    }

    fn write(&mut self, msg: &Value) -> Result<(), ClientError> {
        self.stdin
            .write_all(&frame(msg))
            .and_then(|()| self.stdin.flush())
            .map_err(ClientError::Write)
    }

    fn recv(&mut self, waiting_for: &str) -> Result<Value, ClientError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(msg) => Ok(msg),
            Err(RecvTimeoutError::Timeout) => {
                Err(ClientError::Timeout(self.timeout, waiting_for.to_string()))
            }
            Err(RecvTimeoutError::Disconnected) => Err(ClientError::Closed),
        }
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request and waits for its result; server messages arriving meanwhile are kept
    /// for [`Client::next`].
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.write(&msg)?;
        loop {
            let msg = self.recv(&format!("the answer to `{method}`"))?;
            match classify(msg) {
                Message::Response { id: got, result } if got == json!(id) => {
                    return result.map_err(|error| ClientError::Refused {
                        method: method.to_string(),
                        error,
                    });
                }
                Message::Response { .. } => {}
                Message::Incoming(inc) => self.pending.push_back(inc),
            }
        }
    }

    /// The next message the server sends on its own (responses to unknown ids are dropped).
    pub fn next(&mut self, waiting_for: &str) -> Result<Incoming, ClientError> {
        if let Some(inc) = self.pending.pop_front() {
            return Ok(inc);
        }
        loop {
            if let Message::Incoming(inc) = classify(self.recv(waiting_for)?) {
                return Ok(inc);
            }
        }
    }

    /// Answers a server request with a result.
    pub fn reply(&mut self, id: Value, result: Value) -> Result<(), ClientError> {
        self.write(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    /// Answers a server request with an error.
    pub fn reply_error(&mut self, id: Value, code: i64, message: &str) -> Result<(), ClientError> {
        self.write(&json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": code, "message": message}}))
    }

    /// `shutdown` then `exit`, and waits (briefly) for the process; kills it if it lingers.
    pub fn shutdown(mut self) -> Result<(), ClientError> {
        let result = self.request("shutdown", Value::Null).map(|_| ());
        let _ = self.notify("exit", Value::Null);
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
            }
        }
        result
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // After a failure the server may still run: do not leave it behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

enum Message {
    Response {
        id: Value,
        result: Result<Value, Value>,
    },
    Incoming(Incoming),
}

fn classify(mut msg: Value) -> Message {
    match msg.get("method").and_then(Value::as_str) {
        Some(method) => Message::Incoming(Incoming {
            method: method.to_string(),
            id: msg.get("id").cloned(),
            params: msg
                .get_mut("params")
                .map(Value::take)
                .unwrap_or(Value::Null),
        }),
        None => {
            let id = msg.get("id").cloned().unwrap_or(Value::Null);
            let result = match msg.get_mut("error") {
                Some(e) => Err(e.take()),
                None => Ok(msg
                    .get_mut("result")
                    .map(Value::take)
                    .unwrap_or(Value::Null)),
            };
            Message::Response { id, result }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let msg = json!({"jsonrpc": "2.0", "id": 1, "result": {"é": "ü"}});
        let bytes = [frame(&msg), frame(&json!({"a": 1}))].concat();
        let mut reader = std::io::Cursor::new(bytes);
        assert_eq!(read_message(&mut reader), Some(msg));
        assert_eq!(read_message(&mut reader), Some(json!({"a": 1})));
        assert_eq!(read_message(&mut reader), None);
    }

    #[test]
    fn classifies_requests_notifications_and_responses() {
        let Message::Incoming(inc) = classify(json!({"jsonrpc": "2.0", "id": 3,
            "method": "workspace/applyEdit", "params": {"edit": {}}}))
        else {
            panic!("a server request")
        };
        assert_eq!(inc.id, Some(json!(3)));
        assert_eq!(inc.params, json!({"edit": {}}));
        let Message::Response { id, result } =
            classify(json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -1}}))
        else {
            panic!("a response")
        };
        assert_eq!((id, result), (json!(2), Err(json!({"code": -1}))));
    }
}
