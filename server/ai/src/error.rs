//! Why a model call failed. Every variant becomes the `errorMessage` of the final assistant
//! message, so each one names the provider and, where there is one, the thing to do.
//!
//! The words matter beyond display: the session layer's auto-retry recognizes transient failures
//! (429, 5xx, overloaded, connection lost) from this text, as pi does.

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
        "{provider} sent nothing for {seconds} s; the stream looks stalled (connection timeout)"
    )]
    Stalled {
        /// Provider name.
        provider: String,
        /// The idle timeout.
        seconds: u64,
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
            status: "429 Too Many Requests".into(),
            retry_after: Some(20),
            body: "{\"error\":\"slow down\"}".into(),
        };
        assert_eq!(
            e.to_string(),
            "openai returned HTTP 429 Too Many Requests (retry after 20s): {\"error\":\"slow down\"}"
        );
    }

    #[test]
    fn excerpt_cuts_on_char_boundaries() {
        assert_eq!(excerpt("  short ", 10), "short");
        let cut = excerpt("ééééé", 3);
        assert!(cut.starts_with("é…"), "{cut}");
    }
}
