//! The coding tools, with pi's schemas, output formats, limits and messages.
//!
//! Default set: read, bash, edit, write. Also grep, find, ls. Read-only set: read, grep, find, ls.
//! Every tool works through the [`crate::env::ToolEnv`]: paths are resolved and checked there,
//! changes go through the workspace as proposals, and changes to one file are serialized.

pub mod args;
mod bash;
mod buffers;
mod edit;
mod edit_diff;
mod edit_match;
mod edit_normalize;
mod find;
mod grep;
mod lang;
mod ls;
pub(crate) mod process;
mod read;
mod read_scan;
mod selection;
pub mod truncate;
mod write;

use std::sync::Arc;

pub use bash::BashTool;
#[doc(hidden)]
pub use edit::fuzz_plan_edit;
pub use edit::EditTool;
pub use find::FindTool;
pub use grep::GrepTool;
pub use lang::{LanguageTool, Which};
pub use ls::LsTool;
pub use read::{image_mime, ReadTool};
pub use selection::{entry_name, is_tool, select_tools, UnknownTool};
pub use write::WriteTool;

use tandem_agent::{AgentTool, ToolError};

use crate::env::ToolEnv;

/// Names of pi's default tools.
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];
/// Names of the read-only tools.
pub const READ_ONLY_TOOLS: [&str; 4] = ["read", "grep", "find", "ls"];
/// Names of every built-in tool.
pub const ALL_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// Names of the language-intelligence tools, offered when a source answers them
/// ([`language_tools`]).
pub const LANGUAGE_TOOLS: [&str; 6] = [
    "diagnostics",
    "definition",
    "references",
    "symbols",
    "hover",
    "rename",
];

/// The language tools a source with `features` answers.
pub fn language_tools(features: crate::intel::Features) -> Vec<&'static str> {
    let wanted = [
        features.diagnostics,
        features.definition,
        features.references,
        features.symbols,
        features.hover,
        features.rename,
    ];
    LANGUAGE_TOOLS
        .iter()
        .zip(wanted)
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect()
}

/// The error of a call cancelled by an abort (pi's wording).
pub(crate) fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

/// The built-in tool called `name`.
pub fn tool(env: &Arc<ToolEnv>, name: &str) -> Option<Arc<dyn AgentTool>> {
    let inner = env.clone();
    let tool: Arc<dyn AgentTool> = match name {
        "read" => Arc::new(ReadTool::new(inner)),
        "bash" => Arc::new(BashTool::new(inner)),
        "edit" => Arc::new(EditTool::new(inner)),
        "write" => Arc::new(WriteTool::new(inner)),
        "grep" => Arc::new(GrepTool::new(inner)),
        "find" => Arc::new(FindTool::new(inner)),
        "ls" => Arc::new(LsTool::new(inner)),
        other => Arc::new(LanguageTool::new(inner, Which::named(other)?)),
    };
    Some(Arc::new(WithNotices {
        tool,
        env: env.clone(),
    }))
}

/// A built-in tool whose result ends with what the workspace has to tell the model since the
/// last result ([`crate::workspace::Workspace::take_notices`]: an edit that timed out and was
/// applied after all, say), so the model never acts on a belief the editor has overtaken.
struct WithNotices {
    tool: Arc<dyn AgentTool>,
    env: Arc<ToolEnv>,
}

impl AgentTool for WithNotices {
    fn name(&self) -> &str {
        self.tool.name()
    }
    fn label(&self) -> &str {
        self.tool.label()
    }
    fn description(&self) -> &str {
        self.tool.description()
    }
    fn parameters(&self) -> &serde_json::Value {
        self.tool.parameters()
    }
    fn execution_mode(&self) -> tandem_agent::ExecutionMode {
        self.tool.execution_mode()
    }
    fn prepare_arguments(&self, args: serde_json::Value) -> serde_json::Value {
        self.tool.prepare_arguments(args)
    }
    fn execute(
        &self,
        call: tandem_agent::ToolInvocation,
    ) -> tandem_agent::BoxFuture<'_, Result<tandem_agent::ToolOutput, ToolError>> {
        Box::pin(async move {
            let result = self.tool.execute(call).await;
            let notices = self.env.workspace.take_notices();
            if notices.is_empty() {
                return result;
            }
            let notes = notices.join("\n");
            match result {
                Ok(mut output) => {
                    output
                        .content
                        .push(tandem_ai::UserBlock::Text(tandem_ai::TextContent {
                            text: notes,
                            text_signature: None,
                        }));
                    Ok(output)
                }
                Err(ToolError(message)) => Err(ToolError(format!("{message}\n\n{notes}"))),
            }
        })
    }
}

/// The tools called `names` (unknown names are skipped).
pub fn tools(env: &Arc<ToolEnv>, names: &[&str]) -> Vec<Arc<dyn AgentTool>> {
    names.iter().filter_map(|n| tool(env, n)).collect()
}
