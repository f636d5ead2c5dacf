//! tandem-protocol: the custom LSP methods and payloads Tandem adds to the Language Server
//! Protocol, as they appear on the wire.
//!
//! This crate is the written contract between `tandem lsp` and editor plugins; `README.md` beside
//! it is the same contract in prose, with JSON examples. It deliberately depends on nothing but
//! serde: no LSP library (the server converts these types to and from its LSP crate's at one
//! boundary, the way helix-lsp converts positions once) and none of Tandem's own crates (the
//! server maps its internal agent and session events to [`events::Event`]; the core never
//! serializes its own types onto this channel).
//!
//! - [`methods`]: method names, the protocol version, and the [`Request`] / [`Notification`]
//!   traits binding a method to its payload types.
//! - [`events`]: the one `tandem/event` notification and its delta-based [`events::Event`]s.
//! - [`requests`]: params and results of every `tandem/...` request.
//! - [`commands`]: `workspace/executeCommand` commands and their arguments.
//! - [`config`]: `initializationOptions` and `settings.tandem`.
//! - [`capabilities`]: what client and server announce under `experimental.tandem`.
//! - [`interaction`]: the button titles of the server's `window/showMessageRequest` questions.
//! - [`errors`]: application error codes and [`errors::parse_params`], which names the field
//!   (through [`params`], a path-recording deserializer).
//!
//! Forward compatibility: no type rejects unknown fields, and unknown event types deserialize
//! as [`events::Event::Unknown`], so an older client keeps working with a newer server.

pub mod capabilities;
pub mod commands;
pub mod config;
pub mod errors;
pub mod events;
pub mod interaction;
pub mod methods;
pub mod params;
pub mod requests;

mod diagnostic;
mod ids;
mod position;

#[cfg(test)]
mod spec_tests;

pub use diagnostic::Diagnostic;
pub use errors::{ErrorCode, TandemError};
pub use ids::{SessionId, ToolCallId};
pub use methods::{Notification, Request, PROTOCOL_VERSION};
pub use position::{Position, Range};
