//! Tool execution: parallel and sequential batches, terminate, the before/after hooks, schema
//! validation, crashing and unknown tools (pi-behaviour.md §1, "Tool preparation" and the modes).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use support::*;
use tandem_agent::{
    AfterToolCallResult, Agent, AgentTool, BeforeToolCallResult, ExecutionMode, ToolInvocation,
    ToolOutput,
};
use tokio::sync::{oneshot, Barrier};

/// The trace up to and including the end of an assistant message with `n` tool calls (no text).
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
async fn parallel_calls_overlap_end_in_completion_order_and_report_in_source_order() {
    // Both calls wait on one barrier: the batch only finishes if they run at the same time.
    let barrier = Arc::new(Barrier::new(2));
    let (second_done, first_waits) = oneshot::channel::<()>();
    let second_done = Arc::new(Mutex::new(Some(second_done)));
    let first_waits = Arc::new(Mutex::new(Some(first_waits)));
    let tool = FnTool::any("wait", move |call: ToolInvocation| {
        let barrier = barrier.clone();
        let second_done = second_done.clone();
        let first_waits = first_waits.clone();
        async move {
            barrier.wait().await;
            if call.call_id == "c2" {
                // The second call finishes first and lets the first one go.
                if let Some(tx) = second_done.lock().expect("lock").take() {
                    let _ = tx.send(());
                }
                Ok(ToolOutput::text("second"))
            } else {
                let rx = first_waits.lock().expect("lock").take();
                if let Some(rx) = rx {
                    let _ = rx.await;
                }
                Ok(ToolOutput::text("first"))
            }
        }
    });
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", "wait", json!({})),
            call("c2", "wait", json!({})),
        ]),
        Turn::text("Both done."),
    ]);
    let agent = agent(&script, vec![tool.arc()]);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    assert_eq!(
        trace(&events),
        concat(vec![
            prefix_with_calls(2),
            strings(&[
                "tool_execution_start c1",
                "tool_execution_start c2",
                "tool_execution_end c2",
                "tool_execution_end c1",
                "message_start toolResult c1",
                "message_end toolResult c1",
                "message_start toolResult c2",
                "message_end toolResult c2",
                "turn_end toolUse [c1,c2]",
                "turn_start",
            ]),
            text_message_trace(),
            strings(&["turn_end stop []", "agent_end (5)"]),
        ])
    );
    let results = turn_results(&events);
    let ids: Vec<&str> = results[0].iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2"]);
    assert_eq!(
        script.call(1).lines()[2..],
        ["toolResult c1 ok: first", "toolResult c2 ok: second"]
    );
}

/// A tool that records its start and end and the most calls it saw running at once; it yields
/// to the scheduler in between so that a concurrent call would start meanwhile.
struct Overlap {
    active: AtomicUsize,
    max: AtomicUsize,
    log: Mutex<Vec<String>>,
}

impl Overlap {
    fn new() -> Arc<Self> {
        Arc::new(Overlap {
            active: AtomicUsize::new(0),
            max: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
        })
    }

    fn tool(self: &Arc<Self>, name: &str) -> FnTool {
        let me = self.clone();
        FnTool::any(name, move |call: ToolInvocation| {
            let me = me.clone();
            async move {
                me.log
                    .lock()
                    .expect("log")
                    .push(format!("start {}", call.call_id));
                let now = me.active.fetch_add(1, Ordering::SeqCst) + 1;
                me.max.fetch_max(now, Ordering::SeqCst);
                for _ in 0..5 {
                    tokio::task::yield_now().await;
                }
                me.active.fetch_sub(1, Ordering::SeqCst);
                me.log
                    .lock()
                    .expect("log")
                    .push(format!("end {}", call.call_id));
                Ok(ToolOutput::text(format!("done {}", call.call_id)))
            }
        })
    }

    fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }
}

fn sequential_trace() -> Vec<String> {
    concat(vec![
        prefix_with_calls(2),
        strings(&[
            "tool_execution_start c1",
            "tool_execution_end c1",
            "message_start toolResult c1",
            "message_end toolResult c1",
            "tool_execution_start c2",
            "tool_execution_end c2",
            "message_start toolResult c2",
            "message_end toolResult c2",
            "turn_end toolUse [c1,c2]",
            "turn_start",
        ]),
        text_message_trace(),
        strings(&["turn_end stop []", "agent_end (5)"]),
    ])
}

fn two_calls(first: &str, second: &str) -> Arc<ScriptedModel> {
    ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", first, json!({})),
            call("c2", second, json!({})),
        ]),
        Turn::text("ok"),
    ])
}

