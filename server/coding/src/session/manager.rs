//! [`SessionManager`]: one session, mirrored append-only to its file.
//!
//! What it holds of the file is an index of every entry (`index.rs`: where its line is, its
//! id, parent and kind), counts over all of them (`tally.rs`), and, parsed, the current branch
//! from its latest compaction's kept entries to the leaf (`active.rs`): what the model's
//! context is built from. Other entries are read back from the file when asked for, so a
//! session of a million entries opens in memory proportional to its index and its context, not
//! to its file (issue 29).
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

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_ai::registry::AgentDir;

use super::active::ActiveBranch;
use super::entry::{EntryKind, SessionEntry, SessionHeader};
use super::error::SessionError;
use super::file::{index_session_file, IndexedFile, LoadReport};
use super::ids::{new_entry_id, new_session_id};
use super::index::{EntryIndex, Loc, Source, Tag};
use super::json::to_js_line;
use super::list::find_most_recent;
use super::lock::{claim, Claim};
use super::paths::{default_session_dir, session_file_name};
use super::tally::Tally;
use super::time::iso_now;
use super::writer::{io, SessionWriter};

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
    /// Every entry: where its JSON line is (in the file read, or kept as text), id, parent,
    /// kind.
    pub(super) index: EntryIndex,
    /// The current branch, its context part parsed.
    pub(super) active: ActiveBranch,
    /// Counts, labels and the name, over every entry.
    pub(super) tally: Tally,
    pub(super) store: Store,
    /// Appends go to the file lines are read back from, so an appended entry's line is read
    /// from there too rather than kept as text.
    appends_to_source: bool,
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
        let indexed = index_session_file(path)?;
        Self::from_indexed(path, indexed, claim)
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
        let mut indexed = index_session_file(source)?;
        let mut manager = Self::create(target_cwd, session_dir);
        manager.header.parent_session = Some(source.to_string_lossy().into_owned());
        manager.take_entries(&mut indexed)?;
        manager.write_pending()?;
        Ok(manager)
    }

    fn from_indexed(
        path: &Path,
        mut indexed: IndexedFile,
        claim: Claim,
    ) -> Result<SessionManager, SessionError> {
        let cwd = if indexed.header.cwd.is_empty() {
            std::env::current_dir().unwrap_or_default()
        } else {
            PathBuf::from(&indexed.header.cwd)
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
        let header = indexed.header.clone();
        let (header, store, migrated_from) = match claim {
            _ if indexed.report.migrated_from.is_some() => {
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
                    SessionWriter::locked(path, file, indexed.len, indexed.ends_with_newline);
                (header, Store::Open(writer), None)
            }
            Claim::Unavailable => {
                let writer = SessionWriter::existing(path, indexed.len, indexed.ends_with_newline);
                (header, Store::Open(writer), None)
            }
        };
        let appends_to_source = matches!(store, Store::Open(_));
        let mut manager = Self::assemble(cwd, session_dir, header, store);
        manager.notices = notices;
        manager.take_entries(&mut indexed)?;
        manager.appends_to_source = appends_to_source;
        manager.report = std::mem::take(&mut indexed.report);
        manager.migrated_from = migrated_from;
        Ok(manager)
    }

    /// Takes the entries of `indexed`, with the leaf on its last entry.
    fn take_entries(&mut self, indexed: &mut IndexedFile) -> Result<(), SessionError> {
        self.index = std::mem::take(&mut indexed.index);
        self.tally = std::mem::take(&mut indexed.tally);
        let leaf = self.index.len().checked_sub(1).map(|n| n as u32);
        self.active = ActiveBranch::build(&self.index, leaf, std::mem::take(&mut indexed.recent))?;
        Ok(())
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
            index: EntryIndex::default(),
            active: ActiveBranch::default(),
            tally: Tally::default(),
            store,
            appends_to_source: false,
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
        let parent = self.leaf().map(str::to_string);
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
                let follows_leaf = parent_id.as_deref() == self.leaf();
                self.relocate(parent_id.as_deref(), &changed)?;
                if follows_leaf {
                    parent_id = self.leaf().map(str::to_string);
                }
            }
        }
        let entry = SessionEntry {
            id: new_entry_id(|id| self.index.contains(id)),
            parent_id,
            timestamp,
            kind,
        };
        let line = to_js_line(&entry)?;
        let mut offset = None;
        match &mut self.store {
            Store::Memory => {}
            Store::Open(writer) => {
                let at = writer.append(&line)?;
                offset = Some(at).filter(|_| self.appends_to_source);
            }
            Store::Pending(path) => {
                if self.tally.has_assistant || entry.is_assistant_message() {
                    let path = path.clone();
                    offset = self.write_file(&path, Some(&line))?;
                }
            }
        }
        let id = entry.id.clone();
        self.push(entry, line, offset)?;
        Ok(id)
    }

    /// Writes the file now if it is not written yet and holds a message (a prompt without its
    /// answer: pi waits for the first answer, which a client that goes away mid-turn never
    /// gets); whether it wrote it. Nothing for an in-memory session or one without messages.
    pub fn write_started(&mut self) -> Result<bool, SessionError> {
        let started = self.tally.totals.messages > 0;
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
            let path = path.clone();
            self.write_file(&path, None)?;
        }
        Ok(())
    }

    /// Creates the file at `path` with the header, every entry's line (copied from the file
    /// it is in, a buffer at a time) and `last` when given, and makes it the session's file:
    /// appended to, and where lines are read back from (the lines kept as text until now are
    /// dropped). Returns where `last` starts in it.
    fn write_file(&mut self, path: &Path, last: Option<&str>) -> Result<Option<u64>, SessionError> {
        let header = to_js_line(&self.header)?;
        let mut spans = Vec::with_capacity(self.index.len());
        let mut last_at = None;
        let writer = SessionWriter::create_with(path, |out| {
            let mut at = header.len() as u64 + 1;
            out.write_all(header.as_bytes()).map_err(io)?;
            out.write_all(b"\n").map_err(io)?;
            let mut reader = self.index.reader();
            for n in 0..self.index.len() as u32 {
                let line = reader.line(n)?;
                out.write_all(line.as_bytes()).map_err(io)?;
                out.write_all(b"\n").map_err(io)?;
                spans.push((at, u32::try_from(line.len()).unwrap_or(u32::MAX)));
                at += line.len() as u64 + 1;
            }
            if let Some(line) = last {
                out.write_all(line.as_bytes()).map_err(io)?;
                out.write_all(b"\n").map_err(io)?;
                last_at = Some(at);
            }
            Ok(())
        })?;
        self.store = Store::Open(writer);
        match Source::open(path) {
            Ok(source) => {
                self.index.rebase(Arc::new(source), &spans);
                self.appends_to_source = true;
                Ok(last_at)
            }
            Err(e) => {
                // Written, but not readable now: the lines stay where they are.
                tracing::warn!("{e}");
                Ok(None)
            }
        }
    }

    /// Adds an entry whose `line` was just written at `offset` of the file lines are read
    /// from (`None`: kept as text): index, counts, leaf.
    pub(super) fn push(
        &mut self,
        entry: SessionEntry,
        line: String,
        offset: Option<u64>,
    ) -> Result<(), SessionError> {
        let loc = match (offset, u32::try_from(line.len())) {
            (Some(offset), Ok(len)) => Loc::File { offset, len },
            _ => self.index.keep(line.into_boxed_str())?,
        };
        let parent = entry.parent_id.as_deref().and_then(|p| self.index.find(p));
        let n = self.index.push(&entry.id, parent, Tag::of(&entry), loc)?;
        self.tally.add(&entry);
        if parent.is_some() && parent == self.active.leaf() {
            self.active.push(&self.index, n, entry);
        } else {
            // A new root or a child elsewhere in the tree: the branch is built again.
            let mut parsed = std::mem::take(&mut self.active).into_parsed();
            parsed.push(n, entry);
            self.active = ActiveBranch::build(&self.index, Some(n), parsed)?;
        }
        Ok(())
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
