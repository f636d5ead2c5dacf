//! Response transcripts: the fixture file format and the in-memory [`MockResponse`].
//!
//! A fixture is a recorded provider response kept as a file so that it can be read, diffed and
//! re-recorded like any other wire transcript. The format is deliberately tiny (a header block of
//! `key: value` lines, one empty line, then the body verbatim) because the body must survive byte
//! for byte, CRLFs and split UTF-8 included; no existing format (HAR, YAML) keeps raw bytes readable
//! without escaping them. The grammar is documented in `tests/README.md`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use hyper::StatusCode;
use tokio::sync::watch;

/// Why a fixture could not be loaded. Every variant names the fixture and, for syntax errors,
/// the 1-based line of the header block that is wrong.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// The file could not be read.
    #[error("mock-llm: cannot read fixture {}: {source}", path.display())]
    Io {
        /// The file that was being read.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The header block never ends: there is no empty line before the end of the file.
    #[error(
        "{name}:{line}: end of file before the empty line that ends the header block \
         (add an empty line between the headers and the body, even if the body is empty)"
    )]
    MissingSeparator {
        /// The fixture's name (usually its path).
        name: String,
        /// The line where the empty line was expected.
        line: usize,
    },
    /// A header line is not of the form `key: value`.
    #[error("{name}:{line}: expected `key: value` in the header block, found {text:?}")]
    MalformedLine {
        /// The fixture's name (usually its path).
        name: String,
        /// The offending line.
        line: usize,
        /// The line's text (lossily decoded).
        text: String,
    },
    /// A header line uses a key the format does not know.
    #[error(
        "{name}:{line}: unknown key `{key}` (known: status, header, chunk, chunk-delay-ms, cut, \
         stall; is the empty line before the body missing?)"
    )]
    UnknownKey {
        /// The fixture's name (usually its path).
        name: String,
        /// The offending line.
        line: usize,
        /// The unknown key.
        key: String,
    },
    /// A known key has a value it cannot take.
    #[error("{name}:{line}: invalid value {value:?} for `{key}`: expected {expected}")]
    InvalidValue {
        /// The fixture's name (usually its path).
        name: String,
        /// The offending line.
        line: usize,
        /// The key whose value is wrong.
        key: String,
        /// The value as written.
        value: String,
        /// What the key accepts.
        expected: &'static str,
    },
    /// A key that may appear once appears again, or `cut` and `stall` are both set.
    #[error("{name}:{line}: `{key}` conflicts with an earlier line of the header block")]
    Conflict {
        /// The fixture's name (usually its path).
        name: String,
        /// The offending line.
        line: usize,
        /// The key that conflicts.
        key: String,
    },
}

/// What the server does once the body has been written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ending {
    /// Finish the response normally; the connection may be reused.
    #[default]
    Complete,
    /// Close the TCP connection without finishing the chunked encoding (`cut: true`).
    Cut,
    /// Keep the connection open and send nothing more until the client goes away (`stall: true`).
    Stall,
}

/// One HTTP response to replay: status, headers, body and how the body is delivered.
///
/// Built from a fixture file ([`MockResponse::from_file`], [`MockResponse::parse`]) or in code
/// with the builders ([`MockResponse::sse`], [`MockResponse::json`], [`MockResponse::raw`]).
/// Cloning is cheap: the body is shared.
#[derive(Clone)]
pub struct MockResponse {
    name: String,
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    chunk_size: Option<usize>,
    chunk_delay: Duration,
    ending: Ending,
    gate: Option<Gate>,
}

