//! Tandem's conversation → Anthropic's `system`, `messages` and `tools` JSON.
//!
//! Anthropic is strict about shape: no empty text blocks, thinking only with its signature,
//! tool results as `tool_result` blocks inside a *user* turn (consecutive results share one turn,
//! which some Anthropic-compatible servers require), tool ids limited to `[A-Za-z0-9_-]{1,64}`.
//! Everything here is a pure mapping so it can be unit-tested on the exact JSON.

use serde_json::{json, Map, Value};

use crate::model::Model;
use crate::transform::{sanitize_tool_call_id, transform_messages};
use crate::types::{AssistantBlock, Message, Tool, UserBlock, UserContent};

/// Stands in for the text of a tool result that holds only images (the API wants some text).
const IMAGE_ONLY_PLACEHOLDER: &str = "(see attached image)";

/// The `system` field: the system prompt as one text block carrying the cache marker when
/// caching is on. `None` when empty.
pub(super) fn system_blocks(prompt: Option<&str>, cache: Option<&Value>) -> Option<Value> {
    let block = |text: &str| {
        let mut b = Map::new();
        b.insert("type".into(), "text".into());
        b.insert("text".into(), text.into());
        if let Some(cache) = cache {
            b.insert("cache_control".into(), cache.clone());
        }
        Value::Object(b)
    };
    let mut blocks = Vec::new();
    if let Some(prompt) = prompt.filter(|p| !p.is_empty()) {
        blocks.push(block(prompt));
    }
    (!blocks.is_empty()).then_some(Value::Array(blocks))
}

/// The `tools` field. Like pi, only the schema's `properties` and `required` are kept, under an
/// object schema.
pub(super) fn convert_tools(tools: &[Tool]) -> Value {
    tools
        .iter()
        .map(|tool| {
            let properties = tool
                .parameters
                .get("properties")
                .cloned()
                .unwrap_or_else(|| json!({}));
            let required = tool
                .parameters
                .get("required")
                .cloned()
                .unwrap_or_else(|| json!([]));
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                },
            })
        })
        .collect()
}

/// The `messages` field for `model`, with the cache marker on the last user turn when `cache` is
/// given.
pub(super) fn convert_messages(
    messages: &[Message],
    model: &Model,
    cache: Option<&Value>,
) -> Vec<Value> {
    let messages = transform_messages(messages, model, |id| sanitize_tool_call_id(id, 64));
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    // True while the last pushed turn is a run of tool results still open for more.
    let mut in_tool_results = false;
    for message in &messages {
        match message {
            Message::User(user) => {
                in_tool_results = false;
                if let Some(content) = user_content(&user.content, model) {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
            Message::Assistant(assistant) => {
                in_tool_results = false;
                let blocks: Vec<Value> = assistant
                    .content
                    .iter()
                    .filter_map(assistant_block)
                    .collect();
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(result) => {
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": result.tool_call_id,
                    "content": tool_result_content(&result.content),
                    "is_error": result.is_error,
                });
                let open_turn = if in_tool_results {
                    out.last_mut()
                        .and_then(|turn| turn.get_mut("content"))
                        .and_then(Value::as_array_mut)
                } else {
                    None
                };
                match open_turn {
                    Some(blocks) => blocks.push(block),
                    None => out.push(json!({"role": "user", "content": [block]})),
                }
                in_tool_results = true;
            }
        }
    }
    if let Some(cache) = cache {
        mark_last_user_turn(&mut out, cache);
    }
    out
}

/// A user turn's content: a bare string stays a string; blocks drop empty text, and images when
/// the model cannot see them. `None` when nothing is left to send.
fn user_content(content: &UserContent, model: &Model) -> Option<Value> {
    match content {
        UserContent::Text(text) => (!text.trim().is_empty()).then(|| Value::from(text.as_str())),
        UserContent::Blocks(blocks) => {
            let converted: Vec<Value> = blocks
                .iter()
                .filter(|block| match block {
                    UserBlock::Text(t) => !t.text.trim().is_empty(),
                    UserBlock::Image(_) => model.accepts_images(),
                })
                .map(user_block)
                .collect();
            (!converted.is_empty()).then_some(Value::Array(converted))
        }
    }
}

fn user_block(block: &UserBlock) -> Value {
    match block {
        UserBlock::Text(t) => json!({"type": "text", "text": t.text}),
        UserBlock::Image(image) => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": image.mime_type, "data": image.data},
        }),
    }
}

/// A tool result's content: joined text when there are no images, else blocks (with a
/// placeholder text first when there is no text at all).
fn tool_result_content(blocks: &[UserBlock]) -> Value {
    let has_image = blocks.iter().any(|b| matches!(b, UserBlock::Image(_)));
    if !has_image {
        return Value::from(crate::types::join_text(blocks));
    }
    let mut out: Vec<Value> = Vec::with_capacity(blocks.len() + 1);
    if !blocks.iter().any(|b| matches!(b, UserBlock::Text(_))) {
        out.push(json!({"type": "text", "text": IMAGE_ONLY_PLACEHOLDER}));
    }
    out.extend(blocks.iter().map(user_block));
    Value::Array(out)
}

/// One assistant block for replay, or `None` when it must not be sent.
fn assistant_block(block: &AssistantBlock) -> Option<Value> {
    match block {
        AssistantBlock::Text(t) => {
            (!t.text.trim().is_empty()).then(|| json!({"type": "text", "text": t.text}))
        }
        AssistantBlock::Thinking(t) if t.redacted == Some(true) => {
            // The opaque payload travels in the signature; without it there is nothing to send.
            let data = t.thinking_signature.as_deref()?;
            Some(json!({"type": "redacted_thinking", "data": data}))
        }
        AssistantBlock::Thinking(t) => {
            if t.thinking.trim().is_empty() {
                return None;
            }
            match t
                .thinking_signature
                .as_deref()
                .filter(|s| !s.trim().is_empty())
            {
                Some(signature) => Some(json!({
                    "type": "thinking",
                    "thinking": t.thinking,
                    "signature": signature,
                })),
                // An unsigned block (an interrupted stream) would be rejected as thinking; plain
                // text keeps the reasoning without tags the model might start imitating.
                None => Some(json!({"type": "text", "text": t.thinking})),
            }
        }
        AssistantBlock::ToolCall(call) => {
            let input = if call.arguments.is_object() {
                call.arguments.clone()
            } else {
                json!({})
            };
            Some(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}))
        }
    }
}

/// Puts the cache marker on the last block of the final turn when that turn is the user's, so
/// the whole conversation up to it is cached.
fn mark_last_user_turn(turns: &mut [Value], cache: &Value) {
    let Some(last) = turns.last_mut() else { return };
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return;
    }
    let Some(content) = last.get_mut("content") else {
        return;
    };
    if let Some(text) = content.as_str() {
        *content = json!([{"type": "text", "text": text, "cache_control": cache}]);
        return;
    }
    let Some(block) = content.as_array_mut().and_then(|b| b.last_mut()) else {
        return;
    };
    let cacheable = matches!(
        block.get("type").and_then(Value::as_str),
        Some("text" | "image" | "tool_result")
    );
    if let (true, Some(block)) = (cacheable, block.as_object_mut()) {
        block.insert("cache_control".into(), cache.clone());
    }
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
