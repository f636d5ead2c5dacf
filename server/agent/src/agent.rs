//! The stateful agent (pi's `Agent`): owns the history and settings, runs one loop at a time,
//! queues steering and follow-up messages, and fans its events out to subscribers.
//!
//! State is reduced from the loop's events before subscribers see them, so a subscriber that
//! reads the state on an event sees it already applied. Each subscriber has its own bounded
//! channel and events are sent to each in turn: order is the same for everyone, and a slow
//! subscriber slows the loop (back-pressure) instead of losing or reordering events. A dropped
//! receiver unsubscribes.

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use tandem_ai::error::FailureKind;
use tandem_ai::sync::lock;
use tandem_ai::{
    now_millis, AssistantBlock, AssistantMessage, ImageContent, Message, Model, PartialMessage,
    StopReason, StreamOptions, TextContent, ThinkingLevel, Usage, UserBlock, UserContent,
    UserMessage,
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::{
    default_stream_fn, AgentContext, AgentHooks, LoopConfig, MessageQueues, NoHooks, StreamFn,
};
use crate::event::{AgentEvent, EventSink};
use crate::message::AgentMessage;
use crate::queue::{PendingQueue, QueueMode};
use crate::run::{run_agent_loop, run_agent_loop_continue};
use crate::tool::{AgentTool, BoxFuture, ExecutionMode};

/// Events buffered per subscriber before the loop waits for it.
const SUBSCRIBER_CAPACITY: usize = 1024;

/// Why a request to the agent was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// `prompt` during a run.
    #[error("Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion.")]
    AlreadyProcessingPrompt,
    /// `continue_run` during a run.
    #[error("Agent is already processing. Wait for completion before continuing.")]
    AlreadyProcessing,
    /// `continue_run` with an empty history.
    #[error("No messages to continue from")]
    NoMessages,
    /// `continue_run` after an assistant message with nothing queued.
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
}

/// How an agent is set up.
#[derive(Clone)]
pub struct AgentOptions {
    /// System prompt.
    pub system_prompt: Option<String>,
    /// Model.
    pub model: Model,
    /// Reasoning effort (default off).
    pub thinking_level: ThinkingLevel,
    /// Tools.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// Initial history (e.g. a resumed session).
    pub messages: Vec<AgentMessage>,
    /// Parallel (default) or sequential tool batches.
    pub tool_execution: ExecutionMode,
    /// Steering drain mode (default one at a time).
    pub steering_mode: QueueMode,
    /// Follow-up drain mode (default one at a time).
    pub follow_up_mode: QueueMode,
    /// Options template for model calls.
    pub stream_options: StreamOptions,
    /// The model call.
    pub stream_fn: StreamFn,
    /// Product hooks.
    pub hooks: Arc<dyn AgentHooks>,
}

impl AgentOptions {
    /// Defaults for `model`: no tools, empty history, production stream function.
    pub fn new(model: Model) -> Self {
        AgentOptions {
            system_prompt: None,
            model,
            thinking_level: ThinkingLevel::Off,
            tools: Vec::new(),
            messages: Vec::new(),
            tool_execution: ExecutionMode::Parallel,
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            stream_options: StreamOptions::default(),
            stream_fn: default_stream_fn(),
            hooks: Arc::new(NoHooks),
        }
    }
}

/// The agent's observable state.
pub struct AgentState {
    /// System prompt.
    pub system_prompt: Option<String>,
    /// Model.
    pub model: Model,
    /// Reasoning effort.
    pub thinking_level: ThinkingLevel,
    /// Tools.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// History.
    pub messages: Vec<AgentMessage>,
    /// True while a run is active.
    pub is_running: bool,
    /// Ids of tool calls started and not yet finished.
    pub pending_tool_calls: BTreeSet<String>,
    /// The error of the last failed turn.
    pub error: Option<String>,
    streaming: Option<PartialMessage>,
}

impl AgentState {
    /// The assistant message being streamed, if any.
    pub fn streaming_message(&self) -> Option<&AssistantMessage> {
        self.streaming.as_ref().map(PartialMessage::message)
    }

    fn reduce(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageStart { message } => {
                self.streaming = message.as_assistant().cloned().map(PartialMessage::new);
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
            } => {
                if let Some(p) = &mut self.streaming {
                    p.apply(assistant_message_event);
                }
            }
            AgentEvent::MessageEnd { message } => {
                self.streaming = None;
                self.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                self.pending_tool_calls.insert(tool_call_id.clone());
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                self.pending_tool_calls.remove(tool_call_id);
            }
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(e) = &message.error_message {
                    self.error = Some(e.clone());
                }
            }
            AgentEvent::AgentEnd { .. } => self.streaming = None,
            AgentEvent::AgentStart
            | AgentEvent::TurnStart
            | AgentEvent::ToolExecutionUpdate { .. } => {}
        }
    }
}

