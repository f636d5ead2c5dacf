//! Sessions: pi's branchable JSONL session files (format version 3), read and written so that
//! pi and Tandem can resume each other's sessions.
//!
//! A session file is a header line and then one entry per line. Entries form a tree through
//! `parentId`; a leaf pointer says where the conversation is, and appending there grows the
//! current branch. The model's context is the path from the root to the leaf, with compaction
//! and branch summaries folded in.
//!
//! - [`entry`]: the line types and their pi-exact serialization; `wire` reads them fast.
//! - [`manager`] ([`SessionManager`]): one open session; appends (`append.rs`), navigation,
//!   labels, names, context and forks (`tree.rs`).
//! - [`mod@file`]: loading (forgiving below the header), line by line (`scan`), into an index
//!   of the entries (`index`; the current branch's context part parsed, `active`; counts,
//!   labels and the name, `tally`), read back on demand (`iter`); the append-only writer
//!   (`writer`).
//! - `lock`: one writer per file (an advisory lock, and a check for writers that take none).
//! - [`context`]: pi's `buildSessionContext` (compaction, context edits).
//! - [`system`]: `system` messages, pi 1.6's record of the prompt and tools.
//! - [`list`]: listings for `--resume` and the pick for `--continue`.
//! - [`paths`], [`ids`], [`time`], [`json`], [`migrate`]: file layout, identifiers, timestamps,
//!   JavaScript-exact JSON, and v1/v2 → v3.
//!
//! Invariant: a session file is only ever appended to. Nothing here truncates, rewrites or
//! deletes a file it did not just create.

mod active;
mod append;
pub mod context;
pub mod entry;
pub mod error;
pub mod file;
pub mod ids;
mod index;
mod iter;
pub use iter::{Entries, EntryIter};
pub mod json;
pub mod lines;
pub mod list;
mod lock;
pub mod manager;
pub mod migrate;
pub mod paths;
mod scan;
pub mod system;
mod tally;
pub use tally::SessionTotals;
pub mod time;
mod tree;
pub use tree::TreeLinks;
pub mod wire;
mod writer;

pub use context::{build_context, ModelRef, SessionContext};
pub use entry::{
    ContextReplacement, EntryKind, SessionEntry, SessionHeader, UnknownEntry, CURRENT_VERSION,
};
pub use error::SessionError;
pub use file::{load_session_file, LoadReport, LoadedFile, SkippedLine};
pub use list::{
    find_most_recent, list_all_sessions, list_sessions, session_info, ListWarning, SessionInfo,
    SessionList,
};
pub use lock::{claim as claim_file, Claim};
pub use manager::SessionManager;
pub use paths::{
    default_session_dir, encode_cwd, resolve_session_dir, session_file_name, sessions_root,
    SESSION_DIR_ENV,
};

#[cfg(test)]
mod tests;
