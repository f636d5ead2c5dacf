//! The pump's batching, order and settle counting, with a string translator and the clock
//! paused (tokio's test clock moves only when every task waits).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tandem_agent::AgentEvent;
use tandem_ai::AssistantMessageEvent;
use tandem_coding::agent_session::{AgentSessionEvent, SessionEvent};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::*;

/// Text deltas become `Delta(text)`, everything else `Other(kind)`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Msg {
    Delta(String),
    Other(String),
}

struct Strings;

impl Translate for Strings {
    type Out = Msg;

    fn translate(&mut self, event: &AgentSessionEvent) -> Vec<Msg> {
        match event {
            AgentSessionEvent::Agent(e) => match e.as_ref() {
                AgentEvent::MessageUpdate {
                    assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
                } => vec![Msg::Delta(delta.clone())],
                _ => vec![Msg::Other("agent".into())],
            },
            AgentSessionEvent::Session(_) => vec![Msg::Other(event.kind().to_string())],
        }
    }

    fn failed(&mut self, failure: &Failure) -> Vec<Msg> {
        vec![Msg::Other(format!("failed: {}", failure.message))]
    }

    fn delta_len(out: &Msg) -> Option<usize> {
        match out {
            Msg::Delta(d) => Some(d.len()),
            Msg::Other(_) => None,
        }
    }

    fn merge(held: &mut Msg, next: Msg) -> Option<Msg> {
        match (held, next) {
            (Msg::Delta(a), Msg::Delta(b)) => {
                a.push_str(&b);
                None
            }
            (_, next) => Some(next),
        }
    }
}

/// Records what was sent and when.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(Instant, Msg)>>>);

impl Transport<Msg> for Recorder {
    async fn send(&mut self, out: Msg) {
        self.0.lock().unwrap().push((Instant::now(), out));
    }
}

impl Recorder {
    fn messages(&self) -> Vec<Msg> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, m)| m.clone())
            .collect()
    }
}

fn text(delta: &str) -> AgentSessionEvent {
    AgentSessionEvent::Agent(Arc::new(AgentEvent::MessageUpdate {
        assistant_message_event: AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: delta.into(),
        },
    }))
}

fn settled() -> AgentSessionEvent {
    AgentSessionEvent::Session(SessionEvent::AgentSettled { aborted: false })
}

fn delta(d: &str) -> Msg {
    Msg::Delta(d.into())
}

struct Running {
    events: mpsc::Sender<AgentSessionEvent>,
    failures: mpsc::UnboundedSender<Failure>,
    settled: watch::Receiver<u64>,
    sent: Recorder,
    task: tokio::task::JoinHandle<()>,
}

fn start(batching: Batching) -> Running {
    let (events, events_rx) = mpsc::channel(64);
    let (failures, failures_rx) = mpsc::unbounded_channel();
    let (settled_tx, settled) = watch::channel(0);
    let sent = Recorder::default();
    let task = tokio::spawn(pump(
        PumpInput {
            events: events_rx,
            failures: failures_rx,
        },
        Strings,
        sent.clone(),
        batching,
        settled_tx,
    ));
    Running {
        events,
        failures,
        settled,
        sent,
        task,
    }
}

impl Running {
    async fn finish(self) -> Vec<Msg> {
        drop(self.events);
        drop(self.failures);
        self.task.await.unwrap();
        self.sent.messages()
    }
}

