//! Several file changes proposed as one edit: what an undo proposes.
//!
//! A tool changes one file at a time, but undoing a turn may touch several files and delete the
//! ones the turn created; the user accepts or rejects that as one step. A front door that can
//! show one edit for several files (the language server's `workspace/applyEdit`) overrides
//! [`super::Workspace::propose_set`]; the default here proposes the files one by one, which is
//! what a workspace without such an edit (the disk, an ACP client's file system) can offer.

use std::path::PathBuf;

use super::{ChangeOutcome, FileChange, Workspace, WorkspaceError};

/// A file to delete, if it still holds `old_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDeletion {
    /// Absolute path, as the user named it.
    pub path: PathBuf,
    /// Where it really leads (checked again right before deleting).
    pub real: PathBuf,
    /// The text it must still hold to be deleted.
    pub old_text: String,
}

/// Changes and deletions proposed together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    /// Files to change, in path order.
    pub changes: Vec<FileChange>,
    /// Files to delete.
    pub deletions: Vec<FileDeletion>,
}

impl ChangeSet {
    /// True when there is nothing to propose.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.deletions.is_empty()
    }
}

/// The default [`super::Workspace::propose_set`]: each change proposed in turn (stopping at the
/// first one that is not applied), then each deletion done on disk after checking the file
/// still holds what the undo expects. Not atomic: a refusal part-way leaves the earlier files
/// changed, which the answer says.
pub async fn propose_one_by_one<W: Workspace + ?Sized>(
    workspace: &W,
    call: &str,
    set: ChangeSet,
) -> Result<ChangeOutcome, WorkspaceError> {
    for change in set.changes {
        let outcome = workspace.propose(call, change).await?;
        if outcome != ChangeOutcome::Applied {
            return Ok(outcome);
        }
    }
    for deletion in set.deletions {
        delete_on_disk(&deletion).await?;
    }
    Ok(ChangeOutcome::Applied)
}

/// Deletes `deletion.path` from disk when it still leads to `real` and holds `old_text`.
pub async fn delete_on_disk(deletion: &FileDeletion) -> Result<(), WorkspaceError> {
    crate::paths::verify_target(&deletion.path, &deletion.real).map_err(WorkspaceError::Client)?;
    let current = tokio::fs::read(&deletion.real)
        .await
        .map_err(|e| WorkspaceError::io(&deletion.real, &e))?;
    if current != deletion.old_text.as_bytes() {
        return Err(WorkspaceError::Conflict(deletion.path.clone()));
    }
    tokio::fs::remove_file(&deletion.real)
        .await
        .map_err(|e| WorkspaceError::io(&deletion.real, &e))
}
