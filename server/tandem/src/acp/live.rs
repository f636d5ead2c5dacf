//! One live ACP session: the host's [`Live`] session, its workspace, and this front door's
//! translator and transport for the host's event pump.
//!
//! Updates and the prompt's answer must reach the client in order: every update of a turn before
//! the `session/prompt` response. The host's turn runner answers only once the pump has sent the
//! end of the turn's run. Streamed deltas are batched by the pump; neighbouring message or
//! thought chunks merge, so a fast stream costs a few dozen larger notifications a second, not
//! one per provider chunk, and a slow one is not delayed.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, ContentChunk,
    SessionConfigOption, SessionNotification, SessionUpdate, UnstructuredCommandInput,
};
use tandem_ai::registry::ModelRegistry;
use tandem_ai::sync::lock;
use tandem_coding::agent_session::{AgentSession, AgentSessionEvent};

use super::modes::{config_options, Mode};
use super::session_events::{SessionEvents, Shown};
use super::updates::{Meter, Translator};
use super::workspace::{AcpWorkspace, ClientConnection};
use crate::extensions::Extensions;
use crate::host::pump::{Batching, Translate, Transport};
use crate::host::turns::Live;
use crate::langserver::LanguageServers;
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
    /// The host's live session (turns, events).
    pub live: Arc<Live>,
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
    /// Tandem's own language servers, when the session uses them (shut down with it; started
    /// when its folder becomes trusted).
    pub languages: Mutex<Option<Arc<LanguageServers>>>,
    /// What the first turn must do before it runs: ask about the folder's trust, show
    /// configuration problems.
    pub first_turn: Mutex<FirstTurn>,
    /// The session's extensions (stopped with it).
    pub extensions: Mutex<Option<Extensions>>,
    /// The running turn was cancelled.
    pub cancelled: AtomicBool,
    pub(super) cx: ClientConnection,
}

impl AcpSession {
    /// Wraps `session`, known to the client as `id`, and starts forwarding its events.
    pub fn start(
        id: String,
        session: AgentSession,
        workspace: Arc<AcpWorkspace>,
        cwd: PathBuf,
        registry: Arc<ModelRegistry>,
        mcp: McpTools,
        cx: ClientConnection,
    ) -> Arc<AcpSession> {
        let records = session.calls().clone();
        let meter = meter(&session, registry.clone());
        let live = Live::start(
            session,
            AcpUpdates {
                translator: Translator::new(&cwd, records).with_meter(meter),
                session_events: SessionEvents::new(Shown {
                    compaction: workspace.caps().compaction,
                    notices: workspace.caps().notices,
                }),
                workspace: workspace.clone(),
            },
            AcpTransport {
                id: id.clone(),
                cx: cx.clone(),
                workspace: workspace.clone(),
            },
            Batching::EDITOR,
        );
        Arc::new(AcpSession {
            id,
            session: live.session().clone(),
            live,
            workspace,
            cwd,
            registry,
            mcp: Mutex::new(mcp),
            languages: Mutex::new(None),
            first_turn: Mutex::new(FirstTurn::default()),
            extensions: Mutex::new(None),
            cancelled: AtomicBool::new(false),
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
        config_options(
            self.workspace.mode(),
            &self.registry,
            &model,
            thinking,
            self.session.auto_compaction_enabled(),
            self.workspace.caps().boolean_options,
        )
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.workspace.mode()
    }

    /// `/undo`, then extension commands, prompt templates and skills, as `/name` commands.
    pub fn available_commands(&self) -> AvailableCommandsUpdate {
        let mut commands = vec![AvailableCommand::new(
            "undo",
            "Undo the file changes of the last turn (hunks edited since are left and listed)",
        )
        .input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new(
                "optional: a turn's entry id; every later turn is undone",
            ),
        ))];
        let extensions = lock(&self.extensions).clone();
        for (name, description) in extensions.map(|e| e.commands()).unwrap_or_default() {
            commands.push(AvailableCommand::new(name, description).input(
                AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                    "arguments for the command",
                )),
            ));
        }
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
            let skill_commands = self.session.settings().skill_commands_enabled();
            for s in resources.skills.iter().filter(|_| skill_commands) {
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
        if self.live.is_busy() {
            self.cancelled.store(true, Ordering::Release);
        }
        // Abort first: a question the cancel ends must not let the run go on to the model.
        self.session.abort();
        self.workspace.cancel_turn();
    }
}

