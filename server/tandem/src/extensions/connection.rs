//! One extension host process and the JSON-RPC connection to it (protocol-ext/EXTENSIONS.md):
//! line-delimited messages, requests both ways, everything pending failed at once when the
//! host exits or breaks the protocol. What the host asks of Tandem goes to a [`HostCalls`].

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tandem_agent::BoxFuture;
use tandem_ai::sync::lock;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot, watch};

use crate::child::{reap, StderrTail};

/// Longest line a host may send (protocol-ext/EXTENSIONS.md, Transport).
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// Lines of a host's log kept for error messages.
const TAIL_LINES: usize = 12;
/// Longest excerpt of the log in a message.
const MAX_EXCERPT: usize = 1200;
/// How long a host has to exit after `exit` before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A failed request: the host's JSON-RPC error, or the host gone.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// The host answered with an error.
    Remote(String),
    /// The host stopped (or broke the protocol) before answering: why.
    Stopped(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Remote(m) | CallError::Stopped(m) => f.write_str(m),
        }
    }
}

/// What a host may ask of Tandem.
pub trait HostCalls: Send + Sync {
    /// A request; the answer, or a JSON-RPC error (code and message).
    fn request(
        &self,
        method: String,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, (i64, String)>>;
    /// A notification.
    fn notify(&self, method: &str, params: Value);
}

/// How a host is started.
pub struct Launch<'a> {
    /// Its name in messages ("gate.ts", "word_count.py").
    pub name: String,
    /// The program and its arguments.
    pub program: &'a Path,
    /// Arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: &'a Path,
    /// Protocol lines on file descriptor 3, stdout a log (Tandem's Node host).
    pub output_fd3: bool,
}

/// A running host.
pub struct Connection {
    name: String,
    writer: mpsc::UnboundedSender<String>,
    pending: Arc<Mutex<Pending>>,
    next_id: AtomicU64,
    /// Why the connection ended, once it did.
    ended: watch::Receiver<Option<String>>,
    pid: Option<u32>,
}

/// Where the answer to one request comes.
type Answer = oneshot::Receiver<Result<Value, CallError>>;

#[derive(Default)]
struct Pending {
    waiting: HashMap<u64, oneshot::Sender<Result<Value, CallError>>>,
    /// Set once the connection ended: later requests fail at once with it.
    ended: Option<String>,
}

impl Pending {
    fn fail_all(&mut self, why: &str) {
        if self.ended.is_none() {
            self.ended = Some(why.to_string());
        }
        for (_, tx) in self.waiting.drain() {
            let _ = tx.send(Err(CallError::Stopped(why.to_string())));
        }
    }
}

