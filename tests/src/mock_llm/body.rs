//! Delivery of a response body: a gate it may wait for, pieces, pauses, and the cut and stall
//! endings.
//!
//! hyper writes whatever a body yields into its buffer and flushes when the body is not ready,
//! so [`ReplayBody`] yields to hyper between pieces to make each piece its own flush (and its
//! own HTTP chunk). A cut must drop the connection only after the last piece has reached the
//! socket; hyper has no API for "abort after flushing", so [`CuttableStream`] wraps the socket
//! and fails the first flush that follows the body's end, which makes hyper drop the
//! connection without writing the terminating chunk.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

use super::fixture::{Ending, MockResponse};

/// Set by a body that ends in a cut; read by the connection's [`CuttableStream`].
#[derive(Debug, Default)]
pub(crate) struct CutSignal(AtomicBool);

impl CutSignal {
    fn arm(&self) {
        self.0.store(true, Ordering::Release);
    }

    fn is_armed(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// What the body does before it may yield the next piece.
enum Gap {
    /// The next piece may go now.
    Open,
    /// A piece was just yielded; pause (or at least yield to hyper) before the next.
    Due,
    /// Waiting out `chunk-delay-ms`.
    Sleeping(Pin<Box<Sleep>>),
    /// Waiting for the response's [`Gate`](super::fixture::Gate) to open.
    Gated(Pin<Box<dyn Future<Output = ()> + Send>>),
}

/// A response body that replays a [`MockResponse`] piece by piece.
pub(crate) struct ReplayBody {
    pieces: VecDeque<Bytes>,
    delay: Duration,
    gap: Gap,
    ending: Ending,
    /// Whether hyper may frame the body with `content-length` instead of chunked encoding.
    exact_len: Option<u64>,
    cut: Arc<CutSignal>,
}

impl ReplayBody {
    /// Prepares the body of `response`; `cut` is the signal of the connection it is sent on.
    pub(crate) fn new(response: &MockResponse, cut: Arc<CutSignal>) -> Self {
        let pieces: VecDeque<Bytes> = response.pieces().into();
        // One complete piece needs no streaming: let hyper send a content-length, as real
        // providers do for JSON errors. Anything else is chunked so piece boundaries show.
        let exact_len = (pieces.len() <= 1 && response.ending() == Ending::Complete)
            .then_some(response.body().len() as u64);
        Self {
            pieces,
            delay: response.chunk_delay(),
            gap: match response.gate() {
                Some(gate) => Gap::Gated(Box::pin(gate.opened())),
                None => Gap::Open,
            },
            ending: response.ending(),
            exact_len,
            cut,
        }
    }
}

impl Body for ReplayBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        loop {
            match &mut this.gap {
                Gap::Open => break,
                Gap::Due if this.delay.is_zero() => {
                    // Yield once so hyper flushes the piece before taking the next one.
                    this.gap = Gap::Open;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Gap::Due => this.gap = Gap::Sleeping(Box::pin(tokio::time::sleep(this.delay))),
                Gap::Sleeping(sleep) => {
                    ready!(sleep.as_mut().poll(cx));
                    this.gap = Gap::Open;
                }
                Gap::Gated(opened) => {
                    ready!(opened.as_mut().poll(cx));
                    this.gap = Gap::Open;
                }
            }
        }
        if let Some(piece) = this.pieces.pop_front() {
            if !this.pieces.is_empty() {
                this.gap = Gap::Due;
            }
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        match this.ending {
            Ending::Complete => Poll::Ready(None),
            Ending::Cut => {
                // Every piece is in hyper's buffer now; the stream cuts at the next flush.
                this.cut.arm();
                Poll::Pending
            }
            // Never woken: hyper keeps the connection until the client closes it.
            Ending::Stall => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty() && self.ending == Ending::Complete
    }

    fn size_hint(&self) -> SizeHint {
        match self.exact_len {
            Some(len) => SizeHint::with_exact(len),
            None => SizeHint::default(),
        }
    }
}

/// A socket that fails once a cut is armed and everything before it has been flushed.
pub(crate) struct CuttableStream<S> {
    inner: S,
    cut: Arc<CutSignal>,
}

impl<S> CuttableStream<S> {
    /// Wraps `inner`; `cut` is shared with the bodies sent on this connection.
    pub(crate) fn new(inner: S, cut: Arc<CutSignal>) -> Self {
        Self { inner, cut }
    }

    fn cut_error() -> io::Error {
        io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "mock-llm: cut as the fixture asks",
        )
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for CuttableStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for CuttableStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // hyper calls this only after its own buffer has been written out, so an armed cut
        // happens after the last piece is on the wire.
        ready!(Pin::new(&mut self.inner).poll_flush(cx))?;
        if self.cut.is_armed() {
            return Poll::Ready(Err(Self::cut_error()));
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
