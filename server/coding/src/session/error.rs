//! What can go wrong with a session, each error naming the file or entry involved and what to do.

use std::path::PathBuf;

/// A session operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The file could not be read.
    #[error("Cannot read session file {path}: {source}")]
    Read {
        /// The session file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file (or its folder) could not be written; the entry was not recorded.
    #[error("Cannot write session file {path}: {source}. Check the disk space and permissions of its folder.")]
    Write {
        /// The session file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file holds nothing.
    #[error("Session file {path} is empty: it has no session header. It was left untouched; pick another session or start a new one.")]
    Empty {
        /// The session file.
        path: PathBuf,
    },
    /// The first line is not a session header.
    #[error("Session file {path} does not start with a valid session header ({reason}). It was left untouched; pick another session or start a new one.")]
    InvalidHeader {
        /// The session file.
        path: PathBuf,
        /// What is wrong with the first line.
        reason: String,
    },
    /// A new session file would overwrite an existing file.
    #[error("Session file {path} already exists; refusing to overwrite it.")]
    AlreadyExists {
        /// The file that exists.
        path: PathBuf,
    },
    /// The file changed since this process last wrote it: another program appended to it
    /// (or cut it short). Nothing more is appended to it; the session moves to a new file.
    #[error("Session file {path} was changed by another program (it is {found} bytes long; Tandem's last write ended at byte {expected}).")]
    ChangedByAnother {
        /// The session file.
        path: PathBuf,
        /// Where this process's last write ended.
        expected: u64,
        /// The file's length now.
        found: u64,
    },
    /// An entry id that is not in this session.
    #[error("Entry {id} is not in this session.")]
    EntryNotFound {
        /// The id asked for.
        id: String,
    },
    /// A context edit was asked of an entry it cannot edit.
    #[error("Cannot edit the context contribution of entry {id}: {why}.")]
    NotEditable {
        /// The target entry.
        id: String,
        /// Why not.
        why: String,
    },
    /// A fork was asked of a session with no entries.
    #[error("Cannot fork an empty session: it has no entries yet.")]
    NothingToFork,
    /// An entry could not be read back from the session file where it was when the file was
    /// loaded: another program rewrote the file in place (or cut it short) since.
    #[error("Cannot read entry {id} back from session file {path}: {reason}. The file was changed by another program since it was opened; open the session again.")]
    Reread {
        /// The session file.
        path: PathBuf,
        /// The entry's id.
        id: String,
        /// What was found instead.
        reason: String,
    },
    /// The session has more entries (or bytes of ids) than fit the index (4 billion).
    #[error(
        "The session has too many entries to load (more than 4 billion entries or 4 GiB of ids)."
    )]
    TooLarge,
    /// An entry could not be serialized (only a non-JSON value inside it can cause this).
    #[error("Cannot serialize a session entry: {0}")]
    Serialize(#[from] serde_json::Error),
}
