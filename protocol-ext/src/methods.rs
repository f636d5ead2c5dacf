//! Method names, the protocol version, and the traits that bind a method to its payloads.
//!
//! Every custom method lives under `tandem/` so it can never collide with a standard LSP method
//! or another extension. The [`Request`] and [`Notification`] traits mirror lsp-types' own, so a
//! server can register `PromptParams::METHOD` with its LSP library and a Rust client can send a
//! typed request without repeating the name.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The version of this extension, announced in `experimental.tandem.version`.
///
/// Raised only for incompatible changes; additions (new fields, new event types, new methods)
/// keep the version, which is why nothing here rejects unknown fields.
pub const PROTOCOL_VERSION: u32 = 1;

/// Server → client notification carrying one streamed [`crate::events::Event`].
pub const EVENT: &str = "tandem/event";

/// Send a prompt (creating a session when none is named).
pub const PROMPT: &str = "tandem/prompt";
/// Abort a session's run.
pub const ABORT: &str = "tandem/abort";
/// Create a session.
pub const SESSIONS_NEW: &str = "tandem/sessions/new";
/// List stored sessions.
pub const SESSIONS_LIST: &str = "tandem/sessions/list";
/// Open a stored session file.
pub const SESSIONS_OPEN: &str = "tandem/sessions/open";
/// Fork a session into a new one.
pub const SESSIONS_FORK: &str = "tandem/sessions/fork";
/// A session's current state.
pub const STATE: &str = "tandem/state";
/// The models the server knows.
pub const MODELS_LIST: &str = "tandem/models/list";
/// Choose a session's model.
pub const MODELS_SET: &str = "tandem/models/set";
/// Choose a session's thinking level.
pub const THINKING_SET: &str = "tandem/thinking/set";
/// Compact a session's context now.
pub const COMPACT: &str = "tandem/compact";
/// A live session's entries on its current branch (ids for `tandem/sessions/fork`).
pub const SESSIONS_ENTRIES: &str = "tandem/sessions/entries";
/// Take back a turn's file changes.
pub const UNDO: &str = "tandem/undo";

/// `tandem/saveDocuments` (server → client): save the documents Tandem changed, before a
/// command runs. Only to clients declaring `experimental.tandem.saveDocuments`.
pub const SAVE_DOCUMENTS: &str = "tandem/saveDocuments";
/// `tandem/diagnostics` (server → client): the editor's diagnostics, from all its language
/// servers. Only to clients declaring `experimental.tandem.diagnostics`.
pub const DIAGNOSTICS: &str = "tandem/diagnostics";
/// `tandem/languageRequest` (server → client): a standard LSP request answered by the
/// editor's other language servers. Only to clients declaring
/// `experimental.tandem.languageRequests`.
pub const LANGUAGE_REQUEST: &str = "tandem/languageRequest";

/// `tandem/input` (server → client): a line or a longer text an extension asks the user for
/// (`ctx.ui.input`, `ctx.ui.editor`). Only to clients declaring `experimental.tandem.input`.
pub const INPUT: &str = "tandem/input";

/// Every request method, in the order the spec lists them.
pub const REQUESTS: [&str; 13] = [
    PROMPT,
    ABORT,
    SESSIONS_NEW,
    SESSIONS_LIST,
    SESSIONS_OPEN,
    SESSIONS_FORK,
    SESSIONS_ENTRIES,
    STATE,
    MODELS_LIST,
    MODELS_SET,
    THINKING_SET,
    COMPACT,
    UNDO,
];

/// A request: its method name, and its params (the implementing type) and result types.
pub trait Request: Serialize + DeserializeOwned {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// What the server answers on success.
    type Result: Serialize + DeserializeOwned;
}

/// A notification: its method name; the implementing type is its params.
pub trait Notification: Serialize + DeserializeOwned {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_namespaced_and_unique() {
        let mut all: Vec<&str> = REQUESTS.to_vec();
        all.push(EVENT);
        for m in &all {
            assert!(m.starts_with("tandem/"), "{m}");
        }
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
    }
}
