//! pi's JSON-mode trace replayed through Tandem's events: every line pi printed is turned into
//! the [`AgentEvent`] Tandem would emit (for `message_update`, only the delta pi's event carries),
//! fed to [`JsonLines`], and compared with pi's line.
//!
//! Lines other than `message_update` must be byte-identical. `message_update` lines are compared
//! by shape (keys and their order, at every level), because pi serializes its partial message
//! after later chunks have already changed it, so its values run ahead of the event they belong
//! to; Tandem's partial is the exact state at each event.

use serde_json::Value;
use tandem_agent::{AgentEvent, AgentMessage, ToolOutput};
use tandem_ai::{AssistantMessage, AssistantMessageEvent, ToolResultMessage};
use tandem_coding::session::SessionHeader;

use super::*;

const TRACE: &str = include_str!("../../../../fixtures/reference/pi-0.73.1-json-mode-trace.jsonl");

fn trace() -> Vec<(String, Value)> {
    TRACE
        .lines()
        .map(|line| {
            let value = serde_json::from_str(line).expect("the trace is JSON lines");
            (line.to_string(), value)
        })
        .collect()
}

fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

fn text(v: &Value) -> String {
    v.as_str().expect("a string").to_string()
}

/// The stream event Tandem's provider would have sent for pi's `assistantMessageEvent`.
fn stream_event(e: &Value) -> AssistantMessageEvent {
    let content_index = e["contentIndex"].as_u64().expect("contentIndex") as usize;
    match e["type"].as_str().expect("type") {
        "text_start" => AssistantMessageEvent::TextStart { content_index },
        "text_delta" => AssistantMessageEvent::TextDelta {
            content_index,
            delta: text(&e["delta"]),
        },
        "text_end" => AssistantMessageEvent::TextEnd {
            content_index,
            content: text(&e["content"]),
            signature: None,
        },
        "toolcall_start" => {
            let block = &e["partial"]["content"][content_index];
            AssistantMessageEvent::ToolcallStart {
                content_index,
                id: text(&block["id"]),
                name: text(&block["name"]),
            }
        }
        "toolcall_delta" => AssistantMessageEvent::ToolcallDelta {
            content_index,
            delta: text(&e["delta"]),
        },
        "toolcall_end" => AssistantMessageEvent::ToolcallEnd {
            content_index,
            tool_call: parse(&e["toolCall"]),
        },
        other => panic!("the trace has no {other} updates"),
    }
}

/// The agent event Tandem would have emitted for pi's line.
fn agent_event(line: &Value) -> AgentEvent {
    match line["type"].as_str().expect("type") {
        "agent_start" => AgentEvent::AgentStart,
        "turn_start" => AgentEvent::TurnStart,
        "message_start" => AgentEvent::MessageStart {
            message: parse::<AgentMessage>(&line["message"]),
        },
        "message_end" => AgentEvent::MessageEnd {
            message: parse::<AgentMessage>(&line["message"]),
        },
        "message_update" => AgentEvent::MessageUpdate {
            assistant_message_event: stream_event(&line["assistantMessageEvent"]),
        },
        "tool_execution_start" => AgentEvent::ToolExecutionStart {
            tool_call_id: text(&line["toolCallId"]),
            tool_name: text(&line["toolName"]),
            args: line["args"].clone(),
        },
        "tool_execution_end" => AgentEvent::ToolExecutionEnd {
            tool_call_id: text(&line["toolCallId"]),
            tool_name: text(&line["toolName"]),
            result: parse::<ToolOutput>(&line["result"]),
            is_error: line["isError"].as_bool().expect("isError"),
        },
        "turn_end" => AgentEvent::TurnEnd {
            message: parse::<AssistantMessage>(&line["message"]),
            tool_results: parse::<Vec<ToolResultMessage>>(&line["toolResults"]),
        },
        "agent_end" => AgentEvent::AgentEnd {
            messages: parse::<Vec<AgentMessage>>(&line["messages"]),
        },
        other => panic!("unexpected event {other}"),
    }
}

/// Replays the trace; returns (pi's line, pi's value, our value) for every event line.
fn replay() -> Vec<(String, Value, Value)> {
    let mut lines = JsonLines::new();
    trace()
        .into_iter()
        .skip(1)
        .map(|(raw, pi)| {
            let ours = lines.agent_event(&agent_event(&pi)).expect("serializes");
            (raw, pi, ours)
        })
        .collect()
}

#[test]
fn the_header_line_is_pis() {
    let (raw, value) = trace().remove(0);
    let header: SessionHeader = parse(&value);
    let ours = JsonLines::header(&header).expect("serializes");
    assert_eq!(JsonLines::line(&ours).expect("line"), raw);
}

#[test]
fn every_line_but_message_update_is_byte_identical() {
    let mut kinds = std::collections::BTreeSet::new();
    for (raw, pi, ours) in replay() {
        if pi["type"] == "message_update" {
            continue;
        }
        kinds.insert(pi["type"].as_str().unwrap_or_default().to_string());
        assert_eq!(JsonLines::line(&ours).expect("line"), raw);
    }
    let expected = [
        "agent_end",
        "agent_start",
        "message_end",
        "message_start",
        "tool_execution_end",
        "tool_execution_start",
        "turn_end",
        "turn_start",
    ];
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), expected);
}

/// Keys and their order at every level; leaves become null. Tool arguments are leaves (they
/// stream), and `responseId` plus the tool-call scratch fields are dropped (see the module docs;
/// the scratch fields are checked by their own test).
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "responseId" | "partialArgs" | "streamIndex")
                })
                .map(|(k, v)| {
                    let inner = if k == "arguments" {
                        Value::Null
                    } else {
                        shape(v)
                    };
                    (k.clone(), inner)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        _ => Value::Null,
    }
}

