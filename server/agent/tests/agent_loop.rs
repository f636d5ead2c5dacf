//! The agent loop end to end with a scripted model: event order, streaming state, stop reasons,
//! aborts, turn hooks, loop failures, subscribers and custom messages (pi-behaviour.md §1).

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map};
use support::*;
use tandem_agent::ai::{
    AssistantBlock, AssistantMessageEvent, Message, StopReason, TextContent, ThinkingLevel, Usage,
};
use tandem_agent::{
    truncated_call_text, Agent, AgentEvent, AgentMessage, CustomMessage, NextTurn, ToolError,
    ToolInvocation, ToolOutput,
};
use tokio::sync::oneshot;

fn is_text_delta(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { .. }
        }
    )
}

#[tokio::test]
async fn a_plain_prompt_emits_pis_event_order_and_streams_into_one_history_entry() {
    let (release, gate) = oneshot::channel();
    let script = ScriptedModel::new(vec![Turn::deltas(&["Hel", "lo"]).gated(gate)]);
    let agent = agent(&script, vec![]);
    let mut rx = agent.subscribe();
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.prompt(vec![user("hi")]).await }
    });

    // While the answer streams: the partial is in the state, not in the history.
    let mut events = wait_for(&mut rx, is_text_delta).await;
    assert!(agent.is_running());
    let partial = agent
        .with_state(|s| s.streaming_message().cloned())
        .expect("a message is streaming");
    assert_eq!(partial.text(), "Hel");
    assert_eq!(describe_history(&agent.messages()), ["user: hi"]);

    release.send(()).expect("the turn waits on the gate");
    within(run).await.expect("joins").expect("accepted");
    events.extend(drain(&mut rx));

    assert_eq!(
        kinds(&events),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_update",
            "message_update",
            "message_update",
            "message_update",
            "message_end",
            "turn_end",
            "agent_end"
        ]
    );
    assert_eq!(
        trace(&events),
        [
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant",
            "message_update text_start",
            "message_update text_delta",
            "message_update text_delta",
            "message_update text_end",
            "message_end assistant",
            "turn_end stop []",
            "agent_end (2)"
        ]
    );
    assert_eq!(
        describe_history(&agent.messages()),
        ["user: hi", "assistant(stop): Hello"]
    );
    assert!(agent.with_state(|s| s.streaming_message().is_none()));
    assert!(!agent.is_running());
    let AgentEvent::AgentEnd { messages } = events.last().expect("events").as_ref() else {
        panic!("the run ends with agent_end")
    };
    assert_eq!(messages, &agent.messages());
    assert_eq!(script.call_count(), 1);
    assert_eq!(script.call(0).lines(), ["user: hi"]);
    assert_eq!(script.call(0).model, "model-a");
    assert_eq!(script.call(0).thinking, ThinkingLevel::Off);
}

#[tokio::test]
async fn a_tool_round_trip_feeds_the_call_and_its_result_to_the_next_model_call() {
    let schema =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let echo = FnTool::new("echo", schema.clone(), move |call: ToolInvocation| {
        log.lock().expect("log").push(call.args.clone());
        let text = format!("echo: {}", call.args["text"].as_str().unwrap_or("?"));
        async move { Ok(ToolOutput::text(text)) }
    });
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "echo", json!({"text": "hi"}))]).with_text("Let me check."),
        Turn::text("Done."),
    ]);
    let agent = agent(&script, vec![echo.arc()]);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    assert_eq!(
        trace(&events),
        concat(vec![
            strings(&[
                "agent_start",
                "turn_start",
                "message_start user",
                "message_end user",
                "message_start assistant",
                "message_update text_start",
                "message_update text_delta",
                "message_update text_end",
            ]),
            tool_call_updates(1),
            strings(&[
                "message_end assistant",
                "tool_execution_start c1",
                "tool_execution_end c1",
                "message_start toolResult c1",
                "message_end toolResult c1",
                "turn_end toolUse [c1]",
                "turn_start",
            ]),
            text_message_trace(),
            strings(&["turn_end stop []", "agent_end (4)"]),
        ])
    );
    assert_eq!(*seen.lock().expect("log"), [json!({"text": "hi"})]);
    let (result, is_error) = tool_end_of(&events, "c1");
    assert_eq!(output_text(&result), "echo: hi");
    assert!(!is_error);

    let second = script.call(1);
    assert_eq!(
        second.lines(),
        [
            "user: go",
            r#"assistant(toolUse): Let me check. [call c1 echo {"text":"hi"}]"#,
            "toolResult c1 ok: echo: hi",
        ]
    );
    assert_eq!(second.context.tools.len(), 1);
    assert_eq!(second.context.tools[0].name, "echo");
    assert_eq!(second.context.tools[0].parameters, schema);
    assert_eq!(
        describe_history(&agent.messages()),
        [
            "user: go",
            r#"assistant(toolUse): Let me check. [call c1 echo {"text":"hi"}]"#,
            "toolResult c1 ok: echo: hi",
            "assistant(stop): Done.",
        ]
    );
    let results = turn_results(&events);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0], vec![history_result(&agent, "c1")]);
    assert!(results[1].is_empty());
}

