//! The current branch: the numbers of its entries from the root to the leaf, and, parsed, the
//! part of it the model's context is built from.
//!
//! That part starts at the first entry the branch's latest compaction keeps (at the compaction
//! itself when it keeps nothing on the branch), or at the root when nothing was compacted:
//! exactly the entries `context::messages_of` reads. Everything before it is only indexed and
//! is read back from the file when asked for. Appending at the leaf extends the part; a
//! compaction shortens it; moving the leaf elsewhere builds it again, reusing the entries
//! already parsed.

use std::collections::{HashMap, VecDeque};

use super::entry::{EntryKind, SessionEntry};
use super::error::SessionError;
use super::index::{EntryIndex, Tag};

/// The current branch (empty before the first entry or after a leaf reset).
#[derive(Debug, Default)]
pub(super) struct ActiveBranch {
    /// Entry numbers from the root to the leaf.
    path: Vec<u32>,
    /// Where in `path` the parsed part starts.
    start: usize,
    /// The entries of `path[start..]`, parsed.
    entries: Vec<SessionEntry>,
    /// Entry number → its place in `entries`, only when `path[start..]` is not in file order
    /// (a hand-made file); otherwise it is found by binary search.
    at: Option<HashMap<u32, usize>>,
}

impl ActiveBranch {
    /// The branch ending at `leaf`. Entries found in `parsed` are taken from there; the others
    /// are read from the file.
    pub fn build(
        index: &EntryIndex,
        leaf: Option<u32>,
        mut parsed: Parsed,
    ) -> Result<ActiveBranch, SessionError> {
        let Some(leaf) = leaf else {
            return Ok(ActiveBranch::default());
        };
        let path = index.path(leaf);
        let start = context_start(index, &path, |n| match parsed.get(n) {
            Some(entry) => Ok(entry.clone()),
            None => index.read(n),
        })?;
        let entries = if parsed.numbers.iter().eq(&path[start..]) {
            // What the file's reading kept is exactly this part: its buffer is taken over.
            let mut entries = Vec::from(parsed.entries);
            entries.shrink_to_fit();
            entries
        } else {
            let mut reader = index.reader();
            let mut entries = Vec::with_capacity(path.len() - start);
            for &n in &path[start..] {
                entries.push(match parsed.take(n) {
                    Some(entry) => entry,
                    None => reader.read(n)?,
                });
            }
            entries
        };
        let mut branch = ActiveBranch {
            path,
            start,
            entries,
            at: None,
        };
        branch.index_if_unordered();
        Ok(branch)
    }

    /// Builds `at` when the parsed part is not in increasing entry order.
    fn index_if_unordered(&mut self) {
        let part = &self.path[self.start..];
        if part.windows(2).all(|w| w[0] < w[1]) {
            self.at = None;
        } else {
            self.at = Some(part.iter().enumerate().map(|(i, &n)| (n, i)).collect());
        }
    }

    /// Gives back the parsed entries (to build another branch from).
    pub fn into_parsed(self) -> Parsed {
        let mut parsed = Parsed::default();
        for (n, entry) in self.path[self.start..].iter().copied().zip(self.entries) {
            parsed.push(n, entry);
        }
        parsed
    }

    /// The leaf's number.
    pub fn leaf(&self) -> Option<u32> {
        self.path.last().copied()
    }