struct Settings {
    tool_execution: ExecutionMode,
    stream_options: StreamOptions,
    stream_fn: StreamFn,
    hooks: Arc<dyn AgentHooks>,
}

struct Queues {
    steering: Mutex<PendingQueue>,
    follow_up: Mutex<PendingQueue>,
    /// The next steering poll returns nothing (continue that already injected steering).
    skip_next_steering: AtomicBool,
}

impl MessageQueues for Queues {
    fn steering(&self) -> Vec<AgentMessage> {
        if self.skip_next_steering.swap(false, Ordering::SeqCst) {
            return Vec::new();
        }
        lock(&self.steering).drain()
    }
    fn follow_ups(&self) -> Vec<AgentMessage> {
        lock(&self.follow_up).drain()
    }
}

struct Inner {
    state: Mutex<AgentState>,
    settings: Mutex<Settings>,
    queues: Arc<Queues>,
    /// Copy-on-write list, so each event clones one `Arc` rather than the list.
    subscribers: Mutex<Arc<Vec<mpsc::Sender<Arc<AgentEvent>>>>>,
    run_token: Mutex<Option<CancellationToken>>,
    running: watch::Sender<bool>,
}

/// The agent. Cheap to clone; clones share one agent.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

/// A reference to an agent that does not keep it alive (for tasks that observe it).
#[derive(Clone)]
pub struct WeakAgent {
    inner: std::sync::Weak<Inner>,
}

impl WeakAgent {
    /// The agent, if it still exists.
    pub fn upgrade(&self) -> Option<Agent> {
        self.inner.upgrade().map(|inner| Agent { inner })
    }
}

struct Sink {
    inner: Arc<Inner>,
}

impl EventSink for Sink {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            lock(&self.inner.state).reduce(&event);
            dispatch(&self.inner, event).await;
        })
    }
}

async fn dispatch(inner: &Inner, event: AgentEvent) {
    let event = Arc::new(event);
    let subscribers = lock(&inner.subscribers).clone();
    let mut closed = false;
    for s in subscribers.iter() {
        if s.send(event.clone()).await.is_err() {
            closed = true;
        }
    }
    if closed {
        let mut list = lock(&inner.subscribers);
        let open: Vec<_> = list.iter().filter(|s| !s.is_closed()).cloned().collect();
        *list = Arc::new(open);
    }
}

/// Marks the agent idle when a run ends, however it ends (including the caller dropping the
/// run's future).
struct RunGuard {
    inner: Arc<Inner>,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if let Some(token) = lock(&self.inner.run_token).take() {
            // A run abandoned mid-way must not leave tools or a model call running.
            token.cancel();
        }
        {
            let mut state = lock(&self.inner.state);
            state.is_running = false;
            state.streaming = None;
            state.pending_tool_calls.clear();
        }
        self.inner.running.send_replace(false);
    }
}

/// What to run: new prompts, or a continuation.
enum RunKind {
    Prompts(Vec<AgentMessage>),
    Continue,
}

impl Agent {
    /// A new idle agent.
    pub fn new(options: AgentOptions) -> Self {
        let (running, _) = watch::channel(false);
        Agent {
            inner: Arc::new(Inner {
                state: Mutex::new(AgentState {
                    system_prompt: options.system_prompt,
                    model: options.model,
                    thinking_level: options.thinking_level,
                    tools: options.tools,
                    messages: options.messages,
                    is_running: false,
                    pending_tool_calls: BTreeSet::new(),
                    error: None,
                    streaming: None,
                }),
                settings: Mutex::new(Settings {
                    tool_execution: options.tool_execution,
                    stream_options: options.stream_options,
                    stream_fn: options.stream_fn,
                    hooks: options.hooks,
                }),
                queues: Arc::new(Queues {
                    steering: Mutex::new(PendingQueue::new(options.steering_mode)),
                    follow_up: Mutex::new(PendingQueue::new(options.follow_up_mode)),
                    skip_next_steering: AtomicBool::new(false),
                }),
                subscribers: Mutex::new(Arc::new(Vec::new())),
                run_token: Mutex::new(None),
                running,
            }),
        }
    }

