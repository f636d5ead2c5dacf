//! Streamable HTTP for rmcp's client transport over the workspace's reqwest (0.12, rustls):
//! rmcp's own reqwest binding wants reqwest 0.13, which would add a second HTTP stack.
//!
//! Each HTTP exchange is bounded: connecting takes at most [`CONNECT_TIMEOUT`]; a JSON answer
//! or an error body is read up to a size limit; redirects are not followed (a configured
//! `Authorization` or API-key header must never reach another host). How long a request may
//! take overall is the caller's per-request timeout (`timeout` in mcp.json), not this layer's:
//! SSE answers stay open while the server works.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::{BoxStream, StreamExt};
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::StatusCode;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};
use tandem_ai::sync::lock;

/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest JSON answer read (a tool result with images can be large).
const MAX_JSON_BYTES: usize = 16 * 1024 * 1024;
/// The largest SSE event read: a server streaming one endless event is cut off there.
const MAX_SSE_EVENT_BYTES: usize = 16 * 1024 * 1024;
/// How much of an error response's body a message quotes.
const MAX_ERROR_EXCERPT: usize = 300;

type HttpError = StreamableHttpError<reqwest::Error>;

/// rmcp's HTTP backend: one reqwest client per server, and the last HTTP failure in plain
/// words (rmcp's own error wraps it in its transport's type names).
#[derive(Clone)]
pub(super) struct HttpClient {
    client: reqwest::Client,
    last_error: Arc<Mutex<Option<String>>>,
}

impl HttpClient {
    /// A client that connects within [`CONNECT_TIMEOUT`] and follows no redirect.
    pub(super) fn new() -> Result<HttpClient, String> {
        reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map(|client| HttpClient {
                client,
                last_error: Arc::default(),
            })
            .map_err(|e| format!("the HTTP client could not be created: {e}"))
    }

    /// The last failure of an HTTP exchange, if any, and forgets it.
    pub(super) fn take_error(&self) -> Option<String> {
        lock(&self.last_error).take()
    }

    /// Keeps the text of `result`'s error for [`HttpClient::take_error`].
    fn note<T>(&self, result: Result<T, HttpError>) -> Result<T, HttpError> {
        if let Err(error) = &result {
            let text = match error {
                StreamableHttpError::Client(e) => with_causes(e),
                StreamableHttpError::UnexpectedServerResponse(text) => text.to_string(),
                other => other.to_string(),
            };
            *lock(&self.last_error) = Some(text);
        }
        result
    }
}

/// An error and its causes, `: `-separated (reqwest's own text omits "connection refused").
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let part = inner.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = inner.source();
    }
    text
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    session: Option<&str>,
    auth: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    if let Some(session) = session {
        request = request.header(HEADER_SESSION_ID, session);
    }
    if let Some(token) = auth {
        request = request.bearer_auth(token);
    }
    for (name, value) in custom {
        request = request.header(name, value);
    }
    request
}

fn content_type(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
}

/// Reads at most `limit` bytes of the body; `Err` when it is longer.
async fn read_limited(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(StreamableHttpError::Client)?;
        if body.len() + chunk.len() > limit {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The error for a response that is not a success: its status, what it means for MCP, and the
/// start of its body.
async fn status_error(response: reqwest::Response) -> HttpError {
    let status = response.status();
    let hint = match status {
        StatusCode::UNAUTHORIZED => {
            " (the server wants credentials: set an \"Authorization\" header in mcp.json, e.g. \
             \"Bearer ${TOKEN_VARIABLE}\"; OAuth sign-in is not supported by Tandem)"
        }
        StatusCode::FORBIDDEN => " (the credentials were refused)",
        _ if status.is_redirection() => {
            " (a redirect; Tandem does not follow it: put the final URL in mcp.json)"
        }
        _ => "",
    };
    let body = read_limited(response, 64 * 1024).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&body);
    let text = text.trim();
    let excerpt: String = text.chars().take(MAX_ERROR_EXCERPT).collect();
    let excerpt = if excerpt.is_empty() {
        String::new()
    } else {
        format!(": {excerpt}")
    };
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
        "HTTP {status}{hint}{excerpt}"
    )))
}

fn sse(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(bounded_events(response.bytes_stream(), MAX_SSE_EVENT_BYTES))
        .boxed()
}

/// Why a stream of SSE bytes ended early.
#[derive(Debug, thiserror::Error)]
enum SseBytesError<E: std::error::Error + 'static> {
    /// Reading the body failed.
    #[error(transparent)]
    Body(E),
    /// One event grew past the limit.
    #[error("the server sent an SSE event longer than {0} bytes; the stream was closed")]
    TooLong(usize),
}

