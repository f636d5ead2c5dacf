//! Branch summaries: when `/tree` moves to another branch, the branch being left can be
//! summarized, and the summary is recorded where the conversation continues (pi's
//! `branch_summary` entry), so the model knows what was tried there without its messages.
//!
//! [`entries_left`] finds what is being left (from the old leaf back to the deepest entry the
//! new position shares with it); [`prepare_branch`] turns those entries into messages, newest
//! first until the token budget is spent, and gathers the files they read and changed (a
//! branch summary written earlier carries its own lists); [`summarize_branch`] asks the model.

use std::borrow::Cow;

use tandem_agent::{AgentMessage, StreamFn};
use tandem_ai::{CancellationToken, Model, Usage};

use super::files::{format_file_operations, CompactionDetails, FileOperations};
use super::summary::generate_branch_summary;
use super::tokens::estimate_tokens;
use super::{CompactionError, CompactionOptions};
use crate::messages::message_from_entry;
use crate::session::{EntryKind, SessionEntry};

/// What a branch summary opens with, so the model reads it as a side trip.
pub const BRANCH_SUMMARY_PREAMBLE: &str = "Before coming back to this point, the user followed \
another branch of the conversation. What happened there:\n\n";

/// The messages to summarize and the files they touched.
#[derive(Debug, Clone, Default)]
pub struct BranchPreparation {
    /// Oldest first.
    pub messages: Vec<AgentMessage>,
    /// Paths read and changed, earlier branch summaries' lists included.
    pub file_ops: FileOperations,
}

/// A branch summary ready for its entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummary {
    /// The preamble, the model's summary and the file lists.
    pub summary: String,
    /// The file lists, for the entry's `details`.
    pub details: CompactionDetails,
    /// What the model call cost.
    pub usage: Usage,
}

/// The entries left behind when moving from `old_leaf` to `target` (`None`: before the first
/// entry), oldest first: `old_leaf`'s path back to, not including, the deepest entry on both
/// paths. `path_to` gives an entry's path from the root (as the session's tree does).
pub fn entries_left<'a>(
    path_to: impl Fn(&str) -> Vec<Cow<'a, SessionEntry>>,
    old_leaf: &str,
    target: Option<&str>,
) -> Vec<SessionEntry> {
    let old_path = path_to(old_leaf);
    let target_path = target.map(&path_to).unwrap_or_default();
    let shared = old_path
        .iter()
        .zip(&target_path)
        .take_while(|(a, b)| a.id == b.id)
        .count();
    old_path
        .into_iter()
        .skip(shared)
        .map(Cow::into_owned)
        .collect()
}

/// The messages of `entries` worth summarizing, newest first until `token_budget` estimated
/// tokens are used (0: no limit; a summary entry that does not fit is still taken while under
/// 90% of the budget, as pi does), and the files they touched. Tool results are left out: the
/// calls say what was done, and results are the bulk of a branch.
pub fn prepare_branch(entries: &[SessionEntry], token_budget: u64) -> BranchPreparation {
    let mut file_ops = FileOperations::default();
    for entry in entries {
        if let EntryKind::BranchSummary {
            details: Some(details),
            from_hook: None | Some(false),
            ..
        } = &entry.kind
        {
            file_ops.add_previous_details(details);
        }
    }
    let mut messages = Vec::new();
    let mut used = 0u64;
    for entry in entries.iter().rev() {
        let Some(message) = message_from_entry(entry) else {
            continue;
        };
        if message.role() == "toolResult" {
            continue;
        }
        file_ops.add_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && used + tokens > token_budget {
            let is_summary = matches!(
                entry.kind,
                EntryKind::Compaction { .. } | EntryKind::BranchSummary { .. }
            );
            if is_summary && used * 10 < token_budget * 9 {
                messages.push(message);
            }
            break;
        }
        used += tokens;
        messages.push(message);
    }
    messages.reverse();
    BranchPreparation { messages, file_ops }
}