async fn run_failed_turn(reason: StopReason, message: &str) {
    let (echo, seen) = recording_tool("echo");
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "echo", json!({"text": "x"}))]).fail(reason, message),
        Turn::text("never used"),
    ]);
    let agent = agent(&script, vec![echo]);
    agent.follow_up(user("queued follow-up"));
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    let end = format!("turn_end {} []", reason.as_str());
    assert_eq!(
        trace(&events),
        concat(vec![
            strings(&[
                "agent_start",
                "turn_start",
                "message_start user",
                "message_end user",
                "message_start assistant",
            ]),
            tool_call_updates(1),
            strings(&["message_end assistant", &end, "agent_end (2)"]),
        ])
    );
    assert!(
        seen.lock().expect("log").is_empty(),
        "its tool calls never run"
    );
    assert_eq!(script.call_count(), 1);
    assert_eq!(script.turns_left(), 1);
    let last = last_message(&agent);
    let last = last.as_assistant().expect("assistant");
    assert_eq!(last.stop_reason, reason);
    assert_eq!(last.error_message.as_deref(), Some(message));
    assert_eq!(last.tool_calls().count(), 1);
    assert_eq!(
        agent.with_state(|s| s.error.clone()).as_deref(),
        Some(message)
    );
    // The queues are not polled.
    assert_eq!(agent.queued_follow_ups().len(), 1);
    assert!(!agent.is_running());
}

#[tokio::test]
async fn stop_reason_error_ends_the_run_without_running_its_tool_calls() {
    run_failed_turn(StopReason::Error, "503 overloaded").await;
}

#[tokio::test]
async fn stop_reason_aborted_ends_the_run_without_running_its_tool_calls() {
    run_failed_turn(StopReason::Aborted, "Request was aborted").await;
}

#[tokio::test]
async fn abort_while_streaming_ends_the_turn_aborted() {
    let script = ScriptedModel::new(vec![Turn::hang()]);
    let agent = agent(&script, vec![]);
    let mut rx = agent.subscribe();
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.prompt(vec![user("hi")]).await }
    });
    let mut events = wait_for(&mut rx, |e| matches!(e, AgentEvent::MessageUpdate { .. })).await;
    let idle = tokio::spawn({
        let agent = agent.clone();
        async move { agent.wait_for_idle().await }
    });
    agent.abort();
    within(run).await.expect("joins").expect("accepted");
    within(idle).await.expect("wait_for_idle returns");
    events.extend(drain(&mut rx));

    assert_eq!(
        trace(&events),
        [
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant",
            "message_update text_start",
            "message_update text_delta",
            "message_end assistant",
            "turn_end aborted []",
            "agent_end (2)"
        ]
    );
    let last = last_message(&agent);
    let last = last.as_assistant().expect("assistant");
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.error_message.as_deref(), Some("Request was aborted"));
    assert_eq!(last.text(), "Working on it");
    assert!(!agent.is_running());
    assert_eq!(
        agent.with_state(|s| s.error.clone()).as_deref(),
        Some("Request was aborted")
    );
    within(agent.wait_for_idle()).await;
}