/// Holds back the bodies of the responses built with [`MockResponse::held_until`] until the
/// test opens it: a run is then known to be waiting on its model, for as long as the test needs
/// (no sleeps, no timing). Cloning shares the gate.
#[derive(Clone)]
pub struct Gate {
    open: Arc<watch::Sender<bool>>,
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Self {
            open: Arc::new(watch::channel(false).0),
        }
    }

    /// Lets every response held by this gate send its body.
    pub fn open(&self) {
        self.open.send_replace(true);
    }

    /// Resolves once the gate is open.
    pub(crate) fn opened(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut open = self.open.subscribe();
        async move {
            let _ = open.wait_for(|o| *o).await;
        }
    }
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl MockResponse {
    /// Reads and parses a fixture file; the response is named after the path.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, FixtureError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| FixtureError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path.display().to_string(), &bytes)
    }

    /// Parses fixture bytes; `name` is used in errors and logs (usually the file's path).
    pub fn parse(name: impl Into<String>, bytes: &[u8]) -> Result<Self, FixtureError> {
        crate::mock_llm::parse::parse(name.into(), bytes)
    }

    /// A `200 OK` server-sent-events response (`content-type: text/event-stream`).
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Self::raw(200, body)
    }

    /// A JSON response with the given status (`content-type: application/json`).
    ///
    /// # Panics
    /// If `status` is not a valid HTTP status code (100–999).
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Self::raw(status, body.to_string()).with_header("content-type", "application/json")
    }

    /// A response with the given status and body. The content type defaults to
    /// `text/event-stream` for 2xx statuses and `application/json` otherwise.
    ///
    /// # Panics
    /// If `status` is not a valid HTTP status code (100–999).
    pub fn raw(status: u16, body: impl Into<Vec<u8>>) -> Self {
        let status = StatusCode::from_u16(status)
            .unwrap_or_else(|_| panic!("MockResponse: {status} is not an HTTP status code"));
        Self::from_parts(
            String::from("<inline>"),
            status,
            HeaderMap::new(),
            body.into(),
        )
    }

    /// Assembles a response and fills in the default content type when none was given.
    pub(crate) fn from_parts(
        name: String,
        status: StatusCode,
        mut headers: HeaderMap,
        body: Vec<u8>,
    ) -> Self {
        if !headers.contains_key(CONTENT_TYPE) {
            headers.insert(CONTENT_TYPE, default_content_type(status));
        }
        Self {
            name,
            status,
            headers,
            body: Bytes::from(body),
            chunk_size: None,
            chunk_delay: Duration::ZERO,
            ending: Ending::Complete,
            gate: None,
        }
    }

    /// Renames the response (the name shows in logs and in
    /// [`RecordedRequest::response`](crate::mock_llm::RecordedRequest::response)).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets a response header, replacing any earlier value of the same name.
    ///
    /// # Panics
    /// If `name` or `value` is not valid in an HTTP header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        let header = HeaderName::from_bytes(name.as_bytes())
            .unwrap_or_else(|_| panic!("MockResponse: {name:?} is not a header name"));
        let value = HeaderValue::from_str(value)
            .unwrap_or_else(|_| panic!("MockResponse: {value:?} is not a header value"));
        self.headers.insert(header, value);
        self
    }

    /// Writes the body in pieces of `n` bytes, each flushed on its own; `0` means one piece.
    pub fn with_chunk(mut self, n: usize) -> Self {
        self.chunk_size = (n > 0).then_some(n);
        self
    }

    /// Pauses for `delay` between pieces of the body.
    pub fn with_chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Drops the connection after the body without finishing the chunked encoding.
    pub fn with_cut(mut self) -> Self {
        self.ending = Ending::Cut;
        self
    }

    /// Sends the status and headers at once but the body only once `gate` is open.
    pub fn held_until(mut self, gate: &Gate) -> Self {
        self.gate = Some(gate.clone());
        self
    }

    /// The gate the body waits for, if any.
    pub(crate) fn gate(&self) -> Option<&Gate> {
        self.gate.as_ref()
    }

    /// Keeps the connection open after the body, sending nothing more.
    pub fn with_stall(mut self) -> Self {
        self.ending = Ending::Stall;
        self
    }

    /// The name used in logs: the fixture's path, or `<inline>` for built responses.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The headers that will be sent (hyper adds the framing headers and `date`).
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body, exactly as it will be written.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The piece size, or `None` when the body is written in one piece.
    pub fn chunk_size(&self) -> Option<usize> {
        self.chunk_size
    }

    /// The pause between pieces.
    pub fn chunk_delay(&self) -> Duration {
        self.chunk_delay
    }

    /// What happens after the body.
    pub fn ending(&self) -> Ending {
        self.ending
    }

    /// The body split into the pieces that are written one by one.
    pub(crate) fn pieces(&self) -> Vec<Bytes> {
        match self.chunk_size {
            Some(n) if n < self.body.len() => (0..self.body.len())
                .step_by(n)
                .map(|start| self.body.slice(start..(start + n).min(self.body.len())))
                .collect(),
            _ if self.body.is_empty() => Vec::new(),
            _ => vec![self.body.clone()],
        }
    }

    /// Sets the fields that only the fixture parser sets directly.
    pub(crate) fn set_delivery(&mut self, chunk: Option<usize>, delay: Duration, ending: Ending) {
        self.chunk_size = chunk;
        self.chunk_delay = delay;
        self.ending = ending;
    }
}

impl fmt::Debug for MockResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockResponse")
            .field("name", &self.name)
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body", &String::from_utf8_lossy(&self.body))
            .field("chunk_size", &self.chunk_size)
            .field("chunk_delay", &self.chunk_delay)
            .field("ending", &self.ending)
            .finish()
    }
}

/// Providers stream successes as SSE and report failures as JSON.
fn default_content_type(status: StatusCode) -> HeaderValue {
    if status.is_success() {
        HeaderValue::from_static("text/event-stream")
    } else {
        HeaderValue::from_static("application/json")
    }
}
