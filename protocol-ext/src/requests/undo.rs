//! `tandem/undo`: take back the file changes of a session's last turn (one prompt's run), or of
//! every turn after a named one, as one edit the user confirms like any other.

use serde::{Deserialize, Serialize};

use crate::ids::SessionId;
use crate::methods::{self, Request};

/// `tandem/undo` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoParams {
    /// The session.
    pub session: SessionId,
    /// Undo every turn after this one: a prompt's entry id (or a checkpoint's) from
    /// `tandem/sessions/entries`. Absent: the last turn not undone yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back_to: Option<String>,
}

/// How an undo ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum UndoStatus {
    /// The reverse was applied (hunks in `refused` were left as they are).
    Applied,
    /// The user or the editor refused the edit: nothing changed, and the turns can be undone
    /// later.
    Rejected,
    /// Every hunk was refused, so nothing was proposed; the turns count as undone.
    NothingToApply,
    /// No turn on the session's branch changed files that are not undone yet.
    NothingToUndo,
}

/// A turn an undo took back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoneTurn {
    /// The checkpoint entry that recorded the turn's changes.
    pub checkpoint: String,
    /// The turn's prompt entry, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<String>,
    /// The prompt's first line.
    pub prompt: String,
}

/// A hunk an undo left as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedHunk {
    /// The document.
    pub uri: String,
    /// Its first line as the turn left it (0-based, like LSP positions).
    pub line: u32,
    /// Why it was left.
    pub reason: String,
}

/// `tandem/undo` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoResult {
    /// How it ended.
    pub status: UndoStatus,
    /// The turns taken back, newest first (empty for `nothingToUndo`; for `rejected`, the
    /// turns that would have been).
    pub turns: Vec<UndoneTurn>,
    /// Documents changed back.
    pub changed: Vec<String>,
    /// Documents deleted (files the turns created, unchanged since).
    pub deleted: Vec<String>,
    /// Hunks left as they are, because the user changed them since (or the file is gone).
    pub refused: Vec<RefusedHunk>,
    /// A one-line summary for the user.
    pub message: String,
}

impl Request for UndoParams {
    const METHOD: &'static str = methods::UNDO;
    type Result = UndoResult;
}
