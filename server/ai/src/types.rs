//! Messages, content blocks, usage and stop reasons, with pi's field names and JSON shapes.
//!
//! These types are what session files store, so their serialized form must match what pi writes
//! byte for byte where it can (field names, tags, optional fields omitted when absent). Field order
//! follows pi's object construction order so a Tandem session line reads like a pi one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Api;

/// Milliseconds since the Unix epoch, as pi stores message timestamps.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Plain text, optionally with a provider signature (OpenAI Responses message metadata).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Provider metadata needed to replay this block to the same provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

/// Model reasoning, possibly redacted (the opaque payload is then in the signature).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// The reasoning text (empty when redacted).
    pub thinking: String,
    /// Provider signature or encrypted reasoning item, replayed to the same model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// True when a safety filter redacted the reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
}

/// A base64 image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded bytes.
    pub data: String,
    /// For example `image/png`.
    pub mime_type: String,
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Provider-assigned call id; tool results refer to it.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Parsed arguments (an object for well-behaved models).
    pub arguments: Value,
    /// Google: opaque signature that lets the model reuse its thought context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

/// A block of user or tool-result content: text or an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserBlock {
    /// Text.
    Text(TextContent),
    /// Image.
    Image(ImageContent),
}

/// A block of assistant content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistantBlock {
    /// Text.
    Text(TextContent),
    /// Reasoning.
    Thinking(ThinkingContent),
    /// A tool call.
    ToolCall(ToolCall),
}

/// User content: pi accepts a bare string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// A bare string.
    Text(String),
    /// Text and image blocks.
    Blocks(Vec<UserBlock>),
}

impl UserContent {
    /// The content as blocks (a bare string becomes one text block).
    pub fn blocks(&self) -> Vec<UserBlock> {
        match self {
            UserContent::Text(text) => vec![UserBlock::Text(TextContent {
                text: text.clone(),
                text_signature: None,
            })],
            UserContent::Blocks(blocks) => blocks.clone(),
        }
    }

    /// All text of the content joined with newlines (images skipped).
    pub fn text(&self) -> String {
        match self {
            UserContent::Text(text) => text.clone(),
            UserContent::Blocks(blocks) => join_text(blocks),
        }
    }
}

/// Joins the text blocks of a user or tool-result content list with newlines.
pub fn join_text(blocks: &[UserBlock]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect();
    texts.join("\n")
}

/// Cost in dollars, split like [`Usage`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct UsageCost {
    /// Input tokens' cost.
    pub input: f64,
    /// Output tokens' cost.
    pub output: f64,
    /// Cache reads' cost.
    pub cache_read: f64,
    /// Cache writes' cost.
    pub cache_write: f64,
    /// Sum of the above.
    pub total: f64,
    /// Whether `total` is what the provider reported (pi 1.6; `false` once computed from the
    /// model's prices, absent on a partial message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
}

/// Token usage of one model call, with its cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens (reasoning included).
    pub output: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write: u64,
    /// The part of `output` spent reasoning, where the provider says (pi 1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    /// Total tokens as the provider counts them.
    pub total_tokens: u64,
    /// Cost of this usage.
    pub cost: UsageCost,
}

impl Usage {
    /// Adds `other`'s tokens and cost (several model calls counted as one, like a compaction's
    /// two summaries). A sum is no provider's report: `totalFromProvider` is left out.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.reasoning = match (self.reasoning, other.reasoning) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        self.total_tokens += other.total_tokens;
        self.cost.input += other.cost.input;
        self.cost.output += other.cost.output;
        self.cost.cache_read += other.cost.cache_read;
        self.cost.cache_write += other.cost.cache_write;
        self.cost.total += other.cost.total;
        self.cost.total_from_provider = None;
    }
}

/// Why an assistant message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The model finished its answer.
    Stop,
    /// The output token limit cut the answer off.
    Length,
    /// The model wants tool results.
    ToolUse,
    /// The request failed.
    Error,
    /// The request was cancelled.
    Aborted,
}

impl StopReason {
    /// The name pi uses.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
        }
    }

    /// True for `error` and `aborted`, the reasons that end a stream with an `error` event.
    pub fn is_failure(self) -> bool {
        matches!(self, StopReason::Error | StopReason::Aborted)
    }
}

/// A user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Text, or text and images.
    pub content: UserContent,
    /// Milliseconds since the epoch.
    pub timestamp: i64,
}

impl UserMessage {
    /// A text message stamped now, in pi's block form.
    pub fn text(text: impl Into<String>) -> Self {
        UserMessage {
            content: UserContent::Blocks(vec![UserBlock::Text(TextContent {
                text: text.into(),
                text_signature: None,
            })]),
            timestamp: now_millis(),
        }
    }
}

