//! Several changes as one `workspace/applyEdit`: an undo, which the user accepts or rejects
//! whole.
//!
//! Each file's edits are planned like a tool's change ([`super::edits::plan`]), against the text
//! the undo was computed from: a document the user typed in since is refused as stale rather
//! than overwritten. Files to delete become `DeleteFile` operations, which need the client's
//! `resourceOperations: ["delete"]`. The confirmation is the edit mode's, asked once for the set
//! (an earlier "Apply all" of the agent's edits does not cover it).

use std::collections::HashMap;

use tandem_coding::workspace::{ChangeOutcome, ChangeSet, WorkspaceError};
use tandem_protocol::config::EditMode;
use tandem_protocol::interaction::{self, EditAnswer};
use tower_lsp_server::ls_types::{
    self as lsp, ChangeAnnotation, DeleteFile, DeleteFileOptions, DocumentChangeOperation,
    DocumentChanges, MessageType, ResourceOp, WorkspaceEdit,
};

use super::client::{with_timeout, APPLY_EDIT};
use super::confirm::{no_answer, rejected, ANNOTATION_ID, NOT_APPLIED, REJECTED_BY_USER};
use super::edits::{self, Base, PlannedChange};
use super::{LspWorkspace, CHANGED_IN_EDITOR, CHANGED_ON_DISK};

/// The reason an undo is refused when a file it deletes cannot be deleted by the editor.
pub const CANNOT_DELETE: &str = "the editor cannot delete files through workspace/applyEdit \
     (no resourceOperations delete), and this undo deletes a file the turn created";

