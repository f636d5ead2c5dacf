//! Anthropic's typed SSE events → [`StreamWriter`] calls.
//!
//! The stream is `message_start`, then for each content block `content_block_start`, its deltas
//! and `content_block_stop`, then `message_delta` (stop reason, final usage) and `message_stop`.
//! Blocks never interleave, so one open block is tracked by its Anthropic `index`; deltas for any
//! other index (server-tool blocks Tandem does not model) are skipped. `ping` and event types
//! added to the API later are ignored, as Anthropic's versioning policy asks clients to do.

use serde_json::Value;

use crate::cost::apply_cost;
use crate::error::ProviderError;
use crate::http::{parse_json, EventSource};
use crate::model::Model;
use crate::sse::SseEvent;
use crate::stream::StreamWriter;
use crate::types::{StopReason, Usage};

/// Decodes one streamed response into `writer`, returning the stop reason once `message_stop`
/// arrives.
pub async fn decode(
    mut source: impl EventSource,
    writer: &mut StreamWriter,
    model: &Model,
) -> Result<StopReason, ProviderError> {
    let mut state = Decoder {
        model,
        seen_start: false,
        open: None,
        outcome: Ok(StopReason::Stop),
    };
    loop {
        let Some(event) = source.next_event().await? else {
            return Err(state.ended_early());
        };
        let data = match parse_json(&model.provider, &event.data) {
            Ok(data) => data,
            Err(malformed) => return Err(cut_or_malformed(&mut source, model, malformed).await),
        };
        if let Some(reason) = state.apply(&event, &data, writer).await? {
            return Ok(reason);
        }
    }
}

/// Undecodable data as the very last thing in the stream is a cut-off event (the connection
/// closed mid-line), which is reported as incomplete rather than malformed.
async fn cut_or_malformed(
    source: &mut impl EventSource,
    model: &Model,
    malformed: ProviderError,
) -> ProviderError {
    match source.next_event().await {
        Ok(None) => incomplete(model, "the last event was cut off mid-way"),
        Ok(Some(_)) => malformed,
        Err(err) => err,
    }
}

