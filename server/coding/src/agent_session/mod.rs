//! `AgentSession`: the agent as a product — one conversation persisted to a session file, with
//! prompt expansion (skills, templates), auto-retry of transient failures, compaction on the
//! threshold and after a context overflow, model and thinking-level changes recorded, and one
//! event stream for the front ends.
//!
//! The agent's events are consumed by a pump task that persists each finished message
//! (`message_end`) as a session entry — in order, as they happen — and forwards every event to
//! the session's subscribers. After a run the session waits for the pump to catch up before it
//! decides on retries or compaction, so the file and the decisions always agree.

mod bash;
mod controls;
mod events;
mod handle;
mod hooks;
mod pump;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tandem_ai::sync::lock;

use tandem_agent::{tool_definition, Agent, AgentMessage, AgentOptions, AgentTool, StreamFn};
use tandem_ai::registry::ModelRegistry;
use tandem_ai::{
    now_millis, AssistantMessage, ImageContent, Message, Model, StopReason, StreamOptions,
    TextContent, ThinkingLevel, Tool, UserBlock, UserContent, UserMessage,
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

pub use bash::BashResult;
pub use controls::{ContextUsage, ForkPoint, SessionStats, TokenTotals};
pub use events::{AgentSessionEvent, CompactionReason, CompactionSummaryInfo, SessionEvent};
pub use handle::{Delivery, SessionHandle, SessionSnapshot};

/// What became of a prompt before it ran anything (see [`AgentSession::prompt_accepting`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepted {
    /// A run starts for it.
    Started,
    /// An extension command ran, or an extension's `input` handler handled it: nothing runs.
    Handled,
}

/// Hears once what became of a prompt.
pub type OnAccepted = Box<dyn FnOnce(Accepted) + Send>;

use crate::calls::CallRecords;
use crate::compaction::{self, CompactionOptions, CompactionSettings};
use crate::extensions::{InputOutcome, InputSource, RunStart, SessionExtensions};
use crate::resources::{Resources, SystemPrompt};
use crate::retry::{self, RetryPolicy};
use crate::session::system::SystemState;
use crate::session::SessionManager;
use crate::settings::Settings;

/// The session's extensions, shared with its agent hooks.
type Extensions = Arc<Mutex<Option<Arc<dyn SessionExtensions>>>>;

/// Why the session refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The agent is already running (steer or follow up instead).
    #[error("Tandem is already working on a prompt. Steer it or queue a follow-up, or wait for it to finish.")]
    Busy,
    /// A `/skill:` prompt named a skill whose file could not be read.
    #[error("{0}")]
    Expansion(String),
    /// Compaction could not run.
    #[error("{0}")]
    Compaction(String),
    /// The session file could not be written.
    #[error("{0}")]
    Persistence(String),
    /// The work was aborted ([`AgentSession::abort`]) before it finished.
    #[error("{0} was aborted")]
    Aborted(&'static str),
    /// A user's shell command could not run.
    #[error("{0}")]
    Bash(String),
    /// An extension command failed.
    #[error("{0}")]
    Extension(String),
}

/// What an agent session is built from.
pub struct AgentSessionOptions {
    /// Working directory.
    pub cwd: PathBuf,
    /// The model.
    pub model: Model,
    /// Reasoning effort.
    pub thinking_level: ThinkingLevel,
    /// Active tools.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// Tools the session has but does not start with (an extension may turn them on).
    pub inactive_tools: Vec<Arc<dyn AgentTool>>,
    /// The system prompt, by sections (recorded in the session as pi 1.6 records it).
    pub system_prompt: SystemPrompt,
    /// The session (a file, or in memory for `--no-session`).
    pub session: SessionManager,
    /// Merged settings.
    pub settings: Settings,
    /// Skills and templates for prompt expansion.
    pub resources: Option<Arc<Resources>>,
    /// Keys come from here (auth.json, env, models.json) unless given at run time.
    pub registry: Option<Arc<ModelRegistry>>,
    /// A key given on the command line.
    pub runtime_api_key: Option<String>,
    /// The model call.
    pub stream_fn: StreamFn,
    /// Options template for model calls.
    pub stream_options: StreamOptions,
    /// Where the tools record what each call did (the same records as their
    /// [`crate::ToolEnv::calls`]).
    pub calls: Arc<CallRecords>,
    /// The session's extensions, when any are loaded.
    pub extensions: Option<Arc<dyn SessionExtensions>>,
}

struct Shared {
    session: Mutex<SessionManager>,
    subscribers: Mutex<Vec<mpsc::Sender<AgentSessionEvent>>>,
    /// Number of `agent_end` events the pump has processed.
    ends: watch::Sender<u64>,
    persist_error: Mutex<Option<String>>,
    /// Texts of the messages queued through the session, to report their delivery.
    queued: Mutex<Vec<String>>,
    /// Events emitted so far.
    emitted: AtomicU64,
}

impl Shared {
    async fn emit(&self, event: AgentSessionEvent) {
        self.emitted.fetch_add(1, Ordering::AcqRel);
        let subscribers = lock(&self.subscribers).clone();
        for s in &subscribers {
            let _ = s.send(event.clone()).await;
        }
        lock(&self.subscribers).retain(|s| !s.is_closed());
    }
}

