//! Decoding a Chat Completions stream: `chat.completion.chunk` objects, then `data: [DONE]`.
//!
//! Each chunk carries a delta for `choices[0]`: text in `content`, reasoning in one of several
//! non-standard fields, tool calls as fragments (a new call begins when its `id` changes; the
//! arguments arrive as pieces of a JSON string). `finish_reason` comes on the last content chunk;
//! usage often comes after it, in a chunk with no choices, so reading goes on until `[DONE]` or
//! the end of the body. Compatible servers differ in details, so the decoder is lenient about
//! what it does not need (unknown fields, missing `object`) and strict about what it does.
//!
//! Blocks are reported as pi 1.6's provider reports them ([`BlockEnds::AtFinish`]): one text
//! and one thinking block per message, reasoning before text within a chunk, tool calls keyed by
//! their stream `index` (or `id`), every fragment reported, and all blocks ending together when
//! the stream does.

use std::collections::HashMap;

use serde_json::Value;

use crate::cost::apply_cost;
use crate::error::{excerpt, ProviderError};
use crate::http::{parse_json, EventSource};
use crate::model::Model;
use crate::stream::{BlockEnds, StreamWriter};
use crate::types::{AssistantBlock, StopReason, Usage};

use super::messages::REASONING_FIELDS;

/// How the stream ended, per `finish_reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Finish {
    Reason(StopReason),
    ContentFilter,
}

struct Decoder<'a> {
    provider: &'a str,
    model: &'a Model,
    /// Whether the thinking block has its signature (the reasoning field's name) yet.
    thinking_signed: bool,
    /// Tool calls by their stream `index`, and by `id`: content indexes.
    calls_by_index: HashMap<u64, usize>,
    calls_by_id: HashMap<String, usize>,
    finish: Option<Finish>,
    chunks: usize,
}

/// Reads `source` to the end, reporting content to `writer`; returns the stop reason.
pub async fn decode(
    mut source: impl EventSource,
    writer: &mut StreamWriter,
    model: &Model,
) -> Result<StopReason, ProviderError> {
    let mut decoder = Decoder {
        provider: &model.provider,
        model,
        thinking_signed: false,
        calls_by_index: HashMap::new(),
        calls_by_id: HashMap::new(),
        finish: None,
        chunks: 0,
    };
    writer.set_block_ends(BlockEnds::AtFinish);
    let mut saw_done = false;
    while let Some(event) = source.next_event().await? {
        let data = event.data.trim();
        if data == "[DONE]" {
            saw_done = true;
            break;
        }
        if data.is_empty() {
            continue;
        }
        let chunk = parse_json(decoder.provider, data)?;
        decoder.chunk(&chunk, writer).await?;
    }
    decoder.outcome(saw_done)
}

impl Decoder<'_> {
    async fn chunk(
        &mut self,
        chunk: &Value,
        writer: &mut StreamWriter,
    ) -> Result<(), ProviderError> {
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(ProviderError::Provider {
                provider: self.provider.to_string(),
                message: error_message(error),
            });
        }
        if !chunk.is_object() {
            return Err(ProviderError::Malformed {
                provider: self.provider.to_string(),
                detail: format!(
                    "expected a chat.completion.chunk object, got {}",
                    excerpt(&chunk.to_string(), 200)
                ),
            });
        }
        self.chunks += 1;
        if writer.message().response_id.is_none() {
            if let Some(id) = chunk["id"].as_str().filter(|id| !id.is_empty()) {
                writer.message_mut().response_id = Some(id.to_string());
            }
        }

        let choice = chunk["choices"].get(0);
        // Some servers (Moonshot) put usage inside the choice instead of the chunk.
        let usage = Some(&chunk["usage"])
            .filter(|u| u.is_object())
            .or_else(|| choice.map(|c| &c["usage"]).filter(|u| u.is_object()));
        if let Some(usage) = usage {
            writer.message_mut().usage = parse_usage(usage, self.model);
        }
        let Some(choice) = choice else {
            return Ok(());
        };

        if let Some(reason) = choice["finish_reason"].as_str() {
            writer.message_mut().raw_stop_reason = Some(reason.to_string());
            self.finish = Some(self.map_finish(reason)?);
        }
        let delta = &choice["delta"];
        let reasoning = REASONING_FIELDS.iter().find_map(|field| {
            delta[*field]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(|t| (*field, t))
        });
        if let Some((field, text)) = reasoning {
            writer.thinking_delta(text).await;
            if !self.thinking_signed {
                // The field name is the signature: replay sends the reasoning back in it.
                writer.set_signature(field);
                self.thinking_signed = true;
            }
        }
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            writer.text_delta(text).await;
        }
        if let Some(calls) = delta["tool_calls"].as_array() {
            for call in calls {
                self.tool_call(call, writer).await;
            }
        }
        if let Some(details) = delta["reasoning_details"].as_array() {
            attach_reasoning_details(details, writer);
        }
        Ok(())
    }

    /// One tool-call fragment: it continues the call with its stream `index`, else the call
    /// with its `id`, else (a server that sends neither) the current call; otherwise it starts
    /// a call. A late id or name fills in what the call lacks.
    async fn tool_call(&mut self, call: &Value, writer: &mut StreamWriter) {
        let stream_index = call["index"].as_u64();
        let id = call["id"].as_str().filter(|s| !s.is_empty());
        let name = call["function"]["name"].as_str().filter(|s| !s.is_empty());
        let arguments = call["function"]["arguments"].as_str().unwrap_or("");
        let known = stream_index
            .and_then(|i| self.calls_by_index.get(&i))
            .or_else(|| id.and_then(|id| self.calls_by_id.get(id)))
            .copied();
        let neither = stream_index.is_none() && id.is_none();
        let index = match known {
            Some(index) if writer.resume_tool_call(index) => {
                writer.fill_tool_call(id, name);
                Some(index)
            }
            None if neither && writer.in_tool_call() => {
                writer.fill_tool_call(id, name);
                None
            }
            _ => Some(
                writer
                    .start_tool_call(id.unwrap_or(""), name.unwrap_or(""))
                    .await,
            ),
        };
        if let (Some(index), Some(i)) = (index, stream_index) {
            self.calls_by_index.entry(i).or_insert(index);
        }
        if let (Some(index), Some(id)) = (index, id) {
            self.calls_by_id.entry(id.to_string()).or_insert(index);
        }
        writer.tool_call_delta(arguments).await;
    }

    fn map_finish(&self, reason: &str) -> Result<Finish, ProviderError> {
        Ok(match reason {
            "stop" | "end" => Finish::Reason(StopReason::Stop),
            "length" => Finish::Reason(StopReason::Length),
            "tool_calls" | "function_call" => Finish::Reason(StopReason::ToolUse),
            "content_filter" => Finish::ContentFilter,
            other => {
                return Err(ProviderError::Provider {
                    provider: self.provider.to_string(),
                    message: format!(
                        "the response ended with finish_reason \"{}\", which Tandem does not know",
                        excerpt(other, 100)
                    ),
                })
            }
        })
    }

    fn outcome(self, saw_done: bool) -> Result<StopReason, ProviderError> {
        match self.finish {
            Some(Finish::Reason(reason)) => Ok(reason),
            Some(Finish::ContentFilter) => Err(ProviderError::Provider {
                provider: self.provider.to_string(),
                message: "the response was stopped by the content filter \
                          (finish_reason \"content_filter\"); rephrase the request or try another model"
                    .into(),
            }),
            None => Err(ProviderError::Incomplete {
                provider: self.provider.to_string(),
                detail: match (self.chunks, saw_done) {
                    (0, false) => "the response body held no chunks at all".into(),
                    (n, true) => format!("[DONE] arrived after {n} chunk(s) but no finish_reason"),
                    (n, false) => format!(
                        "the body ended after {n} chunk(s) without a finish_reason or [DONE]"
                    ),
                },
            }),
        }
    }
}

