//! Extensions in `tandem acp -e FILE`, pi 1.6's examples unmodified (Node 24 from
//! `scripts/install-pi16`): an extension's `select` is a `session/request_permission` the client
//! answers, its `input` an `elicitation/create` form for a client that takes forms (answered
//! "cancelled" for one that does not), its `notify` a `notice` update, its commands are listed
//! in `available_commands_update` and run from a prompt.

use serde_json::{json, Value};

use super::{Raw, Setup};
use crate::support::pi_example as example;

/// `tandem acp -e <each of extensions>`, the extension host on Node 24, its cache in the
/// setup's directory; initialized with `capabilities`, one session opened: its id.
fn start(setup: &Setup, extensions: &[String], capabilities: Value) -> (Raw, String) {
    let node = crate::support::node();
    let cache = setup.dir.path().join("cache");
    let args: Vec<&str> = extensions.iter().flat_map(|e| ["-e", e.as_str()]).collect();
    let mut raw = Raw::start_with_env(
        setup,
        &args,
        &[("TANDEM_NODE", &node), ("XDG_CACHE_HOME", &cache)],
    );
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": capabilities}}));
    raw.response(1);
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": setup.project(), "mcpServers": []}}));
    let id = raw.response(2)["result"]["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    (raw, id)
}

fn prompt(raw: &mut Raw, request: i64, session: &str, text: &str) {
    raw.send(
        json!({"jsonrpc": "2.0", "id": request, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}}),
    );
}

fn is_answer(request: i64) -> impl Fn(&Value) -> bool {
    move |m: &Value| m["id"] == request && m.get("method").is_none()
}

fn is_question(m: &Value) -> bool {
    m["method"] == "session/request_permission"
}

/// Answers the client's request `question` with the option named `name`.
fn choose(raw: &mut Raw, question: &Value, name: &str) {
    let option = question["params"]["options"]
        .as_array()
        .and_then(|o| o.iter().find(|o| o["name"] == name))
        .unwrap_or_else(|| panic!("no option {name}: {question}"));
    raw.send(json!({"jsonrpc": "2.0", "id": question["id"], "result":
        {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}}));
}

/// The texts of the `notice` updates among `messages`.
fn notices(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "notice")
        .map(|m| {
            m["params"]["update"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn permission_gate_asks_through_request_permission_and_the_answer_decides() {
    let script = json!({"turns": [
        {"toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": "rm -rf build"}}]},
        {"text": "Cleaned."},
        {"toolCalls": [{"id": "c2", "name": "bash", "arguments": {"command": "rm -rf build"}}]},
        {"text": "Could not."}
    ]});
    let setup = Setup::new(&script, &script);
    let build = setup.project().join("build");
    std::fs::create_dir_all(&build).expect("build dir");
    let (mut raw, id) = start(&setup, &[example("permission-gate.ts")], json!({}));

    // "Yes": the extension lets the command through; the workspace then asks about the
    // command itself, as it does for every command.
    prompt(&mut raw, 3, &id, "clean up");
    let question = raw.until(is_question).pop().expect("a question");
    let call = &question["params"]["toolCall"];
    assert_eq!(
        call["title"], "⚠️ Dangerous command:\n\n  rm -rf build\n\nAllow?",
        "{question}"
    );
    let names: Vec<&str> = question["params"]["options"]
        .as_array()
        .expect("options")
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert_eq!(names, ["Yes", "No"]);
    choose(&mut raw, &question, "Yes");
    let command_question = raw
        .until(is_question)
        .pop()
        .expect("the command's question");
    assert_eq!(command_question["params"]["toolCall"]["toolCallId"], "c1");
    choose(&mut raw, &command_question, "Allow");
    let seen = raw.until(is_answer(3));
    assert_eq!(
        seen.last().expect("answer")["result"]["stopReason"],
        "end_turn"
    );
    assert!(!build.exists(), "the allowed command did not run");

    // "No": blocked before anything else is asked.
    std::fs::create_dir_all(&build).expect("build dir");
    prompt(&mut raw, 4, &id, "clean up again");
    let question = raw.until(is_question).pop().expect("a question");
    choose(&mut raw, &question, "No");
    let seen = raw.until(is_answer(4));
    assert!(!seen.iter().any(is_question), "{seen:?}");
    assert!(build.exists(), "the blocked command ran");
    let failed = seen
        .iter()
        .filter(|m| m["params"]["update"]["toolCallId"] == "c2")
        .filter(|m| m["params"]["update"]["status"] == "failed")
        .count();
    assert_eq!(failed, 1, "{seen:?}");
    assert!(
        seen.iter()
            .any(|m| m.to_string().contains("Blocked by user")),
        "{seen:?}"
    );
}