#[tokio::test]
async fn the_overlap_probe_sees_parallel_calls_overlap() {
    // Control for the sequential tests below: in parallel mode the probe does see two at once.
    let probe = Overlap::new();
    let script = two_calls("t", "t");
    let agent = agent(&script, vec![probe.tool("t").arc()]);
    prompt(&agent, "go").await;
    assert_eq!(probe.max(), 2);
}

#[tokio::test]
async fn sequential_mode_runs_one_call_at_a_time_in_order() {
    let probe = Overlap::new();
    let script = two_calls("t", "t");
    let mut options = options(&script, vec![probe.tool("t").arc()]);
    options.tool_execution = ExecutionMode::Sequential;
    let agent = Agent::new(options);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;

    assert_eq!(trace(&drain(&mut rx)), sequential_trace());
    assert_eq!(probe.max(), 1);
    assert_eq!(probe.log(), ["start c1", "end c1", "start c2", "end c2"]);
}

#[tokio::test]
async fn one_sequential_tool_makes_the_whole_batch_sequential() {
    let probe = Overlap::new();
    let script = two_calls("par", "seq");
    let tools: Vec<Arc<dyn AgentTool>> = vec![
        probe.tool("par").arc(),
        probe.tool("seq").sequential().arc(),
    ];
    let agent = agent(&script, tools);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;

    assert_eq!(trace(&drain(&mut rx)), sequential_trace());
    assert_eq!(probe.max(), 1);
    assert_eq!(probe.log(), ["start c1", "end c1", "start c2", "end c2"]);
}

fn terminating_tools() -> Vec<Arc<dyn AgentTool>> {
    let finish = FnTool::any("finish", |_call: ToolInvocation| async {
        Ok(ToolOutput {
            terminate: true,
            ..ToolOutput::text("finished")
        })
    });
    let (go, _) = recording_tool("go");
    vec![finish.arc(), go]
}

#[tokio::test]
async fn a_batch_whose_every_result_terminates_ends_the_run() {
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", "finish", json!({})),
            call("c2", "finish", json!({})),
        ]),
        Turn::text("never used"),
    ]);
    let agent = agent(&script, terminating_tools());
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let lines = trace(&drain(&mut rx));

    assert_eq!(
        lines[lines.len() - 2..],
        ["turn_end toolUse [c1,c2]", "agent_end (4)"]
    );
    assert_eq!(script.call_count(), 1);
    assert_eq!(script.turns_left(), 1);
}

#[tokio::test]
async fn a_batch_where_only_some_results_terminate_continues() {
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", "finish", json!({})),
            call("c2", "go", json!({})),
        ]),
        Turn::text("continuing"),
    ]);
    let agent = agent(&script, terminating_tools());
    prompt(&agent, "go").await;
    assert_eq!(script.call_count(), 2);
    assert_eq!(script.turns_left(), 0);
}

#[tokio::test]
async fn before_tool_call_blocks_with_its_reason_or_the_default_text() {
    let (tool, seen) = recording_tool("write");
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", "write", json!({"path": "/etc/passwd"})),
            call("c2", "write", json!({"path": "/tmp/x"})),
            call("c3", "write", json!({"path": "ok.txt"})),
        ]),
        Turn::text("ok"),
    ]);
    let mut options = options(&script, vec![tool]);
    options.hooks = TestHooks::new()
        .before(|call| match call.tool_call.id.as_str() {
            "c1" => Some(BeforeToolCallResult {
                block: true,
                reason: Some("Writing outside the project is not allowed".into()),
                terminate: false,
                args: None,
            }),
            "c2" => Some(BeforeToolCallResult {
                block: true,
                ..Default::default()
            }),
            _ => None,
        })
        .arc();
    let agent = Agent::new(options);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    let c1 = history_result(&agent, "c1");
    assert!(c1.is_error);
    assert_eq!(
        result_text(&c1),
        "Writing outside the project is not allowed"
    );
    assert_eq!(c1.details, Some(json!({})));
    let c2 = history_result(&agent, "c2");
    assert!(c2.is_error);
    assert_eq!(result_text(&c2), "Tool execution was blocked");
    assert!(!history_result(&agent, "c3").is_error);
    assert_eq!(*seen.lock().expect("log"), [json!({"path": "ok.txt"})]);
    // Blocked calls end at once, during preparation; the call that runs ends afterwards.
    let lines = trace(&events);
    let tools: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| l.starts_with("tool_execution"))
        .collect();
    assert_eq!(
        tools,
        [
            "tool_execution_start c1",
            "tool_execution_end c1 error",
            "tool_execution_start c2",
            "tool_execution_end c2 error",
            "tool_execution_start c3",
            "tool_execution_end c3"
        ]
    );
    assert_eq!(script.call_count(), 2);
}

