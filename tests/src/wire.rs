//! Provider wire formats, written: one assistant turn as the SSE body each wire API streams.
//!
//! Recorded fixtures (`fixtures/providers/`) pin down how Tandem reads what providers really
//! sent; black-box tests of the binary need the opposite, answers made to measure for a task
//! ("read hello.txt, then edit it, then say done") in each of the four wire APIs. [`turn`] writes
//! such an answer the way the provider would stream it: text in several deltas, tool-call
//! arguments in pieces of a JSON string (whole objects for Gemini), the provider's stop reason
//! and its usage block. [`rate_limited`] and [`context_overflow`] give the error answers the
//! retry and compaction paths react to.
//!
//! Identifiers the provider would make up (response and item ids) are derived from the turn's
//! content, so the same turn always gives the same bytes.
//!
//! This module knows the formats only; it does not depend on Tandem's decoders. Its tests decode
//! every encoding with them (`tandem-ai` is a dev-dependency).

mod anthropic_messages;
mod google_generative_ai;
mod openai_completions;
mod openai_responses;

use serde_json::{json, Value};

use crate::mock_llm::MockResponse;

/// A provider wire API, named as in models.json's `api` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireApi {
    /// OpenAI Chat Completions (`POST {baseUrl}/chat/completions`).
    OpenAiCompletions,
    /// OpenAI Responses (`POST {baseUrl}/responses`).
    OpenAiResponses,
    /// Anthropic Messages (`POST {baseUrl}/v1/messages`).
    AnthropicMessages,
    /// Google Generative AI (`POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`).
    GoogleGenerativeAi,
}

impl WireApi {
    /// All four, in a fixed order.
    pub const ALL: [WireApi; 4] = [
        WireApi::OpenAiCompletions,
        WireApi::OpenAiResponses,
        WireApi::AnthropicMessages,
        WireApi::GoogleGenerativeAi,
    ];

    /// The name models.json uses, e.g. `openai-completions`.
    pub fn name(self) -> &'static str {
        match self {
            WireApi::OpenAiCompletions => "openai-completions",
            WireApi::OpenAiResponses => "openai-responses",
            WireApi::AnthropicMessages => "anthropic-messages",
            WireApi::GoogleGenerativeAi => "google-generative-ai",
        }
    }

    /// The `baseUrl` a models.json provider needs to reach a server at `root` (no trailing
    /// slash), as each provider's own base URL is written: `/v1` for OpenAI, the bare host for
    /// Anthropic, `/v1beta` for Google.
    pub fn base_url(self, root: &str) -> String {
        match self {
            WireApi::OpenAiCompletions | WireApi::OpenAiResponses => format!("{root}/v1"),
            WireApi::AnthropicMessages => root.to_string(),
            WireApi::GoogleGenerativeAi => format!("{root}/v1beta"),
        }
    }

    /// The path (with query) a request for `model` arrives on, given [`WireApi::base_url`].
    pub fn request_path(self, model: &str) -> String {
        match self {
            WireApi::OpenAiCompletions => "/v1/chat/completions".into(),
            WireApi::OpenAiResponses => "/v1/responses".into(),
            WireApi::AnthropicMessages => "/v1/messages".into(),
            WireApi::GoogleGenerativeAi => {
                format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
            }
        }
    }
}

/// Why the turn ended, in Tandem's terms; each encoder words it as its provider does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// A complete answer.
    Stop,
    /// The output limit cut the answer short.
    Length,
    /// The model wants its tool calls run.
    ToolUse,
}

/// One tool call of a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct WireToolCall {
    /// The call id. For OpenAI Responses, `call_id|item_id` sets both ids; a plain id is the
    /// `call_id` and the item id is made up (Tandem then reports `id|fc_…`).
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments object.
    pub args: Value,
}

/// Token counts reported for a turn, in Tandem's split: `input` excludes the cached tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireUsage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
}

impl Default for WireUsage {
    fn default() -> Self {
        WireUsage {
            input: 100,
            output: 20,
            cache_read: 0,
        }
    }
}

/// One assistant turn: optional text, then tool calls, then the stop reason and usage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    /// The answer's text, streamed before any tool call.
    pub text: Option<String>,
    /// Tool calls, in order.
    pub tool_calls: Vec<WireToolCall>,
    /// The stop reason; `None` means [`Finish::ToolUse`] when there are tool calls, else
    /// [`Finish::Stop`].
    pub finish: Option<Finish>,
    /// Usage.
    pub usage: WireUsage,
}

impl Turn {
    /// A turn that only answers `text`.
    pub fn text(text: impl Into<String>) -> Turn {
        Turn::default().with_text(text)
    }