/// What [`AgentSession::reconfigure`] replaces: everything a session takes from the project's
/// configuration (when a folder becomes trusted after the session was built).
pub struct Reconfiguration {
    /// Merged settings.
    pub settings: Settings,
    /// Skills and templates.
    pub resources: Option<Arc<Resources>>,
    /// The system prompt.
    pub system_prompt: SystemPrompt,
    /// Active tools.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// Tools it has but does not use (an extension may turn them on).
    pub inactive_tools: Vec<Arc<dyn AgentTool>>,
    /// A different model and thinking level, when the choice changed (recorded in the session).
    pub model: Option<(Model, ThinkingLevel)>,
}

/// The session.
pub struct AgentSession {
    agent: Agent,
    shared: Arc<Shared>,
    settings: Arc<Mutex<Settings>>,
    resources: Mutex<Option<Arc<Resources>>>,
    /// The prompt the next run declares (see [`AgentSession::declare_system`]).
    system_prompt: Mutex<SystemPrompt>,
    stream_fn: StreamFn,
    runtime_api_key: Option<String>,
    registry: Option<Arc<ModelRegistry>>,
    /// Cancels retry waits and compactions of the current prompt.
    run_cancel: Mutex<CancellationToken>,
    calls: Arc<CallRecords>,
    /// A compaction is running.
    compacting: AtomicBool,
    /// A retry waits for its delay.
    retry_waiting: AtomicBool,
    /// Cancels the user's running shell command ([`bash`]).
    bash: Mutex<Option<CancellationToken>>,
    /// User commands that ended during a run, recorded when it settles.
    pending_bash: Mutex<Vec<AgentMessage>>,
    /// The session's extensions (replaced when a folder trusted later brings its own).
    extensions: Extensions,
    /// Every tool the session was given (the active ones are the agent's).
    all_tools: Arc<Mutex<Vec<Arc<dyn AgentTool>>>>,
    /// Messages queued for the next prompt (an extension's, sent while the session was idle).
    next_turn: Arc<Mutex<Vec<AgentMessage>>>,
    /// How a prompt reaches this session when nothing runs (the front door's turn runner),
    /// for an extension's `sendUserMessage` to an idle session.
    idle_prompter: Arc<Mutex<Option<handle::IdlePrompter>>>,
    /// The last prompt was an extension command or handled by an extension: nothing ran.
    handled: AtomicBool,
}

/// What to do after a run.
enum AfterRun {
    Continue,
    Done,
}

#[derive(Default)]
struct RunState {
    retry_attempt: u32,
    overflow_attempted: bool,
}

impl AgentSession {
    /// Builds the session: resumes the history of `options.session` (an empty session gets the
    /// model and thinking level recorded first, as pi does) and starts the event pump. Must be
    /// called inside a tokio runtime.
    pub fn new(options: AgentSessionOptions) -> Result<AgentSession, SessionError> {
        let mut session = options.session;
        let context = session.build_context();
        let is_new = session.entries().is_empty();
        let persist = |r: Result<String, crate::session::SessionError>| {
            r.map(|_| ())
                .map_err(|e| SessionError::Persistence(e.to_string()))
        };
        let recorded_model = context
            .model
            .as_ref()
            .map(|m| (m.provider.clone(), m.model_id.clone()));
        let current = (options.model.provider.clone(), options.model.id.clone());
        if recorded_model.as_ref() != Some(&current) {
            persist(session.append_model_change(&current.0, &current.1))?;
        }
        if is_new || context.thinking_level != options.thinking_level {
            persist(session.append_thinking_level_change(options.thinking_level))?;
        }

        let settings = Arc::new(Mutex::new(options.settings));
        let extensions: Extensions = Arc::new(Mutex::new(options.extensions.clone()));
        let hooks = Arc::new(hooks::SessionHooks::new(
            options.registry.clone(),
            options.runtime_api_key.clone(),
            settings.clone(),
            extensions.clone(),
        ));
        let (steering_mode, follow_up_mode, (idle_timeout, proxy)) = {
            let s = lock(&settings);
            (s.steering_mode(), s.follow_up_mode(), network(&s))
        };
        let mut agent_options = AgentOptions::new(options.model);
        // What the model is sent once the next prompt has declared the prompt and tools.
        let mut system = SystemState::replay(&context.messages);
        let tool_list: Vec<Tool> = options
            .tools
            .iter()
            .map(|t| tool_definition(t.as_ref()))
            .collect();
        if let Some(AgentMessage::Custom(update)) =
            system.update_to(&options.system_prompt, &tool_list, 0)
        {
            system.apply(update.fields());
        }
        agent_options.system_prompt = Some(system.text());
        agent_options.thinking_level = options.thinking_level;
        let all_tools = Arc::new(Mutex::new(
            options
                .tools
                .iter()
                .chain(&options.inactive_tools)
                .cloned()
                .collect::<Vec<_>>(),
        ));
        agent_options.tools = options.tools;
        agent_options.messages = context.messages;
        agent_options.stream_fn = options.stream_fn.clone();
        let mut stream_options = options.stream_options;
        stream_options.idle_timeout = idle_timeout;
        stream_options.proxy = proxy;
        if let Some(hooks) = options.extensions.as_ref().and_then(|e| e.provider_hooks()) {
            stream_options.provider_hooks.0 = Some(hooks);
        }
        stream_options
            .session_id
            .get_or_insert_with(|| session.session_id().to_string());
        agent_options.stream_options = stream_options;
        agent_options.hooks = hooks;
        agent_options.steering_mode = steering_mode;
        agent_options.follow_up_mode = follow_up_mode;
        let agent = Agent::new(agent_options);

        let (ends, _) = watch::channel(0u64);
        let shared = Arc::new(Shared {
            session: Mutex::new(session),
            subscribers: Mutex::new(Vec::new()),
            ends,
            persist_error: Mutex::new(None),
            queued: Mutex::new(Vec::new()),
            emitted: AtomicU64::new(0),
        });
        pump::start(&agent, shared.clone());
        Ok(AgentSession {
            agent,
            shared,
            settings,
            resources: Mutex::new(options.resources),
            system_prompt: Mutex::new(options.system_prompt),
            stream_fn: options.stream_fn,
            runtime_api_key: options.runtime_api_key,
            registry: options.registry,
            run_cancel: Mutex::new(CancellationToken::new()),
            calls: options.calls,
            compacting: AtomicBool::new(false),
            retry_waiting: AtomicBool::new(false),
            bash: Mutex::new(None),
            pending_bash: Mutex::new(Vec::new()),
            extensions,
            all_tools,
            next_turn: Arc::new(Mutex::new(Vec::new())),
            idle_prompter: Arc::new(Mutex::new(None)),
            handled: AtomicBool::new(false),
        })
    }

