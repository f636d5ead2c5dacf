//! JSON mode (`--mode json`): pi 1.6's event stream, line for line.
//!
//! pi prints the session header, then every event as `JSON.stringify(event)` on its own line,
//! numbers in JavaScript's format (a zero cost is `0`). Tandem's events mostly serialize with
//! pi's names and field order already; this writer fixes the rest:
//!
//! - `message_update` is delta-only, as pi prints it since 0.84: `{type, usage,
//!   assistantMessageEvent}`, where `usage` is the streaming message's latest usage and the nested
//!   event has no `partial`. `toolcall_start` names the call (`id`, `toolName`); `text_end` and
//!   `thinking_end` carry the block's content, not its signature. The output is linear in the
//!   answer's length (pi 0.73's shape, the whole partial message twice per delta, was quadratic:
//!   2 GB for a 100 KB answer in 20,000 chunks; it is not kept, see the README's JSON section).
//! - The streaming assistant message starts with `stopReason: "pending"`.
//! - `agent_end` says `willRetry`: whether the session retries the failed answer, which Tandem's
//!   session layer decides after the run, so the line waits for the next event (an
//!   `auto_retry_start` means yes).
//!
//! `usage` on updates is what Tandem knows while streaming: the usage the message started with
//! (providers report usage at the end of the stream). pi serializes its live message object after
//! later chunks have already changed it, so for an answer that arrives in one read its updates
//! already show the final usage.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{json, Map, Value};
use tandem_agent::AgentEvent;
use tandem_ai::{AssistantMessageEvent, Usage};
use tandem_coding::session::json::to_js_line;

/// Turns events into pi's JSON lines, remembering the usage of the assistant message being
/// streamed and holding back `agent_end` until the next event says whether a retry follows.
#[derive(Debug, Default)]
pub struct JsonLines {
    usage: Usage,
    /// `usage` as written in a line, made once per streamed message (deltas repeat it).
    usage_line: Option<String>,
    held_agent_end: Option<Value>,
}

impl JsonLines {
    /// A writer with no message in progress.
    pub fn new() -> Self {
        JsonLines::default()
    }

    /// The first line: the session header (`{"type":"session","version":3,...}`), as stored.
    pub fn header<H: Serialize>(header: &H) -> Result<Value, serde_json::Error> {
        serde_json::to_value(header)
    }

    /// The lines for one agent event in pi's shape: none while `agent_end` is held, two when
    /// this event releases it.
    pub fn agent_event(&mut self, event: &AgentEvent) -> Result<Vec<Value>, serde_json::Error> {
        let value = match event {
            AgentEvent::MessageStart { message } => {
                let mut value = serde_json::to_value(event)?;
                if let Some(assistant) = message.as_assistant() {
                    self.usage = assistant.usage;
                    self.usage_line = None;
                    // The streamed message's first state; a message that failed before its stream
                    // started already has its final stop reason and error text.
                    if assistant.content.is_empty() && assistant.error_message.is_none() {
                        value["message"]["stopReason"] = "pending".into();
                    }
                }
                value
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
            } => self.update(assistant_message_event)?,
            AgentEvent::AgentEnd { .. } => {
                let held = self.held_agent_end.replace(serde_json::to_value(event)?);
                return Ok(released(held, false).into_iter().collect());
            }
            _ => serde_json::to_value(event)?,
        };
        Ok(self.release_before(value))
    }

    /// The lines for one agent event, serialized (without their newlines): [`Self::agent_event`]'s
    /// lines, except that a streamed delta's line is written straight from the event, without
    /// building a JSON value (a long answer is thousands of them; the text is the same).
    pub fn agent_event_lines(&mut self, event: &AgentEvent) -> Vec<String> {
        if let Some(line) = self.delta_line(event) {
            return vec![line];
        }
        self.agent_event(event)
            .unwrap_or_default()
            .iter()
            .filter_map(|value| JsonLines::line(value).ok())
            .collect()
    }

