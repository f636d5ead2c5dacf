//! The conversation in Chat Completions form: `system`/`developer`, `user`, `assistant` (text and
//! `tool_calls`) and `tool` messages.
//!
//! History may come from another model, so it first goes through the shared cross-provider
//! transform (thinking of other models becomes text, ids are rewritten for this server). What is
//! left is this API's own quirks: images in tool results are not allowed in `tool` messages and
//! travel in a following user message; reasoning is replayed in the field it arrived in; some
//! servers need a bridging assistant message or the tool's name.

use serde_json::{json, Map, Value};

use crate::model::Model;
use crate::transform::transform_messages;
use crate::types::{
    join_text, AssistantBlock, AssistantMessage, Context, ImageContent, Message, ToolResultMessage,
    UserBlock, UserContent,
};

use super::compat::ResolvedCompat;
use super::ids::IdNormalizer;

/// The bridging text some servers need between tool results and a user message.
const BRIDGE_TEXT: &str = "I have processed the tool results.";
/// Introduces images that tool results produced.
const TOOL_IMAGES_TEXT: &str = "Attached image(s) from tool result:";
/// Stands for a tool result that has only images.
const SEE_IMAGE_TEXT: &str = "(see attached image)";
/// Stands for images the model cannot take.
const IMAGE_OMITTED_TEXT: &str = "(image omitted: model does not support images)";
/// The delta fields reasoning can stream in; a thinking block's signature names one of them.
pub const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
    ToolResult,
}

/// Converts the system prompt and conversation of `context` into the `messages` array.
pub fn convert_messages(model: &Model, context: &Context, compat: &ResolvedCompat) -> Vec<Value> {
    let ids = IdNormalizer::new(compat.tool_id_style);
    let history = transform_messages(&context.messages, model, |id| ids.normalize(id));
    let mut out = Vec::with_capacity(history.len() + 1);

    if let Some(prompt) = context.system_prompt.as_deref().filter(|p| !p.is_empty()) {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({ "role": role, "content": prompt }));
    }

    let mut last_role: Option<Role> = None;
    let mut i = 0;
    while i < history.len() {
        match &history[i] {
            Message::User(user) => {
                if compat.requires_assistant_after_tool_result
                    && last_role == Some(Role::ToolResult)
                {
                    out.push(bridge());
                }
                out.push(user_message(&user.content, model));
                last_role = Some(Role::User);
                i += 1;
            }
            Message::Assistant(assistant) => {
                if let Some(message) = assistant_message(assistant, compat) {
                    out.push(message);
                }
                last_role = Some(Role::Assistant);
                i += 1;
            }
            Message::ToolResult(_) => {
                // Consecutive results are answered together; their images follow all of them.
                let mut images = Vec::new();
                while let Some(Message::ToolResult(result)) = history.get(i) {
                    out.push(tool_message(result, model, compat));
                    if model.accepts_images() {
                        images.extend(result.content.iter().filter_map(|b| match b {
                            UserBlock::Image(image) => Some(image_part(image)),
                            UserBlock::Text(_) => None,
                        }));
                    }
                    i += 1;
                }
                if images.is_empty() {
                    last_role = Some(Role::ToolResult);
                } else {
                    if compat.requires_assistant_after_tool_result {
                        out.push(bridge());
                    }
                    let mut parts = vec![json!({ "type": "text", "text": TOOL_IMAGES_TEXT })];
                    parts.extend(images);
                    out.push(json!({ "role": "user", "content": parts }));
                    last_role = Some(Role::User);
                }
            }
        }
    }
    out
}

fn bridge() -> Value {
    json!({ "role": "assistant", "content": BRIDGE_TEXT })
}

fn image_part(image: &ImageContent) -> Value {
    json!({
        "type": "image_url",
        "image_url": { "url": format!("data:{};base64,{}", image.mime_type, image.data) },
    })
}

/// A user message; images are dropped for text-only models (a placeholder keeps an image-only
/// message from vanishing, so the turn order stays intact).
fn user_message(content: &UserContent, model: &Model) -> Value {
    let blocks = match content {
        UserContent::Text(text) => return json!({ "role": "user", "content": text }),
        UserContent::Blocks(blocks) => blocks,
    };
    let parts: Vec<Value> = blocks
        .iter()
        .filter_map(|block| match block {
            UserBlock::Text(t) => Some(json!({ "type": "text", "text": t.text })),
            UserBlock::Image(image) if model.accepts_images() => Some(image_part(image)),
            UserBlock::Image(_) => None,
        })
        .collect();
    if parts.is_empty() && !blocks.is_empty() {
        return json!({ "role": "user", "content": IMAGE_OMITTED_TEXT });
    }
    json!({ "role": "user", "content": parts })
}

