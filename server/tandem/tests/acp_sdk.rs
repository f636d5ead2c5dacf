//! `tandem acp` driven by a real ACP client: the official TypeScript SDK
//! (`@agentclientprotocol/sdk`, tests/acp-sdk/), against the mock LLM server with the fixtures
//! in fixtures/acp/. Every JSON-RPC message of every run, both ways, is checked against the
//! SDK's JSON Schema (schema/v1/schema.json).
//!
//! One test per scenario of tests/acp-sdk/scenarios.mjs: the test queues the model's answers,
//! writes the project files, runs the scenario and checks its report (see `harness`).
//! Needs Node.js 20+ and `scripts/install-node-deps`. To run a scenario by hand, see
//! tests/acp-sdk/README.md. The last test drives Tandem with a third-party client instead,
//! acpx (tests/acpx/, on the Node 24 of `scripts/install-pi16`).

#[path = "acp_sdk/harness.rs"]
mod harness;

use harness::{mentions, AcpSandbox, ToolCall};
use serde_json::{json, Value};

const HELLO: &str = "hello world\nsecond line\n";
const HELLO_EDITED: &str = "hello there\nsecond line\n";
/// The prompt of the edit scenarios (edit-hello.sse answers it).
const EDIT_PROMPT: &str = "Change hello world to hello there in hello.txt";

/// The edit of edit-hello.sse, as the model sent it.
fn edit_hello_args() -> Value {
    json!({"path": "hello.txt", "edits": [{"oldText": "hello world", "newText": "hello there"}]})
}

/// The only item of `items`; panics naming `what` unless there is exactly one.
fn only<'v>(items: Vec<&'v Value>, what: &str) -> &'v Value {
    assert_eq!(items.len(), 1, "{what}: {items:?}");
    items[0]
}

/// Checks the announced edit of hello.txt: kind, raw input, location.
fn check_edit_announced(sandbox: &AcpSandbox, call: &ToolCall) {
    assert!(
        call.announced,
        "first update of {} is not a tool_call",
        call.id
    );
    assert_eq!(call.kind.as_deref(), Some("edit"), "kind of {}", call.id);
    assert!(
        call.title.as_deref().is_some_and(|t| !t.is_empty()),
        "title of {}",
        call.id
    );
    assert_eq!(
        call.raw_input.as_ref(),
        Some(&edit_hello_args()),
        "rawInput"
    );
    let locations = call.locations.clone().unwrap_or_default();
    assert_eq!(
        locations[0]["path"],
        sandbox.path("hello.txt"),
        "locations: {locations}"
    );
}

/// Checks a diff item of hello.txt's edit.
fn check_hello_diff(sandbox: &AcpSandbox, diff: &Value) {
    assert_eq!(diff["path"], sandbox.path("hello.txt"), "diff: {diff}");
    let old = diff["oldText"].as_str().unwrap_or_default();
    let new = diff["newText"].as_str().unwrap_or_default();
    assert!(
        old.contains("hello world") && !old.contains("hello there"),
        "oldText: {old:?}"
    );
    assert!(
        new.contains("hello there") && !new.contains("hello world"),
        "newText: {new:?}"
    );
}

/// The statuses of a tool call that ran to `end`: pending, in_progress, end (repeats of one
/// status folded).
fn check_statuses(call: &ToolCall, end: &str) {
    let mut statuses = call.statuses.clone();
    statuses.dedup();
    assert_eq!(
        statuses,
        ["pending", "in_progress", end],
        "statuses of {}",
        call.id
    );
}

