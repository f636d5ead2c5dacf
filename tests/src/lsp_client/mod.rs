//! A blocking LSP client over a server's stdio, for driving a language server the way an editor
//! does: every black-box test of `tandem lsp`, and `tandem demo`.
//!
//! One reader thread turns the server's output into messages on a channel; everything else runs
//! on the caller's thread, and every wait has a deadline, so a stuck server is a
//! [`ClientError::Timeout`] naming what was awaited, never a hang. The client keeps everything it
//! received: the raw messages in arrival order ([`LspClient::log`]), the server's own
//! notifications and requests ([`LspClient::seen`]), and of those a queue not yet taken by
//! [`LspClient::next_incoming`] / [`LspClient::wait_for`]. Server requests are answered by the
//! caller, or as they arrive by a [`Handler`] (an editor that applies edits itself).
//!
//! Written by hand rather than on a crate: the framing is about a hundred lines, and the LSP
//! crates are servers (tower-lsp-server), bring an async runtime of their own (async-lsp), or
//! put messages into their own types (lsp-server) where tests want the JSON as sent. The
//! `tandem` binary links this module for `tandem demo`, so it brings nothing beyond
//! `serde_json` and `thiserror` (lsp-server would add its channel and logging crates).

mod error;
mod framing;
mod message;
mod outbox;
mod process;
mod tandem_events;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub use error::ClientError;
pub use framing::{frame, read_frame, write_frame, Frame, FrameError};
pub use message::{Incoming, RequestId};
pub use outbox::{Handler, Outbox};
pub use tandem_events::event_type;

use message::{sort, Sorted};
use process::Process;

/// What the reader thread hands over: a frame, or why the stream is not one.
type Arrival = Result<Frame, FrameError>;

/// A client connected to one language server.
pub struct LspClient {
    input: Option<Box<dyn Write + Send>>,
    arrivals: Receiver<Arrival>,
    process: Option<Process>,
    timeout: Duration,
    handler: Option<Handler>,
    next_id: i64,
    /// Methods of the requests sent and not answered yet, for messages that name them.
    methods: HashMap<RequestId, String>,
    /// Responses received and not claimed yet.
    responses: HashMap<RequestId, Value>,
    log: Vec<Value>,
    seen: Vec<Incoming>,
    /// Indexes into `seen` of the messages not taken yet, in arrival order.
    unread: VecDeque<usize>,
    bytes_read: usize,
}