/// Asks the model to summarize `preparation`'s messages; the summary starts with
/// [`BRANCH_SUMMARY_PREAMBLE`] and ends with the file lists. `reserve_tokens` bounds the answer
/// as compaction's does. `Ok(None)` when there is nothing to summarize.
pub async fn summarize_branch(
    preparation: &BranchPreparation,
    model: &Model,
    stream_fn: &StreamFn,
    reserve_tokens: u64,
    options: &CompactionOptions,
    cancel: &CancellationToken,
) -> Result<Option<BranchSummary>, CompactionError> {
    if preparation.messages.is_empty() {
        return Ok(None);
    }
    let written = generate_branch_summary(
        &preparation.messages,
        model,
        stream_fn,
        reserve_tokens,
        options,
        cancel,
    )
    .await?;
    if cancel.is_cancelled() {
        return Err(CompactionError::Aborted);
    }
    let details = preparation.file_ops.file_lists();
    let mut summary = format!("{BRANCH_SUMMARY_PREAMBLE}{}", written.text);
    summary.push_str(&format_file_operations(&details));
    Ok(Some(BranchSummary {
        summary,
        details,
        usage: written.usage,
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::compaction::test_support::{
        assistant, calls, read_call, texts, tool_result, user, Path,
    };

    /// A two-branch tree: e0 → e1 → (e2 → e3) and (e4 → e5), by parent links.
    fn forked() -> Vec<SessionEntry> {
        let mut p = Path::default();
        p.msg(user("start"));
        p.msg(assistant("started", None));
        p.msg(user("left branch"));
        p.msg(assistant("left answer", None));
        p.msg(user("right branch"));
        p.msg(assistant("right answer", None));
        let mut entries = p.entries;
        entries[4].parent_id = Some("e1".into());
        entries
    }

    fn path_in<'a>(
        entries: &'a [SessionEntry],
    ) -> impl Fn(&str) -> Vec<Cow<'a, SessionEntry>> + 'a {
        move |id: &str| {
            let mut path = Vec::new();
            let mut at = entries.iter().find(|e| e.id == id);
            while let Some(entry) = at {
                path.push(Cow::Borrowed(entry));
                at = entry
                    .parent_id
                    .as_deref()
                    .and_then(|p| entries.iter().find(|e| e.id == p));
            }
            path.reverse();
            path
        }
    }

    fn ids(entries: &[SessionEntry]) -> Vec<&str> {
        entries.iter().map(|e| e.id.as_str()).collect()
    }

    #[test]
    fn what_is_left_runs_back_to_the_deepest_shared_entry() {
        let entries = forked();
        let path = path_in(&entries);
        assert_eq!(ids(&entries_left(&path, "e3", Some("e5"))), ["e2", "e3"]);
        assert_eq!(ids(&entries_left(&path, "e3", Some("e1"))), ["e2", "e3"]);
        // Going to an entry on the current path leaves what comes after it.
        assert_eq!(ids(&entries_left(&path, "e3", Some("e2"))), ["e3"]);
        assert!(entries_left(&path, "e3", Some("e3")).is_empty());
        // Before the first entry: everything.
        assert_eq!(
            ids(&entries_left(&path, "e3", None)),
            ["e0", "e1", "e2", "e3"]
        );
    }

    #[test]
    fn tool_results_are_left_out_and_the_files_are_gathered() {
        let mut p = Path::default();
        p.push(EntryKind::BranchSummary {
            from_id: "x".into(),
            summary: "earlier".into(),
            details: Some(json!({"readFiles": ["old.rs"], "modifiedFiles": ["lib.rs"]})),
            usage: None,
            from_hook: None,
        });
        p.push(EntryKind::BranchSummary {
            from_id: "x".into(),
            summary: "an extension's".into(),
            details: Some(json!({"readFiles": ["hook.rs"]})),
            usage: None,
            from_hook: Some(true),
        });
        p.msg(user("look"));
        p.msg(read_call("src/main.rs"));
        p.msg(tool_result("fn main() {}"));
        p.msg(calls(&[("edit", json!({"path": "src/main.rs"}))]));
        let prep = prepare_branch(&p.entries, 0);
        let roles: Vec<&str> = prep.messages.iter().map(AgentMessage::role).collect();
        assert_eq!(
            roles,
            [
                "branchSummary",
                "branchSummary",
                "user",
                "assistant",
                "assistant"
            ]
        );
        let lists = prep.file_ops.file_lists();
        assert_eq!(lists.read_files, ["old.rs"]);
        assert_eq!(lists.modified_files, ["lib.rs", "src/main.rs"]);
    }

    #[test]
    fn the_newest_messages_fill_the_budget() {
        let mut p = Path::default();
        for i in 0..10 {
            p.msg(user(&format!("prompt {i} {}", "x".repeat(400))));
        }
        let one = estimate_tokens(&message_from_entry(&p.entries[0]).expect("a message"));
        let prep = prepare_branch(&p.entries, one * 3);
        assert_eq!(prep.messages.len(), 3);
        assert!(texts(&prep.messages)[0].starts_with("prompt 7 "));
        // No budget: everything.
        assert_eq!(prepare_branch(&p.entries, 0).messages.len(), 10);
    }
}