#[tokio::test]
async fn before_tool_call_can_replace_the_arguments_the_tool_runs_with() {
    let (tool, seen) = recording_tool("write");
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", "write", json!({"path": "a.txt"})),
            call("c2", "write", json!({"path": "b.txt"})),
        ]),
        Turn::text("ok"),
    ]);
    let mut options = options(&script, vec![tool]);
    options.hooks = TestHooks::new()
        .before(|call| {
            (call.tool_call.id == "c1").then(|| BeforeToolCallResult {
                args: Some(json!({"path": "changed.txt"})),
                ..Default::default()
            })
        })
        .arc();
    let agent = Agent::new(options);
    prompt(&agent, "go").await;
    let mut seen = seen.lock().expect("log").clone();
    seen.sort_by_key(|v| v.to_string());
    assert_eq!(
        seen,
        [json!({"path": "b.txt"}), json!({"path": "changed.txt"})]
    );
    assert!(!history_result(&agent, "c1").is_error);
}

#[tokio::test]
async fn a_block_with_terminate_ends_the_run() {
    let (tool, seen) = recording_tool("write");
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "write", json!({}))]),
        Turn::text("never used"),
    ]);
    let mut options = options(&script, vec![tool]);
    options.hooks = TestHooks::new()
        .before(|_| {
            Some(BeforeToolCallResult {
                block: true,
                reason: Some("Stopped by the user".into()),
                terminate: true,
                args: None,
            })
        })
        .arc();
    let agent = Agent::new(options);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    let (result, is_error) = tool_end_of(&events, "c1");
    assert!(is_error);
    assert!(result.terminate);
    assert_eq!(output_text(&result), "Stopped by the user");
    assert!(seen.lock().expect("log").is_empty());
    assert_eq!(script.call_count(), 1);
    let lines = trace(&events);
    assert_eq!(
        lines[lines.len() - 2..],
        ["turn_end toolUse [c1]", "agent_end (3)"]
    );
}

#[tokio::test]
async fn after_tool_call_overrides_fields_one_by_one_and_its_error_replaces_the_result() {
    let tool = FnTool::any("read", |_call: ToolInvocation| async {
        Ok(ToolOutput::text("original").with_details(json!({"lines": 3})))
    });
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![
            call("c1", "read", json!({})),
            call("c2", "read", json!({})),
            call("c3", "read", json!({})),
        ]),
        Turn::text("ok"),
    ]);
    let mut options = options(&script, vec![tool.arc()]);
    options.hooks = TestHooks::new()
        .after(|call| {
            assert_eq!(output_text(call.result), "original");
            assert!(!call.is_error);
            match call.tool_call.id.as_str() {
                "c1" => Ok(Some(AfterToolCallResult {
                    content: Some(vec![text_block("replaced")]),
                    ..Default::default()
                })),
                "c2" => Ok(Some(AfterToolCallResult {
                    is_error: Some(true),
                    ..Default::default()
                })),
                _ => Err("after hook failed".into()),
            }
        })
        .arc();
    let agent = Agent::new(options);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    let c1 = history_result(&agent, "c1");
    assert_eq!(result_text(&c1), "replaced");
    assert_eq!(c1.details, Some(json!({"lines": 3})), "details kept");
    assert!(!c1.is_error);
    let c2 = history_result(&agent, "c2");
    assert_eq!(result_text(&c2), "original");
    assert_eq!(c2.details, Some(json!({"lines": 3})));
    assert!(c2.is_error);
    let c3 = history_result(&agent, "c3");
    assert_eq!(result_text(&c3), "after hook failed");
    assert_eq!(c3.details, Some(json!({})));
    assert!(c3.is_error);
    // tool_execution_end carries the final (overridden) result too.
    let (end, is_error) = tool_end_of(&events, "c1");
    assert_eq!((output_text(&end).as_str(), is_error), ("replaced", false));
    let (end, is_error) = tool_end_of(&events, "c2");
    assert_eq!((output_text(&end).as_str(), is_error), ("original", true));
    let (end, is_error) = tool_end_of(&events, "c3");
    assert_eq!(
        (output_text(&end).as_str(), is_error),
        ("after hook failed", true)
    );
}

fn recording_schema_tool(
    name: &str,
    schema: Value,
) -> (Arc<dyn AgentTool>, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let tool = FnTool::new(name, schema, move |call: ToolInvocation| {
        log.lock().expect("log").push(call.args.clone());
        async { Ok(ToolOutput::text("ran")) }
    });
    (tool.arc(), seen)
}

