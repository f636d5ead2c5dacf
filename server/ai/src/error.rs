//! Why a model call failed. Every variant becomes the `errorMessage` of the final assistant
//! message, so each one names the provider and, where there is one, the thing to do.
//!
//! Whether a failure is worth retrying is decided here, from what failed rather than from the
//! words ([`ProviderError::kind`], [`is_transient`]): an HTTP status first (400, 401, 403, 404
//! and 422 never; 408, 409, 425, 429 and 5xx yes), transport failures yes, and the text — pi's
//! list of transient wordings — only for an error the provider reported inside its stream,
//! which has no status.

use std::sync::OnceLock;

use regex::Regex;

/// What kind of failure ended a model call (kept on the failed message, never saved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The provider answered with this HTTP status.
    Http(u16),
    /// The connection could not be made, broke, or went silent.
    Transport,
    /// The provider reported an error inside its stream (no status): judged by its text.
    Provider,
    /// Anything else (a bad request, a missing key, malformed data, an abort).
    Other,
}

/// Whether a failure of `kind` whose message is `text` is worth retrying. Without a kind (a
/// message from elsewhere, e.g. a session file), the text decides, as in pi.
pub fn is_transient(kind: Option<FailureKind>, text: &str) -> bool {
    match kind {
        Some(FailureKind::Http(status)) => transient_status(status),
        Some(FailureKind::Transport) => true,
        Some(FailureKind::Other) => false,
        Some(FailureKind::Provider) | None => transient_text(text),
    }
}

/// 408 Request Timeout, 409 Conflict, 425 Too Early, 429 Too Many Requests, every 5xx (529
/// Overloaded included).
fn transient_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429 | 500..=599)
}

/// pi's wordings of transient failures, plus those of Tandem's own transport errors.
fn transient_text(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)overloaded|rate.?limit|too many requests|429|500|502|503|504|529|service.?unavailable|server.?error|internal.?error|connection.?error|connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|terminated|retry delay|lost mid-stream|looks stalled|could not connect",
        )
        .expect("the transient-error pattern is a valid regex")
    })
    .is_match(text)
}

/// A failed model call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The caller cancelled.
    #[error("Request was aborted")]
    Aborted,
    /// No key was found for the provider.
    #[error("{0}")]
    MissingApiKey(String),
    /// The provider answered with a non-success status.
    #[error("{provider} returned HTTP {status}{}: {body}", retry_after.map(|s| format!(" (retry after {s}s)")).unwrap_or_default())]
    Http {
        /// Provider name.
        provider: String,
        /// The status code.
        code: u16,
        /// Status code with its reason phrase, e.g. `429 Too Many Requests`.
        status: String,
        /// Seconds from a `retry-after` header.
        retry_after: Option<u64>,
        /// The start of the response body.
        body: String,
    },
    /// The request could not be sent (DNS, refused connection, TLS).
    #[error("Could not connect to {provider} at {url}: {detail}. Check the provider's baseUrl and your network.")]
    Connect {
        /// Provider name.
        provider: String,
        /// The URL tried.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The connection broke while the response was streaming.
    #[error("Connection to {provider} was lost mid-stream: {detail}")]
    Dropped {
        /// Provider name.
        provider: String,
        /// What failed.
        detail: String,
    },
    /// The provider sent nothing for too long.
    #[error(
        "{provider} sent nothing for {} s; the stream looks stalled (connection timeout; \
         httpIdleTimeoutMs in settings.json sets how long to wait)",
        *.millis as f64 / 1000.0
    )]
    Stalled {
        /// Provider name.
        provider: String,
        /// The idle timeout, in milliseconds.
        millis: u64,
    },
    /// The provider sent something that is not its documented wire format.
    #[error("Malformed response from {provider}: {detail}")]
    Malformed {
        /// Provider name.
        provider: String,
        /// What was wrong, with an excerpt.
        detail: String,
    },
    /// The stream ended before the response was complete (no stop reason, or nothing at all).
    #[error("{provider} ended the stream before the response was complete: {detail}")]
    Incomplete {
        /// Provider name.
        provider: String,
        /// What was missing.
        detail: String,
    },
    /// The provider reported an error inside the stream.
    #[error("{provider} error: {message}")]
    Provider {
        /// Provider name.
        provider: String,
        /// The provider's message.
        message: String,
    },
    /// A tool call's arguments were not valid JSON once complete.
    #[error("{0}")]
    ToolArguments(String),
    /// The request could not be built (an unsupported option, a bad script file…).
    #[error("{0}")]
    Request(String),
}