    /// What the calls of the current run did ([`CallRecords`]): a front door takes a call's
    /// record when it shows the call's end.
    pub fn calls(&self) -> &Arc<CallRecords> {
        &self.calls
    }

    /// Every event from now on, in order.
    pub fn subscribe(&self) -> mpsc::Receiver<AgentSessionEvent> {
        let (tx, rx) = mpsc::channel(1024);
        lock(&self.shared.subscribers).push(tx);
        rx
    }

    /// How many events the session has emitted so far (each reaches every subscriber, in
    /// order): a front door that answers commands beside the event stream waits until its
    /// subscriber has handled this many before it answers, so the answer follows the events
    /// the command caused.
    pub fn emitted_events(&self) -> u64 {
        self.shared.emitted.load(Ordering::Acquire)
    }

    /// The agent (state, queues).
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Runs `f` with the session manager.
    pub fn with_session<R>(&self, f: impl FnOnce(&mut SessionManager) -> R) -> R {
        f(&mut lock(&self.shared.session))
    }

    /// The session file, once written.
    pub fn session_file(&self) -> Option<PathBuf> {
        self.with_session(|s| s.session_file().map(|p| p.to_path_buf()))
    }

    /// The last assistant message of the conversation.
    pub fn last_assistant(&self) -> Option<AssistantMessage> {
        self.agent.with_state(|s| {
            s.messages
                .iter()
                .rev()
                .find_map(|m| m.as_assistant().cloned())
        })
    }

    /// The settings the session runs with (a copy).
    pub fn settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    /// The resources the system prompt and prompt expansion read.
    pub fn resources(&self) -> Option<Arc<Resources>> {
        lock(&self.resources).clone()
    }

    /// Expands `/skill:` and prompt templates in `text`.
    pub fn expand(&self, text: &str) -> Result<String, SessionError> {
        match self.resources() {
            Some(r) => r
                .expand_input(text)
                .map_err(|e| SessionError::Expansion(e.to_string())),
            None => Ok(text.to_string()),
        }
    }

    /// Replaces what the session took from the project's configuration: settings, resources,
    /// system prompt, tools and (when given) the model. Refused while a run is active; takes
    /// effect at the next model call. The conversation is kept.
    pub fn reconfigure(&self, new: Reconfiguration) -> Result<(), SessionError> {
        if self.agent.is_running() {
            return Err(SessionError::Busy);
        }
        if let Some((model, level)) = new.model {
            self.set_model(model)?;
            self.set_thinking_level(level)?;
        }
        self.agent.set_steering_mode(new.settings.steering_mode());
        self.agent.set_follow_up_mode(new.settings.follow_up_mode());
        let (idle, proxy) = network(&new.settings);
        self.agent.update_stream_options(|o| {
            o.idle_timeout = idle;
            o.proxy = proxy;
        });
        *lock(&self.all_tools) = new
            .tools
            .iter()
            .chain(&new.inactive_tools)
            .cloned()
            .collect();
        self.agent.update_state(|s| s.tools = new.tools);
        *lock(&self.system_prompt) = new.system_prompt;
        *lock(&self.settings) = new.settings;
        *lock(&self.resources) = new.resources;
        Ok(())
    }

    /// Runs a prompt to the end: the agent's run, then retries and compaction as needed, then
    /// `agent_settled`. Refused while a run is active (steer or follow up instead).
    pub async fn prompt(&self, text: &str, images: Vec<ImageContent>) -> Result<(), SessionError> {
        self.prompt_in_context(text, images, None).await
    }

