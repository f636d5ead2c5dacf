//! Language intelligence: what language servers know about the code — diagnostics,
//! definitions, references, symbols, hover text, renames — behind one trait, so the agent's
//! tools and the diagnostics after an edit do not care where it comes from.
//!
//! Two sources implement [`LanguageIntel`], both in the `tandem` crate (only it speaks LSP):
//! the editor, asked through the protocol extension (it knows every language server it runs,
//! which no single server does), and Tandem's own language-server clients where there is no
//! such editor (the CLI, ACP, Helix). Positions cross this trait as LSP has them (zero-based
//! line, UTF-16 code units), so a source passes them through untouched; the tools convert
//! to and from what the model sees (one-based line and column in characters, as the read tool
//! numbers lines) with the document's text ([`Pos::from_user`], [`Pos::to_user`]).

pub mod after;
pub mod report;
mod scripted;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tandem_agent::BoxFuture;

pub use scripted::ScriptedIntel;

/// A position as LSP has it: zero-based line, zero-based column in UTF-16 code units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// Zero-based line.
    pub line: u32,
    /// Zero-based UTF-16 code units into the line.
    pub character: u32,
}

/// A range of a document, end exclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// First position.
    pub start: Pos,
    /// Position after the last character.
    pub end: Pos,
}

impl Pos {
    /// The position the model names as one-based `line` and one-based `column` in characters
    /// (a column past the line's end means its end), in `text`; `None` when the line is past
    /// the end of the text.
    pub fn from_user(text: &str, line: u32, column: u32) -> Option<Pos> {
        let line0 = line.checked_sub(1)?;
        let content = text.split('\n').nth(line0 as usize)?;
        let content = content.strip_suffix('\r').unwrap_or(content);
        let chars = column.saturating_sub(1) as usize;
        let character = content
            .chars()
            .take(chars)
            .map(|c| c.len_utf16() as u32)
            .sum();
        Some(Pos {
            line: line0,
            character,
        })
    }

    /// This position as the model reads it, `(line, column)`, both one-based, the column in
    /// characters of `text`'s line (when `text` is known; otherwise the UTF-16 column plus one).
    pub fn to_user(self, text: Option<&str>) -> (u32, u32) {
        let line = self.line + 1;
        let Some(content) = text.and_then(|t| t.split('\n').nth(self.line as usize)) else {
            return (line, self.character + 1);
        };
        let mut units = 0u32;
        let mut chars = 0u32;
        for c in content.chars() {
            if units >= self.character {
                break;
            }
            units += c.len_utf16() as u32;
            chars += 1;
        }
        (line, chars + 1)
    }

    /// The byte offset of this position in `text` (clamped to the line's end, and to the
    /// text's end for a line past it).
    pub fn offset(self, text: &str) -> usize {
        let mut start = 0usize;
        for _ in 0..self.line {
            match text[start..].find('\n') {
                Some(i) => start += i + 1,
                None => return text.len(),
            }
        }
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let mut units = 0u32;
        for (i, c) in text[start..end].char_indices() {
            if units >= self.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }
}

/// How serious a diagnostic is (LSP's four levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Information,
    /// A hint.
    Hint,
}

impl Severity {
    /// The word the model reads.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }
}

/// One diagnostic, as a language server reported it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Where.
    pub span: Span,
    /// How serious.
    pub severity: Severity,
    /// The reporting tool (`pyright`, `Ruff`, `ts`), when given.
    pub source: Option<String>,
    /// Its code (`reportAttributeAccessIssue`, `F401`, `2322`), when given.
    pub code: Option<String>,
    /// The message.
    pub message: String,
}

/// A file's diagnostics as a source has them now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiagnostics {
    /// The file (absolute).
    pub path: PathBuf,
    /// How many times the file's diagnostics were reported so far (0: never): a later answer
    /// with a higher number is a newer report ([`Settle`]).
    pub generation: u64,
    /// False when no language server looks at this file (then nothing is waited for).
    pub analyzed: bool,
    /// The diagnostics.
    pub diagnostics: Vec<Diagnostic>,
}

/// A document as the tool sees it now: its path and text (the editor's buffer, or the disk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The file (absolute).
    pub path: PathBuf,
    /// Its text now; a source that runs its own language server sends it as the document's
    /// content (didOpen / didChange).
    pub text: String,
}

/// Wait for diagnostics newer than the ones seen before an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settle {
    /// Each file's generation before the edit: the answer comes once every file's generation
    /// is higher (or the file is not analyzed) and no new report came for `quiet`.
    pub after: BTreeMap<PathBuf, u64>,
    /// Answer after this long at most, settled or not.
    pub wait: Duration,
    /// How long reports must stop coming before the answer.
    pub quiet: Duration,
}

/// A diagnostics answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiagnosticsAnswer {
    /// The files asked about (or every file the source has diagnostics for).
    pub files: Vec<FileDiagnostics>,
    /// False when the wait of a [`Settle`] ran out first.
    pub settled: bool,
}

