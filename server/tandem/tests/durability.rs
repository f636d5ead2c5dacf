//! Durability of session files through the real `tandem` binary (issue 9, part 3): `kill -9`
//! in a loop during streaming and tool execution, and a full disk (ENOSPC) on a session write.
//! A session file is append-only: every fully written entry survives, the file is never
//! rewritten, a torn last line is skipped on load, and a failed write is reported.
//!
//! Run: `cargo test -p tandem --test durability -- --nocapture` (the figures are printed).

mod support;

#[path = "durability/enospc.rs"]
mod enospc;
#[path = "durability/kills.rs"]
mod kills;
