//! What the model is shown when a session resumes: pi 1.6's `buildSessionContext`.
//!
//! Only the path from the root to the leaf counts; other branches are history the user left.
//! Along that path the latest `thinking_level_change` sets the thinking level (`off` when there
//! is none) and the latest `model_change` or assistant message sets the model. The entries that
//! count are:
//!
//! - without a compaction: the whole path;
//! - with one (the latest on the path wins): the compaction first, then the entries from its
//!   `firstKeptEntryId` up to it, `system` messages left out (the compaction's checkpoint
//!   replaces them), then the entries after it (nothing before the compaction when the kept id
//!   is not on the path, as for pi 1.6's retain-none compaction that names itself).
//!
//! Of those, a `message` entry gives its message, a `custom_message` a `custom`-role message, a
//! non-empty `branch_summary` a `branchSummary`-role message, and the leading compaction its
//! system checkpoint (`systemMessage`, when it has one) and a `compactionSummary`-role message;
//! an older compaction inside the kept range, and every other kind, give nothing. Then each
//! `context_edit` among those entries edits its target's messages (the latest edit of a target
//! wins): `null` leaves them out, a replacement swaps their content. An edit whose target is not
//! among the entries edits nothing.
//!
//! The summary and custom messages are built by [`crate::messages`] in pi's shapes (`role`, the
//! fields in pi's order, `timestamp` in milliseconds from the entry's ISO timestamp), so they
//! serialize like pi's and `convert_to_llm` turns them into user messages for the model; system
//! messages become the system prompt ([`super::system`]).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;
use tandem_agent::{AgentMessage, CustomMessage};
use tandem_ai::ThinkingLevel;

use super::entry::{ContextReplacement, EntryKind, SessionEntry};
use super::system::{is_system_message, SYSTEM_ROLE};
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
    pub(super) fn empty() -> SessionContext {
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
    let path: Vec<&SessionEntry> = path_indices(entries, index, leaf)
        .into_iter()
        .map(|i| &entries[i])
        .collect();
    SessionContext {
        messages: messages_of(&path),
        thinking_level: path
            .iter()
            .rev()
            .find_map(|e| thinking_level_of(e))
            .unwrap_or(ThinkingLevel::Off),
        model: path.iter().rev().find_map(|e| model_of(e)),
    }
}

/// The thinking level `entry` sets, for a `thinking_level_change` (`Off` for a name that is
/// not a level).
pub(super) fn thinking_level_of(entry: &SessionEntry) -> Option<ThinkingLevel> {
    match &entry.kind {
        EntryKind::ThinkingLevelChange { thinking_level } => {
            Some(ThinkingLevel::parse(thinking_level).unwrap_or(ThinkingLevel::Off))
        }
        _ => None,
    }
}

/// The model `entry` sets: a `model_change`'s, or an assistant message's own.
pub(super) fn model_of(entry: &SessionEntry) -> Option<ModelRef> {
    match &entry.kind {
        EntryKind::ModelChange { provider, model_id } => Some(ModelRef {
            provider: provider.clone(),
            model_id: model_id.clone(),
        }),
        EntryKind::Message { message } => message.as_assistant().map(|a| ModelRef {
            provider: a.provider.clone(),
            model_id: a.model.clone(),
        }),
        _ => None,
    }
}

/// The messages of `path` (entries from the root to the leaf, in order). A path may also start
/// later, anywhere up to the first entry its latest compaction keeps: nothing before that
/// counts.
pub(super) fn messages_of(path: &[&SessionEntry]) -> Vec<AgentMessage> {
    let compaction_at = path
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction { .. }));
    let selected: Vec<&SessionEntry> = match compaction_at {
        None => path.to_vec(),
        Some(at) => {
            let first_kept = match &path[at].kind {
                EntryKind::Compaction {
                    first_kept_entry_id,
                    ..
                } => first_kept_entry_id.as_str(),
                _ => "",
            };
            let kept_from = path[..at]
                .iter()
                .position(|e| e.id == first_kept)
                .unwrap_or(at);
            std::iter::once(path[at])
                .chain(
                    path[kept_from..at]
                        .iter()
                        .copied()
                        .filter(|e| !e.message().is_some_and(is_system_message)),
                )
                .chain(path[at + 1..].iter().copied())
                .collect()
        }
    };
    let mut edits: HashMap<&str, Option<&ContextReplacement>> = HashMap::new();
    for entry in &selected {
        if let EntryKind::ContextEdit {
            target_id,
            replacement,
        } = &entry.kind
        {
            edits.insert(target_id.as_str(), replacement.as_ref());
        }
    }
    let mut messages = Vec::with_capacity(selected.len());
    for (n, entry) in selected.iter().enumerate() {
        // Only the latest compaction, placed first, contributes; an older one inside the kept
        // range adds nothing.
        if n > 0 && matches!(entry.kind, EntryKind::Compaction { .. }) {
            continue;
        }
        match edits.get(entry.id.as_str()) {
            None => push_messages(&mut messages, entry),
            Some(None) => {}
            Some(Some(replacement)) => {
                let mut own = Vec::new();
                push_messages(&mut own, entry);
                messages.extend(own.into_iter().map(|m| replace_content(m, replacement)));
            }
        }
    }
    messages
}

/// `message` with the content of a `context_edit` (pi's rule): user, assistant, tool-result and
/// custom messages take it (a string becomes one text block for assistant and tool-result
/// messages, whose content is always an array); other roles keep theirs. A replacement that does
/// not fit the role's content (an assistant block of an unknown type, say) is skipped with a
/// warning, and the message is sent as written.
fn replace_content(message: AgentMessage, replacement: &ContextReplacement) -> AgentMessage {
    let role = message.role().to_string();
    if !matches!(
        role.as_str(),
        "user" | "assistant" | "toolResult" | "custom"
    ) {
        return message;
    }
    let content = match &replacement.content {
        Value::String(text) if role == "assistant" || role == "toolResult" => {
            serde_json::json!([{ "type": "text", "text": text }])
        }
        other => other.clone(),
    };
    let edited = serde_json::to_value(&message).and_then(|mut value| {
        if let Value::Object(fields) = &mut value {
            fields.insert("content".into(), content);
        }
        AgentMessage::deserialize(value)
    });
    match edited {
        Ok(edited) => edited,
        Err(e) => {
            tracing::warn!(role, "a context edit's replacement does not fit the message; keeping the message as written: {e}");
            message
        }
    }
}

/// Appends what `entry` contributes to the conversation, if anything: a compaction its system
/// checkpoint (when it has one) and its summary.
fn push_messages(messages: &mut Vec<AgentMessage>, entry: &SessionEntry) {
    match &entry.kind {
        EntryKind::Compaction {
            summary,
            tokens_before,
            system_message,
            ..
        } => {
            if let Some(system) = system_message.as_ref().and_then(checkpoint_message) {
                messages.push(system);
            }
            messages.push(compaction_summary_message(
                summary,
                *tokens_before,
                &entry.timestamp,
            ));
        }
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

/// A compaction's `systemMessage` as a message: an object whose `role` is `system`. Anything
/// else (a hand-edited file) is left out of the context; the entry keeps it as written.
fn checkpoint_message(value: &Value) -> Option<AgentMessage> {
    match value {
        Value::Object(fields)
            if fields.get("role").and_then(Value::as_str) == Some(SYSTEM_ROLE) =>
        {
            Some(AgentMessage::Custom(CustomMessage::new(
                SYSTEM_ROLE,
                fields.clone(),
            )))
        }
        _ => None,
    }
}