    /// [`AgentSession::prompt`] with `context` a front door adds (an editor's file and
    /// selection): it goes to the model as a hidden message just before the prompt
    /// ([`crate::messages::prompt_context_message`]), so the user's message, its events and
    /// the session listings hold the user's own text.
    pub async fn prompt_in_context(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        context: Option<&str>,
    ) -> Result<(), SessionError> {
        self.prompt_from(text, images, context, InputSource::Rpc)
            .await
    }

    /// [`AgentSession::prompt_in_context`] for a prompt from `source`: with extensions, an
    /// extension command runs instead of a prompt, and the `input` and `before_agent_start`
    /// handlers see, change or handle it first (pi's order: commands, `input`, expansion,
    /// `before_agent_start`).
    pub async fn prompt_from(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        context: Option<&str>,
        source: InputSource,
    ) -> Result<(), SessionError> {
        self.prompt_accepting(text, images, context, source, None)
            .await
    }

    /// [`AgentSession::prompt_from`] that tells `accepted` what became of the prompt as soon
    /// as that is known, before anything of a run is emitted (pi's prompt preflight, which its
    /// RPC mode answers with): [`Accepted::Handled`] when an extension command ran or an
    /// `input` handler handled it, [`Accepted::Started`] when a run starts. A prompt refused
    /// before either (an expansion that failed) never calls it; the error is returned.
    pub async fn prompt_accepting(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        context: Option<&str>,
        source: InputSource,
        accepted: Option<OnAccepted>,
    ) -> Result<(), SessionError> {
        self.handled.store(false, Ordering::Release);
        let mut accepted = accepted;
        let mut tell = |what: Accepted| {
            if let Some(accepted) = accepted.take() {
                accepted(what);
            }
        };
        let extensions = self.extensions();
        let (text, images) = match &extensions {
            Some(extensions) => {
                if let Some(ran) = extensions.command(text).await {
                    tell(Accepted::Handled);
                    self.handled.store(true, Ordering::Release);
                    self.shared
                        .emit(AgentSessionEvent::Session(SessionEvent::PromptHandled))
                        .await;
                    return ran.map_err(SessionError::Extension);
                }
                match extensions
                    .input(text.to_string(), images, source, None)
                    .await
                {
                    InputOutcome::Continue { text, images } => (text, images),
                    InputOutcome::Handled => {
                        tell(Accepted::Handled);
                        self.handled.store(true, Ordering::Release);
                        self.shared
                            .emit(AgentSessionEvent::Session(SessionEvent::PromptHandled))
                            .await;
                        return Ok(());
                    }
                }
            }
            None => (text.to_string(), images),
        };
        let expanded = self.expand(&text)?;
        let running = self.agent.is_running();
        // Call ids may repeat across runs; the last run's records were shown by now.
        if !running {
            self.calls.clear();
        }
        let mut messages = with_context(context, user_message(&expanded, images.clone()).into());
        if !running {
            messages.splice(0..0, self.declare_system());
        }
        let extension_start = match &extensions {
            Some(extensions) if !running => {
                let system_prompt = self.agent.with_state(|s| s.system_prompt.clone());
                Some(
                    extensions
                        .before_agent_start(RunStart {
                            prompt: &expanded,
                            images: &images,
                            system_prompt: system_prompt.as_deref().unwrap_or_default(),
                        })
                        .await,
                )
            }
            _ => None,
        };
        if !running {
            messages.append(&mut lock(&self.next_turn));
        }
        if let Some(start) = extension_start {
            messages.extend(
                start
                    .messages
                    .into_iter()
                    .map(|m| crate::messages::CodingMessage::Custom(m).into_agent_message()),
            );
            if let Some(forced) = start.system_prompt {
                // For this run only: the next prompt declares the session's prompt again.
                self.agent.update_state(|s| s.system_prompt = Some(forced));
            }
        }
        let cancel = CancellationToken::new();
        *lock(&self.run_cancel) = cancel.clone();
        let seen = *self.shared.ends.borrow();
        let start = self.leaf();
        tell(Accepted::Started);
        self.agent
            .prompt(messages)
            .await
            .map_err(|_| SessionError::Busy)?;
        self.wait_for_pump(seen + 1).await;
        self.finish_run(&cancel, start).await
    }

    /// The session's extensions now.
    pub(crate) fn extensions(&self) -> Option<Arc<dyn SessionExtensions>> {
        lock(&self.extensions).clone()
    }

    /// Replaces the session's extensions (a folder trusted later loads its own; the caller
    /// stops the old ones), their provider hooks included; from the next prompt and model call.
    pub fn set_extensions(&self, extensions: Option<Arc<dyn SessionExtensions>>) {
        let hooks = extensions.as_ref().and_then(|e| e.provider_hooks());
        self.agent
            .update_stream_options(|o| o.provider_hooks.0 = hooks);
        *lock(&self.extensions) = extensions;
    }

    /// Whether the last prompt ran nothing: it was an extension command, or an extension's
    /// `input` handler handled it (no run, no `agent_settled`: `prompt_handled` instead).
    pub fn last_prompt_handled(&self) -> bool {
        self.handled.load(Ordering::Acquire)
    }

