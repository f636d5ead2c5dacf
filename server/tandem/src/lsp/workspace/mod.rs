//! `LspWorkspace`: the coding tools' [`Workspace`] when Tandem runs inside an editor.
//!
//! In the editor the user's buffers are the truth, so the tools read open documents (unsaved
//! text included) before the disk, and they never write a file themselves: every change,
//! to an open buffer or to a file that is not open, is proposed through `workspace/applyEdit`
//! as minimal text edits ([`edits`]), after the consent the settings ask for ([`confirm`]).
//! Commands and paths outside the workspace are decided by the settings or asked about with
//! `window/showMessageRequest`.
//!
//! The seam with the server:
//! - [`EditorClient`] (in [`client`]): the server implements it over tower-lsp-server's
//!   `Client`; every call is wrapped here in the timeout of [`WorkspaceSettings::timeout`],
//!   so a client that never answers becomes a tool error, not a hung run.
//! - [`OpenDocuments`] (in [`buffers`]): a read-only view of the document store, implemented
//!   for `Mutex<DocumentStore>` and `RwLock<DocumentStore>`; the workspace only takes
//!   snapshots and never holds the lock across an await.
//! - [`WorkspaceSettings`] behind an `Arc<RwLock<_>>` the server updates on
//!   `didChangeConfiguration`; each proposal reads it when it starts.
//! - [`LspWorkspace::reset_run_approvals`]: "Apply all" lasts until the server calls it, which
//!   it does when a run starts.

pub mod buffers;
pub mod client;
pub mod confirm;
pub mod edits;
pub mod inflight;
pub mod propose;
pub mod saving;
pub(crate) mod set;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tandem_ai::sync::read_lock;

use tandem_agent::BoxFuture;
use tandem_coding::workspace::{
    ChangeOutcome, ChangeSet, FileChange, FileContent, OpenBuffer, PermissionDecision,
    PermissionRequest, Workspace, WorkspaceError,
};
use tandem_protocol::config::{BashPermission, EditMode};

pub use buffers::OpenDocuments;
pub use client::EditorClient;
pub use inflight::InFlight;
pub use saving::UnsavedEdits;

use edits::Base;

/// The default time the editor gets to answer a request: long, since the user may be reading
/// the edit before deciding.
pub const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// The reason an edit is refused when the buffer changed after the tool read it.
pub const CHANGED_IN_EDITOR: &str =
    "the file changed in the editor while the edit was prepared; read it again";

/// The reason an edit is refused when a file that is not open changed on disk after the read.
pub const CHANGED_ON_DISK: &str =
    "the file changed on disk while the edit was prepared; read it again";

/// The settings the workspace follows; the server updates them on configuration changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceSettings {
    /// Confirm each edit, or apply directly.
    pub edit_mode: EditMode,
    /// Whether shell commands run, are asked about, or are refused.
    pub bash_permission: BashPermission,
    /// How long any request to the editor may take.
    pub timeout: Duration,
    /// Whether the editor is asked to save the documents Tandem changed before a command
    /// runs ([`saving`]).
    pub save_before_commands: bool,
}

impl Default for WorkspaceSettings {
    fn default() -> Self {
        WorkspaceSettings {
            edit_mode: EditMode::default(),
            bash_permission: BashPermission::default(),
            timeout: DEFAULT_CLIENT_TIMEOUT,
            save_before_commands: true,
        }
    }
}

/// The tandem-coding workspace over an editor's buffers and consent.
pub struct LspWorkspace {
    roots: Vec<PathBuf>,
    documents: Arc<dyn OpenDocuments>,
    client: Arc<dyn EditorClient>,
    settings: Arc<RwLock<WorkspaceSettings>>,
    apply_all: AtomicBool,
    /// What late answers said, for the next tool result.
    notices: Arc<Mutex<Vec<String>>>,
    /// The documents applied edits changed and the editor has not saved (shared by the
    /// server's sessions; the server forgets a document on `didSave` / `didClose`).
    unsaved: Arc<UnsavedEdits>,
    /// How long a document must rest before a refused change is placed again
    /// ([`propose::QUIET`]; shorter in tests).
    quiet: Duration,
    /// The edits the editor has not answered, by document (shared by the server's sessions).
    inflight: Arc<InFlight>,
}

impl std::fmt::Debug for LspWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspWorkspace")
            .field("roots", &self.roots)
            .field("settings", &self.settings())
            .field("apply_all", &self.apply_all.load(Ordering::SeqCst))
            .finish()
    }
}