/// The text of the tool-result messages in a model request (OpenAI chat completions).
fn tool_results(request: &Value) -> String {
    request["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| harness::strings(&m["content"]).concat())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The schema checks themselves: valid messages pass, broken ones fail (no agent involved).
#[test]
fn schema_checks_catch_bad_messages() {
    let dir = harness::repo_root().join("tests/acp-sdk");
    assert!(
        dir.join("node_modules/ajv").is_dir(),
        "{}/node_modules is missing: run scripts/install-node-deps",
        dir.display()
    );
    let out = std::process::Command::new("node")
        .arg("selftest.mjs")
        .current_dir(&dir)
        .output()
        .expect("runs node");
    assert!(
        out.status.success(),
        "selftest.mjs failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn handshake() {
    let sandbox = AcpSandbox::new();
    let report = sandbox.run("handshake");
    report.expect_ran();

    // initialize: version 1 although the client asked for 7, agent info and capabilities.
    let init = report.result("initialize");
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentInfo"]["name"], "tandem");
    assert_eq!(init["agentInfo"]["title"], "Tandem");
    assert!(
        init["agentInfo"]["version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "agentInfo: {}",
        init["agentInfo"]
    );
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(
        caps["promptCapabilities"],
        json!({"image": true, "audio": false, "embeddedContext": true})
    );
    assert_eq!(caps["mcpCapabilities"], json!({"http": true, "sse": false}));
    assert_eq!(caps["sessionCapabilities"]["list"], json!({}));
    let auth = init["authMethods"].as_array().cloned().unwrap_or_default();
    assert_eq!(auth.len(), 1, "authMethods: {auth:?}");
    assert_eq!(auth[0]["id"], "pi-config");
    assert!(
        auth[0]["name"].as_str().is_some_and(|n| !n.is_empty()),
        "authMethods: {auth:?}"
    );

    // authenticate: the mock provider has a key.
    assert_eq!(report.result("authenticate"), &json!({}));
    assert_eq!(report.error("authenticate_unknown")["code"], -32602);

    // session/new: modes and config options.
    let new = report.result("new");
    let session_id = new["sessionId"].as_str().expect("sessionId").to_string();
    assert!(!session_id.is_empty());
    assert_eq!(new["modes"]["currentModeId"], "ask");
    let mode_ids: Vec<&Value> = new["modes"]["availableModes"]
        .as_array()
        .expect("availableModes")
        .iter()
        .map(|m| &m["id"])
        .collect();
    assert_eq!(
        mode_ids,
        [&json!("ask"), &json!("accept-edits"), &json!("read-only")]
    );
    let options = new["configOptions"].as_array().expect("configOptions");
    let option = |id: &str| {
        options
            .iter()
            .find(|o| o["id"] == id)
            .unwrap_or_else(|| panic!("no config option {id}: {options:?}"))
    };
    assert_eq!(option("mode")["currentValue"], "ask");
    assert_eq!(option("model")["category"], "model");
    assert_eq!(option("thinking")["category"], "thought_level");
    let model = option("model");
    let current = model["currentValue"].as_str().unwrap_or_default();
    assert!(
        !current.is_empty() && harness::strings(&model["options"]).contains(&current),
        "model option: {model}"
    );

    // Then an available_commands_update for that session.
    let commands: Vec<&Value> = report
        .update_entries()
        .into_iter()
        .filter(|e| e["update"]["sessionUpdate"] == "available_commands_update")
        .collect();
    assert!(
        commands
            .iter()
            .any(|e| e["sessionId"] == session_id.as_str()
                && e["update"]["availableCommands"].is_array()),
        "no available_commands_update for {session_id}: {commands:?}"
    );

    // Errors: relative cwd, unknown session, unknown extension request.
    assert_eq!(report.error("new_relative_cwd")["code"], -32602);
    assert_eq!(report.error("prompt_unknown_session")["code"], -32002);
    assert_eq!(report.error("ext_request")["code"], -32601);
    // An unknown `_` notification is ignored and the connection still works.
    report.result("ext_notification");
    let again = report.result("new_again")["sessionId"]
        .as_str()
        .expect("sessionId");
    assert_ne!(again, session_id);
    assert!(report.calls("session/request_permission").is_empty());
    assert!(sandbox.model_requests().is_empty(), "no turn was run");
    report.expect_valid();
}

#[test]
fn streamed_turn() {
    let sandbox = AcpSandbox::new();
    sandbox.queue(&["streamed.sse", "length.sse"]);
    let report = sandbox.run("streamed");
    report.expect_ran();

    assert_eq!(report.stop_reason("prompt"), "end_turn");
    assert_eq!(
        report.text("prompt", "agent_message_chunk"),
        "Hello, streamed wörld 🦀!"
    );
    assert_eq!(
        report.text("prompt", "agent_thought_chunk"),
        "Let me think about greetings."
    );
    // Thinking comes before the answer.
    let kinds: Vec<&Value> = report
        .updates("prompt")
        .into_iter()
        .map(|u| &u["sessionUpdate"])
        .filter(|k| *k == "agent_message_chunk" || *k == "agent_thought_chunk")
        .collect();
    assert_eq!(
        kinds.first(),
        Some(&&json!("agent_thought_chunk")),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last(),
        Some(&&json!("agent_message_chunk")),
        "{kinds:?}"
    );
    let session_id = report.result("new")["sessionId"].clone();
    for entry in report.update_entries() {
        assert_eq!(
            entry["sessionId"], session_id,
            "update of another session: {entry}"
        );
    }

    // finish_reason "length" → max_tokens.
    assert_eq!(report.stop_reason("prompt_length"), "max_tokens");
    assert_eq!(
        report.text("prompt_length", "agent_message_chunk"),
        "Once upon a time"
    );

    // The second turn went to the model with the first one as history.
    let requests = sandbox.model_requests();
    assert_eq!(requests.len(), 2);
    assert!(mentions(&requests[0], "Say hello"));
    assert!(mentions(&requests[1], "Hello, streamed wörld 🦀!"));
    assert!(mentions(&requests[1], "Tell me a story"));
    report.expect_valid();
}

#[test]
fn permission_allowed() {
    let sandbox = AcpSandbox::new();
    sandbox.write("hello.txt", HELLO);
    sandbox.queue(&["edit-hello.sse", "done.sse"]);
    let report = sandbox.run("permission_allowed");
    report.expect_ran();

    assert_eq!(report.stop_reason("prompt"), "end_turn");
    assert_eq!(
        report.text("prompt", "agent_message_chunk"),
        "I will edit hello.txt.All done."
    );
    let call = report.only_tool_call("prompt");
    check_edit_announced(&sandbox, &call);

    // The permission request: this tool call, its diff, the three options.
    let permission = only(
        report.calls("session/request_permission"),
        "permission requests",
    );
    let asked = &permission["params"]["toolCall"];
    assert_eq!(asked["toolCallId"], call.id.as_str());
    let asked_content: Vec<&Value> = asked["content"]
        .as_array()
        .map(|a| a.iter().filter(|c| c["type"] == "diff").collect())
        .unwrap_or_default();
    check_hello_diff(
        &sandbox,
        only(asked_content, "diff in the permission request"),
    );
    let kinds: Vec<&Value> = permission["params"]["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|o| &o["kind"])
        .collect();
    assert_eq!(
        kinds,
        [
            &json!("allow_once"),
            &json!("allow_always"),
            &json!("reject_once")
        ]
    );
    assert_eq!(permission["answer"]["outcome"]["outcome"], "selected");

    // Allowed: completed with the diff, and the file changed.
    check_statuses(&call, "completed");
    let diffs = call.items("diff");
    assert!(!diffs.is_empty(), "no diff content in {call:?}");
    check_hello_diff(&sandbox, diffs[diffs.len() - 1]);
    assert_eq!(sandbox.read("hello.txt"), HELLO_EDITED);
    let requests = sandbox.model_requests();
    assert_eq!(requests.len(), 2);
    assert!(mentions(&requests[0], EDIT_PROMPT));
    assert!(
        !tool_results(&requests[1]).is_empty(),
        "no tool result sent to the model"
    );

    // The client has no fs methods (ACP v2 drops them): the proposal was still reviewable
    // as a diff, above, and the call names its tool.
    let init = report
        .wire()
        .into_iter()
        .find(|w| w["msg"]["method"] == "initialize")
        .expect("initialize on the wire");
    assert_eq!(
        init["msg"]["params"]["clientCapabilities"]["fs"]["writeTextFile"], false,
        "{init}"
    );
    let named: Vec<&Value> = report
        .updates("prompt")
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| &u["name"])
        .collect();
    assert_eq!(named, [&json!("edit")]);

    // A usage_update after each of the two model calls: the context the call reported, the
    // window, the cost so far, as the session file has them.
    let usage = report.updates_of_kind("usage_update");
    let recorded = sandbox.assistant_usages();
    assert_eq!(usage.len(), 2, "{usage:?}");
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    let mut spent = 0.0;
    for (update, recorded) in usage.iter().zip(&recorded) {
        spent += recorded["cost"]["total"].as_f64().expect("a cost");
        assert_eq!(update["used"], recorded["totalTokens"], "{update}");
        assert_eq!(update["size"], 64000, "{update}");
        // Equal up to the last digit: serde_json reads floats to within one unit in the last
        // place (no `float_roundtrip`), and both figures went through a JSON text.
        let amount = update["cost"]["amount"].as_f64().expect("an amount");
        assert!(
            (amount - spent).abs() <= spent * 1e-15,
            "{update} {recorded}"
        );
        assert_eq!(update["cost"]["currency"], "USD", "{update}");
    }
    // 100 tokens in and 20 out per call, at 3 and 15 per million.
    assert!((spent - 0.0012).abs() < 1e-12, "{spent}");
    // The two answers' chunks: one id each.
    let ids: Vec<&str> = report
        .updates("prompt")
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["messageId"].as_str().expect("messageId"))
        .collect();
    let mut distinct = ids.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 2, "{ids:?}");
    report.expect_valid();
}

#[test]
fn permission_rejected() {
    let sandbox = AcpSandbox::new();
    sandbox.write("hello.txt", HELLO);
    sandbox.queue(&["edit-hello.sse", "done.sse"]);
    let report = sandbox.run("permission_rejected");
    report.expect_ran();

    assert_eq!(report.stop_reason("prompt"), "end_turn");
    let call = report.only_tool_call("prompt");
    check_edit_announced(&sandbox, &call);
    let permission = only(
        report.calls("session/request_permission"),
        "permission requests",
    );
    assert_eq!(
        permission["params"]["toolCall"]["toolCallId"],
        call.id.as_str()
    );
    assert_eq!(permission["answer"]["outcome"]["optionId"], "reject_once");

    // Rejected: the tool call fails and the file is byte-identical.
    assert_eq!(
        call.final_status(),
        "failed",
        "statuses: {:?}",
        call.statuses
    );
    assert!(!call.statuses.contains(&"completed".to_string()));
    assert_eq!(sandbox.read("hello.txt"), HELLO);
    // The model is told and answers.
    let requests = sandbox.model_requests();
    assert_eq!(requests.len(), 2);
    assert!(!tool_results(&requests[1]).is_empty());
    assert_eq!(
        report.text("prompt", "agent_message_chunk"),
        "I will edit hello.txt.All done."
    );
    report.expect_valid();
}

#[test]
fn fs_through_the_client() {
    let sandbox = AcpSandbox::new();
    sandbox.write("notes.txt", "disk line\n");
    sandbox.queue(&["read-notes.sse", "edit-notes.sse", "done.sse"]);
    let report = sandbox.run("fs");
    report.expect_ran();
    assert_eq!(report.stop_reason("prompt"), "end_turn");
    let notes = sandbox.path("notes.txt");

    // The read went through the client, which served its unsaved buffer.
    let reads = report.calls("fs/read_text_file");
    assert!(
        !reads.is_empty(),
        "no fs/read_text_file; agent requests: {:?}",
        report.call_methods()
    );
    for read in &reads {
        assert_eq!(read["params"]["path"], notes.as_str());
        assert_eq!(
            read["params"]["sessionId"],
            report.result("new")["sessionId"]
        );
    }
    let calls = report.tool_calls("prompt");
    assert_eq!(calls.len(), 2, "tool calls: {calls:?}");
    let (read, edit) = (&calls[0], &calls[1]);
    assert_eq!(read.kind.as_deref(), Some("read"));
    assert_eq!(
        read.locations,
        Some(json!([{"path": notes.as_str(), "line": 1}]))
    );
    assert_eq!(read.final_status(), "completed");
    assert!(
        read.text().contains("unsaved buffer line"),
        "read result: {:?}",
        read.text()
    );
    assert!(!read.text().contains("disk line"));
    let requests = sandbox.model_requests();
    assert_eq!(requests.len(), 3);
    let first_result = tool_results(&requests[1]);
    assert!(
        first_result.contains("unsaved buffer line"),
        "model saw: {first_result:?}"
    );
    assert!(!first_result.contains("disk line"));

    // The edit was asked for, then written through fs/write_text_file.
    let permission = only(
        report.calls("session/request_permission"),
        "permission requests",
    );
    assert_eq!(
        permission["params"]["toolCall"]["toolCallId"],
        edit.id.as_str()
    );
    assert_eq!(edit.kind.as_deref(), Some("edit"));
    assert_eq!(
        edit.final_status(),
        "completed",
        "statuses: {:?}",
        edit.statuses
    );
    let write = only(
        report.calls("fs/write_text_file"),
        "fs/write_text_file calls",
    );
    assert_eq!(write["params"]["path"], notes.as_str());
    assert_eq!(write["params"]["content"], "edited by the agent\n");
    let diff = only(edit.items("diff"), "diffs of the edit");
    assert_eq!(diff["oldText"], "unsaved buffer line\n");
    assert_eq!(diff["newText"], "edited by the agent\n");

    // The client kept the new text in its buffer; nobody touched the disk.
    assert_eq!(
        report.agents()[0]["buffers"][&notes],
        "edited by the agent\n"
    );
    assert_eq!(sandbox.read("notes.txt"), "disk line\n");
    report.expect_valid();
}

#[test]
fn terminal() {
    let sandbox = AcpSandbox::new();
    sandbox.queue(&["bash.sse", "done.sse"]);
    let report = sandbox.run("terminal");
    report.expect_ran();
    assert_eq!(report.stop_reason("prompt"), "end_turn");

    // Asked first ("ask" mode), then run in a client terminal.
    let call = report.only_tool_call("prompt");
    assert_eq!(call.kind.as_deref(), Some("execute"));
    let permission = only(
        report.calls("session/request_permission"),
        "permission requests",
    );
    assert_eq!(
        permission["params"]["toolCall"]["toolCallId"],
        call.id.as_str()
    );
    let methods = report.call_methods();
    let terminal: Vec<&str> = methods
        .iter()
        .map(String::as_str)
        .filter(|m| m.starts_with("terminal/"))
        .collect();
    assert_eq!(terminal.first(), Some(&"terminal/create"), "{methods:?}");
    assert_eq!(terminal.last(), Some(&"terminal/release"), "{methods:?}");
    assert!(terminal.contains(&"terminal/wait_for_exit"), "{methods:?}");
    assert!(terminal.contains(&"terminal/output"), "{methods:?}");
    assert!(!terminal.contains(&"terminal/kill"), "{methods:?}");

    let create = only(report.calls("terminal/create"), "terminal/create calls");
    let params = &create["params"];
    assert!(
        params["command"]
            .as_str()
            .is_some_and(|c| c.ends_with("bash")),
        "command: {}",
        params["command"]
    );
    assert_eq!(params["args"][0], "-c");
    assert!(
        params["args"][1]
            .as_str()
            .is_some_and(|s| s.contains("printf 'alpha\\nbeta\\n'; echo gamma >&2")),
        "args: {}",
        params["args"]
    );
    assert_eq!(params["cwd"], sandbox.cwd.to_string_lossy().as_ref());
    assert!(
        params["outputByteLimit"].as_u64().is_some_and(|n| n > 0),
        "{params}"
    );
    let terminal_id = create["answer"]["terminalId"].clone();
    let wait = only(
        report.calls("terminal/wait_for_exit"),
        "wait_for_exit calls",
    );
    assert_eq!(wait["params"]["terminalId"], terminal_id);
    assert_eq!(wait["answer"]["exitCode"], 0);
    let release = only(report.calls("terminal/release"), "release calls");
    assert_eq!(release["params"]["terminalId"], terminal_id);

    // The tool call shows the terminal, and its result has the command's output.
    let shown = call.items("terminal");
    assert!(!shown.is_empty(), "no terminal content in {call:?}");
    for item in shown {
        assert_eq!(item["terminalId"], terminal_id);
    }
    assert_eq!(
        call.final_status(),
        "completed",
        "statuses: {:?}",
        call.statuses
    );
    let requests = sandbox.model_requests();
    assert_eq!(requests.len(), 2);
    let result = tool_results(&requests[1]);
    for line in ["alpha", "beta", "gamma"] {
        assert!(
            result.contains(line),
            "tool result sent to the model: {result:?}"
        );
    }
    report.expect_valid();
}

#[test]
fn cancel_mid_turn() {
    let sandbox = AcpSandbox::new();
    sandbox.queue(&["stall.sse", "done.sse"]);
    let report = sandbox.run("cancel");
    report.expect_ran();

    assert_eq!(report.stop_reason("prompt"), "cancelled");
    assert_eq!(
        report.text("prompt", "agent_message_chunk"),
        "Working on it"
    );
    report.result("cancel");
    // Every update of the turn came before its response.
    report.expect_turns_flushed();

    // The session goes on; its next model request is the next turn's.
    let requests = sandbox.model_requests();
    assert!(requests.len() >= 2, "model requests: {}", requests.len());
    assert!(
        mentions(&requests[1], "Are you still there?"),
        "2nd model request: {}",
        requests[1]
    );
    assert_eq!(report.stop_reason("prompt_after_cancel"), "end_turn");
    assert_eq!(
        report.text("prompt_after_cancel", "agent_message_chunk"),
        "All done."
    );
    assert_eq!(sandbox.model_requests().len(), 2);
    report.expect_valid();
}

#[test]
fn cancel_while_permission_open() {
    let sandbox = AcpSandbox::new();
    sandbox.write("hello.txt", HELLO);
    sandbox.queue(&["edit-hello.sse", "done.sse"]);
    let report = sandbox.run("cancel_permission");
    report.expect_ran();

    let permission = only(
        report.calls("session/request_permission"),
        "permission requests",
    );
    assert_eq!(permission["answer"]["outcome"]["outcome"], "cancelled");
    assert_eq!(report.stop_reason("prompt"), "cancelled");
    assert_eq!(sandbox.read("hello.txt"), HELLO);
    let call = report.only_tool_call("prompt");
    assert!(
        !call.statuses.contains(&"completed".to_string()),
        "statuses: {:?}",
        call.statuses
    );
    // No model request after the cancel: the next request is the next turn's.
    let requests = sandbox.model_requests();
    assert!(requests.len() >= 2, "model requests: {}", requests.len());
    let next = requests[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert!(
        mentions(&next, "Never mind"),
        "the cancelled turn went on to the model after session/cancel; its 2nd request ends with {next}"
    );
    // The next turn works.
    assert_eq!(report.stop_reason("prompt_after_cancel"), "end_turn");
    assert_eq!(
        report.text("prompt_after_cancel", "agent_message_chunk"),
        "All done."
    );
    assert_eq!(sandbox.model_requests().len(), 2);
    report.expect_valid();
}

#[test]
fn load_replays_history() {
    let sandbox = AcpSandbox::new();
    sandbox.write("notes.txt", "note one\nnote two\n");
    sandbox.queue(&["read-notes.sse", "done.sse", "done.sse"]);
    let report = sandbox.run("load");
    report.expect_ran();
    assert_eq!(report.stop_reason("prompt"), "end_turn");
    let session_id = report.result("new")["sessionId"].clone();

    // The second process lists the session, then loads it.
    let listed = report.result("list")["sessions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        listed
            .iter()
            .any(|s| s["sessionId"] == session_id
                && s["cwd"] == sandbox.cwd.to_string_lossy().as_ref()),
        "session/list: {listed:?}"
    );
    assert_eq!(report.error("load_unknown")["code"], -32002);
    let loaded = report.result("load");
    assert_eq!(loaded["modes"]["currentModeId"], "ask");
    assert!(loaded["configOptions"].is_array(), "load result: {loaded}");

    // The history, replayed as updates before the response.
    assert_eq!(
        report.text("load", "user_message_chunk"),
        "Please read notes.txt"
    );
    assert_eq!(
        report.text("load", "agent_thought_chunk"),
        "The user wants notes.txt."
    );
    assert_eq!(
        report.text("load", "agent_message_chunk"),
        "Reading notes.txt.All done."
    );
    // Replayed chunks carry message ids: the user's message one, the answers' replies and
    // thinking others.
    let chunk_ids = |kind: &str| -> Vec<String> {
        report
            .updates("load")
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .map(|u| u["messageId"].as_str().expect("messageId").to_string())
            .collect()
    };
    let (user, agent) = (
        chunk_ids("user_message_chunk"),
        chunk_ids("agent_message_chunk"),
    );
    let thought = chunk_ids("agent_thought_chunk");
    assert!(!user.is_empty() && !agent.is_empty() && !thought.is_empty());
    assert!(!agent.contains(&user[0]), "{user:?} {agent:?}");
    assert!(
        !agent.contains(&thought[0]) && user[0] != thought[0],
        "{thought:?} {agent:?}"
    );
    let replayed = report.only_tool_call("load");
    assert_eq!(replayed.kind.as_deref(), Some("read"));
    assert_eq!(replayed.final_status(), "completed");
    assert!(
        replayed.text().contains("note two"),
        "replayed result: {:?}",
        replayed.text()
    );
    // The second session/load request (the first one was for an unknown id).
    let answered = report.response_position(1, "session/load", 1);
    let wire = report.wire();
    let next = wire
        .iter()
        .enumerate()
        .skip(answered)
        .find(|(_, w)| w["sender"] == "client" && w["msg"]["method"] == "session/prompt")
        .map(|(n, _)| n)
        .expect("prompt after load");
    let history = [
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
    ];
    let late: Vec<&Value> = wire[answered..next]
        .iter()
        .map(|w| &w["msg"])
        .filter(|m| m["method"] == "session/update")
        .filter(|m| {
            history
                .iter()
                .any(|k| m["params"]["update"]["sessionUpdate"] == *k)
        })
        .collect();
    assert!(
        late.is_empty(),
        "history replayed after the session/load response (must come before it): {late:?}"
    );

    // The loaded session continues with its history.
    assert_eq!(report.stop_reason("prompt_after_load"), "end_turn");
    let requests = sandbox.model_requests();
    assert_eq!(requests.len(), 3);
    assert!(mentions(&requests[2], "Please read notes.txt"));
    assert!(mentions(&requests[2], "note two"));
    assert!(mentions(&requests[2], "Thanks, and now?"));
    report.expect_valid();
}

#[test]
fn modes() {
    let sandbox = AcpSandbox::new();
    sandbox.write("hello.txt", HELLO);
    sandbox.queue(&["edit-hello.sse", "done.sse", "edit-hello-2.sse", "done.sse"]);
    let report = sandbox.run("modes");
    report.expect_ran();

    assert_eq!(report.result("set_read_only"), &json!({}));
    let modes: Vec<&Value> = report
        .updates_of_kind("current_mode_update")
        .into_iter()
        .map(|u| &u["currentModeId"])
        .collect();
    assert_eq!(
        modes.first(),
        Some(&&json!("read-only")),
        "current_mode_update: {modes:?}"
    );
    assert!(
        modes.contains(&&json!("accept-edits")),
        "current_mode_update: {modes:?}"
    );

    // No permission request in either mode.
    assert!(
        report.calls("session/request_permission").is_empty(),
        "agent requests: {:?}",
        report.call_methods()
    );
    // read-only: the edit fails and the file stays (the next edit still finds "hello world").
    let refused = report.only_tool_call("prompt_read_only");
    assert_eq!(
        refused.final_status(),
        "failed",
        "statuses: {:?}",
        refused.statuses
    );
    assert_eq!(report.stop_reason("prompt_read_only"), "end_turn");
    // accept-edits: applied without asking.
    assert_eq!(report.result("set_accept_edits"), &json!({}));
    let applied = report.only_tool_call("prompt_accept_edits");
    check_statuses(&applied, "completed");
    check_hello_diff(&sandbox, only(applied.items("diff"), "diffs of the edit"));
    assert_eq!(sandbox.read("hello.txt"), HELLO_EDITED);

    // Back to "ask" through the config option.
    let options = report.result("set_config_mode_ask")["configOptions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mode = options
        .iter()
        .find(|o| o["id"] == "mode")
        .unwrap_or_else(|| panic!("no mode option: {options:?}"));
    assert_eq!(mode["currentValue"], "ask");
    report.expect_valid();
}

#[test]
fn session_list() {
    let sandbox = AcpSandbox::new();
    std::fs::create_dir(sandbox.cwd.join("elsewhere")).expect("mkdir");
    sandbox.queue(&["done.sse", "done.sse"]);
    let report = sandbox.run("list");
    report.expect_ran();
    let a = report.result("new_a")["sessionId"].clone();
    let b = report.result("new_b")["sessionId"].clone();
    let cwd = sandbox.cwd.to_string_lossy().into_owned();

    let ids = |step: &str| -> Vec<Value> {
        let sessions = report.result(step)["sessions"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("{step}: no sessions array"));
        for s in &sessions {
            assert_eq!(s["cwd"], cwd.as_str(), "{step}: {s}");
        }
        sessions.iter().map(|s| s["sessionId"].clone()).collect()
    };
    let listed = ids("list");
    assert_eq!(listed.len(), 2, "list: {listed:?}");
    assert!(
        listed.contains(&a) && listed.contains(&b),
        "list: {listed:?}"
    );
    let all = ids("list_all");
    assert!(all.contains(&a) && all.contains(&b), "list_all: {all:?}");
    assert!(ids("list_other_cwd").is_empty());
    report.expect_valid();
}

#[test]
fn plan_and_rich_prompt() {
    let sandbox = AcpSandbox::new();
    sandbox.write("linked.txt", "linked file text\n");
    sandbox.queue(&["plan.sse"]);
    let report = sandbox.run("plan");
    report.expect_ran();
    assert_eq!(report.stop_reason("prompt"), "end_turn");

    // The model got the text, the embedded file's text and the link.
    let requests = sandbox.model_requests();
    assert_eq!(requests.len(), 1);
    assert!(mentions(&requests[0], "Make a plan for these files:"));
    assert!(mentions(&requests[0], "embedded file text"));
    assert!(mentions(&requests[0], "linked.txt"));

    // The answer's task list became a plan.
    let plans = report.updates_of_kind("plan");
    assert!(!plans.is_empty(), "no plan update");
    let entries = plans[plans.len() - 1]["entries"]
        .as_array()
        .cloned()
        .expect("entries");
    let contents: Vec<&str> = entries
        .iter()
        .map(|e| e["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(contents, ["Read the code", "Fix the bug", "Run the tests"]);
    // Done → completed; open items are pending or in progress.
    assert_eq!(entries[0]["status"], "completed");
    for open in &entries[1..] {
        assert!(
            open["status"] == "pending" || open["status"] == "in_progress",
            "{open}"
        );
    }
    assert_eq!(
        report.text("prompt", "agent_message_chunk"),
        "My plan:\n- [x] Read the code\n- [ ] Fix the bug\n- [ ] Run the tests\n"
    );
    report.expect_valid();
}

#[test]
fn provider_error() {
    let sandbox = AcpSandbox::new();
    std::fs::write(
        sandbox.agent_dir.join("settings.json"),
        r#"{"retry": {"enabled": false}}"#,
    )
    .expect("settings.json");
    sandbox.queue(&["http-400.json", "done.sse"]);
    let report = sandbox.run("provider_error");
    report.expect_ran();

    // The provider's failure is the prompt's JSON-RPC error, with the provider's message.
    let error = report.error("prompt");
    assert_eq!(error["code"], -32603);
    assert!(
        mentions(error, "Invalid model: m is not available to this key"),
        "error: {error}"
    );
    assert_eq!(report.stop_reason("prompt_again"), "end_turn");
    assert_eq!(
        report.text("prompt_again", "agent_message_chunk"),
        "All done."
    );
    assert_eq!(sandbox.model_requests().len(), 2);
    report.expect_valid();
}

#[test]
fn additional_roots_and_config_options() {
    let sandbox = AcpSandbox::new();
    let extra = sandbox.home.join("extra");
    std::fs::create_dir_all(&extra).expect("extra dir");
    let report = sandbox.run("roots_and_options");
    report.expect_ran();

    let caps = &report.result("initialize")["agentCapabilities"]["sessionCapabilities"];
    assert_eq!(caps["additionalDirectories"], json!({}));
    let new = report.result("new_extra");
    assert!(new["sessionId"].is_string(), "{new}");
    for (step, named) in [
        ("new_relative_extra", "relative/extra".to_string()),
        (
            "new_missing_extra",
            extra.join("missing").display().to_string(),
        ),
    ] {
        let error = report.error(step);
        assert_eq!(error["code"], -32602, "{error}");
        assert!(error.to_string().contains(&named), "{step}: {error}");
    }

    // Options: the model, the thinking level (the mock model has no reasoning: `off` only),
    // and the boolean auto-compact.
    let options = new["configOptions"].as_array().expect("configOptions");
    let ids: Vec<&Value> = options.iter().map(|o| &o["id"]).collect();
    assert_eq!(ids, ["mode", "model", "thinking", "auto-compact"]);
    assert_eq!(
        options[2]["options"],
        json!([{"value": "off", "name": "off"}])
    );
    assert_eq!(options[3]["type"], "boolean");
    let off = report.result("set_auto_compact_off")["configOptions"].clone();
    assert_eq!(off[3]["currentValue"], false, "{off}");
    assert_eq!(report.error("set_thinking_high")["code"], -32602);
    // A client that declares no boolean options (CodeCompanion declares none) gets a select.
    let plain = report.result("new_plain")["configOptions"][3].clone();
    assert_eq!(
        (&plain["id"], &plain["type"], &plain["currentValue"]),
        (&json!("auto-compact"), &json!("select"), &json!("on")),
        "{plain}"
    );
    let off = report.result("set_plain_auto_compact_off")["configOptions"][3].clone();
    assert_eq!(off["currentValue"], "off", "{off}");
    report.expect_valid();
}

#[test]
fn lifecycle_resume_cancel_request_close_delete_logout() {
    let sandbox = AcpSandbox::new();
    sandbox.queue(&["streamed.sse", "done.sse", "stall.sse", "stall.sse"]);
    let report = sandbox.run("lifecycle");
    report.expect_ran();
    let session_id = report.result("new")["sessionId"].clone();

    // initialize announces the lifecycle methods.
    let caps = &report.result("initialize")["agentCapabilities"];
    for method in ["list", "delete", "resume", "close"] {
        assert_eq!(caps["sessionCapabilities"][method], json!({}), "{caps}");
    }
    assert_eq!(caps["auth"]["logout"], json!({}), "{caps}");

    // The first prompt gave the session its title.
    let titles: Vec<&Value> = report
        .updates_of_kind("session_info_update")
        .into_iter()
        .filter(|u| u.get("title").is_some())
        .collect();
    assert!(
        titles
            .iter()
            .all(|u| u["title"] == "Remember the word pineapple"),
        "{titles:?}"
    );
    assert_eq!(titles.len(), 2, "once per process: {titles:?}");

    // The resume replayed nothing, and the next model request holds the conversation.
    report.result("resume");
    for kind in ["user_message_chunk", "agent_message_chunk", "tool_call"] {
        assert!(report.text("resume", kind).is_empty(), "{kind} replayed");
    }
    assert_eq!(report.error("resume_unknown")["code"], -32002);
    assert_eq!(report.stop_reason("prompt_after_resume"), "end_turn");
    let requests = sandbox.model_requests();
    assert!(
        mentions(&requests[1], "Remember the word pineapple")
            && mentions(&requests[1], "Which word?"),
        "2nd model request: {}",
        requests[1]
    );

    // $/cancel_request and session/close both end the running turn as cancelled.
    assert_eq!(report.stop_reason("prompt_cancel_request"), "cancelled");
    assert_eq!(report.stop_reason("prompt_closed"), "cancelled");
    assert_eq!(report.result("close"), &json!({}));
    assert_eq!(report.error("prompt_after_close")["code"], -32002);
    assert_eq!(report.error("close_again")["code"], -32002);

    // session/delete: hostile ids refused, the closed session's file removed.
    let hostile = report.error("delete_hostile");
    assert_eq!(hostile["code"], -32602);
    assert!(mentions(hostile, "invalid session id"), "{hostile}");
    assert_eq!(report.result("delete"), &json!({}));
    assert_eq!(report.error("delete_again")["code"], -32602);
    let listed = report.result("list_after_delete")["sessions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        listed.iter().all(|s| s["sessionId"] != session_id),
        "{listed:?}"
    );
    assert_eq!(report.error("list_bad_cursor")["code"], -32602);

    // logout: no sessions until authenticate.
    assert_eq!(report.result("logout"), &json!({}));
    assert_eq!(report.error("new_after_logout")["code"], -32000);
    report.result("authenticate");
    report.result("new_after_authenticate");
    report.expect_valid();
}

/// acpx (npm), a third-party headless ACP client, driving `tandem acp` with a scripted model:
/// a one-shot run whose write the client approves and performs through its `fs/*` methods,
/// then a persistent session (two prompts continuing one conversation, a mode and a boolean
/// option set as acpx sends them, closed). acpx needs Node 22.13+: it runs on the Node 24 of
/// `scripts/install-pi16`.
#[test]
fn acpx_a_third_party_client_runs_sessions_with_tandem() {
    let root = harness::repo_root();
    let node = root.join("target/pi16/bin/node");
    assert!(
        node.exists(),
        "{} is missing: run scripts/install-pi16",
        node.display()
    );
    let acpx = root.join("tests/acpx/node_modules/acpx/dist/cli.js");
    assert!(
        acpx.exists(),
        "{} is missing: run scripts/install-node-deps",
        acpx.display()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let (agent, home, project) = (
        dir.path().join("agent"),
        dir.path().join("home"),
        dir.path().join("project"),
    );
    for d in [&agent, &home, &project] {
        std::fs::create_dir_all(d).expect("dir");
    }
    let script = json!({"turns": [
        {"text": "Writing the file.", "toolCalls": [{"name": "write",
            "arguments": {"path": "notes.txt", "content": "hello from tandem\n"}}]},
        {"text": "Done: notes.txt written."},
        {"text": "Second answer."}
    ]});
    std::fs::write(agent.join("a.json"), script.to_string()).expect("script");
    let models = json!({"providers": {"a": {"api": "scripted", "apiKey": "none",
        "baseUrl": agent.join("a.json"), "models": [{"id": "t", "name": "Model A"}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).expect("models");
    std::fs::write(
        agent.join("settings.json"),
        json!({"defaultProvider": "a", "defaultModel": "t"}).to_string(),
    )
    .expect("settings");
    let tandem = format!("{} acp", env!("CARGO_BIN_EXE_tandem"));
    let node_dir = node.parent().expect("node's folder").to_path_buf();
    let path = format!(
        "{}:{}",
        node_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Each acpx command; a session's background owner exits 5 s after its last use.
    let run = |args: &[&str]| -> String {
        let out = std::process::Command::new(&node)
            .arg(&acpx)
            .args([
                "--cwd",
                &project.display().to_string(),
                "--approve-all",
                "--ttl",
                "5",
            ])
            .args(["--timeout", "60", "--agent", &tandem])
            .args(args)
            .env("HOME", &home)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("PATH", &path)
            .env_remove("NODE_OPTIONS")
            .output()
            .expect("runs acpx");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "acpx {args:?}: {}\n{text}",
            out.status
        );
        text
    };

    let once = run(&["exec", "write notes.txt"]);
    assert!(once.contains("Done: notes.txt written."), "{once}");
    assert!(once.contains("end_turn"), "{once}");
    assert_eq!(
        std::fs::read_to_string(project.join("notes.txt")).expect("written"),
        "hello from tandem\n"
    );

    run(&["sessions", "new"]);
    // The scripted model answers by the number of answers in the context: "Second answer." is
    // the third turn, so the session has the earlier exchange.
    let first = run(&["prompt", "write it again"]);
    assert!(first.contains("end_turn"), "{first}");
    let second = run(&["prompt", "and again"]);
    assert!(second.contains("Second answer."), "{second}");
    let mode = run(&["set-mode", "accept-edits"]);
    assert!(mode.contains("accept-edits"), "{mode}");
    let option = run(&["set", "auto-compact", "false"]);
    assert!(option.contains("auto-compact=false"), "{option}");
    run(&["sessions", "close"]);
    let status = run(&["status"]);
    assert!(!status.contains("status: running"), "{status}");
}
