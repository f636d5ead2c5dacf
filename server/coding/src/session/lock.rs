//! One writer per session file: an advisory lock, and a check for writers that take none.
//!
//! Two processes appending to one session file would each add children of the same leaf: the
//! file silently grows two branches, and the next `--continue` follows only one of them. So a
//! process that opens a session file for writing takes an exclusive `flock` on the file itself
//! and keeps it for as long as the session is open (the lock goes with the file handle the
//! [`super::file::SessionWriter`] holds; nothing is left behind when the process ends, even on
//! a crash). A second process that finds the file locked does not write to it: it continues in
//! a new session file that copies the history (see [`super::manager::SessionManager::open`]).
//!
//! The lock is on the session file rather than a sibling `.lock` file so that nothing else
//! appears in the sessions folder and nothing has to be cleaned up. It is advisory: pi (and
//! older Tandems) append without it. The writer therefore also remembers where the file ended
//! after its own last write and checks that before each append ([`Claim`] covers the first
//! part, `SessionWriter::check_unchanged` the second); a file that grew or shrank behind its
//! back is never appended to again.
//!
//! A file system without `flock` (some network mounts) leaves only the append check.

use std::fs::{File, OpenOptions};
use std::path::Path;

use rustix::fs::{flock, FlockOperation};
use rustix::io::Errno;

/// What trying to become a session file's writer found.
#[derive(Debug)]
pub enum Claim {
    /// The file, opened for appending and locked by this handle (or on a file system without
    /// locks, where only the append check guards it).
    Held(File),
    /// Another process (or another handle of this one) holds the lock.
    Busy,
    /// The file cannot be opened for writing (missing, read-only): reading it decides.
    Unavailable,
}

/// Opens `path` for appending and tries to lock it without waiting (also what a front door
/// does before deleting a session file: no process may be writing it).
pub fn claim(path: &Path) -> Claim {
    let file = match OpenOptions::new().append(true).open(path) {
        Ok(file) => file,
        Err(e) => {
            tracing::debug!("{}: not opened for writing: {e}", path.display());
            return Claim::Unavailable;
        }
    };
    match lock(&file) {
        Ok(()) => Claim::Held(file),
        Err(Busy) => Claim::Busy,
    }
}

/// Another handle holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Busy;

/// Locks `file` exclusively without waiting. A file system that cannot lock counts as locked
/// by us (the append check still guards the file).
pub(crate) fn lock(file: &File) -> Result<(), Busy> {
    loop {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(Errno::WOULDBLOCK) => return Err(Busy),
            Err(Errno::INTR) => continue,
            Err(e) => {
                tracing::debug!(
                    "session file lock unavailable here ({e}); relying on the append check"
                );
                return Ok(());
            }
        }
    }
}