    /// A reference that does not keep the agent alive.
    pub fn downgrade(&self) -> WeakAgent {
        WeakAgent {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// A channel of every event from now on, in order. Dropping the receiver unsubscribes.
    pub fn subscribe(&self) -> mpsc::Receiver<Arc<AgentEvent>> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_CAPACITY);
        let mut list = lock(&self.inner.subscribers);
        let mut next = Vec::with_capacity(list.len() + 1);
        next.extend(list.iter().cloned());
        next.push(tx);
        *list = Arc::new(next);
        rx
    }

    /// Reads the state.
    pub fn with_state<R>(&self, f: impl FnOnce(&AgentState) -> R) -> R {
        f(&lock(&self.inner.state))
    }

    /// Changes the state (history, model, tools…). Takes effect at the next run.
    pub fn update_state<R>(&self, f: impl FnOnce(&mut AgentState) -> R) -> R {
        f(&mut lock(&self.inner.state))
    }

    /// The history.
    pub fn messages(&self) -> Vec<AgentMessage> {
        self.with_state(|s| s.messages.clone())
    }

    /// True while a run is active.
    pub fn is_running(&self) -> bool {
        self.with_state(|s| s.is_running)
    }

    /// Sets the tool execution mode.
    pub fn set_tool_execution(&self, mode: ExecutionMode) {
        lock(&self.inner.settings).tool_execution = mode;
    }

    /// Sets the options template for model calls.
    pub fn set_stream_options(&self, options: StreamOptions) {
        lock(&self.inner.settings).stream_options = options;
    }

    /// Changes the options template for model calls in place.
    pub fn update_stream_options(&self, f: impl FnOnce(&mut StreamOptions)) {
        f(&mut lock(&self.inner.settings).stream_options);
    }

    /// Sets the steering drain mode.
    pub fn set_steering_mode(&self, mode: QueueMode) {
        lock(&self.inner.queues.steering).set_mode(mode);
    }

