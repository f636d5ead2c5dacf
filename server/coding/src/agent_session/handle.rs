//! A handle on a session for what runs beside it — its extensions ask from their own tasks to
//! name the session, record entries, queue messages, change the active tools, or read its state.
//! The link is weak: the session lives as long as its owner keeps it, never because of a handle.

use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use tandem_agent::{AgentMessage, AgentTool, WeakAgent};
use tandem_ai::sync::lock;
use tandem_ai::{ImageContent, Model, ThinkingLevel};

use super::{AgentSession, SessionEvent, Shared};
use crate::messages::{CodingMessage, ExtensionMessage};
use crate::session::SessionEntry;

/// When a queued message reaches the model (pi's `deliverAs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// After the current turn's tool calls, before the next model call.
    Steer,
    /// When the run would otherwise end.
    FollowUp,
    /// With the next prompt.
    NextTurn,
}

/// What the session is now, for a mirror of it.
#[derive(Debug, Clone)]
pub struct SessionSnapshot {
    /// The model.
    pub model: Model,
    /// The thinking level.
    pub thinking_level: ThinkingLevel,
    /// Names of the tools the model is given.
    pub active_tools: Vec<String>,
    /// Every tool the session has: name, description, parameters.
    pub all_tools: Vec<(String, String, Value)>,
    /// The session id.
    pub session_id: String,
    /// The session file, once written.
    pub session_file: Option<String>,
    /// The display name.
    pub session_name: Option<String>,
    /// The leaf entry's id.
    pub leaf_id: Option<String>,
    /// The system prompt the model gets.
    pub system_prompt: String,
    /// No run is active.
    pub is_idle: bool,
    /// Steering or follow-up messages wait.
    pub has_pending_messages: bool,
}

/// See the module documentation.
#[derive(Clone)]
pub struct SessionHandle {
    agent: WeakAgent,
    shared: Weak<Shared>,
    all_tools: Arc<Mutex<Vec<Arc<dyn AgentTool>>>>,
    next_turn: Arc<Mutex<Vec<AgentMessage>>>,
    idle_prompter: Arc<Mutex<Option<IdlePrompter>>>,
}

/// Starts a prompt on an idle session the way its front door runs prompts (its events, its
/// answer): text and images.
pub type IdlePrompter = Arc<dyn Fn(String, Vec<ImageContent>) + Send + Sync>;

impl AgentSession {
    /// How prompts sent to the idle session from beside it (an extension's
    /// `sendUserMessage`) are run: the front door's turn runner.
    pub fn set_idle_prompter(&self, prompter: IdlePrompter) {
        *lock(&self.idle_prompter) = Some(prompter);
    }

    /// A handle on this session (see [`SessionHandle`]).
    pub fn handle(&self) -> SessionHandle {
        SessionHandle {
            agent: self.agent.downgrade(),
            shared: Arc::downgrade(&self.shared),
            all_tools: self.all_tools.clone(),
            next_turn: self.next_turn.clone(),
            idle_prompter: self.idle_prompter.clone(),
        }
    }
}

const GONE: &str = "the session has ended";

impl SessionHandle {
    fn shared(&self) -> Result<Arc<Shared>, String> {
        self.shared.upgrade().ok_or_else(|| GONE.to_string())
    }

    /// Records extension data outside the conversation (a `custom` entry); its id.
    pub fn append_custom(&self, custom_type: &str, data: Option<Value>) -> Result<String, String> {
        let shared = self.shared()?;
        let id = lock(&shared.session)
            .append_custom(custom_type, data)
            .map_err(|e| e.to_string())?;
        Ok(id)
    }

    /// Names the session.
    pub async fn set_name(&self, name: &str) -> Result<(), String> {
        let shared = self.shared()?;
        lock(&shared.session)
            .append_session_info(name)
            .map_err(|e| e.to_string())?;
        let name = name.trim();
        shared
            .emit(super::AgentSessionEvent::Session(
                SessionEvent::SessionInfoChanged {
                    name: (!name.is_empty()).then(|| name.to_string()),
                },
            ))
            .await;
        Ok(())
    }

