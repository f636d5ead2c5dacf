//! Builders for the request tests: models, messages and the body a call sends.

use serde_json::{json, Value};

use super::super::build_request;
use crate::model::{Api, InputKind, Model, ModelCost, ThinkingLevel};
use crate::options::StreamOptions;
use crate::types::{
    AssistantBlock, AssistantMessage, Context, ImageContent, Message, StopReason, TextContent,
    ToolCall, UserBlock, UserContent, UserMessage,
};

/// A model of `provider` at `base_url` that accepts text and images.
pub fn model(provider: &str, base_url: &str, id: &str, reasoning: bool) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: Api::OpenAiCompletions,
        provider: provider.into(),
        base_url: base_url.into(),
        reasoning,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_000,
        headers: None,
        compat: None,
    }
}

/// An OpenAI model (base URL with a trailing slash, which must not double up).
pub fn openai(id: &str, reasoning: bool) -> Model {
    model("openai", "https://api.openai.com/v1/", id, reasoning)
}

/// A user message with bare-string content.
pub fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
    })
}

/// A context with a system prompt and no tools.
pub fn context(messages: Vec<Message>) -> Context {
    Context {
        system_prompt: Some("You are helpful.".into()),
        messages,
        tools: Vec::new(),
    }
}

/// The body `build_request` produces.
pub fn body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    build_request(model, context, options, "sk-test")
        .expect("request builds")
        .body
}

/// Default options at thinking `level`.
pub fn with_level(level: ThinkingLevel) -> StreamOptions {
    StreamOptions {
        reasoning: level,
        ..StreamOptions::default()
    }
}

/// An assistant turn recorded from `model`, ended by tool use.
pub fn assistant(model: &Model, blocks: Vec<AssistantBlock>) -> Message {
    let mut m = AssistantMessage::empty(model.api.clone(), &model.provider, &model.id);
    m.content = blocks;
    m.stop_reason = StopReason::ToolUse;
    Message::Assistant(m)
}

/// A text block.
pub fn text(t: &str) -> AssistantBlock {
    AssistantBlock::Text(TextContent {
        text: t.into(),
        text_signature: None,
    })
}

/// A `read` tool call with id `id`.
pub fn call(id: &str) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({"path": "a.txt"}),
        thought_signature: None,
    })
}

/// A tiny PNG image block.
pub fn image() -> UserBlock {
    UserBlock::Image(ImageContent {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    })
}
