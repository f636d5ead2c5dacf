//! What the model is shown when a session resumes: pi's `buildSessionContext`.
//!
//! Only the path from the root to the leaf counts; other branches are history the user left.
//! Along that path the latest `thinking_level_change` sets the thinking level (`off` when there
//! is none) and the latest `model_change` or assistant message sets the model. The messages are:
//!
//! - without a compaction: every `message` entry, each `custom_message` as a `custom`-role
//!   message, and each non-empty `branch_summary` as a `branchSummary`-role message;
//! - with one (the latest on the path wins): a `compactionSummary` message first, then the
//!   entries from the compaction's `firstKeptEntryId` up to the compaction, then the entries
//!   after it (nothing before the kept entry when that id is not on the path).
//!
//! The summary and custom messages are built by [`crate::messages`] in pi's shapes (`role`, the
//! fields in pi's order, `timestamp` in milliseconds from the entry's ISO timestamp), so they
//! serialize like pi's and `convert_to_llm` turns them into user messages for the model.

use std::collections::HashMap;

use tandem_agent::AgentMessage;
use tandem_ai::ThinkingLevel;

use super::entry::{EntryKind, SessionEntry};
use crate::messages::{branch_summary_message, compaction_summary_message, custom_message};

/// A provider and model id, as `model_change` entries record them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model_id: String,
}

/// The resolved conversation at a leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    /// The messages for the agent, in order.
    pub messages: Vec<AgentMessage>,
    /// The thinking level in force (`Off` when none was recorded or the name is unknown).
    pub thinking_level: ThinkingLevel,
    /// The model in force, if any was recorded.
    pub model: Option<ModelRef>,
}

impl SessionContext {
    fn empty() -> SessionContext {
        SessionContext {
            messages: Vec::new(),
            thinking_level: ThinkingLevel::Off,
            model: None,
        }
    }
}

/// Indices of the entries from the root to `leaf` (inclusive). A broken chain ends at the
/// first missing parent; a cycle is cut rather than followed forever.
pub fn path_indices(
    entries: &[SessionEntry],
    index: &HashMap<String, usize>,
    leaf: usize,
) -> Vec<usize> {
    let mut path = vec![leaf];
    let mut current = leaf;
    while let Some(parent) = entries[current]
        .parent_id
        .as_deref()
        .and_then(|p| index.get(p))
    {
        if path.len() > entries.len() {
            break;
        }
        path.push(*parent);
        current = *parent;
    }
    path.reverse();
    path
}

/// Builds the context at `leaf`: `None` means "before the first entry" (no messages); an id
/// that is not in `index` falls back to the last entry, as pi does.
pub fn build_context(
    entries: &[SessionEntry],
    index: &HashMap<String, usize>,
    leaf: Option<&str>,
) -> SessionContext {
    let Some(leaf) = leaf else {
        return SessionContext::empty();
    };
    let Some(leaf) = index
        .get(leaf)
        .copied()
        .or_else(|| entries.len().checked_sub(1))
    else {
        return SessionContext::empty();
    };
    let path = path_indices(entries, index, leaf);

    let mut context = SessionContext::empty();
    let mut compaction_at = None;
    for (at, &i) in path.iter().enumerate() {
        match &entries[i].kind {
            EntryKind::ThinkingLevelChange { thinking_level } => {
                context.thinking_level =
                    ThinkingLevel::parse(thinking_level).unwrap_or(ThinkingLevel::Off);
            }
            EntryKind::ModelChange { provider, model_id } => {
                context.model = Some(ModelRef {
                    provider: provider.clone(),
                    model_id: model_id.clone(),
                });
            }
            EntryKind::Message { message } => {
                if let Some(a) = message.as_assistant() {
                    context.model = Some(ModelRef {
                        provider: a.provider.clone(),
                        model_id: a.model.clone(),
                    });
                }
            }
            EntryKind::Compaction { .. } => compaction_at = Some(at),
            _ => {}
        }
    }

    let messages = &mut context.messages;
    match compaction_at {
        None => {
            messages.reserve(path.len());
            path.iter()
                .for_each(|&i| push_message(messages, &entries[i]));
        }
        Some(at) => {
            let compaction = &entries[path[at]];
            if let EntryKind::Compaction {
                summary,
                first_kept_entry_id,
                tokens_before,
                ..
            } = &compaction.kind
            {
                messages.push(compaction_summary_message(
                    summary,
                    *tokens_before,
                    &compaction.timestamp,
                ));
                let kept_from = path[..at]
                    .iter()
                    .position(|&i| entries[i].id == *first_kept_entry_id)
                    .unwrap_or(at);
                path[kept_from..at]
                    .iter()
                    .chain(&path[at + 1..])
                    .for_each(|&i| push_message(messages, &entries[i]));
            }
        }
    }
    context
}

/// Appends what `entry` contributes to the conversation, if anything (a compaction entry
/// contributes only through the summary placed first).
fn push_message(messages: &mut Vec<AgentMessage>, entry: &SessionEntry) {
    match &entry.kind {
        EntryKind::Message { message } => messages.push(message.clone()),
        EntryKind::CustomMessage {
            custom_type,
            content,
            details,
            display,
        } => messages.push(custom_message(
            custom_type,
            content.clone(),
            *display,
            details.clone(),
            &entry.timestamp,
        )),
        EntryKind::BranchSummary {
            from_id, summary, ..
        } if !summary.is_empty() => {
            messages.push(branch_summary_message(summary, from_id, &entry.timestamp))
        }
        _ => {}
    }
}
