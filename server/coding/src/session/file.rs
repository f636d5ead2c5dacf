//! Reading a session file: strict about the header, forgiving below it.
//!
//! A torn or garbage line is skipped and reported in [`LoadReport`], but a file whose first
//! line is not a session header is an error, because the only way pi "repairs" such a file is
//! to overwrite it, and the bytes may be someone's only copy of a conversation.
//!
//! The file is read through a fixed buffer, one line at a time (`scan.rs`), and each entry is
//! handed on as soon as it is parsed: [`index_session_file`] keeps an index of where every
//! entry is plus the last ones parsed (what a session opens with), [`load_session_file`] keeps
//! every entry (for tools and tests). A version 1 or 2 file is the exception: its entries are
//! migrated together, in memory (such files are small and rare), and their migrated lines are
//! kept as text. Writing is `writer.rs`'s. Blocking I/O.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use super::active::Parsed;
use super::entry::{EntryKind, SessionEntry, SessionHeader};
use super::error::SessionError;
use super::index::{EntryIndex, Loc, Source, Tag};
use super::json::to_js_line;
use super::lines::EntryLines;
use super::migrate::migrate_entries;
use super::scan::{Scanner, MAX_LINE};
use super::tally::Tally;
use super::wire::{entry_from_map, parse_entry_line};

pub use super::writer::SessionWriter;

/// A line that was not loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based line number in the file.
    pub line: usize,
    /// Why it was skipped.
    pub reason: String,
}

/// What loading found besides the entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Lines skipped as torn, malformed, id-less or too long.
    pub skipped: Vec<SkippedLine>,
    /// Entries kept verbatim because their type is unknown or their shape unreadable.
    pub kept_verbatim: usize,
    /// The header's version when the entries were migrated in memory (1 or 2).
    pub migrated_from: Option<u32>,
}

/// A session file loaded whole.
#[derive(Debug, Clone)]
pub struct LoadedFile {
    /// The header as written in the file.
    pub header: SessionHeader,
    /// The entries in file order (migrated to version 3 when the file is older).
    pub entries: Vec<SessionEntry>,
    /// Each entry's JSON text: the file's own line for a current file, the migrated object for
    /// an older one.
    pub lines: EntryLines,
    /// Skipped lines and the like.
    pub report: LoadReport,
    /// False when the last byte is not `\n` (a torn last line): the next append must start a
    /// new line.
    pub ends_with_newline: bool,
    /// The number of bytes read: where the file ended when it was loaded.
    pub len: u64,
}

/// Reads and parses the whole session file at `path` (blocking). A session is opened with
/// [`index_session_file`] instead, which keeps only an index and the last entries.
pub fn load_session_file(path: &Path) -> Result<LoadedFile, SessionError> {
    let mut entries = Vec::new();
    let mut lines = EntryLines::default();
    let end = read_session_file(path, |read| {
        lines.push_text(read.line);
        entries.push(read.entry);
        Ok(())
    })?;
    Ok(LoadedFile {
        header: end.header,
        entries,
        lines,
        report: end.report,
        ends_with_newline: end.ends_with_newline,
        len: end.len,
    })
}

/// A session file read into an index.
#[derive(Debug)]
pub(super) struct IndexedFile {
    pub header: SessionHeader,
    pub index: EntryIndex,
    pub tally: Tally,
    pub report: LoadReport,
    pub ends_with_newline: bool,
    pub len: u64,
    /// The entries read last, parsed: the branch of the last entry read, from its latest
    /// compaction's kept entries on. The current branch is built from them without reading
    /// them again.
    pub recent: Parsed,
}