#[tokio::test]
async fn abort_while_a_tool_runs_cancels_the_tool_and_ends_the_run() {
    let (started_tx, started_rx) = oneshot::channel();
    let started_tx = Mutex::new(Some(started_tx));
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let saw = saw_cancel.clone();
    let bash = FnTool::any("bash", move |call: ToolInvocation| {
        let started = started_tx.lock().expect("lock").take();
        let saw = saw.clone();
        async move {
            if let Some(started) = started {
                let _ = started.send(());
            }
            call.cancel.cancelled().await;
            saw.store(true, Ordering::SeqCst);
            Err(ToolError::new("Command aborted"))
        }
    });
    let script = ScriptedModel::new(vec![Turn::tools(vec![call(
        "c1",
        "bash",
        json!({"command": "sleep 100"}),
    )])]);
    let agent = agent(&script, vec![bash.arc()]);
    let mut rx = agent.subscribe();
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.prompt(vec![user("run it")]).await }
    });
    within(started_rx).await.expect("the tool started");
    assert!(agent.with_state(|s| s.pending_tool_calls.contains("c1")));
    agent.abort();
    within(run).await.expect("joins").expect("accepted");
    let events = drain(&mut rx);

    assert!(
        saw_cancel.load(Ordering::SeqCst),
        "the tool saw the cancellation"
    );
    assert_eq!(
        trace(&events),
        concat(vec![
            strings(&[
                "agent_start",
                "turn_start",
                "message_start user",
                "message_end user",
                "message_start assistant",
            ]),
            tool_call_updates(1),
            strings(&[
                "message_end assistant",
                "tool_execution_start c1",
                "tool_execution_end c1 error",
                "message_start toolResult c1",
                "message_end toolResult c1",
                "turn_end toolUse [c1]",
                "turn_start",
                "message_start assistant",
                "message_end assistant",
                "turn_end aborted []",
                "agent_end (4)",
            ]),
        ])
    );
    let result = history_result(&agent, "c1");
    assert!(result.is_error);
    assert_eq!(result_text(&result), "Command aborted");
    // The next model call was made with the cancelled signal and answered `aborted`.
    assert_eq!(script.call_count(), 2);
    let last = last_message(&agent);
    let last = last.as_assistant().expect("assistant");
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.error_message.as_deref(), Some("Request was aborted"));
    assert!(!agent.is_running());
    assert!(agent.with_state(|s| s.pending_tool_calls.is_empty()));

    // The next run gets a fresh signal: it is not born aborted.
    script.push(Turn::text("Fresh start."));
    prompt(&agent, "again").await;
    let last = last_message(&agent);
    let last = last.as_assistant().expect("assistant");
    assert_eq!(last.stop_reason, StopReason::Stop);
    assert_eq!(last.text(), "Fresh start.");
    assert_eq!(agent.with_state(|s| s.error.clone()), None);
}

#[tokio::test]
async fn a_length_stop_answers_every_tool_call_with_an_error_and_calls_the_model_again() {
    let (echo, seen) = recording_tool("echo");
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", "echo", json!({"text": "a"})),
            call("c2", "echo", json!({"text": "b"})),
        ])
        .stop(StopReason::Length),
        Turn::text("Retrying."),
    ]);
    let agent = agent(&script, vec![echo]);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    assert_eq!(
        trace(&events),
        concat(vec![
            strings(&[
                "agent_start",
                "turn_start",
                "message_start user",
                "message_end user",
                "message_start assistant",
            ]),
            tool_call_updates(2),
            strings(&[
                "message_end assistant",
                "tool_execution_start c1",
                "tool_execution_end c1 error",
                "message_start toolResult c1",
                "message_end toolResult c1",
                "tool_execution_start c2",
                "tool_execution_end c2 error",
                "message_start toolResult c2",
                "message_end toolResult c2",
                "turn_end length [c1,c2]",
                "turn_start",
            ]),
            text_message_trace(),
            strings(&["turn_end stop []", "agent_end (5)"]),
        ])
    );
    assert!(seen.lock().expect("log").is_empty(), "no tool executes");
    let expected = truncated_call_text("echo");
    assert_eq!(
        expected,
        "Tool call \"echo\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    );
    for id in ["c1", "c2"] {
        let result = history_result(&agent, id);
        assert!(result.is_error);
        assert_eq!(result_text(&result), expected);
        assert_eq!(result.details, Some(json!({})));
    }
    assert_eq!(script.call_count(), 2);
    assert_eq!(
        script.call(1).lines()[2..],
        [
            format!("toolResult c1 error: {expected}"),
            format!("toolResult c2 error: {expected}"),
        ]
    );
}

