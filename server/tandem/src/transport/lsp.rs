//! Between stdio and tower-lsp-server: tower-lsp-server reads and writes two in-memory pipes,
//! and three tasks do the rest.
//!
//! - The reader reads stdin with [`FrameReader`], checks each message ([`envelope::check`]),
//!   passes what is well-formed to the server's pipe as a clean frame, and answers the rest
//!   itself (logged as a warning).
//! - The server's output is cut back into whole frames.
//! - One writer writes those frames and the reader's error frames to stdout, one whole frame at
//!   a time, so the two never interleave.
//!
//! The reader also notes whether `shutdown` came before the end, for the exit status.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::DuplexStream;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::envelope::{self, Kind, Verdict};
use super::frames::{FrameReader, Incoming};
use super::MessageLimit;

/// How much each in-memory pipe holds before its writer waits.
const PIPE: usize = 64 * 1024;

/// How long the end waits for the last frames to be written.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// What the client said about ending.
#[derive(Debug, Default)]
pub struct Ending {
    shutdown: AtomicBool,
    exit: AtomicBool,
}

impl Ending {
    /// The exit status LSP asks for: 0 when `shutdown` came first, 1 otherwise (after `exit`
    /// without `shutdown`, and when stdin closed without `shutdown`: a client that went away).
    pub fn exit_code(&self) -> u8 {
        if self.shutdown.load(Ordering::Acquire) {
            0
        } else {
            1
        }
    }

    /// Whether the client sent `exit` (otherwise stdin closed).
    pub fn exited(&self) -> bool {
        self.exit.load(Ordering::Acquire)
    }
}

/// The running transport; see the module docs.
pub struct Transport {
    /// What the client said about ending.
    pub ending: Arc<Ending>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Transport {
    /// Starts the tasks on `stdin` and `stdout`; messages above `limit` are refused. Returns
    /// the pipe the server reads, the pipe it writes, and the transport.
    pub fn start<R, W>(
        stdin: R,
        stdout: W,
        limit: MessageLimit,
    ) -> (DuplexStream, DuplexStream, Transport)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (server_input, to_server) = tokio::io::duplex(PIPE);
        let (server_output, from_server) = tokio::io::duplex(PIPE);
        let (frames, outgoing) = mpsc::channel::<Vec<u8>>(64);
        let ending = Arc::new(Ending::default());
        let reader = tokio::spawn(read_client(
            FrameReader::new(stdin, limit.0),
            to_server,
            frames.clone(),
            ending.clone(),
        ));
        tokio::spawn(read_server(from_server, frames));
        let writer = tokio::spawn(write_client(outgoing, stdout));
        let transport = Transport {
            ending,
            reader,
            writer,
        };
        (server_input, server_output, transport)
    }

    /// Once the server has ended: stops reading stdin and waits (a little) for the last frames
    /// to be written.
    pub async fn finish(self) {
        self.reader.abort();
        if tokio::time::timeout(FLUSH_WAIT, self.writer).await.is_err() {
            tracing::warn!(
                "the last messages to the client were not written within {FLUSH_WAIT:?}"
            );
        }
    }
}

/// A frame around `body`.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

async fn read_client<R: AsyncRead + Unpin>(
    mut input: FrameReader<R>,
    mut to_server: DuplexStream,
    frames: mpsc::Sender<Vec<u8>>,
    ending: Arc<Ending>,
) {
    loop {
        let incoming = match input.next().await {
            Ok(Some(incoming)) => incoming,
            Ok(None) => break,
            Err(e) => {
                tracing::error!("could not read stdin: {e}; the server stops");
                break;
            }
        };
        let refusal = match incoming {
            Incoming::Body(body) => match envelope::check(&body) {
                Verdict::Pass(kind) => {
                    match &kind {
                        Kind::Request(m) if m == "shutdown" => {
                            ending.shutdown.store(true, Ordering::Release)
                        }
                        Kind::Notification(m) if m == "exit" => {
                            ending.exit.store(true, Ordering::Release)
                        }
                        _ => {}
                    }
                    let header = format!("Content-Length: {}\r\n\r\n", body.len());
                    let written = async {
                        to_server.write_all(header.as_bytes()).await?;
                        to_server.write_all(&body).await
                    };
                    if written.await.is_err() {
                        // The server has ended (after `exit`): nothing reads any more.
                        break;
                    }
                    continue;
                }
                Verdict::Drop(why) => {
                    tracing::warn!("dropped a malformed response from the client: {why}");
                    continue;
                }
                Verdict::Refuse(refusal) => refusal,
            },
            Incoming::Refused(refusal) => refusal,
        };
        tracing::warn!(
            code = refusal.code,
            id = %refusal.id,
            "refused a message from the client: {}",
            refusal.message
        );
        if frames
            .send(frame(refusal.to_json().as_bytes()))
            .await
            .is_err()
        {
            break;
        }
    }
    // Dropping `to_server` ends the server's input, as stdin's end did before.
}

/// Cuts the server's output (well-formed: tower-lsp-server writes it) into whole frames.
async fn read_server(output: DuplexStream, frames: mpsc::Sender<Vec<u8>>) {
    let mut output = BufReader::new(output);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            match output.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let Some(length) = length else {
            tracing::error!("the language server wrote a frame without a Content-Length");
            return;
        };
        let mut body = vec![0u8; length];
        if output.read_exact(&mut body).await.is_err() {
            return;
        }
        if frames.send(frame(&body)).await.is_err() {
            return;
        }
    }
}

async fn write_client<W: AsyncWrite + Unpin>(mut frames: mpsc::Receiver<Vec<u8>>, mut stdout: W) {
    while let Some(frame) = frames.recv().await {
        if let Err(e) = async {
            stdout.write_all(&frame).await?;
            stdout.flush().await
        }
        .await
        {
            tracing::warn!("could not write to stdout: {e}; the client is gone");
            return;
        }
    }
}