impl LspWorkspace {
    /// Plans every change of `set`, asks once, and sends one edit.
    pub(super) async fn propose_change_set(
        &self,
        set: ChangeSet,
    ) -> Result<ChangeOutcome, WorkspaceError> {
        let caps = self.client.capabilities();
        if !caps.apply_edit {
            return Ok(rejected(
                "the editor does not support workspace/applyEdit, so Tandem cannot change files \
                 through it; use an editor integration that does, or the tandem CLI",
            ));
        }
        let can_delete = caps.delete_files && caps.document_changes;
        if !can_delete && !set.deletions.is_empty() {
            return Ok(rejected(CANNOT_DELETE));
        }
        // No document of the set may have an unanswered edit (one that timed out may still
        // land): wait for their answers, in path order, and hold the slots until this one's.
        let mut paths: Vec<std::path::PathBuf> = set
            .changes
            .iter()
            .map(|c| c.path.clone())
            .chain(set.deletions.iter().map(|d| d.path.clone()))
            .collect();
        paths.sort();
        paths.dedup();
        let mut slots = Vec::with_capacity(paths.len());
        for path in &paths {
            match self.inflight.acquire(path, self.settings().timeout).await {
                Some(mut slot) => {
                    // A late answer changed the text, if anything: the checks below see it.
                    slot.take();
                    slots.push(slot);
                }
                None => {
                    return Ok(rejected(format!(
                        "an earlier change to {} is still waiting for the editor's answer; \
                         try the undo again once it was answered",
                        path.display()
                    )))
                }
            }
        }
        let encoding = self.documents.encoding();
        let mut planned = Vec::new();
        for change in set.changes {
            let open = self.documents.find(&change.path).is_some();
            let (uri, base) = self.base_of(&change.path).await?;
            let stale = if open {
                CHANGED_IN_EDITOR
            } else {
                CHANGED_ON_DISK
            };
            let unchanged = match (&base, change.old_text.as_deref()) {
                (Base::Open { text, .. }, Some(old)) => *text == old,
                (Base::Disk(text), Some(old)) => text == old,
                _ => false,
            };
            if !unchanged {
                return Ok(rejected(format!("{}: {stale}", change.path.display())));
            }
            let planned_change = tokio::task::spawn_blocking(move || {
                edits::plan(&change, uri, base, encoding).map(|p| (p, change))
            })
            .await
            .map_err(|e| WorkspaceError::Client(format!("computing the edit failed: {e}")))?;
            match planned_change {
                Ok(p) => planned.push(p),
                Err(_) => return Ok(rejected(stale)),
            }
        }
        let mut deletions = Vec::new();
        for deletion in set.deletions {
            let (uri, base) = self.base_of(&deletion.path).await?;
            let unchanged = match &base {
                Base::Open { text, .. } => *text == deletion.old_text.as_str(),
                Base::Disk(text) => *text == deletion.old_text,
                Base::Missing => false,
            };
            if !unchanged {
                return Ok(rejected(format!(
                    "{}: the file changed while the undo was prepared; ask again",
                    deletion.path.display()
                )));
            }
            deletions.push((uri, deletion));
        }

        let files = planned.len() + deletions.len();
        let (added, removed) = planned
            .iter()
            .fold((0, 0), |(a, r), (p, _)| (a + p.added, r + p.removed));
        let label = format!(
            "Tandem: undo ({files} file{})",
            if files == 1 { "" } else { "s" }
        );
        let stats = format!(
            "+{added}/-{removed} lines{}",
            if deletions.is_empty() {
                String::new()
            } else {
                format!(", {} deleted", deletions.len())
            }
        );
        let settings = self.settings();
        // "Apply all" was an answer about the agent's edits in a run; an undo is asked anew.
        let direct = settings.edit_mode == EditMode::Auto;
        let annotate = !direct && caps.change_annotations && caps.document_changes;
        if !direct && !annotate {
            if !caps.show_message_request {
                return Ok(rejected(
                    "the editor can neither preview nor confirm edits; set the tandem editMode \
                     setting to auto to apply them directly",
                ));
            }
            let message = format!("Tandem wants to undo its changes to {files} file(s) ({stats})");
            let answer = self
                .ask(MessageType::INFO, message, &interaction::EDIT_ACTIONS)
                .await;
            match answer.map(|title| EditAnswer::from_title(title.as_deref())) {
                Ok(EditAnswer::Apply) | Ok(EditAnswer::ApplyAll) => {}
                Ok(EditAnswer::Reject) => return Ok(rejected(REJECTED_BY_USER)),
                Err(e) => return Ok(rejected(no_answer(&e))),
            }
        }
        for (_, change) in &planned {
            if let Err(e) = change.verify_target() {
                return Ok(rejected(e.to_string()));
            }
        }
        for (_, deletion) in &deletions {
            if let Err(e) = tandem_coding::paths::verify_target(&deletion.path, &deletion.real) {
                return Ok(rejected(e));
            }
        }
        let annotation = annotate.then(|| ChangeAnnotation {
            label: label.clone(),
            needs_confirmation: Some(true),
            description: Some(stats),
        });
        let plans = planned.into_iter().map(|(p, _)| p).collect();
        let uris = deletions.into_iter().map(|(uri, _)| uri).collect();
        let edit = one_edit(plans, uris, caps.document_changes, annotation);
        match with_timeout(
            APPLY_EDIT,
            settings.timeout,
            self.client.apply_edit(label, edit),
        )
        .await
        {
            Ok(response) if response.applied => Ok(ChangeOutcome::Applied),
            Ok(response) => Ok(rejected(
                response
                    .failure_reason
                    .filter(|r| !r.trim().is_empty())
                    .as_deref()
                    .unwrap_or(NOT_APPLIED),
            )),
            Err(e) => Ok(rejected(no_answer(&e))),
        }
    }
}

/// One `WorkspaceEdit` for every planned change and deletion: versioned `documentChanges`
/// (with the deletions as operations) when the client takes them, else a `changes` map.
fn one_edit(
    planned: Vec<PlannedChange>,
    deletions: Vec<lsp::Uri>,
    document_changes: bool,
    annotation: Option<ChangeAnnotation>,
) -> WorkspaceEdit {
    let id = annotation.as_ref().map(|_| ANNOTATION_ID.to_owned());
    let change_annotations = annotation.map(|a| HashMap::from([(ANNOTATION_ID.to_owned(), a)]));
    if !document_changes {
        let changes = planned.into_iter().map(|p| (p.uri, p.edits)).collect();
        return WorkspaceEdit {
            changes: Some(changes),
            document_changes: None,
            change_annotations: None,
        };
    }
    let mut operations: Vec<DocumentChangeOperation> = planned
        .into_iter()
        .map(|p| {
            DocumentChangeOperation::Edit(edits::document_edit(
                p.uri,
                p.version,
                p.edits,
                id.as_deref(),
            ))
        })
        .collect();
    operations.extend(deletions.into_iter().map(|uri| {
        DocumentChangeOperation::Op(ResourceOp::Delete(DeleteFile {
            uri,
            options: Some(DeleteFileOptions {
                recursive: Some(false),
                ignore_if_not_exists: Some(true),
            }),
            annotation_id: id.clone(),
        }))
    }));
    WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Operations(operations)),
        change_annotations,
    }
}
