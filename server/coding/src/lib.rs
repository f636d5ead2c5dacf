//! tandem-coding: the coding agent — tools over a [`workspace::Workspace`], and (next) sessions,
//! compaction, retry, prompts and settings.
//!
//! It knows nothing of LSP or ACP: it reaches the editor only through the `Workspace` trait.

pub mod agent_session;
pub mod calls;
pub mod checkpoint;
pub mod compaction;
pub mod env;
pub mod extensions;
pub mod images;
pub mod intel;
pub mod messages;
pub mod meta;
pub mod mutation;
pub mod paths;
pub mod tools;
pub mod workspace;

pub use env::{BashPolicy, ShellSettings, ToolEnv};
pub use meta::{describe_tool_call, ToolCallInfo, ToolKind, ToolLocation};
pub use tandem_agent as agent;
pub use workspace::{
    ChangeOutcome, CommandEnding, CommandOutcome, CommandRequest, DiskWorkspace, FileChange,
    FileContent, OpenBuffer, PermissionDecision, PermissionPolicy, PermissionRequest,
    ScriptedWorkspace, TextEdit, Workspace, WorkspaceError,
};
pub mod resources;
pub mod retry;
pub mod session;
pub mod settings;
pub mod trust;
