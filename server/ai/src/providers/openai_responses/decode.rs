//! Reading the Responses event stream.
//!
//! The stream describes output items one at a time: `response.output_item.added` opens an item
//! (reasoning, message or function call), typed deltas fill it, `response.output_item.done`
//! carries the finished item, and `response.completed` (or `response.incomplete` when a limit cut
//! the answer short) closes the response with its status and usage. Each item maps to one content
//! block. The finished item is authoritative: when it disagrees with what was streamed, the block
//! takes its text, and it supplies the ids and reasoning payload kept for replay.
//!
//! A stream that stops before its closing event is an error, never a silent short answer.

use serde_json::Value;

use super::TextSignature;
use crate::cost::apply_cost;
use crate::error::ProviderError;
use crate::http::{parse_json, EventSource};
use crate::model::Model;
use crate::stream::StreamWriter;
use crate::types::{AssistantBlock, StopReason, Usage};

/// Decodes a Responses stream into `writer`, returning the stop reason.
pub async fn decode(
    mut source: impl EventSource,
    writer: &mut StreamWriter,
    model: &Model,
) -> Result<StopReason, ProviderError> {
    let mut decoder = Decoder {
        model,
        item: Item::None,
        events: 0,
    };
    while let Some(event) = source.next_event().await? {
        let data = event.data.trim();
        // Keep-alives and the chat-completions terminator some proxies add carry nothing.
        if data.is_empty() || data == "[DONE]" {
            continue;
        }
        decoder.events += 1;
        let data = parse_json(&model.provider, data)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default()
            .to_string();
        if let Some(reason) = decoder.handle(&kind, &data, writer).await? {
            return Ok(reason);
        }
    }
    let detail = if decoder.events == 0 {
        "the response body had no events; retry the request".to_string()
    } else {
        format!(
            "the stream stopped after {} events without response.completed, so the answer may be cut short; retry the request",
            decoder.events
        )
    };
    Err(ProviderError::Incomplete {
        provider: model.provider.clone(),
        detail,
    })
}

/// The kind of content part a message item is receiving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    OutputText,
    Refusal,
}

/// The output item being streamed, with what has been streamed of it.
#[derive(Debug)]
enum Item {
    /// None, or one Tandem does not show (web search, ...).
    None,
    /// A reasoning item: its summary parts so far and the text sent to the writer.
    Reasoning { parts: usize, text: String },
    /// An output message: its latest content part and the text sent.
    Message { part: Option<Part>, text: String },
    /// A function call: its block id and name, and the argument JSON sent.
    Call {
        id: String,
        name: String,
        args: String,
    },
}

struct Decoder<'a> {
    model: &'a Model,
    item: Item,
    events: usize,
}