// Needs the real validator (src/validate.rs is a placeholder that accepts everything).
#[tokio::test]
async fn a_call_missing_a_required_property_gets_pis_validation_error() {
    let (tool, seen) = recording_schema_tool(
        "read",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    );
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "read", json!({}))]),
        Turn::text("ok"),
    ]);
    let agent = agent(&script, vec![tool]);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    let result = history_result(&agent, "c1");
    assert!(result.is_error);
    assert!(result_text(&result).starts_with("Validation failed for tool \""));
    assert_eq!(
        result_text(&result),
        "Validation failed for tool \"read\":\n  - path: must have required properties path\n\nReceived arguments:\n{}"
    );
    assert!(seen.lock().expect("log").is_empty(), "the tool never ran");
    assert!(tool_end_of(&events, "c1").1);
    assert_eq!(script.call_count(), 2);
}

// Needs the real validator (src/validate.rs is a placeholder that accepts everything).
#[tokio::test]
async fn arguments_are_coerced_to_the_schema_before_the_tool_sees_them() {
    let (tool, seen) = recording_schema_tool(
        "list",
        json!({"type": "object", "properties": {"limit": {"type": "integer"}}}),
    );
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "list", json!({"limit": "5"}))]),
        Turn::text("ok"),
    ]);
    let agent = agent(&script, vec![tool]);
    prompt(&agent, "go").await;

    assert!(!history_result(&agent, "c1").is_error);
    assert_eq!(*seen.lock().expect("log"), [json!({"limit": 5})]);
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result_and_the_run_continues() {
    let boom = FnTool::any("boom", |_call: ToolInvocation| async {
        if true {
            panic!("kaboom");
        }
        Ok(ToolOutput::text("unreachable"))
    });
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "boom", json!({}))]),
        Turn::text("Recovered."),
    ]);
    let agent = agent(&script, vec![boom.arc()]);
    prompt(&agent, "go").await;

    let result = history_result(&agent, "c1");
    assert!(result.is_error);
    let text = result_text(&result);
    assert!(text.starts_with("Tool boom crashed:"), "{text}");
    assert_eq!(text, "Tool boom crashed: kaboom");
    assert_eq!(script.call_count(), 2);
    assert_eq!(
        describe_history(&agent.messages())
            .last()
            .map(String::as_str),
        Some("assistant(stop): Recovered.")
    );
    assert!(!agent.is_running());
}

#[tokio::test]
async fn an_unknown_tool_gets_not_found() {
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "nope", json!({"x": 1}))]),
        Turn::text("ok"),
    ]);
    let agent = agent(&script, vec![]);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    let result = history_result(&agent, "c1");
    assert!(result.is_error);
    assert_eq!(result_text(&result), "Tool nope not found");
    assert_eq!(result.details, Some(json!({})));
    assert_eq!(
        trace(&events)[prefix_with_calls(1).len()..][..4],
        [
            "tool_execution_start c1",
            "tool_execution_end c1 error",
            "message_start toolResult c1",
            "message_end toolResult c1"
        ]
    );
    assert_eq!(script.call_count(), 2);
}

#[tokio::test]
async fn partial_results_arrive_as_updates_before_the_calls_end() {
    let tool = FnTool::any("bash", |call: ToolInvocation| async move {
        call.updates.send(ToolOutput::text("line 1")).await;
        call.updates.send(ToolOutput::text("line 1\nline 2")).await;
        Ok(ToolOutput::text("line 1\nline 2\nexit 0"))
    });
    let script = ScriptedModel::new(vec![
        Turn::tools(vec![call("c1", "bash", json!({"command": "make"}))]),
        Turn::text("Built."),
    ]);
    let agent = agent(&script, vec![tool.arc()]);
    let mut rx = agent.subscribe();
    prompt(&agent, "go").await;
    let events = drain(&mut rx);

    assert_eq!(
        trace(&events)[prefix_with_calls(1).len()..][..5],
        [
            "tool_execution_start c1",
            "tool_execution_update c1",
            "tool_execution_update c1",
            "tool_execution_end c1",
            "message_start toolResult c1"
        ]
    );
    let partials: Vec<(String, Value)> = events
        .iter()
        .filter_map(|e| match e.as_ref() {
            tandem_agent::AgentEvent::ToolExecutionUpdate {
                partial_result,
                args,
                ..
            } => Some((output_text(partial_result), args.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        partials,
        [
            ("line 1".to_string(), json!({"command": "make"})),
            ("line 1\nline 2".to_string(), json!({"command": "make"}))
        ]
    );
    assert_eq!(
        result_text(&history_result(&agent, "c1")),
        "line 1\nline 2\nexit 0"
    );
}