/// The bytes of an SSE stream, ending with an error once one event (the bytes since the last
/// blank line) grows past `limit`.
fn bounded_events<S, E>(
    stream: S,
    limit: usize,
) -> impl futures_util::Stream<Item = Result<bytes::Bytes, SseBytesError<E>>>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    // `pending`: bytes since the last event boundary; `tail`: the last 3 bytes, so that a
    // boundary split across two chunks is still seen.
    let mut pending = 0usize;
    let mut tail: Vec<u8> = Vec::new();
    let mut failed = false;
    stream.map(move |chunk| {
        if failed {
            return Err(SseBytesError::TooLong(limit));
        }
        let chunk = chunk.map_err(SseBytesError::Body)?;
        let mut joined = std::mem::take(&mut tail);
        let carried = joined.len();
        joined.extend_from_slice(&chunk);
        let boundary = [&b"\n\n"[..], b"\r\r", b"\r\n\r\n"]
            .iter()
            .filter_map(|sep| {
                joined
                    .windows(sep.len())
                    .rposition(|w| w == *sep)
                    .map(|at| at + sep.len())
            })
            .max();
        pending = match boundary {
            Some(end) => joined.len() - end,
            None => pending + joined.len() - carried,
        };
        tail = joined[joined.len().saturating_sub(3)..].to_vec();
        if pending > limit {
            failed = true;
            return Err(SseBytesError::TooLong(limit));
        }
        Ok(chunk)
    })
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        // One POST of `message`: the server's answer (JSON or an SSE stream), or accepted.
        let result = async {
            let body = serde_json::to_vec(&message)?;
            let request = self
                .client
                .post(uri.as_ref())
                .header(
                    ACCEPT,
                    format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
                )
                .header(CONTENT_TYPE, JSON_MIME_TYPE)
                .body(body);
            let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
            let response = request.send().await.map_err(StreamableHttpError::Client)?;
            let status = response.status();
            if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
                return Ok(StreamableHttpPostResponse::Accepted);
            }
            if status == StatusCode::NOT_FOUND && session_id.is_some() {
                return Err(StreamableHttpError::SessionExpired);
            }
            let expects_answer = matches!(message, ClientJsonRpcMessage::Request(_));
            if !status.is_success() {
                // A JSON-RPC error sent with an HTTP error status is still the server's answer.
                if content_type(&response).as_deref() == Some(JSON_MIME_TYPE)
                    && status.is_client_error()
                    && !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
                {
                    let body = read_limited(response, MAX_JSON_BYTES).await?;
                    if let Ok(answer @ ServerJsonRpcMessage::Error(_)) =
                        serde_json::from_slice(&body)
                    {
                        return Ok(StreamableHttpPostResponse::Json(answer, None));
                    }
                    let text = String::from_utf8_lossy(&body);
                    let excerpt: String = text.chars().take(MAX_ERROR_EXCERPT).collect();
                    return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                        format!("HTTP {status}: {excerpt}"),
                    )));
                }
                return Err(status_error(response).await);
            }
            let session = response
                .headers()
                .get(HEADER_SESSION_ID)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            match content_type(&response).as_deref() {
                Some(EVENT_STREAM_MIME_TYPE) => {
                    Ok(StreamableHttpPostResponse::Sse(sse(response), session))
                }
                Some(JSON_MIME_TYPE) => {
                    let body = read_limited(response, MAX_JSON_BYTES).await?;
                    match serde_json::from_slice(&body) {
                        Ok(answer) => Ok(StreamableHttpPostResponse::Json(answer, session)),
                        Err(_) if !expects_answer => Ok(StreamableHttpPostResponse::Accepted),
                        Err(e) => Err(StreamableHttpError::Deserialize(e)),
                    }
                }
                _ if !expects_answer => Ok(StreamableHttpPostResponse::Accepted),
                other => Err(StreamableHttpError::UnexpectedContentType(
                    other.map(str::to_string),
                )),
            }
        }
        .await;
        self.note(result)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let request = with_headers(
            self.client.delete(uri.as_ref()),
            Some(&session_id),
            auth_header,
            custom_headers,
        );
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        if response.status().is_success() || response.status() == StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(status_error(response).await)
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let mut request = self.client.get(uri.as_ref()).header(
            ACCEPT,
            format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
        );
        if let Some(id) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, id);
        }
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if !response.status().is_success() {
            return Err(status_error(response).await);
        }
        match content_type(&response).as_deref() {
            Some(EVENT_STREAM_MIME_TYPE) => Ok(sse(response)),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_string),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;

    async fn run(chunks: &[&str], limit: usize) -> Vec<Result<String, String>> {
        let items: Vec<Result<bytes::Bytes, std::io::Error>> = chunks
            .iter()
            .map(|c| Ok(bytes::Bytes::from(c.to_string())))
            .collect();
        bounded_events(stream::iter(items), limit)
            .map(|r| {
                r.map(|b| String::from_utf8_lossy(&b).to_string())
                    .map_err(|e| e.to_string())
            })
            .collect()
            .await
    }

    #[tokio::test]
    async fn sse_events_longer_than_the_limit_end_the_stream() {
        // Events of 8 bytes each, boundaries inside chunks and split across them.
        let ok = run(&["data: a\n\ndata", ": b\n", "\ndata: c\r\n\r\n"], 10).await;
        assert!(ok.iter().all(Result::is_ok), "{ok:?}");
        let cut = run(&["data: aaaa", "aaaa", "aaaa\n\n", "more"], 10).await;
        assert_eq!(cut[0], Ok("data: aaaa".to_string()));
        assert_eq!(
            cut[2],
            Err("the server sent an SSE event longer than 10 bytes; the stream was closed".into())
        );
        assert!(cut[3].is_err(), "nothing after the cut: {cut:?}");
    }
}
