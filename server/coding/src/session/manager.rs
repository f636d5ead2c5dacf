//! [`SessionManager`]: one session's entries in memory, mirrored append-only to its file.
//!
//! The file's life follows pi's: a new session writes nothing until the first assistant
//! message arrives (a user who quits before any answer leaves no empty session behind); that
//! append writes the header and every buffered entry at once, and each later entry is appended
//! as one whole line. An opened file is appended to from the start.
//!
//! Where Tandem parts from pi, it is to never destroy bytes:
//! - a file with a missing or broken header is an error, not a file to overwrite;
//! - a version 1 or 2 file is migrated in memory only and left exactly as it is. pi rewrites
//!   it in place; appending v3 entries under its old header instead would corrupt it for pi (a
//!   v1 file is re-migrated with fresh random ids on every load, so the appended entries'
//!   `parentId`s would point nowhere). So the first append to a migrated session goes to a new
//!   v3 file in the same folder, with a new session id and `parentSession` naming the old file,
//!   holding the migrated entries and then the new ones, as a fork would. Until then
//!   [`SessionManager::session_file`] names that not-yet-written file and
//!   [`SessionManager::migrated_from`] the original.
//! - a torn last line is skipped on load and left in place; the next entry starts on a new line.
//! - one process writes a file at a time (`lock.rs`). A session file another process holds
//!   is not appended to: [`SessionManager::open`] continues it in a new file of the same
//!   folder, holding the same entries, with a new session id and `parentSession` naming the
//!   original (written at the first append, as for a migrated file). The copy is the file as
//!   it was when opened: when the other process is in the middle of a turn, its prompt (and
//!   what it has saved of that turn) comes along. Waiting for the other process instead would
//!   hang a `tandem -c` behind an editor that keeps its session open for hours.
//! - a file that another program wrote to behind this writer's back (pi takes no lock) is
//!   left alone from then on: the next append first forks the current branch into a new file,
//!   as [`SessionManager::fork`] does, and goes there. Continuing from the other writer's
//!   entries instead is not safe: the conversation the model has seen is this process's
//!   branch, and the other writer may still be adding to its own. (A foreign line written
//!   between the check and this process's own append is caught at the next append only.)
//!
//! Either way the session never branches silently: each move is a line in
//! [`SessionManager::take_notices`] for the front door to show, naming the new file and why.
//!
//! All methods that touch the disk block; call them from synchronous code or `spawn_blocking`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tandem_ai::registry::AgentDir;

use super::entry::{EntryKind, SessionEntry, SessionHeader};
use super::error::SessionError;
use super::file::{load_session_file, LoadReport, LoadedFile, SessionWriter};
use super::ids::{new_entry_id, new_session_id};
use super::json::to_js_line;
use super::lines::EntryLines;
use super::list::find_most_recent;
use super::lock::{claim, Claim};
use super::paths::{default_session_dir, session_file_name};
use super::time::iso_now;

/// Where entries go.
#[derive(Debug)]
pub(super) enum Store {
    /// Nowhere: an in-memory session (`--no-session`).
    Memory,
    /// A file that does not exist yet; created at the first assistant message.
    Pending(PathBuf),
    /// A file that exists; every entry is appended at once.
    Open(SessionWriter),
}

/// A session: a tree of entries with a leaf pointer, backed by a JSONL file.
#[derive(Debug)]
pub struct SessionManager {
    pub(super) cwd: PathBuf,
    pub(super) session_dir: PathBuf,
    pub(super) header: SessionHeader,
    pub(super) entries: Vec<SessionEntry>,
    /// Each entry's JSON line, as in (or as it will be written to) the file.
    pub(super) lines: EntryLines,
    pub(super) index: HashMap<String, usize>,
    pub(super) labels: HashMap<String, String>,
    pub(super) leaf: Option<String>,
    pub(super) has_assistant: bool,
    pub(super) store: Store,
    report: LoadReport,
    migrated_from: Option<PathBuf>,
    /// Moves to a new file not yet shown to the user (see the module docs).
    pub(super) notices: Vec<String>,
}

impl SessionManager {
    /// A new session for `cwd` whose file will be created in `session_dir` (named
    /// `<timestamp>_<uuid>.jsonl`) when the first assistant message is appended. No I/O here.
    pub fn create(cwd: impl Into<PathBuf>, session_dir: impl Into<PathBuf>) -> SessionManager {
        Self::create_with_id(cwd, session_dir, new_session_id())
    }