impl Connection {
    /// Starts the host and the tasks that read and write its lines.
    pub fn start(launch: Launch<'_>, calls: Arc<dyn HostCalls>) -> Result<Arc<Connection>, String> {
        let name = launch.name.clone();
        let mut command = Command::new(launch.program);
        command
            .args(&launch.args)
            .current_dir(launch.cwd)
            .env("TANDEM_EXTENSION_PROTOCOL", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let fd3 = if launch.output_fd3 {
            let (read, write) = pipe().map_err(|e| {
                format!("Extension host {name} was not started: no pipe for its output ({e}).")
            })?;
            command.env("TANDEM_EXTENSION_OUTPUT_FD", "3");
            let write_fd = std::os::fd::AsRawFd::as_raw_fd(&write);
            // SAFETY: between fork and exec only async-signal-safe calls are made (dup2,
            // fcntl, prctl), on descriptors this process owns.
            unsafe {
                command.pre_exec(move || {
                    if write_fd == 3 {
                        let flags = libc::fcntl(3, libc::F_GETFD);
                        libc::fcntl(3, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
                    } else if libc::dup2(write_fd, 3) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    tandem_ai::process_group::adopt_orphans()
                });
            }
            Some((read, write))
        } else {
            // SAFETY: one prctl call between fork and exec.
            unsafe {
                command.pre_exec(tandem_ai::process_group::adopt_orphans);
            }
            None
        };
        let mut child = command.spawn().map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => format!(
                "Extension host {name} was not started: `{}` was not found.",
                launch.program.display()
            ),
            std::io::ErrorKind::PermissionDenied => format!(
                "Extension {name} was not started: `{}` is not executable (permission denied).",
                launch.program.display()
            ),
            _ => format!("Extension host {name} was not started: {error}."),
        })?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stderr = child.stderr.take();
        let stdout = child.stdout.take();
        let log_name = name.clone();
        let log = move |text: &str| {
            tracing::info!(target: "tandem::extensions", host = %log_name, "{text}");
        };
        let tail = StderrTail::read_from(stderr, TAIL_LINES, MAX_EXCERPT, log.clone());
        let protocol: Box<dyn AsyncRead + Unpin + Send> = match fd3 {
            Some((read, write)) => {
                drop(write);
                // The Node host's stdout is the extensions' console: a log, never the protocol.
                let _ = StderrTail::read_from(stdout, 0, 0, log);
                let file = std::fs::File::from(read);
                Box::new(
                    tokio::net::unix::pipe::Receiver::from_file(file).map_err(|e| {
                        format!("Extension host {name} was not started: its output pipe: {e}")
                    })?,
                )
            }
            None => match stdout {
                Some(stdout) => Box::new(stdout),
                None => return Err(format!("Extension host {name} has no stdout")),
            },
        };
        let (exit, _reaper) = reap(child);
        let (writer, lines) = mpsc::unbounded_channel::<String>();
        let pending = Arc::new(Mutex::new(Pending::default()));
        let (ended_tx, ended) = watch::channel(None);
        let connection = Arc::new(Connection {
            name: name.clone(),
            writer: writer.clone(),
            pending: pending.clone(),
            next_id: AtomicU64::new(1),
            ended,
            pid,
        });
        if let Some(stdin) = stdin {
            tokio::spawn(write_lines(stdin, lines));
        }
        tokio::spawn(read_lines(ReadTask {
            name,
            input: protocol,
            writer,
            pending,
            calls,
            exit,
            tail,
            ended: ended_tx,
            pid,
        }));
        Ok(connection)
    }

    /// Whether the host is still there.
    pub fn is_alive(&self) -> bool {
        self.ended.borrow().is_none()
    }

