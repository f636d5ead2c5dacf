//! The `Workspace`: the only way the coding tools reach files and the user.
//!
//! One set of tools serves three front doors. The CLI works on disk; the language server reads
//! open (possibly unsaved) editor buffers and turns changes into edits the user accepts; ACP goes
//! through the client's file system and permission prompts. The tools ask the workspace to read a
//! file, *propose* a change (and learn whether it was applied or rejected), and ask permission
//! for actions the user may not want (a shell command, a path outside the workspace). The
//! search tools also ask it for the open documents, so that they search what the user sees.

mod change_set;
mod disk;
pub mod nofollow;
pub mod rebase;
mod scripted;

use std::ops::Range;
use std::path::{Path, PathBuf};

pub use change_set::{delete_on_disk, propose_one_by_one, ChangeSet, FileDeletion};
pub use disk::{DiskWorkspace, PermissionPolicy};
pub use scripted::ScriptedWorkspace;

use tandem_agent::BoxFuture;

/// A file's content as the workspace has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    /// Text held by the editor or client (an open buffer wins over disk).
    Text(String),
    /// Read it from disk at this path (large files are then streamed, not loaded).
    Disk(PathBuf),
}

/// A document open in the editor, with the text the user sees (saved or not). The search tools
/// (grep, find, ls) look at these instead of, or besides, the disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenBuffer {
    /// The document's absolute path.
    pub path: PathBuf,
    /// Its text in the editor.
    pub text: String,
}

/// One replaced range of the old text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    /// Byte range in the old text.
    pub range: Range<usize>,
    /// What replaces it.
    pub new_text: String,
}

/// A change a tool wants to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Absolute path, as the user named it (symlinks not resolved).
    pub path: PathBuf,
    /// Where `path` really leads (every symlink resolved) when the tool checked it and any
    /// question about it was answered. The change must land exactly there: check it again right
    /// before writing ([`FileChange::verify_target`]).
    pub real: PathBuf,
    /// The text the change was computed against; `None` for a file that did not exist.
    pub old_text: Option<String>,
    /// The complete new text.
    pub new_text: String,
    /// The exact replaced ranges of `old_text`, in order, when known (edits); empty for
    /// whole-file writes.
    pub edits: Vec<TextEdit>,
}

impl FileChange {
    /// Checks that `path` still leads to `real`, right before the change is written; a path
    /// that changed (a folder swapped for a symlink while the user was asked) is an error,
    /// never a write elsewhere.
    pub fn verify_target(&self) -> Result<(), WorkspaceError> {
        crate::paths::verify_target(&self.path, &self.real).map_err(WorkspaceError::Client)
    }
}

/// What became of a proposed change. Each way of not applying it is its own variant, so the
/// model is told what really happened: a refusal by the user is not a timeout, and neither is a
/// document the user changed meanwhile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeOutcome {
    /// The change is in place, as proposed.
    Applied,
    /// The change is in place, on a document the user changed while it was pending
    /// ([`rebase`]): this is the change as really made (its `old_text` the document as it was
    /// then), for the call's record and diff.
    Rebased(Box<FileChange>),
    /// The user said no; nothing changed.
    Rejected {
        /// Why, when given.
        reason: Option<String>,
    },
    /// The user changed what the change replaces while it was pending; nothing changed.
    Conflict {
        /// What happened, with the current text of the region.
        detail: String,
    },
    /// The editor did not answer in time. It may still apply the change later; a late answer
    /// is reported in a later tool result.
    TimedOut {
        /// What was waited for, and how long.
        detail: String,
    },
    /// The editor or client refused or failed to apply it (not the user); nothing changed.
    Refused {
        /// Why.
        reason: String,
    },
}

impl ChangeOutcome {
    /// The tool error for an outcome that is not a success, `None` for a success; `what`
    /// names the change for the sentence ("the edit to", "writing") and `path` the file.
    pub fn failure(&self, what: &str, path: &str) -> Option<String> {
        match self {
            ChangeOutcome::Applied | ChangeOutcome::Rebased(_) => None,
            ChangeOutcome::Rejected { reason } => Some(format!(
                "The user rejected {what} {path}{}",
                reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )),
            ChangeOutcome::Conflict { detail } => Some(detail.clone()),
            ChangeOutcome::TimedOut { detail } => Some(format!(
                "No answer from the editor about {what} {path}: {detail}. It may still apply \
                 it: do not repeat the change; read the file to see what it holds now."
            )),
            ChangeOutcome::Refused { reason } => Some(format!(
                "The editor did not apply {what} {path} (the user did not reject it): \
                 {reason}. Nothing was changed."
            )),
        }
    }

