//! tandem-coding: tools over a Workspace, sessions, compaction and settings (issues 4 and 5).
//!
//! It knows nothing of LSP or ACP.

pub use tandem_agent as agent;
