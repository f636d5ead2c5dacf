//! Walking every entry of a session in file order, reading each back from the file as it is
//! reached (see `index.rs`): a view of a large session costs time, not memory. Entries of the
//! current branch's context part come from memory.

use super::entry::SessionEntry;
use super::index::SequentialReader;
use super::manager::SessionManager;

/// Every entry of a session, in file order ([`SessionManager::entries`]).
#[derive(Clone, Copy)]
pub struct Entries<'a> {
    manager: &'a SessionManager,
}

impl<'a> Entries<'a> {
    pub(super) fn new(manager: &'a SessionManager) -> Entries<'a> {
        Entries { manager }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.manager.index.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, parsed one at a time.
    pub fn iter(&self) -> EntryIter<'a> {
        EntryIter {
            manager: self.manager,
            reader: self.manager.index.reader(),
            next: 0,
        }
    }

    /// All entries, parsed (the whole session in memory: for views that show all of it).
    pub fn to_vec(&self) -> Vec<SessionEntry> {
        self.iter().collect()
    }
}

impl<'a> IntoIterator for Entries<'a> {
    type Item = SessionEntry;
    type IntoIter = EntryIter<'a>;

    fn into_iter(self) -> EntryIter<'a> {
        self.iter()
    }
}

/// Iterator over [`Entries`]. An entry that cannot be read back (its file was rewritten by
/// another program) is left out and logged.
pub struct EntryIter<'a> {
    manager: &'a SessionManager,
    reader: SequentialReader<'a>,
    next: u32,
}

impl Iterator for EntryIter<'_> {
    type Item = SessionEntry;

    fn next(&mut self) -> Option<SessionEntry> {
        while (self.next as usize) < self.manager.index.len() {
            let n = self.next;
            self.next += 1;
            if let Some(entry) = self.manager.active.get(n) {
                return Some(entry.clone());
            }
            match self.reader.read(n) {
                Ok(entry) => return Some(entry),
                Err(e) => tracing::warn!("{e}"),
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.manager.index.len() - self.next as usize;
        (0, Some(left))
    }
}
