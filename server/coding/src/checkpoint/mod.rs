//! Checkpoints and undo: every prompt's applied changes, recorded in the session so the user
//! can take a turn back as one step.
//!
//! For the user a *turn* is one prompt's run: every model turn until the session settles. When
//! a run settles, the changes the workspace applied during it ([`crate::calls::AppliedChange`])
//! become one `custom` entry of type [`CHECKPOINT_TYPE`]. pi keeps `custom` entries out of the
//! model's context (0.73 and 1.6 alike), and so does [`crate::session::context`], so a session
//! with checkpoints resumes in either with the same conversation.
//!
//! What a checkpoint keeps, per applied change and in the order they landed: the file and its
//! changed *hunks* — the lines before and after, with up to [`CONTEXT_LINES`] unchanged lines
//! on each side — never the whole file, so a one-line edit of a large file costs a few lines of
//! the session. The exception is a file the change created: its whole text is kept, because
//! undo deletes it only if it is still exactly that.
//!
//! Undo ([`undo`]) works against the documents as they are now (an open buffer wins over disk,
//! read through the [`crate::workspace::Workspace`]): each hunk whose "after" text is still
//! there — found again by content when the user's edits elsewhere moved it — is put back;
//! a hunk the user changed since is refused and listed, and the rest still applies
//! ([`reverse`]). A created file is deleted only when it is unchanged; changed, it is left and
//! listed. The whole reverse goes to the workspace as one proposal
//! ([`crate::workspace::Workspace::propose_set`]), so it passes the same confirmation as any
//! edit. The undo itself is an entry of type [`UNDO_TYPE`] naming the checkpoints it took back:
//! undoing again takes the turn before, never the same one twice. An applied undo is also said
//! to the model in a hidden `custom_message` ([`UNDO_NOTE_TYPE`], `display: false`), which pi
//! puts in its context too, so the model does not build on edits that are gone.

mod record;
pub mod reverse;
mod undo;

use serde::{Deserialize, Serialize};

pub use record::{checkpoint_of, hunks_of};
pub use reverse::RefusedHunk;
pub use undo::{
    pending_checkpoints, plan_undo, undo, UndoError, UndoOutcome, UndoPlan, UndoReport, UndoneTurn,
    UNDO_CALL, UNDO_NOTE_TYPE,
};

/// The `customType` of a checkpoint entry.
pub const CHECKPOINT_TYPE: &str = "tandem.checkpoint";

/// The `customType` of an undo entry.
pub const UNDO_TYPE: &str = "tandem.undo";

/// Unchanged lines kept on each side of a hunk, to find it again by content.
pub const CONTEXT_LINES: usize = 2;

/// The version of the entries' data, for readers that meet a newer one.
pub const DATA_VERSION: u32 = 1;

/// A checkpoint entry's `data`: what one prompt's run changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// [`DATA_VERSION`].
    pub version: u32,
    /// The entry id of the prompt (the run's first user message), when it is in the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<String>,
    /// The prompt's first line, shortened, for listings.
    #[serde(default)]
    pub prompt: String,
    /// The applied changes, oldest first.
    pub changes: Vec<Step>,
}

/// One applied change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// The file (absolute).
    pub path: String,
    /// The change created the file; `hunks` then holds one hunk with its whole text.
    #[serde(default)]
    pub created: bool,
    /// The changed hunks, in file order.
    pub hunks: Vec<Hunk>,
}

/// One changed run of lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// The first line of `after` in the file after the change (0-based).
    pub line: usize,
    /// The lines before the change (whole lines, with their line endings).
    pub before: String,
    /// The lines after it.
    pub after: String,
    /// Unchanged lines just above, after the change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_before: String,
    /// Unchanged lines just below, after the change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_after: String,
}

/// An undo entry's `data`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoRecord {
    /// [`DATA_VERSION`].
    pub version: u32,
    /// The checkpoint entries taken back, newest first.
    pub checkpoints: Vec<String>,
    /// The hunks that were refused, one line each (`path:line: why`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

#[cfg(test)]
mod tests;
