//! tandem-agent: pi's two-level agent loop over an injected stream function.
//!
//! [`Agent`] holds the history and settings and runs one loop at a time; [`run_agent_loop`] is
//! the loop itself for callers that manage state themselves. The loop calls the model through a
//! [`StreamFn`], runs [`AgentTool`]s (validated against their JSON schemas, in parallel unless a
//! tool or the configuration asks otherwise), injects steering and follow-up messages, and
//! reports everything as [`AgentEvent`]s. It knows nothing of files, sessions or editors.

pub mod agent;
pub mod config;
pub mod event;
mod execute;
pub mod message;
pub mod queue;
pub mod run;
pub mod tool;
pub mod validate;

pub use agent::{Agent, AgentError, AgentOptions, AgentState, WeakAgent};
pub use config::{
    default_stream_fn, AfterToolCall, AfterToolCallResult, AgentContext, AgentHooks,
    BeforeToolCall, BeforeToolCallResult, CompletedTurn, LoopConfig, MessageQueues, NextTurn,
    NoHooks, NoQueues, StreamFn,
};
pub use event::{AgentEvent, EventSink};
pub use execute::{truncated_call_text, ABORTED_TEXT, SKIPPED_TEXT};
pub use message::{default_convert_to_llm, AgentMessage, CustomMessage};
pub use queue::{PendingQueue, QueueMode};
pub use run::{run_agent_loop, run_agent_loop_continue, LoopError};
pub use tandem_ai as ai;
pub use tool::{
    tool_definition, AgentTool, BoxFuture, ExecutionMode, ToolError, ToolInvocation, ToolOutput,
    ToolUpdates,
};
