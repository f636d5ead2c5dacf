use serde_json::{json, Value};

use super::*;

/// Asserts `event` serializes to exactly `wire`, and `wire` parses back to `event`.
fn check(event: Event, wire: Value) {
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        wire,
        "{}",
        event.kind()
    );
    assert_eq!(
        serde_json::from_value::<Event>(wire.clone()).unwrap(),
        event
    );
    assert_eq!(wire["type"], json!(event.kind()));
}

fn id(s: &str) -> ToolCallId {
    ToolCallId::from(s)
}

#[test]
fn lifecycle_events_carry_only_their_type() {
    check(Event::AgentStart, json!({"type": "agent_start"}));
    check(Event::AgentEnd, json!({"type": "agent_end"}));
    check(Event::TurnStart, json!({"type": "turn_start"}));
    check(Event::TurnEnd, json!({"type": "turn_end"}));
    check(Event::Settled, json!({"type": "settled"}));
}

#[test]
fn message_events() {
    check(
        Event::MessageStart {
            role: Role::User,
            index: 0,
            text: Some("fix the bug".into()),
            context: None,
        },
        json!({"type": "message_start", "role": "user", "index": 0, "text": "fix the bug"}),
    );
    check(
        Event::MessageStart {
            role: Role::User,
            index: 2,
            text: Some("why?".into()),
            context: Some("<editor-context>\nFile: a.rs\n</editor-context>\n".into()),
        },
        json!({"type": "message_start", "role": "user", "index": 2, "text": "why?",
            "context": "<editor-context>\nFile: a.rs\n</editor-context>\n"}),
    );
    check(
        Event::MessageStart {
            role: Role::Assistant,
            index: 1,
            text: None,
            context: None,
        },
        json!({"type": "message_start", "role": "assistant", "index": 1}),
    );
    check(
        Event::TextDelta {
            content_index: 0,
            delta: "Hel".into(),
        },
        json!({"type": "text_delta", "contentIndex": 0, "delta": "Hel"}),
    );
    check(
        Event::ThinkingDelta {
            content_index: 1,
            delta: "hmm".into(),
        },
        json!({"type": "thinking_delta", "contentIndex": 1, "delta": "hmm"}),
    );
    let message = json!({"role": "assistant", "content": [{"type": "text", "text": "Hello"}],
        "stopReason": "stop"});
    check(
        Event::MessageEnd {
            index: 1,
            message: message.clone(),
        },
        json!({"type": "message_end", "index": 1, "message": message}),
    );
}

#[test]
fn toolcall_events() {
    check(
        Event::ToolcallStart {
            tool_call_id: id("c1"),
            name: "read".into(),
        },
        json!({"type": "toolcall_start", "toolCallId": "c1", "name": "read"}),
    );
    check(
        Event::ToolcallDelta {
            tool_call_id: id("c1"),
            delta: "{\"path\":\"src/".into(),
        },
        json!({"type": "toolcall_delta", "toolCallId": "c1", "delta": "{\"path\":\"src/"}),
    );
    check(
        Event::ToolcallEnd {
            tool_call_id: id("c1"),
            arguments: json!({"path": "src/lib.rs"}),
        },
        json!({"type": "toolcall_end", "toolCallId": "c1", "arguments": {"path": "src/lib.rs"}}),
    );
}

#[test]
fn tool_events() {
    check(
        Event::ToolStart {
            tool_call_id: id("c2"),
            name: "edit".into(),
            title: "Edit src/lib.rs".into(),
            kind: ToolKind::Edit,
            locations: vec![ToolLocation {
                uri: "file:///p/src/lib.rs".into(),
                line: Some(11),
            }],
        },
        json!({"type": "tool_start", "toolCallId": "c2", "name": "edit",
            "title": "Edit src/lib.rs", "kind": "edit",
            "locations": [{"uri": "file:///p/src/lib.rs", "line": 11}]}),
    );
    check(
        Event::ToolUpdate {
            tool_call_id: id("c3"),
            text: "running 3 tests\n".into(),
        },
        json!({"type": "tool_update", "toolCallId": "c3", "text": "running 3 tests\n"}),
    );
    check(
        Event::ToolEnd {
            tool_call_id: id("c2"),
            is_error: false,
            text: "Successfully replaced text in src/lib.rs.".into(),
            truncated: false,
            diff: Some("--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n".into()),
            details: Some(json!({"firstChangedLine": 1})),
        },
        json!({"type": "tool_end", "toolCallId": "c2", "isError": false,
            "text": "Successfully replaced text in src/lib.rs.",
            "diff": "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n",
            "details": {"firstChangedLine": 1}}),
    );
    check(
        Event::ToolEnd {
            tool_call_id: id("c4"),
            is_error: true,
            text: "out".into(),
            truncated: true,
            diff: None,
            details: None,
        },
        json!({"type": "tool_end", "toolCallId": "c4", "isError": true, "text": "out",
            "truncated": true}),
    );
}