    /// Brings the prompt and tools the conversation declares up to date, as pi 1.6 does before
    /// each run: replays the conversation's `system` messages ([`SystemState`]), and when the
    /// session's prompt sections or tools differ returns the `system` message recording the
    /// change (the run then sends, persists and reports it before the user's message). Sets
    /// the agent's system prompt to the replayed prompt either way. Tandem keeps its own tool
    /// set on resume (pi 1.6 also restores which tools were active from the record).
    fn declare_system(&self) -> Option<AgentMessage> {
        let prompt = lock(&self.system_prompt).clone();
        let (mut state, tools) = self.agent.with_state(|s| {
            let tools: Vec<Tool> = s
                .tools
                .iter()
                .map(|t| tool_definition(t.as_ref()))
                .collect();
            (SystemState::replay(&s.messages), tools)
        });
        let update = state.update_to(&prompt, &tools, now_millis().max(0) as u64);
        if let Some(AgentMessage::Custom(message)) = &update {
            state.apply(message.fields());
        }
        let text = state.text();
        let order: Vec<String> = state.tool_names().into_iter().map(str::to_string).collect();
        self.agent.update_state(|s| {
            s.system_prompt = Some(text);
            // The model is offered the tools in the order the replay declares them (a changed
            // tool moves to the end), as pi 1.6 sends them.
            s.tools.sort_by_key(|t| {
                order
                    .iter()
                    .position(|n| n == t.name())
                    .unwrap_or(usize::MAX)
            });
        });
        update
    }

    /// Whether steering or follow-up messages wait after a run that ended normally: they were
    /// queued after the agent's last look at its queues, while the run was ending.
    pub fn has_late_messages(&self) -> bool {
        self.last_assistant()
            .is_some_and(|m| m.stop_reason == StopReason::Stop)
            && !(self.agent.queued_steering().is_empty()
                && self.agent.queued_follow_ups().is_empty())
    }

    /// Runs [late messages](Self::has_late_messages) to the end like a prompt (then
    /// `agent_settled`); `Ok(false)` when there were none or a run is active.
    pub async fn run_late_messages(&self) -> Result<bool, SessionError> {
        if !self.has_late_messages() {
            return Ok(false);
        }
        let cancel = CancellationToken::new();
        *lock(&self.run_cancel) = cancel.clone();
        let seen = *self.shared.ends.borrow();
        let start = self.leaf();
        if self.agent.continue_run().await.is_err() {
            return Ok(false);
        }
        self.wait_for_pump(seen + 1).await;
        self.finish_run(&cancel, start).await.map(|()| true)
    }

    /// The current leaf entry (where the next run's entries start).
    fn leaf(&self) -> Option<String> {
        self.with_session(|s| s.leaf().map(str::to_owned))
    }

    /// Appends the run's checkpoint ([`crate::checkpoint`]): the changes applied since the
    /// run started after entry `start`, named by the run's first prompt.
    fn record_checkpoint(&self, start: Option<&str>) {
        let applied = self.calls.take_applied();
        if applied.is_empty() {
            return;
        }
        let (turn, text) = self.with_session(|s| {
            s.branch_since(start)
                .iter()
                .find_map(|e| {
                    e.message()
                        .and_then(|m| user_text(m).map(|text| (Some(e.id.clone()), text)))
                })
                .unwrap_or_default()
        });
        // The diff runs outside the session's lock: the pump may be writing meanwhile.
        let Some(checkpoint) = crate::checkpoint::checkpoint_of(&applied, turn, &text) else {
            return;
        };
        let result = serde_json::to_value(&checkpoint)
            .map_err(crate::session::SessionError::from)
            .and_then(|data| {
                self.with_session(|s| {
                    s.append_custom(crate::checkpoint::CHECKPOINT_TYPE, Some(data))
                })
            });
        if let Err(e) = result {
            tracing::error!(error = %e, "could not record the turn's checkpoint");
            lock(&self.shared.persist_error).get_or_insert(format!(
                "The turn's changes could not be recorded for undo: {e}"
            ));
        }
    }

    /// Undoes the newest turn that changed files and is not undone yet, or with `back_to`
    /// every turn after that one ([`crate::checkpoint::undo`]), proposing the reverse to
    /// `workspace` as one edit. Refused while a run is active.
    pub async fn undo(
        &self,
        workspace: &dyn crate::workspace::Workspace,
        back_to: Option<&str>,
    ) -> Result<crate::checkpoint::UndoReport, crate::checkpoint::UndoError> {
        if self.agent.is_running() {
            return Err(crate::checkpoint::UndoError::Busy);
        }
        let report = crate::checkpoint::undo(workspace, &self.shared.session, back_to).await?;
        // The undo's note to the model (the session's last entry) joins the agent's context,
        // as it would when the session is resumed.
        let note = self.with_session(|s| match s.leaf_entry().map(|e| (&e.kind, &e.timestamp)) {
            Some((
                crate::session::EntryKind::CustomMessage {
                    custom_type,
                    content,
                    details,
                    display,
                },
                timestamp,
            )) if custom_type == crate::checkpoint::UNDO_NOTE_TYPE => {
                Some(crate::messages::custom_message(
                    custom_type,
                    content.clone(),
                    *display,
                    details.clone(),
                    timestamp,
                ))
            }
            _ => None,
        });
        if let Some(note) = note {
            self.agent.update_state(|s| s.messages.push(note));
        }
        Ok(report)
    }

