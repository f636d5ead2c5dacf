//! What a run is given: the context snapshot, the model settings, and the hooks through which a
//! product layer (sessions, permissions, compaction) steers the loop without the loop knowing it.

use std::sync::Arc;

use serde_json::Value;
use tandem_ai::{
    AssistantMessage, AssistantStream, Context, Message, Model, StreamOptions, ThinkingLevel,
    ToolCall, ToolResultMessage, Usage, UserBlock,
};

use crate::message::{default_convert_to_llm, AgentMessage};
use crate::tool::{AgentTool, BoxFuture, ExecutionMode, ToolOutput};

/// The injected model call (pi's `StreamFn`): `tandem_ai::stream` in production, a script in
/// tests.
pub type StreamFn = Arc<dyn Fn(&Model, &Context, StreamOptions) -> AssistantStream + Send + Sync>;

/// The production stream function.
pub fn default_stream_fn() -> StreamFn {
    Arc::new(tandem_ai::stream)
}

/// The conversation a run works on.
#[derive(Clone, Default)]
pub struct AgentContext {
    /// The system prompt.
    pub system_prompt: Option<String>,
    /// History (the loop appends to its own copy).
    pub messages: Vec<AgentMessage>,
    /// Tools the model may call.
    pub tools: Vec<Arc<dyn AgentTool>>,
}

impl std::fmt::Debug for AgentContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentContext")
            .field("system_prompt", &self.system_prompt)
            .field("messages", &self.messages.len())
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.name().to_string())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl AgentContext {
    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

/// What `before_tool_call` sees.
#[derive(Debug)]
pub struct BeforeToolCall<'a> {
    /// The message that made the call.
    pub assistant_message: &'a AssistantMessage,
    /// The call.
    pub tool_call: &'a ToolCall,
    /// Validated arguments.
    pub args: &'a Value,
    /// The run's context.
    pub context: &'a AgentContext,
}

/// A decision to block a call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeToolCallResult {
    /// Block the call (it gets an error result).
    pub block: bool,
    /// Why; default "Tool execution was blocked".
    pub reason: Option<String>,
    /// Also mark the result as terminating.
    pub terminate: bool,
    /// Arguments the call runs with instead (pi's in-place mutation of a `tool_call` event's
    /// input; not validated again, as pi does not).
    pub args: Option<Value>,
}

/// What `after_tool_call` sees.
#[derive(Debug)]
pub struct AfterToolCall<'a> {
    /// The message that made the call.
    pub assistant_message: &'a AssistantMessage,
    /// The call.
    pub tool_call: &'a ToolCall,
    /// Validated arguments.
    pub args: &'a Value,
    /// The tool's result.
    pub result: &'a ToolOutput,
    /// True when it failed.
    pub is_error: bool,
    /// The run's context.
    pub context: &'a AgentContext,
}

/// Field-by-field overrides of a result; `None` keeps the tool's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AfterToolCallResult {
    /// Replacement content.
    pub content: Option<Vec<UserBlock>>,
    /// Replacement details.
    pub details: Option<Value>,
    /// Replacement usage.
    pub usage: Option<Usage>,
    /// Replacement terminate flag.
    pub terminate: Option<bool>,
    /// Replacement error flag.
    pub is_error: Option<bool>,
}

/// The turn that just completed, given to `prepare_next_turn` and `should_stop_after_turn`.
#[derive(Debug)]
pub struct CompletedTurn<'a> {
    /// The turn's assistant message.
    pub message: &'a AssistantMessage,
    /// Its tool results.
    pub tool_results: &'a [ToolResultMessage],
    /// The context as it stands.
    pub context: &'a AgentContext,
    /// Messages added by the run so far.
    pub new_messages: &'a [AgentMessage],
}

/// Replacements for the next model call; `None` keeps the current value.
#[derive(Debug, Clone, Default)]
pub struct NextTurn {
    /// A new context (e.g. after compaction).
    pub context: Option<AgentContext>,
    /// Another model.
    pub model: Option<Model>,
    /// Another thinking level.
    pub thinking_level: Option<ThinkingLevel>,
}

