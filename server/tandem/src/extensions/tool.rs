//! A tool an extension registered: the loop validates its arguments against the schema the
//! extension gave, like a built-in tool's; `execute` asks the extension's host (`tool/execute`),
//! passes its partial results on (`tool/update`), and cancels it when the run is aborted.

use std::sync::{Arc, Weak};

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ExecutionMode, ToolError, ToolInvocation, ToolOutput};
use tandem_ai::sync::lock;
use tandem_ai::UserBlock;

use super::{Inner, CANCEL_GRACE};

/// See the module documentation.
pub struct ExtensionTool {
    inner: Weak<Inner>,
    host: usize,
    name: String,
    label: String,
    description: String,
    parameters: Value,
    mode: ExecutionMode,
}

impl ExtensionTool {
    /// The tool `definition` (the protocol's tool object) of host `host`; `None` without a
    /// name.
    pub(super) fn new(
        inner: Weak<Inner>,
        host: usize,
        definition: &Value,
    ) -> Option<ExtensionTool> {
        let text = |key: &str| {
            definition
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let name = text("name").filter(|n| !n.is_empty())?;
        let parameters = match definition.get("parameters") {
            Some(p @ Value::Object(_)) => p.clone(),
            _ => json!({"type": "object", "properties": {}}),
        };
        Some(ExtensionTool {
            inner,
            host,
            label: text("label").unwrap_or_else(|| name.clone()),
            description: text("description").unwrap_or_default(),
            name,
            parameters,
            mode: match definition.get("executionMode").and_then(Value::as_str) {
                Some("sequential") => ExecutionMode::Sequential,
                _ => ExecutionMode::Parallel,
            },
        })
    }
}

impl AgentTool for ExtensionTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn label(&self) -> &str {
        &self.label
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }

    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let inner: Arc<Inner> = self
                .inner
                .upgrade()
                .ok_or_else(|| ToolError::new("The extension's session has ended"))?;
            let host = &inner.hosts[self.host];
            let Some(connection) = inner.connect(self.host).await else {
                return Err(ToolError::new(format!(
                    "Tool {} is not available: its extension host {} is not running ({}).",
                    self.name,
                    host.name,
                    host.extension_names()
                )));
            };
            inner.sync_state(host, &connection);
            lock(&inner.updates).insert(call.call_id.clone(), call.updates.clone());
            let params = json!({"toolCallId": call.call_id, "name": self.name, "input": call.args});
            let answer = connection
                .request_cancellable("tool/execute", params, &call.cancel, CANCEL_GRACE)
                .await;
            lock(&inner.updates).remove(&call.call_id);
            let result = answer.map_err(|e| {
                ToolError::new(match e {
                    super::CallError::Remote(message) => message,
                    super::CallError::Stopped(why) => format!("Tool {} failed: {why}", self.name),
                })
            })?;
            let output = output(&result).ok_or_else(|| {
                ToolError::new(format!(
                    "Tool {} returned a result Tandem cannot read (content must be a list of text and image blocks).",
                    self.name
                ))
            })?;
            if result.get("isError").and_then(Value::as_bool) == Some(true) {
                return Err(ToolError::new(text_of(&output.content)));
            }
            Ok(output)
        })
    }
}

/// A result (or partial result) in the protocol's shape as a tool output.
pub(super) fn output(result: &Value) -> Option<ToolOutput> {
    let content = match result.get("content") {
        Some(Value::String(text)) => vec![UserBlock::Text(tandem_ai::TextContent {
            text: text.clone(),
            text_signature: None,
        })],
        Some(blocks @ Value::Array(_)) => serde_json::from_value(blocks.clone()).ok()?,
        None | Some(Value::Null) => Vec::new(),
        Some(_) => return None,
    };
    Some(ToolOutput {
        content,
        details: result.get("details").filter(|d| !d.is_null()).cloned(),
        terminate: result.get("terminate").and_then(Value::as_bool) == Some(true),
        ..ToolOutput::default()
    })
}

fn text_of(content: &[UserBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