    /// Sets or clears an entry's label.
    pub fn set_label(&self, entry_id: &str, label: Option<String>) -> Result<(), String> {
        let shared = self.shared()?;
        let appended = lock(&shared.session).append_label(entry_id, label);
        appended.map(|_| ()).map_err(|e| e.to_string())
    }

    /// Queues an extension's message: steered or followed up into the running work, or kept
    /// for the next prompt when the session is idle or `delivery` says so.
    pub fn queue_custom(
        &self,
        message: ExtensionMessage,
        delivery: Delivery,
    ) -> Result<(), String> {
        let message = CodingMessage::Custom(message).into_agent_message();
        self.queue(message, delivery)
    }

    /// Adds an extension's message to the conversation now (pi's `sendMessage` to an idle
    /// session without `triggerTurn`): recorded in the session file and in the context the
    /// next model call sees. Refused while a run is active (queue it instead).
    pub fn append_custom_message(&self, message: ExtensionMessage) -> Result<(), String> {
        let agent = self.agent.upgrade().ok_or_else(|| GONE.to_string())?;
        if agent.is_running() {
            return Err("a run is active: the message is queued instead".to_string());
        }
        let shared = self.shared()?;
        let appended = lock(&shared.session).append_custom_message(
            message.custom_type.clone(),
            message.content.clone(),
            message.display,
            message.details.clone(),
        );
        appended.map_err(|e| e.to_string())?;
        let message = CodingMessage::Custom(message).into_agent_message();
        agent.update_state(|s| s.messages.push(message));
        Ok(())
    }

    /// Runs `text` as a prompt when the session is idle and its front door said how
    /// ([`AgentSession::set_idle_prompter`]); false otherwise (the caller queues it).
    pub fn prompt_when_idle(&self, text: String, images: Vec<ImageContent>) -> bool {
        if self.is_running() {
            return false;
        }
        let prompter = lock(&self.idle_prompter).clone();
        match prompter {
            Some(prompter) => {
                prompter(text, images);
                true
            }
            None => false,
        }
    }

    /// Whether a run is active.
    pub fn is_running(&self) -> bool {
        self.agent.upgrade().is_some_and(|a| a.is_running())
    }

    /// Queues a user message the same way.
    pub fn queue(&self, message: AgentMessage, delivery: Delivery) -> Result<(), String> {
        let agent = self.agent.upgrade().ok_or_else(|| GONE.to_string())?;
        match delivery {
            Delivery::Steer if agent.is_running() => agent.steer(message),
            Delivery::FollowUp if agent.is_running() => agent.follow_up(message),
            _ => lock(&self.next_turn).push(message),
        }
        Ok(())
    }

    /// Makes `names` the active tools (unknown names are left out); the names now active.
    pub fn set_active_tools(&self, names: &[String]) -> Result<Vec<String>, String> {
        let agent = self.agent.upgrade().ok_or_else(|| GONE.to_string())?;
        let all = lock(&self.all_tools).clone();
        let chosen: Vec<Arc<dyn AgentTool>> = all
            .into_iter()
            .filter(|t| names.iter().any(|n| n == t.name()))
            .collect();
        let active = chosen.iter().map(|t| t.name().to_string()).collect();
        agent.update_state(|s| s.tools = chosen);
        Ok(active)
    }

