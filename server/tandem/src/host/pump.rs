//! One session's events to one client, for every front door: a [`Translate`] turns each
//! [`AgentSessionEvent`] into the front door's messages (LSP `tandem/event`s, ACP
//! `session/update`s, pi's JSON lines), a [`Transport`] sends them, and [`pump`] does the rest
//! once: order, batching of streamed deltas, and counting settled runs.
//!
//! Batching. The core reports every provider chunk; a client wants a few messages per frame, but
//! never a late one. A delta (text, thinking, tool arguments) that arrives when no batch window
//! is open is sent at once and opens a window of [`Batching::window`]; deltas arriving inside
//! the window are merged (neighbours of one kind join) and sent when it closes, or as soon as
//! the held text reaches [`Batching::max_bytes`]. So a slow stream (a chunk every 10 ms) reaches
//! the client within a window at worst and at once half the time, and a burst of thousands of
//! chunks folds into about two messages per window. Anything that is not a delta sends what is
//! held first and then goes out at once, so the client sees the session's order.
//!
//! Settling. The pump counts the runs whose end it has delivered — the session's
//! `agent_settled` events and the failures added with [`Failure::settles`] — in a watch channel,
//! so a turn can wait until every event of its run has been sent before it answers
//! ([`super::turns`]).

use std::future::Future;
use std::time::Duration;

use tandem_coding::agent_session::AgentSessionEvent;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// A run that failed without the session reporting it as events (it could not start, or its
/// session file could not be written), added to the stream by the turn runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong, for the user.
    pub message: String,
    /// Whether the failure ends the run on the stream (the session emitted no `agent_settled`
    /// for it, so the translator reports one).
    pub settles: bool,
}

/// Turns a session's events into a front door's messages.
pub trait Translate: Send + 'static {
    /// One message to the client.
    type Out: Send + 'static;

    /// The messages for `event`, in order (often one, sometimes none).
    fn translate(&mut self, event: &AgentSessionEvent) -> Vec<Self::Out>;

    /// The messages for a failure the session did not report (none by default: a front door
    /// that answers each turn says it in the answer).
    fn failed(&mut self, failure: &Failure) -> Vec<Self::Out> {
        let _ = failure;
        Vec::new()
    }

    /// The size of `out` when it is a streamed delta that may be held back and merged with the
    /// next; `None` for everything else.
    fn delta_len(out: &Self::Out) -> Option<usize>;

    /// Merges `next` into `held` when they continue one another; gives `next` back otherwise.
    fn merge(held: &mut Self::Out, next: Self::Out) -> Option<Self::Out>;
}