/// A place in a file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// The file (absolute).
    pub path: PathBuf,
    /// The range.
    pub span: Span,
}

/// A symbol: a document's outline entry or a workspace-symbol match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// Its kind in words (`function`, `class`, `method`, …: LSP's `SymbolKind` names, lower
    /// case).
    pub kind: String,
    /// The server's detail (a signature, a type), when given.
    pub detail: Option<String>,
    /// Where it is (the whole declaration's range when known).
    pub location: Location,
    /// The enclosing symbol's name, when given.
    pub container: Option<String>,
    /// Nesting depth in a document outline (0 for top level).
    pub depth: u32,
}

/// One file's edits of a rename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdits {
    /// The file (absolute).
    pub path: PathBuf,
    /// Replaced ranges and their new text, in the file as the source has it now.
    pub edits: Vec<(Span, String)>,
}

/// What a source can answer. A tool is offered to the model only when its feature is here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    /// Diagnostics (the `diagnostics` tool, and diagnostics after edits).
    pub diagnostics: bool,
    /// Go to definition.
    pub definition: bool,
    /// Find references.
    pub references: bool,
    /// Document and workspace symbols.
    pub symbols: bool,
    /// Hover text.
    pub hover: bool,
    /// Rename.
    pub rename: bool,
}

impl Features {
    /// Everything.
    pub const ALL: Features = Features {
        diagnostics: true,
        definition: true,
        references: true,
        symbols: true,
        hover: true,
        rename: true,
    };

    /// Whether any feature is here.
    pub fn any(self) -> bool {
        self != Features::default()
    }
}

/// A failure of a language-intelligence request: the tool reports it, the run goes on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntelError {
    /// No language server handles this file.
    #[error("no language server handles {}{}", .path.display(), .hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default())]
    NoServer {
        /// The file.
        path: PathBuf,
        /// What to configure, when known.
        hint: Option<String>,
    },
    /// The request failed (a server that crashed, hung or answered an error; an editor that
    /// did not answer in time), in words naming what failed.
    #[error("{0}")]
    Failed(String),
}

/// A source of language intelligence. Every method is bounded in time by the source (an
/// editor or a server that does not answer is an [`IntelError::Failed`], never a hang).
pub trait LanguageIntel: Send + Sync {
    /// Who answers, for messages: "the editor", "Tandem's language servers".
    fn label(&self) -> &str;
    /// What it can answer.
    fn features(&self) -> Features;
    /// Gets ready to answer about `document` soon (the agent just read it and may edit it
    /// next): a source that starts servers starts them and opens it, so that the diagnostics
    /// before an edit need not wait for a cold start. The default does nothing.
    fn prepare<'a>(&'a self, document: Document) -> BoxFuture<'a, ()> {
        let _ = document;
        Box::pin(async {})
    }
    /// The diagnostics of `files` (each with its current text), or of every file the source
    /// knows of when `files` is `None`; with `settle`, once newer diagnostics have come and
    /// settled, or its wait ran out.
    fn diagnostics<'a>(
        &'a self,
        files: Option<Vec<Document>>,
        settle: Option<Settle>,
    ) -> BoxFuture<'a, Result<DiagnosticsAnswer, IntelError>>;
    /// Where the symbol at `at` is defined.
    fn definition<'a>(
        &'a self,
        document: Document,
        at: Pos,
    ) -> BoxFuture<'a, Result<Vec<Location>, IntelError>>;
    /// Where the symbol at `at` is used (and declared, with `declaration`).
    fn references<'a>(
        &'a self,
        document: Document,
        at: Pos,
        declaration: bool,
    ) -> BoxFuture<'a, Result<Vec<Location>, IntelError>>;
    /// The document's outline, in order, parents before children.
    fn document_symbols<'a>(
        &'a self,
        document: Document,
    ) -> BoxFuture<'a, Result<Vec<Symbol>, IntelError>>;
    /// Symbols matching `query` anywhere in the workspace; `hint` is a document of the
    /// language wanted, when the model named one (a source running servers per language
    /// asks the ones for it, else every running server).
    fn workspace_symbols<'a>(
        &'a self,
        query: String,
        hint: Option<Document>,
    ) -> BoxFuture<'a, Result<Vec<Symbol>, IntelError>>;
    /// The hover text at `at` (markdown or plain), `None` when there is none.
    fn hover<'a>(
        &'a self,
        document: Document,
        at: Pos,
    ) -> BoxFuture<'a, Result<Option<String>, IntelError>>;
    /// The edits renaming the symbol at `at` to `new_name`, in every file it touches (not
    /// applied: the tool proposes them).
    fn rename<'a>(
        &'a self,
        document: Document,
        at: Pos,
        new_name: String,
    ) -> BoxFuture<'a, Result<Vec<FileEdits>, IntelError>>;
}

#[cfg(test)]
mod tests;