#[tokio::test]
async fn prepare_next_turn_switches_model_and_thinking_level_from_the_second_call_on() {
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "echo", json!({"text": "a"}))]),
        Turn::text("Switched."),
    ]);
    let seen_turns = Arc::new(Mutex::new(Vec::new()));
    let hooks = {
        let script = script.clone();
        let seen_turns = seen_turns.clone();
        TestHooks::new().prepare(move |turn| {
            seen_turns.lock().expect("log").push((
                script.call_count(),
                turn.message.stop_reason,
                turn.tool_results.len(),
            ));
            Some(NextTurn {
                model: Some(model("model-b")),
                thinking_level: Some(ThinkingLevel::High),
                context: None,
            })
        })
    };
    let (echo, _) = recording_tool("echo");
    let mut options = options(&script, vec![echo]);
    options.thinking_level = ThinkingLevel::Low;
    options.hooks = hooks.arc();
    let agent = Agent::new(options);
    prompt(&agent, "go").await;

    // Called once: after the first turn (one model call made), never before the first call.
    assert_eq!(
        *seen_turns.lock().expect("log"),
        [(1, StopReason::ToolUse, 1)]
    );
    let calls = script.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].model.as_str(), calls[0].thinking),
        ("model-a", ThinkingLevel::Low)
    );
    assert_eq!(
        (calls[1].model.as_str(), calls[1].thinking),
        ("model-b", ThinkingLevel::High)
    );
    let last = last_message(&agent);
    assert_eq!(last.as_assistant().expect("assistant").model, "model-b");
}

#[tokio::test]
async fn should_stop_after_turn_ends_the_run_right_after_turn_end() {
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "echo", json!({"text": "a"}))]),
        Turn::text("never used"),
    ]);
    let asked = Arc::new(AtomicUsize::new(0));
    let hooks = {
        let asked = asked.clone();
        TestHooks::new().stop_after(move |turn| {
            asked.fetch_add(1, Ordering::SeqCst);
            assert_eq!(turn.tool_results.len(), 1);
            true
        })
    };
    let (echo, seen) = recording_tool("echo");
    let mut options = options(&script, vec![echo]);
    options.hooks = hooks.arc();
    let agent = Agent::new(options);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    let lines = trace(&events);
    assert_eq!(
        lines[lines.len() - 6..],
        [
            "tool_execution_start c1",
            "tool_execution_end c1",
            "message_start toolResult c1",
            "message_end toolResult c1",
            "turn_end toolUse [c1]",
            "agent_end (3)"
        ]
    );
    assert_eq!(seen.lock().expect("log").len(), 1, "the tool ran");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(script.call_count(), 1, "no second model call");
    assert!(!agent.is_running());
}

#[tokio::test]
async fn the_api_key_hook_is_asked_per_call_and_passed_to_the_model() {
    let script = ScriptedModel::new(vec![Turn::text("ok")]);
    let mut options = options(&script, vec![]);
    options.hooks = TestHooks::new()
        .api_key(|provider| Ok(Some(format!("key-for-{provider}"))))
        .arc();
    let agent = Agent::new(options);
    prompt(&agent, "hi").await;
    assert_eq!(script.call(0).api_key.as_deref(), Some("key-for-test"));
}

