//! pi 1.6's shipped examples, unmodified, in print mode: the seven checks pi 1.6 passes —
//! a custom tool, `tool_call` blocking a dangerous command and a protected path, an extension
//! command followed by a `before_agent_start` system-prompt change, the `input` hook, the
//! provider request and response hooks, a built-in tool replaced.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::Sandbox;
use crate::{example, run, system_prompt, tool_result_text};

#[test]
fn hello_registers_a_tool_the_model_calls() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "hello",
        json!({"name": "world"}),
    ));
    sandbox.answer(&Turn::text("Greeted."));
    let out = run(
        &sandbox,
        &["-e", &example("hello.ts"), "-p", "greet the world"],
    );
    out.expect_code(0);
    assert_eq!(out.stdout, "Greeted.\n", "stderr: {}", out.stderr);
    assert!(sandbox.offered_tools(0).contains(&"hello".to_string()));
    let second = sandbox.requests()[1].json().expect("JSON");
    assert_eq!(
        tool_result_text(&second, "call_1").as_deref(),
        Some("Hello, world!")
    );
    // The tool's details are in the session file with its result.
    let text = std::fs::read_to_string(sandbox.only_session()).expect("session");
    assert!(text.contains(r#""details":{"greeted":"world"}"#), "{text}");
}

#[test]
fn permission_gate_blocks_a_dangerous_command_without_a_ui() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.cwd.join("build")).expect("dir");
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "bash",
        json!({"command": "rm -rf build"}),
    ));
    sandbox.answer(&Turn::text("Could not."));
    let out = run(
        &sandbox,
        &["-e", &example("permission-gate.ts"), "-p", "clean up"],
    );
    out.expect_code(0);
    assert!(sandbox.cwd.join("build").is_dir(), "the command ran");
    let second = sandbox.requests()[1].json().expect("JSON");
    assert_eq!(
        tool_result_text(&second, "call_1").as_deref(),
        Some("Dangerous command blocked (no UI for confirmation)")
    );
}

#[test]
fn protected_paths_blocks_a_write_to_env() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "write",
        json!({"path": ".env", "content": "TOKEN=stolen\n"}),
    ));
    sandbox.answer(&Turn::text("Blocked."));
    let out = run(
        &sandbox,
        &["-e", &example("protected-paths.ts"), "-p", "write it"],
    );
    out.expect_code(0);
    assert!(!sandbox.cwd.join(".env").exists(), "the file was written");
    let second = sandbox.requests()[1].json().expect("JSON");
    assert_eq!(
        tool_result_text(&second, "call_1").as_deref(),
        Some(r#"Path ".env" is protected"#)
    );
}

#[test]
fn pirate_command_then_before_agent_start_changes_the_system_prompt() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Arrr."));
    let out = run(
        &sandbox,
        &["-e", &example("pirate.ts"), "-p", "/pirate", "say hello"],
    );
    out.expect_code(0);
    assert_eq!(out.stdout, "Arrr.\n", "stderr: {}", out.stderr);
    let requests = sandbox.requests();
    assert_eq!(requests.len(), 1, "the command itself asks no model");
    let body = requests[0].json().expect("JSON");
    assert!(system_prompt(&body).contains("PIRATE MODE"), "{body}");
    // The session records the prompt it declared, not the one-run replacement.
    let text = std::fs::read_to_string(sandbox.only_session()).expect("session");
    assert!(!text.contains("PIRATE MODE"));
}

#[test]
fn input_transform_rewrites_and_handles_prompts() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Briefly."));
    let out = run(
        &sandbox,
        &[
            "-e",
            &example("input-transform.ts"),
            "-p",
            "?quick What is Rust?",
        ],
    );
    out.expect_code(0);
    assert!(crate::support::body_mentions(
        &sandbox.requests()[0],
        "Respond briefly in 1-2 sentences: What is Rust?"
    ));

    let handled = Sandbox::new(WireApi::OpenAiCompletions);
    let out = run(
        &handled,
        &["-e", &example("input-transform.ts"), "-p", "ping"],
    );
    out.expect_code(0);
    assert!(
        handled.requests().is_empty(),
        "a handled prompt asks no model"
    );
}

#[test]
fn provider_payload_sees_the_request_and_the_response() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.cwd.join(".pi")).expect(".pi");
    sandbox.answer(&Turn::text("Logged."));
    let out = run(
        &sandbox,
        &["-e", &example("provider-payload.ts"), "-p", "hi"],
    );
    out.expect_code(0);
    let log = std::fs::read_to_string(sandbox.cwd.join(".pi/provider-payload.log")).expect("log");
    assert!(log.contains(r#""model": "mock-model""#), "{log}");
    assert!(log.contains("[200] {"), "{log}");
}

#[test]
fn tool_override_replaces_the_built_in_read() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write(".env", "SECRET=1\n");
    sandbox.answer(&Turn::tool_call("call_1", "read", json!({"path": ".env"})));
    sandbox.answer(&Turn::text("Denied."));
    let out = run(
        &sandbox,
        &["-e", &example("tool-override.ts"), "-p", "read .env"],
    );
    out.expect_code(0);
    let first = sandbox.requests()[0].json().expect("JSON");
    let read = first["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter(|t| t["function"]["name"] == "read")
        .collect::<Vec<_>>();
    assert_eq!(read.len(), 1, "one read tool");
    assert!(read[0]["function"]["description"]
        .as_str()
        .is_some_and(|d| d.contains("access logging")));
    let second = sandbox.requests()[1].json().expect("JSON");
    let result = tool_result_text(&second, "call_1").expect("result");
    assert!(result.starts_with("Access denied"), "{result}");
    let log = std::fs::read_to_string(sandbox.agent_dir.join("read-access.log")).expect("log");
    assert!(log.contains("BLOCKED"), "{log}");
}

#[test]
fn dynamic_tools_registered_in_session_start_and_by_a_command_are_offered() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "echo_session",
        json!({"message": "one"}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_2",
        "shout",
        json!({"message": "two"}),
    ));
    sandbox.answer(&Turn::text("echoed"));
    let out = run(
        &sandbox,
        &[
            "-e",
            &example("dynamic-tools.ts"),
            "-p",
            "/add-echo-tool shout",
            "echo",
        ],
    );
    out.expect_code(0);
    assert_eq!(out.stdout, "echoed\n", "{}", out.stderr);
    let offered = sandbox.offered_tools(0);
    assert!(offered.contains(&"echo_session".to_string()), "{offered:?}");
    assert!(offered.contains(&"shout".to_string()), "{offered:?}");
    let requests = sandbox.requests();
    let first = tool_result_text(&requests[1].json().expect("JSON"), "call_1");
    assert_eq!(first.as_deref(), Some("[session] one"));
    let second = tool_result_text(&requests[2].json().expect("JSON"), "call_2");
    assert_eq!(second.as_deref(), Some("[shout] two"));
}