/// The session's usage so far (a loaded file's totals), and where an answer's window comes
/// from: its model in the registry, else the session's model.
fn meter(session: &AgentSession, registry: Arc<ModelRegistry>) -> Meter {
    let stats = session.stats();
    let size = session.agent().with_state(|s| s.model.context_window);
    // Weak: the pump keeps the meter, and a strong agent here would keep the session (and its
    // file's lock) alive after session/close.
    let agent = session.agent().downgrade();
    Meter {
        cost: stats.cost,
        used: stats.context_usage.map_or(0, |c| c.tokens),
        size,
        window_of: Box::new(move |message| {
            registry
                .find(&message.provider, &message.model)
                .map(|m| m.context_window)
                .or_else(|| {
                    agent
                        .upgrade()
                        .map(|a| a.with_state(|s| s.model.context_window))
                })
                .unwrap_or(size)
        }),
    }
}

fn send(cx: &ClientConnection, id: &str, update: SessionUpdate) {
    if let Err(e) = cx.send_notification(SessionNotification::new(id.to_string(), update)) {
        tracing::warn!("session {id}: could not send an update: {}", e.message);
    }
}

/// This front door's translator: `session/update`s, with what the workspace knows of each call
/// (its diff, its terminal).
struct AcpUpdates {
    translator: Translator,
    /// Compactions and retries, for a client that shows them.
    session_events: SessionEvents,
    workspace: Arc<AcpWorkspace>,
}

impl Translate for AcpUpdates {
    type Out = SessionUpdate;

    fn translate(&mut self, event: &AgentSessionEvent) -> Vec<SessionUpdate> {
        let mut out = match event {
            AgentSessionEvent::Session(e) => self.session_events.translate(e),
            _ => Vec::new(),
        };
        // The translator's own: everything of the agent, a compaction's usage.
        out.extend(self.translator.translate(event, self.workspace.as_ref()));
        out
    }

    fn delta_len(update: &SessionUpdate) -> Option<usize> {
        match update {
            SessionUpdate::AgentMessageChunk(c) | SessionUpdate::AgentThoughtChunk(c) => {
                match &c.content {
                    ContentBlock::Text(t) => Some(t.text.len()),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn merge(held: &mut SessionUpdate, next: SessionUpdate) -> Option<SessionUpdate> {
        let merged = match (&mut *held, &next) {
            (SessionUpdate::AgentMessageChunk(a), SessionUpdate::AgentMessageChunk(b))
            | (SessionUpdate::AgentThoughtChunk(a), SessionUpdate::AgentThoughtChunk(b)) => {
                append(a, b)
            }
            _ => false,
        };
        (!merged).then_some(next)
    }
}

/// `session/notification`s to the client; a tool call announced is marked for the workspace
/// (whose permission requests name it).
struct AcpTransport {
    id: String,
    cx: ClientConnection,
    workspace: Arc<AcpWorkspace>,
}

impl Transport<SessionUpdate> for AcpTransport {
    async fn send(&mut self, update: SessionUpdate) {
        let call = match &update {
            SessionUpdate::ToolCall(call) => Some(call.tool_call_id.0.to_string()),
            _ => None,
        };
        send(&self.cx, &self.id, update);
        if let Some(call) = call {
            self.workspace.mark_announced(&call);
        }
    }
}

/// Joins `more` to `into` when both are text of one message.
fn append(into: &mut ContentChunk, more: &ContentChunk) -> bool {
    if into.message_id != more.message_id {
        return false;
    }
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

    /// What the pump sends for `updates` held together: neighbours merged where they can be.
    fn merge_chunks(updates: Vec<SessionUpdate>) -> Vec<SessionUpdate> {
        let mut out: Vec<SessionUpdate> = Vec::new();
        for update in updates {
            let leftover = match out.last_mut() {
                Some(held) => AcpUpdates::merge(held, update),
                None => Some(update),
            };
            out.extend(leftover);
        }
        out
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

    #[test]
    fn chunks_of_two_messages_stay_apart() {
        use agent_client_protocol::v1::schema::MessageId;
        let of = |text: &str, id: &'static str| {
            SessionUpdate::AgentMessageChunk(chunk(text).message_id(MessageId::from(id)))
        };
        let merged = merge_chunks(vec![of("a", "m1"), of("b", "m1"), of("c", "m2")]);
        let got: Vec<_> = merged.iter().map(text).collect();
        assert_eq!(
            got,
            vec![("message", "ab".to_string()), ("message", "c".to_string())]
        );
    }
}
