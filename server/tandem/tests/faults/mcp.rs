//! An MCP server (fixtures/mcp/server.mjs, configured in mcp.json) crashes in
//! the middle of a tool call made through the real binary: the call is a tool error naming the
//! server, the model gets it in its next turn, and the run ends normally.

use serde_json::json;
use tandem_tests::wire::Turn;

use super::harness::{check_session, json_lines};
use crate::support::mcp::fixture_server;
use crate::support::process::assert_no_panic;
use crate::support::{type_of, Sandbox};

#[test]
fn an_mcp_server_crashing_mid_call_is_a_tool_error_and_the_run_goes_on() {
    let server = fixture_server();
    let sandbox = Sandbox::with_quick_retries();
    sandbox.write_settings(json!({"retry": {"baseDelayMs": 5}}));
    sandbox.write_agent_file(
        "mcp.json",
        &json!({"mcpServers": {"fixture": {"command": "node", "args": [server]}}}).to_string(),
    );
    sandbox.answer(&Turn::tool_call(
        "call_crash",
        "mcp__fixture__crash",
        json!({}),
    ));
    sandbox.answer(&Turn::text("The fixture server crashed; carrying on."));
    let run = sandbox.run(&["--mode", "json", "-p", "crash it"]);
    assert_no_panic(&run.stderr);
    run.expect_code(0);
    let lines = json_lines(&run.stdout);
    let end = lines
        .iter()
        .find(|l| type_of(l) == "tool_execution_end")
        .expect("tool_execution_end");
    assert_eq!(end["isError"], true, "{end}");
    let text = end["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("MCP server `fixture` exited during the call to `crash` (exit status 3)")
            && text.contains("fixture: crashing on purpose"),
        "{end}"
    );
    // The model's next turn carries the error, and its answer ends the run.
    let requests = sandbox.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1]
        .body_text()
        .contains("MCP server `fixture` exited"));
    let answer = lines
        .iter()
        .rev()
        .find(|l| type_of(l) == "message_end" && l["message"]["role"] == "assistant")
        .expect("the last answer");
    assert_eq!(answer["message"]["stopReason"], "stop");
    let checked = check_session(&sandbox.only_session());
    assert_eq!(
        checked.kinds[2..],
        [
            "message:system",
            "message:user",
            "message:assistant",
            "message:toolResult",
            "message:assistant"
        ]
    );
    assert_eq!(checked.message(5)["isError"], true);
}
