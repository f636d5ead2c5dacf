//! What every coding tool shares: the workspace, the working directory, the per-file mutation
//! queue, the shell settings, and the permissions the user granted for the session.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tandem_agent::ToolError;

use crate::mutation::FileMutationQueue;
use crate::paths::{self, Access, ResolvedPath};
use crate::workspace::{PermissionDecision, PermissionRequest, Workspace};

/// Whether shell commands need the user's consent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BashPolicy {
    /// Run without asking (pi; the CLI default).
    #[default]
    Allow,
    /// Ask the workspace each time (until the user allows always).
    Ask,
    /// Never run.
    Deny,
}

/// Shell settings (pi's `shellPath`, `shellCommandPrefix`).
#[derive(Debug, Clone, Default)]
pub struct ShellSettings {
    /// The shell; `/bin/bash` when unset (then `sh`).
    pub shell: Option<PathBuf>,
    /// Prepended to every command (e.g. `source ~/.profile`).
    pub command_prefix: Option<String>,
    /// Consent policy.
    pub policy: BashPolicy,
}

/// The tools' shared environment.
pub struct ToolEnv {
    /// Files and consent.
    pub workspace: Arc<dyn Workspace>,
    /// Relative paths resolve against this directory.
    pub cwd: PathBuf,
    /// Serializes changes to one file.
    pub mutations: FileMutationQueue,
    /// Shell settings.
    pub shell: ShellSettings,
    bash_always: AtomicBool,
    outside_always: Mutex<BTreeSet<PathBuf>>,
}

impl std::fmt::Debug for ToolEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEnv")
            .field("cwd", &self.cwd)
            .field("roots", &self.workspace.roots())
            .field("shell", &self.shell)
            .finish()
    }
}

impl ToolEnv {
    /// An environment over `workspace`, working in `cwd`.
    pub fn new(workspace: Arc<dyn Workspace>, cwd: impl Into<PathBuf>) -> Self {
        ToolEnv {
            workspace,
            cwd: cwd.into(),
            mutations: FileMutationQueue::new(),
            shell: ShellSettings::default(),
            bash_always: AtomicBool::new(false),
            outside_always: Mutex::new(BTreeSet::new()),
        }
    }

    /// With these shell settings.
    pub fn with_shell(mut self, shell: ShellSettings) -> Self {
        self.shell = shell;
        self
    }

    /// Resolves a path argument (`@` prefix, `~`, relative to the working directory). A path
    /// outside the workspace roots (symlinks followed) needs the user's permission; a refusal is
    /// a tool error.
    pub async fn resolve(&self, raw: &str, access: Access) -> Result<ResolvedPath, ToolError> {
        let resolved = paths::resolve(raw, &self.cwd, self.workspace.roots());
        if resolved.inside {
            return Ok(resolved);
        }
        let real = resolved.real.clone();
        let remembered = {
            let always = self
                .outside_always
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            always.iter().any(|p| real.starts_with(p))
        };
        if remembered {
            return Ok(resolved);
        }
        let request = PermissionRequest::OutsideWorkspace {
            path: real.clone(),
            write: access == Access::Write,
        };
        match self.workspace.ask_permission(request).await {
            PermissionDecision::AllowOnce => Ok(resolved),
            PermissionDecision::AllowAlways => {
                self.outside_always
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(real);
                Ok(resolved)
            }
            PermissionDecision::Reject { reason } => Err(ToolError::new(format!(
                "Access to {} was denied: it is outside the workspace{}",
                resolved.absolute.display(),
                reason.map(|r| format!(" ({r})")).unwrap_or_default()
            ))),
        }
    }

    /// Checks that `command` may run in `cwd` under the bash policy, asking when needed.
    pub async fn check_bash(&self, command: &str, cwd: &Path) -> Result<(), ToolError> {
        match self.shell.policy {
            BashPolicy::Allow => Ok(()),
            BashPolicy::Deny => Err(ToolError::new(
                "Running shell commands is disabled (bash permission is set to deny)",
            )),
            BashPolicy::Ask if self.bash_always.load(Ordering::SeqCst) => Ok(()),
            BashPolicy::Ask => {
                let request = PermissionRequest::Bash {
                    command: command.to_string(),
                    cwd: cwd.to_path_buf(),
                };
                match self.workspace.ask_permission(request).await {
                    PermissionDecision::AllowOnce => Ok(()),
                    PermissionDecision::AllowAlways => {
                        self.bash_always.store(true, Ordering::SeqCst);
                        Ok(())
                    }
                    PermissionDecision::Reject { reason } => Err(ToolError::new(format!(
                        "The user rejected running this command{}",
                        reason.map(|r| format!(": {r}")).unwrap_or_default()
                    ))),
                }
            }
        }
    }

    /// A path for display: relative to the working directory when inside it.
    pub fn display_path(&self, path: &Path) -> String {
        paths::display(path, &self.cwd)
    }
}