impl LspClient {
    /// How long a wait lasts unless [`LspClient::with_timeout`] says otherwise.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// Starts `command` with its stdin and stdout as the connection. Its stderr is left as the
    /// command sets it; set `Stdio::piped()` to have the client collect it
    /// ([`LspClient::stderr`]).
    pub fn spawn(mut command: Command) -> Result<LspClient, ClientError> {
        let program = command.get_program().to_string_lossy().into_owned();
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|source| ClientError::Spawn { program, source })?;
        let streams = (child.stdin.take(), child.stdout.take());
        // From here on, dropping the process ends it.
        let process = Process::start(child)?;
        let (Some(stdin), Some(stdout)) = streams else {
            // Both were set to `piped` above; a child without them cannot be talked to.
            return Err(ClientError::Closed);
        };
        let mut client = LspClient::connect(stdout, stdin)?;
        client.process = Some(process);
        Ok(client)
    }

    /// A client on given streams: `output` is what the server writes, `input` what it reads.
    /// The process methods ([`LspClient::wait_exit`] …) answer [`ClientError::NoProcess`].
    pub fn connect(
        output: impl Read + Send + 'static,
        input: impl Write + Send + 'static,
    ) -> Result<LspClient, ClientError> {
        // Unbounded on purpose: the caller may be busy writing while the server streams, and a
        // bound would push back on the server's output; a server blocked on its output stops
        // reading its input, and the two sides would wait on each other.
        let (sender, arrivals) = mpsc::channel();
        std::thread::Builder::new()
            .name("lsp-client-reader".into())
            .spawn(move || {
                let mut reader = BufReader::new(output);
                loop {
                    let arrival = match read_frame(&mut reader) {
                        Ok(Some(frame)) => Ok(frame),
                        Ok(None) => return,
                        Err(e) => Err(e),
                    };
                    let last = arrival.is_err();
                    if sender.send(arrival).is_err() || last {
                        return;
                    }
                }
            })
            .map_err(ClientError::Thread)?;
        Ok(LspClient {
            input: Some(Box::new(input)),
            arrivals,
            process: None,
            timeout: Self::DEFAULT_TIMEOUT,
            handler: None,
            next_id: 0,
            methods: HashMap::new(),
            responses: HashMap::new(),
            log: Vec::new(),
            seen: Vec::new(),
            unread: VecDeque::new(),
            bytes_read: 0,
        })
    }

    /// Each wait lasts at most `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> LspClient {
        self.timeout = timeout;
        self
    }

    /// From now on, server requests go to `handler` as they arrive (`None`: kept for the test
    /// to answer).
    pub fn set_handler(&mut self, handler: Option<Handler>) {
        self.handler = handler;
    }

    /// Server requests go to `handler` as they arrive.
    pub fn with_handler(mut self, handler: Handler) -> LspClient {
        self.handler = Some(handler);
        self
    }

    /// How long each wait lasts.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    fn outbox(&mut self) -> Outbox<'_> {
        Outbox::new(&mut self.input)
    }

    /// Sends one JSON message as it is, framed (a reply built by hand, a malformed request).
    pub fn send(&mut self, message: &Value) -> Result<(), ClientError> {
        self.outbox().send(message)
    }

    /// Writes `bytes` to the server unframed: broken frames, for fault tests.
    pub fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        let input = self
            .input
            .as_mut()
            .ok_or_else(|| ClientError::InputClosed("raw bytes".into()))?;
        input
            .write_all(bytes)
            .and_then(|()| input.flush())
            .map_err(ClientError::Write)
    }

    /// Sends a notification (`params` left out when `null`).
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        self.outbox().notify(method, params)
    }

    /// Answers the server's request `to` with `result`.
    pub fn reply(&mut self, to: &Incoming, result: Value) -> Result<(), ClientError> {
        self.outbox().reply(to, result)
    }

    /// Answers the server's request `to` with an error.
    pub fn reply_error(
        &mut self,
        to: &Incoming,
        code: i64,
        message: &str,
    ) -> Result<(), ClientError> {
        self.outbox().reply_error(to, code, message)
    }

    /// Sends a request without waiting (`params` left out when `null`); its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> Result<RequestId, ClientError> {
        self.next_id += 1;
        let id = RequestId(self.next_id);
        let mut message = json!({"jsonrpc": "2.0", "id": id.0, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message)?;
        self.methods.insert(id, method.to_string());
        Ok(id)
    }

    /// The whole response to request `id` (`result` or `error`), waiting for it.
    pub fn response(&mut self, id: RequestId) -> Result<Value, ClientError> {
        let what = match self.methods.get(&id) {
            Some(method) => format!("the answer to `{method}`"),
            None => format!("the answer to request {id}"),
        };
        let deadline = self.deadline();
        loop {
            if let Some(response) = self.responses.remove(&id) {
                self.methods.remove(&id);
                return Ok(response);
            }
            self.receive(deadline, &what)?;
        }
    }

    /// Sends a request and returns its whole response (`result` or `error`), for callers that
    /// look at refusals.
    pub fn request_response(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.send_request(method, params)?;
        self.response(id)
    }

    /// Sends a request and returns its result; an error response is [`ClientError::Refused`].
    /// What the server sends meanwhile is kept (and its requests go to the handler).
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let mut response = self.request_response(method, params)?;
        if let Some(error) = response.get_mut("error") {
            return Err(ClientError::Refused {
                method: method.to_string(),
                error: error.take(),
            });
        }
        Ok(response
            .get_mut("result")
            .map(Value::take)
            .unwrap_or_default())
    }

    /// `initialize` with `params`, then `initialized`; the server's `InitializeResult`.
    pub fn initialize(&mut self, params: Value) -> Result<Value, ClientError> {
        let result = self.request("initialize", params)?;
        self.notify("initialized", json!({}))?;
        Ok(result)
    }

    /// Takes the first message the server sent on its own that `matches` and was not taken
    /// yet, waiting for it; the others stay queued in arrival order. `what` names it in a
    /// timeout.
    pub fn wait_for(
        &mut self,
        what: &str,
        mut matches: impl FnMut(&Incoming) -> bool,
    ) -> Result<Incoming, ClientError> {
        let deadline = self.deadline();
        let mut checked = 0;
        loop {
            let seen = &self.seen;
            let found = self
                .unread
                .iter()
                .skip(checked)
                .position(|&i| matches(&seen[i]));
            if let Some(index) = found.and_then(|at| self.unread.remove(checked + at)) {
                return Ok(self.seen[index].clone());
            }
            checked = self.unread.len();
            self.receive(deadline, what)?;
        }
    }

    /// Takes the next message the server sent on its own, waiting for it.
    pub fn next_incoming(&mut self, what: &str) -> Result<Incoming, ClientError> {
        self.wait_for(what, |_| true)
    }

    /// Takes the server's next request for `method`, waiting for it.
    pub fn server_request(&mut self, method: &str) -> Result<Incoming, ClientError> {
        self.wait_for(&format!("a `{method}` request"), |m| {
            m.method == method && m.is_request()
        })
    }

    /// Receives until `done` holds of what the client has seen. `what` names it in a timeout.
    pub fn wait_until(
        &mut self,
        what: &str,
        mut done: impl FnMut(&LspClient) -> bool,
    ) -> Result<(), ClientError> {
        let deadline = self.deadline();
        while !done(self) {
            self.receive(deadline, what)?;
        }
        Ok(())
    }

    /// Takes in what has already arrived, without waiting.
    pub fn drain(&mut self) -> Result<(), ClientError> {
        loop {
            match self.arrivals.try_recv() {
                Ok(arrival) => self.accept(arrival)?,
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => return Err(ClientError::Closed),
            }
        }
    }

    /// Every message received, as sent, in arrival order (responses included).
    pub fn log(&self) -> &[Value] {
        &self.log
    }

    /// Every message the server sent on its own, in arrival order, taken or not.
    pub fn seen(&self) -> &[Incoming] {
        &self.seen
    }

    /// The messages the server sent on its own with `method`, in arrival order.
    pub fn received(&self, method: &str) -> Vec<&Incoming> {
        self.seen.iter().filter(|m| m.method == method).collect()
    }

    /// Bytes read from the server, headers included.
    pub fn bytes_read(&self) -> usize {
        self.bytes_read
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.timeout
    }

    /// Waits until `deadline` for one message and takes it in.
    fn receive(&mut self, deadline: Instant, what: &str) -> Result<(), ClientError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.arrivals.recv_timeout(left) {
            Ok(arrival) => self.accept(arrival),
            Err(RecvTimeoutError::Timeout) => Err(ClientError::Timeout {
                waited: self.timeout,
                what: what.to_string(),
            }),
            Err(RecvTimeoutError::Disconnected) => Err(ClientError::Closed),
        }
    }

    /// Records one arrival; a server request goes to the handler.
    fn accept(&mut self, arrival: Arrival) -> Result<(), ClientError> {
        let frame = arrival?;
        self.bytes_read += frame.bytes;
        let sorted = sort(&frame.message);
        self.log.push(frame.message);
        let incoming = match sorted {
            Some(Sorted::Incoming(incoming)) => incoming,
            Some(Sorted::Response(Some(id), response)) => {
                self.responses.insert(id, response);
                return Ok(());
            }
            // A response to no request of ours (an `id: null` parse error): only logged.
            Some(Sorted::Response(None, _)) => return Ok(()),
            None => {
                let message = self.log.last().cloned().unwrap_or_default();
                return Err(ClientError::NotJsonRpc(message));
            }
        };
        let mut answered = false;
        if let (true, Some(handler)) = (incoming.is_request(), self.handler.as_mut()) {
            let mut outbox = Outbox::new(&mut self.input);
            handler(&incoming, &mut outbox)?;
            answered = outbox.replied();
        }
        if !answered {
            self.unread.push_back(self.seen.len());
        }
        self.seen.push(incoming);
        Ok(())
    }
}
