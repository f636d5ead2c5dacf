//! Sessions: pi's branchable JSONL session files.

pub mod entry;
