//! One `workspace/applyEdit` at a time per document, and what a late answer did.
//!
//! An edit that times out is not a refusal: the editor may apply it later (a preview left
//! open, a busy editor). If the next change to the same document were sent meanwhile — the
//! model, told that its edit timed out, tries it again — an editor that does not check versions
//! would apply both, the same insertion twice, and the document Tandem tracks would stop being
//! the one the user sees. So a send holds its document's [`Slot`] until the editor answers,
//! however late; the next change to that document waits for the slot (bounded by the edit
//! timeout, then it is refused without being sent), and learns what the late answer was: a
//! change identical to one the editor applied late is already in the document, and is not
//! sent again. Shared by every session of the server: two sessions editing one document wait
//! for each other the same way.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tandem_ai::sync::lock;
use tandem_coding::workspace::FileChange;
use tokio::sync::OwnedMutexGuard;

/// A change that timed out and was answered later.
#[derive(Debug, Clone)]
pub struct Late {
    /// The change as the tool made it.
    pub change: FileChange,
    /// Whether the editor applied it.
    pub applied: bool,
    /// The document's version when it was sent (`None`: not open).
    pub version: Option<i32>,
}

/// A document's slot: held from a send until the editor's answer; keeps the last late answer.
pub type Slot = OwnedMutexGuard<Option<Late>>;

/// The slots, by document path.
#[derive(Debug, Default)]
pub struct InFlight {
    slots: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<Option<Late>>>>>,
}

impl InFlight {
    /// A new, empty set of slots.
    pub fn new() -> Self {
        Self::default()
    }

    /// `path`'s slot once no edit to it is unanswered, waiting at most `bound`; `None` when an
    /// earlier edit is still unanswered then.
    pub async fn acquire(&self, path: &Path, bound: Duration) -> Option<Slot> {
        let slot = lock(&self.slots)
            .entry(path.to_path_buf())
            .or_default()
            .clone();
        tokio::time::timeout(bound, slot.lock_owned()).await.ok()
    }
}

/// Whether `a` and `b` are the same change: the same replacements of the same text. A model
/// that repeats a change it was told had timed out makes exactly this.
pub fn same_change(a: &FileChange, b: &FileChange) -> bool {
    a.path == b.path && a.old_text == b.old_text && a.new_text == b.new_text
}
