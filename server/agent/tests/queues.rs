//! Steering and follow-up queues, their drain modes, `continue_run` and the busy refusals
//! (pi-behaviour.md §1, "Loop" and the `Agent` rules).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::json;
use support::*;
use tandem_agent::ai::{AssistantMessage, StopReason, ToolCall};
use tandem_agent::{
    Agent, AgentError, AgentEvent, AgentMessage, BeforeToolCallResult, ExecutionMode, QueueMode,
    ToolInvocation, ToolOutput, SKIPPED_TEXT,
};
use tokio::sync::oneshot;

fn three_calls() -> Turn {
    Turn::tools(vec![
        call("c1", "t", json!({"n": 1})),
        call("c2", "t", json!({"n": 2})),
        call("c3", "t", json!({"n": 3})),
    ])
}

fn prefix_with_calls(n: usize) -> Vec<String> {
    concat(vec![
        strings(&[
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant",
        ]),
        tool_call_updates(n),
        strings(&["message_end assistant"]),
    ])
}

#[tokio::test]
async fn steering_mid_batch_in_sequential_mode_skips_the_remaining_calls() {
    let script = ScriptedModel::new(vec![three_calls(), Turn::text("Changing course.")]);
    let mut options = options(&script, vec![]);
    options.tool_execution = ExecutionMode::Sequential;
    let agent = Agent::new(options);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let tool = {
        let ran = ran.clone();
        let steerer = agent.clone();
        FnTool::any("t", move |call: ToolInvocation| {
            ran.lock().expect("log").push(call.call_id.clone());
            if call.call_id == "c1" {
                steerer.steer(user("stop, do X instead"));
            }
            async { Ok(ToolOutput::text("done")) }
        })
    };
    add_tool(&agent, tool.arc());
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    assert_eq!(
        trace(&events),
        concat(vec![
            prefix_with_calls(3),
            strings(&[
                "tool_execution_start c1",
                "tool_execution_end c1",
                "message_start toolResult c1",
                "message_end toolResult c1",
                "tool_execution_start c2",
                "tool_execution_end c2 error",
                "message_start toolResult c2",
                "message_end toolResult c2",
                "tool_execution_start c3",
                "tool_execution_end c3 error",
                "message_start toolResult c3",
                "message_end toolResult c3",
                "turn_end toolUse [c1,c2,c3]",
                "turn_start",
                "message_start user",
                "message_end user",
            ]),
            text_message_trace(),
            strings(&["turn_end stop []", "agent_end (7)"]),
        ])
    );
    assert_eq!(*ran.lock().expect("log"), ["c1"]);
    assert_eq!(SKIPPED_TEXT, "Skipped due to queued user message.");
    for id in ["c2", "c3"] {
        let result = history_result(&agent, id);
        assert!(result.is_error);
        assert_eq!(result_text(&result), SKIPPED_TEXT);
    }
    assert_eq!(
        script.call(1).lines()[2..],
        [
            "toolResult c1 ok: done".to_string(),
            format!("toolResult c2 error: {SKIPPED_TEXT}"),
            format!("toolResult c3 error: {SKIPPED_TEXT}"),
            "user: stop, do X instead".to_string(),
        ]
    );
    assert!(agent.queued_steering().is_empty());
}

#[tokio::test]
async fn steering_in_parallel_mode_waits_for_the_whole_batch() {
    let script = ScriptedModel::new(vec![three_calls(), Turn::text("Changing course.")]);
    let handle: Arc<OnceLock<Agent>> = Arc::new(OnceLock::new());
    let asked = Arc::new(AtomicUsize::new(0));
    let mut options = options(&script, vec![]);
    options.hooks = {
        let handle = handle.clone();
        let asked = asked.clone();
        TestHooks::new()
            .before(move |call| {
                asked.fetch_add(1, Ordering::SeqCst);
                if call.tool_call.id == "c1" {
                    handle.get().expect("agent set").steer(user("wait"));
                }
                None::<BeforeToolCallResult>
            })
            .arc()
    };
    let agent = Agent::new(options);
    let _ = handle.set(agent.clone());
    let (tool, seen) = recording_tool("t");
    add_tool(&agent, tool);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    // Every call of the batch runs; the steering message goes in before the next model call.
    assert_eq!(seen.lock().expect("log").len(), 3, "all calls ran");
    assert_eq!(asked.load(Ordering::SeqCst), 3, "all calls were prepared");
    for id in ["c1", "c2", "c3"] {
        assert!(!history_result(&agent, id).is_error, "{id} succeeded");
    }
    let t = trace(&events);
    let turn_end = t
        .iter()
        .position(|e| e == "turn_end toolUse [c1,c2,c3]")
        .expect("the batch's turn ends");
    assert_eq!(
        &t[turn_end + 1..turn_end + 4],
        &strings(&["turn_start", "message_start user", "message_end user"])[..]
    );
    assert_eq!(
        script.call(1).lines().last().map(String::as_str),
        Some("user: wait")
    );
}

