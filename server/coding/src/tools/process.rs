//! Running a shell command for the `bash` tool: the process (its own process group, stdout and
//! stderr merged into one pipe) and the capture of its output with bounded memory.
//!
//! Why a process group: a command line starts grandchildren (`make` → compilers, `cmd &`,
//! `bash -c '…'`); killing only the shell would leave them running and, worse, holding the output
//! pipe open. Killing the whole group takes them all down at once. A grandchild may leave the
//! group (`setsid cmd &`) or be orphaned by a double fork; so the shell is also made a child
//! subreaper (Linux), which keeps every orphan below it, and a kill ends its whole tree
//! (`process_group::kill_tree`), not only the group.
//!
//! Why one pipe for both streams: the model should see output in the order it was written.
//! Reading two pipes can only guess that order when both have data; handing the child the same
//! pipe as stdout and stderr (what `2>&1` does) keeps the exact write order.
//!
//! Why the "quiet pipe" rule: a background process (`server &`, `setsid …`) may keep the pipe
//! open long after the shell exited. Once the shell has exited we stop reading when the pipe
//! reaches end-of-file or stays quiet for [`EXIT_QUIET`] (pi waits the same way), so the tool
//! never hangs on an orphan.
//!
//! Why a rolling tail: a command may print gigabytes, but a result shows at most the last
//! 50 KB. The capture keeps a tail a few times that size, counts lines and bytes over all of it,
//! and streams everything to a temp log as soon as the output is too long for one result.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tandem_agent::ToolError;
use tandem_ai::process_group;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use super::truncate::{truncate_tail, Truncation, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use crate::env::ShellSettings;

/// After the shell exits, output still arriving within this window is kept.
pub(crate) const EXIT_QUIET: Duration = Duration::from_millis(100);

/// Bytes read from the pipe at a time.
const READ_CHUNK: usize = 64 * 1024;

/// What the running command did next.
#[derive(Debug)]
pub(crate) enum ProcessEvent {
    /// Bytes it wrote (stdout and stderr, in write order).
    Output(Vec<u8>),
    /// The shell exited and its output is drained (or quiet).
    Finished(ExitStatus),
}

/// A shell command in its own process group. Dropping it before the shell has exited kills the
/// group, so an abandoned call never leaves processes behind.
#[derive(Debug)]
pub(crate) struct GroupProcess {
    child: Child,
    /// The group id (the shell's pid, since the shell leads its own group).
    pgid: u32,
    output: pipe::Receiver,
    output_closed: bool,
    exit: Option<ExitStatus>,
    buffer: Vec<u8>,
}

impl GroupProcess {
    /// Starts `shell -c script` in `cwd`, with stdin from /dev/null and stdout and stderr on one
    /// pipe, as the leader of a new process group.
    pub(crate) fn spawn(shell: &Path, script: &str, cwd: &Path) -> io::Result<Self> {
        let (read_end, write_end) = output_pipe()?;
        let output = pipe::Receiver::from_owned_fd(read_end)?;
        let child = {
            // The command holds the parent's copies of the write end; dropping it right after
            // the spawn leaves the child's copies as the only writers, so EOF means "all done".
            let mut command = Command::new(shell);
            command
                .arg("-c")
                .arg(script)
                .current_dir(cwd)
                .stdin(Stdio::null())
                .stdout(Stdio::from(write_end.try_clone()?))
                .stderr(Stdio::from(write_end))
                .process_group(0);
            // SAFETY: the hook makes one system call (prctl), async-signal-safe as the time
            // between fork and exec requires.
            unsafe {
                command.pre_exec(process_group::adopt_orphans);
            }
            command.spawn()?
        };
        let pgid = child
            .id()
            .ok_or_else(|| io::Error::other("the shell exited before its pid was known"))?;
        Ok(GroupProcess {
            child,
            pgid,
            output,
            output_closed: false,
            exit: None,
            buffer: vec![0; READ_CHUNK],
        })
    }

    /// The next output, or the end. Cancel-safe: dropping the future loses nothing.
    pub(crate) async fn next(&mut self) -> io::Result<ProcessEvent> {
        loop {
            if let (Some(status), true) = (self.exit, self.output_closed) {
                return Ok(ProcessEvent::Finished(status));
            }
            let exited = self.exit.is_some();
            tokio::select! {
                read = self.output.read(&mut self.buffer), if !self.output_closed => {
                    match read {
                        Ok(0) => self.output_closed = true,
                        Ok(n) => return Ok(ProcessEvent::Output(self.buffer[..n].to_vec())),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                status = self.child.wait(), if !exited => self.exit = Some(status?),
                // A fresh timer on every call: it only fires after a quiet EXIT_QUIET.
                _ = tokio::time::sleep(EXIT_QUIET), if exited => {
                    self.output_closed = true;
                }
            }
        }
    }

    /// Kills the shell and every process it started — its group, and those that left it —
    /// with SIGKILL (as pi does: no grace period, since the user or the timeout already decided
    /// the command must stop).
    pub(crate) fn kill_group(&mut self) {
        if self.exit.is_none() {
            process_group::kill_tree(self.pgid);
            // Never leave the shell running, whatever the tree walk found.
            let _ = self.child.start_kill();
        } else {
            // The shell is gone (its orphans went to init): what is left of its group.
            process_group::signal(self.pgid, process_group::Signal::Kill);
        }
    }
}

impl Drop for GroupProcess {
    fn drop(&mut self) {
        if self.exit.is_none() {
            self.kill_group();
        }
    }
}

/// The command's output as it streams: a rolling tail in memory, counts over everything, and
/// the whole output in a temp log once it is longer than a result may be.
pub(crate) struct OutputCapture {
    /// The most recent bytes (at least [`TAIL_KEEP`] once anything was dropped).
    tail: Vec<u8>,
    total_bytes: usize,
    newlines: usize,
    /// Bytes after the last newline (the size of the last line).
    last_line_bytes: usize,
    spill: Spill,
}

/// The tail keeps at least this much: twice what a result shows, so the result's lines are
/// always whole even though the tail starts mid-line.
const TAIL_KEEP: usize = 2 * DEFAULT_MAX_BYTES;
/// The tail is cut back to [`TAIL_KEEP`] when it grows past this.
const TAIL_MAX: usize = 4 * DEFAULT_MAX_BYTES;

/// Where the full output goes.
enum Spill {
    /// Everything is still in the tail.
    NotStarted,
    /// Written to this file as it arrives.
    Writing {
        path: PathBuf,
        file: BufWriter<tokio::fs::File>,
    },
    /// Could not be saved.
    Failed { reason: String },
}

/// The output at one moment, truncated for a result.
pub(crate) struct Snapshot {
    /// The kept text; its totals count the whole output, not just the tail.
    pub(crate) truncation: Truncation,
    /// The log holding the full output, once there is one.
    pub(crate) full_output: Option<PathBuf>,
    /// Why the full output could not be saved.
    pub(crate) spill_error: Option<String>,
    /// Size of the output's last line, in bytes.
    pub(crate) last_line_bytes: usize,
}

impl OutputCapture {
    /// Nothing captured yet.
    pub(crate) fn new() -> Self {
        OutputCapture {
            tail: Vec::new(),
            total_bytes: 0,
            newlines: 0,
            last_line_bytes: 0,
            spill: Spill::NotStarted,
        }
    }

    /// Too long for one result: from here on, everything goes to the log.
    fn too_long(&self) -> bool {
        self.total_bytes > DEFAULT_MAX_BYTES || self.newlines + 1 > DEFAULT_MAX_LINES
    }

    /// Takes the next piece of output.
    pub(crate) async fn push(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
        self.total_bytes += bytes.len();
        match bytes.iter().rposition(|b| *b == b'\n') {
            Some(last) => {
                self.newlines += bytes.iter().filter(|b| **b == b'\n').count();
                self.last_line_bytes = bytes.len() - last - 1;
            }
            None => self.last_line_bytes += bytes.len(),
        }
        if let Spill::Writing { file, path } = &mut self.spill {
            if let Err(e) = file.write_all(bytes).await {
                let reason = format!("writing {} failed: {e}", path.display());
                self.spill = Spill::Failed { reason };
            }
        } else if matches!(self.spill, Spill::NotStarted) && self.too_long() {
            self.start_spill().await;
        }
        // Only drop bytes once they are safe in the log (or the log failed).
        if self.tail.len() > TAIL_MAX && !matches!(self.spill, Spill::NotStarted) {
            self.tail.drain(..self.tail.len() - TAIL_KEEP);
        }
    }

    /// Opens the log and writes everything so far (the tail still holds all of it).
    async fn start_spill(&mut self) {
        let created = tokio::task::spawn_blocking(|| {
            tempfile::Builder::new()
                .prefix("tandem-bash-")
                .suffix(".log")
                .tempfile()
                .and_then(|f| f.keep().map_err(|e| e.error))
        })
        .await;
        self.spill = match created {
            Ok(Ok((file, path))) => {
                let mut file = BufWriter::new(tokio::fs::File::from_std(file));
                match file.write_all(&self.tail).await {
                    Ok(()) => Spill::Writing { path, file },
                    Err(e) => Spill::Failed {
                        reason: format!("writing {} failed: {e}", path.display()),
                    },
                }
            }
            Ok(Err(e)) => Spill::Failed {
                reason: format!("creating a temp file failed: {e}"),
            },
            Err(e) => Spill::Failed {
                reason: e.to_string(),
            },
        };
    }

    /// The output so far, tail-truncated (saving the full output first when it is cut).
    pub(crate) async fn snapshot(&mut self) -> Snapshot {
        let text = String::from_utf8_lossy(&self.tail);
        let mut truncation = truncate_tail(&text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        if truncation.truncated() {
            // Replacement characters can make the text longer than the bytes were.
            if matches!(self.spill, Spill::NotStarted) {
                self.start_spill().await;
            }
            truncation.total_lines = self.newlines + 1;
            truncation.total_bytes = self.total_bytes;
        }
        let (full_output, spill_error) = match &self.spill {
            Spill::NotStarted => (None, None),
            Spill::Writing { path, .. } => (Some(path.clone()), None),
            Spill::Failed { reason } => (None, Some(reason.clone())),
        };
        Snapshot {
            truncation,
            full_output,
            spill_error,
            last_line_bytes: self.last_line_bytes,
        }
    }

    /// The final snapshot, with the log flushed to disk.
    pub(crate) async fn finish(mut self) -> Snapshot {
        let mut snapshot = self.snapshot().await;
        if let Spill::Writing { file, path } = &mut self.spill {
            if let Err(e) = file.flush().await {
                snapshot.spill_error = Some(format!("writing {} failed: {e}", path.display()));
                snapshot.full_output = None;
            }
        }
        snapshot
    }
}

/// Says which signal ended the shell (pi reports nothing; a silent success would mislead).
pub(crate) fn terminated_by_signal(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    let Some(signal) = status.signal() else {
        return "Command ended without an exit code".to_string();
    };
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("Command was terminated by signal {signal}"),
    };
    format!("Command was terminated by signal {name}")
}

/// The shell to run: the configured one (which must exist), else `/bin/bash`, else `bash` on
/// the PATH, else `sh` (pi's order).
pub(crate) async fn resolve_shell(settings: &ShellSettings) -> Result<PathBuf, ToolError> {
    if let Some(shell) = &settings.shell {
        return if is_file(shell).await {
            Ok(shell.clone())
        } else {
            Err(ToolError::new(format!(
                "Custom shell path not found: {}\nPlease update shellPath in your settings.",
                shell.display()
            )))
        };
    }
    let bin_bash = Path::new("/bin/bash");
    if is_file(bin_bash).await {
        return Ok(bin_bash.to_path_buf());
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("bash");
            if is_file(&candidate).await {
                return Ok(candidate);
            }
        }
    }
    Ok(PathBuf::from("sh"))
}

async fn is_file(path: &Path) -> bool {
    tokio::fs::metadata(path)
        .await
        .map(|m| m.is_file())
        .unwrap_or(false)
}

/// A pipe whose ends are closed on exec (so other concurrently spawned programs never inherit
/// them): (read end, write end).
fn output_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2/pipe to fill.
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    let rc = unsafe { libc::pipe(fds.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe succeeded, so both descriptors are open and owned by nobody else.
    let ends = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    for fd in [fds[0], fds[1]] {
        // SAFETY: fd is open (owned by `ends`); F_SETFD only changes its flags.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(ends)
}
