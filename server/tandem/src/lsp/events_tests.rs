use std::sync::Arc;

use tandem_agent::AgentEvent;
use tandem_ai::AssistantMessageEvent;
use tandem_coding::agent_session::{AgentSessionEvent, SessionEvent};
use tandem_protocol::events::{Event, EventNotification};
use tokio::sync::{mpsc, watch};

use super::*;
use crate::host::pump::{pump, Batching, PumpInput};

/// Forwards `events` to `sink` as the server does, until the channel closes.
async fn forward(
    session: SessionId,
    cwd: PathBuf,
    events: mpsc::Receiver<AgentSessionEvent>,
    sink: Arc<dyn EventSink>,
    queue: Arc<Mutex<QueueState>>,
) {
    let (_keep, failures) = mpsc::unbounded_channel();
    pump(
        PumpInput { events, failures },
        LspEvents::new(cwd, Default::default(), queue),
        EventTransport::new(session, sink),
        Batching::EDITOR,
        watch::channel(0).0,
    )
    .await
}

struct Chan(mpsc::UnboundedSender<EventNotification>);

impl EventSink for Chan {
    fn send(&self, n: EventNotification) -> BoxFuture<'_, ()> {
        let _ = self.0.send(n);
        Box::pin(async {})
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

// The clock stands still: every delta after the first falls inside the first one's window.
#[tokio::test(start_paused = true)]
async fn deltas_are_coalesced_and_numbered_in_order() {
    let (tx, rx) = mpsc::channel(16);
    let (out_tx, mut out) = mpsc::unbounded_channel();
    let queue = Arc::new(Mutex::new(QueueState::default()));
    for d in ["a", "b", "c"] {
        tx.send(text(d)).await.unwrap();
    }
    tx.send(AgentSessionEvent::Session(SessionEvent::QueueUpdate {
        steering: vec!["s".into()],
        follow_up: vec![],
    }))
    .await
    .unwrap();
    tx.send(text("d")).await.unwrap();
    tx.send(AgentSessionEvent::Session(SessionEvent::AgentSettled {
        aborted: false,
    }))
    .await
    .unwrap();
    drop(tx);
    forward(
        SessionId::from("s1"),
        PathBuf::from("/p"),
        rx,
        Arc::new(Chan(out_tx)),
        queue.clone(),
    )
    .await;
    let mut got = Vec::new();
    while let Ok(n) = out.try_recv() {
        got.push((n.seq, n.event));
    }
    let delta = |d: &str| Event::TextDelta {
        content_index: 0,
        delta: d.into(),
    };
    assert_eq!(
        got,
        vec![
            // The first delta at once, the rest of its window merged.
            (1, delta("a")),
            (2, delta("bc")),
            (
                3,
                Event::QueueUpdate {
                    steering: vec!["s".into()],
                    follow_up: vec![]
                }
            ),
            (4, delta("d")),
            (5, Event::Settled),
        ]
    );
    assert_eq!(queue.lock().unwrap().steering, vec!["s".to_string()]);
}

#[test]
fn tool_start_has_title_kind_and_uri_locations() {
    let mut mapper = Mapper::new(PathBuf::from("/p"), Default::default());
    let start = AgentSessionEvent::Agent(Arc::new(AgentEvent::ToolExecutionStart {
        tool_call_id: "c1".into(),
        tool_name: "edit".into(),
        args: serde_json::json!({"path": "src/a b.rs"}),
    }));
    let events = mapper.map(&start);
    assert_eq!(
        events,
        vec![Event::ToolStart {
            tool_call_id: ToolCallId::from("c1"),
            name: "edit".into(),
            title: "Edit src/a b.rs".into(),
            kind: ToolKind::Edit,
            locations: vec![ToolLocation {
                uri: "file:///p/src/a%20b.rs".into(),
                line: None
            }],
        }]
    );
}

#[tokio::test]
async fn a_steady_stream_is_flushed_while_it_lasts_not_only_at_its_end() {
    // Deltas every 5 ms for at least 200 ms: a timer that restarted on every delta would hold
    // them all back until the end. Flushing 16 ms after the first pending delta sends several.
    let (tx, rx) = mpsc::channel(16);
    let (out_tx, mut out) = mpsc::unbounded_channel();
    let queue = Arc::new(Mutex::new(QueueState::default()));
    let producer = tokio::spawn(async move {
        for _ in 0..40 {
            tx.send(text("x")).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    let forwarder = tokio::spawn(forward(
        SessionId::from("s1"),
        PathBuf::from("/p"),
        rx,
        Arc::new(Chan(out_tx)),
        queue,
    ));
    producer.await.unwrap();
    forwarder.await.unwrap();
    let mut deltas = Vec::new();
    while let Ok(n) = out.try_recv() {
        if let Event::TextDelta { delta, .. } = n.event {
            deltas.push(delta);
        }
    }
    assert_eq!(deltas.concat(), "x".repeat(40));
    assert!(
        deltas.len() > 1,
        "one delta for the whole stream: {deltas:?}"
    );
}