    /// Sets the follow-up drain mode.
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        lock(&self.inner.queues.follow_up).set_mode(mode);
    }

    /// Queues a message to inject before the next model call of the current run.
    pub fn steer(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner.queues.steering).push(message.into());
    }

    /// Queues a message to handle once the current run would otherwise end.
    pub fn follow_up(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner.queues.follow_up).push(message.into());
    }

    /// Queues steering messages delivered together (in one-at-a-time mode too).
    pub fn steer_all(&self, messages: Vec<AgentMessage>) {
        lock(&self.inner.queues.steering).push_group(messages);
    }

    /// Queues follow-up messages delivered together (in one-at-a-time mode too).
    pub fn follow_up_all(&self, messages: Vec<AgentMessage>) {
        lock(&self.inner.queues.follow_up).push_group(messages);
    }

    /// Queued steering messages.
    pub fn queued_steering(&self) -> Vec<AgentMessage> {
        lock(&self.inner.queues.steering)
            .messages()
            .cloned()
            .collect()
    }

    /// Queued follow-up messages.
    pub fn queued_follow_ups(&self) -> Vec<AgentMessage> {
        lock(&self.inner.queues.follow_up)
            .messages()
            .cloned()
            .collect()
    }

    /// Empties both queues, returning (steering, follow-ups).
    pub fn clear_queues(&self) -> (Vec<AgentMessage>, Vec<AgentMessage>) {
        (
            lock(&self.inner.queues.steering).clear(),
            lock(&self.inner.queues.follow_up).clear(),
        )
    }

    /// Aborts the current run, if any: the model call and running tools are cancelled and the run
    /// ends with an `aborted` turn.
    pub fn abort(&self) {
        if let Some(token) = lock(&self.inner.run_token).as_ref() {
            token.cancel();
        }
    }

    /// Waits until no run is active.
    pub async fn wait_for_idle(&self) {
        let mut rx = self.inner.running.subscribe();
        // The sender lives as long as the agent, so this only ends when idle.
        let _ = rx.wait_for(|running| !*running).await;
    }

    /// Runs a text prompt (with optional images) to completion.
    pub async fn prompt_text(
        &self,
        text: &str,
        images: Vec<ImageContent>,
    ) -> Result<(), AgentError> {
        let mut blocks = vec![UserBlock::Text(TextContent {
            text: text.to_string(),
            text_signature: None,
        })];
        blocks.extend(images.into_iter().map(UserBlock::Image));
        let message = UserMessage {
            content: UserContent::Blocks(blocks),
            timestamp: now_millis(),
        };
        self.prompt(vec![message.into()]).await
    }

    /// Runs `messages` as a new prompt to completion. Refused while a run is active. Dropping
    /// the returned future stops the run (the agent is idle again afterwards).
    pub async fn prompt(&self, messages: Vec<AgentMessage>) -> Result<(), AgentError> {
        let guard = self.start_run(AgentError::AlreadyProcessingPrompt)?;
        self.run(RunKind::Prompts(messages), guard).await;
        Ok(())
    }

    /// Continues after an interrupted or failed turn, following pi's rules: after an assistant
    /// message, queued steering (else follow-ups) starts the run; otherwise the run continues
    /// from the last message.
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        // Decide and claim the run under one lock, so a prompt arriving meanwhile cannot make
        // this call fail after it already took messages off a queue.
        let (kind, guard) = {
            let mut state = lock(&self.inner.state);
            if state.is_running {
                return Err(AgentError::AlreadyProcessing);
            }
            let last_is_assistant = match state.messages.last() {
                None => return Err(AgentError::NoMessages),
                Some(m) => m.role() == "assistant",
            };
            let kind = if last_is_assistant {
                let steering = lock(&self.inner.queues.steering).drain();
                if !steering.is_empty() {
                    self.inner
                        .queues
                        .skip_next_steering
                        .store(true, Ordering::SeqCst);
                    RunKind::Prompts(steering)
                } else {
                    let follow_ups = lock(&self.inner.queues.follow_up).drain();
                    if follow_ups.is_empty() {
                        return Err(AgentError::ContinueFromAssistant);
                    }
                    RunKind::Prompts(follow_ups)
                }
            } else {
                RunKind::Continue
            };
            (kind, self.claim(&mut state))
        };
        self.run(kind, guard).await;
        Ok(())
    }

    fn start_run(&self, busy: AgentError) -> Result<RunGuard, AgentError> {
        let mut state = lock(&self.inner.state);
        if state.is_running {
            return Err(busy);
        }
        Ok(self.claim(&mut state))
    }

    /// Marks a run as started; the caller holds the state lock and has checked it is idle.
    fn claim(&self, state: &mut AgentState) -> RunGuard {
        state.is_running = true;
        state.error = None;
        state.streaming = None;
        *lock(&self.inner.run_token) = Some(CancellationToken::new());
        self.inner.running.send_replace(true);
        RunGuard {
            inner: self.inner.clone(),
        }
    }

    async fn run(&self, kind: RunKind, guard: RunGuard) {
        let token = lock(&self.inner.run_token).clone().unwrap_or_default();
        let (context, model, thinking_level) = {
            let state = lock(&self.inner.state);
            (
                AgentContext {
                    system_prompt: state.system_prompt.clone(),
                    messages: state.messages.clone(),
                    tools: state.tools.clone(),
                },
                state.model.clone(),
                state.thinking_level,
            )
        };
        let config = {
            let settings = lock(&self.inner.settings);
            LoopConfig {
                model: model.clone(),
                thinking_level,
                tool_execution: settings.tool_execution,
                stream_options: settings.stream_options.clone(),
                stream_fn: settings.stream_fn.clone(),
                hooks: settings.hooks.clone(),
                queues: self.inner.queues.clone(),
            }
        };
        let sink = Sink {
            inner: self.inner.clone(),
        };
        let run = async {
            match kind {
                RunKind::Prompts(prompts) => {
                    run_agent_loop(prompts, context, config, &sink, token.clone()).await
                }
                RunKind::Continue => {
                    run_agent_loop_continue(context, config, &sink, token.clone()).await
                }
            }
        };
        let outcome = AssertUnwindSafe(run).catch_unwind().await;
        let failure = match outcome {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(panic) => Some(format!(
                "The agent loop crashed (a bug in Tandem): {}",
                panic_message(panic.as_ref())
            )),
        };
        if let Some(error) = failure {
            self.fail_run(&model, &token, error).await;
        }
        drop(guard);
    }

    /// pi's handling of a loop failure: a synthetic empty assistant message with the error, added
    /// to the history, and `agent_end` carrying only it.
    async fn fail_run(&self, model: &Model, token: &CancellationToken, error: String) {
        let message = AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::default())],
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            usage: Usage::default(),
            stop_reason: if token.is_cancelled() {
                StopReason::Aborted
            } else {
                StopReason::Error
            },
            timestamp: now_millis(),
            response_id: None,
            error_message: Some(error.clone()),
            raw_stop_reason: None,
            duration_ms: None,
            thinking_level: None,
            failure: Some(FailureKind::Other),
        };
        let message: AgentMessage = AgentMessage::Llm(Message::Assistant(message));
        {
            let mut state = lock(&self.inner.state);
            state.messages.push(message.clone());
            state.error = Some(error);
            state.streaming = None;
        }
        dispatch(
            &self.inner,
            AgentEvent::AgentEnd {
                messages: vec![message],
            },
        )
        .await;
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}
