//! The HTTP request for one Messages call: URL, auth and beta headers, and the body's top-level
//! fields (token limit, temperature, thinking mode, caching).
//!
//! Three auth flavours share the endpoint: an API key (`x-api-key`), an OAuth subscription token
//! (`sk-ant-oat…`, sent as a bearer token with the OAuth beta; Tandem does not borrow another
//! client's identity, so Anthropic may refuse such tokens outside its own apps), and GitHub Copilot's Anthropic proxy (bearer token,
//! its own intent headers, no fine-grained tool streaming).

use serde_json::{json, Map, Value};

use super::messages::{convert_messages, convert_tools, system_blocks};
use super::supports_adaptive_thinking;
use crate::error::ProviderError;
use crate::http::HttpRequest;
use crate::model::{Model, ThinkingLevel};
use crate::options::{CacheRetention, StreamOptions};
use crate::types::{Context, Message, UserBlock, UserContent};

/// Where the API lives when a model names no base URL.
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version every request pins.
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Streams tool arguments in small pieces instead of one burst at the end of the call.
const BETA_TOOL_STREAMING: &str = "fine-grained-tool-streaming-2025-05-14";
/// Thinking between tool calls; built into the adaptive-thinking models, where the beta is
/// deprecated.
const BETA_INTERLEAVED_THINKING: &str = "interleaved-thinking-2025-05-14";
/// Betas that OAuth subscription tokens require.
const BETA_OAUTH: &str = "oauth-2025-04-20";
/// Thinking budget used when the computed one is zero (pi's fallback).
const FALLBACK_BUDGET: u64 = 1024;
/// Output tokens kept free for the answer when the limit squeezes the thinking budget.
const MIN_OUTPUT_TOKENS: u64 = 1024;

/// How the key is presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    ApiKey,
    OAuth,
    Copilot,
}

impl KeyKind {
    fn detect(model: &Model, api_key: &str) -> KeyKind {
        if model.provider == "github-copilot" {
            KeyKind::Copilot
        } else if api_key.contains("sk-ant-oat") {
            KeyKind::OAuth
        } else {
            KeyKind::ApiKey
        }
    }
}

/// The thinking request and the output limit that goes with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Thinking {
    Off,
    /// `thinking: {type: adaptive}` with `output_config.effort`.
    Adaptive(&'static str),
    /// `thinking: {type: enabled, budget_tokens}`.
    Budget(u64),
}

fn plan_thinking(model: &Model, options: &StreamOptions) -> (Thinking, u64) {
    let base = options.max_tokens_for(model.max_tokens);
    let level = model.effective_thinking(options.reasoning);
    if level == ThinkingLevel::Off {
        return (Thinking::Off, base);
    }
    if supports_adaptive_thinking(&model.id) {
        return (Thinking::Adaptive(effort(level, &model.id)), base);
    }
    let mut budget = options
        .thinking_budgets
        .budget(level)
        .unwrap_or(FALLBACK_BUDGET);
    let max_tokens = base.saturating_add(budget).min(model.max_tokens);
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(MIN_OUTPUT_TOKENS);
    }
    if budget == 0 {
        budget = FALLBACK_BUDGET;
    }
    (Thinking::Budget(budget), max_tokens)
}

/// The adaptive-thinking effort for `level`; `xhigh` means `max` on Opus 4.6 (pi 0.73's
/// mapping), and pi 1.6's `max` level is `max` everywhere.
fn effort(level: ThinkingLevel, model_id: &str) -> &'static str {
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh if model_id.contains("opus-4-6") || model_id.contains("opus-4.6") => {
            "max"
        }
        ThinkingLevel::Xhigh => "high",
        ThinkingLevel::Max => "max",
    }
}

/// The `cache_control` marker for the retention preference; the one-hour TTL only exists on
/// Anthropic's own API.
fn cache_control(base_url: &str, retention: CacheRetention) -> Option<Value> {
    match retention {
        CacheRetention::None => None,
        CacheRetention::Long if base_url.contains("api.anthropic.com") => {
            Some(json!({"type": "ephemeral", "ttl": "1h"}))
        }
        CacheRetention::Short | CacheRetention::Long => Some(json!({"type": "ephemeral"})),
    }
}

