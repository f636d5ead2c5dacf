//! The JSON body of a streaming Chat Completions request.
//!
//! Everything server-specific was settled in [`ResolvedCompat`]; this module only decides, field
//! by field, what to send. Fields a server may reject (`store`, `stream_options`, `strict`, the
//! reasoning switches) are sent only when the compat settings allow them.

use serde_json::{json, Map, Value};

use crate::model::{MaxTokensField, Model, ThinkingLevel};
use crate::options::StreamOptions;
use crate::types::{AssistantBlock, Context, Message, Tool};

use super::compat::{ReasoningFormat, ResolvedCompat};
use super::messages::{add_open_router_cache_breakpoint, convert_messages};

/// Builds the request body for `model`, `context` and `options` under `compat`.
pub fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &ResolvedCompat,
) -> Value {
    let mut messages = convert_messages(model, context, compat);
    add_open_router_cache_breakpoint(model, &mut messages);

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }

    let max_tokens = options.max_tokens_for(model.max_tokens);
    if max_tokens > 0 {
        let field = match compat.max_tokens_field {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        };
        body.insert(field.into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }

    if !context.tools.is_empty() {
        let tools = context.tools.iter().map(|t| tool(t, compat)).collect();
        body.insert("tools".into(), Value::Array(tools));
    } else if has_tool_history(&context.messages) {
        // Proxies in front of Anthropic reject tool calls in history without a tools list.
        body.insert("tools".into(), json!([]));
    }

    add_reasoning(&mut body, model, options.reasoning, compat);

    let routing = &compat.open_router_routing;
    if model.base_url.contains("openrouter.ai")
        && (routing.only.is_some() || routing.order.is_some())
    {
        body.insert("provider".into(), json!(routing));
    }
    Value::Object(body)
}

fn tool(tool: &Tool, compat: &ResolvedCompat) -> Value {
    let mut function = json!({
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    });
    if compat.supports_strict_mode {
        function["strict"] = json!(false);
    }
    json!({ "type": "function", "function": function })
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a
            .content
            .iter()
            .any(|b| matches!(b, AssistantBlock::ToolCall(_))),
        Message::User(_) => false,
    })
}

/// The reasoning switch in the server's format. Boolean formats always say whether thinking is
/// on for a reasoning model; effort formats are sent only when thinking is on.
fn add_reasoning(
    body: &mut Map<String, Value>,
    model: &Model,
    requested: ThinkingLevel,
    compat: &ResolvedCompat,
) {
    if !model.reasoning {
        return;
    }
    let level = model.effective_thinking(requested);
    let on = level != ThinkingLevel::Off;
    match compat.reasoning_format {
        ReasoningFormat::Zai | ReasoningFormat::Qwen => {
            body.insert("enable_thinking".into(), json!(on));
        }
        ReasoningFormat::QwenChatTemplate => {
            body.insert(
                "chat_template_kwargs".into(),
                json!({ "enable_thinking": on }),
            );
        }
        ReasoningFormat::Effort | ReasoningFormat::OpenRouter => {
            if !on || !compat.supports_reasoning_effort {
                return;
            }
            let effort = compat
                .reasoning_effort_map
                .get(level.as_str())
                .cloned()
                .unwrap_or_else(|| level.as_str().to_string());
            if compat.reasoning_format == ReasoningFormat::OpenRouter {
                body.insert("reasoning".into(), json!({ "effort": effort }));
            } else {
                body.insert("reasoning_effort".into(), json!(effort));
            }
        }
    }
}