#[test]
fn extension_commands_are_listed_and_ask_for_text_through_elicitation_forms() {
    let script = json!({"turns": [{"text": "unused"}]});
    let setup = Setup::new(&script, &script);
    let caps = json!({"session": {"notices": {}}, "elicitation": {"form": {}}});
    let (mut raw, id) = start(&setup, &[example("rpc-demo.ts")], caps);
    let listed =
        raw.until(|m| m["params"]["update"]["sessionUpdate"] == "available_commands_update");
    let commands =
        listed.last().expect("an update")["params"]["update"]["availableCommands"].clone();
    let names: Vec<&str> = commands
        .as_array()
        .expect("commands")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for name in ["rpc-input", "rpc-editor", "rpc-prefill"] {
        assert!(names.contains(&name), "{name} is not listed: {names:?}");
    }

    // `input` is a form with one text field; the text reaches the extension, whose notice
    // reaches the client.
    prompt(&mut raw, 3, &id, "/rpc-input");
    let form = raw
        .until(|m| m["method"] == "elicitation/create")
        .pop()
        .expect("a form");
    assert_eq!(form["params"]["mode"], "form", "{form}");
    assert_eq!(form["params"]["sessionId"], id.as_str());
    assert_eq!(form["params"]["message"], "Enter a value");
    let field = &form["params"]["requestedSchema"]["properties"]["value"];
    assert_eq!(field["type"], "string", "{form}");
    assert_eq!(field["description"], "type something...");
    raw.send(json!({"jsonrpc": "2.0", "id": form["id"], "result":
        {"action": "accept", "content": {"value": "hello"}}}));
    let seen = raw.until(is_answer(3));
    assert_eq!(
        seen.last().expect("answer")["result"]["stopReason"],
        "end_turn",
        "{seen:?}"
    );
    assert_eq!(notices(&seen), ["You entered: hello"]);

    // A declined form is a cancelled dialog.
    prompt(&mut raw, 4, &id, "/rpc-editor");
    let form = raw
        .until(|m| m["method"] == "elicitation/create")
        .pop()
        .expect("a form");
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["value"]["default"],
        "Line 1\nLine 2\nLine 3"
    );
    raw.send(json!({"jsonrpc": "2.0", "id": form["id"], "result": {"action": "decline"}}));
    let seen = raw.until(is_answer(4));
    assert_eq!(notices(&seen), ["Editor cancelled"]);
}

#[test]
fn a_client_without_forms_or_notices_gets_no_form_and_the_command_still_ends() {
    let script = json!({"turns": [{"text": "unused"}]});
    let setup = Setup::new(&script, &script);
    let (mut raw, id) = start(&setup, &[example("rpc-demo.ts")], json!({}));
    prompt(&mut raw, 3, &id, "/rpc-input");
    let seen = raw.until(is_answer(3));
    assert_eq!(
        seen.last().expect("answer")["result"]["stopReason"],
        "end_turn",
        "{seen:?}"
    );
    assert!(
        !seen.iter().any(|m| m["method"] == "elicitation/create"),
        "{seen:?}"
    );
    assert!(notices(&seen).is_empty(), "{seen:?}");
    // No model was asked: the prompt was the extension's command.
    assert!(
        !seen
            .iter()
            .any(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"),
        "{seen:?}"
    );
}
