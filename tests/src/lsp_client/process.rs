//! The server process behind a spawned client: its exit, `shutdown`, a kill, and its stderr
//! when the command piped it. A process still running when the client is dropped is killed, so
//! no test leaves a server behind.

use std::io::Read;
use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{ClientError, LspClient};

/// How often an exit is polled for.
const POLL: Duration = Duration::from_millis(10);

/// How long [`LspClient::stderr`] waits, after the exit, for the last of stderr. A grandchild
/// that kept the pipe open must not hold the caller up.
const STDERR_TAIL: Duration = Duration::from_secs(2);

pub(super) struct Process {
    child: Child,
    stderr: Option<Stderr>,
    status: Option<ExitStatus>,
}

/// Stderr collected by a thread as the server writes it.
struct Stderr {
    text: Arc<Mutex<Vec<u8>>>,
    reader: JoinHandle<()>,
}

impl Process {
    /// Owns `child`, collecting its stderr when it was piped. On failure the child is ended.
    pub(super) fn start(mut child: Child) -> Result<Process, ClientError> {
        let stderr = match child.stderr.take() {
            None => None,
            Some(mut pipe) => {
                let text = Arc::new(Mutex::new(Vec::new()));
                let sink = Arc::clone(&text);
                let reader = std::thread::Builder::new()
                    .name("lsp-client-stderr".into())
                    .spawn(move || {
                        let mut chunk = [0; 8192];
                        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                            let mut text = sink.lock().unwrap_or_else(PoisonError::into_inner);
                            text.extend_from_slice(&chunk[..n]);
                        }
                    });
                match reader {
                    Ok(reader) => Some(Stderr { text, reader }),
                    Err(e) => {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err(ClientError::Thread(e));
                    }
                }
            }
        };
        Ok(Process {
            child,
            stderr,
            status: None,
        })
    }

    fn try_wait(&mut self) -> Result<Option<ExitStatus>, ClientError> {
        if self.status.is_none() {
            self.status = self.child.try_wait().map_err(ClientError::Process)?;
        }
        Ok(self.status)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Ok(None) = self.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl LspClient {
    fn process(&mut self) -> Result<&mut Process, ClientError> {
        self.process.as_mut().ok_or(ClientError::NoProcess)
    }

    /// Closes the server's input, as an editor that goes away does.
    pub fn close_input(&mut self) {
        self.input = None;
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.child.id())
    }

    /// Waits up to `within` for the server to exit.
    pub fn wait_exit(&mut self, within: Duration) -> Result<ExitStatus, ClientError> {
        let deadline = Instant::now() + within;
        let process = self.process()?;
        loop {
            if let Some(status) = process.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                return Err(ClientError::Timeout {
                    waited: within,
                    what: "the language server to exit".into(),
                });
            }
            std::thread::sleep(POLL);
        }
    }

    /// `kill -9`s the server (unless it has exited) and reaps it.
    pub fn kill(&mut self) -> Result<ExitStatus, ClientError> {
        let process = self.process()?;
        if let Some(status) = process.try_wait()? {
            return Ok(status);
        }
        process.child.kill().map_err(ClientError::Process)?;
        let status = process.child.wait().map_err(ClientError::Process)?;
        process.status = Some(status);
        Ok(status)
    }

    /// `shutdown`, `exit`, the input closed, then waits for the server to exit; one that does
    /// not within the timeout is killed, and that is a [`ClientError::Timeout`].
    pub fn shutdown(&mut self) -> Result<ExitStatus, ClientError> {
        self.process()?;
        self.request("shutdown", Value::Null)?;
        self.notify("exit", Value::Null)?;
        self.close_input();
        let waited = self.wait_exit(self.timeout);
        if waited.is_err() {
            self.kill()?;
        }
        waited
    }

    /// What the server wrote to stderr so far, when its command piped stderr; `None` otherwise.
    /// After an exit it includes everything the server wrote.
    pub fn stderr(&self) -> Option<String> {
        let process = self.process.as_ref()?;
        let stderr = process.stderr.as_ref()?;
        if process.status.is_some() {
            let until = Instant::now() + STDERR_TAIL;
            while !stderr.reader.is_finished() && Instant::now() < until {
                std::thread::sleep(POLL);
            }
        }
        let text = stderr.text.lock().unwrap_or_else(PoisonError::into_inner);
        Some(String::from_utf8_lossy(&text).into_owned())
    }
}
