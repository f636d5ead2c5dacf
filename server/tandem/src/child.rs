//! What Tandem keeps of the servers it starts (MCP servers, language servers): the last lines
//! each wrote to stderr, for the messages that say why it failed, and how it exited.

use std::collections::VecDeque;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Longest stderr line read at once; longer lines are split.
const MAX_LINE: u64 = 8 * 1024;

/// How much of a server's stderr is handed on (to our stderr or the log) per start: a server
/// that writes hundreds of megabytes must not flood the user's terminal or stall on a slowly
/// read stderr. The rest is read and counted, and its last lines kept for error messages.
pub const FORWARD_BUDGET: u64 = 64 * 1024;

/// The last lines a server wrote to stderr.
pub struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    /// True once stderr reached its end.
    done: watch::Sender<bool>,
    keep: usize,
    max_excerpt: usize,
}

impl StderrTail {
    /// Reads `stderr` (when there is one) in a task, keeping its last `keep` non-blank lines,
    /// and handing lines to `each` (the log, or our stderr: never stdout, the protocol
    /// channel) until [`FORWARD_BUDGET`] bytes were handed on; then `each` gets one line saying
    /// the rest is not shown, and at the end one counting what was not. Excerpts are cut to
    /// their last `max_excerpt` characters.
    pub fn read(
        stderr: Option<ChildStderr>,
        keep: usize,
        max_excerpt: usize,
        each: impl Fn(&str) + Send + 'static,
    ) -> Arc<StderrTail> {
        Self::read_from(stderr, keep, max_excerpt, each)
    }

    /// [`StderrTail::read`] of any output of a child (an extension host's stdout is its log
    /// too).
    pub fn read_from<R: AsyncRead + Unpin + Send + 'static>(
        stderr: Option<R>,
        keep: usize,
        max_excerpt: usize,
        each: impl Fn(&str) + Send + 'static,
    ) -> Arc<StderrTail> {
        let tail = Arc::new(StderrTail {
            lines: Mutex::new(VecDeque::new()),
            done: watch::Sender::new(false),
            keep,
            max_excerpt,
        });
        match stderr {
            Some(stderr) => {
                tokio::spawn(drain(stderr, tail.clone(), each));
            }
            None => {
                tail.done.send_replace(true);
            }
        }
        tail
    }

    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == self.keep {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// The kept lines now.
    #[cfg(test)]
    pub fn lines(&self) -> Vec<String> {
        match self.lines.lock() {
            Ok(lines) => lines.iter().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The kept lines, once stderr ended (waiting at most `wait`): "" when there were none.
    pub async fn excerpt(&self, wait: Duration) -> String {
        let mut done = self.done.subscribe();
        let _ = tokio::time::timeout(wait, done.wait_for(|d| *d)).await;
        let text = match self.lines.lock() {
            Ok(lines) => lines.iter().cloned().collect::<Vec<_>>().join("\n"),
            Err(_) => String::new(),
        };
        let text = text.trim();
        match text.char_indices().rev().nth(self.max_excerpt) {
            Some((start, _)) => format!("…{}", &text[start..]),
            None => text.to_string(),
        }
    }
}

async fn drain<R: AsyncRead + Unpin>(stderr: R, tail: Arc<StderrTail>, each: impl Fn(&str)) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    let mut forwarded = 0u64;
    let (mut hidden_lines, mut hidden_bytes) = (0u64, 0u64);
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
        if forwarded < FORWARD_BUDGET {
            forwarded += line.len() as u64;
            each(text);
            if forwarded >= FORWARD_BUDGET {
                each(&format!(
                    "(more stderr is not shown: {FORWARD_BUDGET} bytes were; the last lines are \
                     kept for error messages)"
                ));
            }
        } else {
            hidden_lines += 1;
            hidden_bytes += line.len() as u64;
        }
        if !text.trim().is_empty() {
            tail.push(text.to_string());
        }
    }
    if hidden_lines > 0 {
        each(&format!(
            "({hidden_lines} more lines, {hidden_bytes} bytes, of stderr were not shown)"
        ));
    }
    tail.done.send_replace(true);
}

/// Waits for `child` in a task; the receiver holds how it exited ("exit status 2", "killed by
/// signal 9"), once it did.
pub fn reap(mut child: Child) -> (watch::Receiver<Option<String>>, JoinHandle<()>) {
    let (exit_tx, exit) = watch::channel(None);
    let reaper = tokio::spawn(async move {
        let status = match child.wait().await {
            Ok(status) => describe_exit(status),
            Err(e) => format!("its exit could not be observed: {e}"),
        };
        exit_tx.send_replace(Some(status));
    });
    (exit, reaper)
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
