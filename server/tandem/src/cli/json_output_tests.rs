//! pi 1.6's JSON lines for hand-made events. The whole stream is compared with what the real
//! pi 1.6 prints in `tests/pi_interop.rs`; these pin the rules one by one.

use serde_json::{json, Value};
use tandem_agent::{AgentEvent, AgentMessage};
use tandem_ai::{Api, AssistantMessage, AssistantMessageEvent, Usage};

use super::*;

fn started(lines: &mut JsonLines, usage: Usage) -> Value {
    let mut message = AssistantMessage::empty(Api::OpenAiCompletions, "mock", "m");
    message.timestamp = 1;
    message.usage = usage;
    let mut out = lines
        .agent_event(&AgentEvent::MessageStart {
            message: message.into(),
        })
        .expect("serializes");
    assert_eq!(out.len(), 1);
    out.remove(0)
}

fn update(lines: &mut JsonLines, event: AssistantMessageEvent) -> String {
    let out = lines
        .agent_event(&AgentEvent::MessageUpdate {
            assistant_message_event: event,
        })
        .expect("serializes");
    assert_eq!(out.len(), 1);
    JsonLines::line(&out[0]).expect("line")
}

const ZERO_USAGE: &str = r#""usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;

#[test]
fn the_streamed_message_starts_pending() {
    let mut lines = JsonLines::new();
    let start = started(&mut lines, Usage::default());
    assert_eq!(start["message"]["stopReason"], "pending");
    assert_eq!(start["message"]["role"], "assistant");
}

#[test]
fn a_message_that_failed_before_streaming_keeps_its_stop_reason() {
    let mut lines = JsonLines::new();
    let mut message = AssistantMessage::empty(Api::OpenAiCompletions, "mock", "m");
    message.stop_reason = tandem_ai::StopReason::Error;
    message.error_message = Some("No API key".into());
    let out = lines
        .agent_event(&AgentEvent::MessageStart {
            message: message.into(),
        })
        .expect("serializes");
    assert_eq!(out[0]["message"]["stopReason"], "error");
}

#[test]
fn updates_carry_the_usage_and_only_the_delta() {
    let mut lines = JsonLines::new();
    started(&mut lines, Usage::default());
    assert_eq!(
        update(
            &mut lines,
            AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: "Hello ".into()
            }
        ),
        format!(
            r#"{{"type":"message_update",{ZERO_USAGE},"assistantMessageEvent":{{"type":"text_delta","contentIndex":0,"delta":"Hello "}}}}"#
        )
    );
}

#[test]
fn toolcall_start_names_the_call_and_end_events_drop_signatures() {
    let mut lines = JsonLines::new();
    started(&mut lines, Usage::default());
    let start = update(
        &mut lines,
        AssistantMessageEvent::ToolcallStart {
            content_index: 1,
            id: "call_1".into(),
            name: "read".into(),
        },
    );
    assert!(
        start.ends_with(r#""assistantMessageEvent":{"type":"toolcall_start","contentIndex":1,"id":"call_1","toolName":"read"}}"#),
        "{start}"
    );
    let end = update(
        &mut lines,
        AssistantMessageEvent::ThinkingEnd {
            content_index: 0,
            content: "hm".into(),
            signature: Some("sig".into()),
            redacted: false,
        },
    );
    assert!(
        end.ends_with(
            r#""assistantMessageEvent":{"type":"thinking_end","contentIndex":0,"content":"hm"}}"#
        ),
        "{end}"
    );
}

#[test]
fn agent_end_waits_for_the_next_event_to_say_whether_a_retry_follows() {
    let mut lines = JsonLines::new();
    let end = AgentEvent::AgentEnd {
        messages: Vec::<AgentMessage>::new(),
    };
    assert!(lines.agent_event(&end).expect("ok").is_empty());
    let retry = json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3,
        "delayMs": 2000, "errorMessage": "overloaded"});
    let out = lines.session_event(retry.clone());
    assert_eq!(
        out,
        [
            json!({"type": "agent_end", "messages": [], "willRetry": true}),
            retry
        ]
    );
    assert!(lines.agent_event(&end).expect("ok").is_empty());
    let settled = json!({"type": "agent_settled", "aborted": false});
    let out = lines.session_event(settled.clone());
    assert_eq!(
        out,
        [
            json!({"type": "agent_end", "messages": [], "willRetry": false}),
            settled
        ]
    );
}

#[test]
fn numbers_are_written_as_javascript_writes_them() {
    let mut out = Vec::new();
    JsonLines::write_line(&mut out, &json!({"cost": 0.0, "n": 1.5})).expect("write");
    assert_eq!(
        String::from_utf8(out).expect("utf8"),
        "{\"cost\":0,\"n\":1.5}\n"
    );
}

#[test]
fn delta_lines_written_directly_equal_the_value_lines() {
    let usage = Usage {
        input: 1234,
        output: 7,
        total_tokens: 1241,
        ..Usage::default()
    };
    let mut usage = usage;
    usage.cost.input = 0.000_125;
    usage.cost.total = 1.5e-7;
    let tricky = [
        "",
        "plain",
        "quote \" backslash \\ slash /",
        "newline\ncr\rtab\tnul\u{0}bell\u{7}del\u{7f}",
        "line sep \u{2028} para sep \u{2029}",
        "émoji 🦀 and 漢字",
        r#"{"path":"a.rs","oldText":"x"#,
    ];
    for (index, text) in tricky.iter().enumerate() {
        for event in [
            AssistantMessageEvent::TextDelta {
                content_index: index,
                delta: text.to_string(),
            },
            AssistantMessageEvent::ThinkingDelta {
                content_index: index,
                delta: text.to_string(),
            },
            AssistantMessageEvent::ToolcallDelta {
                content_index: index,
                delta: text.to_string(),
            },
        ] {
            let mut by_value = JsonLines::new();
            started(&mut by_value, usage);
            let expected = update(&mut by_value, event.clone());
            let mut direct = JsonLines::new();
            started(&mut direct, usage);
            let event = AgentEvent::MessageUpdate {
                assistant_message_event: event,
            };
            assert!(
                direct.delta_line(&event).is_some(),
                "{event:?} has a direct line"
            );
            assert_eq!(direct.agent_event_lines(&event), vec![expected]);
        }
    }
}

#[test]
fn a_delta_after_a_held_agent_end_releases_it_first() {
    let mut lines = JsonLines::new();
    started(&mut lines, Usage::default());
    let end = AgentEvent::AgentEnd {
        messages: Vec::new(),
    };
    assert!(lines.agent_event_lines(&end).is_empty());
    let delta = AgentEvent::MessageUpdate {
        assistant_message_event: AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: "x".into(),
        },
    };
    let out = lines.agent_event_lines(&delta);
    assert_eq!(out.len(), 2);
    assert!(out[0].starts_with(r#"{"type":"agent_end""#), "{}", out[0]);
    assert!(out[0].ends_with(r#""willRetry":false}"#), "{}", out[0]);
    assert!(out[1].contains(r#""delta":"x""#), "{}", out[1]);
}
