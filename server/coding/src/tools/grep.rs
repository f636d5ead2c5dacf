//! The `grep` tool (being implemented).

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use crate::env::ToolEnv;

/// The `grep` tool.
pub struct GrepTool {
    #[allow(dead_code)]
    env: Arc<ToolEnv>,
    schema: Value,
}

impl GrepTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        GrepTool {
            env,
            schema: json!({"type": "object", "properties": {}}),
        }
    }
}

impl AgentTool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }
    fn description(&self) -> &str {
        "grep"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, _call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Err(ToolError::new("not implemented yet")) })
    }
}
