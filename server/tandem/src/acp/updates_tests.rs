//! The translator and the replay, on hand-made event sequences; updates compared as the JSON
//! the client receives.

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentEvent, AgentMessage, ToolOutput};
use tandem_ai::{
    Api, AssistantBlock, AssistantMessage, AssistantMessageEvent, Message, StopReason,
    TextContent as AiText, ThinkingContent, ToolCall, ToolResultMessage, UserBlock, UserMessage,
};
use tandem_coding::agent_session::AgentSessionEvent;
use tandem_coding::calls::ProposedChange;

use super::*;

fn ev(event: AgentEvent) -> AgentSessionEvent {
    AgentSessionEvent::Agent(Arc::new(event))
}

fn streamed(event: AssistantMessageEvent) -> AgentSessionEvent {
    ev(AgentEvent::MessageUpdate {
        assistant_message_event: event,
    })
}

fn json_of(updates: &[SessionUpdate]) -> Vec<Value> {
    updates
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect()
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args,
        thought_signature: None,
    }
}

fn assistant(content: Vec<AssistantBlock>, stop: StopReason) -> AssistantMessage {
    let mut m = AssistantMessage::empty(Api::Scripted, "script", "t");
    m.content = content;
    m.stop_reason = stop;
    m
}

struct Extras {
    terminal: Option<String>,
}

/// What a call recorded: a change of `path` from `old` to `new`.
fn record(records: &CallRecords, call: &str, path: &str, old: Option<&str>, new: &str) {
    records.propose(
        call,
        ProposedChange {
            path: path.into(),
            old_text: old.map(str::to_string),
            new_text: new.into(),
            diff: String::new(),
        },
    );
}

fn translator() -> (Translator, Arc<CallRecords>) {
    let records = Arc::new(CallRecords::new());
    (Translator::new(Path::new("/p"), records.clone()), records)
}

impl CallExtras for Extras {
    fn terminal(&self, _: &str) -> Option<String> {
        self.terminal.clone()
    }
}

/// `update` without its `messageId`, and the id.
fn without_id(mut update: Value) -> (Value, String) {
    let id = update
        .as_object_mut()
        .and_then(|o| o.remove("messageId"))
        .and_then(|id| id.as_str().map(str::to_string))
        .expect("a messageId");
    (update, id)
}

#[test]
fn deltas_become_chunks_of_a_reply_and_a_thought_message() {
    let (mut t, _) = translator();
    let delta = |t: &mut Translator, thinking: bool, text: &str| {
        let event = if thinking {
            AssistantMessageEvent::ThinkingDelta {
                content_index: 1,
                delta: text.into(),
            }
        } else {
            AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: text.into(),
            }
        };
        json_of(&t.translate(&streamed(event), &NoExtras))
    };
    let (thought, id1) = without_id(delta(&mut t, true, "hmm").remove(0));
    let (text, id2) = without_id(delta(&mut t, false, "Hi").remove(0));
    assert_eq!(
        thought,
        json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}})
    );
    assert_eq!(
        text,
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}})
    );
    // The thinking and the reply are two messages; more of either keeps its id.
    assert_ne!(id1, id2);
    assert!(!id1.is_empty() && !id2.is_empty());
    let (_, again) = without_id(delta(&mut t, true, "more").remove(0));
    assert_eq!(again, id1);
    let (_, again) = without_id(delta(&mut t, false, " there").remove(0));
    assert_eq!(again, id2);
    let empty = delta(&mut t, false, "");
    assert!(empty.is_empty());
    t.translate(
        &ev(AgentEvent::MessageEnd {
            message: AgentMessage::Llm(Message::Assistant(assistant(Vec::new(), StopReason::Stop))),
        }),
        &NoExtras,
    );
    // The next answer: new ids.
    let (_, id3) = without_id(delta(&mut t, false, "Again").remove(0));
    let (_, id4) = without_id(delta(&mut t, true, "hm").remove(0));
    assert!(![&id1, &id2].contains(&&id3) && ![&id1, &id2].contains(&&id4));
}