    /// Sends a request and waits for its answer; `limit` bounds the wait (the request is then
    /// cancelled and the answer is `Ok(None)`).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        limit: Option<Duration>,
    ) -> Result<Option<Value>, CallError> {
        let (id, rx) = self.send(method, params)?;
        let answer = match limit {
            Some(limit) => match tokio::time::timeout(limit, rx).await {
                Ok(answer) => answer,
                Err(_) => {
                    lock(&self.pending).waiting.remove(&id);
                    self.notify("$/cancelRequest", json!({"id": id}));
                    return Ok(None);
                }
            },
            None => rx.await,
        };
        match answer {
            Ok(result) => result.map(Some),
            Err(_) => Err(CallError::Stopped(format!(
                "extension host {} stopped",
                self.name
            ))),
        }
    }

    /// Sends a request whose answer can be given up on: when `cancel` fires first, the host
    /// gets `$/cancelRequest` and `grace` to answer; a host that does not is stopped.
    pub async fn request_cancellable(
        &self,
        method: &str,
        params: Value,
        cancel: &tokio_util::sync::CancellationToken,
        grace: Duration,
    ) -> Result<Value, CallError> {
        let (id, mut rx) = self.send(method, params)?;
        let closed = |_| CallError::Stopped(format!("extension host {} stopped", self.name));
        tokio::select! {
            answer = &mut rx => return answer.map_err(closed)?,
            _ = cancel.cancelled() => {}
        }
        self.notify("$/cancelRequest", json!({"id": id}));
        match tokio::time::timeout(grace, &mut rx).await {
            Ok(answer) => answer.map_err(closed)?,
            Err(_) => {
                self.kill(&format!(
                    "it did not stop a cancelled call within {} s",
                    grace.as_secs()
                ));
                Err(CallError::Stopped(format!(
                    "Extension host {} did not stop the cancelled call and was stopped",
                    self.name
                )))
            }
        }
    }

    /// Sends request `method` under a fresh id; the id and where its answer comes.
    fn send(&self, method: &str, params: Value) -> Result<(u64, Answer), CallError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            if let Some(why) = &pending.ended {
                return Err(CallError::Stopped(why.clone()));
            }
            pending.waiting.insert(id, tx);
        }
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.writer.send(line.to_string()).is_err() {
            lock(&self.pending).waiting.remove(&id);
            return Err(CallError::Stopped(format!(
                "extension host {} stopped",
                self.name
            )));
        }
        Ok((id, rx))
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let _ = self.writer.send(line.to_string());
    }

    /// Stops the host at once (its whole process tree), failing what is pending with `why`.
    pub fn kill(&self, why: &str) {
        lock(&self.pending).fail_all(&format!("Extension host {} was stopped: {why}", self.name));
        if let Some(pid) = self.pid {
            tandem_ai::process_group::kill_tree(pid);
        }
    }

    /// `shutdown`, then `exit`; a host still running after the grace period is killed.
    pub async fn shutdown(&self) {
        if self.is_alive() {
            let _ = self
                .request("shutdown", Value::Null, Some(EXIT_GRACE))
                .await;
            self.notify("exit", Value::Null);
            let mut ended = self.ended.clone();
            let gone = tokio::time::timeout(EXIT_GRACE, ended.wait_for(|e| e.is_some())).await;
            if gone.is_ok() {
                return;
            }
        }
        self.kill("the session ended");
    }
}

async fn write_lines(
    mut stdin: tokio::process::ChildStdin,
    mut lines: mpsc::UnboundedReceiver<String>,
) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

struct ReadTask {
    name: String,
    input: Box<dyn AsyncRead + Unpin + Send>,
    writer: mpsc::UnboundedSender<String>,
    pending: Arc<Mutex<Pending>>,
    calls: Arc<dyn HostCalls>,
    exit: watch::Receiver<Option<String>>,
    tail: Arc<StderrTail>,
    ended: watch::Sender<Option<String>>,
    pid: Option<u32>,
}

async fn read_lines(task: ReadTask) {
    let ReadTask {
        name,
        input,
        writer,
        pending,
        calls,
        mut exit,
        tail,
        ended,
        pid,
    } = task;
    let mut reader = BufReader::new(input);
    let mut line = Vec::new();
    let incoming = Arc::new(Mutex::new(Incoming::new()));
    let broken = loop {
        line.clear();
        match read_line(&mut reader, &mut line).await {
            Ok(true) => {}
            Ok(false) => break None,
            Err(why) => break Some(why),
        }
        let text = match std::str::from_utf8(&line) {
            Ok(text) => text.trim(),
            Err(_) => break Some("it sent a line that is not UTF-8".to_string()),
        };
        if text.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(message) => {
                if let Err(why) = dispatch(message, &pending, &calls, &writer, &incoming) {
                    break Some(why);
                }
            }
            Err(e) => break Some(format!("it sent a line that is not JSON ({e})")),
        }
    };
    let why = match broken {
        Some(why) => {
            tracing::warn!(target: "tandem::extensions", host = %name, "protocol error: {why}");
            if let Some(pid) = pid {
                tandem_ai::process_group::kill_tree(pid);
            }
            format!("Extension host {name} broke the protocol: {why}")
        }
        None => {
            let status =
                match tokio::time::timeout(Duration::from_secs(2), exit.wait_for(|e| e.is_some()))
                    .await
                {
                    Ok(Ok(status)) => status.clone().unwrap_or_default(),
                    _ => "its output closed".to_string(),
                };
            let excerpt = tail.excerpt(Duration::from_millis(200)).await;
            if excerpt.is_empty() {
                format!("Extension host {name} stopped ({status})")
            } else {
                format!("Extension host {name} stopped ({status}); its last output: {excerpt}")
            }
        }
    };
    lock(&pending).fail_all(&why);
    ended.send_replace(Some(why));
}

