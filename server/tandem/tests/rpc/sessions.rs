//! The session commands: state, names, entries and the tree, new, switch, fork, clone, export.

use serde_json::{json, Value};
use tandem_tests::wire::{Turn, WireApi};

use crate::client::Rpc;
use crate::support::{read_jsonl, Sandbox};

/// Runs one prompt to its end.
fn prompt(rpc: &mut Rpc, text: &str) {
    let started = rpc.data(json!({"type": "prompt", "message": text}));
    assert_eq!(started, json!({"disposition": "started"}));
    rpc.until("agent_settled");
}

fn message_count(rpc: &mut Rpc) -> Value {
    rpc.data(json!({"type": "get_state"}))["messageCount"].clone()
}

#[test]
fn get_state_has_pis_fields_and_names_the_session() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &["--name", "first name"]);
    let state = rpc.data(json!({"type": "get_state"}));
    let keys: Vec<&str> = state
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "thinkingLevel",
            "isStreaming",
            "isCompacting",
            "steeringMode",
            "followUpMode",
            "sessionFile",
            "sessionId",
            "sessionName",
            "autoCompactionEnabled",
            "messageCount",
            "pendingMessageCount"
        ]
    );
    assert_eq!(state["sessionName"], "first name");
    assert_eq!(state["model"]["id"], "mock-model");
    let (before, renamed) = rpc.request(json!({"type": "set_session_name", "name": "  second  "}));
    assert_eq!(
        before,
        [json!({"type": "session_info_changed", "name": "second"})]
    );
    assert_eq!(
        renamed,
        json!({"id": "req-2", "type": "response", "command": "set_session_name",
            "success": true})
    );
    assert_eq!(
        rpc.data(json!({"type": "get_state"}))["sessionName"],
        "second"
    );
    let blank = rpc.call(json!({"type": "set_session_name", "name": "   "}));
    assert_eq!(blank["error"], "Session name cannot be empty");
    assert!(rpc.finish().success());
}

#[test]
fn entries_tree_fork_messages_and_export() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("one"));
    let mut rpc = Rpc::start(&sandbox, &[]);
    prompt(&mut rpc, "first");
    let entries = rpc.data(json!({"type": "get_entries"}));
    let list = entries["entries"].as_array().expect("entries");
    let types: Vec<&str> = list
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        types,
        [
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message"
        ]
    );
    let last = list.last().expect("an entry")["id"].clone();
    assert_eq!(entries["leafId"], last);
    let first_id = list[0]["id"].clone();
    let since = rpc.data(json!({"type": "get_entries", "since": first_id}));
    assert_eq!(since["entries"].as_array().map(Vec::len), Some(4));
    let missing = rpc.call(json!({"type": "get_entries", "since": "nope"}));
    assert_eq!(missing["error"], "Entry not found: nope");

    let tree = rpc.data(json!({"type": "get_tree"}));
    assert_eq!(tree["leafId"], last);
    let mut node = &tree["tree"][0];
    let mut depth = 1;
    while let Some(child) = node["children"].get(0) {
        node = child;
        depth += 1;
    }
    assert_eq!((depth, &node["entry"]["id"]), (5, &last));

    // After the run's system message.
    let user_id = list[3]["id"].clone();
    assert_eq!(
        rpc.data(json!({"type": "get_fork_messages"})),
        json!({"messages": [{"entryId": user_id, "text": "first"}]})
    );

    let out = sandbox.home.join("page.html");
    let exported = rpc.data(json!({"type": "export_html", "outputPath": out}));
    assert_eq!(exported, json!({"path": out.display().to_string()}));
    let page = std::fs::read_to_string(&out).expect("the page");
    assert!(page.contains("first") && page.contains("one"));
    assert!(rpc.finish().success());
}

#[test]
fn new_switch_fork_and_clone_replace_the_session() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("one"));
    sandbox.answer(&Turn::text("two"));
    let mut rpc = Rpc::start(&sandbox, &[]);
    prompt(&mut rpc, "first");
    prompt(&mut rpc, "second");
    let original = rpc.data(json!({"type": "get_state"}));
    let original_file = original["sessionFile"]
        .as_str()
        .expect("a file")
        .to_string();

    let fresh = rpc.call(json!({"type": "new_session"}));
    assert_eq!(
        fresh,
        json!({"id": "req-4", "type": "response", "command": "new_session", "success": true,
            "data": {"cancelled": false}})
    );
    let state = rpc.data(json!({"type": "get_state"}));
    assert_ne!(state["sessionId"], original["sessionId"]);
    assert_eq!(state["messageCount"], 0);

    let switched = rpc.data(json!({"type": "switch_session", "sessionPath": original_file}));
    assert_eq!(switched, json!({"cancelled": false}));
    assert_eq!(message_count(&mut rpc), 5);
    assert_eq!(
        rpc.data(json!({"type": "get_state"}))["sessionId"],
        original["sessionId"]
    );

    let points = rpc.data(json!({"type": "get_fork_messages"}));
    let second = points["messages"][1]["entryId"].clone();
    let forked = rpc.data(json!({"type": "fork", "entryId": second}));
    assert_eq!(forked, json!({"text": "second", "cancelled": false}));
    let state = rpc.data(json!({"type": "get_state"}));
    assert_ne!(state["sessionId"], original["sessionId"]);
    // The system message, the first prompt and its answer.
    assert_eq!(state["messageCount"], 3);
    let bad = rpc.call(json!({"type": "fork", "entryId": "nope"}));
    assert_eq!(bad["error"], "Invalid entry ID for forking");

    rpc.data(json!({"type": "switch_session", "sessionPath": original_file}));
    let cloned = rpc.data(json!({"type": "clone"}));
    assert_eq!(cloned, json!({"cancelled": false}));
    let state = rpc.data(json!({"type": "get_state"}));
    assert_ne!(state["sessionId"], original["sessionId"]);
    assert_eq!(state["messageCount"], 5);
    let clone_file = state["sessionFile"].as_str().expect("a file").to_string();
    let header = &read_jsonl(std::path::Path::new(&clone_file))[0];
    assert_eq!(header["parentSession"], json!(original_file));

    let missing = rpc.call(json!({"type": "switch_session", "sessionPath": "/nonexistent.jsonl"}));
    assert_eq!(missing["success"], false);
    // A failed switch keeps the session.
    assert_eq!(
        rpc.data(json!({"type": "get_state"}))["sessionId"],
        state["sessionId"]
    );
    assert!(rpc.finish().success());
}

#[test]
fn an_unsaved_session_cannot_be_cloned_or_forked() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &["--no-session"]);
    let state = rpc.data(json!({"type": "get_state"}));
    assert!(state.get("sessionFile").is_none(), "{state}");
    let clone = rpc.call(json!({"type": "clone"}));
    assert_eq!(
        clone["error"],
        "This session has not been saved yet. Send a message before cloning or forking it."
    );
    assert!(rpc.finish().success());
    assert!(sandbox.session_files().is_empty());
}
