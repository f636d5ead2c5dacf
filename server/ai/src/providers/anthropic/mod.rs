//! Anthropic Messages API (`POST /v1/messages` with `stream: true`).
//!
//! Split in three because the concerns change for different reasons: `request` holds the
//! transport-level choices (URL, auth flavour, beta headers, thinking mode and token budgets),
//! `messages` turns Tandem's conversation into Anthropic's content blocks (a pure data mapping
//! that only follows the wire schema), and `decode` reads the typed SSE events back into the
//! [`StreamWriter`](crate::stream::StreamWriter).
//!
//! Behaviour follows pi's provider: adaptive thinking with an effort on the models that have it,
//! token budgets elsewhere; prompt caching on the system prompt and the last user message; OAuth
//! subscription tokens (`sk-ant-oat…`) sent as a bearer token.

mod decode;
mod messages;
mod request;

pub use decode::decode;
pub use request::build_request;

/// True for the models that take `thinking: {type: "adaptive"}` plus an effort instead of a token
/// budget (Claude Opus 4.6 and Sonnet 4.6, with or without a date suffix).
fn supports_adaptive_thinking(model_id: &str) -> bool {
    crate::model::has_adaptive_thinking(model_id)
}

#[cfg(test)]
mod test_support;