impl Decoder<'_> {
    /// Handles one event; `Some` once the response is complete.
    async fn handle(
        &mut self,
        kind: &str,
        data: &Value,
        writer: &mut StreamWriter,
    ) -> Result<Option<StopReason>, ProviderError> {
        match kind {
            "response.created" | "response.in_progress" => {
                if let Some(id) = data.pointer("/response/id").and_then(Value::as_str) {
                    writer.message_mut().response_id = Some(id.to_string());
                }
            }
            "response.output_item.added" => self.open_item(&data["item"], writer).await,
            "response.reasoning_summary_part.added" => {
                if let Item::Reasoning { parts, text } = &mut self.item {
                    *parts += 1;
                    // pi separates summary parts with a blank line.
                    if *parts > 1 {
                        text.push_str("\n\n");
                        writer.thinking_delta("\n\n").await;
                    }
                }
            }
            "response.reasoning_summary_text.delta" => {
                if let Item::Reasoning { parts, text } = &mut self.item {
                    let delta = str_field(data, "delta");
                    if *parts > 0 && !delta.is_empty() {
                        text.push_str(delta);
                        writer.thinking_delta(delta).await;
                    }
                }
            }
            "response.content_part.added" => {
                if let Item::Message { part, .. } = &mut self.item {
                    match data.pointer("/part/type").and_then(Value::as_str) {
                        Some("output_text") => *part = Some(Part::OutputText),
                        Some("refusal") => *part = Some(Part::Refusal),
                        _ => {}
                    }
                }
            }
            "response.output_text.delta" => {
                self.message_delta(Part::OutputText, data, writer).await
            }
            "response.refusal.delta" => self.message_delta(Part::Refusal, data, writer).await,
            "response.function_call_arguments.delta" => {
                if let Item::Call { args, .. } = &mut self.item {
                    let delta = str_field(data, "delta");
                    args.push_str(delta);
                    writer.tool_call_delta(delta).await;
                }
            }
            "response.function_call_arguments.done" => {
                if let Item::Call { args, .. } = &mut self.item {
                    catch_up_arguments(args, str_field(data, "arguments"), writer).await;
                }
            }
            "response.output_item.done" => self.finish_item(&data["item"], writer).await,
            "response.completed" | "response.incomplete" => {
                return self.complete(&data["response"], writer).map(Some);
            }
            "response.failed" => {
                return Err(self.failure(failure_message(&data["response"])));
            }
            "error" => return Err(self.failure(error_event_message(data))),
            _ => {}
        }
        Ok(None)
    }

    fn failure(&self, message: String) -> ProviderError {
        ProviderError::Provider {
            provider: self.model.provider.clone(),
            message,
        }
    }

    async fn open_item(&mut self, item: &Value, writer: &mut StreamWriter) {
        // Close the previous item's block even if its `done` event never came, so two items
        // of the same kind never share a block.
        writer.end_block().await;
        self.item = match str_field(item, "type") {
            "reasoning" => {
                writer.open_thinking().await;
                Item::Reasoning {
                    parts: 0,
                    text: String::new(),
                }
            }
            "message" => {
                writer.text_delta("").await;
                Item::Message {
                    part: None,
                    text: String::new(),
                }
            }
            "function_call" => {
                let id = call_block_id(item);
                let name = str_field(item, "name").to_string();
                writer.start_tool_call(id.clone(), name.clone()).await;
                let args = str_field(item, "arguments").to_string();
                writer.tool_call_delta(&args).await;
                Item::Call { id, name, args }
            }
            _ => Item::None,
        };
    }

    /// Output text or refusal text, accepted while the message's latest part is of that kind
    /// (or before any part was announced, which some compatible servers skip).
    async fn message_delta(&mut self, kind: Part, data: &Value, writer: &mut StreamWriter) {
        if let Item::Message { part, text } = &mut self.item {
            if part.is_none_or(|p| p == kind) {
                let delta = str_field(data, "delta");
                if !delta.is_empty() {
                    text.push_str(delta);
                    writer.text_delta(delta).await;
                }
            }
        }
    }

    async fn finish_item(&mut self, item: &Value, writer: &mut StreamWriter) {
        let current = std::mem::replace(&mut self.item, Item::None);
        match (str_field(item, "type"), current) {
            ("reasoning", Item::Reasoning { text, .. }) => {
                // An item without a summary list leaves what was streamed alone.
                if let Some(parts) = item.get("summary").and_then(Value::as_array) {
                    let summary: Vec<&str> = parts.iter().map(|p| str_field(p, "text")).collect();
                    catch_up_text(&text, &summary.join("\n\n"), writer).await;
                }
                // The whole item, encrypted content included, is what a replay sends back.
                writer.set_signature(item.to_string());
                writer.end_block().await;
            }
            ("message", Item::Message { text, .. }) => {
                if let Some(parts) = item.get("content").and_then(Value::as_array) {
                    let full: String = parts
                        .iter()
                        .map(|p| match str_field(p, "type") {
                            "refusal" => str_field(p, "refusal"),
                            _ => str_field(p, "text"),
                        })
                        .collect();
                    catch_up_text(&text, &full, writer).await;
                }
                let phase = item.get("phase").and_then(Value::as_str);
                writer.set_signature(TextSignature::new(str_field(item, "id"), phase).encode());
                writer.end_block().await;
            }
            ("function_call", current) => {
                let final_id = call_block_id(item);
                let final_name = str_field(item, "name");
                let mut args = match current {
                    Item::Call { id, name, args } => {
                        let id = (id != final_id).then_some(final_id.as_str());
                        let name =
                            (name != final_name && !final_name.is_empty()).then_some(final_name);
                        writer.patch_tool_call(id, name);
                        args
                    }
                    // Announced only when finished: emit it whole.
                    _ => {
                        writer.start_tool_call(final_id, final_name).await;
                        String::new()
                    }
                };
                catch_up_arguments(&mut args, str_field(item, "arguments"), writer).await;
                writer.end_block().await;
            }
            (_, current) => self.item = current,
        }
    }

    /// Usage, cost and stop reason from the final response object.
    fn complete(
        &mut self,
        response: &Value,
        writer: &mut StreamWriter,
    ) -> Result<StopReason, ProviderError> {
        let message = writer.message_mut();
        if let Some(id) = response.get("id").and_then(Value::as_str) {
            message.response_id = Some(id.to_string());
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            let input = count(usage.get("input_tokens"));
            // Cached tokens are part of input_tokens; Tandem counts them apart.
            let cached = count(usage.pointer("/input_tokens_details/cached_tokens"));
            message.usage = Usage {
                input: input.saturating_sub(cached),
                output: count(usage.get("output_tokens")),
                cache_read: cached,
                cache_write: 0,
                reasoning: Some(count(
                    usage
                        .get("output_tokens_details")
                        .and_then(|d| d.get("reasoning_tokens")),
                )),
                total_tokens: count(usage.get("total_tokens")),
                ..Usage::default()
            };
        }
        apply_cost(&mut message.usage, &self.model.cost);
        let status = response.get("status").and_then(Value::as_str);
        // pi 1.6 keeps the status, with the reason a limit cut it: `incomplete.max_output_tokens`.
        message.raw_stop_reason = status.map(|status| {
            match response
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str)
            {
                Some(reason) => format!("{status}.{reason}"),
                None => status.to_string(),
            }
        });
        let reason = match status {
            None | Some("completed" | "in_progress" | "queued") => StopReason::Stop,
            Some("incomplete") => StopReason::Length,
            Some("cancelled") if response.get("error").is_none_or(Value::is_null) => {
                return Err(self.failure("the response was cancelled".into()));
            }
            Some("failed" | "cancelled") => return Err(self.failure(failure_message(response))),
            Some(other) => {
                return Err(ProviderError::Malformed {
                    provider: self.model.provider.clone(),
                    detail: format!("the response ended with an unknown status {other:?}"),
                })
            }
        };
        let has_calls = message
            .content
            .iter()
            .any(|b| matches!(b, AssistantBlock::ToolCall(_)));
        Ok(if reason == StopReason::Stop && has_calls {
            StopReason::ToolUse
        } else {
            reason
        })
    }
}