#[test]
fn an_edit_stays_pending_when_it_starts_and_completes_with_its_diff() {
    let (mut t, records) = translator();
    let args = json!({"path": "src/a.rs", "edits": [{"oldText": "a", "newText": "b"}]});
    let start = t.translate(
        &streamed(AssistantMessageEvent::ToolcallStart {
            content_index: 0,
            id: "c1".into(),
            name: "edit".into(),
        }),
        &NoExtras,
    );
    assert_eq!(
        json_of(&start),
        // `pending` is the default status, left out on the wire.
        vec![
            json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Edit file",
                    "name": "edit", "kind": "edit"})
        ]
    );
    let end = t.translate(
        &streamed(AssistantMessageEvent::ToolcallEnd {
            content_index: 0,
            tool_call: call("c1", "edit", args.clone()),
        }),
        &NoExtras,
    );
    assert_eq!(
        json_of(&end),
        vec![
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "kind": "edit",
                    "title": "Edit src/a.rs", "locations": [{"path": "/p/src/a.rs"}],
                    "rawInput": args})
        ]
    );
    let running = t.translate(
        &ev(AgentEvent::ToolExecutionStart {
            tool_call_id: "c1".into(),
            tool_name: "edit".into(),
            args: args.clone(),
        }),
        &NoExtras,
    );
    // An edit may ask the user first: it stays `pending` here; the workspace reports it
    // `in_progress` once allowed (or applied without a question).
    assert!(json_of(&running)[0].get("status").is_none(), "{running:?}");
    assert_eq!(json_of(&running)[0]["sessionUpdate"], "tool_call_update");
    record(&records, "c1", "/p/src/a.rs", Some("a"), "b");
    let extras = Extras { terminal: None };
    let done = t.translate(
        &ev(AgentEvent::ToolExecutionEnd {
            tool_call_id: "c1".into(),
            tool_name: "edit".into(),
            result: ToolOutput::text("Successfully replaced 1 block(s) in src/a.rs.")
                .with_details(json!({"diff": "-3 a\n+3 b", "firstChangedLine": 3})),
            is_error: false,
            duration_ms: None,
        }),
        &extras,
    );
    let done = json_of(&done);
    assert_eq!(done[0]["status"], "completed");
    assert_eq!(
        done[0]["locations"],
        json!([{"path": "/p/src/a.rs", "line": 3}])
    );
    assert_eq!(
        done[0]["content"],
        json!([
            {"type": "diff", "path": "/p/src/a.rs", "oldText": "a", "newText": "b"},
            {"type": "content", "content": {"type": "text",
             "text": "Successfully replaced 1 block(s) in src/a.rs."}}
        ])
    );
    assert_eq!(
        done[0]["rawOutput"]["output"],
        "Successfully replaced 1 block(s) in src/a.rs."
    );
}

