//! The `streamGenerateContent` request: URL, headers and JSON body.
//!
//! The body is the REST form of what pi's Google SDK call sends: `contents`, a
//! `systemInstruction` turn, `tools`, and a `generationConfig` holding the output limit,
//! temperature and `thinkingConfig`. The key travels in the `x-goog-api-key` header, never in
//! the URL, so it cannot leak into logs that print URLs.

use serde::Serialize;

use super::convert::{self, Content, Part, ToolGroup};
use super::thinking::{thinking_config, ThinkingConfig};
use crate::error::ProviderError;
use crate::http::HttpRequest;
use crate::model::Model;
use crate::options::StreamOptions;
use crate::types::Context;

/// Where Gemini lives when a model names no base URL.
const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    contents: Vec<Content>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<Content>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ToolGroup>>,
    generation_config: GenerationConfig,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    max_output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_config: Option<ThinkingConfig>,
}

/// Builds the streaming request for one call to `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<HttpRequest, ProviderError> {
    let body = Body {
        contents: convert::contents(model, &context.messages),
        // The SDK pi uses wraps a string instruction as a user turn; sent the same way.
        system_instruction: context
            .system_prompt
            .as_deref()
            .filter(|prompt| !prompt.is_empty())
            .map(|prompt| Content {
                role: "user",
                parts: vec![Part::text(prompt)],
            }),
        tools: convert::tools(&context.tools),
        generation_config: GenerationConfig {
            temperature: options.temperature,
            max_output_tokens: options.max_tokens_for(model.max_tokens),
            thinking_config: thinking_config(model, options.reasoning, &options.thinking_budgets),
        },
    };
    let body = serde_json::to_value(&body).map_err(|e| {
        ProviderError::Request(format!(
            "Could not encode the request for {}/{}: {e}",
            model.provider, model.id
        ))
    })?;
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("x-goog-api-key".to_string(), api_key.to_string()),
    ];
    if let Some(extra) = &model.headers {
        headers.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    headers.extend(options.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(HttpRequest {
        provider: model.provider.clone(),
        url: stream_url(model)?,
        headers,
        body,
        secrets: vec![api_key.to_string()],
    })
}

/// `{baseUrl}/models/{id}:streamGenerateContent?alt=sse`. Ids already carrying their resource
/// prefix (`models/…`, `tunedModels/…`) are used as they are.
fn stream_url(model: &Model) -> Result<String, ProviderError> {
    let id = model.id.as_str();
    if id.is_empty()
        || id
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '?' | '#' | '%'))
    {
        return Err(ProviderError::Request(format!(
            "The model id {id:?} of provider {} cannot be used in a Gemini URL; \
             fix the id in models.json",
            model.provider
        )));
    }
    let base = model.base_url.trim().trim_end_matches('/');
    let base = if base.is_empty() {
        DEFAULT_BASE_URL
    } else {
        base
    };
    let resource = if id.starts_with("models/") || id.starts_with("tunedModels/") {
        id.to_string()
    } else {
        format!("models/{id}")
    };
    Ok(format!("{base}/{resource}:streamGenerateContent?alt=sse"))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