#[test]
fn tool_start_without_locations_parses() {
    let e: Event = serde_json::from_value(json!({"type": "tool_start", "toolCallId": "c",
        "name": "bash", "title": "Run `ls`", "kind": "execute"}))
    .unwrap();
    assert!(matches!(e, Event::ToolStart { locations, .. } if locations.is_empty()));
}

#[test]
fn session_layer_events() {
    check(
        Event::RetryStart {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 2000,
            error_message: "429 Too Many Requests".into(),
        },
        json!({"type": "retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000,
            "errorMessage": "429 Too Many Requests"}),
    );
    check(
        Event::RetryEnd {
            success: false,
            attempt: 3,
            final_error: Some("overloaded".into()),
        },
        json!({"type": "retry_end", "success": false, "attempt": 3, "finalError": "overloaded"}),
    );
    check(
        Event::RetryEnd {
            success: true,
            attempt: 2,
            final_error: None,
        },
        json!({"type": "retry_end", "success": true, "attempt": 2}),
    );
    check(
        Event::CompactionStart {
            reason: CompactionReason::Threshold,
        },
        json!({"type": "compaction_start", "reason": "threshold"}),
    );
    check(
        Event::CompactionEnd {
            aborted: false,
            will_retry: true,
            summary: Some("## Goal\n...".into()),
            tokens_before: Some(120_000),
            error_message: None,
        },
        json!({"type": "compaction_end", "aborted": false, "willRetry": true,
            "summary": "## Goal\n...", "tokensBefore": 120000}),
    );
    check(
        Event::QueueUpdate {
            steering: vec!["use tabs".into()],
            follow_up: vec![],
        },
        json!({"type": "queue_update", "steering": ["use tabs"], "followUp": []}),
    );
    check(
        Event::Error {
            message: "No API key for anthropic: set ANTHROPIC_API_KEY".into(),
        },
        json!({"type": "error", "message": "No API key for anthropic: set ANTHROPIC_API_KEY"}),
    );
}

#[test]
fn notification_wire_shape() {
    let n = EventNotification {
        session: SessionId::from("0197-abc"),
        seq: 7,
        event: Event::TextDelta {
            content_index: 0,
            delta: "hi".into(),
        },
    };
    let wire = json!({"session": "0197-abc", "seq": 7,
        "event": {"type": "text_delta", "contentIndex": 0, "delta": "hi"}});
    assert_eq!(serde_json::to_value(&n).unwrap(), wire);
    assert_eq!(
        serde_json::from_value::<EventNotification>(wire).unwrap(),
        n
    );
    assert_eq!(EventNotification::METHOD, "tandem/event");
}

#[test]
fn unknown_types_and_fields_are_tolerated() {
    let e: Event =
        serde_json::from_value(json!({"type": "plan_update", "entries": [1, 2]})).unwrap();
    assert_eq!(e, Event::Unknown);
    let e: Event = serde_json::from_value(json!({"type": "agent_start", "runId": 3})).unwrap();
    assert_eq!(e, Event::AgentStart);
    let e: Event = serde_json::from_value(
        json!({"type": "text_delta", "contentIndex": 0, "delta": "x", "future": true}),
    )
    .unwrap();
    assert_eq!(e.kind(), "text_delta");
}

#[test]
fn missing_fields_are_named() {
    let cases = [
        (json!({"type": "text_delta", "contentIndex": 0}), "delta"),
        (
            json!({"type": "tool_end", "toolCallId": "c", "text": ""}),
            "isError",
        ),
        (json!({"type": "message_start", "index": 0}), "role"),
        (json!({"type": "queue_update", "steering": []}), "followUp"),
    ];
    for (wire, field) in cases {
        let err = serde_json::from_value::<Event>(wire).unwrap_err();
        assert_eq!(err.to_string(), format!("missing field `{field}`"));
    }
    let err = serde_json::from_value::<EventNotification>(
        json!({"session": "s", "event": {"type": "settled"}}),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "missing field `seq`");
}

#[test]
fn deltas_coalesce_only_within_one_block_or_call() {
    let text = |i: u32, d: &str| Event::TextDelta {
        content_index: i,
        delta: d.into(),
    };
    let mut e = text(0, "Hel");
    assert_eq!(e.try_coalesce(text(0, "lo")), None);
    assert_eq!(e, text(0, "Hello"));
    assert_eq!(e.try_coalesce(text(2, "x")), Some(text(2, "x")));
    let thinking = Event::ThinkingDelta {
        content_index: 0,
        delta: "t".into(),
    };
    assert_eq!(e.try_coalesce(thinking.clone()), Some(thinking));

    let args = |c: &str, d: &str| Event::ToolcallDelta {
        tool_call_id: id(c),
        delta: d.into(),
    };
    let mut a = args("c1", "{\"pa");
    assert_eq!(a.try_coalesce(args("c1", "th\":")), None);
    assert_eq!(a, args("c1", "{\"path\":"));
    assert_eq!(a.try_coalesce(args("c2", "{")), Some(args("c2", "{")));
    assert_eq!(
        Event::Settled.try_coalesce(Event::Settled),
        Some(Event::Settled)
    );
    assert!(a.is_delta() && !Event::Settled.is_delta());
}