    /// The `message_update` line of a text, thinking or tool-argument delta, when nothing is
    /// held back (`None` for every other event).
    fn delta_line(&mut self, event: &AgentEvent) -> Option<String> {
        use AssistantMessageEvent as E;
        let AgentEvent::MessageUpdate {
            assistant_message_event: update,
        } = event
        else {
            return None;
        };
        let (kind, index, delta) = match update {
            E::TextDelta {
                content_index,
                delta,
            } => ("text_delta", content_index, delta),
            E::ThinkingDelta {
                content_index,
                delta,
            } => ("thinking_delta", content_index, delta),
            E::ToolcallDelta {
                content_index,
                delta,
            } => ("toolcall_delta", content_index, delta),
            _ => return None,
        };
        if self.held_agent_end.is_some() {
            return None;
        }
        if self.usage_line.is_none() {
            self.usage_line = Some(to_js_line(&self.usage).ok()?);
        }
        let usage = self.usage_line.as_deref()?;
        let delta = serde_json::to_string(delta).ok()?;
        let mut line = String::with_capacity(usage.len() + delta.len() + 96);
        line.push_str(r#"{"type":"message_update","usage":"#);
        line.push_str(usage);
        line.push_str(r#","assistantMessageEvent":{"type":""#);
        line.push_str(kind);
        line.push_str(r#"","contentIndex":"#);
        line.push_str(&index.to_string());
        line.push_str(r#","delta":"#);
        line.push_str(&delta);
        line.push_str("}}");
        Some(line)
    }

    /// The lines for an event of the session layer (retry, compaction, queue updates, …).
    pub fn session_event(&mut self, event: Value) -> Vec<Value> {
        self.release_before(event)
    }

    /// `value`, after the held `agent_end` if there is one.
    fn release_before(&mut self, value: Value) -> Vec<Value> {
        let retrying = value["type"] == "auto_retry_start";
        let mut out: Vec<Value> = released(self.held_agent_end.take(), retrying)
            .into_iter()
            .collect();
        out.push(value);
        out
    }

    fn update(&self, event: &AssistantMessageEvent) -> Result<Value, serde_json::Error> {
        let mut fields = match serde_json::to_value(event)? {
            Value::Object(fields) => fields,
            other => other.as_object().cloned().unwrap_or_default(),
        };
        match event {
            // pi names the call on its start event: `id` and `toolName`.
            AssistantMessageEvent::ToolcallStart { name, .. } => {
                fields.shift_remove("name");
                fields.insert("toolName".into(), name.clone().into());
            }
            // pi's end events carry the block's content, not its signature.
            AssistantMessageEvent::TextEnd { .. } | AssistantMessageEvent::ThinkingEnd { .. } => {
                fields.shift_remove("signature");
                fields.shift_remove("redacted");
            }
            AssistantMessageEvent::Start { .. } => {
                fields.shift_remove("partial");
            }
            _ => {}
        }
        let mut line = Map::new();
        line.insert("type".into(), "message_update".into());
        line.insert("usage".into(), serde_json::to_value(self.usage)?);
        line.insert("assistantMessageEvent".into(), Value::Object(fields));
        Ok(Value::Object(line))
    }

    /// One value as pi prints it (JavaScript's number format: a zero cost is `0`, not `0.0`),
    /// without the newline.
    pub fn line(value: &Value) -> Result<String, serde_json::Error> {
        to_js_line(value)
    }

    /// Writes one value and a newline.
    pub fn write_line(out: &mut dyn Write, value: &Value) -> io::Result<()> {
        let mut line = JsonLines::line(value)?;
        line.push('\n');
        out.write_all(line.as_bytes())
    }
}

/// A held `agent_end` with its `willRetry`.
fn released(held: Option<Value>, will_retry: bool) -> Option<Value> {
    let mut end = held?;
    if let Some(fields) = end.as_object_mut() {
        fields.insert("willRetry".into(), json!(will_retry));
    }
    Some(end)
}

#[cfg(test)]
#[path = "json_output_tests.rs"]
mod tests;
