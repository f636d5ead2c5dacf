//! A language server's process: started in its own process group (stopping it stops what it
//! started: basedpyright's node, tsserver), its stderr drained into the log with its last
//! lines kept for error messages, its exit watched, and the group killed when dropped.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tandem_ai::process_group::{self, Signal};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::spec::ServerSpec;
use crate::child::{reap, StderrTail};

/// Stderr lines kept for error messages.
const TAIL_LINES: usize = 6;
/// Longest stderr excerpt in a message, in characters.
const MAX_EXCERPT: usize = 600;

/// A running server process. Dropping it kills its process group (unless it exited).
pub(super) struct ServerProcess {
    pid: Option<u32>,
    exit: watch::Receiver<Option<String>>,
    reaper: JoinHandle<()>,
    stderr: Arc<StderrTail>,
}

/// The process and its stdio pipes.
pub(super) struct Spawned {
    pub process: ServerProcess,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

impl ServerProcess {
    /// Starts `spec`'s program in `root`, PATH set to `path`. `Err` says why it did not start.
    pub(super) fn spawn(spec: &ServerSpec, root: &Path, path: &OsStr) -> Result<Spawned, String> {
        let program = spec
            .program
            .clone()
            .unwrap_or_else(|| spec.command.clone().into());
        let mut command = Command::new(&program);
        command
            .args(&spec.args)
            .env("PATH", path)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("`{}` was not found", spec.command),
            std::io::ErrorKind::PermissionDenied => {
                format!("`{}` is not executable (permission denied)", spec.command)
            }
            _ => format!("`{}` could not be run: {e}", spec.command),
        })?;
        let pid = child.id();
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), e) => (i, o, e),
                _ => return Err("its stdin/stdout pipes could not be opened".to_string()),
            };
        // Into the log (debug level: servers are chatty), never to our stderr or stdout:
        // stdout is the protocol channel of LSP, ACP and JSON mode, and the CLI's stderr is the
        // user's.
        let name = spec.name.clone();
        let tail = StderrTail::read(stderr, TAIL_LINES, MAX_EXCERPT, move |text| {
            tracing::debug!(target: "tandem::langserver", server = %name, "stderr: {text}");
        });
        let (exit, reaper) = reap(child);
        Ok(Spawned {
            process: ServerProcess {
                pid,
                exit,
                reaper,
                stderr: tail,
            },
            stdin,
            stdout,
        })
    }

    /// Its process id.
    #[cfg(test)]
    pub(super) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// How it exited ("exit status 3"), once it did.
    pub(super) fn exited(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// Resolves once the process has exited, with how.
    pub(super) async fn wait_exit(&self) -> String {
        let mut exit = self.exit.clone();
        let status = match exit.wait_for(Option::is_some).await {
            Ok(status) => status.clone().unwrap_or_default(),
            // The reaper is gone (aborted by kill): the process is being killed.
            Err(_) => "killed".to_string(),
        };
        status
    }

    /// Waits up to `wait` for the exit.
    pub(super) async fn wait_exit_for(&self, wait: Duration) -> Option<String> {
        tokio::time::timeout(wait, self.wait_exit()).await.ok()
    }

    /// The last stderr lines (waiting at most `wait` for stderr to end), "" when none.
    pub(super) async fn stderr_excerpt(&self, wait: Duration) -> String {
        self.stderr.excerpt(wait).await
    }

    /// Kills the process group now (unless the process already exited), and what it left.
    /// Needs no runtime.
    pub(super) fn kill(&self) {
        if let Some(pid) = self.pid {
            // The group outlives its leader while members run (tsserver under its wrapper).
            process_group::signal(pid, Signal::Kill);
        }
        self.reaper.abort();
    }
}