/// Reads one line (without its `\n`) into `line`; false at the end of input.
async fn read_line<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> Result<bool, String> {
    loop {
        let available = match reader.fill_buf().await {
            Ok(buf) => buf,
            Err(e) => return Err(format!("reading its output failed: {e}")),
        };
        if available.is_empty() {
            return Ok(!line.is_empty());
        }
        let (taken, done) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        let end = if done { taken - 1 } else { taken };
        line.extend_from_slice(&available[..end]);
        reader.consume(taken);
        if line.len() > MAX_LINE {
            return Err(format!("it sent a line longer than {} MiB", MAX_LINE >> 20));
        }
        if done {
            return Ok(true);
        }
    }
}

/// The host's requests being answered, by id (as JSON text), to cancel one.
type Incoming = HashMap<String, tokio::task::AbortHandle>;

/// Handles one message from the host: an answer to one of ours, or a request or notification
/// of its own (run in a task, so a host may ask while we wait for it).
fn dispatch(
    message: Value,
    pending: &Mutex<Pending>,
    calls: &Arc<dyn HostCalls>,
    writer: &mpsc::UnboundedSender<String>,
    incoming: &Arc<Mutex<Incoming>>,
) -> Result<(), String> {
    let Value::Object(mut message) = message else {
        return Err("it sent JSON that is not a JSON-RPC message".to_string());
    };
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("it sent a message without \"jsonrpc\": \"2.0\"".to_string());
    }
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let id = message.remove("id");
    match (method, id) {
        (Some(method), Some(id)) => {
            let params = message.remove("params").unwrap_or(Value::Null);
            let calls = calls.clone();
            let writer = writer.clone();
            let key = id.to_string();
            let done = incoming.clone();
            let task = tokio::spawn(async move {
                let answer = match calls.request(method, params).await {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, text)) => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}})
                    }
                };
                let _ = writer.send(answer.to_string());
                lock(&done).remove(&id.to_string());
            });
            let mut running = lock(incoming);
            running.retain(|_, t| !t.is_finished());
            running.insert(key, task.abort_handle());
            Ok(())
        }
        (Some(method), None) if method == "$/cancelRequest" => {
            // The host gave up on one of its requests (a dialog's timeout): drop it, and with
            // it the dialog.
            if let Some(id) = message.get("params").and_then(|p| p.get("id")) {
                if let Some(task) = lock(incoming).remove(&id.to_string()) {
                    task.abort();
                }
            }
            Ok(())
        }
        (Some(method), None) => {
            let params = message.remove("params").unwrap_or(Value::Null);
            calls.notify(&method, params);
            Ok(())
        }
        (None, Some(id)) => {
            let Some(id) = id.as_u64() else {
                // Answers to ids we never sent are ignored.
                return Ok(());
            };
            let answer = match (message.remove("result"), message.remove("error")) {
                (_, Some(error)) => Err(CallError::Remote(
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the extension failed without a message")
                        .to_string(),
                )),
                (Some(result), None) => Ok(result),
                (None, None) => Ok(Value::Null),
            };
            if let Some(tx) = lock(pending).waiting.remove(&id) {
                let _ = tx.send(answer);
            }
            Ok(())
        }
        (None, None) => Err("it sent a message with neither a method nor an id".to_string()),
    }
}

/// A pipe, both ends closed on exec.
fn pipe() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    use std::os::fd::FromRawFd;
    // SAFETY: both descriptors were just created and are owned by no one else.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}