#[test]
fn a_failed_call_has_no_diff_and_a_read_location_is_one_based() {
    let (mut t, records) = translator();
    let args = json!({"path": "x.rs", "offset": 10});
    let first = t.translate(
        &ev(AgentEvent::ToolExecutionStart {
            tool_call_id: "r".into(),
            tool_name: "read".into(),
            args,
        }),
        &NoExtras,
    );
    // Never streamed: the first sight is a whole tool_call.
    let first = json_of(&first);
    assert_eq!(first[0]["sessionUpdate"], "tool_call");
    assert_eq!(first[0]["status"], "in_progress");
    assert_eq!(
        first[0]["locations"],
        json!([{"path": "/p/x.rs", "line": 10}])
    );
    record(&records, "r", "/p/x.rs", None, "n");
    let extras = Extras { terminal: None };
    let end = t.translate(
        &ev(AgentEvent::ToolExecutionEnd {
            tool_call_id: "r".into(),
            tool_name: "read".into(),
            result: ToolOutput::text("File not found: x.rs"),
            is_error: true,
            duration_ms: None,
        }),
        &extras,
    );
    let end = json_of(&end);
    assert_eq!(end[0]["status"], "failed");
    assert_eq!(
        end[0]["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "File not found: x.rs"}}])
    );
}

#[test]
fn a_command_in_a_client_terminal_shows_the_terminal_not_streamed_text() {
    let (mut t, _) = translator();
    let extras = Extras {
        terminal: Some("term-1".into()),
    };
    t.translate(
        &ev(AgentEvent::ToolExecutionStart {
            tool_call_id: "b".into(),
            tool_name: "bash".into(),
            args: json!({"command": "ls"}),
        }),
        &extras,
    );
    let partial = t.translate(
        &ev(AgentEvent::ToolExecutionUpdate {
            tool_call_id: "b".into(),
            tool_name: "bash".into(),
            args: json!({"command": "ls"}),
            partial_result: ToolOutput::text("a\n"),
        }),
        &extras,
    );
    assert!(partial.is_empty());
    let end = json_of(&t.translate(
        &ev(AgentEvent::ToolExecutionEnd {
            tool_call_id: "b".into(),
            tool_name: "bash".into(),
            result: ToolOutput::text("a\nb\n"),
            is_error: false,
            duration_ms: None,
        }),
        &extras,
    ));
    assert_eq!(
        end[0]["content"],
        json!([{"type": "terminal", "terminalId": "term-1"}])
    );
    assert_eq!(end[0]["rawOutput"]["output"], "a\nb\n");

    // Locally, the output streams as the call's content.
    let (mut t, _) = translator();
    let partial = json_of(&t.translate(
        &ev(AgentEvent::ToolExecutionUpdate {
            tool_call_id: "b".into(),
            tool_name: "bash".into(),
            args: json!({"command": "ls"}),
            partial_result: ToolOutput::text("a\n"),
        }),
        &NoExtras,
    ));
    assert_eq!(
        partial[0]["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "a\n"}}])
    );
}

#[test]
fn calls_a_failed_turn_never_ran_end_failed_with_the_error() {
    let (mut t, _) = translator();
    t.translate(
        &streamed(AssistantMessageEvent::ToolcallStart {
            content_index: 0,
            id: "w".into(),
            name: "write".into(),
        }),
        &NoExtras,
    );
    let mut message = assistant(
        vec![AssistantBlock::ToolCall(call("w", "write", json!({})))],
        StopReason::Aborted,
    );
    message.error_message = Some("Request was aborted".into());
    let end = json_of(&t.translate(
        &ev(AgentEvent::TurnEnd {
            message,
            tool_results: vec![],
        }),
        &NoExtras,
    ));
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["toolCallId"], "w");
    assert_eq!(end[0]["status"], "failed");
    assert_eq!(
        end[0]["content"][0]["content"]["text"],
        "Request was aborted"
    );
}

#[test]
fn a_task_list_in_an_answer_becomes_a_plan_once() {
    let text =
        "Plan:\n- [x] read the code\n- [ ] fix the bug\n  * [ ] run the tests\n- not a task\n";
    assert_eq!(
        task_list(text),
        vec![
            ("read the code".to_string(), true),
            ("fix the bug".to_string(), false),
            ("run the tests".to_string(), false)
        ]
    );
    let (mut t, _) = translator();
    let message = assistant(
        vec![AssistantBlock::Text(AiText {
            text: text.into(),
            text_signature: None,
        })],
        StopReason::Stop,
    );
    let end = AgentEvent::MessageEnd {
        message: AgentMessage::Llm(Message::Assistant(message)),
    };
    let plan = json_of(&t.translate(&ev(end.clone()), &NoExtras));
    assert_eq!(
        plan,
        vec![json!({"sessionUpdate": "plan", "entries": [
            {"content": "read the code", "priority": "medium", "status": "completed"},
            {"content": "fix the bug", "priority": "medium", "status": "in_progress"},
            {"content": "run the tests", "priority": "medium", "status": "pending"}
        ]})]
    );
    assert!(
        t.translate(&ev(end), &NoExtras).is_empty(),
        "an unchanged plan is not resent"
    );
}

#[test]
fn a_history_replays_as_user_agent_and_finished_tool_updates() {
    let messages = vec![
        AgentMessage::Llm(Message::User(UserMessage::text("fix it"))),
        AgentMessage::Llm(Message::Assistant(assistant(
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "look first".into(),
                    thinking_signature: None,
                    redacted: None,
                }),
                AssistantBlock::Text(AiText {
                    text: "Reading.".into(),
                    text_signature: None,
                }),
                AssistantBlock::ToolCall(call("r1", "read", json!({"path": "a.txt"}))),
            ],
            StopReason::ToolUse,
        ))),
        AgentMessage::Llm(Message::ToolResult(ToolResultMessage {
            tool_call_id: "r1".into(),
            tool_name: "read".into(),
            content: vec![UserBlock::Text(AiText {
                text: "hello".into(),
                text_signature: None,
            })],
            details: None,
            is_error: false,
            duration_ms: None,
            timestamp: 0,
            usage: None,
            added_tool_names: None,
        })),
    ];
    let updates = json_of(&replay(&messages, Path::new("/p")));
    let kinds: Vec<&str> = updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call"
        ]
    );
    assert_eq!(updates[0]["content"]["text"], "fix it");
    // The user's message, the answer's thinking and its reply: three messages, three ids.
    let mut ids: Vec<&str> = updates[..3]
        .iter()
        .map(|u| u["messageId"].as_str().expect("a messageId"))
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3);
    assert_eq!(updates[3]["name"], "read");
    assert_eq!(updates[3]["status"], "completed");
    assert_eq!(updates[3]["title"], "Read a.txt");
    assert_eq!(updates[3]["content"][0]["content"]["text"], "hello");
}

#[test]
fn an_id_reused_in_a_later_turn_is_announced_again() {
    let (mut t, _) = translator();
    let start = || {
        streamed(AssistantMessageEvent::ToolcallStart {
            content_index: 0,
            id: "call_0".into(),
            name: "read".into(),
        })
    };
    assert_eq!(
        json_of(&t.translate(&start(), &NoExtras))[0]["sessionUpdate"],
        "tool_call"
    );
    assert!(
        t.translate(&start(), &NoExtras).is_empty(),
        "same turn: already announced"
    );
    t.translate(&ev(AgentEvent::TurnStart), &NoExtras);
    assert_eq!(
        json_of(&t.translate(&start(), &NoExtras))[0]["sessionUpdate"],
        "tool_call"
    );
}

