//! Reading and moving around a session's tree: the leaf, paths, labels, the name, the model's
//! context, and forking a path into a session file of its own.
//!
//! Nothing here rewrites history: moving the leaf only changes where the next append goes, and
//! a fork writes a new file and leaves this one as it is.

use serde_json::Value;

use super::context::{build_context, path_indices, SessionContext};
use super::entry::{EntryKind, SessionEntry, SessionHeader};
use super::error::SessionError;
use super::ids::{new_entry_id, new_session_id};
use super::json::to_js_line;
use super::manager::{SessionManager, Store};
use super::paths::session_file_name;
use super::time::iso_now;

impl SessionManager {
    /// Every entry in file order (all branches).
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// The entry with `id`.
    pub fn entry(&self, id: &str) -> Option<&SessionEntry> {
        self.index.get(id).map(|&i| &self.entries[i])
    }

    /// The JSON line of entry `id`, as in the file.
    pub fn entry_line(&self, id: &str) -> Option<&str> {
        self.index.get(id).and_then(|&i| self.lines.get(i))
    }

    /// The id of the current leaf; `None` before the first entry (or after
    /// [`SessionManager::reset_leaf`]).
    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// The current leaf entry.
    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.leaf.as_deref().and_then(|id| self.entry(id))
    }

    /// The direct children of `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<&SessionEntry> {
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(id))
            .collect()
    }

    /// Moves the leaf to `id`: the next append starts a new branch there. Nothing is written.
    pub fn branch(&mut self, id: &str) -> Result<(), SessionError> {
        if !self.index.contains_key(id) {
            return Err(SessionError::EntryNotFound { id: id.to_string() });
        }
        self.leaf = Some(id.to_string());
        Ok(())
    }

    /// Moves the leaf before the first entry: the next append is a new root (used to re-edit
    /// the first message).
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// Moves the leaf to `id` (`None`: before the first entry) and appends there a
    /// `branch_summary` summarizing the branch being left, whose `fromId` is `id` (or `"root"`);
    /// `usage` is what writing the summary cost.
    /// Returns the summary entry's id, which becomes the leaf.
    pub fn branch_with_summary(
        &mut self,
        id: Option<&str>,
        summary: impl Into<String>,
        details: Option<Value>,
        from_hook: Option<bool>,
        usage: Option<Value>,
    ) -> Result<String, SessionError> {
        if let Some(id) = id {
            if !self.index.contains_key(id) {
                return Err(SessionError::EntryNotFound { id: id.to_string() });
            }
        }
        let kind = EntryKind::BranchSummary {
            from_id: id.unwrap_or("root").to_string(),
            summary: summary.into(),
            details,
            usage,
            from_hook,
        };
        self.append_under(kind, id.map(str::to_string))
    }

    /// The entries from the root to `id`, inclusive (empty when `id` is unknown).
    pub fn path_to(&self, id: &str) -> Vec<&SessionEntry> {
        match self.index.get(id) {
            Some(&leaf) => path_indices(&self.entries, &self.index, leaf)
                .into_iter()
                .map(|i| &self.entries[i])
                .collect(),
            None => Vec::new(),
        }
    }

    /// The entries from the root to the current leaf.
    pub fn branch_path(&self) -> Vec<&SessionEntry> {
        self.leaf
            .as_deref()
            .map_or(Vec::new(), |id| self.path_to(id))
    }

    /// The label on entry `id`, if any.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(String::as_str)
    }

    /// The session's name: the latest `session_info` entry with a non-empty name.
    pub fn session_name(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::SessionInfo { name: Some(name) } if !name.is_empty() => Some(name.as_str()),
            _ => None,
        })
    }

    /// The messages, thinking level and model at the current leaf (see `context.rs`).
    pub fn build_context(&self) -> SessionContext {
        build_context(&self.entries, &self.index, self.leaf.as_deref())
    }

    /// A new session holding the path from the root to `id` (the current leaf when `None`),
    /// like pi's "branched session": label entries on the path are dropped and each label that
    /// currently applies to a path entry is re-recorded after it. The new file goes in this
    /// session's folder with `parentSession` naming this file; it is written at once if it
    /// holds an assistant message and otherwise at its first one. This session is not changed.
    /// An in-memory session forks into an in-memory session.
    pub fn fork(&self, id: Option<&str>) -> Result<SessionManager, SessionError> {
        let leaf = match id.or(self.leaf.as_deref()) {
            Some(id) => *self
                .index
                .get(id)
                .ok_or_else(|| SessionError::EntryNotFound { id: id.to_string() })?,
            None => return Err(SessionError::NothingToFork),
        };
        let path: Vec<usize> = path_indices(&self.entries, &self.index, leaf)
            .into_iter()
            .filter(|&i| !matches!(self.entries[i].kind, EntryKind::Label { .. }))
            .collect();

        let parent_session = match &self.store {
            Store::Memory => None,
            _ => self
                .session_file()
                .map(|p| p.to_string_lossy().into_owned()),
        };
        let header = SessionHeader::new(
            new_session_id(),
            iso_now(),
            self.header.cwd.clone(),
            parent_session,
        );
        let store = match &self.store {
            Store::Memory => Store::Memory,
            _ => Store::Pending(
                self.session_dir
                    .join(session_file_name(&header.timestamp, &header.id)),
            ),
        };
        let mut fork =
            SessionManager::assemble(self.cwd.clone(), self.session_dir.clone(), header, store);
        for &i in &path {
            let line = self.lines.get(i).unwrap_or_default();
            fork.push(self.entries[i].clone(), line.into());
        }
        for (target, label) in self.ordered_labels() {
            if !fork.index.contains_key(&target) {
                continue;
            }
            let entry = SessionEntry {
                id: new_entry_id(|id| fork.index.contains_key(id)),
                parent_id: fork.leaf.clone(),
                timestamp: iso_now(),
                kind: EntryKind::Label {
                    target_id: target,
                    label: Some(label),
                },
            };
            let line = to_js_line(&entry)?;
            fork.push(entry, line.into());
        }
        if fork.has_assistant {
            fork.write_pending()?;
        }
        Ok(fork)
    }

    /// The labels in force, in the order a JavaScript `Map` fed by the label entries would hold
    /// them (first setting of a target; a cleared and re-set target moves to the end).
    fn ordered_labels(&self) -> Vec<(String, String)> {
        let mut ordered: Vec<(String, String)> = Vec::new();
        for entry in &self.entries {
            let EntryKind::Label { target_id, label } = &entry.kind else {
                continue;
            };
            let at = ordered.iter().position(|(t, _)| t == target_id);
            match (label.as_deref().filter(|l| !l.is_empty()), at) {
                (Some(l), Some(at)) => ordered[at].1 = l.to_string(),
                (Some(l), None) => ordered.push((target_id.clone(), l.to_string())),
                (None, Some(at)) => {
                    ordered.remove(at);
                }
                (None, None) => {}
            }
        }
        ordered
    }
}

/// The tree's links among `entries` (in file order): which entries are roots, and each entry's
/// children in file order. A child always follows its parent in the file; an entry naming a
/// later or unknown parent counts as a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeLinks {
    /// Indexes of the roots.
    pub roots: Vec<usize>,
    /// For each entry (by index), the indexes of its children.
    pub children: Vec<Vec<usize>>,
}

impl TreeLinks {
    /// The links of `entries`.
    pub fn of(entries: &[SessionEntry]) -> TreeLinks {
        let index: std::collections::HashMap<&str, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i))
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
        let mut roots = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            match entry.parent_id.as_deref().and_then(|p| index.get(p)) {
                Some(&parent) if parent < i => children[parent].push(i),
                _ => roots.push(i),
            }
        }
        TreeLinks { roots, children }
    }
}