    /// Like [`SessionManager::create`] with a chosen session id (`--session-id`).
    pub fn create_with_id(
        cwd: impl Into<PathBuf>,
        session_dir: impl Into<PathBuf>,
        id: impl Into<String>,
    ) -> SessionManager {
        let cwd = cwd.into();
        let session_dir = absolute(session_dir.into());
        let header = SessionHeader::new(id, iso_now(), cwd.to_string_lossy(), None);
        let path = session_dir.join(session_file_name(&header.timestamp, &header.id));
        Self::assemble(cwd, session_dir, header, Store::Pending(path))
    }

    /// A new session for `cwd` in its default folder under `agent_dir`
    /// (`<agentDir>/sessions/--<cwd>--/`).
    pub fn create_default(agent_dir: &AgentDir, cwd: impl Into<PathBuf>) -> SessionManager {
        let cwd = cwd.into();
        let dir = default_session_dir(agent_dir, &cwd);
        Self::create(cwd, dir)
    }

    /// A new session that will be written to exactly `path` (`--session <path>` naming a file
    /// that does not exist yet); forks go to `path`'s folder.
    pub fn create_at(cwd: impl Into<PathBuf>, path: impl Into<PathBuf>) -> SessionManager {
        let path = absolute(path.into());
        let mut manager = Self::create(cwd, parent_dir(&path));
        manager.store = Store::Pending(path);
        manager
    }

    /// A session that is never written anywhere.
    pub fn in_memory(cwd: impl Into<PathBuf>) -> SessionManager {
        let cwd = cwd.into();
        let header = SessionHeader::new(new_session_id(), iso_now(), cwd.to_string_lossy(), None);
        Self::assemble(cwd, PathBuf::new(), header, Store::Memory)
    }

    /// Opens the session file at `path` (blocking read). Torn and malformed lines are skipped
    /// (see [`SessionManager::load_report`]); a missing, empty or header-less file is an error
    /// and is left untouched. The leaf is the file's last entry. New entries are appended to
    /// the file, which this session holds locked until it is dropped, except for a migrated
    /// v1/v2 file and a file another process holds: those continue in a new file (see the
    /// module docs; the latter with a notice). Forks go to the file's folder.
    pub fn open(path: impl AsRef<Path>) -> Result<SessionManager, SessionError> {
        let path = &absolute(path.as_ref().to_path_buf());
        // Locked before reading, so that what was read is where appends continue.
        let claim = claim(path);
        let loaded = load_session_file(path)?;
        Ok(Self::from_loaded(path, loaded, claim))
    }

    /// Opens the most recently modified session in `session_dir` (`--continue`), or creates a
    /// new one there when it holds none.
    pub fn continue_recent(
        cwd: impl Into<PathBuf>,
        session_dir: impl Into<PathBuf>,
    ) -> Result<SessionManager, SessionError> {
        let session_dir = session_dir.into();
        match find_most_recent(&session_dir) {
            Some(path) => Self::open(path),
            None => Ok(Self::create(cwd, session_dir)),
        }
    }

    /// Copies every entry of the session at `source` into a new session of `target_cwd` in
    /// `session_dir` (`--fork`), written at once with `parentSession` = `source`. The source is
    /// only read.
    pub fn fork_from(
        source: impl AsRef<Path>,
        target_cwd: impl Into<PathBuf>,
        session_dir: impl Into<PathBuf>,
    ) -> Result<SessionManager, SessionError> {
        let source = &absolute(source.as_ref().to_path_buf());
        let loaded = load_session_file(source)?;
        let mut manager = Self::create(target_cwd, session_dir);
        manager.header.parent_session = Some(source.to_string_lossy().into_owned());
        manager.lines = loaded.lines;
        loaded
            .entries
            .into_iter()
            .for_each(|entry| manager.index_entry(entry));
        manager.leaf = manager.entries.last().map(|e| e.id.clone());
        manager.write_pending()?;
        Ok(manager)
    }

