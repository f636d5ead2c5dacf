//! The `ls` tool (being implemented).

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use crate::env::ToolEnv;

/// The `ls` tool.
pub struct LsTool {
    #[allow(dead_code)]
    env: Arc<ToolEnv>,
    schema: Value,
}

impl LsTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        LsTool {
            env,
            schema: json!({"type": "object", "properties": {}}),
        }
    }
}

impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }
    fn description(&self) -> &str {
        "ls"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, _call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Err(ToolError::new("not implemented yet")) })
    }
}
