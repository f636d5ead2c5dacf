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

/// The `extension_ui_request`s among `lines`.
fn questions(lines: &[serde_json::Value]) -> Vec<serde_json::Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "extension_ui_request")
        .cloned()
        .collect()
}

/// Issue 29: RPC mode asks its client, as the editors ask, before writing a file that makes
/// tools run code (`.git/hooks/pre-commit`, `.envrc`) or a path outside the folder; a refusal
/// (or no answer) writes nothing and the model is told. "Allow once" writes.
#[test]
fn protected_and_outside_writes_are_asked_through_extension_ui_and_a_refusal_writes_nothing() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let outside = sandbox.home.join("outside.txt");
    let write = |id: &str, path: &str| {
        Turn::tool_call(
            id,
            "write",
            json!({"path": path, "content": "touch pwned\n"}),
        )
    };
    sandbox.answer(&write("c1", ".git/hooks/pre-commit"));
    sandbox.answer(&write("c2", ".envrc"));
    sandbox.answer(&write("c3", &outside.display().to_string()));
    sandbox.answer(&Turn::text("refused"));
    sandbox.answer(&write("c4", ".envrc"));
    sandbox.answer(&Turn::text("written"));
    let mut rpc = Rpc::start(&sandbox, &[]);
    rpc.call(json!({"type": "prompt", "message": "plant hooks"}));
    let mut asked = Vec::new();
    for answer in ["Refuse", "cancelled", "Refuse"] {
        let question = loop {
            let line = rpc.next();
            if line["type"] == "extension_ui_request" {
                break line;
            }
        };
        let reply = if answer == "cancelled" {
            json!({"type": "extension_ui_response", "id": question["id"], "cancelled": true})
        } else {
            json!({"type": "extension_ui_response", "id": question["id"], "value": answer})
        };
        rpc.send(&reply);
        asked.push(question);
    }
    let rest = rpc.until("agent_settled");
    assert!(questions(&rest).is_empty(), "{rest:?}");
    assert_eq!(asked[0]["method"], "select");
    let titles: Vec<&str> = asked
        .iter()
        .map(|q| q["title"].as_str().unwrap_or(""))
        .collect();
    assert!(
        titles[0].contains(".git/hooks/pre-commit (it can make tools run code)")
            && titles[0].contains("hooks"),
        "{titles:?}"
    );
    assert!(
        titles[1].contains(".envrc") && titles[1].contains("direnv"),
        "{titles:?}"
    );
    assert!(titles[2].contains("(outside the workspace)"), "{titles:?}");
    // A protected path is asked every time: no "for this session".
    assert_eq!(asked[0]["options"], json!(["Allow once", "Refuse"]));
    assert_eq!(
        asked[2]["options"],
        json!(["Allow once", "Allow for this session", "Refuse"])
    );
    let ends: Vec<&serde_json::Value> = rest
        .iter()
        .filter(|l| l["type"] == "tool_execution_end")
        .collect();
    assert!(ends.iter().all(|e| e["isError"] == true), "{ends:?}");
    assert!(!sandbox.cwd.join(".git/hooks/pre-commit").exists());
    assert!(!sandbox.cwd.join(".envrc").exists());
    assert!(!outside.exists());

    // Allowed once, the write happens.
    rpc.call(json!({"type": "prompt", "message": "again"}));
    let question = loop {
        let line = rpc.next();
        if line["type"] == "extension_ui_request" {
            break line;
        }
    };
    rpc.send(
        &json!({"type": "extension_ui_response", "id": question["id"], "value": "Allow once"}),
    );
    rpc.until("agent_settled");
    assert_eq!(sandbox.read(".envrc"), "touch pwned\n");
    assert!(rpc.finish().success());
}
