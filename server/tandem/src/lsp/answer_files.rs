//! The full text of a command's answer, saved where an editor can open it.
//!
//! A client without Tandem's events (Helix, plain Neovim) gets a command's answer as
//! `window/showMessage`, and Helix shows that on its one status row: an explanation of a
//! function does not fit. So a long answer is saved as a markdown file that the editor opens
//! (`window/showDocument`, see [`super::answer`]).
//!
//! The files live in the user's cache directory, `$XDG_CACHE_HOME/tandem/answers/` or
//! `~/.cache/tandem/answers/`, never in the workspace, where the agent's own tools, git and
//! the editor's file pickers would find them. Each answer is its own file, readable by its
//! owner only and writable by nobody (0400: an answer is a record, not a buffer to edit; Helix
//! marks it `[readonly]`), named `<session>-<n>.md` for the session's n-th saved answer, so a
//! reopened answer never changes under an editor that has it open. After each write only the
//! newest [`KEEP`] files stay.
//!
//! Writes follow no symlink and land only where nobody else can swap the way there: the file
//! is created new (`O_CREAT | O_EXCL`, which does not follow a link at the name); `answers/` is
//! a real directory, not a link, made private (0700; only its owner can do that); and
//! `tandem/` above it is writable by its owner only, or sticky like `/tmp` (it may be a link,
//! e.g. to a bigger disk: it is the user's). A cache directory that breaks this (another
//! user's, or one anybody can rename things in) is refused with
//! [`AnswerFileError::UnsafeDir`], and the answer goes in the message instead.
//!
//! Written by hand: the one piece a crate would give is the cache directory (`dirs`), and the
//! XDG rule it would apply here is three lines.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use tandem_protocol::SessionId;

/// How many answer files stay after a write.
pub const KEEP: usize = 50;

/// Why an answer could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum AnswerFileError {
    /// Neither `XDG_CACHE_HOME` (absolute) nor `HOME` is set.
    #[error(
        "no cache directory for answers: set HOME, or XDG_CACHE_HOME to an absolute directory"
    )]
    NoCacheDir,
    /// The answers directory could not be created.
    #[error("cannot create the answers directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The answers directory, or the one above it, is a place others could write to or
    /// redirect.
    #[error(
        "will not save answers in {path}: {why}; fix that, or set XDG_CACHE_HOME to a private directory"
    )]
    UnsafeDir {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The answer file could not be written.
    #[error("cannot write the answer file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// The directory answers are saved in, under the cache directory the environment names:
/// `XDG_CACHE_HOME` when it is absolute (the XDG spec ignores a relative one), else
/// `HOME/.cache`.
pub fn answers_dir(xdg_cache_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let xdg = xdg_cache_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let cache = xdg.or_else(|| {
        home.filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".cache"))
    })?;
    Some(cache.join("tandem").join("answers"))
}

/// The saved answers: a directory, and how many files it keeps.
#[derive(Debug, Clone)]
pub struct AnswerFiles {
    dir: Option<PathBuf>,
    keep: usize,
}

impl AnswerFiles {
    /// Answers saved in `dir` (`None`: nowhere, every save fails with
    /// [`AnswerFileError::NoCacheDir`]), keeping the newest [`KEEP`].
    pub fn new(dir: Option<PathBuf>) -> Self {
        AnswerFiles { dir, keep: KEEP }
    }

    /// Answers saved in the user's cache directory ([`answers_dir`] of this process's
    /// environment).
    pub fn from_env() -> Self {
        AnswerFiles::new(answers_dir(
            std::env::var_os("XDG_CACHE_HOME"),
            std::env::var_os("HOME"),
        ))
    }

    /// The same directory, keeping the newest `keep` files.
    pub fn keeping(self, keep: usize) -> Self {
        AnswerFiles { keep, ..self }
    }