    /// Adds tools registered after the session started (an extension's, in `session_start`
    /// or a command): a tool of a name the session has replaces it, a new one is active at
    /// once (pi activates a tool when it is registered). Takes effect at the next model call.
    pub fn add_tools(&self, tools: Vec<Arc<dyn AgentTool>>) -> Result<(), String> {
        let agent = self.agent.upgrade().ok_or_else(|| GONE.to_string())?;
        let mut all = lock(&self.all_tools);
        agent.update_state(|s| {
            for tool in tools {
                let name = tool.name().to_string();
                match all.iter().position(|t| t.name() == name) {
                    Some(at) => all[at] = tool.clone(),
                    None => all.push(tool.clone()),
                }
                match s.tools.iter().position(|t| t.name() == name) {
                    Some(at) => s.tools[at] = tool,
                    None => s.tools.push(tool),
                }
            }
        });
        Ok(())
    }

    /// Makes the tools named `names` active too, when the session has them (built-in tools
    /// it started without); the others stay as they are.
    pub fn activate(&self, names: &[String]) -> Result<(), String> {
        let agent = self.agent.upgrade().ok_or_else(|| GONE.to_string())?;
        let all = lock(&self.all_tools).clone();
        agent.update_state(|s| {
            // In the order they were named (pi adds a tool to the active list when registered).
            for name in names {
                let Some(tool) = all.iter().find(|t| t.name() == name) else {
                    continue;
                };
                if !s.tools.iter().any(|t| t.name() == name) {
                    s.tools.push(tool.clone());
                }
            }
        });
        Ok(())
    }

    /// Stops the running work.
    pub fn abort(&self) {
        if let Some(agent) = self.agent.upgrade() {
            agent.abort();
        }
    }

    /// Waits until no run is active.
    pub async fn wait_for_idle(&self) {
        if let Some(agent) = self.agent.upgrade() {
            agent.wait_for_idle().await;
        }
    }

    /// The session now; `None` once it ended.
    pub fn snapshot(&self) -> Option<SessionSnapshot> {
        let agent = self.agent.upgrade()?;
        let shared = self.shared.upgrade()?;
        let all_tools = lock(&self.all_tools)
            .iter()
            .map(|t| {
                (
                    t.name().to_string(),
                    t.description().to_string(),
                    t.parameters().clone(),
                )
            })
            .collect();
        let (model, thinking_level, active_tools, system_prompt) = agent.with_state(|s| {
            (
                s.model.clone(),
                s.thinking_level,
                s.tools.iter().map(|t| t.name().to_string()).collect(),
                s.system_prompt.clone().unwrap_or_default(),
            )
        });
        let has_pending_messages =
            !(agent.queued_steering().is_empty() && agent.queued_follow_ups().is_empty());
        let session = lock(&shared.session);
        Some(SessionSnapshot {
            model,
            thinking_level,
            active_tools,
            all_tools,
            session_id: session.session_id().to_string(),
            session_file: session
                .session_file()
                .filter(|_| session.is_written())
                .map(|p| p.display().to_string()),
            session_name: session.session_name().map(str::to_string),
            leaf_id: session.leaf().map(str::to_string),
            system_prompt,
            is_idle: !agent.is_running(),
            has_pending_messages,
        })
    }

    /// The session's header and the entries of its current branch, root first.
    pub fn branch(&self) -> Option<(Value, Vec<SessionEntry>)> {
        let shared = self.shared.upgrade()?;
        let session = lock(&shared.session);
        let header = serde_json::to_value(session.header()).unwrap_or(Value::Null);
        let entries = match session.leaf() {
            Some(leaf) => session
                .path_to(leaf)
                .into_iter()
                .map(std::borrow::Cow::into_owned)
                .collect(),
            None => Vec::new(),
        };
        Some((header, entries))
    }

    /// How many entries the session has (all branches).
    pub fn entry_count(&self) -> usize {
        match self.shared.upgrade() {
            Some(shared) => lock(&shared.session).entry_count(),
            None => 0,
        }
    }

    /// The entries from number `first` on, in file order.
    pub fn entries_from(&self, first: usize) -> Vec<SessionEntry> {
        match self.shared.upgrade() {
            Some(shared) => lock(&shared.session).entries_from(first),
            None => Vec::new(),
        }
    }
}