/// pi's partial runs ahead: trim its content to ours, after checking ours is not longer.
fn align(pi: &mut Value, ours: &Value) {
    for path in [
        &["assistantMessageEvent", "partial", "content"][..],
        &["message", "content"],
    ] {
        let get = |v: &Value| path.iter().fold(v.clone(), |v, k| v[*k].clone());
        let our_len = get(ours).as_array().map_or(0, Vec::len);
        let mut target = &mut *pi;
        for key in path {
            target = &mut target[*key];
        }
        let pi_blocks = target.as_array_mut().expect("content is an array");
        assert!(our_len <= pi_blocks.len(), "{ours}");
        pi_blocks.truncate(our_len);
    }
}

#[test]
fn message_update_lines_have_pis_shape_for_every_update_type() {
    let mut kinds = std::collections::BTreeSet::new();
    for (_, mut pi, ours) in replay() {
        if pi["type"] != "message_update" {
            continue;
        }
        kinds.insert(text(&pi["assistantMessageEvent"]["type"]));
        align(&mut pi, &ours);
        assert_eq!(shape(&ours), shape(&pi), "\nours: {ours}\npi:   {pi}");
        // Both copies of the partial are the same message.
        assert_eq!(ours["message"], ours["assistantMessageEvent"]["partial"]);
    }
    let expected = [
        "text_delta",
        "text_end",
        "text_start",
        "toolcall_delta",
        "toolcall_end",
        "toolcall_start",
    ];
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), expected);
}

#[test]
fn open_tool_calls_carry_the_openai_scratch_fields() {
    let mut streamed = String::new();
    let mut checked = 0;
    for (_, pi, ours) in replay() {
        let event = &pi["assistantMessageEvent"];
        let kind = event["type"].as_str().unwrap_or_default();
        if kind == "toolcall_start" {
            streamed.clear();
        }
        if kind != "toolcall_start" && kind != "toolcall_delta" {
            continue;
        }
        streamed.push_str(event["delta"].as_str().unwrap_or_default());
        let index = event["contentIndex"].as_u64().expect("index") as usize;
        let keys = |v: &Value| -> Vec<String> {
            v["assistantMessageEvent"]["partial"]["content"][index]
                .as_object()
                .expect("a block")
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(keys(&ours), keys(&pi));
        let block = &ours["message"]["content"][index];
        assert_eq!(block["partialArgs"], Value::String(streamed.clone()));
        assert_eq!(block["streamIndex"], 0);
        checked += 1;
    }
    assert_eq!(checked, 14);
    // Once the call ends, the scratch fields are gone.
    let (_, _, end) = replay()
        .into_iter()
        .rfind(|(_, pi, _)| pi["assistantMessageEvent"]["type"] == "toolcall_end")
        .expect("a toolcall_end");
    assert!(end["message"]["content"][0].get("partialArgs").is_none());
}

#[test]
fn start_events_drop_id_and_name_and_end_events_their_signature() {
    let mut lines = JsonLines::new();
    let mut start = AssistantMessage::empty(tandem_ai::Api::AnthropicMessages, "anthropic", "m");
    start.timestamp = 1;
    lines
        .agent_event(&AgentEvent::MessageStart {
            message: start.into(),
        })
        .expect("ok");
    let update = |lines: &mut JsonLines, e| {
        lines
            .agent_event(&AgentEvent::MessageUpdate {
                assistant_message_event: e,
            })
            .expect("ok")
    };
    let v = update(
        &mut lines,
        AssistantMessageEvent::ThinkingStart { content_index: 0 },
    );
    assert_eq!(
        v["assistantMessageEvent"]["partial"]["content"][0]["type"],
        "thinking"
    );
    let v = update(
        &mut lines,
        AssistantMessageEvent::ThinkingEnd {
            content_index: 0,
            content: "hm".into(),
            signature: Some("sig".into()),
            redacted: false,
        },
    );
    let keys: Vec<&String> = v["assistantMessageEvent"]
        .as_object()
        .expect("obj")
        .keys()
        .collect();
    assert_eq!(keys, ["type", "contentIndex", "content", "partial"]);
    assert_eq!(v["message"]["content"][0]["thinkingSignature"], "sig");
    let v = update(
        &mut lines,
        AssistantMessageEvent::ToolcallStart {
            content_index: 1,
            id: "toolu_1".into(),
            name: "read".into(),
        },
    );
    let keys: Vec<&String> = v["assistantMessageEvent"]
        .as_object()
        .expect("obj")
        .keys()
        .collect();
    assert_eq!(keys, ["type", "contentIndex", "partial"]);
    // Anthropic's scratch buffer is `partialJson`.
    assert_eq!(v["message"]["content"][1]["partialJson"], "");
    assert_eq!(v["message"]["role"], "assistant");
}

#[test]
fn updates_without_a_started_message_and_session_events_pass_through() {
    let mut lines = JsonLines::new();
    let v = lines
        .agent_event(&AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextStart { content_index: 0 },
        })
        .expect("ok");
    assert_eq!(
        JsonLines::line(&v).expect("line"),
        concat!(
            r#"{"type":"message_update","#,
            r#""assistantMessageEvent":{"type":"text_start","contentIndex":0}}"#
        )
    );
    let retry = serde_json::json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3,
        "delayMs": 2000, "errorMessage": "overloaded"});
    assert_eq!(lines.session_event(&retry), retry);
    let mut out = Vec::new();
    JsonLines::write_line(&mut out, &serde_json::json!({"cost": 0.0, "n": 1.5})).expect("write");
    assert_eq!(
        String::from_utf8(out).expect("utf8"),
        "{\"cost\":0,\"n\":1.5}\n"
    );
}