/// A string field of `value`, or `""`.
fn str_field<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A token count; absent, negative or fractional counts read as 0.
fn count(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_u64).unwrap_or(0)
}

/// A tool call's block id: `call_id|item_id`, so a replay can send both back.
fn call_block_id(item: &Value) -> String {
    format!("{}|{}", str_field(item, "call_id"), str_field(item, "id"))
}

/// Brings the open text or thinking block to the finished item's text: the missing tail is
/// streamed when what was sent is a prefix of it, otherwise the block is replaced (its end event
/// then carries the corrected text).
async fn catch_up_text(sent: &str, full: &str, writer: &mut StreamWriter) {
    if let Some(rest) = full.strip_prefix(sent) {
        if !rest.is_empty() {
            match writer.message().content.last() {
                Some(AssistantBlock::Thinking(_)) => writer.thinking_delta(rest).await,
                _ => writer.text_delta(rest).await,
            }
        }
        return;
    }
    match writer.message_mut().content.last_mut() {
        Some(AssistantBlock::Thinking(t)) => t.thinking = full.to_string(),
        Some(AssistantBlock::Text(t)) => t.text = full.to_string(),
        _ => {}
    }
}

/// Streams whatever part of the final argument JSON was not streamed yet. Arguments that
/// disagree with what was streamed keep the streamed version: argument text cannot be taken back.
async fn catch_up_arguments(sent: &mut String, full: &str, writer: &mut StreamWriter) {
    if let Some(rest) = full.strip_prefix(sent.as_str()) {
        if !rest.is_empty() {
            writer.tool_call_delta(rest).await;
            sent.push_str(rest);
        }
    } else {
        tracing::debug!("function call arguments differ from the streamed ones; keeping those");
    }
}

/// The message of a `response.failed` (or failed `response.completed`) response, worded as pi
/// words it.
fn failure_message(response: &Value) -> String {
    if let Some(error) = response.get("error").filter(|e| e.is_object()) {
        let code = error
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return format!("{code}: {message}");
    }
    match response
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str)
    {
        Some(reason) => format!("incomplete: {reason}"),
        None => "Unknown error (no error details in response)".into(),
    }
}