fn base_url(model: &Model) -> &str {
    let url = model.base_url.trim_end_matches('/');
    if url.is_empty() {
        DEFAULT_BASE_URL
    } else {
        url
    }
}

/// Builds the streaming Messages request for `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<HttpRequest, ProviderError> {
    let auth = KeyKind::detect(model, api_key);
    let base = base_url(model);
    let cache = cache_control(base, options.cache_retention);
    let (thinking, max_tokens) = plan_thinking(model, options);

    let mut body = Map::new();
    body.insert("model".into(), model.id.clone().into());
    body.insert(
        "messages".into(),
        convert_messages(&context.messages, model, cache.as_ref()).into(),
    );
    body.insert("max_tokens".into(), max_tokens.into());
    body.insert("stream".into(), true.into());
    let system = system_blocks(context.system_prompt.as_deref(), cache.as_ref());
    if let Some(system) = system {
        body.insert("system".into(), system);
    }
    // The API rejects a temperature together with extended thinking.
    if let (Some(temperature), Thinking::Off) = (options.temperature, thinking) {
        body.insert("temperature".into(), temperature.into());
    }
    if !context.tools.is_empty() {
        body.insert("tools".into(), convert_tools(&context.tools));
    }
    match thinking {
        Thinking::Off => {}
        Thinking::Adaptive(effort) => {
            body.insert("thinking".into(), json!({"type": "adaptive"}));
            body.insert("output_config".into(), json!({"effort": effort}));
        }
        Thinking::Budget(budget) => {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
    }

    Ok(HttpRequest {
        provider: model.provider.clone(),
        url: format!("{base}/v1/messages"),
        headers: headers(model, context, options, api_key, auth),
        body: Value::Object(body),
        secrets: vec![api_key.to_string()],
    })
}

fn headers(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
    auth: KeyKind,
) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, value: String| headers.push((name.to_string(), value));
    add("content-type", "application/json".into());
    add("accept", "text/event-stream".into());
    add("anthropic-version", ANTHROPIC_VERSION.into());
    match auth {
        KeyKind::ApiKey => add("x-api-key", api_key.into()),
        KeyKind::OAuth | KeyKind::Copilot => add("authorization", format!("Bearer {api_key}")),
    }
    add("anthropic-dangerous-direct-browser-access", "true".into());

    let mut betas: Vec<&str> = Vec::new();
    if auth == KeyKind::OAuth {
        betas.push(BETA_OAUTH);
    }
    if auth != KeyKind::Copilot {
        betas.push(BETA_TOOL_STREAMING);
    }
    if !supports_adaptive_thinking(&model.id) {
        betas.push(BETA_INTERLEAVED_THINKING);
    }
    if !betas.is_empty() {
        add("anthropic-beta", betas.join(","));
    }

    for (name, value) in model.headers.iter().flatten() {
        add(name, value.clone());
    }
    if auth == KeyKind::Copilot {
        let initiator = match context.messages.last() {
            Some(Message::User(_)) | None => "user",
            Some(_) => "agent",
        };
        add("x-initiator", initiator.into());
        add("openai-intent", "conversation-edits".into());
        if has_images(&context.messages) {
            add("copilot-vision-request", "true".into());
        }
    }
    for (name, value) in &options.headers {
        add(name, value.clone());
    }
    headers
}

/// True when any user message or tool result carries an image (Copilot must be told).
fn has_images(messages: &[Message]) -> bool {
    let image = |blocks: &[UserBlock]| blocks.iter().any(|b| matches!(b, UserBlock::Image(_)));
    messages.iter().any(|m| match m {
        Message::User(u) => matches!(&u.content, UserContent::Blocks(b) if image(b)),
        Message::ToolResult(r) => image(&r.content),
        Message::Assistant(_) => false,
    })
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