/// Reads the session file at `path` into an index of its entries (blocking): each entry is
/// parsed once, counted ([`Tally`]) and dropped, except those of the context part of the
/// branch being read (see [`IndexedFile::recent`]): what the session opens with, unless a
/// later branch leaves them. The file stays open for reading entries back.
pub(super) fn index_session_file(path: &Path) -> Result<IndexedFile, SessionError> {
    let source = std::sync::Arc::new(Source::open(path)?);
    let mut index = EntryIndex::with_source(Some(source.clone()));
    let mut tally = Tally::default();
    let mut recent = Parsed::default();
    // A parent is the last entry with its id, as if every id were known first: one named
    // before it is defined (hand-made files only) waits in `pending`, and a repeated id is
    // noted so that the children of its earlier entries move to its last one at the end.
    let mut pending: Vec<(u32, String)> = Vec::new();
    let mut repeated: HashSet<String> = HashSet::new();
    let end = read_from(path, source.file(), |read| {
        let entry = read.entry;
        tally.add(&entry);
        let loc = match read.span {
            Some((offset, len)) => Loc::File { offset, len },
            None => index.keep(read.line.into())?,
        };
        let parent = entry.parent_id.as_deref().map(|p| (p, index.find(p)));
        if index.contains(&entry.id) {
            repeated.insert(entry.id.clone());
        }
        let n = index.push(&entry.id, parent.and_then(|(_, n)| n), Tag::of(&entry), loc)?;
        if let Some((p, None)) = parent {
            pending.push((n, p.to_string()));
        }
        keep_branch(&mut recent, &index, index.parent(n));
        if let EntryKind::Compaction {
            first_kept_entry_id,
            ..
        } = &entry.kind
        {
            let kept = index.find(first_kept_entry_id).filter(|&k| k < n);
            recent.drop_before(kept.unwrap_or(n));
        }
        recent.push(n, entry);
        Ok(())
    })?;
    for (n, parent) in pending {
        let parent = index.find(&parent);
        index.set_parent(n, parent);
    }
    if !repeated.is_empty() {
        for n in 0..index.len() as u32 {
            let Some(parent) = index.parent(n) else {
                continue;
            };
            if repeated.contains(index.id(parent)) {
                let last = index.find(index.id(parent));
                index.set_parent(n, last);
            }
        }
    }
    Ok(IndexedFile {
        header: end.header,
        index,
        tally,
        report: end.report,
        ends_with_newline: end.ends_with_newline,
        len: end.len,
        recent,
    })
}

/// Before an entry whose parent is `parent` joins `recent` (the branch read so far): when it
/// does not continue that branch, keeps only the entries its own branch shares. Its ancestors
/// are looked for a bounded number of steps (a hostile file could make every entry jump
/// between two long branches); past that the cache is dropped, and what the session needs is
/// read back from the file instead.
fn keep_branch(recent: &mut Parsed, index: &EntryIndex, parent: Option<u32>) {
    const STEPS: usize = 4096;
    let (Some(first), Some(last)) = (recent.first(), recent.last()) else {
        return;
    };
    let mut at = parent;
    for _ in 0..STEPS {
        match at {
            Some(p) if p == last => return,
            Some(p) if recent.contains(p) => {
                recent.drop_after(p);
                return;
            }
            Some(p) if (first..last).contains(&p) => at = index.parent(p),
            _ => break,
        }
    }
    recent.clear();
}

/// One entry as read.
pub(super) struct ReadEntry<'a> {
    pub entry: SessionEntry,
    /// The entry's JSON text: its line, or the migrated object of an older file.
    pub line: &'a str,
    /// The line's offset and length in the file; `None` for a migrated entry.
    pub span: Option<(u64, u32)>,
}

/// What reading found besides the entries.
pub(super) struct ReadEnd {
    pub header: SessionHeader,
    pub report: LoadReport,
    pub ends_with_newline: bool,
    pub len: u64,
}

