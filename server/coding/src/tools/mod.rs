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
mod ls;
mod process;
mod read;
mod read_scan;
pub mod truncate;
mod write;

use std::sync::Arc;

pub use bash::BashTool;
#[doc(hidden)]
pub use edit::fuzz_plan_edit;
pub use edit::EditTool;
pub use find::FindTool;
pub use grep::GrepTool;
pub use ls::LsTool;
pub use read::{image_mime, ReadTool};
pub use write::WriteTool;

use tandem_agent::{AgentTool, ToolError};

use crate::env::ToolEnv;

/// Names of pi's default tools.
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];
/// Names of the read-only tools.
pub const READ_ONLY_TOOLS: [&str; 4] = ["read", "grep", "find", "ls"];
/// Names of every built-in tool.
pub const ALL_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The error of a call cancelled by an abort (pi's wording).
pub(crate) fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

/// The built-in tool called `name`.
pub fn tool(env: &Arc<ToolEnv>, name: &str) -> Option<Arc<dyn AgentTool>> {
    let env = env.clone();
    Some(match name {
        "read" => Arc::new(ReadTool::new(env)),
        "bash" => Arc::new(BashTool::new(env)),
        "edit" => Arc::new(EditTool::new(env)),
        "write" => Arc::new(WriteTool::new(env)),
        "grep" => Arc::new(GrepTool::new(env)),
        "find" => Arc::new(FindTool::new(env)),
        "ls" => Arc::new(LsTool::new(env)),
        _ => return None,
    })
}

/// The tools called `names` (unknown names are skipped).
pub fn tools(env: &Arc<ToolEnv>, names: &[&str]) -> Vec<Arc<dyn AgentTool>> {
    names.iter().filter_map(|n| tool(env, n)).collect()
}
