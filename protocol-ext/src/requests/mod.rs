//! Params and results of every `tandem/...` request.
//!
//! Each params type implements [`crate::Request`], which gives its method name and result type,
//! so a server registers `PromptParams::METHOD` and a client sends `PromptParams` and reads a
//! `PromptResult` without repeating the name. Required fields are required (the server answers
//! -32602 naming the missing one); optional ones may be absent or `null`; unknown ones are
//! ignored, so a newer client can talk to an older server.
//!
//! - [`run`]: prompt, abort, compact — starting and steering the agent.
//! - [`sessions`]: new, list, open, fork.
//! - [`state`]: a session's state.
//! - [`models`]: models list / set and the thinking level.
//! - [`editor`]: requests the server sends the editor (`tandem/saveDocuments`).
//! - [`language`]: the editor's diagnostics and language intelligence (server → client).
//! - [`undo`]: take back a turn's file changes.

pub mod editor;
pub mod language;
pub mod models;
pub mod run;
pub mod sessions;
pub mod state;
pub mod undo;

pub use editor::{InputParams, InputResult, SaveDocumentsParams, SaveDocumentsResult, SaveFailure};
pub use language::{
    DiagnosticsParams, DiagnosticsResult, DocumentDiagnostics, LanguageRequestParams,
    LanguageRequestResult, LANGUAGE_METHODS,
};
pub use models::{
    ModelEntry, ModelInfo, ModelsListParams, ModelsSetParams, ThinkingLevel, ThinkingSetParams,
    ThinkingSetResult,
};
pub use run::{
    AbortParams, CompactParams, CompactResult, ImageInput, PromptContext, PromptParams,
    PromptResult, WhenBusy,
};
pub use sessions::{
    EntryInfo, SessionInfo, SessionResult, SessionsEntriesParams, SessionsForkParams,
    SessionsListParams, SessionsNewParams, SessionsOpenParams,
};
pub use state::{QueueState, StateParams, StateResult, TokenStats, TrustState};
pub use undo::{RefusedHunk, UndoParams, UndoResult, UndoStatus, UndoneTurn};

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
