//! The index of a session's entries: where each entry's line is, its id, its parent and its
//! kind, in about 24 bytes plus the id's own bytes per entry. The entries themselves are read
//! back from the file when they are needed.
//!
//! A session of a million entries is a third of a gigabyte of JSON, and parsed into
//! `SessionEntry`s (strings, vectors, JSON values) it takes fifteen times that. The model only
//! sees the current branch from its latest compaction on, so that is all the manager keeps
//! parsed (`active.rs`); everything else is this index. Ids live in one string (not a `String`
//! each), looked up through a table of entry numbers; parents are entry numbers.
//!
//! Reading back relies on the file being append-only: the lines indexed stay where they were
//! while this process holds the file (`lock.rs`). A program that rewrites the file in place
//! anyway is noticed, because every line read back must parse as an entry with the id indexed
//! for it; the read then fails with [`SessionError::Reread`] instead of returning another
//! entry. Lines that are not in the file (entries of a migrated file, entries not written yet)
//! are kept as text.

use std::borrow::Cow;
use std::fs::File;
use std::hash::BuildHasher;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hashbrown::HashTable;

use super::entry::{EntryKind, SessionEntry};
use super::error::SessionError;
use super::wire::parse_entry_line;

/// No entry (a root's parent).
pub(super) const NONE: u32 = u32::MAX;

/// What an entry is, as far as the tree, labels, names and context building need to know
/// without parsing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tag {
    /// A `message` entry with a user message.
    User,
    /// A `message` entry with an assistant message.
    Assistant,
    /// A `message` entry with a tool result.
    ToolResult,
    /// A `message` entry with a message of another role (`bashExecution`, `custom`, `system`…).
    OtherMessage,
    ThinkingLevelChange,
    ModelChange,
    Compaction,
    BranchSummary,
    ContextEdit,
    Usage,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
    /// Kept verbatim ([`EntryKind::Unknown`]).
    Unknown,
}

impl Tag {
    /// The tag of `entry`.
    pub fn of(entry: &SessionEntry) -> Tag {
        match &entry.kind {
            EntryKind::Message { message } => match message.role() {
                "user" if message.as_llm().is_some() => Tag::User,
                "toolResult" if message.as_llm().is_some() => Tag::ToolResult,
                _ if message.as_assistant().is_some() => Tag::Assistant,
                _ => Tag::OtherMessage,
            },
            EntryKind::ThinkingLevelChange { .. } => Tag::ThinkingLevelChange,
            EntryKind::ModelChange { .. } => Tag::ModelChange,
            EntryKind::Compaction { .. } => Tag::Compaction,
            EntryKind::BranchSummary { .. } => Tag::BranchSummary,
            EntryKind::ContextEdit { .. } => Tag::ContextEdit,
            EntryKind::Usage { .. } => Tag::Usage,
            EntryKind::Custom { .. } => Tag::Custom,
            EntryKind::CustomMessage { .. } => Tag::CustomMessage,
            EntryKind::Label { .. } => Tag::Label,
            EntryKind::SessionInfo { .. } => Tag::SessionInfo,
            EntryKind::Unknown(_) => Tag::Unknown,
        }
    }
}

/// Where an entry's line is: in the source file, or kept as text.
#[derive(Debug, Clone, Copy)]
pub(super) enum Loc {
    /// `len` bytes at `offset` of the source file.
    File { offset: u64, len: u32 },
    /// The `n`th kept line.
    Kept(u32),
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The file offset, or the kept line's number.
    at: u64,
    /// The line's length in the file (unused for a kept line).
    len: u32,
    /// The parent's entry number, or [`NONE`].
    parent: u32,
    /// Where the id starts in `EntryIndex::ids` (it ends where the next one starts).
    id_start: u32,
    tag: Tag,
    kept: bool,
}

/// A session file entries are read back from (opened for reading; shared with forks, which
/// copy their lines from it).
#[derive(Debug)]
pub(super) struct Source {
    path: PathBuf,
    file: File,
}

