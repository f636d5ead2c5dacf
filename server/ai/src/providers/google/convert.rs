//! The conversation as Gemini `contents`, and tools as `functionDeclarations`.
//!
//! Gemini has two roles, `user` and `model`; tool results are `functionResponse` parts of a user
//! turn, and all results answering one model turn must share that turn (consecutive results are
//! merged). Thought signatures are replayed only to the model that made them and only when they
//! are well-formed base64, since Gemini rejects the whole request otherwise. Gemini 3 insists on a
//! signature for every function call, so calls recorded without one (from another model) carry
//! the documented sentinel that skips the check.

use serde::Serialize;
use serde_json::{json, Value};

use super::thinking::is_gemini3_model;
use crate::model::Model;
use crate::transform::{sanitize_tool_call_id, transform_messages};
use crate::types::{
    AssistantBlock, AssistantMessage, ImageContent, Message, Tool, ToolResultMessage, UserBlock,
    UserContent, UserMessage,
};

/// Tells Gemini to accept a function call that has no signature of its own.
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Content {
    /// `user` or `model`.
    pub role: &'static str,
    /// What was said.
    pub parts: Vec<Part>,
}

/// One piece of a turn; exactly one of the content fields is set.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Part {
    /// Marks a thought summary being replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought: Option<bool>,
    /// Text, or a thought's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// An image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline_data: Option<Blob>,
    /// A tool call the model made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall>,
    /// A tool's result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_response: Option<FunctionResponse>,
    /// The model's opaque signature, replayed to the model that made it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

impl Part {
    /// A plain text part.
    pub fn text(text: impl Into<String>) -> Part {
        Part {
            text: Some(text.into()),
            ..Part::default()
        }
    }

    fn image(image: &ImageContent) -> Part {
        Part {
            inline_data: Some(Blob {
                mime_type: image.mime_type.clone(),
                data: image.data.clone(),
            }),
            ..Part::default()
        }
    }
}

/// Inline bytes (images), base64.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Blob {
    /// For example `image/png`.
    pub mime_type: String,
    /// Base64 bytes.
    pub data: String,
}

/// A replayed tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct FunctionCall {
    /// Tool name.
    pub name: String,
    /// Arguments object.
    pub args: Value,
    /// Call id, for the models behind Google's APIs that need one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A tool's result: `{output}` on success, `{error}` on failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct FunctionResponse {
    /// Tool name (Gemini matches results to calls by name and order).
    pub name: String,
    /// `{"output": text}` or `{"error": text}`.
    pub response: Value,
    /// Gemini 3: images returned by the tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<Part>>,
    /// The call's id, for the models that need one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The `tools` entry: every tool in one group of declarations.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolGroup {
    /// The tools.
    pub function_declarations: Vec<FunctionDeclaration>,
}

/// One tool. The schema goes in `parametersJsonSchema`, which takes full JSON Schema
/// (`anyOf`, `const`, …), so it is sent unchanged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FunctionDeclaration {
    /// Tool name.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters_json_schema: Value,
}

/// `tools` for the request, `None` when there are none.
pub(super) fn tools(tools: &[Tool]) -> Option<Vec<ToolGroup>> {
    if tools.is_empty() {
        return None;
    }
    let function_declarations = tools
        .iter()
        .map(|tool| FunctionDeclaration {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters_json_schema: tool.parameters.clone(),
        })
        .collect();
    Some(vec![ToolGroup {
        function_declarations,
    }])
}

/// Models reached through Google's APIs that need ids on calls and results (Claude and
/// gpt-oss behind Google endpoints); Gemini itself matches results by name and order.
fn requires_tool_call_id(model: &Model) -> bool {
    model.id.starts_with("claude-") || model.id.starts_with("gpt-oss-")
}

/// The conversation as `contents`, prepared for `model`.
pub(super) fn contents(model: &Model, messages: &[Message]) -> Vec<Content> {
    let needs_ids = requires_tool_call_id(model);
    let messages = transform_messages(messages, model, |id| {
        if needs_ids {
            sanitize_tool_call_id(id, 64)
        } else {
            id.to_string()
        }
    });
    let mut out: Vec<Content> = Vec::new();
    for message in &messages {
        match message {
            Message::User(user) => out.extend(user_turn(model, user)),
            Message::Assistant(assistant) => out.extend(model_turn(model, assistant)),
            Message::ToolResult(result) => push_tool_result(model, result, &mut out),
        }
    }
    out
}

