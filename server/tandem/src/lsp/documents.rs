//! The open documents, exactly as the editor shows them, kept in ropes.
//!
//! The editor owns the text of an open buffer: `didOpen` hands it over, `didChange` sends
//! incremental edits, `didClose` gives it back to the disk. Tandem's context and its read tool
//! must see that text, unsaved edits included, so the store applies every change exactly as
//! the client describes it. A [`Rope`] makes each incremental change O(log n) on a large
//! document and makes a snapshot a cheap clone (shared, copy-on-write nodes).
//!
//! Thread-safety and order: the store is synchronous and not shared by itself. The server
//! holds it behind one lock and applies `didOpen` / `didChange` / `didClose` in the order the
//! notifications arrive, each under the lock, because every incremental change is relative to
//! the text the previous one left. Readers take a [`Document`] snapshot and release the lock
//! before doing anything slow.
//!
//! Positions in changes are counted in the negotiated [`PositionEncoding`]; conversion lives
//! in [`super::position`]. Out-of-range positions are clamped as LSP clients expect; a change
//! for a document that is not open is a [`DocumentError`] the server logs and ignores.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use ropey::Rope;

use super::position::{self, Position, PositionEncoding, Range};

/// One content change of a `didChange` notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChange {
    /// The range replaced, in the text left by the previous change; `None` replaces the
    /// whole document.
    pub range: Option<Range>,
    /// The new text for the range.
    pub text: String,
}

impl TextChange {
    /// A change replacing `range` with `text`.
    pub fn replace(range: Range, text: impl Into<String>) -> Self {
        Self {
            range: Some(range),
            text: text.into(),
        }
    }

    /// A change replacing the whole document with `text`.
    pub fn full(text: impl Into<String>) -> Self {
        Self {
            range: None,
            text: text.into(),
        }
    }
}

/// Why the store could not act on a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// The client named a document it never opened (or already closed).
    #[error(
        "document {uri} is not open: the client must send textDocument/didOpen before \
         changing or reading it (ignored)"
    )]
    NotOpen {
        /// The URI the client sent.
        uri: String,
    },
}

/// A snapshot of one open document: its text, version and language. Cloning is cheap.
#[derive(Debug, Clone)]
pub struct Document {
    text: Rope,
    version: i32,
    language_id: Arc<str>,
}

impl Document {
    /// The text as the editor shows it.
    pub fn text(&self) -> &Rope {
        &self.text
    }

    /// The version of the last `didOpen` or `didChange`.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The client's language identifier (`rust`, `python`, `typescriptreact`, …).
    pub fn language_id(&self) -> &str {
        &self.language_id
    }

    /// Applies one change; positions are clamped, never rejected.
    fn apply(&mut self, change: &TextChange, encoding: PositionEncoding) {
        match change.range {
            None => self.text = Rope::from_str(&change.text),
            Some(range) => {
                let chars = position::range_to_chars(&self.text, range, encoding);
                let start = chars.start;
                if !chars.is_empty() {
                    self.text.remove(chars);
                }
                if !change.text.is_empty() {
                    self.text.insert(start, &change.text);
                }
            }
        }
    }
}

/// The open documents, keyed by the URI string the client sent.
#[derive(Debug, Default)]
pub struct DocumentStore {
    documents: BTreeMap<String, Document>,
    /// Each open document's recent texts by version, oldest first (at most [`HISTORY`]): what
    /// the workspace checks an applied edit against when the client does not check versions.
    history: BTreeMap<String, VecDeque<(i32, Rope)>>,
    encoding: PositionEncoding,
}

/// How many recent versions of a document the store keeps.
pub const HISTORY: usize = 64;

impl DocumentStore {
    /// An empty store whose positions are counted in `encoding`.
    pub fn new(encoding: PositionEncoding) -> Self {
        Self {
            documents: BTreeMap::new(),
            history: BTreeMap::new(),
            encoding,
        }
    }

