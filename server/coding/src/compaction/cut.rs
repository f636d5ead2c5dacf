//! Where to cut: keep roughly `keepRecentTokens` of the newest history verbatim.
//!
//! Walking back from the newest entry, message sizes are added up until the budget is reached;
//! the cut goes to the nearest valid cut point at or after that entry. A tool result is never a
//! cut point (it must stay behind the assistant message that called the tool); cutting at that
//! assistant message keeps its results. A cut that lands after the user message that began a turn
//! splits the turn: the part before the cut (the turn prefix) is summarized on its own.

use super::tokens::estimate_tokens;
use crate::session::entry::{EntryKind, SessionEntry};

/// Where a compaction cuts the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// Index of the first entry kept verbatim.
    pub first_kept_entry_index: usize,
    /// Index of the entry that began the turn being split, when the cut splits one.
    pub turn_start_index: Option<usize>,
    /// True when the cut lands inside a turn.
    pub is_split_turn: bool,
}

/// Roles of message entries the history may start with after a cut.
fn is_cut_role(role: &str) -> bool {
    matches!(
        role,
        "user" | "assistant" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary"
    )
}

/// Indices in `start..end` where the kept history may begin: messages of any role but
/// `toolResult`, and custom-message and branch-summary entries (they read as user messages).
fn valid_cut_points(entries: &[SessionEntry], start: usize, end: usize) -> Vec<usize> {
    (start..end)
        .filter(|&i| match &entries[i].kind {
            EntryKind::Message { message } => is_cut_role(message.role()),
            EntryKind::CustomMessage { .. } | EntryKind::BranchSummary { .. } => true,
            _ => false,
        })
        .collect()
}

/// The entry at or before `entry_index` (not before `start`) that began its turn: a user or
/// `bashExecution` message, or a custom-message or branch-summary entry.
pub fn find_turn_start_index(
    entries: &[SessionEntry],
    entry_index: usize,
    start: usize,
) -> Option<usize> {
    (start..=entry_index)
        .rev()
        .find(|&i| match &entries[i].kind {
            EntryKind::CustomMessage { .. } | EntryKind::BranchSummary { .. } => true,
            EntryKind::Message { message } => matches!(message.role(), "user" | "bashExecution"),
            _ => false,
        })
}

/// The cut for `entries[start..end]` keeping about `keep_recent_tokens` (pi's `findCutPoint`).
///
/// Without any valid cut point the whole range is kept. Entries that add nothing to the context
/// (model or thinking changes, labels, extension data) just before the cut are kept with it, up
/// to the previous entry that does, or the previous compaction.
pub fn find_cut_point(
    entries: &[SessionEntry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let cut_points = valid_cut_points(entries, start, end);
    let Some(&first_cut) = cut_points.first() else {
        return CutPoint {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };

    let mut landing = first_cut;
    let mut accumulated = 0;
    for i in (start..end).rev() {
        let EntryKind::Message { message } = &entries[i].kind else {
            continue;
        };
        accumulated += estimate_tokens(message);
        if accumulated >= keep_recent_tokens {
            // The nearest cut point at or after this entry. When the budget runs out inside the
            // trailing tool results, past every cut point, keep from the last one (newer pi)
            // rather than keeping everything.
            landing = cut_points
                .iter()
                .copied()
                .find(|&c| c >= i)
                .unwrap_or(cut_points[cut_points.len() - 1]);
            break;
        }
    }

    let mut cut = landing;
    while cut > start {
        match &entries[cut - 1].kind {
            EntryKind::Message { .. }
            | EntryKind::CustomMessage { .. }
            | EntryKind::BranchSummary { .. }
            | EntryKind::Compaction { .. } => break,
            _ => cut -= 1,
        }
    }

    // Whether the turn is split is judged at the message the cut landed on (the entries taken
    // along above do not make an earlier, finished turn look split), and only a turn that began
    // before the kept part is split.
    let lands_on_user = matches!(
        &entries[landing].kind,
        EntryKind::Message { message } if message.role() == "user"
    );
    let turn_start_index = if lands_on_user {
        None
    } else {
        find_turn_start_index(entries, landing, start).filter(|&t| t < cut)
    };
    CutPoint {
        first_kept_entry_index: cut,
        turn_start_index,
        is_split_turn: turn_start_index.is_some(),
    }
}

#[cfg(test)]
#[path = "cut_tests.rs"]
mod tests;
