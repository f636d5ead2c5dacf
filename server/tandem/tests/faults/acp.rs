//! `tandem acp` over raw newline-delimited JSON-RPC: the client closes stdin in the middle of
//! a turn. (A cancel while a permission request is open is `acp_rust.rs`'s
//! `a_cancel_while_a_permission_request_is_open_ends_the_turn_cancelled_and_untouched`.)

use std::io::{BufRead, BufReader, Write};
use std::process::ChildStdin;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_tests::wire::{self, Turn, WireApi};

use super::harness::check_session;
use crate::support::process::{assert_no_panic, command, wait_or_fail, HANG_GUARD};
use crate::support::Sandbox;

struct Acp {
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Acp {
    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    /// The first message (seen or new) matching `pred`.
    fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(m) = self.seen.iter().find(|m| pred(m)) {
            return m.clone();
        }
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            let m = self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("waiting for {what}: nothing within {HANG_GUARD:?}"));
            self.seen.push(m.clone());
            if pred(&m) {
                return m;
            }
        }
    }

    fn response(&mut self, id: i64) -> Value {
        let r = self.wait(&format!("response {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        });
        assert!(r.get("error").is_none(), "{r}");
        r["result"].clone()
    }
}

#[test]
fn closing_stdin_mid_turn_ends_the_acp_agent_cleanly() {
    let sandbox = Sandbox::with_quick_retries();
    sandbox.write_settings(json!({"defaultProvider": "mock", "defaultModel": "mock-model"}));
    let mut child = command(&sandbox, &["acp"], "acp.stderr")
        .spawn()
        .expect("spawns tandem acp");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let mut acp = Acp {
        stdin: child.stdin.take(),
        lines,
        seen: Vec::new(),
    };
    acp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    acp.response(1);
    acp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": sandbox.cwd, "mcpServers": []}}));
    let session = acp.response(2)["sessionId"].clone();

    // A complete first turn, so the session file exists.
    sandbox.answer(&Turn::text("First answer."));
    acp.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "first"}]}}),
    );
    assert_eq!(acp.response(3)["stopReason"], "end_turn");
    let file = sandbox.only_session();
    let before = std::fs::read(&file).unwrap();

    // A slow second turn; stdin closes while it streams.
    let slow = "streaming while the client disappears ".repeat(30);
    sandbox.enqueue(
        wire::response(WireApi::OpenAiCompletions, &Turn::text(slow))
            .with_chunk(16)
            .with_chunk_delay(Duration::from_millis(20)),
    );
    acp.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "second"}]}}),
    );
    acp.wait("a chunk of the second answer", |m| {
        m["method"] == "session/update"
            && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            && m["params"]["update"]["content"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("streaming") || t.contains("client"))
    });
    acp.stdin = None;
    let status = wait_or_fail(&mut child, HANG_GUARD, "tandem acp after stdin closed");
    let stderr = std::fs::read_to_string(sandbox.home.join("acp.stderr")).unwrap();
    assert_no_panic(&stderr);
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");

    let after = std::fs::read(&file).unwrap();
    assert!(after.starts_with(&before), "the file was only appended to");
    let checked = check_session(&file);
    assert_eq!(
        checked.kinds[..5],
        [
            "model_change",
            "thinking_level_change",
            "message:user",
            "message:assistant",
            "message:user"
        ]
    );
}

/// Issue 16, part 7: the client goes away during a new session's first turn; the prompt and the
/// partial answer are saved (pi writes a session's file only at its first answer).
#[test]
fn closing_stdin_in_a_new_sessions_first_turn_saves_the_prompt_and_the_partial_answer() {
    let sandbox = Sandbox::with_quick_retries();
    sandbox.write_settings(json!({"defaultProvider": "mock", "defaultModel": "mock-model"}));
    let mut child = command(&sandbox, &["acp"], "acp.stderr")
        .spawn()
        .expect("spawns tandem acp");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let mut acp = Acp {
        stdin: child.stdin.take(),
        lines,
        seen: Vec::new(),
    };
    acp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    acp.response(1);
    acp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": sandbox.cwd, "mcpServers": []}}));
    let session = acp.response(2)["sessionId"].clone();

    let slow = "the first answer, streaming while the client disappears ".repeat(60);
    sandbox.enqueue(
        wire::response(WireApi::OpenAiCompletions, &Turn::text(slow.clone()))
            .with_chunk(16)
            .with_chunk_delay(Duration::from_millis(20)),
    );
    acp.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "my first prompt"}]}}),
    );
    acp.wait("a chunk of the first answer", |m| {
        m["method"] == "session/update"
            && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    });
    acp.stdin = None;
    let status = wait_or_fail(&mut child, HANG_GUARD, "tandem acp after stdin closed");
    let stderr = std::fs::read_to_string(sandbox.home.join("acp.stderr")).unwrap();
    assert_no_panic(&stderr);
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");

    let checked = check_session(&sandbox.only_session());
    let user = checked
        .kinds
        .iter()
        .position(|k| k == "message:user")
        .unwrap_or_else(|| panic!("no user message: {:?}", checked.kinds));
    assert_eq!(
        crate::support::content_text(&checked.message(user)["content"], ""),
        "my first prompt"
    );
    assert_eq!(
        checked.kinds.last().map(String::as_str),
        Some("message:assistant")
    );
    assert_eq!(checked.stop_reasons(), ["aborted"]);
    let partial = checked.message(checked.kinds.len() - 1);
    let text = crate::support::content_text(&partial["content"], "");
    assert!(
        !text.is_empty() && slow.starts_with(&text),
        "partial answer: {text:?}"
    );
}
