//! Finding sessions: the listings behind `--resume` and the pick behind `--continue`.
//!
//! A listing reads every `*.jsonl` file of a folder (or of every folder under
//! `<agentDir>/sessions`) and summarizes it as pi's session picker does: the header's id, cwd,
//! parent and creation time; the latest `session_info` name; how many `message` entries; the
//! first user message's text and all user/assistant text; and the last activity (the newest
//! user/assistant message timestamp, else the header's, else the file's mtime), by which the
//! list is sorted newest first. Lines are read one at a time (a listing never holds a file
//! whole) into a small private struct rather than full entries, since only a few fields
//! matter; the text kept for searching is capped per session. A file that cannot be read or has no header is left
//! out with a [`ListWarning`] instead of failing the whole listing. Blocking I/O.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::Value;
use tandem_ai::registry::AgentDir;

use super::entry::SessionHeader;
use super::paths::sessions_root;
use super::scan::Scanner;
use super::time::{parse_iso, time_of};

/// A summary of one session file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// The file.
    pub path: PathBuf,
    /// The session id.
    pub id: String,
    /// The working directory (empty for old sessions that did not record it).
    pub cwd: String,
    /// The latest name given with a `session_info` entry.
    pub name: Option<String>,
    /// The session it was forked from.
    pub parent_session_path: Option<String>,
    /// The header's timestamp (the file's mtime when unreadable).
    pub created: SystemTime,
    /// The last activity.
    pub modified: SystemTime,
    /// The number of `message` entries (all roles, all branches).
    pub message_count: usize,
    /// The text of the first user message, or `(no messages)`.
    pub first_message: String,
    /// User and assistant text, space-separated (for searching): all of it, up to 256 KiB per
    /// session (then the texts that fit, oldest first).
    pub all_messages_text: String,
}

/// A file or folder left out of a listing, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListWarning {
    /// The file or folder.
    pub path: PathBuf,
    /// What went wrong.
    pub reason: String,
}

/// A listing: the sessions, newest activity first, and what was skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionList {
    /// The sessions found.
    pub sessions: Vec<SessionInfo>,
    /// Files and folders that could not be listed.
    pub warnings: Vec<ListWarning>,
}

/// Lists the sessions in one folder (such as a working directory's session folder). A folder
/// that does not exist holds no sessions.
pub fn list_sessions(session_dir: &Path) -> SessionList {
    let mut list = SessionList::default();
    collect_dir(session_dir, &mut list);
    sort(&mut list);
    list
}

