//! The `read` tool (being implemented).

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use crate::env::ToolEnv;

/// The `read` tool.
pub struct ReadTool {
    #[allow(dead_code)]
    env: Arc<ToolEnv>,
    schema: Value,
}

impl ReadTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        ReadTool {
            env,
            schema: json!({"type": "object", "properties": {}}),
        }
    }
}

impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "read"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, _call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Err(ToolError::new("not implemented yet")) })
    }
}
