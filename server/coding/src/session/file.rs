//! Reading a session file and appending to it, never rewriting it.
//!
//! Loading is forgiving below the header and strict about the header: a torn or garbage line is
//! skipped and reported in [`LoadReport`], but a file whose first line is not a session header
//! is an error, because the only way pi "repairs" such a file is to overwrite it, and the bytes
//! may be someone's only copy of a conversation.
//!
//! Writing only ever appends. A new file is created with `create_new` (it can never clobber an
//! existing one) and its first content is written in one `write_all`; each later entry is one
//! `write_all` of one whole line plus `\n` on a file opened for appending. If the file does not
//! end with `\n` (a torn last line from a crash), the next entry starts with a `\n`, so the torn
//! bytes stay untouched and the new entry is a whole line of its own. There is no fsync (as in
//! pi): a crash may lose the newest entries, and a torn tail is handled as above, but earlier
//! lines are never at risk. Blocking I/O: this is
//! startup and per-entry session code, meant for synchronous callers (or `spawn_blocking`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::entry::{EntryKind, SessionEntry, SessionHeader};
use super::error::SessionError;
use super::json::to_js_line;
use super::lines::EntryLines;
use super::lock::lock;
use super::migrate::migrate_entries;
use super::wire::{entry_from_map, parse_entry_line};

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
    /// Lines skipped as torn, malformed or id-less.
    pub skipped: Vec<SkippedLine>,
    /// Entries kept verbatim because their type is unknown or their shape unreadable.
    pub kept_verbatim: usize,
    /// The header's version when the entries were migrated in memory (1 or 2).
    pub migrated_from: Option<u32>,
}

/// A loaded session file.
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

/// Reads and parses the session file at `path` (blocking).
pub fn load_session_file(path: &Path) -> Result<LoadedFile, SessionError> {
    let bytes = std::fs::read(path).map_err(|source| SessionError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let ends_with_newline = bytes.last().is_none_or(|b| *b == b'\n');
    let len = bytes.len() as u64;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    // (start offset, 1-based number, trimmed text) of each non-blank line.
    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let Some((_, first)) = lines.next() else {
        return Err(SessionError::Empty {
            path: path.to_path_buf(),
        });
    };
    let header = parse_header(first).map_err(|reason| SessionError::InvalidHeader {
        path: path.to_path_buf(),
        reason,
    })?;
    let mut report = LoadReport::default();
    let (entries, lines) = if header.format_version() >= super::entry::CURRENT_VERSION {
        let (entries, spans) = load_current(&text, lines, &mut report);
        let mut entry_lines = EntryLines::with_buffer(text);
        spans
            .into_iter()
            .for_each(|span| entry_lines.push_span(span));
        (entries, entry_lines)
    } else {
        load_old(header.format_version(), lines, &mut report)?
    };
    report.kept_verbatim = entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Unknown(_)))
        .count();
    for skipped in &report.skipped {
        tracing::warn!(
            "{}: skipped line {}: {}",
            path.display(),
            skipped.line,
            skipped.reason
        );
    }
    Ok(LoadedFile {
        header,
        entries,
        lines,
        report,
        ends_with_newline,
        len,
    })
}

fn parse_header(line: &str) -> Result<SessionHeader, String> {
    let header: SessionHeader =
        serde_json::from_str(line).map_err(|e| format!("not a header object: {e}"))?;
    if header.kind != "session" {
        return Err(format!("type is {:?}, not \"session\"", header.kind));
    }
    Ok(header)
}

/// Parses the entry lines of a current file; returns the entries and each one's span in `text`.
fn load_current<'a>(
    text: &str,
    lines: impl Iterator<Item = (usize, &'a str)>,
    report: &mut LoadReport,
) -> (Vec<SessionEntry>, Vec<Range<usize>>) {
    let base = text.as_ptr() as usize;
    let mut entries = Vec::new();
    let mut spans = Vec::new();
    for (number, line) in lines {
        match parse_entry_line(line) {
            Ok(entry) => {
                entries.push(entry);
                let start = line.as_ptr() as usize - base;
                spans.push(start..start + line.len());
            }
            Err(e) => report.skipped.push(SkippedLine {
                line: number,
                reason: e.to_string(),
            }),
        }
    }
    (entries, spans)
}