    /// After the agent's run: retries, compaction and late messages, then the run's checkpoint
    /// and `agent_settled`.
    async fn finish_run(
        &self,
        cancel: &CancellationToken,
        start: Option<String>,
    ) -> Result<(), SessionError> {
        let mut state = RunState::default();
        loop {
            match self.after_run(&mut state, cancel).await {
                AfterRun::Done if cancel.is_cancelled() || !self.has_late_messages() => break,
                AfterRun::Done | AfterRun::Continue => {
                    let seen = *self.shared.ends.borrow();
                    if self.agent.continue_run().await.is_err() {
                        break;
                    }
                    self.wait_for_pump(seen + 1).await;
                }
            }
        }
        self.record_checkpoint(start.as_deref());
        if let Err(e) = self.flush_pending_bash() {
            lock(&self.shared.persist_error).get_or_insert(e.to_string());
        }
        self.shared
            .emit(AgentSessionEvent::Session(SessionEvent::AgentSettled {
                aborted: cancel.is_cancelled(),
            }))
            .await;
        match lock(&self.shared.persist_error).take() {
            Some(e) => Err(SessionError::Persistence(e)),
            None => Ok(()),
        }
    }

    /// Queues a steering message (injected before the agent's next model call).
    pub async fn steer(&self, text: &str) -> Result<(), SessionError> {
        self.queue(text, None, Queue::Steering).await
    }

    /// Queues a follow-up (handled when the current work is done).
    pub async fn follow_up(&self, text: &str) -> Result<(), SessionError> {
        self.queue(text, None, Queue::FollowUp).await
    }

    /// Queues `text` as steering or a follow-up, with the hidden `context` a front door adds
    /// (delivered together with it; see [`AgentSession::prompt_in_context`]).
    pub async fn queue(
        &self,
        text: &str,
        context: Option<&str>,
        queue: Queue,
    ) -> Result<(), SessionError> {
        self.queue_with_images(text, Vec::new(), context, queue)
            .await
    }

    /// [`AgentSession::queue`] with images attached to the message.
    pub async fn queue_with_images(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        context: Option<&str>,
        queue: Queue,
    ) -> Result<(), SessionError> {
        let expanded = self.expand(text)?;
        lock(&self.shared.queued).push(expanded.clone());
        let messages = with_context(context, user_message(&expanded, images).into());
        match queue {
            Queue::Steering => self.agent.steer_all(messages),
            Queue::FollowUp => self.agent.follow_up_all(messages),
        }
        self.emit_queue_update().await;
        Ok(())
    }

    async fn emit_queue_update(&self) {
        self.shared
            .emit(AgentSessionEvent::Session(pump::queue_update(&self.agent)))
            .await;
    }

    /// Stops the current run, retry wait or compaction.
    pub fn abort(&self) {
        lock(&self.run_cancel).cancel();
        self.agent.abort();
    }

    /// Switches the model (recorded in the session; takes effect at the next call).
    pub fn set_model(&self, model: Model) -> Result<(), SessionError> {
        self.with_session(|s| s.append_model_change(&model.provider, &model.id))
            .map_err(|e| SessionError::Persistence(e.to_string()))?;
        self.agent.update_state(|s| s.model = model);
        Ok(())
    }

    /// Switches the thinking level (recorded in the session).
    pub fn set_thinking_level(&self, level: ThinkingLevel) -> Result<(), SessionError> {
        self.with_session(|s| s.append_thinking_level_change(level))
            .map_err(|e| SessionError::Persistence(e.to_string()))?;
        self.agent.update_state(|s| s.thinking_level = level);
        Ok(())
    }

    /// Compacts now (`/compact`), optionally focusing the summary on `instructions`.
    pub async fn compact(
        &self,
        instructions: Option<String>,
    ) -> Result<CompactionSummaryInfo, SessionError> {
        if self.agent.is_running() {
            return Err(SessionError::Busy);
        }
        let cancel = CancellationToken::new();
        *lock(&self.run_cancel) = cancel.clone();
        let compacted = self
            .run_compaction(CompactionReason::Manual, instructions, &cancel, false)
            .await;
        match compacted {
            Err(_) if cancel.is_cancelled() => Err(SessionError::Aborted("the compaction")),
            other => other,
        }
    }

    async fn wait_for_pump(&self, ends: u64) {
        let mut rx = self.shared.ends.subscribe();
        let _ = rx.wait_for(|n| *n >= ends).await;
    }

    fn policy(&self) -> RetryPolicy {
        let r = lock(&self.settings).retry();
        RetryPolicy {
            enabled: r.enabled,
            max_retries: u32::try_from(r.max_retries).unwrap_or(u32::MAX),
            base_delay_ms: r.base_delay_ms,
            max_delay_ms: r.max_delay_ms,
        }
    }

    /// Compaction's settings for the session's current model (`compaction.modelOverrides`).
    fn compaction_settings(&self) -> CompactionSettings {
        let (provider, id) = self
            .agent
            .with_state(|s| (s.model.provider.clone(), s.model.id.clone()));
        let c = lock(&self.settings).compaction_for(&provider, &id);
        CompactionSettings {
            enabled: c.enabled,
            reserve_tokens: c.reserve_tokens,
            keep_recent_tokens: c.keep_recent_tokens,
        }
    }

