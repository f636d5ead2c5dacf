//! The terminal mode's workspace: the disk, as in print mode, except that questions go to the
//! user — a path outside the folder, a file that makes tools run code — and, in confirm mode,
//! every edit and write shows its diff and waits for a yes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use tandem_agent::BoxFuture;
use tandem_coding::calls::ProposedChange;
use tandem_coding::workspace::{
    ChangeOutcome, ChangeSet, FileChange, FileContent, OpenBuffer, PermissionDecision,
    PermissionRequest, Workspace, WorkspaceError,
};
use tandem_coding::{DiskWorkspace, PermissionPolicy};
use tokio::sync::{mpsc, oneshot};

/// A question for the user, answered with the index of one of its choices (`None`: dismissed,
/// which counts as the last choice, the refusal).
pub struct Question {
    /// What is asked.
    pub title: String,
    /// Lines shown under it (a diff).
    pub diff: Option<String>,
    /// The answers, the refusal last.
    pub choices: Vec<String>,
    /// Where the answer goes.
    pub answer: oneshot::Sender<Option<usize>>,
}

/// See the module docs.
pub struct TuiWorkspace {
    disk: DiskWorkspace,
    cwd: PathBuf,
    confirm: AtomicBool,
    questions: mpsc::UnboundedSender<Question>,
}

impl TuiWorkspace {
    /// The folder `cwd` on disk, asking through `questions`.
    pub fn new(cwd: &Path, confirm: bool, questions: mpsc::UnboundedSender<Question>) -> Self {
        TuiWorkspace {
            disk: DiskWorkspace::new([cwd.to_path_buf()], PermissionPolicy::DenyAll),
            cwd: cwd.to_path_buf(),
            confirm: AtomicBool::new(confirm),
            questions,
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

    /// Asks; `None` when the terminal mode is gone or the question was dismissed.
    async fn ask(&self, title: String, diff: Option<String>, choices: &[&str]) -> Option<usize> {
        let (answer, heard) = oneshot::channel();
        let question = Question {
            title,
            diff,
            choices: choices.iter().map(|c| c.to_string()).collect(),
            answer,
        };
        self.questions.send(question).ok()?;
        heard.await.ok().flatten()
    }
}

impl Workspace for TuiWorkspace {
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
                let title = format!(
                    "{verb} {}?",
                    tandem_coding::paths::display(&change.path, &self.cwd)
                );
                match self
                    .ask(title, Some(shown.diff), &["Apply", "Reject"])
                    .await
                {
                    Some(0) => {}
                    _ => return Ok(ChangeOutcome::Rejected { reason: None }),
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
            let answer = self.ask(request.question(), None, &labels).await;
            // Dismissed: the last choice, the refusal.
            let at = answer.unwrap_or(choices.len() - 1).min(choices.len() - 1);
            choices[at].1.clone()
        })
    }

    fn open_buffers(&self) -> Vec<OpenBuffer> {
        Vec::new()
    }
}
