//! HTTP transport shared by the providers: one pooled rustls client, a POST that returns an SSE
//! event source, and the mapping of every transport failure to a [`ProviderError`].
//!
//! Every wait (the response head, each body chunk) races the cancellation token and the idle
//! timeout, so a stalled or cancelled call always ends promptly. API keys are removed from any
//! response text that is quoted in an error.

use std::collections::VecDeque;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{excerpt, ProviderError};
use crate::options::StreamOptions;
use crate::sse::{SseDecoder, SseEvent};
use crate::sync::lock;

/// How much of an error body is quoted.
const ERROR_BODY_EXCERPT: usize = 2000;
/// How much of an error body is read at most.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
}

fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| builder().build().unwrap_or_else(|_| reqwest::Client::new()))
}

/// The pooled client for `proxy` (one per proxy URL, kept for the process), or the plain one.
fn client_for(proxy: Option<&str>, provider: &str) -> Result<reqwest::Client, ProviderError> {
    static PROXIED: OnceLock<Mutex<Vec<(String, reqwest::Client)>>> = OnceLock::new();
    let Some(url) = proxy else {
        return Ok(client().clone());
    };
    let mut proxied = lock(PROXIED.get_or_init(|| Mutex::new(Vec::new())));
    if let Some((_, client)) = proxied.iter().find(|(u, _)| u == url) {
        return Ok(client.clone());
    }
    // The URL may carry credentials: the error names the setting, never the value.
    let bad = |e: reqwest::Error| {
        ProviderError::Request(format!(
            "The httpProxy setting is not a usable proxy URL ({e}); requests to {provider} \
             were not sent. Fix httpProxy in the agent directory's settings.json (for example \
             \"http://proxy.example:3128\")."
        ))
    };
    let client = builder()
        .proxy(reqwest::Proxy::all(url).map_err(|e| bad(e.without_url()))?)
        .build()
        .map_err(|e| bad(e.without_url()))?;
    proxied.push((url.to_string(), client.clone()));
    Ok(client)
}

/// A request to a provider.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// Provider name, for error messages.
    pub provider: String,
    /// Full URL.
    pub url: String,
    /// Headers, in order; later ones override earlier ones of the same name.
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: Value,
    /// Secrets to strip from any quoted response text.
    pub secrets: Vec<String>,
}

/// Events of a streaming response, decoded as they arrive.
pub struct SseSource {
    provider: String,
    response: reqwest::Response,
    decoder: SseDecoder,
    queue: VecDeque<SseEvent>,
    cancel: CancellationToken,
    idle: Duration,
    ended: bool,
}

/// Races `fut` against cancellation and the idle timeout.
async fn guarded<T>(
    fut: impl std::future::Future<Output = T>,
    provider: &str,
    cancel: &CancellationToken,
    idle: Duration,
) -> Result<T, ProviderError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(ProviderError::Aborted),
        res = tokio::time::timeout(idle, fut) => res.map_err(|_| ProviderError::Stalled {
            provider: provider.to_string(),
            millis: u64::try_from(idle.as_millis()).unwrap_or(u64::MAX),
        }),
    }
}

/// `text` with every secret in `secrets` replaced by `***`. Only values that can be secrets are
/// replaced ([`can_be_secret`]): a key that is a plain word (`"apiKey": "ollama"`, `"none"`)
/// or a short flag would otherwise blank out that word wherever it appears. Nothing that is
/// (part of) the `provider`'s name (any other service's name, for other callers: an MCP
/// server's) is ever replaced, so messages still say who failed.
pub fn redact(text: &str, secrets: &[String], provider: &str) -> String {
    let mut out = text.to_string();
    for secret in secrets {
        if can_be_secret(secret) && !provider.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "***");
        }
    }
    out
}

/// Whether `value` can be a secret worth hiding: at least 8 characters, not a plain lowercase
/// word (real keys and tokens carry digits, capitals or punctuation) and not a date or version
/// number (`2023-06-01`, an API version header).
pub fn can_be_secret(value: &str) -> bool {
    let value = value.trim();
    value.chars().count() >= 8
        && !value.chars().all(|c| c.is_ascii_lowercase())
        && !value
            .chars()
            .all(|c| c.is_ascii_digit() || c == '-' || c == '.')
}

/// Sends `request` and returns its event stream, or the HTTP error with a body excerpt.
pub async fn post_sse(
    request: HttpRequest,
    options: &StreamOptions,
) -> Result<SseSource, ProviderError> {
    let HttpRequest {
        provider,
        url,
        headers,
        mut body,
        secrets,
    } = request;
    if let Some(hooks) = &options.provider_hooks.0 {
        body = hooks.before_request(body).await;
    }
    tracing::debug!(provider = %provider, url = %url, "model request");
    let mut builder = client_for(options.proxy.as_deref(), &provider)?
        .post(&url)
        .json(&body);
    let mut header_map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            ProviderError::Request(format!("Invalid HTTP header name {name:?} for {provider}"))
        })?;
        let value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
            ProviderError::Request(format!(
                "Invalid value for HTTP header {name} for {provider} (control characters?)"
            ))
        })?;
        header_map.insert(name, value);
    }
    builder = builder.headers(header_map);
    let response = guarded(
        builder.send(),
        &provider,
        &options.cancel,
        options.idle_timeout,
    )
    .await?
    .map_err(|e| ProviderError::Connect {
        provider: provider.clone(),
        url: url.clone(),
        detail: redact(&error_chain(&e), &secrets, &provider),
    })?;
    let status = response.status();
    if let Some(hooks) = &options.provider_hooks.0 {
        let headers = response
            .headers()
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))
            })
            .collect();
        hooks.after_response(status.as_u16(), headers).await;
    }
    if !status.is_success() {
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let body = read_limited(response, &provider, options).await?;
        let body = if body.trim().is_empty() {
            "(no body)".to_string()
        } else {
            excerpt(
                &redact(&compact_json(&body), &secrets, &provider),
                ERROR_BODY_EXCERPT,
            )
        };
        return Err(ProviderError::Http {
            provider,
            code: status.as_u16(),
            status: match status.canonical_reason() {
                Some(reason) => format!("{} {reason}", status.as_u16()),
                None => status.as_u16().to_string(),
            },
            retry_after,
            body,
        });
    }
    Ok(SseSource {
        provider,
        response,
        decoder: SseDecoder::new(),
        queue: VecDeque::new(),
        cancel: options.cancel.clone(),
        idle: options.idle_timeout,
        ended: false,
    })
}