    /// A turn that only calls `name` with `args`.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, args: Value) -> Turn {
        Turn::default().with_tool_call(id, name, args)
    }

    /// Sets the text.
    pub fn with_text(mut self, text: impl Into<String>) -> Turn {
        self.text = Some(text.into());
        self
    }

    /// Adds a tool call.
    pub fn with_tool_call(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        args: Value,
    ) -> Turn {
        self.tool_calls.push(WireToolCall {
            id: id.into(),
            name: name.into(),
            args,
        });
        self
    }

    /// Sets the stop reason.
    pub fn with_finish(mut self, finish: Finish) -> Turn {
        self.finish = Some(finish);
        self
    }

    /// Sets the usage.
    pub fn with_usage(mut self, input: u64, output: u64, cache_read: u64) -> Turn {
        self.usage = WireUsage {
            input,
            output,
            cache_read,
        };
        self
    }

    /// The stop reason, defaulted as [`Turn::finish`] says.
    pub fn effective_finish(&self) -> Finish {
        self.finish.unwrap_or(if self.tool_calls.is_empty() {
            Finish::Stop
        } else {
            Finish::ToolUse
        })
    }

    /// The text when there is any.
    fn text_part(&self) -> Option<&str> {
        self.text.as_deref().filter(|t| !t.is_empty())
    }

    /// A short hex tag derived from the turn (FNV-1a), for made-up provider ids.
    fn tag(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let content = format!("{:?}", self);
        for byte in content.bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        format!("{hash:016x}")
    }
}

/// The SSE body `api` streams for `turn`.
pub fn turn(api: WireApi, turn: &Turn) -> String {
    match api {
        WireApi::OpenAiCompletions => openai_completions::encode(turn),
        WireApi::OpenAiResponses => openai_responses::encode(turn),
        WireApi::AnthropicMessages => anthropic_messages::encode(turn),
        WireApi::GoogleGenerativeAi => google_generative_ai::encode(turn),
    }
}

/// [`turn`] as a 200 response with the provider's content type.
pub fn response(api: WireApi, t: &Turn) -> MockResponse {
    MockResponse::sse(turn(api, t)).with_header("content-type", "text/event-stream; charset=utf-8")
}

/// A 429 in `api`'s error shape, with `retry-after: 0` so a retry waits only for the backoff.
pub fn rate_limited(api: WireApi) -> MockResponse {
    let message = "Rate limit reached for requests per minute. Please try again in 1s.";
    let body = match api {
        WireApi::OpenAiCompletions | WireApi::OpenAiResponses => json!({"error": {
            "message": message, "type": "requests", "param": null, "code": "rate_limit_exceeded"
        }}),
        WireApi::AnthropicMessages => json!({"type": "error", "error": {
            "type": "rate_limit_error", "message": message
        }}),
        WireApi::GoogleGenerativeAi => json!({"error": {
            "code": 429, "message": message, "status": "RESOURCE_EXHAUSTED"
        }}),
    };
    MockResponse::json(429, body).with_header("retry-after", "0")
}

/// A 400 saying the prompt does not fit the context window, worded as `api`'s provider words it.
pub fn context_overflow(api: WireApi) -> MockResponse {
    let body = match api {
        WireApi::OpenAiCompletions => json!({"error": {
            "message": "This model's maximum context length is 4096 tokens. However, your \
                        messages resulted in 5120 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"
        }}),
        WireApi::OpenAiResponses => json!({"error": {
            "message": "Your input exceeds the context window of this model. Please adjust your \
                        input and try again.",
            "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"
        }}),
        WireApi::AnthropicMessages => json!({"type": "error", "error": {
            "type": "invalid_request_error", "message": "prompt is too long: 5120 tokens > 4096 maximum"
        }}),
        WireApi::GoogleGenerativeAi => json!({"error": {
            "code": 400, "status": "INVALID_ARGUMENT",
            "message": "The input token count (5120) exceeds the maximum number of tokens allowed (4096)."
        }}),
    };
    MockResponse::json(400, body)
}

/// `text` in pieces of at most `size` characters (never splitting a character).
fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (count, (at, _)) in text.char_indices().enumerate() {
        if count > 0 && count % size == 0 {
            out.push(&text[start..at]);
            start = at;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// One `data:` event (and an `event:` line when `name` is given).
fn event(out: &mut String, name: Option<&str>, data: &Value) {
    if let Some(name) = name {
        out.push_str(&format!("event: {name}\n"));
    }
    out.push_str(&format!("data: {data}\n\n"));
}

/// The model name encoders put where the provider echoes its model.
const MODEL: &str = "mock-model";
/// The creation time encoders report (seconds since the epoch).
const CREATED: u64 = 1_754_300_000;

#[cfg(test)]
mod tests;
