//! Reading and moving around a session's tree: the leaf, paths, labels, the name, the model's
//! context, and forking a path into a session file of its own.
//!
//! Nothing here rewrites history: moving the leaf only changes where the next append goes, and
//! a fork writes a new file and leaves this one as it is. Entries outside the current branch's
//! context part are read back from the file (see `index.rs`); such reads are owned
//! ([`Cow::Owned`]), the parsed part is lent.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::active::{context_start, ActiveBranch, Parsed};
use super::context::{messages_of, model_of, thinking_level_of, SessionContext};
use super::entry::{EntryKind, SessionEntry, SessionHeader};
use super::error::SessionError;
use super::ids::{new_entry_id, new_session_id};
use super::index::{EntryIndex, Tag};
use super::iter::Entries;
use super::json::to_js_line;
use super::manager::{SessionManager, Store};
use super::paths::session_file_name;
use super::tally::SessionTotals;
use super::time::iso_now;

impl SessionManager {
    /// Every entry in file order (all branches), read back from the file as they are
    /// iterated: walking a large session costs time, not memory.
    pub fn entries(&self) -> Entries<'_> {
        Entries::new(self)
    }

    /// The number of entries (all branches).
    pub fn entry_count(&self) -> usize {
        self.index.len()
    }

    /// The entries from number `first` on, in file order (what was appended since a reader
    /// saw `first` of them).
    pub fn entries_from(&self, first: usize) -> Vec<SessionEntry> {
        let first = u32::try_from(first).unwrap_or(u32::MAX);
        let count = u32::try_from(self.index.len()).unwrap_or(u32::MAX);
        (first..count)
            .filter_map(|n| self.entry_at(n).map(Cow::into_owned))
            .collect()
    }

    /// The entry with `id` (read back from the file unless it is in the current branch's
    /// context part; `None` also when it cannot be read back, which is logged).
    pub fn entry(&self, id: &str) -> Option<Cow<'_, SessionEntry>> {
        self.index.find(id).and_then(|n| self.entry_at(n))
    }

    /// Entry number `n`, as [`SessionManager::entry`] gives it.
    pub(super) fn entry_at(&self, n: u32) -> Option<Cow<'_, SessionEntry>> {
        if let Some(entry) = self.active.get(n) {
            return Some(Cow::Borrowed(entry));
        }
        match self.index.read(n) {
            Ok(entry) => Some(Cow::Owned(entry)),
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        }
    }

    /// The JSON line of entry `id`, as in the file.
    pub fn entry_line(&self, id: &str) -> Option<Cow<'_, str>> {
        let n = self.index.find(id)?;
        match self.index.line(n) {
            Ok(line) => Some(line),
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        }
    }

    /// The id of the current leaf; `None` before the first entry (or after
    /// [`SessionManager::reset_leaf`]).
    pub fn leaf(&self) -> Option<&str> {
        self.active.leaf().map(|n| self.index.id(n))
    }

    /// The current leaf entry.
    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.active.leaf_entry()
    }

    /// The direct children of `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<Cow<'_, SessionEntry>> {
        let Some(parent) = self.index.find(id) else {
            return Vec::new();
        };
        (0..self.index.len() as u32)
            .filter(|&n| self.index.parent(n) == Some(parent))
            .filter_map(|n| self.entry_at(n))
            .collect()
    }

    /// Moves the leaf to `id`: the next append starts a new branch there. Nothing is written.
    pub fn branch(&mut self, id: &str) -> Result<(), SessionError> {
        let n = self
            .index
            .find(id)
            .ok_or_else(|| SessionError::EntryNotFound { id: id.to_string() })?;
        let parsed = std::mem::take(&mut self.active).into_parsed();
        self.active = ActiveBranch::build(&self.index, Some(n), parsed)?;
        Ok(())
    }

    /// Moves the leaf before the first entry: the next append is a new root (used to re-edit
    /// the first message).
    pub fn reset_leaf(&mut self) {
        self.active = ActiveBranch::default();
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
            if !self.index.contains(id) {
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

    /// The entries from the root to `id`, inclusive (empty when `id` is unknown). Entries off
    /// the current branch's context part are read back from the file.
    pub fn path_to(&self, id: &str) -> Vec<Cow<'_, SessionEntry>> {
        match self.index.find(id) {
            Some(n) => self.read_all(&self.index.path(n)),
            None => Vec::new(),
        }
    }

    /// The entries left behind when the leaf moves from `old_leaf` to `target` (`None`: before
    /// the first entry), oldest first: `old_leaf`'s path back to, not including, the deepest
    /// entry both paths share (as [`crate::compaction::entries_left`] finds them). Only those
    /// are read.
    pub fn entries_left(&self, old_leaf: &str, target: Option<&str>) -> Vec<SessionEntry> {
        let Some(old) = self.index.find(old_leaf) else {
            return Vec::new();
        };
        let old_path = self.index.path(old);
        let target_path = target
            .and_then(|t| self.index.find(t))
            .map(|n| self.index.path(n))
            .unwrap_or_default();
        let shared = old_path
            .iter()
            .zip(&target_path)
            .take_while(|(a, b)| a == b)
            .count();
        self.read_all(&old_path[shared..])
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    }

    /// The entries from the root to the current leaf (read back from the file before the
    /// context part: [`SessionManager::active_branch`] is what is in memory).
    pub fn branch_path(&self) -> Vec<Cow<'_, SessionEntry>> {
        self.read_all(self.active.path())
    }

    /// The part of the current branch the model's context is built from, from the first entry
    /// its latest compaction keeps (the root when nothing was compacted) to the leaf: what a
    /// compaction, a turn's checkpoint or a retry looks at.
    pub fn active_branch(&self) -> &[SessionEntry] {
        self.active.entries()
    }

    /// The entries of the current branch after entry `id`, oldest first: the whole branch
    /// when `id` is `None` or not on it.
    pub fn branch_since(&self, id: Option<&str>) -> Vec<Cow<'_, SessionEntry>> {
        let path = self.active.path();
        let from = id
            .and_then(|id| self.branch_position(id))
            .map_or(0, |at| at + 1);
        self.read_all(&path[from.min(path.len())..])
    }

    /// Where entry `id` is on the current branch (0 = the root).
    pub fn branch_position(&self, id: &str) -> Option<usize> {
        let n = self.index.find(id)?;
        self.active.path().iter().rposition(|&m| m == n)
    }

    /// The current branch's entries of type `type_name` (`"custom"`, `"message"`, …), oldest
    /// first, each with its position on the branch (0 = the root). Only those are read.
    pub fn branch_entries_of_type(&self, type_name: &str) -> Vec<(usize, Cow<'_, SessionEntry>)> {
        let path = self.active.path();
        let wanted: Vec<usize> = (0..path.len())
            .filter(|&at| tag_type(self.index.tag(path[at])) == Some(type_name))
            .collect();
        let numbers: Vec<u32> = wanted.iter().map(|&at| path[at]).collect();
        wanted
            .into_iter()
            .zip(self.read_each(&numbers))
            .filter_map(|(at, e)| Some((at, e?)))
            .filter(|(_, e)| e.kind.type_name() == type_name)
            .collect()
    }

    /// Entries `path`, in order; those off the context part are read from the file, a buffer
    /// at a time. An entry that cannot be read back is left out (and logged).
    fn read_all(&self, path: &[u32]) -> Vec<Cow<'_, SessionEntry>> {
        self.read_each(path).into_iter().flatten().collect()
    }

    /// Entries `path`, in order, each `None` when it cannot be read back (logged).
    fn read_each(&self, path: &[u32]) -> Vec<Option<Cow<'_, SessionEntry>>> {
        let mut reader = self.index.reader();
        path.iter()
            .map(|&n| match self.active.get(n) {
                Some(entry) => Some(Cow::Borrowed(entry)),
                None => match reader.read(n) {
                    Ok(entry) => Some(Cow::Owned(entry)),
                    Err(e) => {
                        tracing::warn!("{e}");
                        None
                    }
                },
            })
            .collect()
    }

    /// The label on entry `id`, if any.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.tally.labels.get(id)
    }

    /// The session's name: the latest `session_info` entry with a non-empty name.
    pub fn session_name(&self) -> Option<&str> {
        self.tally.name.as_deref()
    }

    /// Message counts and model usage over every entry of the session (all branches).
    pub fn totals(&self) -> &SessionTotals {
        &self.tally.totals
    }

    /// The messages, thinking level and model at the current leaf (see `context.rs`).
    pub fn build_context(&self) -> SessionContext {
        if self.active.leaf().is_none() {
            return SessionContext::empty();
        }
        let window: Vec<&SessionEntry> = self.active.entries().iter().collect();
        // The latest setting on the whole branch, which may be older than the context part.
        let latest = |wanted: &dyn Fn(Tag) -> bool| {
            let n = *self
                .active
                .path()
                .iter()
                .rev()
                .find(|&&n| wanted(self.index.tag(n)))?;
            self.entry_at(n)
        };
        SessionContext {
            messages: messages_of(&window),
            thinking_level: latest(&|t| t == Tag::ThinkingLevelChange)
                .and_then(|e| thinking_level_of(&e))
                .unwrap_or(tandem_ai::ThinkingLevel::Off),
            model: latest(&|t| matches!(t, Tag::ModelChange | Tag::Assistant))
                .and_then(|e| model_of(&e)),
        }
    }

    /// A new session holding the path from the root to `id` (the current leaf when `None`),
    /// like pi's "branched session": label entries on the path are dropped and each label that
    /// currently applies to a path entry is re-recorded after it. The new file goes in this
    /// session's folder with `parentSession` naming this file; it is written at once if it
    /// holds an assistant message and otherwise at its first one. This session is not changed.
    /// An in-memory session forks into an in-memory session. The fork's lines are this
    /// session's own, copied from its file when the fork's file is written.
    pub fn fork(&self, id: Option<&str>) -> Result<SessionManager, SessionError> {
        let leaf = match id.or(self.leaf()) {
            Some(id) => self
                .index
                .find(id)
                .ok_or_else(|| SessionError::EntryNotFound { id: id.to_string() })?,
            None => return Err(SessionError::NothingToFork),
        };
        let path: Vec<u32> = self
            .index
            .path(leaf)
            .into_iter()
            .filter(|&n| self.index.tag(n) != Tag::Label)
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
        fork.index = EntryIndex::with_source(self.index.source().cloned());
        fork.index.reserve(path.len());
        // Every entry is parsed once to be counted; those of the fork's context part are kept.
        let start = context_start(&self.index, &path, |n| {
            self.entry_at(n)
                .map(Cow::into_owned)
                .ok_or_else(|| SessionError::EntryNotFound {
                    id: self.index.id(n).to_string(),
                })
        })?;
        let mut parsed = Parsed::default();
        let mut reader = self.index.reader();
        for (at, &n) in path.iter().enumerate() {
            let entry = match self.active.get(n) {
                Some(entry) => entry.clone(),
                None => reader.read(n)?,
            };
            let loc = match self.index.loc(n) {
                super::index::Loc::Kept(k) => fork.index.keep(self.index.kept_line(k).into())?,
                file => file,
            };
            let parent = entry.parent_id.as_deref().and_then(|p| fork.index.find(p));
            let m = fork.index.push(&entry.id, parent, Tag::of(&entry), loc)?;
            fork.tally.add(&entry);
            if at >= start {
                parsed.push(m, entry);
            }
        }
        let fork_leaf = fork.index.len().checked_sub(1).map(|n| n as u32);
        fork.active = ActiveBranch::build(&fork.index, fork_leaf, parsed)?;
        for (target, label) in self.tally.labels.ordered() {
            if !fork.index.contains(&target) {
                continue;
            }
            let entry = SessionEntry {
                id: new_entry_id(|id| fork.index.contains(id)),
                parent_id: fork.leaf().map(str::to_string),
                timestamp: iso_now(),
                kind: EntryKind::Label {
                    target_id: target,
                    label: Some(label),
                },
            };
            let line = to_js_line(&entry)?;
            fork.push(entry, line, None)?;
        }
        if fork.tally.has_assistant {
            fork.write_pending()?;
        }
        Ok(fork)
    }
}

/// The `type` of entries with `tag` (`None` for entries kept verbatim, whose type is their
/// own).
fn tag_type(tag: Tag) -> Option<&'static str> {
    Some(match tag {
        Tag::User | Tag::Assistant | Tag::ToolResult | Tag::OtherMessage => "message",
        Tag::ThinkingLevelChange => "thinking_level_change",
        Tag::ModelChange => "model_change",
        Tag::Compaction => "compaction",
        Tag::BranchSummary => "branch_summary",
        Tag::ContextEdit => "context_edit",
        Tag::Usage => "usage",
        Tag::Custom => "custom",
        Tag::CustomMessage => "custom_message",
        Tag::Label => "label",
        Tag::SessionInfo => "session_info",
        Tag::Unknown => return None,
    })
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
        let index: HashMap<&str, usize> = entries
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