    /// The encoding positions are counted in.
    pub fn encoding(&self) -> PositionEncoding {
        self.encoding
    }

    /// Sets the encoding once `initialize` has negotiated it (before any document opens).
    pub fn set_encoding(&mut self, encoding: PositionEncoding) {
        self.encoding = encoding;
    }

    /// `didOpen`: starts tracking `uri`. Opening an open document replaces it, as the
    /// client's latest word.
    pub fn open(&mut self, uri: &str, language_id: &str, version: i32, text: &str) {
        let document = Document {
            text: Rope::from_str(text),
            version,
            language_id: Arc::from(language_id),
        };
        self.history.insert(
            uri.to_owned(),
            VecDeque::from([(version, document.text.clone())]),
        );
        self.documents.insert(uri.to_owned(), document);
    }

    /// `didChange`: applies `changes` in order, each to the text the previous one left, then
    /// records `version`. Out-of-range positions are clamped.
    pub fn change(
        &mut self,
        uri: &str,
        version: i32,
        changes: &[TextChange],
    ) -> Result<(), DocumentError> {
        let encoding = self.encoding;
        let document = self.documents.get_mut(uri).ok_or_else(|| not_open(uri))?;
        for change in changes {
            document.apply(change, encoding);
        }
        document.version = version;
        let history = self.history.entry(uri.to_owned()).or_default();
        if history.len() >= HISTORY {
            history.pop_front();
        }
        history.push_back((version, document.text.clone()));
        Ok(())
    }

    /// The recent texts of `uri` by version, oldest first (empty when it is not open).
    pub fn history(&self, uri: &str) -> Vec<(i32, Rope)> {
        self.history
            .get(uri)
            .map(|h| h.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// `didClose`: stops tracking `uri` and returns its last snapshot.
    pub fn close(&mut self, uri: &str) -> Result<Document, DocumentError> {
        self.history.remove(uri);
        self.documents.remove(uri).ok_or_else(|| not_open(uri))
    }

    /// A snapshot of `uri`, or `None` when it is not open (read it from disk then).
    pub fn get(&self, uri: &str) -> Option<Document> {
        self.documents.get(uri).cloned()
    }

    /// Whether `uri` is open.
    pub fn is_open(&self, uri: &str) -> bool {
        self.documents.contains_key(uri)
    }

    /// The open documents' URIs, sorted.
    pub fn uris(&self) -> impl Iterator<Item = &str> + '_ {
        self.documents.keys().map(String::as_str)
    }

    /// The text `range` covers in `uri`, clamped to the document.
    pub fn text_in(&self, uri: &str, range: Range) -> Result<String, DocumentError> {
        let document = self.document(uri)?;
        let chars = position::range_to_chars(&document.text, range, self.encoding);
        Ok(document.text.slice(chars).to_string())
    }

    /// The position of byte offset `offset` in the document's text as a `String`, in the
    /// store's encoding; offsets past the end or inside a character are clamped back.
    pub fn offset_to_position(&self, uri: &str, offset: usize) -> Result<Position, DocumentError> {
        let document = self.document(uri)?;
        Ok(position::byte_to_position(
            &document.text,
            offset,
            self.encoding,
        ))
    }

    /// The byte offset, in the document's text as a `String`, that `position` designates;
    /// clamped as LSP specifies, always on a char boundary.
    pub fn position_to_offset(
        &self,
        uri: &str,
        position: Position,
    ) -> Result<usize, DocumentError> {
        let document = self.document(uri)?;
        Ok(position::position_to_byte(
            &document.text,
            position,
            self.encoding,
        ))
    }

    fn document(&self, uri: &str) -> Result<&Document, DocumentError> {
        self.documents.get(uri).ok_or_else(|| not_open(uri))
    }
}

fn not_open(uri: &str) -> DocumentError {
    DocumentError::NotOpen {
        uri: uri.to_owned(),
    }
}

#[cfg(test)]
#[path = "documents_tests.rs"]
mod tests;