    /// Drops a failed assistant message from the agent's context (it stays in the session file).
    fn drop_failed_turn(&self) {
        let failed = self.agent.update_state(|s| {
            if s.messages
                .last()
                .and_then(AgentMessage::as_assistant)
                .is_some_and(|a| a.stop_reason == StopReason::Error)
            {
                s.messages.pop()
            } else {
                None
            }
        });
        let Some(failed) = failed else {
            return;
        };
        // As pi 1.6 does, the failed answer stays in the file and a `context_edit` leaves it
        // out of what the model is sent when the session is resumed.
        let omitted = self.with_session(|m| {
            let id = m
                .active_branch()
                .iter()
                .rev()
                .find(|e| e.message() == Some(&failed))
                .map(|e| e.id.clone())?;
            Some(m.append_context_edit(&id, None))
        });
        if let Some(Err(e)) = omitted {
            tracing::error!(error = %e, "could not record the failed answer's omission");
            lock(&self.shared.persist_error).get_or_insert(e.to_string());
        }
    }

    async fn after_run(&self, state: &mut RunState, cancel: &CancellationToken) -> AfterRun {
        let Some(last) = self.last_assistant() else {
            return AfterRun::Done;
        };
        let window = self.agent.with_state(|s| s.model.context_window);
        if last.stop_reason != StopReason::Error && state.retry_attempt > 0 {
            self.shared
                .emit(AgentSessionEvent::Session(SessionEvent::AutoRetryEnd {
                    success: true,
                    attempt: state.retry_attempt,
                    final_error: None,
                }))
                .await;
            state.retry_attempt = 0;
        }
        if last.stop_reason == StopReason::Error {
            let policy = self.policy();
            if policy.enabled && retry::is_retryable(&last, window) {
                return self.retry(state, &policy, &last, cancel).await;
            }
            if tandem_ai::overflow::is_context_overflow(&last, Some(window)) {
                if state.overflow_attempted {
                    // One compact-and-retry per prompt; say why the run stops here.
                    self.shared
                        .emit(AgentSessionEvent::Session(SessionEvent::CompactionEnd {
                            reason: CompactionReason::Overflow,
                            result: None,
                            aborted: false,
                            will_retry: false,
                            error_message: Some(
                                "Context overflow recovery failed after one compact-and-retry attempt: the conversation is still too long for the model. Compact with instructions to keep less, or switch to a model with a larger context window.".into(),
                            ),
                        }))
                        .await;
                    return AfterRun::Done;
                }
                state.overflow_attempted = true;
                // The failed turn leaves the context only when the compaction succeeds (the
                // rebuilt context drops it); otherwise it stays as the run's outcome.
                return match self
                    .run_compaction(CompactionReason::Overflow, None, cancel, true)
                    .await
                {
                    Ok(_) => AfterRun::Continue,
                    Err(_) => AfterRun::Done,
                };
            }
            return AfterRun::Done;
        }
        if last.stop_reason == StopReason::Stop || last.stop_reason == StopReason::ToolUse {
            let settings = self.compaction_settings();
            let tokens = self
                .agent
                .with_state(|s| compaction::estimate_context_tokens(&s.messages).tokens);
            if compaction::should_compact(tokens, window, &settings) {
                let _ = self
                    .run_compaction(CompactionReason::Threshold, None, cancel, false)
                    .await;
            }
        }
        AfterRun::Done
    }

    async fn retry(
        &self,
        state: &mut RunState,
        policy: &RetryPolicy,
        last: &AssistantMessage,
        cancel: &CancellationToken,
    ) -> AfterRun {
        let error = last.error_message.clone().unwrap_or_default();
        state.retry_attempt += 1;
        if state.retry_attempt > policy.max_retries {
            self.shared
                .emit(AgentSessionEvent::Session(SessionEvent::AutoRetryEnd {
                    success: false,
                    attempt: state.retry_attempt - 1,
                    final_error: Some(error),
                }))
                .await;
            state.retry_attempt = 0;
            return AfterRun::Done;
        }
        let delay = retry::delay_for(state.retry_attempt, policy, &error);
        self.shared
            .emit(AgentSessionEvent::Session(SessionEvent::AutoRetryStart {
                attempt: state.retry_attempt,
                max_attempts: policy.max_retries,
                delay_ms: delay.as_millis() as u64,
                error_message: error,
            }))
            .await;
        self.drop_failed_turn();
        self.retry_waiting.store(true, Ordering::Release);
        let waited = tokio::select! {
            _ = tokio::time::sleep(delay) => true,
            _ = cancel.cancelled() => false,
        };
        self.retry_waiting.store(false, Ordering::Release);
        match waited {
            true => AfterRun::Continue,
            false => {
                self.shared
                    .emit(AgentSessionEvent::Session(SessionEvent::AutoRetryEnd {
                        success: false,
                        attempt: state.retry_attempt,
                        final_error: Some("Retry cancelled".into()),
                    }))
                    .await;
                state.retry_attempt = 0;
                AfterRun::Done
            }
        }
    }