/// The message of an `error` event: `{code, message}` at the top level as OpenAI sends it, or
/// nested under `error` as some proxies do.
fn error_event_message(data: &Value) -> String {
    let source = data.get("error").filter(|e| e.is_object()).unwrap_or(data);
    let message = source
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("Unknown error");
    match source.get("code").and_then(Value::as_str) {
        Some(code) => format!("Error Code {code}: {message}"),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::model;
    use super::*;
    use crate::event::AssistantMessageEvent;
    use crate::http::VecSource;
    use crate::stream::AssistantStream;
    use crate::types::AssistantMessage;

    /// The body of a fixture: everything after its header block's blank line.
    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/../../fixtures/providers/openai-responses/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        match text.split_once("\n\n") {
            Some((_, body)) => body.to_string(),
            None => String::new(),
        }
    }

    struct Run {
        result: Result<StopReason, ProviderError>,
        events: Vec<AssistantMessageEvent>,
        message: AssistantMessage,
    }

    /// Decodes `body` the way the provider runner does and collects everything emitted.
    async fn run_body(body: &str) -> Run {
        let m = model("gpt-5");
        let (mut writer, mut stream) = AssistantStream::channel(&m);
        let source = VecSource::from_body(body);
        let task = tokio::spawn(async move {
            let result = decode(source, &mut writer, &m).await;
            match &result {
                Ok(reason) => writer.finish(*reason).await,
                Err(e) => writer.fail(StopReason::Error, e.to_string()).await,
            }
            result
        });
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        let message = stream.final_message().cloned().expect("final message");
        let result = task.await.expect("decoder does not panic");
        Run {
            result,
            events,
            message,
        }
    }

    async fn run(name: &str) -> Run {
        run_body(&fixture(name)).await
    }

    fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
        events.iter().map(|e| e.kind()).collect()
    }

    fn deltas(events: &[AssistantMessageEvent]) -> usize {
        events
            .iter()
            .filter(|e| matches!(e, AssistantMessageEvent::ToolcallDelta { .. }))
            .count()
    }

    #[tokio::test]
    async fn text_with_cached_usage_and_cost() {
        let run = run("text.sse").await;
        assert_eq!(run.result, Ok(StopReason::Stop));
        let m = &run.message;
        assert_eq!(m.text(), "Hello! How can I help you today?");
        assert_eq!(
            m.response_id.as_deref(),
            Some("resp_68af0c1b3e7c8190a2f1d4e5b6c7d8e9")
        );
        assert_eq!(
            (
                m.usage.input,
                m.usage.output,
                m.usage.cache_read,
                m.usage.total_tokens
            ),
            (307, 10, 1536, 1853)
        );
        let expected = 307.0 * 1.25e-6 + 10.0 * 10e-6 + 1536.0 * 0.125e-6;
        assert!((m.usage.cost.total - expected).abs() < 1e-12);
        let AssistantBlock::Text(text) = &m.content[0] else {
            panic!("text block")
        };
        assert_eq!(
            text.text_signature.as_deref(),
            Some(r#"{"v":1,"id":"msg_68af0c1c0b5c8190b3e2f7a6d5c4b3a2"}"#)
        );
        let kinds = kinds(&run.events);
        assert_eq!(kinds.first(), Some(&"start"));
        assert_eq!(kinds.last(), Some(&"done"));
        assert_eq!(kinds.iter().filter(|k| **k == "text_delta").count(), 9);
    }

    #[tokio::test]
    async fn thinking_joins_summary_parts_and_keeps_the_item() {
        for name in ["thinking.sse", "thinking-chunked.sse"] {
            let run = run(name).await;
            assert_eq!(run.result, Ok(StopReason::Stop), "{name}");
            let m = &run.message;
            assert_eq!(m.content.len(), 2);
            let AssistantBlock::Thinking(thinking) = &m.content[0] else {
                panic!("thinking first")
            };
            assert_eq!(
                thinking.thinking,
                "**Checking the greeting**\n\nThe user wrote in French — « Ça va ? ».\n\n**Answering briefly**\n\nReply in French, with a café emoji ☕."
            );
            let item: Value =
                serde_json::from_str(thinking.thinking_signature.as_deref().expect("signature"))
                    .expect("the signature is the reasoning item");
            assert_eq!(item["type"], "reasoning");
            assert_eq!(item["id"], "rs_68af0d2a11248190bd3e5f60718293a4");
            assert!(item["encrypted_content"]
                .as_str()
                .is_some_and(|s| s.starts_with("gAAAA")));
            assert_eq!(m.text(), "Ça va très bien, merci ! ☕ Et vous ?");
            assert_eq!((m.usage.input, m.usage.output), (2210, 412));
            // What was streamed is exactly the final text: no correction was needed.
            let streamed: String = run
                .events
                .iter()
                .filter_map(|e| match e {
                    AssistantMessageEvent::ThinkingDelta { delta, .. } => Some(delta.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(streamed, thinking.thinking);
        }
    }

    #[tokio::test]
    async fn one_tool_call_streamed_in_small_pieces() {
        let run = run("tool-call.sse").await;
        assert_eq!(run.result, Ok(StopReason::ToolUse));
        let m = &run.message;
        // Encrypted reasoning without a summary is an empty, signed thinking block.
        let AssistantBlock::Thinking(thinking) = &m.content[0] else {
            panic!("thinking first")
        };
        assert_eq!(thinking.thinking, "");
        assert!(thinking.thinking_signature.is_some());
        let calls: Vec<_> = m.tool_calls().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(
            calls[0].id,
            "call_Xk2wPq9LmN4rT6vB8zC1dF3h|fc_68af0e4f6a008190b9c8d7e6f5a4b3c2"
        );
        assert_eq!(calls[0].name, "read");
        assert_eq!(
            calls[0].arguments,
            serde_json::json!({"path": "src/main.rs", "offset": 1, "limit": 200})
        );
        assert_eq!(deltas(&run.events), 15);
        assert_eq!((m.usage.input, m.usage.cache_read), (176, 2944));
    }

    #[tokio::test]
    async fn several_tool_calls_after_a_commentary_message() {
        let run = run("tool-calls.sse").await;
        assert_eq!(run.result, Ok(StopReason::ToolUse));
        let m = &run.message;
        assert_eq!(m.text(), "I'll read both files.");
        let AssistantBlock::Text(text) = &m.content[0] else {
            panic!("text first")
        };
        assert_eq!(
            text.text_signature.as_deref(),
            Some(r#"{"v":1,"id":"msg_68af0f7f90ab8190b1a2c3d4e5f6a7b8","phase":"commentary"}"#)
        );
        let paths: Vec<&Value> = m.tool_calls().map(|c| &c.arguments["path"]).collect();
        assert_eq!(paths, ["Cargo.toml", "README.md"]);
        let ends = run
            .events
            .iter()
            .filter(|e| matches!(e, AssistantMessageEvent::ToolcallEnd { .. }))
            .count();
        assert_eq!(ends, 2);
    }

    #[tokio::test]
    async fn incomplete_responses_stop_for_length() {
        let run = run("length.sse").await;
        assert_eq!(run.result, Ok(StopReason::Length));
        assert_eq!(
            run.message.text(),
            "Once upon a time, in a land far, far away, there lived a"
        );
        assert_eq!(run.message.usage.output, 16);

        let run = run_body(&fixture("content-filter.sse")).await;
        assert_eq!(run.result, Ok(StopReason::Length));
        assert_eq!(run.message.text(), "Here is how");
    }

    #[tokio::test]
    async fn a_refusal_is_the_answer_text() {
        let run = run("refusal.sse").await;
        assert_eq!(run.result, Ok(StopReason::Stop));
        assert_eq!(run.message.text(), "I'm sorry, but I can't help with that.");
    }

    #[tokio::test]
    async fn failures_inside_the_stream_are_provider_errors() {
        let run = run("failed.sse").await;
        assert_eq!(
            run.result,
            Err(ProviderError::Provider {
                provider: "openai".into(),
                message: "server_error: The model produced invalid content. Consider modifying your prompt if you are seeing this error persistently.".into(),
            })
        );
        // What arrived before the failure stays in the message.
        assert_eq!(run.message.text(), "Let me");
        assert_eq!(run.message.stop_reason, StopReason::Error);

        let run = run_body(&fixture("in-stream-error.sse")).await;
        assert_eq!(
            run.result,
            Err(ProviderError::Provider {
                provider: "openai".into(),
                message: "Error Code server_error: The server had an error while processing your request. Sorry about that!".into(),
            })
        );
        assert_eq!(
            run.message.error_message.as_deref(),
            Some("openai error: Error Code server_error: The server had an error while processing your request. Sorry about that!")
        );
    }

    #[tokio::test]
    async fn streams_without_their_completion_are_errors() {
        let run = run("truncated.sse").await;
        let Err(ProviderError::Incomplete { detail, .. }) = &run.result else {
            panic!("expected Incomplete, got {:?}", run.result)
        };
        assert!(detail.contains("without response.completed"), "{detail}");
        assert_eq!(run.message.text(), "The answer is");

        let run = run_body(&fixture("empty.sse")).await;
        let Err(ProviderError::Incomplete { detail, .. }) = &run.result else {
            panic!("expected Incomplete, got {:?}", run.result)
        };
        assert!(detail.contains("no events"), "{detail}");
        assert_eq!(kinds(&run.events), ["start", "error"]);

        // In memory the cut-off last event is still dispatched and is not JSON.
        let run = run_body(&fixture("cut.sse")).await;
        assert!(
            matches!(run.result, Err(ProviderError::Malformed { .. })),
            "{:?}",
            run.result
        );
        assert_eq!(run.message.text(), "Partial");

        // A dropped connection after complete events surfaces as the transport's error.
        let dropped = ProviderError::Dropped {
            provider: "openai".into(),
            detail: "connection reset".into(),
        };
        let m = model("gpt-5");
        let (mut writer, _stream) = AssistantStream::channel(&m);
        let source = VecSource::from_body(&fixture("truncated.sse")).then_fail(dropped.clone());
        assert_eq!(decode(source, &mut writer, &m).await, Err(dropped));
    }

    #[tokio::test]
    async fn garbage_data_is_malformed() {
        let run = run("garbage.sse").await;
        let Err(ProviderError::Malformed { detail, .. }) = &run.result else {
            panic!("expected Malformed, got {:?}", run.result)
        };
        assert!(detail.contains("502 Bad Gateway"), "{detail}");
    }

    #[tokio::test]
    async fn final_items_correct_what_was_streamed() {
        let body = concat!(
            // A server that announces no content part and streams only part of the text.
            "data: {\"type\":\"response.output_item.added\",\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[]}}\n\n",
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"Hel\"}\n\n",
            "data: {\"type\":\"response.output_item.done\",\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hello\"}]}}\n\n",
            // Reasoning whose final summary differs from the streamed one.
            "data: {\"type\":\"response.output_item.added\",\"item\":{\"id\":\"rs_1\",\"type\":\"reasoning\",\"summary\":[]}}\n\n",
            "data: {\"type\":\"response.reasoning_summary_part.added\",\"part\":{\"type\":\"summary_text\",\"text\":\"\"}}\n\n",
            "data: {\"type\":\"response.reasoning_summary_text.delta\",\"delta\":\"draft\"}\n\n",
            "data: {\"type\":\"response.output_item.done\",\"item\":{\"id\":\"rs_1\",\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"final\"}]}}\n\n",
            // A call announced only when finished.
            "data: {\"type\":\"response.output_item.done\",\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"ls\",\"arguments\":\"{\\\"path\\\":\\\".\\\"}\"}}\n\n",
            "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\"}}\n\n",
        );
        let run = run_body(body).await;
        assert_eq!(run.result, Ok(StopReason::ToolUse));
        let m = &run.message;
        assert_eq!(m.text(), "Hello");
        let AssistantBlock::Thinking(t) = &m.content[1] else {
            panic!("thinking second")
        };
        assert_eq!(t.thinking, "final");
        let call = m.tool_calls().next().expect("call");
        assert_eq!(call.id, "call_1|fc_1");
        assert_eq!(call.arguments, serde_json::json!({"path": "."}));
        assert_eq!(m.response_id.as_deref(), Some("resp_1"));
    }

    #[tokio::test]
    async fn odd_statuses() {
        let completed = |status: &str| {
            format!("data: {{\"type\":\"response.completed\",\"response\":{{\"status\":\"{status}\"}}}}\n\n")
        };
        assert_eq!(
            run_body(&completed("queued")).await.result,
            Ok(StopReason::Stop)
        );
        let Err(ProviderError::Provider { message, .. }) =
            run_body(&completed("cancelled")).await.result
        else {
            panic!("cancelled is an error")
        };
        assert_eq!(message, "the response was cancelled");
        let Err(ProviderError::Provider { message, .. }) =
            run_body(&completed("failed")).await.result
        else {
            panic!("failed is an error")
        };
        assert_eq!(message, "Unknown error (no error details in response)");
        assert!(matches!(
            run_body(&completed("weird")).await.result,
            Err(ProviderError::Malformed { .. })
        ));
        // Events carrying unexpected shapes are ignored rather than trusted.
        let body = concat!(
            "data: {\"type\":\"response.output_text.delta\",\"delta\":5}\n\n",
            "data: {\"type\":\"response.output_item.added\",\"item\":null}\n\n",
            "data: {\"type\":\"response.output_item.done\",\"item\":[]}\n\n",
            "data: []\n\n",
            "data: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"usage\":{\"input_tokens\":-1}}}\n\n",
        );
        assert_eq!(run_body(body).await.result, Ok(StopReason::Length));
    }
}
