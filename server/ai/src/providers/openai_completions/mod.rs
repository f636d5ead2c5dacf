//! OpenAI Chat Completions (`POST {baseUrl}/chat/completions`, streamed), the API that OpenAI
//! and most other services and local servers (Ollama, llama.cpp, vLLM, OpenRouter, Groq,
//! DeepSeek, xAI, Cerebras, Mistral…) speak.
//!
//! The modules follow the call: [`compat`] settles which dialect the server speaks, `messages`
//! and `request` build the body from it, `decode` turns the streamed chunks into writer calls.
//! The dialect is resolved once per call so the rest never guesses.

pub mod compat;
mod decode;
mod ids;
mod messages;
mod request;

#[cfg(test)]
mod tests;

pub use compat::{resolve_compat, ResolvedCompat};

use crate::error::ProviderError;
use crate::http::{EventSource, HttpRequest};
use crate::model::Model;
use crate::options::StreamOptions;
use crate::stream::StreamWriter;
use crate::types::{Context, StopReason};

/// Builds the streaming request: URL from the model's base URL, bearer auth, the model's and the
/// call's extra headers (the call's win), and the JSON body.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<HttpRequest, ProviderError> {
    let base = model.base_url.trim().trim_end_matches('/');
    if base.is_empty() {
        return Err(ProviderError::Request(format!(
            "Model {}/{} has no baseUrl; set \"baseUrl\" for it in models.json (for example \
             https://api.openai.com/v1 or http://localhost:11434/v1)",
            model.provider, model.id
        )));
    }
    let compat = resolve_compat(model);
    let body = request::build_body(model, context, options, &compat);

    let mut headers = Vec::new();
    if !api_key.is_empty() {
        headers.push(("Authorization".to_string(), format!("Bearer {api_key}")));
    }
    for (name, value) in model.headers.iter().flatten().chain(&options.headers) {
        headers.push((name.clone(), value.clone()));
    }
    Ok(HttpRequest {
        provider: model.provider.clone(),
        url: format!("{base}/chat/completions"),
        headers,
        body,
        secrets: vec![api_key.to_string()],
    })
}

/// Decodes the streamed chunks into `writer`; returns the stop reason, or the error the stream
/// reported or ended with.
pub async fn decode(
    source: impl EventSource,
    writer: &mut StreamWriter,
    model: &Model,
) -> Result<StopReason, ProviderError> {
    decode::decode(source, writer, model).await
}