    fn from_loaded(path: &Path, loaded: LoadedFile, claim: Claim) -> SessionManager {
        let cwd = if loaded.header.cwd.is_empty() {
            std::env::current_dir().unwrap_or_default()
        } else {
            PathBuf::from(&loaded.header.cwd)
        };
        let session_dir = parent_dir(path);
        let copy = || {
            let header = SessionHeader::new(
                new_session_id(),
                iso_now(),
                cwd.to_string_lossy(),
                Some(path.to_string_lossy().into_owned()),
            );
            let new_path = session_dir.join(session_file_name(&header.timestamp, &header.id));
            (header, new_path)
        };
        let mut notices = Vec::new();
        let (header, store, migrated_from) = match claim {
            _ if loaded.report.migrated_from.is_some() => {
                let (header, new_path) = copy();
                (header, Store::Pending(new_path), Some(path.to_path_buf()))
            }
            Claim::Busy => {
                let (header, new_path) = copy();
                let notice = format!(
                    "Session file {} is in use by another process, so this session continues \
                     in a new file, {}, which copies its history (its parentSession names the \
                     original). Close the other process before continuing the original.",
                    path.display(),
                    new_path.display()
                );
                tracing::warn!("{notice}");
                notices.push(notice);
                (header, Store::Pending(new_path), None)
            }
            Claim::Held(file) => {
                let writer =
                    SessionWriter::locked(path, file, loaded.len, loaded.ends_with_newline);
                (loaded.header, Store::Open(writer), None)
            }
            Claim::Unavailable => {
                let writer = SessionWriter::existing(path, loaded.len, loaded.ends_with_newline);
                (loaded.header, Store::Open(writer), None)
            }
        };
        let mut manager = Self::assemble(cwd, session_dir, header, store);
        manager.notices = notices;
        manager.entries.reserve(loaded.entries.len());
        manager.index.reserve(loaded.entries.len());
        manager.lines = loaded.lines;
        loaded
            .entries
            .into_iter()
            .for_each(|entry| manager.index_entry(entry));
        manager.leaf = manager.entries.last().map(|e| e.id.clone());
        manager.report = loaded.report;
        manager.migrated_from = migrated_from;
        manager
    }