/// Sends one front door's messages to its client.
pub trait Transport<Out>: Send + 'static {
    /// Sends `out` (the pump waits for it: a slow client slows the stream, never reorders it).
    fn send(&mut self, out: Out) -> impl Future<Output = ()> + Send;

    /// Nothing more is waiting to be sent: a transport that gathers messages into larger
    /// writes writes them out now. The pump calls it before it waits for the next event and
    /// before it counts a run as settled, so nothing sent stays unwritten.
    fn idle(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Waits until what was sent is in the front door's output ahead of anything it writes
    /// later: a protocol library that queues notifications apart from its answers may write an
    /// answer first. The pump calls it (after [`Transport::idle`]) before it counts a run as
    /// settled, so an answer given once the run settled follows the run's last event.
    fn written(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// How deltas are batched; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batching {
    /// How long deltas that follow a sent one are gathered.
    pub window: Duration,
    /// Held deltas this large are sent at once.
    pub max_bytes: usize,
}

impl Batching {
    /// About one frame; what an editor shows.
    pub const EDITOR: Batching = Batching {
        window: Duration::from_millis(16),
        max_bytes: 16 * 1024,
    };

    /// Every message as it comes (pi's JSON mode prints each event).
    pub const NONE: Batching = Batching {
        window: Duration::ZERO,
        max_bytes: 0,
    };
}

/// What the pump reads: the session's events, and failures the turn runner adds.
pub struct PumpInput {
    /// The session's events ([`tandem_coding::agent_session::AgentSession::subscribe`]).
    pub events: mpsc::Receiver<AgentSessionEvent>,
    /// Failures added to the stream; the session's own events go first when both are ready,
    /// so a failure follows everything the session emitted before it.
    pub failures: mpsc::UnboundedReceiver<Failure>,
}

/// Forwards one session's events through `translator` to `transport` until the session is gone;
/// counts the settled runs in `settled` (see the module docs).
pub async fn pump<T, S>(
    input: PumpInput,
    mut translator: T,
    mut transport: S,
    batching: Batching,
    settled: watch::Sender<u64>,
) where
    T: Translate,
    S: Transport<T::Out>,
{
    let PumpInput {
        mut events,
        mut failures,
    } = input;
    let mut failures_open = true;
    let mut batch = Batch::<T>::new(batching);
    loop {
        if events.is_empty() {
            transport.idle().await;
        }
        let next = match batch.due() {
            None => receive(&mut events, &mut failures, &mut failures_open).await,
            Some(due) => {
                let next = receive(&mut events, &mut failures, &mut failures_open);
                match tokio::time::timeout_at(due, next).await {
                    Ok(next) => next,
                    Err(_) => {
                        batch.close(&mut transport).await;
                        continue;
                    }
                }
            }
        };
        let (out, settles) = match next {
            Next::Closed => {
                // The session is gone; failures added before that still go out.
                while let Ok(failure) = failures.try_recv() {
                    for message in translator.failed(&failure) {
                        batch.push(message, &mut transport).await;
                    }
                }
                break;
            }
            Next::Event(event) => {
                // A prompt an extension handled ends as a run does.
                let settles = matches!(
                    &event,
                    AgentSessionEvent::Session(
                        tandem_coding::agent_session::SessionEvent::AgentSettled { .. }
                            | tandem_coding::agent_session::SessionEvent::PromptHandled
                    )
                );
                (translator.translate(&event), settles)
            }
            Next::Failure(failure) => (translator.failed(&failure), failure.settles),
        };
        for message in out {
            batch.push(message, &mut transport).await;
        }
        if settles {
            // The end of a run: nothing of it may stay held.
            batch.flush(&mut transport).await;
            transport.idle().await;
            transport.written().await;
            settled.send_modify(|n| *n += 1);
        }
    }
    batch.flush(&mut transport).await;
    transport.idle().await;
}

/// The held deltas and the open window.
struct Batch<T: Translate> {
    batching: Batching,
    held: Option<T::Out>,
    held_len: usize,
    /// When the window opened by the last delta sent at once closes.
    window_end: Option<Instant>,
}

impl<T: Translate> Batch<T> {
    fn new(batching: Batching) -> Self {
        Batch {
            batching,
            held: None,
            held_len: 0,
            window_end: None,
        }
    }

    /// When the held deltas must go out.
    fn due(&self) -> Option<Instant> {
        self.held.as_ref().and(self.window_end)
    }

    async fn push<S: Transport<T::Out>>(&mut self, out: T::Out, transport: &mut S) {
        let Some(len) = T::delta_len(&out) else {
            self.flush(transport).await;
            transport.send(out).await;
            return;
        };
        let now = Instant::now();
        let open = self.window_end.is_some_and(|end| now < end);
        if !open {
            // The first delta after a quiet spell: at once.
            self.flush(transport).await;
            transport.send(out).await;
            self.window_end = Some(now + self.batching.window);
            return;
        }
        let leftover = match self.held.as_mut() {
            Some(held) => T::merge(held, out),
            None => Some(out),
        };
        match leftover {
            None => self.held_len += len,
            Some(out) => {
                self.flush(transport).await;
                self.held = Some(out);
                self.held_len = len;
            }
        }
        if self.held_len >= self.batching.max_bytes {
            self.flush(transport).await;
        }
    }

    /// Sends the held deltas, keeping the window.
    async fn flush<S: Transport<T::Out>>(&mut self, transport: &mut S) {
        if let Some(held) = self.held.take() {
            self.held_len = 0;
            transport.send(held).await;
        }
    }

    /// The window is over: sends what it gathered; the next delta goes out at once.
    async fn close<S: Transport<T::Out>>(&mut self, transport: &mut S) {
        self.flush(transport).await;
        self.window_end = None;
    }
}

/// What [`receive`] got.
enum Next {
    Event(AgentSessionEvent),
    Failure(Failure),
    Closed,
}

/// The next input: the session's event first when both channels have one (cancel-safe).
async fn receive(
    events: &mut mpsc::Receiver<AgentSessionEvent>,
    failures: &mut mpsc::UnboundedReceiver<Failure>,
    failures_open: &mut bool,
) -> Next {
    loop {
        tokio::select! {
            biased;
            next = events.recv() => return next.map_or(Next::Closed, Next::Event),
            failure = failures.recv(), if *failures_open => match failure {
                Some(f) => return Next::Failure(f),
                None => *failures_open = false,
            },
        }
    }
}

#[cfg(test)]
#[path = "pump_tests.rs"]
mod tests;
