//! `tandem undo`: a session's last turn taken back on disk, as the editors' "Undo Last Tandem
//! Turn" does through the editor.
//!
//! The session is chosen as `-c` / `--session` choose it for a run (the most recent session of
//! this directory by default). Its folder (the session header's `cwd`) is the workspace: the
//! recorded files are read and written there, on disk, with no question — the command itself
//! is the user's consent, as a run's edits need none in print mode. What was undone, and each
//! hunk left because it changed since, is printed.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use tandem_ai::registry::AgentDir;
use tandem_coding::checkpoint::{self, UndoError, UndoOutcome};
use tandem_coding::session::{self, SessionManager};
use tandem_coding::{DiskWorkspace, PermissionPolicy};

use super::command::SessionChoice;
use crate::host::SessionOptions;

/// What `tandem undo` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoRequest {
    /// `--continue` (the default) or `--session`.
    pub session: SessionChoice,
    /// `--session-dir`.
    pub session_dir: Option<PathBuf>,
    /// `--back-to`.
    pub back_to: Option<String>,
}

/// Runs `tandem undo`; the report goes to `out`, errors to `err`. False on failure (nothing to
/// undo included, so scripts can tell).
pub async fn run(request: UndoRequest, out: &mut dyn Write, err: &mut dyn Write) -> bool {
    match undo(&request).await {
        Ok((report, cwd)) => {
            let _ = writeln!(out, "{}", report.describe(&cwd));
            !matches!(report.outcome, UndoOutcome::Rejected { .. })
        }
        Err(e) => {
            let _ = writeln!(err, "Error: {e:#}");
            false
        }
    }
}

async fn undo(request: &UndoRequest) -> anyhow::Result<(checkpoint::UndoReport, PathBuf)> {
    let agent_dir = AgentDir::from_env().map_err(|e| anyhow::anyhow!("{e}"))?;
    let cwd = std::env::current_dir()
        .map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}"))?;
    let dir = SessionOptions {
        session_dir: request.session_dir.clone(),
        ..SessionOptions::default()
    }
    .session_dir(&agent_dir, &cwd);
    let path = match &request.session {
        SessionChoice::Open(reference) => crate::run::find_session(reference, &dir, &cwd)?,
        _ => session::find_most_recent(&dir).ok_or_else(|| {
            anyhow::anyhow!(
                "No session to undo in {}: name one with --session (a file or an id prefix)",
                dir.display()
            )
        })?,
    };
    let manager = SessionManager::open(&path)
        .map_err(|e| anyhow::anyhow!("cannot open the session {}: {e}", path.display()))?;
    let root = manager.cwd().to_path_buf();
    let root = if root.as_os_str().is_empty() {
        cwd
    } else {
        root
    };
    let workspace = DiskWorkspace::new([root.clone()], PermissionPolicy::AllowAll);
    let session = Mutex::new(manager);
    match checkpoint::undo(&workspace, &session, request.back_to.as_deref()).await {
        Ok(report) => Ok((report, root)),
        Err(UndoError::NothingToUndo) => Err(anyhow::anyhow!(
            "Nothing to undo in {}: no turn on its current branch changed files that are not \
             undone yet",
            path.display()
        )),
        Err(e) => Err(e.into()),
    }
}