fn incomplete(model: &Model, detail: &str) -> ProviderError {
    ProviderError::Incomplete {
        provider: model.provider.clone(),
        detail: format!("{detail} (no message_stop event); the request can be retried"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
}

/// The content block being streamed.
#[derive(Debug)]
struct OpenBlock {
    index: Option<u64>,
    kind: Kind,
    /// Arguments given whole in `content_block_start`, used only if no `input_json_delta`
    /// follows (some compatible servers send calls that way).
    initial_input: Option<String>,
}

struct Decoder<'m> {
    model: &'m Model,
    seen_start: bool,
    open: Option<OpenBlock>,
    /// What `message_stop` will return: the mapped stop reason, or the error a refusal becomes.
    outcome: Result<StopReason, ProviderError>,
}

impl Decoder<'_> {
    fn ended_early(&mut self) -> ProviderError {
        if let Err(refusal) = &self.outcome {
            return refusal.clone();
        }
        if self.seen_start {
            incomplete(
                self.model,
                "the stream closed before the message was complete",
            )
        } else {
            incomplete(self.model, "the response stream was empty")
        }
    }

    /// Applies one event; `Some(reason)` once the message is complete.
    async fn apply(
        &mut self,
        event: &SseEvent,
        data: &Value,
        writer: &mut StreamWriter,
    ) -> Result<Option<StopReason>, ProviderError> {
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("");
        match kind {
            "message_start" => {
                self.seen_start = true;
                let message = data.get("message");
                if let Some(id) = message.and_then(|m| m.get("id")).and_then(Value::as_str) {
                    writer.message_mut().response_id = Some(id.to_string());
                }
                let usage = message.and_then(|m| m.get("usage"));
                self.update_usage(writer, usage, true);
            }
            "content_block_start" => self.start_block(data, writer).await,
            "content_block_delta" => self.delta(data, writer).await,
            "content_block_stop" => {
                let index = data.get("index").and_then(Value::as_u64);
                if self.open.as_ref().is_some_and(|b| b.index == index) {
                    self.close_block(writer).await;
                }
            }
            "message_delta" => {
                let stop = data
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str);
                if let Some(stop) = stop {
                    writer.message_mut().raw_stop_reason = Some(stop.to_string());
                    self.outcome = Ok(map_stop_reason(self.model, stop)?);
                    if let Some(refusal) = refusal(self.model, stop) {
                        self.outcome = Err(refusal);
                    }
                }
                self.update_usage(writer, data.get("usage"), false);
            }
            "message_stop" => {
                self.close_block(writer).await;
                return self.outcome.clone().map(Some);
            }
            "error" => return Err(stream_error(self.model, data)),
            _ => {}
        }
        Ok(None)
    }

    async fn start_block(&mut self, data: &Value, writer: &mut StreamWriter) {
        self.close_block(writer).await;
        let index = data.get("index").and_then(Value::as_u64);
        let Some(block) = data.get("content_block") else {
            return;
        };
        let str_field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or("");
        let mut initial_input = None;
        let kind = match str_field("type") {
            "text" => {
                writer.text_delta(str_field("text")).await;
                Kind::Text
            }
            "thinking" => {
                writer.open_thinking().await;
                writer.thinking_delta(str_field("thinking")).await;
                Kind::Thinking
            }
            "redacted_thinking" => {
                // The reasoning itself is encrypted; the payload is kept as the signature so the
                // block can be sent back to the same model.
                writer.open_thinking().await;
                writer.set_signature(str_field("data"));
                writer.set_redacted();
                Kind::RedactedThinking
            }
            "tool_use" => {
                writer
                    .start_tool_call(str_field("id"), str_field("name"))
                    .await;
                initial_input = block
                    .get("input")
                    .filter(|input| input.as_object().is_some_and(|o| !o.is_empty()))
                    .map(Value::to_string);
                Kind::ToolUse
            }
            _ => return,
        };
        self.open = Some(OpenBlock {
            index,
            kind,
            initial_input,
        });
    }

    async fn delta(&mut self, data: &Value, writer: &mut StreamWriter) {
        let index = data.get("index").and_then(Value::as_u64);
        let Some(open) = self.open.as_mut().filter(|b| b.index == index) else {
            return;
        };
        let Some(delta) = data.get("delta") else {
            return;
        };
        let str_field = |name: &str| delta.get(name).and_then(Value::as_str).unwrap_or("");
        match (str_field("type"), open.kind) {
            ("text_delta", Kind::Text) => writer.text_delta(str_field("text")).await,
            ("thinking_delta", Kind::Thinking) => {
                writer.thinking_delta(str_field("thinking")).await
            }
            ("signature_delta", Kind::Thinking) => writer.append_signature(str_field("signature")),
            ("input_json_delta", Kind::ToolUse) => {
                open.initial_input = None;
                writer.tool_call_delta(str_field("partial_json")).await;
            }
            _ => {}
        }
    }

    async fn close_block(&mut self, writer: &mut StreamWriter) {
        let Some(block) = self.open.take() else {
            return;
        };
        if let Some(input) = block.initial_input {
            writer.tool_call_delta(&input).await;
        }
        writer.end_block().await;
    }

    /// Copies token counts into the message. `message_start` sets every field (absent = 0);
    /// `message_delta` overwrites only the fields it carries, because some proxies omit the
    /// input counts there.
    fn update_usage(&self, writer: &mut StreamWriter, usage: Option<&Value>, reset: bool) {
        let Some(usage) = usage else { return };
        let target: &mut Usage = &mut writer.message_mut().usage;
        let fields: [(&str, &mut u64); 4] = [
            ("input_tokens", &mut target.input),
            ("output_tokens", &mut target.output),
            ("cache_read_input_tokens", &mut target.cache_read),
            ("cache_creation_input_tokens", &mut target.cache_write),
        ];
        for (name, slot) in fields {
            match usage.get(name).and_then(Value::as_u64) {
                Some(tokens) => *slot = tokens,
                None if reset => *slot = 0,
                None => {}
            }
        }
        // Thinking tokens, part of the output, where the API reports them (pi 1.6).
        if let Some(thinking) = usage
            .get("output_tokens_details")
            .and_then(|d| d.get("thinking_tokens"))
            .and_then(Value::as_u64)
        {
            target.reasoning = Some(thinking);
        }
        target.total_tokens = target.input + target.output + target.cache_read + target.cache_write;
        apply_cost(target, &self.model.cost);
    }
}

/// Maps Anthropic's `stop_reason`. Refusals map to `Error` (see [`refusal`] for the message);
/// an unknown reason is an error naming it, so a new reason such as a context overflow is
/// visible rather than silently treated as success.
fn map_stop_reason(model: &Model, reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" => Ok(StopReason::Error),
        other => Err(ProviderError::Provider {
            provider: model.provider.clone(),
            message: format!(
                "the response stopped for a reason Tandem does not know: stop_reason \"{other}\""
            ),
        }),
    }
}

/// The error a refusal stop reason turns the answer into.
fn refusal(model: &Model, reason: &str) -> Option<ProviderError> {
    let message = match reason {
        "refusal" => {
            "the model declined to continue this response (stop_reason \"refusal\"); \
                      rephrase the request or start a new conversation"
        }
        "sensitive" => {
            "the response was stopped by a content safety filter \
                        (stop_reason \"sensitive\"); rephrase the request"
        }
        _ => return None,
    };
    Some(ProviderError::Provider {
        provider: model.provider.clone(),
        message: message.to_string(),
    })
}

/// An `error` event: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`.
fn stream_error(model: &Model, data: &Value) -> ProviderError {
    let error = data.get("error");
    let field = |name: &str| error.and_then(|e| e.get(name)).and_then(Value::as_str);
    let message = match (field("type"), field("message")) {
        (Some(kind), Some(message)) => format!("{kind}: {message}"),
        (Some(kind), None) => kind.to_string(),
        (None, Some(message)) => message.to_string(),
        (None, None) => format!(
            "unrecognized error event: {}",
            crate::error::excerpt(&data.to_string(), 300)
        ),
    };
    ProviderError::Provider {
        provider: model.provider.clone(),
        message,
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