impl Source {
    /// Opens `path` for reading.
    pub fn open(path: &Path) -> Result<Source, SessionError> {
        let file = File::open(path).map_err(|source| SessionError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Source {
            path: path.to_path_buf(),
            file,
        })
    }

    /// The file.
    pub fn file(&self) -> &File {
        &self.file
    }
}

/// Every entry of a session, in file order, by number.
#[derive(Debug, Default)]
pub(super) struct EntryIndex {
    source: Option<Arc<Source>>,
    slots: Vec<Slot>,
    ids: String,
    table: HashTable<u32>,
    hasher: std::collections::hash_map::RandomState,
    kept: Vec<Box<str>>,
}

impl EntryIndex {
    /// An index whose file lines are read from `source`.
    pub fn with_source(source: Option<Arc<Source>>) -> EntryIndex {
        EntryIndex {
            source,
            ..EntryIndex::default()
        }
    }

    /// The file lines are read from.
    pub fn source(&self) -> Option<&Arc<Source>> {
        self.source.as_ref()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Room for `n` more entries.
    pub fn reserve(&mut self, n: usize) {
        self.slots.reserve(n);
        let (slots, ids, hasher) = (&self.slots, &self.ids, &self.hasher);
        self.table
            .reserve(n, |&i| hasher.hash_one(id_of(slots, ids, i)));
    }

    /// Entry `i`'s id.
    pub fn id(&self, i: u32) -> &str {
        id_of(&self.slots, &self.ids, i)
    }

    /// Entry `i`'s parent.
    pub fn parent(&self, i: u32) -> Option<u32> {
        Some(self.slots[i as usize].parent).filter(|&p| p != NONE)
    }

    /// Entry `i`'s tag.
    pub fn tag(&self, i: u32) -> Tag {
        self.slots[i as usize].tag
    }

    /// The entry with `id` (the last one, should the file repeat an id).
    pub fn find(&self, id: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(id);
        self.table.find(hash, |&i| self.id(i) == id).copied()
    }

    /// True when an entry has `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.find(id).is_some()
    }

    /// Adds an entry; returns its number. A repeated id makes the new entry the one found by
    /// that id, as the last line with an id wins when the file is read.
    pub fn push(
        &mut self,
        id: &str,
        parent: Option<u32>,
        tag: Tag,
        loc: Loc,
    ) -> Result<u32, SessionError> {
        let n = u32::try_from(self.slots.len())
            .ok()
            .filter(|&n| n != NONE)
            .ok_or(SessionError::TooLarge)?;
        let id_start = u32::try_from(self.ids.len())
            .ok()
            .filter(|start| {
                (*start as usize)
                    .checked_add(id.len())
                    .is_some_and(|e| e <= u32::MAX as usize)
            })
            .ok_or(SessionError::TooLarge)?;
        let (at, len, kept) = match loc {
            Loc::File { offset, len } => (offset, len, false),
            Loc::Kept(k) => (u64::from(k), 0, true),
        };
        self.ids.push_str(id);
        self.slots.push(Slot {
            at,
            len,
            parent: parent.unwrap_or(NONE),
            id_start,
            tag,
            kept,
        });
        let hash = self.hasher.hash_one(id);
        let (slots, ids, hasher) = (&self.slots, &self.ids, &self.hasher);
        match self.table.entry(
            hash,
            |&i| id_of(slots, ids, i) == id,
            |&i| hasher.hash_one(id_of(slots, ids, i)),
        ) {
            hashbrown::hash_table::Entry::Occupied(mut at) => *at.get_mut() = n,
            hashbrown::hash_table::Entry::Vacant(at) => {
                at.insert(n);
            }
        }
        Ok(n)
    }