    pub(super) fn assemble(
        cwd: PathBuf,
        session_dir: PathBuf,
        header: SessionHeader,
        store: Store,
    ) -> SessionManager {
        SessionManager {
            cwd,
            session_dir,
            header,
            entries: Vec::new(),
            lines: EntryLines::default(),
            index: HashMap::new(),
            labels: HashMap::new(),
            leaf: None,
            has_assistant: false,
            store,
            report: LoadReport::default(),
            migrated_from: None,
            notices: Vec::new(),
        }
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The folder where forks of this session are created.
    pub fn session_dir(&self) -> &Path {
        &self.session_dir
    }

    /// The session id (the header's `id`).
    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// The header (of the file written to, which for a migrated session is the new file's).
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The file entries are written to (it may not exist yet); `None` in memory.
    pub fn session_file(&self) -> Option<&Path> {
        match &self.store {
            Store::Memory => None,
            Store::Pending(path) => Some(path),
            Store::Open(writer) => Some(writer.path()),
        }
    }

    /// True once the session file exists with this session's content.
    pub fn is_written(&self) -> bool {
        matches!(self.store, Store::Open(_))
    }

    /// False for an in-memory session.
    pub fn is_persisted(&self) -> bool {
        !matches!(self.store, Store::Memory)
    }

    /// What loading skipped or migrated (empty for a new session).
    pub fn load_report(&self) -> &LoadReport {
        &self.report
    }

    /// The v1/v2 file this session was loaded from, when it was migrated; it is never
    /// written, and new entries go to [`SessionManager::session_file`].
    pub fn migrated_from(&self) -> Option<&Path> {
        self.migrated_from.as_deref()
    }

    /// Takes the notices not yet shown: one line each time the session moved to a new file
    /// because another process holds or changed its file (see the module docs).
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Records a new entry of `kind` as a child of the leaf, writes it (see the module docs),
    /// moves the leaf to it and returns its id. On a write error nothing changes.
    pub(super) fn append_kind(&mut self, kind: EntryKind) -> Result<String, SessionError> {
        let parent = self.leaf.clone();
        self.append_under(kind, parent)
    }

    /// Like [`SessionManager::append_kind`] under an explicit parent.
    pub(super) fn append_under(
        &mut self,
        kind: EntryKind,
        parent_id: Option<String>,
    ) -> Result<String, SessionError> {
        self.append_stamped(kind, parent_id, iso_now())
    }

    /// Like [`SessionManager::append_under`], stamped `timestamp` (ISO 8601).
    pub(super) fn append_stamped(
        &mut self,
        kind: EntryKind,
        mut parent_id: Option<String>,
        timestamp: String,
    ) -> Result<String, SessionError> {
        if let Store::Open(writer) = &mut self.store {
            if let Err(changed) = writer.check_unchanged() {
                let follows_leaf = parent_id == self.leaf;
                self.relocate(parent_id.as_deref(), &changed)?;
                if follows_leaf {
                    parent_id = self.leaf.clone();
                }
            }
        }
        let entry = SessionEntry {
            id: new_entry_id(|id| self.index.contains_key(id)),
            parent_id,
            timestamp,
            kind,
        };
        let line = to_js_line(&entry)?;
        match &mut self.store {
            Store::Memory => {}
            Store::Open(writer) => writer.append(&line)?,
            Store::Pending(path) => {
                if self.has_assistant || entry.is_assistant_message() {
                    let header = to_js_line(&self.header)?;
                    let mut all: Vec<&str> = Vec::with_capacity(self.lines.len() + 2);
                    all.push(&header);
                    all.extend(self.lines.iter());
                    all.push(&line);
                    self.store = Store::Open(SessionWriter::create(path, &all)?);
                }
            }
        }
        let id = entry.id.clone();
        self.push(entry, line.into());
        Ok(id)
    }

    /// Writes the file now if it is not written yet and holds a message (a prompt without its
    /// answer: pi waits for the first answer, which a client that goes away mid-turn never
    /// gets); whether it wrote it. Nothing for an in-memory session or one without messages.
    pub fn write_started(&mut self) -> Result<bool, SessionError> {
        let started = self
            .entries
            .iter()
            .any(|e| matches!(e.kind, EntryKind::Message { .. }));
        if !started || !matches!(self.store, Store::Pending(_)) {
            return Ok(false);
        }
        self.write_pending()?;
        Ok(true)
    }

    /// Moves this session to a new file holding the branch that ends at `at` (the leaf when
    /// `None`), as [`SessionManager::fork`] makes it, because `why` (its file changed behind its
    /// back). Adds the notice saying so.
    fn relocate(&mut self, at: Option<&str>, why: &SessionError) -> Result<(), SessionError> {
        let from = self
            .session_file()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut moved = match self.fork(at) {
            Ok(fork) => fork,
            Err(SessionError::NothingToFork) => {
                let header = SessionHeader::new(
                    new_session_id(),
                    iso_now(),
                    self.header.cwd.clone(),
                    Some(from.to_string_lossy().into_owned()),
                );
                let path = self
                    .session_dir
                    .join(session_file_name(&header.timestamp, &header.id));
                Self::assemble(
                    self.cwd.clone(),
                    self.session_dir.clone(),
                    header,
                    Store::Pending(path),
                )
            }
            Err(e) => return Err(e),
        };
        let to = moved
            .session_file()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let notice = format!(
            "{why} To keep both conversations whole, this session continues in a new file, {}, \
             which copies its branch (its parentSession names the original).",
            to.display()
        );
        tracing::warn!("{notice}");
        moved.notices = std::mem::take(&mut self.notices);
        moved.notices.push(notice);
        moved.report = std::mem::take(&mut self.report);
        *self = moved;
        Ok(())
    }

    /// Writes the header and all entries now if the file does not exist yet.
    pub(super) fn write_pending(&mut self) -> Result<(), SessionError> {
        if let Store::Pending(path) = &self.store {
            let header = to_js_line(&self.header)?;
            let mut all: Vec<&str> = Vec::with_capacity(self.lines.len() + 1);
            all.push(&header);
            all.extend(self.lines.iter());
            self.store = Store::Open(SessionWriter::create(path, &all)?);
        }
        Ok(())
    }

    /// Adds an entry and its line in memory: index, labels, leaf.
    pub(super) fn push(&mut self, entry: SessionEntry, line: Box<str>) {
        self.lines.push(line);
        self.leaf = Some(entry.id.clone());
        self.index_entry(entry);
    }

    /// Adds an entry whose line is already in `lines` (the leaf is not moved).
    fn index_entry(&mut self, entry: SessionEntry) {
        if let EntryKind::Label { target_id, label } = &entry.kind {
            match label.as_deref().filter(|l| !l.is_empty()) {
                Some(label) => self.labels.insert(target_id.clone(), label.to_string()),
                None => self.labels.remove(target_id),
            };
        }
        self.has_assistant |= entry.is_assistant_message();
        self.index.insert(entry.id.clone(), self.entries.len());
        self.entries.push(entry);
    }
}

/// `path` made absolute against the current directory, lexically (as pi resolves session paths,
/// so `parentSession` always names a file that can be found again); unchanged if that fails.
fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

/// The folder holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
