//! What the mock saw: one [`RecordedRequest`] per request, in arrival order.
//!
//! Tests assert on what a provider client sent (path, headers, JSON body), so the request is
//! kept whole and decoded only on demand.

/// One request received by the mock, recorded once its body has been read in full.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The path including the query string, e.g. `/v1/chat/completions?stream=true`.
    pub path: String,
    /// The headers in the order received, with lowercased names. Values that are not UTF-8
    /// are decoded lossily.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
    /// Which TCP connection carried the request: connections are numbered from 0 in accept
    /// order, so two requests with the same number prove keep-alive.
    pub connection: u64,
    /// The name of the response that answered it, or `None` when the queue was empty and the
    /// mock answered 500.
    pub response: Option<String>,
}

impl RecordedRequest {
    /// The first value of a header, looked up case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body parsed as JSON.
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    /// The body as text, lossily decoded.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// `METHOD /path`, as used in logs and error messages.
    pub fn summary(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}
