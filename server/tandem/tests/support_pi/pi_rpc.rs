//! Driving pi 1.6 in RPC mode (`--mode rpc`: one JSON command per stdin line, responses and
//! events on stdout), for what its print mode cannot do: compacting and forking a session.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::{Agent, Sandbox};

/// How long one reply may take before the test fails saying which (a guard against a hang,
/// not a timing assertion).
const REPLY_LIMIT: Duration = Duration::from_secs(120);

/// A running `pi --mode rpc --session <file>`.
pub struct PiRpc {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl PiRpc {
    /// Starts pi 1.6 in RPC mode on the session `file`.
    pub fn start(sandbox: &Sandbox, file: &Path) -> PiRpc {
        let path = file.to_string_lossy().into_owned();
        let mut cmd = sandbox.command(Agent::Pi16, &["--mode", "rpc", "--session", &path]);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("start pi 1.6 in RPC mode");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        PiRpc {
            child,
            stdin,
            stdout,
        }
    }

    /// The next stdout line as JSON.
    async fn next(&mut self, waiting_for: &str) -> Value {
        let line = tokio::time::timeout(REPLY_LIMIT, self.stdout.next_line())
            .await
            .unwrap_or_else(|_| panic!("pi 1.6 sent no {waiting_for} in time"))
            .expect("read pi's stdout")
            .unwrap_or_else(|| panic!("pi 1.6 exited before sending {waiting_for}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("pi 1.6 printed {line}: {e}"))
    }

    /// Sends `command` and returns its successful response (events before it are passed over).
    pub async fn command(&mut self, command: Value) -> Value {
        let kind = command["type"].as_str().unwrap_or_default().to_string();
        let mut line = command.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to pi");
        loop {
            let reply = self.next(&format!("a response to {kind}")).await;
            if reply["type"] == "response" && reply["command"] == kind.as_str() {
                assert_eq!(reply["success"], true, "{kind} failed: {reply}");
                return reply;
            }
        }
    }

    /// Prompts and waits until the run has settled.
    pub async fn prompt(&mut self, text: &str) {
        self.command(json!({"type": "prompt", "message": text}))
            .await;
        loop {
            if self.next("agent_settled").await["type"] == "agent_settled" {
                return;
            }
        }
    }

    /// Closes stdin and waits for pi to exit.
    pub async fn finish(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(REPLY_LIMIT, self.child.wait())
            .await
            .expect("pi 1.6 exits when its stdin closes")
            .expect("wait for pi");
        assert!(status.success(), "pi 1.6 in RPC mode exited with {status}");
    }
}
