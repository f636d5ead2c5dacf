//! Columns between the protocol and the trait: the editor speaks the position encoding
//! negotiated at `initialize` (UTF-8 when the client offered it, else UTF-16), the
//! [`LanguageIntel`](tandem_coding::intel::LanguageIntel) trait speaks UTF-16 as LSP does.
//!
//! With UTF-16 negotiated nothing is converted and no text is read. Otherwise each column is
//! converted with its line's text: the document the tool passed (what its position was
//! computed on), else the open document as the editor has it, else the file on disk (read once
//! per answer, and only when it is at most [`MAX_DISK_TEXT`]). A file that cannot be read
//! keeps its columns as the editor sent them, which differ only on lines with non-ASCII text.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ropey::Rope;
use tandem_coding::intel::{Pos, Span};
use tower_lsp_server::ls_types as lsp;

use crate::lsp::position::{self as position, PositionEncoding};
use crate::lsp::workspace::OpenDocuments;

/// The largest file read from disk only to convert columns.
pub const MAX_DISK_TEXT: u64 = 8 * 1024 * 1024;

/// Converts positions for one request and its answer, reading each file's text at most once.
pub struct Columns<'a> {
    encoding: PositionEncoding,
    documents: &'a dyn OpenDocuments,
    texts: HashMap<PathBuf, Option<Rope>>,
}

impl<'a> Columns<'a> {
    /// Columns in `encoding`, with the editor's open `documents`.
    pub fn new(encoding: PositionEncoding, documents: &'a dyn OpenDocuments) -> Self {
        Columns {
            encoding,
            documents,
            texts: HashMap::new(),
        }
    }

    /// Whether the protocol's columns are the trait's (UTF-16): nothing to convert.
    pub fn same(&self) -> bool {
        self.encoding == PositionEncoding::Utf16
    }

    /// `path`'s text is `text` (the document a tool passed): conversions in it use this text.
    pub fn know(&mut self, path: &Path, text: &str) {
        if !self.same() {
            self.texts
                .insert(path.to_path_buf(), Some(Rope::from_str(text)));
        }
    }

    /// `at` (UTF-16, in `text`) as the editor counts it.
    pub fn to_wire(&self, text: &str, at: Pos) -> lsp::Position {
        if self.same() {
            return lsp::Position::new(at.line, at.character);
        }
        let rope = Rope::from_str(text);
        let char_idx = position::position_to_char(
            &rope,
            position::Position::new(at.line, at.character),
            PositionEncoding::Utf16,
        );
        let p = position::char_to_position(&rope, char_idx, self.encoding);
        lsp::Position::new(p.line, p.character)
    }

    /// The editor's position `p` in `path` as UTF-16.
    pub async fn pos(&mut self, path: &Path, p: lsp::Position) -> Pos {
        if self.same() {
            return Pos {
                line: p.line,
                character: p.character,
            };
        }
        let encoding = self.encoding;
        match self.text(path).await {
            Some(rope) => {
                let char_idx = position::position_to_char(
                    rope,
                    position::Position::new(p.line, p.character),
                    encoding,
                );
                let u = position::char_to_position(rope, char_idx, PositionEncoding::Utf16);
                Pos {
                    line: u.line,
                    character: u.character,
                }
            }
            None => Pos {
                line: p.line,
                character: p.character,
            },
        }
    }

    /// The editor's range `r` in `path` as UTF-16.
    pub async fn span(&mut self, path: &Path, r: lsp::Range) -> Span {
        Span {
            start: self.pos(path, r.start).await,
            end: self.pos(path, r.end).await,
        }
    }

    /// `path`'s text: known, open, or read from disk (once).
    async fn text(&mut self, path: &Path) -> Option<&Rope> {
        if !self.texts.contains_key(path) {
            let text = match self.documents.find(path) {
                Some(open) => Some(open.text),
                None => read_small(path).await.map(|t| Rope::from_str(&t)),
            };
            self.texts.insert(path.to_path_buf(), text);
        }
        self.texts.get(path).and_then(Option::as_ref)
    }
}

/// The file at `path` when it is UTF-8 text of at most [`MAX_DISK_TEXT`] bytes.
async fn read_small(path: &Path) -> Option<String> {
    let meta = tokio::fs::metadata(path).await.ok()?;
    if !meta.is_file() || meta.len() > MAX_DISK_TEXT {
        return None;
    }
    let bytes = tokio::fs::read(path).await.ok()?;
    String::from_utf8(bytes).ok()
}