#[tokio::test]
async fn follow_ups_wait_for_the_tool_chain_and_steering_to_finish() {
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "t", json!({}))]),
        Turn::text("Doing it now."),
        Turn::text("And later too."),
    ]);
    let agent = agent(&script, vec![]);
    let tool = {
        let queuer = agent.clone();
        FnTool::any("t", move |_call: ToolInvocation| {
            queuer.follow_up(user("later"));
            queuer.steer(user("now"));
            async { Ok(ToolOutput::text("ran")) }
        })
    };
    add_tool(&agent, tool.arc());
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    assert_eq!(
        trace(&events),
        concat(vec![
            prefix_with_calls(1),
            strings(&[
                "tool_execution_start c1",
                "tool_execution_end c1",
                "message_start toolResult c1",
                "message_end toolResult c1",
                "turn_end toolUse [c1]",
                "turn_start",
                "message_start user",
                "message_end user",
            ]),
            text_message_trace(),
            strings(&[
                "turn_end stop []",
                "turn_start",
                "message_start user",
                "message_end user",
            ]),
            text_message_trace(),
            strings(&["turn_end stop []", "agent_end (7)"]),
        ])
    );
    assert_eq!(script.call_count(), 3);
    let second = script.call(1).lines();
    assert_eq!(second.last().map(String::as_str), Some("user: now"));
    assert!(!second.iter().any(|l| l.contains("later")));
    assert_eq!(
        script.call(2).lines()[second.len()..],
        ["assistant(stop): Doing it now.", "user: later"]
    );
}

/// Runs a prompt whose first answer streams behind a gate; `queue` runs while it streams.
async fn run_with_queued(
    turns: Vec<Turn>,
    setup: impl FnOnce(&Agent),
    queue: impl FnOnce(&Agent),
) -> (Agent, Arc<ScriptedModel>) {
    let (release, gate) = oneshot::channel();
    let mut turns = turns.into_iter();
    let first = turns.next().expect("a first turn").gated(gate);
    let script = ScriptedModel::new(std::iter::once(first).chain(turns).collect());
    let agent = agent(&script, vec![]);
    setup(&agent);
    let mut rx = agent.subscribe();
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.prompt(vec![user("go")]).await }
    });
    wait_for(&mut rx, |e| matches!(e, AgentEvent::MessageUpdate { .. })).await;
    queue(&agent);
    release.send(()).expect("the first turn waits");
    within(run).await.expect("joins").expect("accepted");
    (agent, script)
}

fn answers(n: usize) -> Vec<Turn> {
    (1..=n)
        .map(|i| Turn::text(&format!("answer {i}")))
        .collect()
}

#[tokio::test]
async fn follow_ups_one_at_a_time_take_one_model_call_each() {
    let (_agent, script) = run_with_queued(
        answers(3),
        |_| {},
        |agent| {
            agent.follow_up(user("f1"));
            agent.follow_up(user("f2"));
        },
    )
    .await;
    assert_eq!(script.call_count(), 3);
    assert_eq!(script.call(1).lines()[2..], ["user: f1"]);
    assert_eq!(
        script.call(2).lines()[2..],
        ["user: f1", "assistant(stop): answer 2", "user: f2"]
    );
}

