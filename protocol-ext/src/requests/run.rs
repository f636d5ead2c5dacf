//! Starting and controlling runs: `tandem/prompt`, `tandem/abort`, `tandem/compact`.
//!
//! A prompt never waits for the run: it answers as soon as the message is accepted (started or
//! queued), and everything the run does arrives as `tandem/event` notifications. That keeps every
//! request handler short, which the server needs (its LSP library handles requests on its reader
//! task, so a long handler would stall `didChange`).

use serde::{Deserialize, Serialize};

use crate::diagnostic::Diagnostic;
use crate::ids::SessionId;
use crate::methods::{self, Request};
use crate::position::Range;

/// What to do with a prompt when the session is already running.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WhenBusy {
    /// Deliver it after the current tool calls, before the next model call (interrupts).
    #[default]
    Steer,
    /// Deliver it when the agent would otherwise stop.
    FollowUp,
}

/// The editor context a prompt carries; the server turns it into text for the model (path,
/// language, the selection or cursor line, the enclosing symbol, diagnostics, open files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptContext {
    /// The document the user is in (an open document's unsaved text is what the model sees).
    pub uri: String,
    /// The selection, or an empty range at the cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Range>,
    /// Include the diagnostics that intersect the selection (the whole document without one):
    /// those in `diagnostics`, or when it is absent, the ones the server last received for the
    /// document in a `textDocument/codeAction` request's context.
    #[serde(default, skip_serializing_if = "is_false")]
    pub include_diagnostics: bool,
    /// The document's diagnostics as the editor shows them. A language server does not see
    /// other servers' diagnostics, so a client that has them sends them here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Vec<Diagnostic>>,
}

/// An image attached to a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageInput {
    /// Base64 of the image bytes (no `data:` prefix).
    pub data: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
}

/// `tandem/prompt` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    /// The session; absent → the server creates one in the first workspace folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
    /// The user's message.
    pub text: String,
    /// Where the user is in the editor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<PromptContext>,
    /// Attached images.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageInput>,
    /// What to do if the session is running (default: steer).
    #[serde(default)]
    pub when_busy: WhenBusy,
}

/// `tandem/prompt` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResult {
    /// The session (the new one when none was named).
    pub session: SessionId,
    /// True when the session was busy and the message was queued (`whenBusy`) rather than
    /// starting a run.
    pub queued: bool,
}

impl Request for PromptParams {
    const METHOD: &'static str = methods::PROMPT;
    type Result = PromptResult;
}

/// `tandem/abort` params. The result is `null`; aborting an idle session is not an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortParams {
    /// The session to stop.
    pub session: SessionId,
}

impl Request for AbortParams {
    const METHOD: &'static str = methods::ABORT;
    type Result = ();
}

/// `tandem/compact` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactParams {
    /// The session.
    pub session: SessionId,
    /// What the summary should focus on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// `tandem/compact` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactResult {
    /// The summary that now replaces the older history.
    pub summary: String,
    /// Context tokens before compacting.
    pub tokens_before: u64,
}

impl Request for CompactParams {
    const METHOD: &'static str = methods::COMPACT;
    type Result = CompactResult;
}

fn is_false(b: &bool) -> bool {
    !*b
}
