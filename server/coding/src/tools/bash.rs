//! The `bash` tool (being implemented).

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use crate::env::ToolEnv;

/// The `bash` tool.
pub struct BashTool {
    #[allow(dead_code)]
    env: Arc<ToolEnv>,
    schema: Value,
}

impl BashTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        BashTool {
            env,
            schema: json!({"type": "object", "properties": {}}),
        }
    }
}

impl AgentTool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }
    fn description(&self) -> &str {
        "bash"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, _call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Err(ToolError::new("not implemented yet")) })
    }
}