#[test]
fn the_undo_slash_command_is_recognised_with_or_without_a_turn() {
    use crate::acp::turns::undo_command;
    assert_eq!(undo_command("/undo"), Some(None));
    assert_eq!(undo_command("  /undo  a1b2c3d4 "), Some(Some("a1b2c3d4")));
    assert_eq!(undo_command("/undone"), None);
    assert_eq!(undo_command("please /undo"), None);
}

fn answer_with(usage: (u64, u64, f64), stop: StopReason) -> AgentSessionEvent {
    let mut message = assistant(Vec::new(), stop);
    message.usage.input = usage.0;
    message.usage.output = usage.1;
    message.usage.total_tokens = usage.0 + usage.1;
    message.usage.cost.total = usage.2;
    ev(AgentEvent::MessageEnd {
        message: AgentMessage::Llm(Message::Assistant(message)),
    })
}

fn metered(cost: f64, used: u64) -> Translator {
    let records = Arc::new(CallRecords::new());
    Translator::new(Path::new("/p"), records).with_meter(Meter {
        cost,
        used,
        size: 1000,
        window_of: Box::new(|m| if m.model == "t" { 2000 } else { 0 }),
    })
}

#[test]
fn every_answer_reports_the_context_and_the_running_cost() {
    // A loaded session: 0.5 spent already, 300 tokens in context.
    let mut t = metered(0.5, 300);
    let first = json_of(&t.translate(
        &answer_with((100, 20, 0.25), StopReason::ToolUse),
        &NoExtras,
    ));
    assert_eq!(
        first,
        vec![
            json!({"sessionUpdate": "usage_update", "used": 120, "size": 2000,
                    "cost": {"amount": 0.75, "currency": "USD"}})
        ]
    );
    // A failed call adds its cost but reports no context: the last count stays.
    let failed = json_of(&t.translate(&answer_with((0, 0, 0.125), StopReason::Error), &NoExtras));
    assert_eq!(failed[0]["used"], 120);
    assert_eq!(failed[0]["cost"]["amount"], 0.875);
    let second = json_of(&t.translate(&answer_with((150, 30, 0.125), StopReason::Stop), &NoExtras));
    assert_eq!(second[0]["used"], 180);
    assert_eq!(second[0]["cost"]["amount"], 1.0);
}

#[test]
fn a_compaction_reports_its_estimate_and_adds_its_cost() {
    use tandem_coding::agent_session::{CompactionReason, CompactionSummaryInfo};
    let mut t = metered(0.0, 5000);
    let mut usage = tandem_ai::Usage::default();
    usage.cost.total = 0.25;
    let end = AgentSessionEvent::Session(SessionEvent::CompactionEnd {
        reason: CompactionReason::Manual,
        result: Some(Box::new(CompactionSummaryInfo {
            summary: "s".into(),
            first_kept_entry_id: "e".into(),
            tokens_before: 5000,
            estimated_tokens_after: 700,
            usage,
            details: json!({}),
        })),
        aborted: false,
        will_retry: false,
        error_message: None,
    });
    assert_eq!(
        json_of(&t.translate(&end, &NoExtras)),
        vec![
            json!({"sessionUpdate": "usage_update", "used": 700, "size": 1000,
                    "cost": {"amount": 0.25, "currency": "USD"}})
        ]
    );
    // Without a meter, nothing.
    let (mut plain, _) = translator();
    assert!(plain.translate(&end, &NoExtras).is_empty());
}

#[test]
fn a_command_that_may_ask_goes_in_progress_with_its_first_output() {
    let (mut t, _) = translator();
    let args = json!({"command": "make"});
    let start = t.translate(
        &ev(AgentEvent::ToolExecutionStart {
            tool_call_id: "b1".into(),
            tool_name: "bash".into(),
            args: args.clone(),
        }),
        &NoExtras,
    );
    // Announced here: a `tool_call`, `pending` (left out on the wire).
    let start = json_of(&start);
    assert_eq!(start[0]["sessionUpdate"], "tool_call");
    assert!(start[0].get("status").is_none(), "{start:?}");
    let output = |t: &mut Translator, text: &str| {
        json_of(&t.translate(
            &ev(AgentEvent::ToolExecutionUpdate {
                tool_call_id: "b1".into(),
                tool_name: "bash".into(),
                args: args.clone(),
                partial_result: ToolOutput::text(text),
            }),
            &NoExtras,
        ))
    };
    assert_eq!(output(&mut t, "compiling")[0]["status"], "in_progress");
    assert!(output(&mut t, "linking")[0].get("status").is_none());
}