    /// Saves `text` as the next answer of `session`, read-only, then removes the oldest files
    /// beyond the ones kept; the new file's path. Blocking: call it off the async workers.
    pub fn save(&self, session: &SessionId, text: &str) -> Result<PathBuf, AnswerFileError> {
        let dir = self.dir.as_deref().ok_or(AnswerFileError::NoCacheDir)?;
        create_private_dir(dir).map_err(|source| AnswerFileError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        check_dir(dir)?;
        let stem = file_stem(session);
        let mut n = next_number(dir, &stem);
        // Another server may save an answer of the same session at the same moment: a name
        // taken is never overwritten, the next number is tried.
        let path = loop {
            let path = dir.join(format!("{stem}-{n}.md"));
            match write_read_only(&path, text) {
                Ok(()) => break path,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < u32::MAX => n += 1,
                Err(source) => return Err(AnswerFileError::Write { path, source }),
            }
        };
        self.prune(dir, &path);
        Ok(path)
    }

    /// Removes the oldest answer files beyond the newest `keep` (never `just_written`). A file
    /// that cannot be removed is logged and left.
    fn prune(&self, dir: &Path, just_written: &Path) {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                tracing::warn!("cannot list {} to remove old answers: {e}", dir.display());
                return;
            }
        };
        let mut files: Vec<(SystemTime, u32, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                meta.is_file()
                    .then(|| (modified, answer_number(&e.path()), e.path()))
            })
            .collect();
        if files.len() <= self.keep {
            return;
        }
        // Newest first. Files written within one tick of a coarse clock have the same time:
        // a session's later answer (a higher number) counts as newer.
        files.sort_by(|a, b| b.cmp(a));
        for (_, _, path) in files.into_iter().skip(self.keep) {
            if path == just_written {
                continue;
            }
            match remove_read_only(&path) {
                // Another server pruned it first.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!("cannot remove the old answer {}: {e}", path.display()),
                Ok(()) => {}
            }
        }
    }
}

/// The session id as a file name: letters, digits, `-` and `_` kept, anything else `_` (an id
/// read from a session file could hold a `/`), at most 64 characters.
fn file_stem(session: &SessionId) -> String {
    let stem: String = session
        .as_str()
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "session".to_string()
    } else {
        stem
    }
}

/// One more than the highest `n` of the `<stem>-<n>.md` files in `dir` (1 when there are none).
fn next_number(dir: &Path, stem: &str) -> u32 {
    let prefix = format!("{stem}-");
    let highest = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_prefix(&prefix)?
                .strip_suffix(".md")?
                .parse::<u32>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    highest.saturating_add(1)
}

/// The `n` of a `<stem>-<n>.md` path (0 for another name).
fn answer_number(path: &Path) -> u32 {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem.rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Checks that answers written in `dir` stay there and private, as the module doc says;
/// tightens `dir` to 0700 when it is looser (the owner's own directory, e.g. made by hand).
fn check_dir(dir: &Path) -> Result<(), AnswerFileError> {
    let unsafe_dir = |path: &Path, why: String| AnswerFileError::UnsafeDir {
        path: path.to_path_buf(),
        why,
    };
    let meta = fs::symlink_metadata(dir).map_err(|e| unsafe_dir(dir, e.to_string()))?;
    if meta.file_type().is_symlink() {
        return Err(unsafe_dir(dir, "it is a symbolic link".into()));
    }
    if !meta.is_dir() {
        return Err(unsafe_dir(dir, "it is not a directory".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(|e| {
                unsafe_dir(
                    dir,
                    format!("others can open it, and making it private failed: {e}"),
                )
            })?;
        }
        if let Some(parent) = dir.parent() {
            let meta = fs::metadata(parent).map_err(|e| unsafe_dir(parent, e.to_string()))?;
            // Sticky (like /tmp): others can write there but not move what is ours.
            let mode = meta.permissions().mode();
            if mode & 0o022 != 0 && mode & 0o1000 == 0 {
                let why = "others can write to it, so they could swap what is inside";
                return Err(unsafe_dir(parent, why.into()));
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// Writes a new file (never an existing one, never through a symlink) and makes it read-only;
/// on failure, removes what it created. No fsync: the editor reads it at once, and a cache file
/// lost in a crash costs nothing.
fn write_read_only(path: &Path, text: &str) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    let written = file.write_all(text.as_bytes()).and_then(|()| {
        let mut permissions = file.metadata()?.permissions();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            permissions.set_mode(0o400);
        }
        #[cfg(not(unix))]
        permissions.set_readonly(true);
        file.set_permissions(permissions)
    });
    if written.is_err() {
        // Not left half written (a full disk) for an editor to open later.
        drop(file);
        let _ = remove_read_only(path);
    }
    written
}

/// Removes a file this module made read-only (elsewhere than on Unix, read-only files cannot
/// be removed until they are writable again).
fn remove_read_only(path: &Path) -> io::Result<()> {
    #[cfg(not(unix))]
    {
        let mut permissions = fs::metadata(path)?.permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        fs::set_permissions(path, permissions)?;
    }
    fs::remove_file(path)
}

#[cfg(test)]
#[path = "answer_files_tests.rs"]
mod tests;