/// An assistant message, or `None` when it has neither content nor tool calls (servers reject
/// empty assistant messages).
fn assistant_message(message: &AssistantMessage, compat: &ResolvedCompat) -> Option<Value> {
    let mut texts = Vec::new();
    let mut thoughts = Vec::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            AssistantBlock::Text(t) if !t.text.trim().is_empty() => texts.push(t.text.as_str()),
            AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => thoughts.push(t),
            AssistantBlock::ToolCall(call) => calls.push(call),
            _ => {}
        }
    }

    let text = texts.concat();
    let mut content = if !text.is_empty() {
        json!(text)
    } else if compat.requires_assistant_after_tool_result {
        json!("")
    } else {
        Value::Null
    };

    let mut reasoning_field = None;
    if let Some(first) = thoughts.first() {
        let joined: Vec<&str> = thoughts.iter().map(|t| t.thinking.as_str()).collect();
        if compat.requires_thinking_as_text {
            // Plain text without tags, so the model does not learn to imitate them.
            let mut parts = vec![json!({ "type": "text", "text": joined.join("\n\n") })];
            if !text.is_empty() {
                parts.push(json!({ "type": "text", "text": text }));
            }
            content = json!(parts);
        } else if let Some(field) = first
            .thinking_signature
            .as_deref()
            .filter(|s| REASONING_FIELDS.contains(s))
        {
            // Sent back in the field it arrived in (llama.cpp and gpt-oss need this).
            reasoning_field = Some((field.to_string(), json!(joined.join("\n"))));
        }
    }

    let has_content = match &content {
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    if !has_content && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    out.insert("content".into(), content);
    if let Some((field, value)) = reasoning_field {
        out.insert(field, value);
    }

    if !calls.is_empty() {
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": serde_json::to_string(&call.arguments)
                            .unwrap_or_else(|_| "{}".into()),
                    },
                })
            })
            .collect();
        out.insert("tool_calls".into(), json!(tool_calls));
        // OpenRouter's encrypted reasoning rides on the calls it belongs to.
        let details: Vec<Value> = calls
            .iter()
            .filter_map(|c| c.thought_signature.as_deref())
            .filter_map(|s| serde_json::from_str::<Value>(s).ok())
            .filter(|v| !v.is_null())
            .collect();
        if !details.is_empty() {
            out.insert("reasoning_details".into(), json!(details));
        }
    }
    Some(Value::Object(out))
}

/// A `tool` message carrying the result's text (images travel separately).
fn tool_message(result: &ToolResultMessage, model: &Model, compat: &ResolvedCompat) -> Value {
    let text = join_text(&result.content);
    let content = if !text.is_empty() {
        text
    } else if !model.accepts_images()
        && result
            .content
            .iter()
            .any(|b| matches!(b, UserBlock::Image(_)))
    {
        IMAGE_OMITTED_TEXT.to_string()
    } else {
        SEE_IMAGE_TEXT.to_string()
    };
    let mut out = json!({
        "role": "tool",
        "content": content,
        "tool_call_id": result.tool_call_id,
    });
    if compat.requires_tool_result_name && !result.tool_name.is_empty() {
        out["name"] = json!(result.tool_name);
    }
    out
}

/// OpenRouter passes Anthropic prompt caching through only with an explicit breakpoint: mark the
/// last text of the last user or assistant message.
pub fn add_open_router_cache_breakpoint(model: &Model, messages: &mut [Value]) {
    if model.provider != "openrouter" || !model.id.starts_with("anthropic/") {
        return;
    }
    for message in messages.iter_mut().rev() {
        if !matches!(message["role"].as_str(), Some("user" | "assistant")) {
            continue;
        }
        let cache = json!({ "type": "ephemeral" });
        match &mut message["content"] {
            Value::String(text) => {
                let text = std::mem::take(text);
                message["content"] =
                    json!([{ "type": "text", "text": text, "cache_control": cache }]);
                return;
            }
            Value::Array(parts) => {
                if let Some(part) = parts.iter_mut().rev().find(|p| p["type"] == "text") {
                    part["cache_control"] = cache;
                    return;
                }
            }
            _ => {}
        }
    }
}
