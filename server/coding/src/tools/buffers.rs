//! The editor's open documents as grep, find and ls see them.
//!
//! The editor's truth wins: a document open in the editor is searched as the user sees it, not
//! as it was last saved, and a document that was never saved still counts as a file. The
//! workspace lists the open documents ([`crate::Workspace::open_buffers`]; none on disk); this
//! module keeps them by path for one call and answers the two questions the tools ask:
//!
//! - which text to search for a file the walk meets ([`Buffers::text`]): the buffer's when the
//!   file is open;
//! - which documents that do not exist on disk belong to a walk ([`Buffers::new_under`] and
//!   [`in_walk`]). The walk's filters decide for folders: such a document is included when its
//!   nearest folder that exists on disk was walked, so a document inside an ignored folder
//!   (`target/`, `node_modules/`, `.git/`) is left out exactly like the files there. Its own
//!   name is matched against the call's glob like any file's, but not against ignore files: a
//!   document the user is writing right now is rarely one they asked to ignore.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::env::ToolEnv;
use crate::paths::normalize;

/// The open documents of one call, by absolute path.
#[derive(Debug, Default)]
pub(super) struct Buffers {
    texts: HashMap<PathBuf, String>,
}

impl Buffers {
    /// The documents open now in `env`'s workspace.
    pub(super) fn of(env: &ToolEnv) -> Self {
        Buffers {
            texts: env
                .workspace
                .open_buffers()
                .into_iter()
                .filter(|b| b.path.is_absolute())
                .map(|b| (normalize(&b.path), b.text))
                .collect(),
        }
    }

    /// The buffer's text when `path` is open.
    pub(super) fn text(&self, path: &Path) -> Option<&str> {
        if self.texts.is_empty() {
            return None;
        }
        self.texts.get(path).map(String::as_str)
    }

    /// The open documents at or under `root` that do not exist on disk, sorted.
    pub(super) fn new_under(&self, root: &Path) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = self
            .texts
            .keys()
            .filter(|p| p.starts_with(root) && std::fs::symlink_metadata(p).is_err())
            .cloned()
            .collect();
        found.sort();
        found
    }
}

/// Whether `path` (a document not on disk, under `root`) belongs to a walk of `root` that went
/// through the folders `walked`: its nearest existing folder must have been walked (the root
/// always is, and a root that is not on disk holds only such documents).
pub(super) fn in_walk(path: &Path, root: &Path, walked: &HashSet<PathBuf>) -> bool {
    for folder in path.ancestors().skip(1) {
        if !folder.starts_with(root) {
            return false;
        }
        if folder == root || walked.contains(folder) {
            return true;
        }
        if std::fs::symlink_metadata(folder).is_ok() {
            // It exists but the walk did not enter it: ignored, or not a folder.
            return false;
        }
    }
    false
}
