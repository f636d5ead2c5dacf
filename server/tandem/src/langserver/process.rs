//! A language server's process: started in its own process group (stopping it stops what it
//! started: basedpyright's node, tsserver), its stderr drained into the log with its last
//! lines kept for error messages, its exit watched, and the group killed when dropped.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tandem_ai::process_group::{self, Signal};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::spec::ServerSpec;

/// Stderr lines kept for error messages.
const TAIL_LINES: usize = 6;
/// Longest stderr line read at once; longer lines are split.
const MAX_LINE: u64 = 8 * 1024;
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
        let tail = Arc::new(StderrTail::default());
        match stderr {
            Some(stderr) => {
                tokio::spawn(drain_stderr(spec.name.clone(), stderr, tail.clone()));
            }
            None => {
                tail.done.send_replace(true);
            }
        }
        let (exit_tx, exit) = watch::channel(None);
        let reaper = tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(status) => describe_exit(status),
                Err(e) => format!("its exit could not be observed: {e}"),
            };
            exit_tx.send_replace(Some(status));
        });
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

/// The last lines a server wrote to stderr.
#[derive(Default)]
struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    done: watch::Sender<bool>,
}

impl StderrTail {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    async fn excerpt(&self, wait: Duration) -> String {
        let mut done = self.done.subscribe();
        let _ = tokio::time::timeout(wait, done.wait_for(|d| *d)).await;
        let text = match self.lines.lock() {
            Ok(lines) => lines.iter().cloned().collect::<Vec<_>>().join("\n"),
            Err(_) => String::new(),
        };
        let text = text.trim();
        match text.char_indices().rev().nth(MAX_EXCERPT) {
            Some((start, _)) => format!("…{}", &text[start..]),
            None => text.to_string(),
        }
    }
}

/// Reads the server's stderr into the log (debug level: servers are chatty), keeping the last
/// lines. Never to our stderr or stdout: stdout is the protocol channel of LSP, ACP and JSON
/// mode, and the CLI's stderr is the user's.
async fn drain_stderr(name: String, stderr: ChildStderr, tail: Arc<StderrTail>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        tracing::debug!(target: "tandem::langserver", server = %name, "stderr: {text}");
        if !text.trim().is_empty() {
            tail.push(text.to_string());
        }
    }
    tail.done.send_replace(true);
}

fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    status.to_string()
}