    /// The sentence added to a successful result when the change had to be re-based.
    pub fn note(&self) -> Option<&'static str> {
        match self {
            ChangeOutcome::Rebased(_) => Some(
                " The user had changed the file meanwhile; the change was applied to the \
                 current text, keeping their changes.",
            ),
            _ => None,
        }
    }
}

/// Something that needs the user's consent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionRequest {
    /// Run a shell command.
    Bash {
        /// The command line.
        command: String,
        /// Its working directory.
        cwd: PathBuf,
    },
    /// Touch a path outside the workspace roots.
    OutsideWorkspace {
        /// The resolved path (symlinks followed).
        path: PathBuf,
        /// True for a write, false for a read.
        write: bool,
    },
    /// Write a file that makes tools run code (`.git/`, `.pi/`, `.vscode/`, …). Asked whatever
    /// the edit mode; "always" answers count once.
    ProtectedPath {
        /// The resolved path.
        path: PathBuf,
        /// What writing it risks, in a sentence.
        risk: String,
    },
}

impl PermissionRequest {
    /// A one-line description for a prompt.
    pub fn title(&self) -> String {
        match self {
            PermissionRequest::Bash { command, .. } => format!("Run `{command}`"),
            PermissionRequest::OutsideWorkspace { path, write: true } => {
                format!("Write {} (outside the workspace)", path.display())
            }
            PermissionRequest::OutsideWorkspace { path, write: false } => {
                format!("Read {} (outside the workspace)", path.display())
            }
            PermissionRequest::ProtectedPath { path, .. } => {
                format!("Write {} (it can make tools run code)", path.display())
            }
        }
    }
}

impl PermissionRequest {
    /// The question a front door that asks in words puts: the title, with a protected path's
    /// risk after it.
    pub fn question(&self) -> String {
        match self {
            PermissionRequest::ProtectedPath { risk, .. } => format!("{}: {risk}?", self.title()),
            _ => format!("{}?", self.title()),
        }
    }

    /// The answers to offer, in order, with what each decides: once, for the rest of the
    /// session (never for a protected path: each such write asks), refuse.
    pub fn choices(&self) -> Vec<(&'static str, PermissionDecision)> {
        let mut choices = vec![("Allow once", PermissionDecision::AllowOnce)];
        if !matches!(self, PermissionRequest::ProtectedPath { .. }) {
            choices.push(("Allow for this session", PermissionDecision::AllowAlways));
        }
        choices.push((
            "Refuse",
            PermissionDecision::Reject {
                reason: Some("the user refused".to_string()),
            },
        ));
        choices
    }
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionDecision {
    /// This once.
    AllowOnce,
    /// This and similar requests for the rest of the session.
    AllowAlways,
    /// No.
    Reject {
        /// Why, when given.
        reason: Option<String>,
    },
}

/// A shell command for a workspace that runs commands itself (an ACP client's terminal).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRequest {
    /// The shell to run (already resolved, e.g. `/bin/bash`); the script is its `-c` argument.
    pub shell: PathBuf,
    /// The script (the command line, after any configured prefix).
    pub script: String,
    /// Working directory.
    pub cwd: PathBuf,
    /// Stop the command after this long.
    pub timeout: Option<std::time::Duration>,
    /// Keep at most this many bytes of output (the end).
    pub output_limit: usize,
}

/// How a command run by the workspace ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandEnding {
    /// It exited, with a code or by a signal (the signal's name, e.g. `SIGKILL`).
    Exited {
        /// The exit code.
        code: Option<i32>,
        /// The signal that ended it.
        signal: Option<String>,
    },
    /// It ran past the request's timeout and was killed.
    TimedOut,
    /// The run was aborted and the command killed.
    Aborted,
}

/// What a command run by the workspace printed, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    /// Interleaved stdout and stderr (its end, when it printed more than the limit).
    pub output: Vec<u8>,
    /// True when the start of the output was dropped.
    pub truncated: bool,
    /// How it ended.
    pub ending: CommandEnding,
}

