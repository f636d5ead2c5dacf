//! One live ACP session: the agent session, its workspace, and the task that forwards its events
//! to the client as `session/update` notifications.
//!
//! Updates and the prompt's answer must reach the client in order: every update of a turn
//! before the `session/prompt` response. The forwarder counts the `agent_settled` events it has
//! sent; a turn answers only once that count has passed the turn's. Streamed deltas are gathered
//! for up to 16 ms and neighbouring ones merged, so a fast stream costs a few dozen larger
//! notifications a second, not one per provider chunk.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, ContentChunk,
    SessionConfigOption, SessionNotification, SessionUpdate, UnstructuredCommandInput,
};
use tandem_ai::registry::ModelRegistry;
use tandem_coding::agent_session::{AgentSession, AgentSessionEvent};
use tokio::sync::{mpsc, watch};

use super::modes::{config_options, Mode};
use super::updates::Translator;
use super::workspace::{AcpWorkspace, ClientConnection};
use crate::mcp::{McpServerConfig, McpTools};
use tandem_coding::trust::ProtectedResources;

/// What a session's first turn does before it runs.
#[derive(Default)]
pub struct FirstTurn {
    /// The folder's trust question, when its answer is pending (the session was built
    /// untrusted), with the client's MCP servers to start again with the project's.
    pub trust: Option<(ProtectedResources, Vec<McpServerConfig>)>,
    /// Configuration problems to show (broken settings, models.json, trust.json).
    pub problems: Vec<String>,
}

/// A live session.
pub struct AcpSession {
    /// The session id (the session file's id).
    pub id: String,
    /// The agent session.
    pub session: Arc<AgentSession>,
    /// Files, questions and terminals through the client.
    pub workspace: Arc<AcpWorkspace>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Models for the model option.
    pub registry: Arc<ModelRegistry>,
    /// The session's MCP servers (shut down with it; replaced when its folder becomes trusted).
    pub mcp: Mutex<McpTools>,
    /// What the first turn must do before it runs: ask about the folder's trust, show
    /// configuration problems.
    pub first_turn: Mutex<FirstTurn>,
    /// A turn is running.
    pub running: AtomicBool,
    /// The running turn was cancelled.
    pub cancelled: AtomicBool,
    /// How many `agent_settled` events the forwarder has sent.
    pub settled: watch::Receiver<u64>,
    cx: ClientConnection,
}

impl AcpSession {
    /// Wraps `session` and starts forwarding its events.
    pub fn start(
        session: AgentSession,
        workspace: Arc<AcpWorkspace>,
        cwd: PathBuf,
        registry: Arc<ModelRegistry>,
        mcp: McpTools,
        cx: ClientConnection,
    ) -> Arc<AcpSession> {
        let id = session.with_session(|s| s.session_id().to_string());
        let session = Arc::new(session);
        let (settled_tx, settled) = watch::channel(0u64);
        tokio::spawn(forward(
            id.clone(),
            session.subscribe(),
            workspace.clone(),
            cx.clone(),
            settled_tx,
            cwd.clone(),
        ));
        Arc::new(AcpSession {
            id,
            session,
            workspace,
            cwd,
            registry,
            mcp: Mutex::new(mcp),
            first_turn: Mutex::new(FirstTurn::default()),
            running: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            settled,
            cx,
        })
    }

    /// Sends one update for this session.
    pub fn notify(&self, update: SessionUpdate) {
        send(&self.cx, &self.id, update);
    }

    /// The session's configuration options as they are now.
    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        let (model, thinking) = self
            .session
            .agent()
            .with_state(|s| (s.model.clone(), s.thinking_level));
        config_options(self.workspace.mode(), &self.registry, &model, thinking)
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.workspace.mode()
    }

    /// Prompt templates and skills, as `/name` commands.
    pub fn available_commands(&self) -> AvailableCommandsUpdate {
        let mut commands = Vec::new();
        if let Some(resources) = self.session.resources() {
            for t in &resources.templates {
                commands.push(
                    AvailableCommand::new(t.name.clone(), t.description.clone()).input(
                        AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                            "arguments for the template",
                        )),
                    ),
                );
            }
            for s in &resources.skills {
                commands.push(
                    AvailableCommand::new(format!("skill:{}", s.name), s.description.clone())
                        .input(AvailableCommandInput::Unstructured(
                            UnstructuredCommandInput::new("what to do with the skill"),
                        )),
                );
            }
        }
        AvailableCommandsUpdate::new(commands)
    }

    /// Cancels the running turn: aborts the agent, ends open questions, kills terminals.
    pub fn cancel(&self) {
        if self.running.load(Ordering::Acquire) {
            self.cancelled.store(true, Ordering::Release);
        }
        // Abort first: a question the cancel ends must not let the run go on to the model.
        self.session.abort();
        self.workspace.cancel_turn();
    }
}

