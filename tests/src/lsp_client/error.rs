//! What can go wrong talking to a language server, each said so a person knows what to look at.

use std::time::Duration;

use serde_json::Value;

use super::framing::FrameError;
use super::message::error_text;

/// What went wrong talking to the language server.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server process could not be started.
    #[error("cannot start the language server `{program}`: {source}")]
    Spawn {
        /// The program that was run.
        program: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Writing to the server failed: it has probably exited.
    #[error("cannot write to the language server (did it exit? see its messages above): {0}")]
    Write(std::io::Error),
    /// The client closed the server's input itself, then tried to send.
    #[error("cannot send `{0}`: the input to the language server was closed")]
    InputClosed(String),
    /// The server closed its output.
    #[error("the language server closed its output (it exited; see its messages above)")]
    Closed,
    /// The server's output is not an LSP message stream.
    #[error("the language server sent a malformed frame: {0}")]
    Malformed(#[from] FrameError),
    /// A well-formed frame that is not a JSON-RPC message.
    #[error("the language server sent something that is not a JSON-RPC message: {0}")]
    NotJsonRpc(Value),
    /// Nothing suitable arrived in time.
    #[error("the language server did not answer within {waited:?} (waiting for {what})")]
    Timeout {
        /// How long the client waited.
        waited: Duration,
        /// What it waited for.
        what: String,
    },
    /// The server answered a request with an error.
    #[error("the language server refused `{method}`: {}", error_text(.error))]
    Refused {
        /// The request's method.
        method: String,
        /// The JSON-RPC error object.
        error: Value,
    },
    /// A reply was asked for a notification.
    #[error("`{0}` is a notification: there is nothing to reply to")]
    NotARequest(String),
    /// A process operation on a client made with [`LspClient::connect`](super::LspClient::connect).
    #[error("this client has no server process (it was connected to streams, not spawned)")]
    NoProcess,
    /// A thread the client needs could not be started.
    #[error("cannot start a thread to talk to the language server: {0}")]
    Thread(std::io::Error),
    /// Waiting for or signalling the server process failed.
    #[error("cannot wait for or signal the language server process: {0}")]
    Process(std::io::Error),
}
