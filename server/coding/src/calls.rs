//! What a tool call did, beyond its result: the change an `edit` or `write` proposed, recorded by
//! the tool under the call's id so every front door renders the same thing.
//!
//! The tool records the [`ProposedChange`] when it proposes it, before the user answers, so the
//! record exists whether the change was applied or rejected. It is computed from the text the
//! workspace gave the tool — the document the user sees, unsaved edits included — so its diff
//! has the file's real line numbers, whatever argument form the model used. The session keeps
//! the records of its current run ([`CallRecords`]); a front door takes a call's record when it
//! shows the call's end.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use similar::TextDiff;
use tandem_ai::sync::lock;

use crate::paths;
use crate::workspace::FileChange;

/// A change a call proposed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedChange {
    /// The file (absolute, as the user named it).
    pub path: PathBuf,
    /// Its text before; `None` for a new file.
    pub old_text: Option<String>,
    /// Its text after.
    pub new_text: String,
    /// A unified diff (`--- a/<path>` / `+++ b/<path>`, `/dev/null` for a new file; paths
    /// relative to the working directory), hunks numbered by the file's lines, 3 lines of
    /// context.
    pub diff: String,
}

impl ProposedChange {
    /// The record of `change`, its paths shown relative to `cwd`.
    pub fn new(change: &FileChange, cwd: &Path) -> Self {
        let shown = paths::display(&change.path, cwd);
        let old_text = change.old_text.as_deref().unwrap_or("");
        let old_name = match change.old_text {
            Some(_) => format!("a/{shown}"),
            None => "/dev/null".to_string(),
        };
        let diff = TextDiff::from_lines(old_text, change.new_text.as_str())
            .unified_diff()
            .context_radius(3)
            .header(&old_name, &format!("b/{shown}"))
            .to_string();
        ProposedChange {
            path: change.path.clone(),
            old_text: change.old_text.clone(),
            new_text: change.new_text.clone(),
            diff,
        }
    }
}

/// What one call did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallRecord {
    /// The change it proposed, applied or not.
    pub change: Option<ProposedChange>,
}

/// A change the workspace applied during the current prompt's run: what the run's checkpoint
/// is made of ([`crate::checkpoint`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedChange {
    /// The file (absolute, as the user named it).
    pub path: PathBuf,
    /// Where it really led when the change was written.
    pub real: PathBuf,
    /// Its text before; `None` for a file the change created.
    pub old_text: Option<String>,
    /// Its text after.
    pub new_text: String,
}

/// The records of a session's calls, by call id.
#[derive(Debug, Default)]
pub struct CallRecords {
    calls: Mutex<HashMap<String, CallRecord>>,
    applied: Mutex<Vec<AppliedChange>>,
}

impl CallRecords {
    /// No records.
    pub fn new() -> Self {
        CallRecords::default()
    }

    /// Records that call `call` proposed `change`.
    pub fn propose(&self, call: &str, change: ProposedChange) {
        lock(&self.calls)
            .entry(call.to_string())
            .or_default()
            .change = Some(change);
    }

    /// The record of `call`, removed (a front door shows a call's end once).
    pub fn take(&self, call: &str) -> Option<CallRecord> {
        lock(&self.calls).remove(call)
    }

    /// Notes that `change` was applied (in the order changes land).
    pub fn applied(&self, change: &FileChange) {
        lock(&self.applied).push(AppliedChange {
            path: change.path.clone(),
            real: change.real.clone(),
            old_text: change.old_text.clone(),
            new_text: change.new_text.clone(),
        });
    }

    /// The changes applied since the last call, oldest first.
    pub fn take_applied(&self) -> Vec<AppliedChange> {
        std::mem::take(&mut *lock(&self.applied))
    }

    /// Forgets every record (a new run starts: call ids may repeat across runs).
    pub fn clear(&self) {
        lock(&self.calls).clear();
    }
}

#[cfg(test)]
#[path = "calls_tests.rs"]
mod tests;
