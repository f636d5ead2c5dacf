//! The disk workspace: files as they are on disk, and a fixed answer to permission requests
//! (the CLI, like pi, allows everything unless told otherwise).

use std::path::{Path, PathBuf};

use tandem_agent::BoxFuture;

use super::{
    ChangeOutcome, FileChange, FileContent, PermissionDecision, PermissionRequest, Workspace,
    WorkspaceError,
};

/// How a disk workspace answers permission requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionPolicy {
    /// Allow everything (pi's behaviour; the CLI default).
    #[default]
    AllowAll,
    /// Refuse everything that needs consent.
    DenyAll,
}

/// Files on disk under one or more roots.
#[derive(Debug, Clone)]
pub struct DiskWorkspace {
    roots: Vec<PathBuf>,
    policy: PermissionPolicy,
}

impl DiskWorkspace {
    /// A workspace over `roots` (made absolute, symlinks resolved when they exist).
    pub fn new(roots: impl IntoIterator<Item = PathBuf>, policy: PermissionPolicy) -> Self {
        let roots = roots
            .into_iter()
            .map(|r| std::fs::canonicalize(&r).unwrap_or(r))
            .collect();
        DiskWorkspace { roots, policy }
    }

    /// Writes `change` to disk, refusing when its path no longer leads where it was approved
    /// to, or the file no longer holds `old_text`. The write follows no symlink
    /// ([`super::nofollow`]).
    pub async fn write_change(change: &FileChange) -> Result<(), WorkspaceError> {
        change.verify_target()?;
        let change = change.clone();
        tokio::task::spawn_blocking(move || {
            super::nofollow::write(&change.real, change.old_text.as_deref(), &change.new_text)
        })
        .await
        .map_err(|e| WorkspaceError::Client(format!("the write failed: {e}")))?
    }
}

impl Workspace for DiskWorkspace {
    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<FileContent, WorkspaceError>> {
        Box::pin(async move {
            let meta = tokio::fs::metadata(path)
                .await
                .map_err(|e| WorkspaceError::io(path, &e))?;
            if meta.is_dir() {
                return Err(WorkspaceError::IsDirectory(path.to_path_buf()));
            }
            Ok(FileContent::Disk(path.to_path_buf()))
        })
    }

    fn propose<'a>(
        &'a self,
        _call: &'a str,
        change: FileChange,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        Box::pin(async move {
            DiskWorkspace::write_change(&change).await?;
            Ok(ChangeOutcome::Applied)
        })
    }

    fn ask_permission<'a>(
        &'a self,
        _call: &'a str,
        _request: PermissionRequest,
    ) -> BoxFuture<'a, PermissionDecision> {
        let decision = match self.policy {
            PermissionPolicy::AllowAll => PermissionDecision::AllowOnce,
            PermissionPolicy::DenyAll => PermissionDecision::Reject {
                reason: Some("denied by configuration".into()),
            },
        };
        Box::pin(std::future::ready(decision))
    }
}