    /// The leaf entry.
    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.entries.last()
    }

    /// Entry numbers from the root to the leaf.
    pub fn path(&self) -> &[u32] {
        &self.path
    }

    /// The parsed part: from where the context starts to the leaf.
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// Entry `n`, when it is in the parsed part.
    pub fn get(&self, n: u32) -> Option<&SessionEntry> {
        let i = match &self.at {
            Some(at) => *at.get(&n)?,
            None => self.path[self.start..].binary_search(&n).ok()?,
        };
        self.entries.get(i)
    }

    /// Appends entry `n`, a child of the leaf, which becomes the leaf. A compaction moves the
    /// start of the parsed part to what it keeps.
    pub fn push(&mut self, index: &EntryIndex, n: u32, entry: SessionEntry) {
        let compaction = matches!(entry.kind, EntryKind::Compaction { .. });
        let ordered = self.at.is_none() && self.path.last().is_none_or(|&last| last < n);
        self.path.push(n);
        self.entries.push(entry);
        match (&mut self.at, ordered) {
            (Some(at), _) => {
                at.insert(n, self.entries.len() - 1);
            }
            (None, true) => {}
            (None, false) => self.index_if_unordered(),
        }
        if !compaction {
            return;
        }
        let start = context_start(index, &self.path, |n| {
            self.get(n).cloned().ok_or(SessionError::EntryNotFound {
                id: index.id(n).to_string(),
            })
        })
        .unwrap_or(self.start);
        if start > self.start {
            self.entries.drain(..start - self.start);
            self.start = start;
            self.index_if_unordered();
        }
    }
}

/// Where in `path` the context starts: at the first entry the latest compaction keeps (looked
/// for before the compaction), at the compaction when that entry is not there, at the root
/// when there is no compaction. `read` gives an entry by number.
pub(super) fn context_start(
    index: &EntryIndex,
    path: &[u32],
    read: impl Fn(u32) -> Result<SessionEntry, SessionError>,
) -> Result<usize, SessionError> {
    let Some(at) = path.iter().rposition(|&n| index.tag(n) == Tag::Compaction) else {
        return Ok(0);
    };
    let compaction = read(path[at])?;
    let EntryKind::Compaction {
        first_kept_entry_id,
        ..
    } = &compaction.kind
    else {
        return Ok(at);
    };
    Ok(path[..at]
        .iter()
        .position(|&n| index.id(n) == first_kept_entry_id)
        .unwrap_or(at))
}

/// Entries already parsed, by number, in increasing order: what a branch is built from before
/// anything is read from the file. Branches are built in file order, so entries are taken from
/// the front.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    numbers: VecDeque<u32>,
    entries: VecDeque<SessionEntry>,
}

impl Parsed {
    /// Adds entry `n` (in order when `n` is the largest, as it is but in hand-made files).
    pub fn push(&mut self, n: u32, entry: SessionEntry) {
        match self.numbers.back() {
            Some(&last) if last >= n => {
                if let Err(at) = self.numbers.binary_search(&n) {
                    self.numbers.insert(at, n);
                    self.entries.insert(at, entry);
                }
            }
            _ => {
                self.numbers.push_back(n);
                self.entries.push_back(entry);
            }
        }
    }

    /// The smallest number held.
    pub fn first(&self) -> Option<u32> {
        self.numbers.front().copied()
    }

    /// The largest number held.
    pub fn last(&self) -> Option<u32> {
        self.numbers.back().copied()
    }

    /// True when entry `n` is held.
    pub fn contains(&self, n: u32) -> bool {
        self.numbers.binary_search(&n).is_ok()
    }

    /// Entry `n`.
    pub fn get(&self, n: u32) -> Option<&SessionEntry> {
        let at = self.numbers.binary_search(&n).ok()?;
        self.entries.get(at)
    }

    /// Takes entry `n`, dropping the smaller ones (they are not wanted any more when entries are
    /// taken in order).
    pub fn take(&mut self, n: u32) -> Option<SessionEntry> {
        self.drop_before(n);
        if self.numbers.front() != Some(&n) {
            return None;
        }
        self.numbers.pop_front();
        self.entries.pop_front()
    }

    /// Drops the entries below `n`.
    pub fn drop_before(&mut self, n: u32) {
        while self.numbers.front().is_some_and(|&m| m < n) {
            self.numbers.pop_front();
            self.entries.pop_front();
        }
    }

    /// Drops the entries above `n`.
    pub fn drop_after(&mut self, n: u32) {
        while self.numbers.back().is_some_and(|&m| m > n) {
            self.numbers.pop_back();
            self.entries.pop_back();
        }
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        self.numbers.clear();
        self.entries.clear();
    }
}