/// Reads the session file at `path`, giving each entry to `each` in file order.
pub(super) fn read_session_file(
    path: &Path,
    each: impl FnMut(ReadEntry<'_>) -> Result<(), SessionError>,
) -> Result<ReadEnd, SessionError> {
    let file = std::fs::File::open(path).map_err(|source| SessionError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    read_from(path, &file, each)
}

fn read_from(
    path: &Path,
    file: &std::fs::File,
    mut each: impl FnMut(ReadEntry<'_>) -> Result<(), SessionError>,
) -> Result<ReadEnd, SessionError> {
    let read_err = |source| SessionError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut scanner = Scanner::new(file);
    let header = loop {
        let Some(line) = scanner.next_line().map_err(read_err)? else {
            return Err(SessionError::Empty {
                path: path.to_path_buf(),
            });
        };
        let reason = match line.text.as_deref() {
            Some("") => continue,
            Some(text) => match parse_header(text) {
                Ok(header) => break header,
                Err(reason) => reason,
            },
            None => format!("the first line is longer than {} MiB", MAX_LINE >> 20),
        };
        return Err(SessionError::InvalidHeader {
            path: path.to_path_buf(),
            reason,
        });
    };
    let mut report = LoadReport::default();
    if header.format_version() >= super::entry::CURRENT_VERSION {
        while let Some(line) = scanner.next_line().map_err(read_err)? {
            let Some(text) = line.text.as_deref() else {
                report.skipped.push(too_long(line.number));
                continue;
            };
            if text.is_empty() {
                continue;
            }
            match parse_entry_line(text) {
                Ok(entry) => {
                    if matches!(entry.kind, EntryKind::Unknown(_)) {
                        report.kept_verbatim += 1;
                    }
                    each(ReadEntry {
                        entry,
                        line: text,
                        span: Some((line.start, line.len)),
                    })?;
                }
                Err(e) => report.skipped.push(SkippedLine {
                    line: line.number,
                    reason: e.to_string(),
                }),
            }
        }
    } else {
        let mut lines = Vec::new();
        while let Some(line) = scanner.next_line().map_err(read_err)? {
            match line.text {
                None => report.skipped.push(too_long(line.number)),
                Some(text) if text.is_empty() => {}
                Some(text) => lines.push((line.number, text.into_owned())),
            }
        }
        read_old(header.format_version(), lines, &mut report, &mut each)?;
    }
    for skipped in &report.skipped {
        tracing::warn!(
            "{}: skipped line {}: {}",
            path.display(),
            skipped.line,
            skipped.reason
        );
    }
    Ok(ReadEnd {
        header,
        report,
        ends_with_newline: scanner.ends_with_newline(),
        len: scanner.bytes_read(),
    })
}

fn too_long(line: usize) -> SkippedLine {
    SkippedLine {
        line,
        reason: format!("longer than {} MiB", MAX_LINE >> 20),
    }
}

fn parse_header(line: &str) -> Result<SessionHeader, String> {
    let header: SessionHeader =
        serde_json::from_str(line).map_err(|e| format!("not a header object: {e}"))?;
    if header.kind != "session" {
        return Err(format!("type is {:?}, not \"session\"", header.kind));
    }
    Ok(header)
}

/// Parses, migrates and re-serializes the entry lines of a v1 or v2 file.
fn read_old(
    version: u32,
    lines: Vec<(usize, String)>,
    report: &mut LoadReport,
    each: &mut impl FnMut(ReadEntry<'_>) -> Result<(), SessionError>,
) -> Result<(), SessionError> {
    let mut objects: Vec<(usize, Map<String, Value>)> = Vec::new();
    for (number, line) in lines {
        match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(map)) => objects.push((number, map)),
            Ok(_) => report.skipped.push(SkippedLine {
                line: number,
                reason: "not a JSON object".into(),
            }),
            Err(e) => report.skipped.push(SkippedLine {
                line: number,
                reason: format!("not valid JSON ({e})"),
            }),
        }
    }
    let (numbers, mut maps): (Vec<usize>, Vec<Map<String, Value>>) = objects.into_iter().unzip();
    report.migrated_from = migrate_entries(version, &mut maps);
    for (number, map) in numbers.into_iter().zip(maps) {
        let line = to_js_line(&map)?;
        match entry_from_map(map) {
            Ok(entry) => {
                if matches!(entry.kind, EntryKind::Unknown(_)) {
                    report.kept_verbatim += 1;
                }
                each(ReadEntry {
                    entry,
                    line: &line,
                    span: None,
                })?;
            }
            Err(e) => report.skipped.push(SkippedLine {
                line: number,
                reason: e.to_string(),
            }),
        }
    }
    Ok(())
}
