//! Runs a scripted series of tool calls through pi or Tandem and collects the tool results each
//! wrote to its session, so the texts the model would see can be compared.
//!
//! Each call gets its own turn (one call per answer), so the results are in a fixed order
//! whatever each program's parallel tool execution does.

use serde_json::Value;
use tandem_tests::mock_llm::MockLlm;

use super::sse::{self, Answer};
use super::{transcript, Agent, Sandbox, MODEL};

/// One scripted tool call: a short label for failure messages, the tool name, the arguments.
pub struct Call {
    /// What the case checks, e.g. "read of a missing file".
    pub label: &'static str,
    /// The tool to call.
    pub name: &'static str,
    /// The call's arguments, as the model sends them.
    pub arguments: Value,
}

/// Runs `calls` with `agent` in a fresh sandbox (one turn per call, then a final text) and
/// returns the `toolResult` messages of its session, in order, with the sandbox's cwd replaced
/// by `<cwd>` and the timestamps zeroed.
pub async fn tool_results(mock: &MockLlm, agent: Agent, calls: &[Call]) -> Vec<Value> {
    let sandbox = Sandbox::new(mock);
    for (i, call) in calls.iter().enumerate() {
        let answer = Answer::new(&format!("chatcmpl-call-{i}"))
            .tool_call(&format!("call_{i}"), call.name, &call.arguments)
            .response();
        mock.enqueue(answer);
    }
    mock.enqueue(sse::text("chatcmpl-calls-done", "Finished."));
    let stdout = sandbox
        .run_ok(agent, &["-p", "--model", MODEL, "run the calls"])
        .await;
    assert_eq!(stdout.trim_end(), "Finished.", "{agent:?}");
    let cwd = sandbox.cwd.to_string_lossy().into_owned();
    let results: Vec<Value> = transcript::lines(&sandbox.only_session_file())
        .into_iter()
        .filter(|line| line["message"]["role"] == "toolResult")
        .map(|line| {
            let mut message = line["message"].clone();
            message["timestamp"] = Value::from(0);
            let text = message.to_string().replace(&cwd, "<cwd>");
            serde_json::from_str(&text).expect("still JSON")
        })
        .collect();
    assert_eq!(results.len(), calls.len(), "{agent:?}: one result per call");
    results
}

/// Runs `calls` through pi and Tandem and returns, for each call whose results differ, a
/// description naming the case and showing both results.
pub async fn differences(calls: &[Call]) -> Vec<String> {
    let mock = MockLlm::start().await.expect("mock LLM");
    let pi = tool_results(&mock, Agent::Pi, calls).await;
    let mut tandem = tool_results(&mock, Agent::Tandem, calls).await;
    // pi 1.6's additions (a tool result's `durationMs`) are not pi 0.73.1's.
    tandem
        .iter_mut()
        .for_each(tandem_tests::pi_fields::without_pi_16_fields);
    calls
        .iter()
        .zip(pi.iter().zip(&tandem))
        .filter(|(_, (theirs, ours))| theirs != ours)
        .map(|(call, (theirs, ours))| {
            format!(
                "{} ({} {}):\n  pi:     {}\n  Tandem: {}",
                call.label, call.name, call.arguments, theirs["content"], ours["content"]
            )
        })
        .collect()
}
