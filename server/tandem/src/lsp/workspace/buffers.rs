//! Where the workspace finds the editor's open buffers: a read-only view of the document store.
//!
//! The workspace needs a snapshot of one document (text, version, the URI the client used),
//! the list of open documents (for grep, find and ls) and the negotiated position encoding,
//! nothing more; it never changes a document. Rather
//! than fixing the server's lock type, it asks an [`OpenDocuments`] provider, implemented
//! here for `std::sync::Mutex<DocumentStore>` and `std::sync::RwLock<DocumentStore>`. A
//! snapshot is a cheap rope clone taken under the lock, which is released at once, so
//! `didChange` notifications are never held up by an edit waiting for the user.
//!
//! Paths become `file://` URIs with [`crate::uri`]. Clients percent-encode URIs in
//! slightly different ways, so when the exact string is not open the open URIs are compared
//! by the path they decode to.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};
use tandem_ai::sync::{lock, read_lock};

use ropey::Rope;

use crate::lsp::documents::DocumentStore;
use crate::lsp::position::PositionEncoding;

/// A snapshot of an open document.
#[derive(Debug, Clone)]
pub struct OpenDocument {
    /// The URI exactly as the client sent it in `didOpen`.
    pub uri: String,
    /// The version of the last `didOpen` / `didChange`.
    pub version: i32,
    /// The text the user sees.
    pub text: Rope,
}

/// A read-only view of the editor's open documents.
pub trait OpenDocuments: Send + Sync {
    /// The open document at `path`, if any.
    fn find(&self, path: &Path) -> Option<OpenDocument>;
    /// Every open `file:` document: its path and the text the user sees (a rope clone each,
    /// taken under the lock; the text is copied out after it is released).
    fn all(&self) -> Vec<(PathBuf, Rope)>;
    /// The negotiated position encoding.
    fn encoding(&self) -> PositionEncoding;
    /// The recent texts of the open document at `path` by version, oldest first (empty when
    /// it is not open).
    fn history(&self, path: &Path) -> Vec<(i32, Rope)>;
}

/// Looks `path` up in `store`: by the exact URI first, then by decoded path.
pub fn find_in_store(store: &DocumentStore, path: &Path) -> Option<OpenDocument> {
    let uri = uri_in_store(store, path)?;
    let document = store.get(&uri)?;
    Some(OpenDocument {
        uri,
        version: document.version(),
        text: document.text().clone(),
    })
}

/// The URI under which `path` is open: the exact URI first, then by decoded path.
fn uri_in_store(store: &DocumentStore, path: &Path) -> Option<String> {
    let exact = crate::uri::from_path(path).map(|uri| uri.as_str().to_owned());
    match exact {
        Some(uri) if store.is_open(&uri) => Some(uri),
        _ => store
            .uris()
            .find(|open| uri_names_path(open, path))
            .map(str::to_owned),
    }
}

/// The open `file:` documents of `store` with their texts.
fn all_in_store(store: &DocumentStore) -> Vec<(PathBuf, Rope)> {
    store
        .uris()
        .filter_map(|uri| {
            let path = crate::uri::to_path(uri)?;
            Some((path, store.get(uri)?.text().clone()))
        })
        .collect()
}

/// Whether the `file:` URI `uri` designates `path`.
fn uri_names_path(uri: &str, path: &Path) -> bool {
    crate::uri::to_path(uri).is_some_and(|p| p == path)
}

impl OpenDocuments for Mutex<DocumentStore> {
    fn find(&self, path: &Path) -> Option<OpenDocument> {
        let store = lock(self);
        find_in_store(&store, path)
    }

    fn all(&self) -> Vec<(PathBuf, Rope)> {
        all_in_store(&lock(self))
    }

    fn encoding(&self) -> PositionEncoding {
        lock(self).encoding()
    }

    fn history(&self, path: &Path) -> Vec<(i32, Rope)> {
        let store = lock(self);
        uri_in_store(&store, path)
            .map(|uri| store.history(&uri))
            .unwrap_or_default()
    }
}

impl OpenDocuments for RwLock<DocumentStore> {
    fn find(&self, path: &Path) -> Option<OpenDocument> {
        let store = read_lock(self);
        find_in_store(&store, path)
    }

    fn all(&self) -> Vec<(PathBuf, Rope)> {
        all_in_store(&read_lock(self))
    }

    fn encoding(&self) -> PositionEncoding {
        read_lock(self).encoding()
    }

    fn history(&self, path: &Path) -> Vec<(i32, Rope)> {
        let store = read_lock(self);
        uri_in_store(&store, path)
            .map(|uri| store.history(&uri))
            .unwrap_or_default()
    }
}
