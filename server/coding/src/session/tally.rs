//! What the manager counts as entries arrive (when the file is read and at each append), so
//! that questions about the whole session — its name, its labels, its messages and token use —
//! are answered without reading every entry back.

use std::collections::HashMap;

use tandem_ai::{AssistantBlock, Usage};

use super::entry::{EntryKind, SessionEntry};

/// Counts over every entry of the session (all branches).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionTotals {
    /// `message` entries of any role.
    pub messages: u64,
    /// User messages.
    pub user_messages: u64,
    /// Assistant messages.
    pub assistant_messages: u64,
    /// Tool results.
    pub tool_results: u64,
    /// Tool calls in assistant messages.
    pub tool_calls: u64,
    /// The sum of every recorded model usage (see [`SessionEntry::recorded_usage`]), in file
    /// order.
    pub usage: Usage,
    /// How many entries recorded a usage (0: no model call yet).
    pub usage_records: u64,
}

/// The labels in force: each target's label, and the order a JavaScript `Map` fed by the
/// label entries would hold them in (first setting of a target; a cleared and re-set target
/// moves to the end). A counter per setting keeps that order without a quadratic list.
#[derive(Debug, Clone, Default)]
pub(super) struct Labels {
    by_target: HashMap<String, (u64, String)>,
    next: u64,
}

impl Labels {
    /// Applies a label entry.
    pub fn apply(&mut self, target: &str, label: Option<&str>) {
        match label.filter(|l| !l.is_empty()) {
            Some(label) => match self.by_target.get_mut(target) {
                Some((_, current)) => *current = label.to_string(),
                None => {
                    self.by_target
                        .insert(target.to_string(), (self.next, label.to_string()));
                    self.next += 1;
                }
            },
            None => {
                self.by_target.remove(target);
            }
        }
    }

    /// The label of `target`.
    pub fn get(&self, target: &str) -> Option<&str> {
        self.by_target.get(target).map(|(_, l)| l.as_str())
    }

    /// `(target, label)` in `Map` order.
    pub fn ordered(&self) -> Vec<(String, String)> {
        let mut all: Vec<(u64, &String, &String)> = self
            .by_target
            .iter()
            .map(|(t, (n, l))| (*n, t, l))
            .collect();
        all.sort_unstable_by_key(|(n, _, _)| *n);
        all.into_iter()
            .map(|(_, t, l)| (t.clone(), l.clone()))
            .collect()
    }
}

/// Everything counted.
#[derive(Debug, Clone, Default)]
pub(super) struct Tally {
    pub totals: SessionTotals,
    pub labels: Labels,
    /// The latest non-empty `session_info` name.
    pub name: Option<String>,
    /// Whether any entry is an assistant message (a new file is written at the first one).
    pub has_assistant: bool,
}

impl Tally {
    /// Counts `entry`.
    pub fn add(&mut self, entry: &SessionEntry) {
        let totals = &mut self.totals;
        match &entry.kind {
            EntryKind::Message { message } => {
                totals.messages += 1;
                match message {
                    tandem_agent::AgentMessage::Llm(tandem_ai::Message::User(_)) => {
                        totals.user_messages += 1
                    }
                    tandem_agent::AgentMessage::Llm(tandem_ai::Message::ToolResult(_)) => {
                        totals.tool_results += 1
                    }
                    tandem_agent::AgentMessage::Llm(tandem_ai::Message::Assistant(a)) => {
                        totals.assistant_messages += 1;
                        totals.tool_calls += a
                            .content
                            .iter()
                            .filter(|b| matches!(b, AssistantBlock::ToolCall(_)))
                            .count() as u64;
                    }
                    _ => {}
                }
            }
            EntryKind::Label { target_id, label } => {
                self.labels.apply(target_id, label.as_deref());
            }
            EntryKind::SessionInfo { name: Some(name) } if !name.is_empty() => {
                self.name = Some(name.clone());
            }
            _ => {}
        }
        if let Some(usage) = entry.recorded_usage() {
            totals.usage.add(&usage);
            totals.usage_records += 1;
        }
        self.has_assistant |= entry.is_assistant_message();
    }
}