#[tokio::test(start_paused = true)]
async fn the_first_delta_goes_at_once_and_its_window_is_merged() {
    let run = start(Batching::EDITOR);
    run.events.send(text("a")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        run.sent.messages(),
        vec![delta("a")],
        "the first delta waited"
    );
    for d in ["b", "c", "d"] {
        run.events.send(text(d)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(
        run.sent.messages(),
        vec![delta("a")],
        "the window was not held"
    );
    // The window (16 ms from the first) closes: what it gathered goes out as one message.
    tokio::time::sleep(Duration::from_millis(12)).await;
    assert_eq!(run.sent.messages(), vec![delta("a"), delta("bcd")]);
    // After the window a delta is again sent at once.
    tokio::time::sleep(Duration::from_millis(30)).await;
    run.events.send(text("e")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        run.finish().await,
        vec![delta("a"), delta("bcd"), delta("e")]
    );
}

#[tokio::test(start_paused = true)]
async fn a_stream_paced_at_10_ms_is_never_held_longer_than_a_window() {
    let run = start(Batching::EDITOR);
    let mut sent_at = Vec::new();
    for i in 0..50 {
        sent_at.push(Instant::now());
        run.events.send(text(&format!("{i},"))).await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let records = run.sent.0.lock().unwrap().clone();
    drop(run.finish().await);
    // Every chunk's delay: from its send to the message that carried it.
    let mut delays = Vec::new();
    for (at, msg) in &records {
        let Msg::Delta(text) = msg else { continue };
        for piece in text.split(',').filter(|p| !p.is_empty()) {
            let i: usize = piece.parse().unwrap();
            delays.push(at.duration_since(sent_at[i]));
        }
    }
    assert_eq!(delays.len(), 50, "every chunk arrived once: {records:?}");
    assert!(
        delays.iter().all(|d| *d <= Batching::EDITOR.window),
        "{delays:?}"
    );
    let at_once = delays.iter().filter(|d| d.is_zero()).count();
    assert!(at_once >= 20, "half the chunks go at once: {delays:?}");
}

#[tokio::test(start_paused = true)]
async fn anything_else_sends_the_held_deltas_first() {
    let run = start(Batching::EDITOR);
    for d in ["a", "b", "c"] {
        run.events.send(text(d)).await.unwrap();
    }
    run.events
        .send(AgentSessionEvent::Session(SessionEvent::QueueUpdate {
            steering: Vec::new(),
            follow_up: Vec::new(),
        }))
        .await
        .unwrap();
    run.events.send(text("d")).await.unwrap();
    run.events.send(settled()).await.unwrap();
    let mut settled_rx = run.settled.clone();
    settled_rx.wait_for(|n| *n == 1).await.unwrap();
    assert_eq!(
        run.finish().await,
        vec![
            delta("a"),
            delta("bc"),
            Msg::Other("queue_update".into()),
            delta("d"),
            Msg::Other("agent_settled".into()),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn held_text_at_the_size_limit_goes_at_once() {
    let run = start(Batching {
        window: Duration::from_secs(60),
        max_bytes: 8,
    });
    for d in ["first", "1234", "5678", "9"] {
        run.events.send(text(d)).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(run.sent.messages(), vec![delta("first"), delta("12345678")]);
    assert_eq!(
        run.finish().await,
        vec![delta("first"), delta("12345678"), delta("9")]
    );
}

#[tokio::test(start_paused = true)]
async fn without_batching_every_delta_is_its_own_message() {
    let run = start(Batching::NONE);
    for d in ["a", "b", "c"] {
        run.events.send(text(d)).await.unwrap();
    }
    assert_eq!(run.finish().await, vec![delta("a"), delta("b"), delta("c")]);
}

#[tokio::test(start_paused = true)]
async fn settled_runs_and_settling_failures_are_counted_after_they_are_sent() {
    let run = start(Batching::EDITOR);
    run.events.send(text("a")).await.unwrap();
    run.events.send(text("b")).await.unwrap();
    run.events.send(settled()).await.unwrap();
    let mut settled_rx = run.settled.clone();
    settled_rx.wait_for(|n| *n == 1).await.unwrap();
    // Counted only once everything before it went out.
    assert_eq!(
        run.sent.messages(),
        vec![delta("a"), delta("b"), Msg::Other("agent_settled".into())]
    );
    run.failures
        .send(Failure {
            message: "written late".into(),
            settles: false,
        })
        .unwrap();
    run.failures
        .send(Failure {
            message: "could not start".into(),
            settles: true,
        })
        .unwrap();
    settled_rx.wait_for(|n| *n == 2).await.unwrap();
    assert_eq!(
        run.finish().await[3..],
        [
            Msg::Other("failed: written late".into()),
            Msg::Other("failed: could not start".into())
        ]
    );
}

#[tokio::test]
async fn the_sessions_events_go_before_a_failure_added_at_the_same_time() {
    let run = start(Batching::NONE);
    run.events.send(text("a")).await.unwrap();
    run.events.send(settled()).await.unwrap();
    run.failures
        .send(Failure {
            message: "after".into(),
            settles: false,
        })
        .unwrap();
    assert_eq!(
        run.finish().await,
        vec![
            delta("a"),
            Msg::Other("agent_settled".into()),
            Msg::Other("failed: after".into())
        ]
    );
}

/// Gathers what is sent and writes it out (one write per `idle`), as JSON mode's stdout does.
#[derive(Clone, Default)]
struct Gathering {
    pending: Vec<Msg>,
    writes: Arc<Mutex<Vec<Vec<Msg>>>>,
}

impl Transport<Msg> for Gathering {
    async fn send(&mut self, out: Msg) {
        self.pending.push(out);
    }

    async fn idle(&mut self) {
        if !self.pending.is_empty() {
            self.writes
                .lock()
                .unwrap()
                .push(std::mem::take(&mut self.pending));
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_gathering_transport_writes_bursts_together_and_everything_before_a_run_settles() {
    let (events, events_rx) = mpsc::channel(64);
    let (_failures, failures_rx) = mpsc::unbounded_channel();
    let (settled_tx, mut settles) = watch::channel(0);
    let transport = Gathering::default();
    let writes = transport.writes.clone();
    // A burst waiting before the pump runs: one write for all of it, not one per message.
    for d in ["a", "b", "c"] {
        events.send(text(d)).await.unwrap();
    }
    events.send(settled()).await.unwrap();
    let task = tokio::spawn(pump(
        PumpInput {
            events: events_rx,
            failures: failures_rx,
        },
        Strings,
        transport,
        Batching::NONE,
        settled_tx,
    ));
    settles.wait_for(|n| *n == 1).await.unwrap();
    // When the run counts as settled, all of it has been written.
    assert_eq!(
        writes.lock().unwrap().clone(),
        vec![vec![
            delta("a"),
            delta("b"),
            delta("c"),
            Msg::Other("agent_settled".into())
        ]]
    );
    // A lone message afterwards is written when the pump waits again.
    events.send(text("d")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(writes.lock().unwrap().last(), Some(&vec![delta("d")]));
    drop(events);
    task.await.unwrap();
}
