//! The session host: what every front door (print and JSON modes, the language server, the ACP
//! agent, the demo) does the same way, so each of them is only a translator and a transport.
//!
//! - [`options`]: what a session is asked for, as plain data ([`SessionOptions`], [`Origin`]).
//! - [`asking`]: the disk as the workspace of a front door that asks in words (the terminal
//!   mode, RPC mode).
//! - [`models`]: choosing the model and thinking level in pi's order, finding its key.
//! - [`setup`]: trust, settings, models, history, MCP servers and tools, assembled into an
//!   `AgentSession`, with one list of problems for the user.
//! - [`pump`]: a session's events to a client, translated, batched and counted.
//! - [`turns`]: a live session and its turn runner (one turn at a time, late messages, answers
//!   after the events).

pub mod asking;
pub mod model_flag;
pub(crate) mod model_pattern;
pub mod model_scope;
pub mod models;
pub mod options;
pub mod pump;
pub mod setup;
mod suggest;
pub mod turns;

pub use model_pattern::compare_ids;
pub use options::{Origin, SessionOptions, ToolSelection};