/// An assistant message: the result of one model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks in the order the model produced them.
    pub content: Vec<AssistantBlock>,
    /// The wire API that produced it.
    pub api: Api,
    /// The provider name (e.g. `openai`, or a custom provider from models.json).
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Token usage and cost.
    pub usage: Usage,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Milliseconds since the epoch when the call started.
    pub timestamp: i64,
    /// The provider's response id, when it sends one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// What went wrong, for `error` and `aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The provider's own stop reason (`tool_calls`, `end_turn`, …), as pi 1.6 keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    /// How long the call took, from its start to its last event (pi 1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The thinking level the call was made at (pi 1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<crate::model::ThinkingLevel>,
    /// What kind of failure `error_message` describes, for the retry decision; known only for
    /// a call made in this process (never saved).
    #[serde(skip)]
    pub failure: Option<crate::error::FailureKind>,
}

impl AssistantMessage {
    /// An empty message for `model`, stamped now, as a stream starts.
    pub fn empty(api: Api, provider: impl Into<String>, model: impl Into<String>) -> Self {
        AssistantMessage {
            content: Vec::new(),
            api,
            provider: provider.into(),
            model: model.into(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            timestamp: now_millis(),
            response_id: None,
            error_message: None,
            raw_stop_reason: None,
            duration_ms: None,
            thinking_level: None,
            failure: None,
        }
    }

    /// All text blocks joined (no separator), as print mode shows an answer.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let AssistantBlock::Text(t) = block {
                out.push_str(&t.text);
            }
        }
        out
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            AssistantBlock::ToolCall(call) => Some(call),
            _ => None,
        })
    }
}

/// The result of a tool call, sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call this answers.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// Text and images for the model.
    pub content: Vec<UserBlock>,
    /// Structured details for the UI (e.g. the edit tool's diff); never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// True when the tool failed.
    pub is_error: bool,
    /// How long the tool ran (pi 1.6; absent when it did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Milliseconds since the epoch.
    pub timestamp: i64,
    /// Usage spent by the tool itself, when it called a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tools that this result made available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_tool_names: Option<Vec<String>>,
}

impl ToolResultMessage {
    /// A text-only result stamped now.
    pub fn text(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        ToolResultMessage {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            content: vec![UserBlock::Text(TextContent {
                text: text.into(),
                text_signature: None,
            })],
            details: None,
            is_error,
            duration_ms: None,
            timestamp: now_millis(),
            usage: None,
            added_tool_names: None,
        }
    }
}

/// A message the model sees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// From the user.
    User(UserMessage),
    /// From the model.
    Assistant(AssistantMessage),
    /// A tool's answer.
    ToolResult(ToolResultMessage),
}

/// A tool offered to the model: its name, description and JSON-schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Tool name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of its arguments (an object schema).
    pub parameters: Value,
}

/// Everything one model call needs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assistant_message_round_trips_pi_json() {
        let line = r#"{"role":"assistant","content":[{"type":"text","text":"Let me read the file."},{"type":"toolCall","id":"call_0_57c7c3","name":"read","arguments":{"path":"hello.txt"}}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1796022806062,"responseId":"chatcmpl-535a3caf8262"}"#;
        let msg: Message = serde_json::from_str(line).expect("pi assistant message parses");
        let Message::Assistant(a) = &msg else {
            panic!("expected assistant")
        };
        assert_eq!(a.stop_reason, StopReason::ToolUse);
        assert_eq!(a.tool_calls().count(), 1);
        // Costs are floats in Rust and integers in pi's JSON; everything else is identical.
        let back = serde_json::to_value(&msg).expect("serializes");
        let orig: Value = serde_json::from_str(line).expect("valid json");
        assert_eq!(back["content"], orig["content"]);
        assert_eq!(back["responseId"], orig["responseId"]);
        assert_eq!(back["usage"]["totalTokens"], json!(120));
    }

    #[test]
    fn user_content_accepts_string_or_blocks() {
        let a: Message =
            serde_json::from_value(json!({"role":"user","content":"hi","timestamp":1}))
                .expect("string content");
        let b: Message = serde_json::from_value(
            json!({"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}),
        )
        .expect("block content");
        match (a, b) {
            (Message::User(a), Message::User(b)) => assert_eq!(a.content.text(), b.content.text()),
            _ => panic!("expected user messages"),
        }
    }

    #[test]
    fn tool_result_serializes_with_pi_names() {
        let r = ToolResultMessage::text("c1", "read", "ok", false);
        let v = serde_json::to_value(Message::ToolResult(r)).expect("serializes");
        assert_eq!(v["role"], "toolResult");
        assert_eq!(v["toolCallId"], "c1");
        assert_eq!(v["isError"], false);
        assert!(v.get("details").is_none());
    }
}
