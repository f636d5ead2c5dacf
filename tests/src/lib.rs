//! Test support for Tandem.
//!
//! Black-box tests and editor tests need a provider to talk to that behaves like the real one
//! on the wire but is deterministic and offline. [`mock_llm`] is that provider: an HTTP server
//! on loopback that replays recorded response transcripts from `fixtures/`. The `mock-llm`
//! binary exposes the same server to tests written in other languages (editor extensions).
//! [`wire`] writes answers made to measure (text, tool calls, errors) in each provider's wire
//! format, for tests that script a whole task.
//!
//! This crate depends on no other Tandem crate, so it builds even while they are in flux.

pub mod mock_llm;
pub mod wire;
