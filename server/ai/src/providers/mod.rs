//! The providers: each turns one wire API's HTTP/SSE into the unified event stream.
//!
//! Each provider module exposes `build_request` (pure: model + context + options → the HTTP
//! request, unit-tested for exactly what is sent) and `decode` (events from an [`EventSource`] →
//! calls on the [`StreamWriter`], returning the stop reason). [`stream`] wires them together in
//! a spawned task that owns cancellation, panics and the single terminal event.

pub mod anthropic;
pub mod google;
mod hash;
pub mod openai_completions;
pub mod openai_responses;
pub mod scripted;

use futures_util::FutureExt;

use crate::error::ProviderError;
use crate::http::{post_sse, EventSource, HttpRequest};
use crate::keys;
use crate::model::{Api, Model};
use crate::options::StreamOptions;
use crate::stream::{AssistantStream, StreamWriter};
use crate::types::{Context, StopReason};

/// Calls `model` with `context`. Never fails directly: every failure arrives as the stream's
/// `error` event. Must be called inside a tokio runtime.
pub fn stream(model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
    let (writer, stream) = AssistantStream::channel(model);
    let model = model.clone();
    let context = context.clone();
    tokio::spawn(run(writer, model, context, options));
    stream
}

async fn run(mut writer: StreamWriter, model: Model, context: Context, options: StreamOptions) {
    writer.start().await;
    let cancel = options.cancel.clone();
    let outcome = {
        let call = std::panic::AssertUnwindSafe(dispatch(&mut writer, &model, &context, &options))
            .catch_unwind();
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(ProviderError::Aborted),
            result = call => match result {
                Ok(result) => result,
                Err(_) => Err(ProviderError::Request(format!(
                    "Internal error in the {} provider (a bug in Tandem); the request was stopped",
                    model.api
                ))),
            },
        }
    };
    match outcome {
        Ok(reason) => writer.finish(reason).await,
        Err(ProviderError::Aborted) => {
            writer
                .fail(StopReason::Aborted, ProviderError::Aborted.to_string())
                .await
        }
        Err(e) => {
            let secrets = secrets(&model, &options);
            let message = crate::http::redact(&e.to_string(), &secrets, &model.provider);
            writer
                .fail_as(StopReason::Error, message, Some(e.kind()))
                .await
        }
    }
}

/// What a request of `model` sends that must never be shown: the key and the values of
/// configured headers (custom auth headers). A provider may echo them back in an error body
/// or an error event, so every error message is redacted here, once for all providers.
fn secrets(model: &Model, options: &StreamOptions) -> Vec<String> {
    let mut secrets: Vec<String> = api_key(model, options).into_iter().collect();
    let headers = model.headers.iter().flatten().chain(&options.headers);
    // Flags, words and versions ("true", "beta") are not secrets; `redact` skips them.
    secrets.extend(headers.map(|(_, v)| v.clone()));
    secrets
}

async fn dispatch(
    writer: &mut StreamWriter,
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<StopReason, ProviderError> {
    match &model.api {
        Api::Scripted => scripted::run(writer, model, context, options).await,
        Api::OpenAiCompletions => {
            let request = openai_completions::build_request(model, context, options, &api_key(model, options)?)?;
            let source = send(request, options).await?;
            openai_completions::decode(source, writer, model).await
        }
        Api::OpenAiResponses => {
            let request = openai_responses::build_request(model, context, options, &api_key(model, options)?)?;
            let source = send(request, options).await?;
            openai_responses::decode(source, writer, model).await
        }
        Api::AnthropicMessages => {
            let request = anthropic::build_request(model, context, options, &api_key(model, options)?)?;
            let source = send(request, options).await?;
            anthropic::decode(source, writer, model).await
        }
        Api::GoogleGenerativeAi => {
            let request = google::build_request(model, context, options, &api_key(model, options)?)?;
            let source = send(request, options).await?;
            google::decode(source, writer, model).await
        }
        Api::Other(name) => Err(ProviderError::Request(format!(
            "Model {}/{} uses the API \"{name}\", which Tandem does not implement. Supported: openai-completions, openai-responses, anthropic-messages, google-generative-ai, scripted.",
            model.provider, model.id
        ))),
    }
}

async fn send(
    request: HttpRequest,
    options: &StreamOptions,
) -> Result<impl EventSource, ProviderError> {
    post_sse(request, options).await
}

/// The key from the options, else from the provider's environment variable.
fn api_key(model: &Model, options: &StreamOptions) -> Result<String, ProviderError> {
    if let Some(key) = options.api_key.as_ref().filter(|k| !k.is_empty()) {
        return Ok(key.clone());
    }
    keys::env_api_key(&model.provider)
        .ok_or_else(|| ProviderError::MissingApiKey(keys::missing_key_message(&model.provider)))
}