/// Parses, migrates and re-serializes the entry lines of a v1 or v2 file.
fn load_old<'a>(
    version: u32,
    lines: impl Iterator<Item = (usize, &'a str)>,
    report: &mut LoadReport,
) -> Result<(Vec<SessionEntry>, EntryLines), SessionError> {
    let mut objects: Vec<(usize, Map<String, Value>)> = Vec::new();
    for (number, line) in lines {
        match serde_json::from_str::<Value>(line) {
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
    let mut entries = Vec::with_capacity(maps.len());
    let mut texts = Vec::with_capacity(maps.len());
    for (number, map) in numbers.into_iter().zip(maps) {
        let line = to_js_line(&map)?;
        match entry_from_map(map) {
            Ok(entry) => {
                entries.push(entry);
                texts.push(line);
            }
            Err(e) => report.skipped.push(SkippedLine {
                line: number,
                reason: e.to_string(),
            }),
        }
    }
    let mut lines = EntryLines::default();
    texts
        .into_iter()
        .for_each(|line| lines.push(line.into_boxed_str()));
    Ok((entries, lines))
}

/// Appends whole lines to one session file, as its only writer (see `lock.rs`).
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    file: Option<File>,
    needs_newline: bool,
    /// Where the file ended after this writer's last write (or when it was read): a different
    /// length means someone else wrote to it.
    end: u64,
}

impl SessionWriter {
    /// Creates the file at `path` (and its folder) with `lines`, each followed by `\n`, in one
    /// write, and locks it. Fails if the file exists. If the write fails the half-written file
    /// is removed, so a retry starts clean.
    pub fn create(path: &Path, lines: &[&str]) -> Result<SessionWriter, SessionError> {
        let write_err = |source| SessionError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let mut file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::AlreadyExists => SessionError::AlreadyExists {
                    path: path.to_path_buf(),
                },
                _ => write_err(source),
            })?;
        // A file this process just created: nobody else can hold it yet.
        let _ = lock(&file);
        let mut content = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in lines {
            content.push_str(line);
            content.push('\n');
        }
        if let Err(source) = file
            .write_all(content.as_bytes())
            .and_then(|_| file.flush())
        {
            drop(file);
            let _ = std::fs::remove_file(path);
            return Err(write_err(source));
        }
        Ok(SessionWriter {
            path: path.to_path_buf(),
            file: Some(file),
            needs_newline: false,
            end: content.len() as u64,
        })
    }

    /// The writer of an existing file that `file` (opened for appending) holds locked; `len`
    /// and `ends_with_newline` describe the file as it was read after locking.
    pub(crate) fn locked(path: &Path, file: File, len: u64, ends_with_newline: bool) -> Self {
        SessionWriter {
            path: path.to_path_buf(),
            file: Some(file),
            needs_newline: !ends_with_newline,
            end: len,
        }
    }

    /// A writer for an existing file that could not be opened for writing now, `len` bytes
    /// long when read; `ends_with_newline` says whether its last line is whole. The file is
    /// opened at the first append (which reports why it cannot be written, if it still cannot).
    pub fn existing(path: &Path, len: u64, ends_with_newline: bool) -> SessionWriter {
        SessionWriter {
            path: path.to_path_buf(),
            file: None,
            needs_newline: !ends_with_newline,
            end: len,
        }
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks that the file still ends where this writer last left it: `Err` with
    /// [`SessionError::ChangedByAnother`] when another program wrote to it (or truncated it)
    /// since. A file that cannot be inspected is left to the append to report.
    pub fn check_unchanged(&mut self) -> Result<(), SessionError> {
        let len = match &self.file {
            Some(file) => file.metadata(),
            None => std::fs::metadata(&self.path),
        };
        match len {
            Ok(meta) if meta.len() != self.end => Err(SessionError::ChangedByAnother {
                path: self.path.clone(),
                expected: self.end,
                found: meta.len(),
            }),
            _ => Ok(()),
        }
    }

    /// Appends `line` and `\n` in one write (preceded by `\n` after a torn last line).
    pub fn append(&mut self, line: &str) -> Result<(), SessionError> {
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let file = OpenOptions::new()
                    .append(true)
                    .open(&self.path)
                    .map_err(|source| SessionError::Write {
                        path: self.path.clone(),
                        source,
                    })?;
                self.file.insert(file)
            }
        };
        let record = if self.needs_newline {
            format!("\n{line}\n")
        } else {
            format!("{line}\n")
        };
        match file.write_all(record.as_bytes()).and_then(|_| file.flush()) {
            Ok(()) => {
                self.needs_newline = false;
                self.end += record.len() as u64;
                Ok(())
            }
            Err(source) => {
                // Part of the line may be in the file: start the next one on a fresh line, and
                // count what did land as ours.
                self.needs_newline = true;
                if let Ok(meta) = file.metadata() {
                    self.end = meta.len();
                }
                Err(SessionError::Write {
                    path: self.path.clone(),
                    source,
                })
            }
        }
    }
}