#[tokio::test]
async fn follow_ups_in_all_mode_go_together_in_one_model_call() {
    let (agent, script) = run_with_queued(
        answers(2),
        |agent| agent.set_follow_up_mode(QueueMode::All),
        |agent| {
            agent.follow_up(user("f1"));
            agent.follow_up(user("f2"));
        },
    )
    .await;
    assert_eq!(script.call_count(), 2);
    assert_eq!(script.call(1).lines()[2..], ["user: f1", "user: f2"]);
    assert!(agent.queued_follow_ups().is_empty());
}

#[tokio::test]
async fn steering_one_at_a_time_takes_one_model_call_each() {
    let (_agent, script) = run_with_queued(
        answers(3),
        |_| {},
        |agent| {
            agent.steer(user("s1"));
            agent.steer(user("s2"));
        },
    )
    .await;
    assert_eq!(script.call_count(), 3);
    assert_eq!(script.call(1).lines()[2..], ["user: s1"]);
    assert_eq!(
        script.call(2).lines()[2..],
        ["user: s1", "assistant(stop): answer 2", "user: s2"]
    );
}

#[tokio::test]
async fn steering_in_all_mode_goes_together_in_one_model_call() {
    let (agent, script) = run_with_queued(
        answers(2),
        |agent| agent.set_steering_mode(QueueMode::All),
        |agent| {
            agent.steer(user("s1"));
            agent.steer(user("s2"));
        },
    )
    .await;
    assert_eq!(script.call_count(), 2);
    assert_eq!(script.call(1).lines()[2..], ["user: s1", "user: s2"]);
    assert!(agent.queued_steering().is_empty());
}

#[tokio::test]
async fn prompt_and_continue_are_refused_while_running() {
    let (release, gate) = oneshot::channel();
    let script = ScriptedModel::new(vec![Turn::text("slow").gated(gate)]);
    let agent = agent(&script, vec![]);
    let mut rx = agent.subscribe();
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.prompt(vec![user("go")]).await }
    });
    wait_for(&mut rx, |e| matches!(e, AgentEvent::MessageUpdate { .. })).await;

    let err = within(agent.prompt(vec![user("again")]))
        .await
        .expect_err("refused while running");
    assert_eq!(err, AgentError::AlreadyProcessingPrompt);
    assert_eq!(
        err.to_string(),
        "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion."
    );
    let err = within(agent.continue_run())
        .await
        .expect_err("refused while running");
    assert_eq!(err, AgentError::AlreadyProcessing);
    assert_eq!(
        err.to_string(),
        "Agent is already processing. Wait for completion before continuing."
    );

    release.send(()).expect("the turn waits");
    within(run).await.expect("joins").expect("accepted");
    assert_eq!(script.call_count(), 1);
    assert_eq!(
        describe_history(&agent.messages()),
        ["user: go", "assistant(stop): slow"]
    );
}

#[tokio::test]
async fn continue_with_an_empty_history_is_refused() {
    let script = ScriptedModel::new(vec![]);
    let agent = agent(&script, vec![]);
    let err = within(agent.continue_run()).await.expect_err("refused");
    assert_eq!(err, AgentError::NoMessages);
    assert_eq!(err.to_string(), "No messages to continue from");
    assert_eq!(script.call_count(), 0);
}

fn finished_assistant(text: &str) -> AgentMessage {
    let mut message = AssistantMessage::empty(
        tandem_agent::ai::Api::Other("test-api".into()),
        "test",
        "model-a",
    );
    message.content = vec![tandem_agent::ai::AssistantBlock::Text(
        tandem_agent::ai::TextContent {
            text: text.into(),
            text_signature: None,
        },
    )];
    message.into()
}

fn agent_with_history(script: &Arc<ScriptedModel>, history: Vec<AgentMessage>) -> Agent {
    let mut options = options(script, vec![]);
    options.messages = history;
    Agent::new(options)
}

#[tokio::test]
async fn continue_after_an_assistant_message_with_nothing_queued_is_refused() {
    let script = ScriptedModel::new(vec![Turn::text("never used")]);
    let agent = agent_with_history(&script, vec![user("hi"), finished_assistant("hello")]);
    let err = within(agent.continue_run()).await.expect_err("refused");
    assert_eq!(err, AgentError::ContinueFromAssistant);
    assert_eq!(
        err.to_string(),
        "Cannot continue from message role: assistant"
    );
    assert_eq!(script.call_count(), 0);
    assert!(!agent.is_running());
}

