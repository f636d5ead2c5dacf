//! The `write` tool: create a file or replace its whole content.
//!
//! Like every change, the content is *proposed* to the workspace rather than written here: on
//! disk it is written (missing parent directories created), in an editor it becomes a change
//! the user can accept or reject. The current text, when the file exists, travels with the
//! proposal so a front door can show a diff and notice a file that changed underneath. Creating
//! the directories is left to the workspace so that a rejected write leaves nothing behind.

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use super::aborted;
use super::args::{parse, WriteArgs};
use crate::env::ToolEnv;
use crate::paths::Access;
use crate::workspace::{read_text, FileChange, WorkspaceError};

const DESCRIPTION: &str = "Write content to a file, replacing the whole file. The file is \
created when missing (parent directories included) and overwritten when it exists. Use it for \
new files or complete rewrites; prefer edit for changing part of an existing file.";

/// The `write` tool.
pub struct WriteTool {
    env: Arc<ToolEnv>,
    schema: Value,
}

impl WriteTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path to the file to write (relative or absolute)"
                },
                "content": {
                    "type": "string",
                    "description": "Content to write to the file"
                }
            },
            "required": ["path", "content"]
        });
        WriteTool { env, schema }
    }
}

impl AgentTool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(call))
    }
}

impl WriteTool {
    async fn run(&self, call: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let WriteArgs { path, content } = parse("write", call.args.clone())?;
        let resolved = self
            .env
            .resolve(&call.call_id, &path, Access::Write)
            .await?;
        let workspace = &self.env.workspace;

        let _turn = tokio::select! {
            biased;
            _ = call.cancel.cancelled() => return Err(aborted()),
            turn = self.env.mutations.lock(&resolved.real) => turn,
        };
        let current = match read_text(&**workspace, &resolved.absolute).await {
            Ok(text) => Some(text),
            Err(WorkspaceError::NotFound(_)) => None,
            Err(e @ (WorkspaceError::IsDirectory(_) | WorkspaceError::Client(_))) => {
                return Err(ToolError::new(e.to_string()))
            }
            // Unreadable as text (binary, say): overwrite it without a base to compare with.
            Err(_) => None,
        };
        if call.cancel.is_cancelled() {
            return Err(aborted());
        }

        // The real UTF-8 size (pi reports JavaScript's UTF-16 length and calls it bytes).
        let size = content.len();
        let change = FileChange {
            path: resolved.absolute.clone(),
            real: resolved.real.clone(),
            old_text: current,
            new_text: content,
            edits: Vec::new(),
        };
        let (outcome, diagnostics) = self
            .env
            .propose_with_diagnostics(&call.call_id, change, &call.cancel)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        if let Some(error) = outcome.failure("writing", &path) {
            return Err(ToolError::new(error));
        }
        Ok(ToolOutput::text(format!(
            "Successfully wrote {size} bytes to {path}{}{}",
            outcome.note().unwrap_or_default(),
            diagnostics.map(|d| format!("\n\n{d}")).unwrap_or_default()
        )))
    }
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
