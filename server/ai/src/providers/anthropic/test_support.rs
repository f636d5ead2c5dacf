//! Shared builders for the Anthropic provider's unit tests.

use serde_json::Value;

use super::build_request;
use crate::http::HttpRequest;
use crate::model::{Api, InputKind, Model, ModelCost};
use crate::options::StreamOptions;
use crate::types::{
    AssistantBlock, AssistantMessage, Context, ImageContent, Message, StopReason, TextContent,
    ThinkingContent, ToolCall, UserBlock, UserContent, UserMessage,
};

/// A Claude model as models.json would describe it.
pub(super) fn model(id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: Api::AnthropicMessages,
        provider: "anthropic".into(),
        base_url: "https://api.anthropic.com".into(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: None,
        compat: None,
    }
}

pub(super) fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 0,
    })
}

pub(super) fn context(messages: Vec<Message>) -> Context {
    Context {
        system_prompt: Some("You are helpful.".into()),
        messages,
        tools: Vec::new(),
    }
}

/// The last value of header `name` (later entries override earlier ones, case-insensitively).
pub(super) fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .rev()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

pub(super) fn build(model: &Model, context: &Context, options: &StreamOptions) -> HttpRequest {
    build_request(model, context, options, "sk-ant-api03-key").expect("request builds")
}

pub(super) fn image() -> UserBlock {
    UserBlock::Image(ImageContent {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    })
}

pub(super) fn text_block(text: &str) -> UserBlock {
    UserBlock::Text(TextContent {
        text: text.into(),
        text_signature: None,
    })
}

pub(super) fn assistant_from(
    model_id: &str,
    provider: &str,
    api: Api,
    blocks: Vec<AssistantBlock>,
) -> Message {
    let mut m = AssistantMessage::empty(api, provider, model_id);
    m.content = blocks;
    m.stop_reason = StopReason::ToolUse;
    Message::Assistant(m)
}

pub(super) fn thinking(text: &str, signature: Option<&str>, redacted: bool) -> AssistantBlock {
    AssistantBlock::Thinking(ThinkingContent {
        thinking: text.into(),
        thinking_signature: signature.map(String::from),
        redacted: redacted.then_some(true),
    })
}

pub(super) fn call(id: &str, name: &str, arguments: Value) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        thought_signature: None,
    })
}
