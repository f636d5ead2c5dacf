//! `tandem acp` over raw newline-delimited JSON-RPC: the client closes stdin in the middle of
//! a turn. (A cancel while a permission request is open is `acp_rust.rs`'s
//! `a_cancel_while_a_permission_request_is_open_ends_the_turn_cancelled_and_untouched`.)

use serde_json::json;
use tandem_tests::wire::Turn;

use super::harness::{check_first_turn_saved, check_session, enqueue_slow, RawAcp};
use crate::support::Sandbox;

#[test]
fn closing_stdin_mid_turn_ends_the_acp_agent_cleanly() {
    let sandbox = Sandbox::with_quick_retries();
    sandbox.write_settings(json!({"defaultProvider": "mock", "defaultModel": "mock-model"}));
    let mut acp = RawAcp::start(&sandbox, &[]);
    let session = acp.new_session(&sandbox);

    // A complete first turn, so the session file exists.
    sandbox.answer(&Turn::text("First answer."));
    acp.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "first"}]}}),
    );
    assert_eq!(acp.result(3)["stopReason"], "end_turn");
    let file = sandbox.only_session();
    let before = std::fs::read(&file).unwrap();

    // A slow second turn; stdin closes while it streams.
    let slow = "streaming while the client disappears ".repeat(30);
    enqueue_slow(&sandbox, &slow);
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
    acp.close(&sandbox);

    let after = std::fs::read(&file).unwrap();
    assert!(after.starts_with(&before), "the file was only appended to");
    let checked = check_session(&file);
    assert_eq!(
        checked.kinds[..6],
        [
            "model_change",
            "thinking_level_change",
            "message:system",
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
    let mut acp = RawAcp::start(&sandbox, &[]);
    let session = acp.new_session(&sandbox);

    let slow = "the first answer, streaming while the client disappears ".repeat(60);
    enqueue_slow(&sandbox, &slow);
    acp.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "my first prompt"}]}}),
    );
    acp.wait("a chunk of the first answer", |m| {
        m["method"] == "session/update"
            && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    });
    acp.close(&sandbox);

    check_first_turn_saved(&sandbox.only_session(), "my first prompt", &slow);
}
