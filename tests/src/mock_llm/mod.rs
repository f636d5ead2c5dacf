//! A mock LLM provider: a real HTTP/1.1 server on loopback that replays recorded responses.
//!
//! Provider clients are tested against recorded wire transcripts rather than hand-built
//! events so that the SSE parser, the HTTP client and the error paths all run as they do in
//! production. The mock answers every request, whatever its method and path, with the next
//! queued [`MockResponse`] and records the request for the test to inspect. Fixtures can
//! deliver the body in pieces, cut the connection or stall, which is how dropped and hung
//! provider streams are reproduced deterministically.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use tandem_tests::mock_llm::{MockLlm, MockResponse};
//!
//! let mock = MockLlm::start().await?;
//! mock.enqueue(MockResponse::sse("data: {\"x\":1}\n\ndata: [DONE]\n\n").with_chunk(5));
//! // ... point the provider client at mock.base_url() and run it ...
//! let requests = mock.wait_for_requests(1).await?;
//! assert_eq!(requests[0].path, "/v1/chat/completions");
//! # Ok(()) }
//! ```

mod body;
mod fixture;
mod parse;
mod request;
mod server;
mod state;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use fixture::{Ending, FixtureError, Gate, MockResponse};
pub use request::RecordedRequest;

use state::Shared;

/// How long [`MockLlm::wait_for_requests`] waits: long enough for a loaded CI machine, short
/// enough that a test waiting for a request that never comes fails instead of hanging.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10);

/// Raised when the expected requests did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error(
    "mock-llm: timed out after {waited:?} waiting for {wanted} request(s); {} recorded: [{}]",
    recorded.len(),
    recorded.join(", ")
)]
pub struct WaitError {
    /// How many requests were awaited.
    pub wanted: usize,
    /// `METHOD /path` of each request recorded by then.
    pub recorded: Vec<String>,
    /// How long the wait lasted.
    pub waited: Duration,
}

/// A running mock server. Dropping it (or calling [`MockLlm::shutdown`]) stops the server
/// and closes its connections.
pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl MockLlm {
    /// Starts a server on `127.0.0.1` at a free port. Must be called inside a tokio runtime.
    pub async fn start() -> std::io::Result<MockLlm> {
        Self::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
    }

    /// Starts a server on `addr` (port 0 picks a free port).
    pub async fn bind(addr: SocketAddr) -> std::io::Result<MockLlm> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new());
        let task = tokio::spawn(server::accept_loop(listener, Arc::clone(&shared)));
        Ok(MockLlm {
            addr,
            shared,
            task: Some(task),
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, e.g. `http://127.0.0.1:41234` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `base_url()` followed by `path`, e.g. `url("/v1/messages")`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url())
    }

    /// Queues a response; requests are answered in FIFO order.
    pub fn enqueue(&self, response: MockResponse) {
        self.shared.enqueue(response);
    }

    /// Parses a fixture file and queues it.
    pub fn enqueue_file(&self, path: impl AsRef<Path>) -> Result<(), FixtureError> {
        self.enqueue(MockResponse::from_file(path)?);
        Ok(())
    }

    /// When `cycle` is true, each served response goes back to the end of the queue, so the
    /// queue replays forever (used by `mock-llm --loop` for demos).
    pub fn set_cycle(&self, cycle: bool) {
        self.shared.set_cycle(cycle);
    }

    /// How many responses are still queued.
    pub fn queued(&self) -> usize {
        self.shared.queued()
    }

    /// Every request recorded so far, in the order they were answered.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    /// Waits until at least `n` requests have been recorded and returns all recorded requests;
    /// fails after [`DEFAULT_WAIT`].
    pub async fn wait_for_requests(&self, n: usize) -> Result<Vec<RecordedRequest>, WaitError> {
        self.wait_for_requests_within(n, DEFAULT_WAIT).await
    }

    /// Like [`MockLlm::wait_for_requests`] with an explicit timeout.
    pub async fn wait_for_requests_within(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<RecordedRequest>, WaitError> {
        let mut count = self.shared.subscribe();
        // The sender lives in `self.shared`, so the channel cannot close while we wait.
        let reached = tokio::time::timeout(timeout, count.wait_for(|&count| count >= n))
            .await
            // Release the channel's read guard at once: `Shared::answer` publishes under the
            // state lock, so holding both here would deadlock.
            .is_ok_and(|seen| seen.is_ok());
        if reached {
            Ok(self.requests())
        } else {
            Err(WaitError {
                wanted: n,
                recorded: self
                    .requests()
                    .iter()
                    .map(RecordedRequest::summary)
                    .collect(),
                waited: timeout,
            })
        }
    }

    /// Stops the server and waits until its listener and connections are closed.
    pub async fn shutdown(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            // The only possible error is the cancellation just requested.
            let _ = task.await;
        }
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl std::fmt::Debug for MockLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockLlm")
            .field("addr", &self.addr)
            .field("queued", &self.queued())
            .finish_non_exhaustive()
    }
}