/// A workspace failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    /// No such file.
    #[error("File not found: {}", .0.display())]
    NotFound(PathBuf),
    /// A directory where a file was expected.
    #[error("{} is a directory, not a file", .0.display())]
    IsDirectory(PathBuf),
    /// The file changed since the tool read it.
    #[error("{} changed since it was read; read it again before editing", .0.display())]
    Conflict(PathBuf),
    /// Any other I/O failure.
    #[error("Cannot access {}: {detail}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        detail: String,
    },
    /// The editor or client failed.
    #[error("{0}")]
    Client(String),
}

impl WorkspaceError {
    /// Maps an I/O error on `path`.
    pub fn io(path: &Path, e: &std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => WorkspaceError::NotFound(path.to_path_buf()),
            std::io::ErrorKind::IsADirectory => WorkspaceError::IsDirectory(path.to_path_buf()),
            _ => WorkspaceError::Io {
                path: path.to_path_buf(),
                detail: e.to_string(),
            },
        }
    }
}

/// Files and consent, as a front door provides them. Requests made for a tool call name it
/// (`call`: the model's call id), so a front door can tie a question or a change to the call the
/// user sees.
pub trait Workspace: Send + Sync {
    /// The workspace folders (absolute, symlinks resolved). The first is the default working
    /// directory.
    fn roots(&self) -> &[PathBuf];
    /// A file's content; an open editor buffer wins over disk.
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<FileContent, WorkspaceError>>;
    /// Proposes call `call`'s change; resolves once it was applied or rejected.
    fn propose<'a>(
        &'a self,
        call: &'a str,
        change: FileChange,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>>;
    /// Proposes several changes as one edit (an undo); resolves once it was applied or
    /// rejected as a whole. The default proposes them one by one ([`propose_one_by_one`]).
    fn propose_set<'a>(
        &'a self,
        call: &'a str,
        set: ChangeSet,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        Box::pin(propose_one_by_one(self, call, set))
    }
    /// Asks the user, for call `call`.
    fn ask_permission<'a>(
        &'a self,
        call: &'a str,
        request: PermissionRequest,
    ) -> BoxFuture<'a, PermissionDecision>;
    /// What the workspace has to tell the model since it last asked (a change that timed out
    /// and was answered later, say); each notice is given once. The default has none.
    fn take_notices(&self) -> Vec<String> {
        Vec::new()
    }
    /// Called before call `call` runs the shell command `command` (locally or through
    /// [`Workspace::run_command`]): an editor saves the documents Tandem changed, so the
    /// command sees on disk what the user sees; what stays unsaved becomes a notice. The
    /// default does nothing (the disk is the truth).
    fn before_command<'a>(&'a self, _call: &'a str, _command: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
    /// The documents open in the editor, with their text: what grep, find and ls see besides
    /// the disk. None by default (the disk is all there is).
    fn open_buffers(&self) -> Vec<OpenBuffer> {
        Vec::new()
    }
    /// Runs call `call`'s shell command where the user sees it (an ACP client's terminal), or `None` when
    /// commands run locally (the default). `cancel` fires on abort: kill the command, answer
    /// [`CommandEnding::Aborted`].
    fn run_command<'a>(
        &'a self,
        _call: &'a str,
        _request: CommandRequest,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> Option<BoxFuture<'a, Result<CommandOutcome, WorkspaceError>>> {
        None
    }
}

/// Reads `path` as UTF-8 text through the workspace (a BOM, if any, is kept).
pub async fn read_text(workspace: &dyn Workspace, path: &Path) -> Result<String, WorkspaceError> {
    match workspace.read(path).await? {
        FileContent::Text(text) => Ok(text),
        FileContent::Disk(disk) => {
            let bytes = tokio::fs::read(&disk)
                .await
                .map_err(|e| WorkspaceError::io(&disk, &e))?;
            String::from_utf8(bytes).map_err(|_| WorkspaceError::Io {
                path: disk.clone(),
                detail: "the file is not valid UTF-8 text".into(),
            })
        }
    }
}

/// Applies `edits` (sorted, non-overlapping byte ranges) to `old`.
pub fn apply_edits(old: &str, edits: &[TextEdit]) -> String {
    let mut out = String::with_capacity(old.len());
    let mut at = 0;
    for edit in edits {
        out.push_str(&old[at..edit.range.start]);
        out.push_str(&edit.new_text);
        at = edit.range.end;
    }
    out.push_str(&old[at..]);
    out
}
