//! Test support for Tandem.
//!
//! [`lsp_client`] drives a language server over stdio the way an editor does: every black-box
//! test of `tandem lsp` uses it, and so does `tandem demo`. It is the only part built without
//! the `mock-llm` feature (on by default), which is how the `tandem` binary links this crate.
//!
//! Black-box tests and editor tests need a provider to talk to that behaves like the real one
//! on the wire but is deterministic and offline. [`mock_llm`] is that provider: an HTTP server
//! on loopback that replays recorded response transcripts from `fixtures/`. The `mock-llm`
//! binary exposes the same server to tests written in other languages (editor extensions).
//! [`wire`] writes answers made to measure (text, tool calls, errors) in each provider's wire
//! format, for tests that script a whole task. [`langservers`] finds the real language
//! servers the tests run. [`pi_fields`] sets pi 1.6's additions aside for comparisons with
//! pi 0.73.1.
//!
//! This crate depends on no other Tandem crate, so it builds even while they are in flux.

#[cfg(feature = "mock-llm")]
pub mod langservers;
pub mod lsp_client;
#[cfg(feature = "mock-llm")]
pub mod mock_llm;
pub mod pi_fields;
#[cfg(feature = "mock-llm")]
pub mod wire;
