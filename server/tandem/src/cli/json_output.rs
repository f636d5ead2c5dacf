//! JSON mode (`--mode json`): pi's exact output lines.
//!
//! pi prints the session header, then every event as `JSON.stringify(event)` on its own line,
//! numbers in JavaScript's format (a zero cost is `0`). Tandem's events mostly serialize with
//! pi's names and field order already; this writer fixes the rest:
//!
//! - `message_update`: Tandem's carries only what changed, pi's the whole partial message twice,
//!   as `assistantMessageEvent.partial` and as `message`. Scripts written for pi read those, so
//!   the partial is rebuilt with [`PartialMessage`]. That makes the output quadratic in the
//!   answer's length, as pi's is; the in-process event stream stays linear.
//! - `toolcall_start` has no `id`/`name` (they are in the partial), `text_end`/`thinking_end`
//!   carry no signature.
//!
//! Differences that remain: the partial holds what the events say, so provider metadata that pi
//! copies onto it as it arrives (`responseId`, running `usage`) appears only at `message_end`;
//! pi's per-provider scratch fields on open tool calls are reproduced for OpenAI-compatible
//! (`partialArgs`, `streamIndex`), OpenAI Responses and Anthropic (`partialJson`) models, but
//! Anthropic's block `index` is not.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{json, Map, Value};
use tandem_agent::AgentEvent;
use tandem_ai::{Api, AssistantBlock, AssistantMessage, AssistantMessageEvent, PartialMessage};
use tandem_coding::session::json::to_js_line;

/// Turns events into pi's JSON lines, remembering the assistant message being streamed.
#[derive(Debug, Default)]
pub struct JsonLines {
    streaming: Option<PartialMessage>,
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

    /// One agent event in pi's shape.
    pub fn agent_event(&mut self, event: &AgentEvent) -> Result<Value, serde_json::Error> {
        match event {
            AgentEvent::MessageStart { message } => {
                self.streaming = message.as_assistant().cloned().map(PartialMessage::new);
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
            } => return self.update(assistant_message_event),
            AgentEvent::MessageEnd { .. } | AgentEvent::AgentEnd { .. } => self.streaming = None,
            _ => {}
        }
        serde_json::to_value(event)
    }

    /// An event of the session layer (retry, compaction, queue updates, …), printed as given.
    pub fn session_event(&self, event: &Value) -> Value {
        event.clone()
    }

    fn update(&mut self, event: &AssistantMessageEvent) -> Result<Value, serde_json::Error> {
        let Some(partial) = self.streaming.as_mut() else {
            // No message_start seen (the writer joined mid-stream): the event alone.
            return Ok(json!({ "type": "message_update", "assistantMessageEvent": event }));
        };
        partial.apply(event);
        let partial_value = partial_json(partial)?;
        let mut fields = match serde_json::to_value(event)? {
            Value::Object(fields) => fields,
            other => return Ok(other),
        };
        match event {
            // pi's start events carry only the index: the id and name are in the partial.
            AssistantMessageEvent::ToolcallStart { .. } => {
                fields.shift_remove("id");
                fields.shift_remove("name");
            }
            // pi's end events carry the block's content, not its signature.
            AssistantMessageEvent::TextEnd { .. } | AssistantMessageEvent::ThinkingEnd { .. } => {
                fields.shift_remove("signature");
                fields.shift_remove("redacted");
            }
            _ => {}
        }
        let terminal = event.is_terminal() || matches!(event, AssistantMessageEvent::Start { .. });
        if !terminal {
            fields.insert("partial".into(), partial_value.clone());
        }
        let mut line = Map::new();
        line.insert("type".into(), "message_update".into());
        line.insert("assistantMessageEvent".into(), Value::Object(fields));
        line.insert("message".into(), partial_value);
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

/// A message serialized like [`tandem_ai::Message`] (role first) without copying it.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "camelCase")]
enum WithRole<'a> {
    Assistant(&'a AssistantMessage),
}

/// The partial message as pi prints it: with its role, and with the provider's scratch fields on
/// tool calls whose arguments are still streaming.
fn partial_json(partial: &PartialMessage) -> Result<Value, serde_json::Error> {
    let message = partial.message();
    let mut value = serde_json::to_value(WithRole::Assistant(message))?;
    let Some(blocks) = value.get_mut("content").and_then(Value::as_array_mut) else {
        return Ok(value);
    };
    let mut tool_calls_seen = 0;
    for (index, (block, json)) in message.content.iter().zip(blocks).enumerate() {
        if !matches!(block, AssistantBlock::ToolCall(_)) {
            continue;
        }
        let ordinal = tool_calls_seen;
        tool_calls_seen += 1;
        let (Some(raw), Some(fields)) = (partial.raw_tool_arguments(index), json.as_object_mut())
        else {
            continue;
        };
        add_scratch_fields(message, fields, raw, ordinal);
    }
    Ok(value)
}

fn add_scratch_fields(
    message: &AssistantMessage,
    block: &mut Map<String, Value>,
    raw: &str,
    ordinal: usize,
) {
    match &message.api {
        Api::OpenAiCompletions => {
            block.insert("partialArgs".into(), raw.into());
            block.insert("streamIndex".into(), ordinal.into());
        }
        Api::OpenAiResponses | Api::AnthropicMessages => {
            block.insert("partialJson".into(), raw.into());
        }
        Api::Other(name)
            if name == "azure-openai-responses" || name == "openai-codex-responses" =>
        {
            block.insert("partialJson".into(), raw.into());
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "json_output_tests.rs"]
mod tests;
