//! Auto-retry of transient provider failures: which errors are worth retrying (tandem-ai's
//! classification, by HTTP status before words) and how long to wait before each attempt.
//!
//! A context overflow is not retried (compaction handles it). The wait doubles from
//! `base_delay_ms` per attempt; a server's `retry after Ns` hint (quoted in the error text by
//! tandem-ai) is honoured when longer; nothing waits longer than `max_delay_ms`.

use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;
use serde::{Deserialize, Serialize};
use tandem_ai::error::is_transient;
use tandem_ai::overflow::is_context_overflow;
use tandem_ai::{AssistantMessage, StopReason};

/// Retry settings (settings.json `retry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RetryPolicy {
    /// Retry at all.
    pub enabled: bool,
    /// Attempts after the first failure.
    pub max_retries: u32,
    /// Wait before the first retry; doubles each time.
    pub base_delay_ms: u64,
    /// Longest wait.
    pub max_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
            max_delay_ms: 60_000,
        }
    }
}

fn retry_after() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"retry after (\d+)s").expect("a valid regex"))
}

/// True when `message` failed in a way worth retrying: an error (not an abort) that is not a
/// context overflow and that tandem-ai classes as transient (by HTTP status first; see
/// [`tandem_ai::error::is_transient`]).
pub fn is_retryable(message: &AssistantMessage, context_window: u64) -> bool {
    if message.stop_reason != StopReason::Error {
        return false;
    }
    let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) else {
        return false;
    };
    if is_context_overflow(message, Some(context_window)) {
        return false;
    }
    is_transient(message.failure, text)
}

/// The wait before retry number `attempt` (1-based) after an error saying `error_text`.
pub fn delay_for(attempt: u32, policy: &RetryPolicy, error_text: &str) -> Duration {
    let exponent = attempt.saturating_sub(1).min(30);
    let backoff = policy.base_delay_ms.saturating_mul(1u64 << exponent);
    let hinted = retry_after()
        .captures(error_text)
        .and_then(|c| c.get(1))
        .and_then(|m| m.as_str().parse::<u64>().ok())
        .map(|s| s.saturating_mul(1000))
        .unwrap_or(0);
    Duration::from_millis(backoff.max(hinted).min(policy.max_delay_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_ai::error::FailureKind;
    use tandem_ai::Api;

    fn failed(text: &str) -> AssistantMessage {
        let mut m = AssistantMessage::empty(Api::OpenAiCompletions, "openai", "m");
        m.stop_reason = StopReason::Error;
        m.error_message = Some(text.into());
        m
    }

    #[test]
    fn transient_errors_are_retried_others_are_not() {
        for text in [
            "openai returned HTTP 429 Too Many Requests (retry after 7s): {}",
            "anthropic error: overloaded_error: Overloaded",
            "openai returned HTTP 503 Service Unavailable: (no body)",
            "Connection to openai was lost mid-stream: reset",
            "openai sent nothing for 300 s; the stream looks stalled (connection timeout)",
            "Could not connect to ollama at http://localhost:11434/v1/chat/completions: refused",
        ] {
            assert!(is_retryable(&failed(text), 128_000), "{text}");
        }
        for text in [
            "openai returned HTTP 401 Unauthorized: invalid key",
            "No API key for provider: openai",
            "anthropic error: prompt is too long: 210000 tokens > 200000 maximum",
        ] {
            assert!(!is_retryable(&failed(text), 128_000), "{text}");
        }
        let mut aborted = failed("429");
        aborted.stop_reason = StopReason::Aborted;
        assert!(!is_retryable(&aborted, 128_000));
    }

    #[test]
    fn a_known_status_decides_whatever_the_text_says() {
        let mut bad_request = failed(
            "openai returned HTTP 400 Bad Request: {\"error\":{\"type\":\"server_error\",\
             \"message\":\"invalid model parameter\"}}",
        );
        assert!(
            is_retryable(&bad_request, 128_000),
            "the words alone say server error"
        );
        bad_request.failure = Some(FailureKind::Http(400));
        assert!(!is_retryable(&bad_request, 128_000));
        let mut unauthorized = failed("openai returned HTTP 401 Unauthorized: retry later");
        unauthorized.failure = Some(FailureKind::Http(401));
        assert!(!is_retryable(&unauthorized, 128_000));
        let mut overloaded = failed("anthropic returned HTTP 529: {}");
        overloaded.failure = Some(FailureKind::Http(529));
        assert!(is_retryable(&overloaded, 128_000));
    }

    #[test]
    fn delays_double_honour_retry_after_and_are_capped() {
        let p = RetryPolicy::default();
        assert_eq!(delay_for(1, &p, ""), Duration::from_millis(2000));
        assert_eq!(delay_for(2, &p, ""), Duration::from_millis(4000));
        assert_eq!(delay_for(3, &p, ""), Duration::from_millis(8000));
        assert_eq!(
            delay_for(1, &p, "HTTP 429 (retry after 7s)"),
            Duration::from_millis(7000)
        );
        assert_eq!(
            delay_for(1, &p, "(retry after 600s)"),
            Duration::from_millis(60_000)
        );
        assert_eq!(delay_for(40, &p, ""), Duration::from_millis(60_000));
    }
}