/// The text of an in-stream `error` object (OpenAI: `{message, type, code}`; OpenRouter adds
/// `metadata.raw` with the upstream provider's words).
fn error_message(error: &Value) -> String {
    let mut message = match error {
        Value::String(s) => s.clone(),
        _ => error["message"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| excerpt(&error.to_string(), 500)),
    };
    let code = error["code"]
        .as_str()
        .map(str::to_string)
        .or_else(|| error["code"].as_i64().map(|c| c.to_string()))
        .or_else(|| error["type"].as_str().map(str::to_string));
    if let Some(code) = code {
        message.push_str(&format!(" ({code})"));
    }
    if let Some(raw) = error["metadata"]["raw"].as_str().filter(|r| !r.is_empty()) {
        message.push('\n');
        message.push_str(&excerpt(raw, 1000));
    }
    message
}

/// OpenRouter sends encrypted reasoning that belongs to a tool call; it is kept as the call's
/// signature and sent back with it.
fn attach_reasoning_details(details: &[Value], writer: &mut StreamWriter) {
    for detail in details {
        let (Some("reasoning.encrypted"), Some(id), Some(data)) = (
            detail["type"].as_str(),
            detail["id"].as_str(),
            detail["data"].as_str(),
        ) else {
            continue;
        };
        if id.is_empty() || data.is_empty() {
            continue;
        }
        let signature = detail.to_string();
        let open_matches = writer.in_tool_call()
            && matches!(writer.message().content.last(), Some(AssistantBlock::ToolCall(c)) if c.id == id);
        if open_matches {
            writer.set_signature(signature);
        } else if let Some(AssistantBlock::ToolCall(call)) = writer
            .message_mut()
            .content
            .iter_mut()
            .find(|b| matches!(b, AssistantBlock::ToolCall(c) if c.id == id))
        {
            call.thought_signature = Some(signature);
        }
    }
}

/// A token count that may arrive as an integer or a float; anything else counts as zero.
fn count(value: &Value) -> u64 {
    value
        .as_u64()
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| *f > 0.0)
                .map(|f| f.round() as u64)
        })
        .unwrap_or(0)
}

/// Usage as pi reports it: cached prompt tokens are split out of the input, reasoning tokens
/// are added to the output, and the total is recomputed (some servers leave reasoning out).
pub fn parse_usage(raw: &Value, model: &Model) -> Usage {
    let cached = count(&raw["prompt_tokens_details"]["cached_tokens"]);
    let reasoning = count(&raw["completion_tokens_details"]["reasoning_tokens"]);
    // What pi 1.6 reports as `usage.reasoning` (some servers put it at the top level).
    let reported = match reasoning {
        0 => count(&raw["reasoning_tokens"]),
        n => n,
    };
    let input = count(&raw["prompt_tokens"]).saturating_sub(cached);
    let output = count(&raw["completion_tokens"]).saturating_add(reasoning);
    let mut usage = Usage {
        input,
        output,
        cache_read: cached,
        cache_write: 0,
        reasoning: Some(reported),
        total_tokens: input.saturating_add(output).saturating_add(cached),
        ..Usage::default()
    };
    apply_cost(&mut usage, &model.cost);
    usage
}
