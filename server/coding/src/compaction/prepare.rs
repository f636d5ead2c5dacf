//! What a compaction will do, decided from the session path alone (no model call).
//!
//! The range considered starts where the previous compaction's kept part starts: the messages it
//! kept verbatim are still in the context and must be either kept again or summarized now (pi
//! after its fix for history lost on a second compaction). The previous summary itself is not
//! re-summarized as a message; it is handed to the update prompt instead, so the chain of
//! summaries keeps what earlier ones recorded.

use std::collections::HashMap;

use tandem_agent::AgentMessage;

use super::cut::find_cut_point;
use super::files::FileOperations;
use super::tokens::estimate_context_tokens;
use super::CompactionSettings;
use crate::messages::message_from_entry;
use crate::session::context::build_context;
use crate::session::entry::{EntryKind, SessionEntry};
use crate::session::system::is_system_message;

/// Everything [`super::compact`] needs, computed by [`prepare_compaction`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPreparation {
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Messages replaced by the summary.
    pub messages_to_summarize: Vec<AgentMessage>,
    /// The beginning of a split turn, summarized separately (empty unless `is_split_turn`).
    pub turn_prefix_messages: Vec<AgentMessage>,
    /// The cut lands inside a turn.
    pub is_split_turn: bool,
    /// Context tokens before compacting.
    pub tokens_before: u64,
    /// The previous compaction's summary, to be updated rather than rewritten.
    pub previous_summary: Option<String>,
    /// Files read and modified in the summarized messages, plus the previous compaction's.
    pub file_ops: FileOperations,
    /// The settings used.
    pub settings: CompactionSettings,
}

/// Plans a compaction of `path_entries` (the session path from the root to the leaf; pi's
/// `prepareCompaction`).
///
/// `None` when there is nothing to do: an empty path, a path that ends with a compaction, or a
/// history that fits the keep-recent budget so nothing would be summarized.
pub fn prepare_compaction(
    path_entries: &[SessionEntry],
    settings: &CompactionSettings,
) -> Option<CompactionPreparation> {
    let last = path_entries.last()?;
    if matches!(last.kind, EntryKind::Compaction { .. }) {
        return None;
    }

    let previous = path_entries
        .iter()
        .enumerate()
        .rev()
        .find(|(_, e)| matches!(e.kind, EntryKind::Compaction { .. }));
    let mut previous_summary = None;
    let mut previous_details = None;
    let mut boundary_start = 0;
    if let Some((index, entry)) = previous {
        if let EntryKind::Compaction {
            summary,
            first_kept_entry_id,
            details,
            from_hook,
            ..
        } = &entry.kind
        {
            previous_summary = Some(summary.clone());
            // Lists written by an extension's compaction are its own business.
            if from_hook != &Some(true) {
                previous_details = details.as_ref();
            }
            boundary_start = path_entries
                .iter()
                .position(|e| &e.id == first_kept_entry_id)
                .unwrap_or(index + 1);
        }
    }
    let end = path_entries.len();

    let tokens_before = estimate_context_tokens(&context_messages(path_entries)).tokens;
    let cut = find_cut_point(
        path_entries,
        boundary_start,
        end,
        settings.keep_recent_tokens,
    );
    let first_kept_entry_id = path_entries.get(cut.first_kept_entry_index)?.id.clone();

    let history_end = cut
        .turn_start_index
        .filter(|_| cut.is_split_turn)
        .unwrap_or(cut.first_kept_entry_index);
    let messages_to_summarize = summarizable(&path_entries[boundary_start..history_end]);
    let turn_prefix_messages = if cut.is_split_turn {
        summarizable(&path_entries[history_end..cut.first_kept_entry_index])
    } else {
        Vec::new()
    };
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return None;
    }

    let mut file_ops = FileOperations::default();
    if let Some(details) = previous_details {
        file_ops.add_previous_details(details);
    }
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(message);
    }

    Some(CompactionPreparation {
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
        settings: *settings,
    })
}

/// The messages of `entries`, leaving out compaction entries (their summary travels as the
/// previous summary instead) and `system` messages (the prompt and tools, not conversation: the
/// compaction entry records them as its checkpoint).
fn summarizable(entries: &[SessionEntry]) -> Vec<AgentMessage> {
    entries
        .iter()
        .filter(|e| !matches!(e.kind, EntryKind::Compaction { .. }))
        .filter_map(message_from_entry)
        .filter(|m| !is_system_message(m))
        .collect()
}

/// The messages the model currently sees for this path (the session's context rule, which
/// puts a compaction's summary first, then what it kept, then what followed).
fn context_messages(path: &[SessionEntry]) -> Vec<AgentMessage> {
    let index: HashMap<String, usize> = path
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.clone(), i))
        .collect();
    build_context(path, &index, path.last().map(|e| e.id.as_str())).messages
}

#[cfg(test)]
#[path = "prepare_tests.rs"]
mod tests;