#[tokio::test]
async fn continue_after_an_assistant_message_runs_the_queued_steering_once() {
    let script = ScriptedModel::new(answers(2));
    let agent = agent_with_history(&script, vec![user("hi"), finished_assistant("hello")]);
    agent.steer(user("s1"));
    agent.steer(user("s2"));
    let mut rx = agent.subscribe();
    within(agent.continue_run()).await.expect("continues");
    let events = drain(&mut rx);

    assert_eq!(
        trace(&events),
        concat(vec![
            strings(&[
                "agent_start",
                "turn_start",
                "message_start user",
                "message_end user",
            ]),
            text_message_trace(),
            strings(&[
                "turn_end stop []",
                "turn_start",
                "message_start user",
                "message_end user",
            ]),
            text_message_trace(),
            strings(&["turn_end stop []", "agent_end (4)"]),
        ])
    );
    // s1 starts the run; the initial steering poll is skipped, so s2 is not injected with it
    // (and s1 is not injected a second time); s2 comes at the next poll.
    assert_eq!(
        script.call(0).lines(),
        ["user: hi", "assistant(stop): hello", "user: s1"]
    );
    assert_eq!(
        script.call(1).lines()[3..],
        ["assistant(stop): answer 1", "user: s2"]
    );
    assert_eq!(script.call_count(), 2);
}

#[tokio::test]
async fn continue_after_an_assistant_message_runs_a_queued_follow_up() {
    let script = ScriptedModel::new(answers(1));
    let agent = agent_with_history(&script, vec![user("hi"), finished_assistant("hello")]);
    agent.follow_up(user("f1"));
    let mut rx = agent.subscribe();
    within(agent.continue_run()).await.expect("continues");
    let events = drain(&mut rx);

    assert_eq!(
        trace(&events),
        concat(vec![
            strings(&[
                "agent_start",
                "turn_start",
                "message_start user",
                "message_end user",
            ]),
            text_message_trace(),
            strings(&["turn_end stop []", "agent_end (2)"]),
        ])
    );
    assert_eq!(
        script.call(0).lines(),
        ["user: hi", "assistant(stop): hello", "user: f1"]
    );
    assert!(agent.queued_follow_ups().is_empty());
}

async fn continue_from(history: Vec<AgentMessage>, expected_context: &[&str]) {
    let script = ScriptedModel::new(answers(1));
    let agent = agent_with_history(&script, history);
    let mut rx = agent.subscribe();
    within(agent.continue_run()).await.expect("continues");
    let events = drain(&mut rx);

    // No prompt message events: the model is called with the context as it is.
    assert_eq!(
        trace(&events),
        concat(vec![
            strings(&["agent_start", "turn_start"]),
            text_message_trace(),
            strings(&["turn_end stop []", "agent_end (1)"]),
        ])
    );
    assert_eq!(script.call(0).lines(), expected_context);
    assert_eq!(agent.messages().len(), expected_context.len() + 1);
}

#[tokio::test]
async fn continue_after_a_user_message_calls_the_model_with_the_existing_context() {
    continue_from(vec![user("hi")], &["user: hi"]).await;
}

#[tokio::test]
async fn continue_after_a_tool_result_calls_the_model_with_the_existing_context() {
    let mut assistant = AssistantMessage::empty(
        tandem_agent::ai::Api::Other("test-api".into()),
        "test",
        "model-a",
    );
    assistant.stop_reason = StopReason::ToolUse;
    assistant.content = vec![tandem_agent::ai::AssistantBlock::ToolCall(ToolCall {
        id: "c1".into(),
        name: "read".into(),
        arguments: json!({"path": "a"}),
        thought_signature: None,
    })];
    let result = tandem_agent::ai::ToolResultMessage::text("c1", "read", "contents", false);
    continue_from(
        vec![user("hi"), assistant.into(), result.into()],
        &[
            "user: hi",
            r#"assistant(toolUse):  [call c1 read {"path":"a"}]"#,
            "toolResult c1 ok: contents",
        ],
    )
    .await;
}
