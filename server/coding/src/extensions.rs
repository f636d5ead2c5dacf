//! What a session asks of its extensions (pi's extension runner as the session sees it): the
//! gates and transforms on a prompt's way in, on each tool call and on each model call. The
//! session knows nothing of hosts, processes or protocols; `tandem-extensions` implements this
//! over extension hosts, and a session without extensions has none.

use serde_json::Value;
use std::sync::Arc;
use tandem_agent::{AfterToolCallResult, AgentMessage, BeforeToolCallResult, BoxFuture};
use tandem_ai::{ImageContent, ProviderHooks};

use crate::messages::ExtensionMessage;

/// Where a prompt came from (pi's `input` event `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    /// Typed by the user in an interactive front door.
    Interactive,
    /// Sent by a program (RPC, an editor, ACP, print mode's arguments).
    Rpc,
    /// Sent by an extension (`pi.sendUserMessage`).
    Extension,
}

impl InputSource {
    /// The name pi gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            InputSource::Interactive => "interactive",
            InputSource::Rpc => "rpc",
            InputSource::Extension => "extension",
        }
    }
}

/// What the `input` handlers decided.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    /// Go on with this text and these images (changed or not).
    Continue {
        /// The prompt's text.
        text: String,
        /// Its images.
        images: Vec<ImageContent>,
    },
    /// An extension handled the prompt: no run.
    Handled,
}

/// What the `before_agent_start` handlers return for one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeStart {
    /// The system prompt the model gets for this run instead of the session's.
    pub system_prompt: Option<String>,
    /// Messages to add after the prompt (persisted, sent to the model).
    pub messages: Vec<ExtensionMessage>,
}

/// A run about to start, as `before_agent_start` sees it.
#[derive(Debug, Clone, Copy)]
pub struct RunStart<'a> {
    /// The prompt (after expansion).
    pub prompt: &'a str,
    /// Its images.
    pub images: &'a [ImageContent],
    /// The system prompt the run would use.
    pub system_prompt: &'a str,
}

/// A finished tool call, as `tool_result` sees it.
#[derive(Debug, Clone, Copy)]
pub struct FinishedCall<'a> {
    /// The call's id.
    pub call_id: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The arguments it ran with.
    pub input: &'a Value,
    /// The result's content, details and error flag, in pi's JSON shape.
    pub result: &'a Value,
    /// Whether the call failed.
    pub is_error: bool,
}

/// The session's extensions. Every method is called with the session's state current; a
/// failing extension is reported by the implementation and never fails the session.
pub trait SessionExtensions: Send + Sync {
    /// Runs `/name args` when an extension registered that command: `Some` with the
    /// command's failure or success, `None` when the text is not an extension command.
    fn command<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Option<Result<(), String>>>;
    /// The `input` event: transform or handle a prompt before its expansion.
    fn input<'a>(
        &'a self,
        text: String,
        images: Vec<ImageContent>,
        source: InputSource,
        streaming: Option<&'a str>,
    ) -> BoxFuture<'a, InputOutcome>;
    /// The `before_agent_start` event.
    fn before_agent_start<'a>(&'a self, run: RunStart<'a>) -> BoxFuture<'a, BeforeStart>;
    /// The `tool_call` event: block the call, or change its input.
    fn tool_call<'a>(
        &'a self,
        call_id: &'a str,
        tool: &'a str,
        input: &'a Value,
    ) -> BoxFuture<'a, Option<BeforeToolCallResult>>;
    /// The `tool_result` event: change the result.
    fn tool_result<'a>(
        &'a self,
        call: FinishedCall<'a>,
    ) -> BoxFuture<'a, Option<AfterToolCallResult>>;
    /// The `context` event: the messages one model call sees.
    fn context<'a>(&'a self, messages: Vec<AgentMessage>) -> BoxFuture<'a, Vec<AgentMessage>>;
    /// The hooks around each model call's HTTP request, when an extension listens to them.
    fn provider_hooks(&self) -> Option<Arc<dyn ProviderHooks>>;
    /// The `user_bash` event (a command the user typed, `!cmd`): `Some` with the result an
    /// extension produced instead of running the command here (`output`, `exitCode`,
    /// `cancelled`, `truncated`), `None` to run it. The default runs it.
    fn user_bash<'a>(
        &'a self,
        _command: &'a str,
        _exclude_from_context: bool,
    ) -> BoxFuture<'a, Option<Value>> {
        Box::pin(std::future::ready(None))
    }
}