async fn read_limited(
    mut response: reqwest::Response,
    provider: &str,
    options: &StreamOptions,
) -> Result<String, ProviderError> {
    let mut body = Vec::new();
    loop {
        let chunk = guarded(
            response.chunk(),
            provider,
            &options.cancel,
            options.idle_timeout,
        )
        .await?;
        match chunk {
            Ok(Some(bytes)) => {
                body.extend_from_slice(&bytes);
                if body.len() >= ERROR_BODY_LIMIT {
                    break;
                }
            }
            // The status already says what went wrong; a body cut short is still worth quoting.
            Ok(None) | Err(_) => break,
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// A JSON body on one line (providers often pretty-print errors); other text unchanged.
fn compact_json(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => value.to_string(),
        Err(_) => body.to_string(),
    }
}

/// `e` and its sources, joined (reqwest's top-level message alone is often just "error sending
/// request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// A source of decoded SSE events: a live response, or a list in tests.
pub trait EventSource: Send {
    /// The next event; `None` at a clean end of the stream.
    fn next_event(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<SseEvent>, ProviderError>> + Send;
}

impl EventSource for SseSource {
    async fn next_event(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        self.next().await
    }
}

/// Events from memory, optionally followed by an error (a dropped connection), for unit tests
/// of the decoders.
#[derive(Debug, Default)]
pub struct VecSource {
    events: VecDeque<SseEvent>,
    then: Option<ProviderError>,
}

impl VecSource {
    /// Decodes `body` as one SSE stream.
    pub fn from_body(body: &str) -> Self {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::new();
        // The body is in memory, so the only possible error (an overlong line) cannot happen
        // for test inputs; an error leaves the events decoded so far.
        let _ = decoder.feed(body.as_bytes(), &mut out);
        decoder.finish(&mut out);
        VecSource {
            events: out.into(),
            then: None,
        }
    }

    /// Ends with `error` instead of a clean end.
    pub fn then_fail(mut self, error: ProviderError) -> Self {
        self.then = Some(error);
        self
    }
}

impl EventSource for VecSource {
    async fn next_event(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        match self.events.pop_front() {
            Some(e) => Ok(Some(e)),
            None => match self.then.take() {
                Some(err) => Err(err),
                None => Ok(None),
            },
        }
    }
}

impl SseSource {
    /// The next event; `None` at a clean end of the body.
    pub async fn next(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            let chunk = guarded(
                self.response.chunk(),
                &self.provider,
                &self.cancel,
                self.idle,
            )
            .await?;
            let mut out = Vec::new();
            match chunk {
                Ok(Some(bytes)) => {
                    self.decoder
                        .feed(&bytes, &mut out)
                        .map_err(|e| ProviderError::Malformed {
                            provider: self.provider.clone(),
                            detail: e.to_string(),
                        })?;
                }
                Ok(None) => {
                    self.ended = true;
                    self.decoder.finish(&mut out);
                }
                Err(e) => {
                    return Err(ProviderError::Dropped {
                        provider: self.provider.clone(),
                        detail: error_chain(&e),
                    })
                }
            }
            self.queue.extend(out);
        }
    }

    /// The provider name.
    pub fn provider(&self) -> &str {
        &self.provider
    }
}

/// Parses an event's JSON data, or names the provider and quotes the bad data.
pub fn parse_json(provider: &str, data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| ProviderError::Malformed {
        provider: provider.to_string(),
        detail: format!("event data is not JSON ({e}): {}", excerpt(data, 200)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted() {
        assert_eq!(
            redact("bad key sk-12345 given", &["sk-12345".into()], "openai"),
            "bad key *** given"
        );
    }

    #[test]
    fn words_short_values_and_provider_names_are_not_secrets() {
        let text = "ollama returned HTTP 404 Not Found: model not found, try ollama pull";
        for key in ["ollama", "none", "dummy", "password", "sk-1"] {
            assert_eq!(redact(text, &[key.into()], "ollama"), text, "{key}");
        }
        // A secret-looking key that is the provider's own name is not masked either.
        let text = "my-proxy-01 returned HTTP 401";
        assert_eq!(redact(text, &["my-proxy-01".into()], "my-proxy-01"), text);
        assert!(can_be_secret("AIzaSyD-secret"));
        assert!(can_be_secret("sk-ant-api03-abc"));
        assert!(!can_be_secret("changeme"));
        assert!(!can_be_secret("2023-06-01"));
    }
}
