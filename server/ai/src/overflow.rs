//! Recognizing a context-window overflow, so the session layer can compact and retry.
//!
//! Providers word it differently; these patterns cover the ones pi knows (Anthropic, OpenAI,
//! Gemini, xAI, Groq, OpenRouter, Copilot, llama.cpp, LM Studio, MiniMax, Kimi, Mistral, z.ai and
//! generic phrasings). Some servers instead accept the request and silently truncate: that shows
//! as a successful answer whose input tokens exceed the window.

use std::sync::OnceLock;

use regex::RegexSet;

use crate::types::{AssistantMessage, StopReason};

const PATTERNS: &[&str] = &[
    r"(?i)prompt is too long",
    r"(?i)input is too long for requested model",
    r"(?i)exceeds the context window",
    r"(?i)input token count.*exceeds the maximum",
    r"(?i)maximum prompt length is \d+",
    r"(?i)reduce the length of the messages",
    r"(?i)maximum context length is \d+ tokens",
    r"(?i)exceeds the limit of \d+",
    r"(?i)exceeds the available context size",
    r"(?i)greater than the context length",
    r"(?i)context window exceeds limit",
    r"(?i)exceeded model token limit",
    r"(?i)too large for model with \d+ maximum context length",
    r"(?i)model_context_window_exceeded",
    r"(?i)context[_ ]length[_ ]exceeded",
    r"(?i)too many tokens",
    r"(?i)token limit exceeded",
    // A 400 or 413 without a body: what some gateways answer to an oversized request.
    r"(?i)HTTP 4(00|13)\b[^:]*: \(no body\)$",
];

fn patterns() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| RegexSet::new(PATTERNS).unwrap_or_else(|_| RegexSet::empty()))
}

/// True when `message` shows the context window was exceeded: an error whose text matches a
/// known overflow message, or (when `context_window` is given) a successful answer whose input
/// plus cache-read tokens exceed the window.
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    if message.stop_reason == StopReason::Error {
        if let Some(text) = &message.error_message {
            if patterns().is_match(text) {
                return true;
            }
        }
    }
    if let Some(window) = context_window {
        if message.stop_reason == StopReason::Stop
            && message.usage.input + message.usage.cache_read > window
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Api;

    fn failed(text: &str) -> AssistantMessage {
        let mut m = AssistantMessage::empty(Api::OpenAiCompletions, "p", "m");
        m.stop_reason = StopReason::Error;
        m.error_message = Some(text.into());
        m
    }

    #[test]
    fn provider_messages_are_recognized() {
        for text in [
            "anthropic error: prompt is too long: 210000 tokens > 200000 maximum",
            "openai returned HTTP 400 Bad Request: {\"error\":{\"message\":\"Your input exceeds the context window of this model.\"}}",
            "This model's maximum context length is 128000 tokens. However, you requested 130000",
            "google error: The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            "error: context_length_exceeded",
            "llama.cpp: the request exceeds the available context size, try increasing it",
            "gateway returned HTTP 413 Payload Too Large: (no body)",
        ] {
            assert!(is_context_overflow(&failed(text), None), "{text}");
        }
    }

    #[test]
    fn other_errors_are_not_overflow() {
        for text in [
            "openai returned HTTP 429 Too Many Requests: rate limited",
            "openai returned HTTP 400 Bad Request: {\"error\":\"bad tool schema\"}",
            "Connection to openai was lost mid-stream: reset",
        ] {
            assert!(!is_context_overflow(&failed(text), None), "{text}");
        }
    }

    #[test]
    fn silent_overflow_uses_input_plus_cache_read() {
        let mut m = AssistantMessage::empty(Api::OpenAiCompletions, "p", "m");
        m.usage.input = 90_000;
        m.usage.cache_read = 20_000;
        assert!(is_context_overflow(&m, Some(100_000)));
        assert!(!is_context_overflow(&m, Some(200_000)));
        assert!(!is_context_overflow(&m, None));
        m.stop_reason = StopReason::Length;
        assert!(!is_context_overflow(&m, Some(100_000)));
    }
}