impl ProviderError {
    /// What kind of failure this is, for the retry decision.
    pub fn kind(&self) -> FailureKind {
        match self {
            ProviderError::Http { code, .. } => FailureKind::Http(*code),
            ProviderError::Connect { .. }
            | ProviderError::Dropped { .. }
            | ProviderError::Stalled { .. } => FailureKind::Transport,
            ProviderError::Provider { .. } => FailureKind::Provider,
            // A body that ended cleanly without a stop reason (an HTML page, a proxy's
            // answer) would end the same way again.
            ProviderError::Aborted
            | ProviderError::Incomplete { .. }
            | ProviderError::MissingApiKey(_)
            | ProviderError::Malformed { .. }
            | ProviderError::ToolArguments(_)
            | ProviderError::Request(_) => FailureKind::Other,
        }
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary, marking the cut.
pub fn excerpt(text: &str, max: usize) -> String {
    let trimmed = text.trim();
    if trimmed.len() <= max {
        return trimmed.to_string();
    }
    let mut end = max;
    while !trimmed.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &trimmed[..end], trimmed.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_error_names_status_provider_and_retry_after() {
        let e = ProviderError::Http {
            provider: "openai".into(),
            code: 429,
            status: "429 Too Many Requests".into(),
            retry_after: Some(20),
            body: "{\"error\":\"slow down\"}".into(),
        };
        assert_eq!(
            e.to_string(),
            "openai returned HTTP 429 Too Many Requests (retry after 20s): {\"error\":\"slow down\"}"
        );
    }

    fn http(code: u16, body: &str) -> ProviderError {
        ProviderError::Http {
            provider: "openai".into(),
            code,
            status: code.to_string(),
            retry_after: None,
            body: body.into(),
        }
    }

    #[test]
    fn the_status_decides_before_the_words() {
        let retried = |e: ProviderError| is_transient(Some(e.kind()), &e.to_string());
        // The body names a server error, but a 400 is the request's fault.
        assert!(!retried(http(
            400,
            "{\"type\": \"server_error\", \"message\": \"invalid model parameter\"}"
        )));
        for code in [401, 403, 404, 422] {
            assert!(
                !retried(http(code, "overloaded, try again (503)")),
                "{code}"
            );
        }
        for code in [408, 409, 425, 429, 500, 502, 503, 504, 529] {
            assert!(retried(http(code, "")), "{code}");
        }
        let dropped = ProviderError::Dropped {
            provider: "p".into(),
            detail: "reset".into(),
        };
        assert!(retried(dropped));
        assert!(!retried(ProviderError::Request(
            "429 in a bad request".into()
        )));
        let in_stream = |m: &str| ProviderError::Provider {
            provider: "anthropic".into(),
            message: m.into(),
        };
        assert!(retried(in_stream("overloaded_error: Overloaded")));
        assert!(!retried(in_stream(
            "invalid_request_error: bad tool schema"
        )));
        assert!(is_transient(
            None,
            "openai returned HTTP 503 Service Unavailable"
        ));
        assert!(!is_transient(None, "No API key for provider: openai"));
    }

    #[test]
    fn excerpt_cuts_on_char_boundaries() {
        assert_eq!(excerpt("  short ", 10), "short");
        let cut = excerpt("ééééé", 3);
        assert!(cut.starts_with("é…"), "{cut}");
    }
}