/// The product layer's hooks. Every method has a neutral default.
pub trait AgentHooks: Send + Sync {
    /// History → model messages (default: drop custom roles).
    fn convert_to_llm(&self, messages: &[AgentMessage]) -> Vec<Message> {
        default_convert_to_llm(messages)
    }
    /// Rewrites the history before each call (e.g. pruning); an error ends the run.
    fn transform_context<'a>(
        &'a self,
        messages: Vec<AgentMessage>,
    ) -> BoxFuture<'a, Result<Vec<AgentMessage>, String>> {
        Box::pin(std::future::ready(Ok(messages)))
    }
    /// The API key for `provider`, resolved per call (keys may expire); an error ends the run.
    fn get_api_key<'a>(
        &'a self,
        _provider: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(std::future::ready(Ok(None)))
    }
    /// May block a call.
    fn before_tool_call<'a>(
        &'a self,
        _call: BeforeToolCall<'a>,
    ) -> BoxFuture<'a, Option<BeforeToolCallResult>> {
        Box::pin(std::future::ready(None))
    }
    /// May override a result field by field; an error replaces the result with that error.
    fn after_tool_call<'a>(
        &'a self,
        _call: AfterToolCall<'a>,
    ) -> BoxFuture<'a, Result<Option<AfterToolCallResult>, String>> {
        Box::pin(std::future::ready(Ok(None)))
    }
    /// Called before every model call after the first.
    fn prepare_next_turn<'a>(
        &'a self,
        _turn: CompletedTurn<'a>,
    ) -> BoxFuture<'a, Option<NextTurn>> {
        Box::pin(std::future::ready(None))
    }
    /// True ends the run after this turn.
    fn should_stop_after_turn<'a>(&'a self, _turn: CompletedTurn<'a>) -> BoxFuture<'a, bool> {
        Box::pin(std::future::ready(false))
    }
}

/// Hooks that change nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl AgentHooks for NoHooks {}

/// Where queued user messages come from (the [`crate::Agent`]'s steering and follow-up queues).
pub trait MessageQueues: Send + Sync {
    /// Messages to inject before the next model call of this run.
    fn steering(&self) -> Vec<AgentMessage>;
    /// Messages that start another round once the run would otherwise end.
    fn follow_ups(&self) -> Vec<AgentMessage>;
}

/// No queued messages, ever.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoQueues;

impl MessageQueues for NoQueues {
    fn steering(&self) -> Vec<AgentMessage> {
        Vec::new()
    }
    fn follow_ups(&self) -> Vec<AgentMessage> {
        Vec::new()
    }
}

/// Everything a run needs besides its context.
#[derive(Clone)]
pub struct LoopConfig {
    /// The model.
    pub model: Model,
    /// Reasoning effort.
    pub thinking_level: ThinkingLevel,
    /// Parallel (default) or sequential tool batches.
    pub tool_execution: ExecutionMode,
    /// Template for each call's options (key, temperature, budgets, session id…); its token is
    /// replaced by the run's.
    pub stream_options: StreamOptions,
    /// The model call.
    pub stream_fn: StreamFn,
    /// Product hooks.
    pub hooks: Arc<dyn AgentHooks>,
    /// Steering and follow-up queues.
    pub queues: Arc<dyn MessageQueues>,
}

impl std::fmt::Debug for LoopConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopConfig")
            .field(
                "model",
                &format!("{}/{}", self.model.provider, self.model.id),
            )
            .field("thinking_level", &self.thinking_level)
            .field("tool_execution", &self.tool_execution)
            .finish()
    }
}

impl LoopConfig {
    /// A config for `model` with the production stream function and no hooks or queues.
    pub fn new(model: Model) -> Self {
        LoopConfig {
            model,
            thinking_level: ThinkingLevel::Off,
            tool_execution: ExecutionMode::Parallel,
            stream_options: StreamOptions::default(),
            stream_fn: default_stream_fn(),
            hooks: Arc::new(NoHooks),
            queues: Arc::new(NoQueues),
        }
    }
}
