//! The `write` tool (being implemented).

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use crate::env::ToolEnv;

/// The `write` tool.
pub struct WriteTool {
    #[allow(dead_code)]
    env: Arc<ToolEnv>,
    schema: Value,
}

impl WriteTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        WriteTool {
            env,
            schema: json!({"type": "object", "properties": {}}),
        }
    }
}

impl AgentTool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn description(&self) -> &str {
        "write"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, _call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Err(ToolError::new("not implemented yet")) })
    }
}
