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
            match DiskWorkspace::write_change(&change).await {
                Err(WorkspaceError::Conflict(path)) => {
                    // Someone changed the file since the tool read it: place the change on the
                    // file as it is now (their change kept), or say what is in the way.
                    let now = match tokio::fs::read(&change.real).await {
                        Ok(bytes) => String::from_utf8(bytes).ok(),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                        Err(e) => return Err(WorkspaceError::io(&path, &e)),
                    };
                    let shown = path.display().to_string();
                    match super::rebase::rebase(&change, now.as_deref(), &shown) {
                        Ok(rebased) => {
                            let made = FileChange {
                                old_text: now,
                                new_text: rebased.new_text,
                                edits: rebased.edits,
                                ..change
                            };
                            DiskWorkspace::write_change(&made).await?;
                            Ok(ChangeOutcome::Rebased(Box::new(made)))
                        }
                        Err(conflict) => Ok(ChangeOutcome::Conflict {
                            detail: conflict.detail,
                        }),
                    }
                }
                Err(e) => Err(e),
                Ok(()) => Ok(ChangeOutcome::Applied),
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &Path, old: &str, new: &str) -> FileChange {
        let start = old.find("two").expect("the edited line");
        FileChange {
            path: path.to_path_buf(),
            real: path.to_path_buf(),
            old_text: Some(old.to_owned()),
            new_text: new.to_owned(),
            edits: vec![super::super::TextEdit {
                range: start..start + 3,
                new_text: "2".into(),
            }],
        }
    }

    #[tokio::test]
    async fn a_file_changed_elsewhere_since_the_read_keeps_that_change() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = std::fs::canonicalize(dir.path())
            .expect("root")
            .join("a.txt");
        let ws = DiskWorkspace::new([dir.path().to_path_buf()], PermissionPolicy::AllowAll);
        let old = "one\ntwo\n";
        std::fs::write(&path, "zero\none\ntwo\n").expect("someone else's write");
        let outcome = ws
            .propose("c", change(&path, old, "one\n2\n"))
            .await
            .expect("propose");
        assert!(matches!(outcome, ChangeOutcome::Rebased(_)), "{outcome:?}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "zero\none\n2\n"
        );

        std::fs::write(&path, "one\ntwenty\n").expect("someone else's write");
        let outcome = ws
            .propose("c", change(&path, old, "one\n2\n"))
            .await
            .expect("propose");
        assert!(
            matches!(outcome, ChangeOutcome::Conflict { .. }),
            "{outcome:?}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "one\ntwenty\n"
        );
    }
}
