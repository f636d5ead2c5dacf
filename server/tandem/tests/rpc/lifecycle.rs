//! Shutdown (stdin EOF, SIGTERM) and the folder's trust question.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::client::{start_a_long_turn, Rpc};
use crate::support::{read_jsonl, Sandbox};

#[test]
fn stdin_eof_mid_turn_aborts_it_keeps_the_prompt_and_exits_0() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &[]);
    start_a_long_turn(&sandbox, &mut rpc, "keep me");
    let status = rpc.finish();
    assert_eq!(status.code(), Some(0));
    assert_prompt_kept(&sandbox, "keep me");
}

/// The session file holds the prompt `text`.
fn assert_prompt_kept(sandbox: &Sandbox, text: &str) {
    let entries = read_jsonl(&sandbox.only_session());
    assert!(
        entries
            .iter()
            .any(|e| e["message"]["content"][0]["text"] == text),
        "{entries:?}"
    );
}

#[test]
fn sigterm_exits_143_and_an_idle_eof_exits_0() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &[]);
    assert_eq!(rpc.call(json!({"type": "get_state"}))["success"], true);
    assert_eq!(rpc.terminate().code(), Some(143));
    let rpc = Rpc::start(&sandbox, &[]);
    assert_eq!(rpc.finish().code(), Some(0));
    // Nothing was asked: no session file.
    assert!(sandbox.session_files().is_empty());
}

/// A project whose `.pi/prompts` needs trust.
fn untrusted_project() -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.cwd.join(".pi/prompts")).expect("prompts dir");
    sandbox.write(
        ".pi/prompts/fix.md",
        "---\ndescription: Fix it\n---\nFix $1",
    );
    sandbox.answer(&Turn::text("ok"));
    sandbox
}

#[test]
fn the_trust_question_is_an_extension_ui_select_before_the_first_prompt() {
    let sandbox = untrusted_project();
    let mut rpc = Rpc::start(&sandbox, &[]);
    assert_eq!(
        rpc.data(json!({"type": "get_commands"})),
        json!({"commands": []})
    );
    rpc.call(json!({"type": "prompt", "message": "hi"}));
    let question = rpc.next();
    assert_eq!(
        (&question["type"], &question["method"], &question["timeout"]),
        (
            &json!("extension_ui_request"),
            &json!("select"),
            &json!(60000)
        )
    );
    assert_eq!(
        question["options"],
        json!(["Trust", "Trust always", "Don't trust"])
    );
    assert!(question["title"]
        .as_str()
        .is_some_and(|t| t.contains(".pi/prompts")));
    rpc.send(
        &json!({"type": "extension_ui_response", "id": question["id"],
        "value": "Trust"}),
    );
    rpc.until("agent_settled");
    let commands = rpc.data(json!({"type": "get_commands"}));
    assert_eq!(commands["commands"][0]["name"], "fix", "{commands}");
    assert_eq!(commands["commands"][0]["sourceInfo"]["scope"], "project");
    assert!(rpc.finish().success());
    // Only for this session: nothing saved.
    assert!(!sandbox.agent_dir.join("trust.json").exists());
}

#[test]
fn a_cancelled_trust_question_leaves_the_folder_untrusted() {
    let sandbox = untrusted_project();
    let mut rpc = Rpc::start(&sandbox, &[]);
    rpc.call(json!({"type": "prompt", "message": "hi"}));
    let question = rpc.next();
    rpc.send(&json!({"type": "extension_ui_response", "id": question["id"], "cancelled": true}));
    rpc.until("agent_settled");
    assert_eq!(
        rpc.data(json!({"type": "get_commands"})),
        json!({"commands": []})
    );
    assert!(rpc.finish().success());
    assert!(rpc_stderr_mentions_untrusted(&sandbox));
}

fn rpc_stderr_mentions_untrusted(sandbox: &Sandbox) -> bool {
    std::fs::read_to_string(sandbox.home.join("rpc-stderr.txt"))
        .unwrap_or_default()
        .contains("not trusted")
}

#[test]
fn an_unanswered_question_blocks_neither_commands_nor_shutdown() {
    let sandbox = untrusted_project();
    let mut rpc = Rpc::start(&sandbox, &[]);
    rpc.call(json!({"type": "prompt", "message": "hi"}));
    let question = rpc.next();
    assert_eq!(question["type"], "extension_ui_request");
    // The prompt waits for the answer; everything else is answered meanwhile.
    let state = rpc.data(json!({"type": "get_state"}));
    assert_eq!(state["isStreaming"], true);
    assert_eq!(
        rpc.data(json!({"type": "get_messages"})),
        json!({"messages": []})
    );
    assert_eq!(rpc.finish().code(), Some(0));
    // The prompt is not lost: it is in the session file.
    assert_prompt_kept(&sandbox, "hi");
}