    /// Keeps `line` as text; returns where, for [`Loc::Kept`].
    pub fn keep(&mut self, line: Box<str>) -> Result<Loc, SessionError> {
        let k = u32::try_from(self.kept.len()).map_err(|_| SessionError::TooLarge)?;
        self.kept.push(line);
        Ok(Loc::Kept(k))
    }

    /// Makes `source` the file lines are read from, entry `i`'s line being `spans[i]` (offset
    /// and length) in it; the lines kept as text are dropped. A span whose length does not fit
    /// leaves every line where it was.
    pub fn rebase(&mut self, source: Arc<Source>, spans: &[(u64, u32)]) {
        if spans.len() != self.slots.len() || spans.iter().any(|(_, len)| *len == u32::MAX) {
            return;
        }
        for (slot, &(offset, len)) in self.slots.iter_mut().zip(spans) {
            *slot = Slot {
                at: offset,
                len,
                kept: false,
                ..*slot
            };
        }
        self.kept = Vec::new();
        self.source = Some(source);
    }

    /// Sets entry `i`'s parent.
    pub fn set_parent(&mut self, i: u32, parent: Option<u32>) {
        self.slots[i as usize].parent = parent.unwrap_or(NONE);
    }

    /// Where entry `i`'s line is.
    pub fn loc(&self, i: u32) -> Loc {
        let slot = &self.slots[i as usize];
        if slot.kept {
            Loc::Kept(slot.at as u32)
        } else {
            Loc::File {
                offset: slot.at,
                len: slot.len,
            }
        }
    }

    /// The kept line `k`.
    pub fn kept_line(&self, k: u32) -> &str {
        &self.kept[k as usize]
    }

    /// Entry `i`'s JSON line, as in the file (checked to still be that entry's).
    pub fn line(&self, i: u32) -> Result<Cow<'_, str>, SessionError> {
        let line = self.raw_line(i)?;
        self.check(i, &line)?;
        Ok(line)
    }

    fn raw_line(&self, i: u32) -> Result<Cow<'_, str>, SessionError> {
        match self.loc(i) {
            Loc::Kept(k) => Ok(Cow::Borrowed(self.kept_line(k))),
            Loc::File { offset, len } => {
                let source = self
                    .source
                    .as_ref()
                    .ok_or_else(|| self.reread(i, "no file"))?;
                let mut bytes = vec![0; len as usize];
                source
                    .file
                    .read_exact_at(&mut bytes, offset)
                    .map_err(|e| self.reread(i, &e.to_string()))?;
                Ok(Cow::Owned(match String::from_utf8(bytes) {
                    Ok(text) => text,
                    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                }))
            }
        }
    }

    /// Entry `i`, parsed from its line.
    pub fn read(&self, i: u32) -> Result<SessionEntry, SessionError> {
        let line = self.raw_line(i)?;
        self.parse(i, &line)
    }

    /// Checks that `line` is still entry `i`'s: its `id` is the one indexed (a light parse,
    /// which skips the rest of the object without building it).
    fn check(&self, i: u32, line: &str) -> Result<(), SessionError> {
        if matches!(self.loc(i), Loc::Kept(_)) {
            return Ok(());
        }
        #[derive(serde::Deserialize)]
        struct Id<'a> {
            #[serde(borrow)]
            id: Cow<'a, str>,
        }
        match serde_json::from_str::<Id>(line) {
            Ok(found) if found.id == self.id(i) => Ok(()),
            Ok(found) => Err(self.reread(i, &format!("found entry {:?} there instead", found.id))),
            Err(e) => Err(self.reread(i, &e.to_string())),
        }
    }

    /// Entry `i` from its `line`, checked to be the entry indexed.
    pub fn parse(&self, i: u32, line: &str) -> Result<SessionEntry, SessionError> {
        let entry = parse_entry_line(line).map_err(|e| self.reread(i, &e.to_string()))?;
        if entry.id != self.id(i) {
            return Err(self.reread(i, &format!("found entry {:?} there instead", entry.id)));
        }
        Ok(entry)
    }

    /// A reader for many entries in file order (one read per 256 KiB rather than per line).
    pub fn reader(&self) -> SequentialReader<'_> {
        SequentialReader {
            index: self,
            buf: Vec::new(),
            buf_start: 0,
        }
    }

    fn reread(&self, i: u32, reason: &str) -> SessionError {
        SessionError::Reread {
            path: self
                .source
                .as_ref()
                .map(|s| s.path.clone())
                .unwrap_or_default(),
            id: self.id(i).to_string(),
            reason: reason.to_string(),
        }
    }

    /// The entries from the root to `leaf`, inclusive. A chain ends at a missing parent, and a
    /// cycle (a hand-made file) is cut where it comes back on itself.
    pub fn path(&self, leaf: u32) -> Vec<u32> {
        let mut path = vec![leaf];
        let mut seen: Option<Vec<u64>> = None;
        let mut current = leaf;
        while let Some(parent) = self.parent(current) {
            // A parent later in the file only happens in hand-made files: only then can the
            // chain loop, so only then is it tracked.
            if parent >= current || seen.is_some() {
                let seen = seen.get_or_insert_with(|| {
                    let mut bits = vec![0u64; self.slots.len().div_ceil(64)];
                    for &p in &path {
                        bits[p as usize / 64] |= 1 << (p % 64);
                    }
                    bits
                });
                let (word, bit) = (parent as usize / 64, 1u64 << (parent % 64));
                if seen[word] & bit != 0 {
                    break;
                }
                seen[word] |= bit;
            }
            path.push(parent);
            current = parent;
        }
        path.reverse();
        path
    }
}