fn send(cx: &ClientConnection, id: &str, update: SessionUpdate) {
    if let Err(e) = cx.send_notification(SessionNotification::new(id.to_string(), update)) {
        tracing::warn!("session {id}: could not send an update: {}", e.message);
    }
}

/// Most events merged into one batch.
const BATCH: usize = 4096;
/// How long streamed deltas are gathered before they go out (about one frame).
const COALESCE: std::time::Duration = std::time::Duration::from_millis(16);

/// A text or thinking delta (what a stream is made of).
fn is_delta(event: &AgentSessionEvent) -> bool {
    use tandem_agent::AgentEvent;
    use tandem_ai::AssistantMessageEvent as E;
    match event {
        AgentSessionEvent::Agent(e) => matches!(
            e.as_ref(),
            AgentEvent::MessageUpdate {
                assistant_message_event: E::TextDelta { .. }
                    | E::ThinkingDelta { .. }
                    | E::ToolcallDelta { .. }
            }
        ),
        AgentSessionEvent::Session(_) => false,
    }
}

async fn forward(
    id: String,
    mut events: mpsc::Receiver<AgentSessionEvent>,
    workspace: Arc<AcpWorkspace>,
    cx: ClientConnection,
    settled: watch::Sender<u64>,
    cwd: PathBuf,
) {
    let mut translator = Translator::new(&cwd);
    while let Some(first) = events.recv().await {
        let mut batch = vec![first];
        if is_delta(&batch[0]) {
            // A stream is coming: gather it for a moment (in order, whatever arrives), up to the
            // first event that is not a delta.
            let deadline = tokio::time::Instant::now() + COALESCE;
            while batch.len() < BATCH {
                match tokio::time::timeout_at(deadline, events.recv()).await {
                    Ok(Some(event)) => {
                        let more = is_delta(&event);
                        batch.push(event);
                        if !more {
                            break;
                        }
                    }
                    Ok(None) | Err(_) => break,
                }
            }
        } else {
            while batch.len() < BATCH {
                match events.try_recv() {
                    Ok(event) => batch.push(event),
                    Err(_) => break,
                }
            }
        }
        let mut settles = 0;
        let mut updates = Vec::new();
        for event in &batch {
            if event.kind() == "agent_settled" {
                settles += 1;
            }
            updates.extend(translator.translate(event, workspace.as_ref()));
        }
        for update in merge_chunks(updates) {
            let call = match &update {
                SessionUpdate::ToolCall(call) => Some(call.tool_call_id.0.to_string()),
                _ => None,
            };
            send(&cx, &id, update);
            if let Some(call) = call {
                workspace.mark_announced(&call);
            }
        }
        if settles > 0 {
            settled.send_modify(|n| *n += settles);
        }
    }
}

/// Joins neighbouring text chunks of the same kind.
fn merge_chunks(updates: Vec<SessionUpdate>) -> Vec<SessionUpdate> {
    let mut out: Vec<SessionUpdate> = Vec::with_capacity(updates.len());
    for update in updates {
        let merged = match (out.last_mut(), &update) {
            (Some(SessionUpdate::AgentMessageChunk(a)), SessionUpdate::AgentMessageChunk(b))
            | (Some(SessionUpdate::AgentThoughtChunk(a)), SessionUpdate::AgentThoughtChunk(b)) => {
                append(a, b)
            }
            _ => false,
        };
        if !merged {
            out.push(update);
        }
    }
    out
}

fn append(into: &mut ContentChunk, more: &ContentChunk) -> bool {
    match (&mut into.content, &more.content) {
        (ContentBlock::Text(a), ContentBlock::Text(b)) => {
            a.text.push_str(&b.text);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::TextContent;

    fn text(update: &SessionUpdate) -> (&'static str, String) {
        match update {
            SessionUpdate::AgentMessageChunk(c) => match &c.content {
                ContentBlock::Text(t) => ("message", t.text.clone()),
                _ => ("other", String::new()),
            },
            SessionUpdate::AgentThoughtChunk(c) => match &c.content {
                ContentBlock::Text(t) => ("thought", t.text.clone()),
                _ => ("other", String::new()),
            },
            _ => ("other", String::new()),
        }
    }

    fn chunk(s: &str) -> ContentChunk {
        ContentChunk::new(ContentBlock::Text(TextContent::new(s)))
    }

    #[test]
    fn neighbouring_chunks_of_one_kind_merge() {
        let merged = merge_chunks(vec![
            SessionUpdate::AgentThoughtChunk(chunk("th")),
            SessionUpdate::AgentThoughtChunk(chunk("ink")),
            SessionUpdate::AgentMessageChunk(chunk("Hel")),
            SessionUpdate::AgentMessageChunk(chunk("lo")),
            SessionUpdate::AgentThoughtChunk(chunk("more")),
        ]);
        let got: Vec<_> = merged.iter().map(text).collect();
        assert_eq!(
            got,
            vec![
                ("thought", "think".to_string()),
                ("message", "Hello".to_string()),
                ("thought", "more".to_string())
            ]
        );
    }
}
