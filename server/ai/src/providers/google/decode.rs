//! Reading a `streamGenerateContent` stream.
//!
//! Every SSE event is one whole `GenerateContentResponse`: candidate parts to append, possibly a
//! `finishReason`, and a `usageMetadata` snapshot that replaces the previous one. Gemini has no
//! end-of-stream marker, so a stream is complete only when a candidate carried a `finishReason`;
//! one that ends without it was cut off. Parts are appended in order: `thought: true` text to a
//! thinking block, other text to a text block (the writer opens a new block when the kind
//! changes), and each `functionCall` as one finished tool call.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::Value;

use crate::cost::apply_cost;
use crate::error::{excerpt, ProviderError};
use crate::http::{parse_json, EventSource};
use crate::model::Model;
use crate::stream::StreamWriter;
use crate::types::{now_millis, StopReason, ToolCall};

/// Numbers the tool-call ids made up in this process, so two made in the same millisecond
/// still differ.
static CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Chunk {
    candidates: Option<Vec<Candidate>>,
    usage_metadata: Option<UsageMetadata>,
    response_id: Option<String>,
    prompt_feedback: Option<PromptFeedback>,
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Candidate {
    content: Option<CandidateContent>,
    finish_reason: Option<String>,
    finish_message: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CandidateContent {
    parts: Option<Vec<ResponsePart>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ResponsePart {
    text: Option<String>,
    thought: Option<bool>,
    thought_signature: Option<String>,
    function_call: Option<ResponseCall>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ResponseCall {
    id: Option<String>,
    name: Option<String>,
    args: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct UsageMetadata {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
    cached_content_token_count: Option<u64>,
    total_token_count: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PromptFeedback {
    block_reason: Option<String>,
    block_reason_message: Option<String>,
}

/// How the candidate ended.
#[derive(Debug)]
enum Finish {
    Stop,
    Length,
    /// Any other reason, with the message to report.
    Failed(String),
}

impl Finish {
    fn from_wire(reason: &str, finish_message: Option<&str>) -> Finish {
        match reason {
            "STOP" => Finish::Stop,
            "MAX_TOKENS" => Finish::Length,
            other => {
                let mut message = format!(
                    "Gemini stopped the response (finishReason {other}): {}",
                    describe(other)
                );
                if let Some(detail) = finish_message.filter(|m| !m.trim().is_empty()) {
                    message.push_str(". ");
                    message.push_str(detail.trim());
                }
                Finish::Failed(message)
            }
        }
    }
}

/// What an abnormal finish reason means, in words a user can act on.
fn describe(reason: &str) -> &'static str {
    match reason {
        "SAFETY" => "the answer was blocked by Gemini's safety filters; rephrase the request",
        "RECITATION" => "the answer was stopped for reciting existing material too closely",
        "BLOCKLIST" => "the answer contained terms on a blocklist",
        "PROHIBITED_CONTENT" => "the answer was blocked as prohibited content",
        "SPII" => "the answer was blocked for containing sensitive personal information",
        "LANGUAGE" => "the answer was in a language Gemini does not support",
        "MALFORMED_FUNCTION_CALL" => "the model produced a tool call Gemini could not parse",
        "UNEXPECTED_TOOL_CALL" => "the model called a tool although none is enabled",
        "TOO_MANY_TOOL_CALLS" => "the model made too many tool calls in a row",
        "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "IMAGE_OTHER"
        | "NO_IMAGE" => "image generation was stopped",
        _ => "the answer ended abnormally",
    }
}

/// Reads the whole stream into `writer` and returns why it stopped.
pub async fn decode(
    mut source: impl EventSource,
    writer: &mut StreamWriter,
    model: &Model,
) -> Result<StopReason, ProviderError> {
    let provider = model.provider.as_str();
    let mut finish: Option<Finish> = None;
    let mut blocked: Option<String> = None;
    let mut responses = 0usize;
    while let Some(event) = source.next_event().await? {
        if event.data.trim().is_empty() {
            continue;
        }
        let chunk = parse_chunk(provider, &event.data)?;
        responses += 1;
        if let Some(error) = &chunk.error {
            return Err(ProviderError::Provider {
                provider: provider.to_string(),
                message: error_message(error),
            });
        }
        if writer.message().response_id.is_none() {
            writer.message_mut().response_id = chunk.response_id.filter(|id| !id.is_empty());
        }
        if let Some(feedback) = chunk.prompt_feedback {
            if let Some(reason) = feedback.block_reason {
                blocked = Some(blocked_message(&reason, feedback.block_reason_message));
            }
        }
        // Tandem asks for one candidate; any others are ignored.
        if let Some(candidate) = chunk.candidates.and_then(|c| c.into_iter().next()) {
            let parts = candidate.content.and_then(|c| c.parts).unwrap_or_default();
            for part in parts {
                apply_part(writer, part).await;
            }
            if let Some(reason) = candidate.finish_reason {
                writer.message_mut().raw_stop_reason = Some(reason.clone());
                finish = Some(Finish::from_wire(
                    &reason,
                    candidate.finish_message.as_deref(),
                ));
            }
        }
        if let Some(usage) = &chunk.usage_metadata {
            set_usage(writer, usage, model);
        }
    }
    if let Some(message) = blocked {
        return Err(ProviderError::Provider {
            provider: provider.to_string(),
            message,
        });
    }
    let called_tools = writer.message().tool_calls().next().is_some();
    match finish {
        None => Err(ProviderError::Incomplete {
            provider: provider.to_string(),
            detail: if responses == 0 {
                "the response was empty (no GenerateContentResponse arrived)".into()
            } else {
                "no candidate carried a finishReason, so the answer was cut off".into()
            },
        }),
        Some(_) if called_tools => Ok(StopReason::ToolUse),
        Some(Finish::Stop) => Ok(StopReason::Stop),
        Some(Finish::Length) => Ok(StopReason::Length),
        Some(Finish::Failed(message)) => Err(ProviderError::Provider {
            provider: provider.to_string(),
            message,
        }),
    }
}

fn parse_chunk(provider: &str, data: &str) -> Result<Chunk, ProviderError> {
    let value = parse_json(provider, data)?;
    let malformed = |why: String| ProviderError::Malformed {
        provider: provider.to_string(),
        detail: format!("{why}: {}", excerpt(data, 200)),
    };
    if !value.is_object() {
        return Err(malformed(
            "event data is not a GenerateContentResponse object".into(),
        ));
    }
    serde_json::from_value(value)
        .map_err(|e| malformed(format!("unexpected GenerateContentResponse shape ({e})")))
}

async fn apply_part(writer: &mut StreamWriter, part: ResponsePart) {
    let signature = part.thought_signature.filter(|s| !s.is_empty());
    if let Some(text) = &part.text {
        if part.thought == Some(true) {
            writer.thinking_delta(text).await;
        } else {
            writer.text_delta(text).await;
        }
        // A signature belongs to the block its part extends; later parts may omit it.
        if let Some(signature) = &signature {
            writer.set_signature(signature.clone());
        }
    }
    if let Some(call) = part.function_call {
        let name = call.name.unwrap_or_default();
        let id = match call.id.filter(|id| !id.is_empty()) {
            Some(id) if !writer.message().tool_calls().any(|c| c.id == id) => id,
            _ => fresh_call_id(&name),
        };
        let arguments = match call.args {
            Some(Value::Null) | None => Value::Object(Default::default()),
            Some(args) => args,
        };
        writer
            .whole_tool_call(ToolCall {
                id,
                name,
                arguments,
                thought_signature: signature,
            })
            .await;
    }
}

/// `<name>_<millis>_<n>`, as pi names calls Gemini sent without a usable id.
fn fresh_call_id(name: &str) -> String {
    let n = CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
    format!("{name}_{}_{n}", now_millis())
}

/// Each snapshot replaces the last. `promptTokenCount` includes the cached tokens, which are
/// reported apart; thoughts are billed as output.
fn set_usage(writer: &mut StreamWriter, metadata: &UsageMetadata, model: &Model) {
    let prompt = metadata.prompt_token_count.unwrap_or(0);
    let cached = metadata.cached_content_token_count.unwrap_or(0);
    let usage = &mut writer.message_mut().usage;
    usage.input = prompt.saturating_sub(cached);
    usage.output = metadata
        .candidates_token_count
        .unwrap_or(0)
        .saturating_add(metadata.thoughts_token_count.unwrap_or(0));
    usage.cache_read = cached;
    usage.cache_write = 0;
    usage.reasoning = Some(metadata.thoughts_token_count.unwrap_or(0));
    usage.total_tokens = metadata.total_token_count.unwrap_or(0);
    apply_cost(usage, &model.cost);
}

fn blocked_message(reason: &str, detail: Option<String>) -> String {
    let mut message = format!("Gemini refused the prompt (blockReason {reason})");
    if let Some(detail) = detail.filter(|d| !d.trim().is_empty()) {
        message.push_str(": ");
        message.push_str(detail.trim());
    }
    message.push_str("; rephrase the request or remove the offending content");
    message
}

/// Google's `{code, message, status}` error object as one line, keeping the words (status,
/// code) that retry logic looks for.
fn error_message(error: &Value) -> String {
    match error {
        Value::Object(fields) => {
            let message = fields
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .unwrap_or("unknown error");
            let status = fields.get("status").and_then(Value::as_str);
            let code = fields.get("code").and_then(Value::as_i64);
            match (status, code) {
                (Some(status), Some(code)) => format!("{message} ({status}, HTTP {code})"),
                (Some(status), None) => format!("{message} ({status})"),
                (None, Some(code)) => format!("{message} (HTTP {code})"),
                (None, None) => message.to_string(),
            }
        }
        Value::String(text) => text.clone(),
        other => excerpt(&other.to_string(), 500),
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