#[tokio::test]
async fn a_loop_failure_becomes_one_synthetic_assistant_message_and_only_agent_end() {
    let script = ScriptedModel::new(vec![Turn::text("never used")]);
    let mut options = options(&script, vec![]);
    options.hooks = TestHooks::new()
        .api_key(|_| Err("keychain locked".to_string()))
        .arc();
    let agent = Agent::new(options);
    let mut rx = agent.subscribe();
    prompt(&agent, "hi").await;
    let events = drain(&mut rx);

    // The prompt's own events come first (pi emits them before resolving the key); the failure
    // adds exactly one event, agent_end, and no message or turn events.
    assert_eq!(
        trace(&events),
        [
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "agent_end (1)"
        ]
    );
    assert_eq!(
        kinds(&events).iter().filter(|k| **k == "agent_end").count(),
        1
    );
    let AgentEvent::AgentEnd { messages } = events.last().expect("events").as_ref() else {
        panic!("the run ends with agent_end")
    };
    assert_eq!(messages.len(), 1);
    let synthetic = messages[0].as_assistant().expect("an assistant message");
    assert_eq!(
        synthetic.content,
        [AssistantBlock::Text(TextContent {
            text: String::new(),
            text_signature: None
        })]
    );
    assert_eq!(synthetic.usage, Usage::default());
    assert_eq!(synthetic.stop_reason, StopReason::Error);
    assert_eq!(synthetic.error_message.as_deref(), Some("keychain locked"));
    assert_eq!(synthetic.model, "model-a");
    assert_eq!(synthetic.provider, "test");
    // Appended to the history after the prompt.
    let history = agent.messages();
    assert_eq!(history.len(), 2);
    assert_eq!(text_of(&history[0]), "hi");
    assert_eq!(history[1], messages[0]);
    assert_eq!(
        agent.with_state(|s| s.error.clone()).as_deref(),
        Some("keychain locked")
    );
    assert!(!agent.is_running());
    assert_eq!(script.call_count(), 0);
}

#[tokio::test]
async fn two_subscribers_see_the_same_events_in_the_same_order() {
    let (echo, _) = recording_tool("echo");
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", "echo", json!({"text": "a"})),
            call("c2", "echo", json!({"text": "b"})),
        ])
        .with_thinking("hmm"),
        Turn::deltas(&["a", "b", "c"]),
    ]);
    let agent = agent(&script, vec![echo]);
    let mut fast = agent.subscribe();
    let mut slow = agent.subscribe();
    let reader = tokio::spawn(async move { until_agent_end(&mut fast).await });
    prompt(&agent, "go").await;
    let fast_events = within(reader).await.expect("the reader finishes");
    // The slow subscriber reads only now, after the run.
    let slow_events = drain(&mut slow);

    assert_eq!(fast_events.len(), slow_events.len());
    assert!(fast_events.len() > 20);
    for (a, b) in fast_events.iter().zip(&slow_events) {
        assert_eq!(a.as_ref(), b.as_ref());
    }
    assert_eq!(trace(&fast_events)[0], "agent_start");
    assert_eq!(
        trace(&fast_events).last().map(String::as_str),
        Some("agent_end (5)")
    );
}

#[tokio::test]
async fn custom_messages_are_dropped_before_the_model_call_by_default() {
    let script = ScriptedModel::new(vec![Turn::text("ok")]);
    let mut fields = Map::new();
    fields.insert("command".into(), json!("ls"));
    fields.insert("output".into(), json!("a.txt\n"));
    fields.insert("timestamp".into(), json!(1));
    let custom: AgentMessage = AgentMessage::Custom(CustomMessage::new("bashExecution", fields));
    let mut options = options(&script, vec![]);
    options.messages = vec![custom.clone()];
    let agent = Agent::new(options);
    prompt(&agent, "hi").await;

    assert_eq!(script.call(0).lines(), ["user: hi"]);
    assert!(matches!(
        script.call(0).context.messages[0],
        Message::User(_)
    ));
    assert_eq!(
        describe_history(&agent.messages()),
        ["custom bashExecution", "user: hi", "assistant(stop): ok"]
    );
    assert_eq!(agent.messages()[0], custom);
}
