//! The HTTP side: accepting connections and answering each request from the queue.
//!
//! hyper does the HTTP/1.1 work (parsing, keep-alive, chunked encoding), so the mock speaks
//! HTTP the way real servers do; this module only glues it to the queue and the request log.
//! Each connection runs in its own task inside a `JoinSet` owned by the accept loop, so
//! aborting the accept loop closes every connection with it.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::body::{CutSignal, CuttableStream, ReplayBody};
use super::fixture::MockResponse;
use super::request::RecordedRequest;
use super::state::Shared;

/// Accepts connections until the task is aborted; aborting it drops every connection.
pub(crate) async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    let mut next_id = 0_u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    tracing::debug!(connection = next_id, %peer, "mock-llm: accepted");
                    connections.spawn(serve_connection(stream, next_id, Arc::clone(&shared)));
                    next_id += 1;
                }
                Err(err) => {
                    // Usually out of file descriptors; back off instead of spinning.
                    tracing::warn!(%err, "mock-llm: accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            },
            Some(finished) = connections.join_next(), if !connections.is_empty() => {
                if let Err(err) = finished {
                    tracing::error!(%err, "mock-llm: connection task failed");
                }
            }
        }
    }
}

/// Serves HTTP/1.1 requests on one connection until either side closes it.
async fn serve_connection(stream: TcpStream, id: u64, shared: Arc<Shared>) {
    // Pieces must leave as separate segments, not wait for Nagle.
    if let Err(err) = stream.set_nodelay(true) {
        tracing::debug!(connection = id, %err, "mock-llm: cannot set TCP_NODELAY");
    }
    let cut = Arc::new(CutSignal::default());
    let io = TokioIo::new(CuttableStream::new(stream, Arc::clone(&cut)));
    let service =
        service_fn(move |request| respond(request, id, Arc::clone(&shared), Arc::clone(&cut)));
    let served = http1::Builder::new()
        // No timer is configured, so no timeouts: a stalled exchange lasts until the client
        // gives up, which is what stall fixtures are for.
        .header_read_timeout(None)
        .serve_connection(io, service)
        .await;
    // Client disconnects and fixture cuts end connections with errors; both are expected.
    if let Err(err) = served {
        tracing::debug!(connection = id, %err, "mock-llm: connection ended");
    }
}

/// Reads the request in full, records it and answers with the next queued response.
async fn respond(
    request: Request<Incoming>,
    connection: u64,
    shared: Arc<Shared>,
    cut: Arc<CutSignal>,
) -> Result<Response<ReplayBody>, hyper::Error> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await?.to_bytes();
    let recorded = RecordedRequest {
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.to_string(), ToString::to_string),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body: body.to_vec(),
        connection,
        response: None,
    };
    let summary = recorded.summary();
    let response = match shared.answer(recorded) {
        Some(response) => {
            tracing::debug!(connection, "mock-llm: {summary} -> {}", response.name());
            response
        }
        None => {
            tracing::warn!(connection, "mock-llm: {summary} -> 500, no response queued");
            no_response_queued(&summary)
        }
    };
    Ok(to_http(&response, cut))
}

/// The answer when the test queued too few responses: an error a provider client reports
/// verbatim, so the failing test says what was missing.
fn no_response_queued(summary: &str) -> MockResponse {
    let message = format!("mock-llm: no response queued for {summary}");
    MockResponse::json(500, serde_json::json!({ "error": { "message": message } }))
        .with_name("<no response queued>")
}

/// Builds the hyper response. Framing headers from the fixture are dropped because hyper
/// frames the body itself (content-length or chunked, see `ReplayBody`).
fn to_http(response: &MockResponse, cut: Arc<CutSignal>) -> Response<ReplayBody> {
    let mut http = Response::new(ReplayBody::new(response, cut));
    *http.status_mut() = response.status();
    for (name, value) in response.headers() {
        if name == CONTENT_LENGTH || name == TRANSFER_ENCODING {
            tracing::debug!(
                "mock-llm: {}: ignoring framing header {name}",
                response.name()
            );
            continue;
        }
        http.headers_mut().append(name.clone(), value.clone());
    }
    http
}