impl LspWorkspace {
    /// A workspace over the folders `roots` (absolute), the open `documents`, the editor
    /// `client` and the shared `settings`.
    pub fn new(
        roots: Vec<PathBuf>,
        documents: Arc<dyn OpenDocuments>,
        client: Arc<dyn EditorClient>,
        settings: Arc<RwLock<WorkspaceSettings>>,
    ) -> Self {
        LspWorkspace {
            roots,
            documents,
            client,
            settings,
            apply_all: AtomicBool::new(false),
            notices: Arc::new(Mutex::new(Vec::new())),
            unsaved: Arc::new(UnsavedEdits::new()),
            quiet: propose::QUIET,
            inflight: Arc::new(InFlight::new()),
        }
    }

    /// Waits `quiet` (instead of [`propose::QUIET`]) for the user to stop typing before a
    /// refused change is placed again.
    pub fn with_quiet(mut self, quiet: Duration) -> Self {
        self.quiet = quiet;
        self
    }

    /// Shares `unsaved` (the server's list of documents edited and not saved).
    pub fn with_unsaved(mut self, unsaved: Arc<UnsavedEdits>) -> Self {
        self.unsaved = unsaved;
        self
    }

    /// Shares `inflight` (the server's unanswered edits, by document).
    pub fn with_inflight(mut self, inflight: Arc<InFlight>) -> Self {
        self.inflight = inflight;
        self
    }

    /// Forgets "Apply all": the next edit in confirm mode is confirmed again. Call it when a
    /// run starts.
    pub fn reset_run_approvals(&self) {
        self.apply_all.store(false, Ordering::SeqCst);
    }

    /// Whether the user chose "Apply all" in this run.
    pub fn applies_all(&self) -> bool {
        self.apply_all.load(Ordering::SeqCst)
    }

    fn settings(&self) -> WorkspaceSettings {
        *read_lock(&self.settings)
    }

    /// `path` relative to the root holding it, for questions and labels.
    fn display_path(&self, path: &Path) -> String {
        self.roots
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .filter(|rel| !rel.as_os_str().is_empty())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The editor's URI for `path` and the text a change to it is computed against: the open
    /// buffer, else the disk.
    pub(super) async fn base_of(
        &self,
        path: &Path,
    ) -> Result<(tower_lsp_server::ls_types::Uri, Base), WorkspaceError> {
        let (uri, base) = match self.documents.find(path) {
            Some(doc) => {
                let uri = doc
                    .uri
                    .parse::<tower_lsp_server::ls_types::Uri>()
                    .ok()
                    .or_else(|| crate::uri::from_path(path));
                let base = Base::Open {
                    version: doc.version,
                    text: doc.text,
                };
                (uri, base)
            }
            None => (crate::uri::from_path(path), read_disk(path).await?),
        };
        let uri = uri.ok_or_else(|| {
            WorkspaceError::Client(format!(
                "{} cannot be named as a file:// URI for the editor",
                path.display()
            ))
        })?;
        Ok((uri, base))
    }
}

/// The file on disk as the base of a change (`Missing` when it does not exist).
pub(super) async fn read_disk(path: &Path) -> Result<Base, WorkspaceError> {
    match tokio::fs::read(path).await {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Base::Disk)
            .map_err(|_| WorkspaceError::Io {
                path: path.to_path_buf(),
                detail: "the file is not UTF-8 text, so the editor cannot edit it".into(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Base::Missing),
        Err(e) => Err(WorkspaceError::io(path, &e)),
    }
}

impl Workspace for LspWorkspace {
    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<FileContent, WorkspaceError>> {
        Box::pin(async move {
            if let Some(doc) = self.documents.find(path) {
                return Ok(FileContent::Text(doc.text.to_string()));
            }
            let meta = tokio::fs::metadata(path)
                .await
                .map_err(|e| WorkspaceError::io(path, &e))?;
            if meta.is_dir() {
                return Err(WorkspaceError::IsDirectory(path.to_path_buf()));
            }
            Ok(FileContent::Disk(path.to_path_buf()))
        })
    }

    fn open_buffers(&self) -> Vec<OpenBuffer> {
        self.documents
            .all()
            .into_iter()
            .map(|(path, text)| OpenBuffer {
                path,
                text: text.to_string(),
            })
            .collect()
    }

    fn propose<'a>(
        &'a self,
        _call: &'a str,
        change: FileChange,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        Box::pin(self.propose_change(change))
    }

    fn propose_set<'a>(
        &'a self,
        _call: &'a str,
        set: ChangeSet,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        Box::pin(self.propose_change_set(set))
    }

    fn ask_permission<'a>(
        &'a self,
        _call: &'a str,
        request: PermissionRequest,
    ) -> BoxFuture<'a, PermissionDecision> {
        Box::pin(self.decide(request))
    }

    fn take_notices(&self) -> Vec<String> {
        self.late_notices()
    }

    fn before_command<'a>(&'a self, _call: &'a str, command: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(self.save_before_command(command))
    }
}

#[cfg(test)]
mod tests;
