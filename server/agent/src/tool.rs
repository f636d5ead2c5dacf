//! What a tool is to the loop: a name, a JSON-schema, and an async `execute` that can stream
//! partial results and must stop when its cancellation token fires.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tandem_ai::{TextContent, Tool, Usage, UserBlock};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A boxed, sendable future (tools and hooks are trait objects).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Whether a tool may run alongside the others of its batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// Concurrently with the batch's other calls (the default).
    #[default]
    Parallel,
    /// One call at a time; one such tool in a batch makes the whole batch sequential.
    Sequential,
}

/// A tool's result (pi's `AgentToolResult`): content for the model, details for the UI.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// Text and images the model sees.
    pub content: Vec<UserBlock>,
    /// Structured data for the UI (a diff, a file list); never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// The result as data for programs rather than the model (pi 1.6's `structuredContent`:
    /// read's text, bash's output, exit code and time); never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Tokens the tool itself spent, when it called a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tools this result made available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_tool_names: Option<Vec<String>>,
    /// Asks the loop to stop after this batch (only when every result of the batch asks).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminate: bool,
}

impl ToolOutput {
    /// A text-only result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![UserBlock::Text(TextContent {
                text: text.into(),
                text_signature: None,
            })],
            ..ToolOutput::default()
        }
    }

    /// pi's error result: the message as text and empty details.
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutput {
            details: Some(Value::Object(Default::default())),
            ..ToolOutput::text(message)
        }
    }

    /// Sets the details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// A tool failure; its message becomes an error result the model sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// A failure with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError(message.into())
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError(message.to_string())
    }
}

/// Sends partial results of a running call (each becomes a `tool_execution_update`).
#[derive(Debug, Clone)]
pub struct ToolUpdates {
    index: usize,
    tx: Option<mpsc::Sender<(usize, ToolOutput)>>,
}

impl ToolUpdates {
    pub(crate) fn new(index: usize, tx: mpsc::Sender<(usize, ToolOutput)>) -> Self {
        ToolUpdates {
            index,
            tx: Some(tx),
        }
    }

    /// Updates collected in a channel (for calling a tool outside the loop, e.g. in tests).
    /// Each item is `(0, partial result)`.
    pub fn channel(capacity: usize) -> (Self, mpsc::Receiver<(usize, ToolOutput)>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (ToolUpdates::new(0, tx), rx)
    }

    /// Updates that go nowhere (for calling a tool outside the loop).
    pub fn discard() -> Self {
        ToolUpdates { index: 0, tx: None }
    }

    /// Reports a partial result. Waits when the loop is behind (back-pressure); does nothing
    /// once the call has finished.
    pub async fn send(&self, partial: ToolOutput) {
        if let Some(tx) = &self.tx {
            let _ = tx.send((self.index, partial)).await;
        }
    }
}

/// One call of a tool.
#[derive(Debug)]
pub struct ToolInvocation {
    /// The model's call id.
    pub call_id: String,
    /// Validated (and coerced) arguments.
    pub args: Value,
    /// Fires when the run is aborted; the tool must stop promptly.
    pub cancel: CancellationToken,
    /// Channel for partial results.
    pub updates: ToolUpdates,
}

/// A tool the agent can call.
pub trait AgentTool: Send + Sync {
    /// Name the model calls it by.
    fn name(&self) -> &str;
    /// Short display name; the name by default.
    fn label(&self) -> &str {
        self.name()
    }
    /// Description for the model.
    fn description(&self) -> &str;
    /// JSON schema of the arguments.
    fn parameters(&self) -> &Value;
    /// Parallel unless the tool needs its batch to run one call at a time.
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    /// Adjusts raw arguments before validation (e.g. accepting an old argument shape).
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }
    /// Runs the call.
    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>>;
}

/// The model-facing definition of `tool`.
pub fn tool_definition(tool: &dyn AgentTool) -> Tool {
    Tool {
        name: tool.name().to_string(),
        description: tool.description().to_string(),
        parameters: tool.parameters().clone(),
    }
}
