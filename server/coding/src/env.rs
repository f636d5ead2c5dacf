//! What every coding tool shares: the workspace, the working directory, the per-file mutation
//! queue, the shell settings, and the permissions the user granted for the session.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use tandem_agent::ToolError;

use crate::calls::{CallRecords, ProposedChange};
use crate::intel::{after, report, LanguageIntel};
use crate::mutation::FileMutationQueue;
use crate::paths::{self, Access, ResolvedPath};
use crate::settings::DiagnosticsConfig;
use crate::workspace::{
    ChangeOutcome, FileChange, PermissionDecision, PermissionRequest, Workspace, WorkspaceError,
};

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
    /// What each call did (the session's records).
    pub calls: Arc<CallRecords>,
    /// Language intelligence (the editor's, or Tandem's own language servers), when any.
    pub intel: Option<Arc<dyn LanguageIntel>>,
    /// What the agent is told about diagnostics after its edits.
    pub diagnostics: DiagnosticsConfig,
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
            calls: Arc::new(CallRecords::new()),
            intel: None,
            diagnostics: DiagnosticsConfig::default(),
            bash_always: AtomicBool::new(false),
            outside_always: Mutex::new(BTreeSet::new()),
        }
    }

    /// With these shell settings.
    pub fn with_shell(mut self, shell: ShellSettings) -> Self {
        self.shell = shell;
        self
    }

    /// Recording into `calls` (the session's records, see [`crate::agent_session::AgentSession::calls`]).
    pub fn with_calls(mut self, calls: Arc<CallRecords>) -> Self {
        self.calls = calls;
        self
    }

    /// With language intelligence from `intel`, and `diagnostics` deciding what is reported
    /// after edits.
    pub fn with_intel(
        mut self,
        intel: Option<Arc<dyn LanguageIntel>>,
        diagnostics: DiagnosticsConfig,
    ) -> Self {
        self.intel = intel;
        self.diagnostics = diagnostics;
        self
    }

    /// Records call `call`'s change and proposes it to the workspace; an applied change is
    /// noted for the run's checkpoint.
    pub async fn propose(
        &self,
        call: &str,
        change: FileChange,
    ) -> Result<ChangeOutcome, WorkspaceError> {
        self.calls
            .propose(call, ProposedChange::new(&change, &self.cwd));
        let outcome = self.workspace.propose(call, change.clone()).await?;
        // Only a change in place goes into the run's checkpoint; any other outcome left the
        // file as it was. A re-based change is recorded as really made (its diff with the
        // document's line numbers then).
        match &outcome {
            ChangeOutcome::Applied => self.calls.applied(&change),
            ChangeOutcome::Rebased(made) => {
                self.calls
                    .propose(call, ProposedChange::new(made, &self.cwd));
                self.calls.applied(made);
            }
            _ => {}
        }
        Ok(outcome)
    }

    /// Lets the language intelligence get ready for `path` (read by the agent, likely edited
    /// next) in the background, when it looks at files and reports after edits.
    pub fn prepare_language(&self, path: &Path) {
        let Some(intel) = self.intel.clone() else {
            return;
        };
        if !self.diagnostics.after_edit || !intel.features().diagnostics {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (workspace, path) = (self.workspace.clone(), path.to_path_buf());
        runtime.spawn(async move {
            if let Ok(text) = crate::workspace::read_text(&*workspace, &path).await {
                intel.prepare(crate::intel::Document { path, text }).await;
            }
        });
    }

    /// [`ToolEnv::propose`] with the diagnostics report: the file's diagnostics are read
    /// before, and once the change is applied the report of what is new follows (`None` when
    /// there is nothing to say, the change was not applied, or `cancel` fired meanwhile).
    pub async fn propose_with_diagnostics(
        &self,
        call: &str,
        change: FileChange,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<(ChangeOutcome, Option<String>), WorkspaceError> {
        let before = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            before = self.diagnostics_before(&change) => before,
        };
        let outcome = self.propose(call, change.clone()).await?;
        let report = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            report = self.diagnostics_after(before, &change, &outcome) => report,
        };
        Ok((outcome, report))
    }

    /// The diagnostics of `change`'s file before it is proposed, for
    /// [`ToolEnv::diagnostics_after`]; `None` when nothing will be reported.
    pub async fn diagnostics_before(&self, change: &FileChange) -> Option<DiagnosticsBefore> {
        let intel = self.intel.as_ref()?;
        let text = change.old_text.clone().unwrap_or_default();
        match after::before(&**intel, &self.diagnostics, change.path.clone(), text).await {
            Ok(None) => None,
            Ok(Some(before)) => Some(DiagnosticsBefore(Ok(before))),
            Err(e) => Some(DiagnosticsBefore(Err(e))),
        }
    }

    /// The paragraph that ends an edit's or write's result once `change` had `outcome`: the
    /// errors and warnings the language servers report for the file that are new since
    /// `before` (or why they could not be read); `None` when the change was not applied.
    pub async fn diagnostics_after(
        &self,
        before: Option<DiagnosticsBefore>,
        change: &FileChange,
        outcome: &ChangeOutcome,
    ) -> Option<String> {
        let text = match outcome {
            ChangeOutcome::Applied => change.new_text.as_str(),
            ChangeOutcome::Rebased(made) => made.new_text.as_str(),
            _ => return None,
        };
        let shown = self.display_path(&change.path);
        match before?.0 {
            Err(e) => Some(report::unavailable(&shown, &e)),
            Ok(before) => {
                let intel = self.intel.as_ref()?;
                after::after(&**intel, &self.diagnostics, before, text, &shown).await
            }
        }
    }

    /// Resolves a path argument (`@` prefix, `~`, relative to the working directory). A path
    /// holding NUL or another control character is refused. A path outside the workspace roots
    /// (every symlink followed, dangling ones included) needs the user's permission, and so does
    /// a write to a file that makes tools run code ([`paths::protected_reason`]) whatever the
    /// edit mode; a refusal is a tool error. After any question the path is resolved again: one
    /// that leads elsewhere now is an error, never used.
    /// `call` is the call the path is for (a question names it).
    pub async fn resolve(
        &self,
        call: &str,
        raw: &str,
        access: Access,
    ) -> Result<ResolvedPath, ToolError> {
        let roots = self.workspace.roots();
        let resolved =
            paths::resolve(raw, &self.cwd, roots).map_err(|e| ToolError::new(e.to_string()))?;
        let mut asked = false;
        if !resolved.inside && !self.outside_allowed(&resolved.real) {
            let request = PermissionRequest::OutsideWorkspace {
                path: resolved.real.clone(),
                write: access == Access::Write,
            };
            match self.workspace.ask_permission(call, request).await {
                PermissionDecision::AllowOnce => {}
                PermissionDecision::AllowAlways => {
                    lock(&self.outside_always).insert(resolved.real.clone());
                }
                PermissionDecision::Reject { reason } => {
                    return Err(ToolError::new(format!(
                        "Access to {} was denied: it is outside the workspace{}",
                        resolved.absolute.display(),
                        reason.map(|r| format!(" ({r})")).unwrap_or_default()
                    )))
                }
            }
            asked = true;
        }
        if access == Access::Write {
            if let Some(risk) = paths::protected_reason(&resolved.real, roots) {
                let request = PermissionRequest::ProtectedPath {
                    path: resolved.real.clone(),
                    risk: risk.to_string(),
                };
                if let PermissionDecision::Reject { reason } =
                    self.workspace.ask_permission(call, request).await
                {
                    return Err(ToolError::new(format!(
                        "Writing {} was refused{}: {risk}",
                        resolved.absolute.display(),
                        reason.map(|r| format!(" ({r})")).unwrap_or_default()
                    )));
                }
                asked = true;
            }
        }
        if asked {
            paths::verify_target(&resolved.absolute, &resolved.real).map_err(ToolError::new)?;
        }
        Ok(resolved)
    }

    fn outside_allowed(&self, real: &Path) -> bool {
        let always = lock(&self.outside_always);
        always.iter().any(|p| real.starts_with(p))
    }

    /// Checks that call `call`'s `command` may run in `cwd` under the bash policy, asking when
    /// needed.
    pub async fn check_bash(&self, call: &str, command: &str, cwd: &Path) -> Result<(), ToolError> {
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
                match self.workspace.ask_permission(call, request).await {
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

/// A file's diagnostics just before a change ([`ToolEnv::diagnostics_before`]), or why they
/// could not be read.
#[derive(Debug)]
pub struct DiagnosticsBefore(Result<after::Before, String>);