    async fn run_compaction(
        &self,
        reason: CompactionReason,
        instructions: Option<String>,
        cancel: &CancellationToken,
        will_retry: bool,
    ) -> Result<CompactionSummaryInfo, SessionError> {
        self.shared
            .emit(AgentSessionEvent::Session(SessionEvent::CompactionStart {
                reason,
            }))
            .await;
        self.compacting.store(true, Ordering::Release);
        let outcome = self.compact_inner(instructions, cancel).await;
        self.compacting.store(false, Ordering::Release);
        let end = match &outcome {
            Ok(info) => SessionEvent::CompactionEnd {
                reason,
                result: Some(Box::new(info.clone())),
                aborted: false,
                will_retry,
                error_message: None,
            },
            Err(e) => SessionEvent::CompactionEnd {
                reason,
                result: None,
                aborted: cancel.is_cancelled(),
                will_retry: false,
                error_message: Some(e.to_string()),
            },
        };
        self.shared.emit(AgentSessionEvent::Session(end)).await;
        outcome
    }

    /// The session's model and how to call it for a summary (compaction's or a branch's).
    pub(super) fn summary_options(
        &self,
        instructions: Option<String>,
    ) -> Result<(Model, CompactionOptions), SessionError> {
        let (model, thinking) = self
            .agent
            .with_state(|s| (s.model.clone(), s.thinking_level));
        let api_key = match &self.runtime_api_key {
            Some(k) => Some(k.clone()),
            None => match &self.registry {
                Some(r) => r
                    .resolve_api_key(&model.provider, None)
                    .map_err(|e| SessionError::Compaction(e.to_string()))?,
                None => None,
            },
        };
        let session_id = self.with_session(|s| s.session_id().to_string());
        let (idle_timeout, proxy) = network(&lock(&self.settings));
        let options = CompactionOptions {
            api_key,
            session_id: Some(session_id),
            custom_instructions: instructions,
            thinking_level: Some(thinking),
            idle_timeout: Some(idle_timeout),
            proxy,
            ..CompactionOptions::default()
        };
        Ok((model, options))
    }

    async fn compact_inner(
        &self,
        instructions: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<CompactionSummaryInfo, SessionError> {
        let settings = self.compaction_settings();
        // The context part is all a compaction looks at (from the previous compaction's kept
        // entries on).
        let path: Vec<_> = self.with_session(|s| s.active_branch().to_vec());
        let preparation = compaction::prepare_compaction(&path, &settings).ok_or_else(|| {
            SessionError::Compaction(
                "Nothing to compact: the conversation is already short enough".into(),
            )
        })?;
        let (model, options) = self.summary_options(instructions)?;
        let result = compaction::compact(&preparation, &model, &self.stream_fn, &options, cancel)
            .await
            .map_err(|e| SessionError::Compaction(e.to_string()))?;
        let details = result.details.to_value();
        let usage = result.usage;
        let (summary, first_kept, tokens_before) = (
            result.summary.clone(),
            result.first_kept_entry_id.clone(),
            result.tokens_before,
        );
        let messages = self.with_session(|s| {
            s.append_compaction(
                result.summary,
                result.first_kept_entry_id,
                result.tokens_before,
                Some(details.clone()),
                serde_json::to_value(usage).ok(),
                None,
            )
            .map(|_| s.build_context().messages)
            .map_err(|e| SessionError::Persistence(e.to_string()))
        })?;
        let info = CompactionSummaryInfo {
            summary,
            first_kept_entry_id: first_kept,
            tokens_before,
            estimated_tokens_after: compaction::estimate_context_tokens(&messages).tokens,
            usage,
            details,
        };
        self.agent.update_state(|s| s.messages = messages);
        self.drop_failed_turn();
        Ok(info)
    }
}

/// Which queue a message waits in while the session runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// Delivered before the agent's next model call.
    Steering,
    /// Delivered when the agent would otherwise stop.
    FollowUp,
}

/// `message`, preceded by the hidden context message when there is context.
fn with_context(context: Option<&str>, message: AgentMessage) -> Vec<AgentMessage> {
    let mut messages: Vec<AgentMessage> = context
        .filter(|c| !c.is_empty())
        .map(crate::messages::prompt_context_message)
        .into_iter()
        .collect();
    messages.push(message);
    messages
}

fn user_message(text: &str, images: Vec<ImageContent>) -> UserMessage {
    let mut blocks = vec![UserBlock::Text(TextContent {
        text: text.to_string(),
        text_signature: None,
    })];
    blocks.extend(images.into_iter().map(UserBlock::Image));
    UserMessage {
        content: UserContent::Blocks(blocks),
        timestamp: now_millis(),
    }
}

/// The text of a user message (for queue displays).
pub(crate) fn user_text(message: &AgentMessage) -> Option<String> {
    match message {
        AgentMessage::Llm(Message::User(u)) => Some(u.content.text()),
        _ => None,
    }
}
/// What the settings say of a model call's network: the longest silence it tolerates
/// (`Duration::MAX` when they turn the timeout off) and the proxy (`httpProxy`).
fn network(settings: &Settings) -> (Duration, Option<String>) {
    let idle = settings.provider_idle_timeout().unwrap_or(Duration::MAX);
    (idle, settings.http_proxy.clone())
}
