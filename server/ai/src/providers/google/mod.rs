//! Google Generative Language API (Gemini): `models/{id}:streamGenerateContent?alt=sse`.
//!
//! Gemini differs from the other wire APIs in ways that shape this module:
//! - tool calls arrive whole (never as argument fragments) and often without ids, so ids are
//!   made up here;
//! - "thought signatures" may ride on any part (text, thought or function call) and must be
//!   replayed verbatim to the same model, or Gemini 3 refuses the conversation;
//! - reasoning is chosen by level on Gemini 3 and by token budget on Gemini 2.5, with
//!   per-model limits on what "off" and each level may be.
//!
//! `request` builds the URL, headers and body, `convert` turns the conversation into
//! `contents`, `thinking` picks the `thinkingConfig`, and `decode` reads the response chunks.

mod convert;
mod decode;
mod request;
mod thinking;

pub use decode::decode;
pub use request::build_request;
