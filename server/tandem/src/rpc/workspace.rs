//! RPC mode's workspace: the disk, as in print and JSON modes, except that what the editors and
//! the terminal mode ask about is asked of the client too — a path outside the folder (read or
//! written) and a file that makes tools run code (`.git/hooks/`, `.envrc`, …) — through pi's
//! extension UI sub-protocol (an `extension_ui_request` `select`). A client that does not
//! answer within [`QUESTION_TIMEOUT`] (or cancels) is taken as a refusal, which the model sees
//! as the tool's error. Commands run without a question, as in pi's RPC mode.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tandem_agent::BoxFuture;
use tandem_coding::workspace::{
    ChangeOutcome, ChangeSet, FileChange, FileContent, PermissionDecision, PermissionRequest,
    Workspace, WorkspaceError,
};
use tandem_coding::{DiskWorkspace, PermissionPolicy};

use super::dialogs::Dialogs;

/// How long a permission question waits for the client's answer.
pub const QUESTION_TIMEOUT: Duration = Duration::from_secs(120);

/// See the module docs.
pub struct RpcWorkspace {
    disk: DiskWorkspace,
    dialogs: Arc<Dialogs>,
}

impl RpcWorkspace {
    /// The folder `cwd` on disk, asking through `dialogs`.
    pub fn new(cwd: &Path, dialogs: Arc<Dialogs>) -> Self {
        RpcWorkspace {
            disk: DiskWorkspace::new([cwd.to_path_buf()], PermissionPolicy::DenyAll),
            dialogs,
        }
    }
}

impl Workspace for RpcWorkspace {
    fn roots(&self) -> &[PathBuf] {
        self.disk.roots()
    }

    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<FileContent, WorkspaceError>> {
        self.disk.read(path)
    }

    fn propose<'a>(
        &'a self,
        call: &'a str,
        change: FileChange,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        self.disk.propose(call, change)
    }

    fn propose_set<'a>(
        &'a self,
        call: &'a str,
        set: ChangeSet,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        self.disk.propose_set(call, set)
    }

    fn ask_permission<'a>(
        &'a self,
        _call: &'a str,
        request: PermissionRequest,
    ) -> BoxFuture<'a, PermissionDecision> {
        Box::pin(async move {
            let choices = request.choices();
            let labels: Vec<&str> = choices.iter().map(|(label, _)| *label).collect();
            let answer = self
                .dialogs
                .select(&request.question(), &labels, QUESTION_TIMEOUT)
                .await;
            let chosen = answer.and_then(|a| choices.iter().find(|(label, _)| *label == a));
            match chosen {
                Some((_, decision)) => decision.clone(),
                None => PermissionDecision::Reject {
                    reason: Some(format!(
                        "the client did not allow it (no answer within {} s, or cancelled)",
                        QUESTION_TIMEOUT.as_secs()
                    )),
                },
            }
        })
    }
}