fn user_turn(model: &Model, message: &UserMessage) -> Option<Content> {
    let parts = match &message.content {
        UserContent::Text(text) => vec![Part::text(text.as_str())],
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                UserBlock::Text(t) => Some(Part::text(t.text.as_str())),
                UserBlock::Image(image) if model.accepts_images() => Some(Part::image(image)),
                UserBlock::Image(_) => None,
            })
            .collect(),
    };
    (!parts.is_empty()).then_some(Content {
        role: "user",
        parts,
    })
}

fn model_turn(model: &Model, message: &AssistantMessage) -> Option<Content> {
    let same_model = message.provider == model.provider && message.model == model.id;
    let signature = |sig: &Option<String>| {
        sig.as_deref()
            .filter(|s| same_model && is_base64(s))
            .map(String::from)
    };
    let mut parts = Vec::new();
    for block in &message.content {
        match block {
            AssistantBlock::Text(t) => {
                if t.text.trim().is_empty() {
                    continue;
                }
                parts.push(Part {
                    thought_signature: signature(&t.text_signature),
                    ..Part::text(t.text.as_str())
                });
            }
            AssistantBlock::Thinking(t) => {
                if t.thinking.trim().is_empty() {
                    continue;
                }
                if same_model {
                    parts.push(Part {
                        thought: Some(true),
                        thought_signature: signature(&t.thinking_signature),
                        ..Part::text(t.thinking.as_str())
                    });
                } else {
                    parts.push(Part::text(t.thinking.as_str()));
                }
            }
            AssistantBlock::ToolCall(call) => {
                let thought_signature = signature(&call.thought_signature)
                    .or_else(|| is_gemini3_model(&model.id).then(|| SKIP_SIGNATURE.to_string()));
                let args = if call.arguments.is_null() {
                    json!({})
                } else {
                    call.arguments.clone()
                };
                parts.push(Part {
                    function_call: Some(FunctionCall {
                        name: call.name.clone(),
                        args,
                        id: requires_tool_call_id(model).then(|| call.id.clone()),
                    }),
                    thought_signature,
                    ..Part::default()
                });
            }
        }
    }
    (!parts.is_empty()).then_some(Content {
        role: "model",
        parts,
    })
}

fn push_tool_result(model: &Model, result: &ToolResultMessage, out: &mut Vec<Content>) {
    let text = crate::types::join_text(&result.content);
    let images: Vec<Part> = if model.accepts_images() {
        result
            .content
            .iter()
            .filter_map(|block| match block {
                UserBlock::Image(image) => Some(Part::image(image)),
                UserBlock::Text(_) => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    // Only Gemini 3 takes images inside a function response; older models get them in a
    // user turn of their own right after.
    let nested_images = is_gemini3_model(&model.id);
    let value = if !text.is_empty() {
        text
    } else if !images.is_empty() {
        "(see attached image)".to_string()
    } else {
        String::new()
    };
    let response = if result.is_error {
        json!({ "error": value })
    } else {
        json!({ "output": value })
    };
    let part = Part {
        function_response: Some(FunctionResponse {
            name: result.tool_name.clone(),
            response,
            parts: (nested_images && !images.is_empty()).then(|| images.clone()),
            id: requires_tool_call_id(model).then(|| result.tool_call_id.clone()),
        }),
        ..Part::default()
    };
    match out.last_mut() {
        Some(last)
            if last.role == "user" && last.parts.iter().any(|p| p.function_response.is_some()) =>
        {
            last.parts.push(part)
        }
        _ => out.push(Content {
            role: "user",
            parts: vec![part],
        }),
    }
    if !nested_images && !images.is_empty() {
        let mut parts = vec![Part::text("Tool result image:")];
        parts.extend(images);
        out.push(Content {
            role: "user",
            parts,
        });
    }
}

/// True for standard padded base64 (Gemini declares signatures as bytes; anything else makes
/// the request fail).
fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !body.is_empty()
        && s.len().is_multiple_of(4)
        && s.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_check() {
        assert!(is_base64("CiQBdGVzdA=="));
        assert!(is_base64("abcd"));
        assert!(!is_base64("abc"));
        assert!(!is_base64("ab=c"));
        assert!(!is_base64("a==="));
        assert!(!is_base64("sig-1234"));
        assert!(!is_base64(""));
    }
}