/// Lists the sessions of every working directory under `<agentDir>/sessions`.
pub fn list_all_sessions(agent_dir: &AgentDir) -> SessionList {
    let mut list = SessionList::default();
    let root = sessions_root(agent_dir);
    match fs::read_dir(&root) {
        Ok(dirs) => {
            let mut dirs: Vec<PathBuf> = dirs
                .filter_map(Result::ok)
                .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
                .map(|d| d.path())
                .collect();
            dirs.sort();
            for dir in dirs {
                collect_dir(&dir, &mut list);
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => list.warnings.push(ListWarning {
            path: root,
            reason: e.to_string(),
        }),
    }
    sort(&mut list);
    list
}

/// The session file in `session_dir` modified last (by file mtime) among those whose first
/// line is a session header: what `--continue` resumes. Files whose mtimes are equal — the
/// kernel's file clock ticks every few milliseconds, so two processes writing one after the
/// other can share a tick — are told apart by their last entry's own timestamp
/// (milliseconds), then by name.
pub fn find_most_recent(session_dir: &Path) -> Option<PathBuf> {
    let files: Vec<(std::time::SystemTime, PathBuf)> = jsonl_files(session_dir)
        .ok()?
        .into_iter()
        .filter(|path| has_header(path))
        .filter_map(|path| Some((fs::metadata(&path).ok()?.modified().ok()?, path)))
        .collect();
    let newest = files.iter().map(|(mtime, _)| *mtime).max()?;
    files
        .into_iter()
        .filter(|(mtime, _)| *mtime == newest)
        .map(|(_, path)| (last_entry_time(&path), path))
        .max()
        .map(|(_, path)| path)
}

/// The `timestamp` of the file's last entry (ISO 8601, so later sorts after), read from its
/// last 64 KiB.
fn last_entry_time(path: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 64 * 1024;
    let mut file = fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let tail = String::from_utf8_lossy(&tail);
    let last = tail.lines().rev().find(|l| !l.trim().is_empty())?;
    let value: serde_json::Value = serde_json::from_str(last).ok()?;
    value.get("timestamp")?.as_str().map(str::to_string)
}

/// Summarizes the session file at `path`, reading it a line at a time.
pub fn session_info(path: &Path) -> Result<SessionInfo, String> {
    let file = fs::File::open(path).map_err(|e| e.to_string())?;
    let mtime = file
        .metadata()
        .and_then(|m| m.modified())
        .map_err(|e| e.to_string())?;
    let mut scanner = Scanner::new(file);
    let no_header = || "no session header on the first line".to_string();
    let header: SessionHeader = loop {
        let line = scanner
            .next_line()
            .map_err(|e| e.to_string())?
            .ok_or_else(no_header)?;
        match line.text.as_deref() {
            Some("") => continue,
            Some(text) => {
                break serde_json::from_str(text)
                    .ok()
                    .filter(|h: &SessionHeader| h.kind == "session")
                    .ok_or_else(no_header)?
            }
            None => return Err(no_header()),
        }
    };

    let mut summary = Summary::default();
    while let Some(line) = scanner.next_line().map_err(|e| e.to_string())? {
        let Some(text) = line.text.as_deref().filter(|t| !t.is_empty()) else {
            continue;
        };
        if let Ok(line) = serde_json::from_str::<InfoLine>(text) {
            summary.add(line);
        }
    }
    let header_time = parse_iso(&header.timestamp).map(time_of);
    Ok(SessionInfo {
        path: path.to_path_buf(),
        id: header.id,
        cwd: header.cwd,
        name: summary.name,
        parent_session_path: header.parent_session,
        created: header_time.unwrap_or(mtime),
        modified: summary
            .last_activity
            .filter(|t| *t > 0)
            .map(time_of)
            .or(header_time)
            .unwrap_or(mtime),
        message_count: summary.message_count,
        first_message: summary
            .first_message
            .unwrap_or_else(|| "(no messages)".to_string()),
        all_messages_text: summary.texts.join(" "),
    })
}

/// How much user and assistant text a listing keeps per session for searching: a session of
/// a million entries holds a hundred megabytes of it, and a picker has no use for all of it.
const TEXT_BUDGET: usize = 256 << 10;

#[derive(Default)]
struct Summary {
    name: Option<String>,
    message_count: usize,
    first_message: Option<String>,
    texts: Vec<String>,
    text_bytes: usize,
    last_activity: Option<i64>,
}

impl Summary {
    fn add(&mut self, line: InfoLine) {
        match line.kind.as_deref() {
            Some("session_info") => {
                if let Some(name) = line.name.as_ref().and_then(Value::as_str) {
                    if !name.is_empty() {
                        self.name = Some(name.trim().to_string());
                    }
                }
            }
            Some("message") => {
                self.message_count += 1;
                let Some(message) = line.message else { return };
                let Some(content) = message.content else {
                    return;
                };
                let role = message.role.as_deref();
                if role != Some("user") && role != Some("assistant") {
                    return;
                }
                let stamp = match message.timestamp.as_ref().and_then(Value::as_f64) {
                    Some(ms) => Some(ms as i64),
                    None => line
                        .timestamp
                        .as_ref()
                        .and_then(Value::as_str)
                        .and_then(parse_iso),
                };
                if let Some(stamp) = stamp {
                    self.last_activity = Some(self.last_activity.map_or(stamp, |t| t.max(stamp)));
                }
                let text = content_text(&content);
                if text.is_empty() {
                    return;
                }
                if self.first_message.is_none() && role == Some("user") {
                    self.first_message = Some(text.clone());
                }
                if self.text_bytes + text.len() <= TEXT_BUDGET {
                    self.text_bytes += text.len() + 1;
                    self.texts.push(text);
                }
            }
            _ => {}
        }
    }
}

/// A string's text, or the text blocks of a block list joined with spaces.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The few fields of an entry line a listing needs.
#[derive(Deserialize)]
struct InfoLine {
    #[serde(rename = "type")]
    kind: Option<String>,
    timestamp: Option<Value>,
    name: Option<Value>,
    message: Option<InfoMessage>,
}

#[derive(Deserialize)]
struct InfoMessage {
    role: Option<String>,
    content: Option<Value>,
    timestamp: Option<Value>,
}

fn collect_dir(dir: &Path, list: &mut SessionList) {
    let files = match jsonl_files(dir) {
        Ok(files) => files,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            list.warnings.push(ListWarning {
                path: dir.to_path_buf(),
                reason: e.to_string(),
            });
            return;
        }
    };
    for path in files {
        match session_info(&path) {
            Ok(info) => list.sessions.push(info),
            Err(reason) => {
                tracing::warn!("skipping session file {}: {reason}", path.display());
                list.warnings.push(ListWarning { path, reason });
            }
        }
    }
}

fn jsonl_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// True when the file's first line is a session header with a string id.
fn has_header(path: &Path) -> bool {
    let Ok(file) = fs::File::open(path) else {
        return false;
    };
    // The scanner, not `read_line`: a hostile first line must not be read whole.
    let mut scanner = Scanner::new(file);
    let Ok(Some(first)) = scanner.next_line() else {
        return false;
    };
    first
        .text
        .and_then(|text| serde_json::from_str::<SessionHeader>(&text).ok())
        .is_some_and(|h| h.kind == "session")
}

fn sort(list: &mut SessionList) {
    list.sessions.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
}
