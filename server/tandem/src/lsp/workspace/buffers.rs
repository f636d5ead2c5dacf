//! Where the workspace finds the editor's open buffers: a read-only view of the document store.
//!
//! The workspace needs a snapshot of one document (text, version, the URI the client used)
//! and the negotiated position encoding, nothing more; it never changes a document. Rather
//! than fixing the server's lock type, it asks an [`OpenDocuments`] provider, implemented
//! here for `std::sync::Mutex<DocumentStore>` and `std::sync::RwLock<DocumentStore>`. A
//! snapshot is a cheap rope clone taken under the lock, which is released at once, so
//! `didChange` notifications are never held up by an edit waiting for the user.
//!
//! Paths become `file://` URIs with [`Uri::from_file_path`]. Clients percent-encode URIs in
//! slightly different ways, so when the exact string is not open the open URIs are compared
//! by the path they decode to.

use std::path::Path;
use std::str::FromStr;
use std::sync::{Mutex, RwLock};

use ropey::Rope;
use tower_lsp_server::ls_types::Uri;

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
    /// The negotiated position encoding.
    fn encoding(&self) -> PositionEncoding;
}

/// The `file://` URI of an absolute `path`.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

/// Looks `path` up in `store`: by the exact URI first, then by decoded path.
pub fn find_in_store(store: &DocumentStore, path: &Path) -> Option<OpenDocument> {
    let exact = path_to_uri(path).map(|uri| uri.as_str().to_owned());
    let uri = match exact {
        Some(uri) if store.is_open(&uri) => uri,
        _ => store
            .uris()
            .find(|open| uri_names_path(open, path))?
            .to_owned(),
    };
    let document = store.get(&uri)?;
    Some(OpenDocument {
        uri,
        version: document.version(),
        text: document.text().clone(),
    })
}

/// Whether the `file:` URI `uri` designates `path`.
fn uri_names_path(uri: &str, path: &Path) -> bool {
    let Ok(parsed) = Uri::from_str(uri) else {
        return false;
    };
    if parsed.scheme().as_str() != "file" {
        return false;
    }
    parsed.to_file_path().is_some_and(|p| p == path)
}

impl OpenDocuments for Mutex<DocumentStore> {
    fn find(&self, path: &Path) -> Option<OpenDocument> {
        let store = self.lock().unwrap_or_else(|p| p.into_inner());
        find_in_store(&store, path)
    }

    fn encoding(&self) -> PositionEncoding {
        self.lock().unwrap_or_else(|p| p.into_inner()).encoding()
    }
}

impl OpenDocuments for RwLock<DocumentStore> {
    fn find(&self, path: &Path) -> Option<OpenDocument> {
        let store = self.read().unwrap_or_else(|p| p.into_inner());
        find_in_store(&store, path)
    }

    fn encoding(&self) -> PositionEncoding {
        self.read().unwrap_or_else(|p| p.into_inner()).encoding()
    }
}