fn id_of<'a>(slots: &[Slot], ids: &'a str, i: u32) -> &'a str {
    let start = slots[i as usize].id_start as usize;
    let end = slots
        .get(i as usize + 1)
        .map_or(ids.len(), |s| s.id_start as usize);
    &ids[start..end]
}

/// Reads entries' lines in increasing file order through a window of the file.
pub(super) struct SequentialReader<'a> {
    index: &'a EntryIndex,
    buf: Vec<u8>,
    buf_start: u64,
}

impl<'a> SequentialReader<'a> {
    const CHUNK: usize = 256 << 10;

    /// Entry `i`'s line (checked to still be that entry's).
    pub fn line(&mut self, i: u32) -> Result<Cow<'_, str>, SessionError> {
        let index = self.index;
        let line = self.raw_line(i)?;
        index.check(i, &line)?;
        Ok(line)
    }

    fn raw_line(&mut self, i: u32) -> Result<Cow<'_, str>, SessionError> {
        let (offset, len) = match self.index.loc(i) {
            Loc::Kept(k) => return Ok(Cow::Borrowed(self.index.kept_line(k))),
            Loc::File { offset, len } => (offset, len as usize),
        };
        let end = offset + len as u64;
        let inside = offset >= self.buf_start && end <= self.buf_start + self.buf.len() as u64;
        if !inside {
            let source = self
                .index
                .source
                .as_ref()
                .ok_or_else(|| self.index.reread(i, "no file"))?;
            let want = len.max(Self::CHUNK);
            self.buf.resize(want, 0);
            let got = read_up_to(source, &mut self.buf, offset)
                .map_err(|e| self.index.reread(i, &e.to_string()))?;
            self.buf.truncate(got);
            self.buf_start = offset;
            if got < len {
                return Err(self
                    .index
                    .reread(i, "the file is shorter than when it was read"));
            }
        }
        let from = (offset - self.buf_start) as usize;
        Ok(String::from_utf8_lossy(&self.buf[from..from + len]))
    }

    /// Entry `i`, parsed.
    pub fn read(&mut self, i: u32) -> Result<SessionEntry, SessionError> {
        let index = self.index;
        let line = self.raw_line(i)?;
        index.parse(i, &line)
    }
}

/// Reads as much of `buf` as the file has at `offset`.
fn read_up_to(source: &Source, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match source.file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
