//! Between stdio and the ACP crate: the crate takes its lines from a [`LineReader`] (bounded,
//! UTF-8 only) instead of reading stdin itself, and sends its lines to one writer task, which
//! also writes the reader's error answers: whole lines, never interleaved.

use std::io;
use std::time::Duration;

use futures_util::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::lines::{Line, LineReader};
use super::MessageLimit;

/// How long the end waits for the last lines to be written.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// The writer, to be finished once the connection has ended.
pub struct Transport {
    writer: JoinHandle<()>,
    lines: mpsc::Sender<String>,
}

/// The lines the crate reads and the sink it writes to.
pub type CrateLines = agent_client_protocol::Lines<
    std::pin::Pin<Box<dyn Sink<String, Error = io::Error> + Send>>,
    std::pin::Pin<Box<dyn Stream<Item = io::Result<String>> + Send>>,
>;

impl Transport {
    /// The crate's transport on `stdin` and `stdout`, lines above `limit` refused; and the
    /// handle that finishes the writer.
    pub fn start<R, W>(stdin: R, stdout: W, limit: MessageLimit) -> (CrateLines, Transport)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (lines, outgoing) = mpsc::channel::<String>(64);
        let writer = tokio::spawn(write_lines(outgoing, stdout));
        let incoming = futures_util::stream::unfold(
            (LineReader::new(stdin, limit.bytes()), lines.clone()),
            |(mut reader, errors)| async move {
                loop {
                    match reader.next().await {
                        Ok(Some(Line::Text(text))) => return Some((Ok(text), (reader, errors))),
                        Ok(Some(Line::Refused(refusal))) => {
                            tracing::warn!(
                                code = refusal.code,
                                id = %refusal.id,
                                "refused a message from the client: {}",
                                refusal.message
                            );
                            if errors.send(refusal.to_json()).await.is_err() {
                                return None;
                            }
                        }
                        Ok(None) => return None,
                        Err(e) => return Some((Err(e), (reader, errors))),
                    }
                }
            },
        );
        let outgoing =
            futures_util::sink::unfold(lines.clone(), |lines, line: String| async move {
                lines.send(line).await.map_err(|_| {
                    io::Error::new(io::ErrorKind::BrokenPipe, "the stdout writer has stopped")
                })?;
                Ok::<_, io::Error>(lines)
            });
        let crate_lines = agent_client_protocol::Lines::new(
            Box::pin(outgoing) as std::pin::Pin<Box<dyn Sink<String, Error = io::Error> + Send>>,
            Box::pin(incoming) as std::pin::Pin<Box<dyn Stream<Item = io::Result<String>> + Send>>,
        );
        (crate_lines, Transport { writer, lines })
    }

    /// Once the connection has ended: waits (a little) for the last lines to be written.
    pub async fn finish(self) {
        drop(self.lines);
        if tokio::time::timeout(FLUSH_WAIT, self.writer).await.is_err() {
            tracing::warn!(
                "the last messages to the client were not written within {FLUSH_WAIT:?}"
            );
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut lines: mpsc::Receiver<String>, mut stdout: W) {
    while let Some(line) = lines.recv().await {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        if let Err(e) = async {
            stdout.write_all(&bytes).await?;
            stdout.flush().await
        }
        .await
        {
            tracing::warn!("could not write to stdout: {e}; the client is gone");
            return;
        }
    }
}
