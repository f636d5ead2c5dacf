//! The disk as the workspace of a front door that asks its user in words — the terminal mode
//! (a picker in the terminal) and RPC mode (pi's `extension_ui_request`) — rather than through
//! an editor's own edit and permission machinery.
//!
//! Files are read and written on disk, as in print mode. What needs consent is asked through
//! the front door's [`Asker`]: a path outside the folder, a file that makes tools run code
//! (with the words and answers of `PermissionRequest::question` / `choices`), and, in confirm
//! mode, every edit or write with its diff. No answer is a refusal, and the model is told.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use tandem_agent::BoxFuture;
use tandem_coding::calls::ProposedChange;
use tandem_coding::workspace::{
    ChangeOutcome, ChangeSet, FileChange, FileContent, PermissionDecision, PermissionRequest,
    Workspace, WorkspaceError,
};
use tandem_coding::{DiskWorkspace, PermissionPolicy};

/// How a front door puts a question to its user.
pub trait Asker: Send + Sync {
    /// Asks `question` (with `detail` under it, a diff, when given) with `choices`, the refusal
    /// last. The index chosen, or why there is none (dismissed, cancelled, no answer in time):
    /// `None` when the refusal says it well enough.
    fn ask<'a>(
        &'a self,
        question: String,
        detail: Option<String>,
        choices: &'a [&'a str],
    ) -> BoxFuture<'a, Result<usize, Option<String>>>;
}

/// See the module docs.
pub struct AskingDisk<A> {
    disk: DiskWorkspace,
    cwd: PathBuf,
    confirm: AtomicBool,
    asker: A,
}

impl<A: Asker> AskingDisk<A> {
    /// The folder `cwd` on disk, asking through `asker`; `confirm`: edits wait for a yes.
    pub fn new(cwd: &Path, confirm: bool, asker: A) -> Self {
        AskingDisk {
            disk: DiskWorkspace::new([cwd.to_path_buf()], PermissionPolicy::DenyAll),
            cwd: cwd.to_path_buf(),
            confirm: AtomicBool::new(confirm),
            asker,
        }
    }

    /// Whether edits wait for the user's yes.
    pub fn confirm(&self) -> bool {
        self.confirm.load(Ordering::Relaxed)
    }

    /// Turns confirm mode on or off.
    pub fn set_confirm(&self, on: bool) {
        self.confirm.store(on, Ordering::Relaxed);
    }
}

impl<A: Asker> Workspace for AskingDisk<A> {
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
        Box::pin(async move {
            if self.confirm() {
                let shown = ProposedChange::new(&change, &self.cwd);
                let verb = if change.old_text.is_some() {
                    "Apply this edit to"
                } else {
                    "Create"
                };
                let question = format!(
                    "{verb} {}?",
                    tandem_coding::paths::display(&change.path, &self.cwd)
                );
                let choices = ["Apply", "Reject"];
                match self.asker.ask(question, Some(shown.diff), &choices).await {
                    Ok(0) => {}
                    Ok(_) => return Ok(ChangeOutcome::Rejected { reason: None }),
                    Err(reason) => return Ok(ChangeOutcome::Rejected { reason }),
                }
            }
            self.disk.propose(call, change).await
        })
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
            let refusal = choices.len() - 1;
            match self.asker.ask(request.question(), None, &labels).await {
                Ok(chosen) => choices[chosen.min(refusal)].1.clone(),
                Err(None) => choices[refusal].1.clone(),
                Err(Some(reason)) => PermissionDecision::Reject {
                    reason: Some(reason),
                },
            }
        })
    }
}
