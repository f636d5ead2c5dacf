//! The editor context as the model reads it: one block put before the user's prompt.
//!
//! The block is plain text with Markdown code fences, wrapped in `<editor-context>` tags so the
//! model can tell it from what the user typed. It carries what the model would otherwise spend
//! a tool call on: the file and its language, the selection or the cursor line, the enclosing
//! definition with its text, the diagnostics there and the open files. Everything in an
//! [`EditorContext`] is already capped by [`build`](super::build); rendering only formats.
//! Lines and columns are stored 0-based and printed 1-based, as editors and the read tool
//! number them.

use std::fmt::Write as _;

use super::languages::Language;
use super::symbols::{NotParsed, Symbol};

/// What the user was looking at when they sent a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorContext {
    /// The file, relative to the agent's working directory when inside it.
    pub path: String,
    /// The file's language.
    pub language: Language,
    /// The cursor or the selection; `None` when the prompt named only the file.
    pub focus: Option<Focus>,
    /// The definition around the focus.
    pub symbol: SymbolInfo,
    /// Diagnostics on the symbol's lines (or the focus lines), sorted by line; `None` when the
    /// prompt did not ask for diagnostics.
    pub diagnostics: Option<Vec<ContextDiagnostic>>,
    /// Diagnostics in range left out by the cap.
    pub diagnostics_omitted: usize,
    /// The errors and warnings of the rest of the file (outside the range), by line: counted,
    /// so the model knows of them without the list growing with the file.
    pub diagnostics_elsewhere: Vec<(Severity, usize)>,
    /// The files open in the editor, sorted.
    pub open_files: Vec<String>,
    /// Open files left out by the cap.
    pub open_files_omitted: usize,
}

/// A position for display: 0-based line, 0-based column in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPosition {
    /// 0-based line.
    pub line: usize,
    /// 0-based column, in characters.
    pub column: usize,
}

/// Where the user's attention is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Focus {
    /// An empty selection: the cursor and the text of its line.
    Cursor {
        /// Where the cursor is.
        position: TextPosition,
        /// The cursor's line, without its line break.
        line_text: String,
    },
    /// A non-empty selection.
    Selection(Selection),
}

/// A non-empty selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Its bytes in the document.
    pub byte_range: std::ops::Range<usize>,
    /// Where it starts.
    pub start: TextPosition,
    /// Where it ends (exclusive).
    pub end: TextPosition,
    /// The selected text, capped; `text.last_line < end.line` when lines were left out.
    pub text: Excerpt,
}

/// Consecutive lines of the document, as shown to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The first line shown, 0-based.
    pub first_line: usize,
    /// The last line shown, 0-based, inclusive.
    pub last_line: usize,
    /// The lines, joined by `\n`; overlong lines are cut with `…`.
    pub text: String,
}

/// The definition around the focus, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymbolInfo {
    /// Found: the symbol and its lines (`None` when the selection already shows them all).
    Found {
        /// The symbol.
        symbol: Symbol,
        /// Its lines, capped around the focus.
        text: Option<Excerpt>,
    },
    /// The focus is in no named definition.
    TopLevel,
    /// No grammar for the language: the lines around the focus instead.
    NoParser {
        /// Lines around the focus.
        nearby: Excerpt,
    },
    /// The document was not parsed: the lines around the focus instead.
    NotParsed {
        /// Why.
        reason: NotParsed,
        /// Lines around the focus.
        nearby: Excerpt,
    },
    /// The prompt gave no position, so no symbol was looked for.
    NoFocus,
}

/// How serious a diagnostic is (the LSP's four levels).
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
    /// The lower-case word (`error`, `warning`, `info`, `hint`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }
}

/// A diagnostic the editor shows, reduced to what the model needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextDiagnostic {
    /// How serious.
    pub severity: Severity,
    /// Its first line, 0-based.
    pub line: usize,
    /// Its last line, 0-based, inclusive.
    pub end_line: usize,
    /// The message.
    pub message: String,
    /// Who reported it (`rustc`, `eslint`).
    pub source: Option<String>,
    /// Its code (`E0308`), if any.
    pub code: Option<String>,
}

/// What the block says before anything else.
const PREAMBLE: &str = "Editor state sent with this message. Open files may have unsaved \
changes: the read tool returns the text the editor shows, not only what is on disk. Lines and \
columns count from 1.";

/// The editor context as a block of text to put before the user's prompt.
pub fn render(context: &EditorContext) -> String {
    let mut out = String::from("<editor-context>\n");
    out.push_str(PREAMBLE);
    out.push('\n');
    let tag = context.language.fence_tag();
    let _ = writeln!(out, "File: {} ({})", context.path, context.language);
    match &context.focus {
        Some(Focus::Cursor {
            position,
            line_text,
        }) => {
            let _ = writeln!(
                out,
                "Cursor: line {}, column {}",
                position.line + 1,
                position.column + 1
            );
            fence(&mut out, tag, line_text);
        }
        Some(Focus::Selection(selection)) => {
            let _ = write!(
                out,
                "Selection: {}:{} to {}:{}",
                selection.start.line + 1,
                selection.start.column + 1,
                selection.end.line + 1,
                selection.end.column + 1
            );
            if selection.text.last_line < selection.end.line {
                let _ = write!(out, " (first {} lines shown)", lines(&selection.text));
            }
            out.push('\n');
            fence(&mut out, tag, &selection.text.text);
        }
        None => {}
    }
    render_symbol(&mut out, &context.language, &context.symbol);
    if let Some(diagnostics) = &context.diagnostics {
        if diagnostics.is_empty() {
            out.push_str("Diagnostics in range: none\n");
        } else {
            out.push_str("Diagnostics in range:\n");
            for d in diagnostics {
                let _ = write!(out, "- line {}: {}", d.line + 1, d.severity.as_str());
                if let Some(code) = &d.code {
                    let _ = write!(out, " {code}");
                }
                if let Some(source) = &d.source {
                    let _ = write!(out, " ({source})");
                }
                let _ = writeln!(out, ": {}", d.message);
            }
            if context.diagnostics_omitted > 0 {
                let _ = writeln!(out, "- … and {} more", context.diagnostics_omitted);
            }
        }
        render_elsewhere(&mut out, &context.diagnostics_elsewhere);
    }
    if !context.open_files.is_empty() {
        let _ = write!(out, "Open files: {}", context.open_files.join(", "));
        if context.open_files_omitted > 0 {
            let _ = write!(out, ", … and {} more", context.open_files_omitted);
        }
        out.push('\n');
    }
    out.push_str("</editor-context>\n");
    out
}

/// Most line numbers listed per severity in the summary of the rest of the file.
const ELSEWHERE_LINES: usize = 10;

/// `Elsewhere in this file: 2 errors (lines 40, 52), 1 warning (line 77)`.
fn render_elsewhere(out: &mut String, elsewhere: &[(Severity, usize)]) {
    let mut parts = Vec::new();
    for (severity, one, many) in [
        (Severity::Error, "error", "errors"),
        (Severity::Warning, "warning", "warnings"),
    ] {
        let count = elsewhere.iter().filter(|(s, _)| *s == severity).count();
        if count == 0 {
            continue;
        }
        let mut lines: Vec<usize> = elsewhere
            .iter()
            .filter(|(s, _)| *s == severity)
            .map(|(_, line)| line + 1)
            .collect();
        lines.dedup();
        let mut shown: Vec<String> = lines
            .iter()
            .take(ELSEWHERE_LINES)
            .map(ToString::to_string)
            .collect();
        if lines.len() > ELSEWHERE_LINES {
            shown.push("…".into());
        }
        let noun = if count == 1 { one } else { many };
        let at = if lines.len() == 1 { "line" } else { "lines" };
        parts.push(format!("{count} {noun} ({at} {})", shown.join(", ")));
    }
    if !parts.is_empty() {
        let _ = writeln!(out, "Elsewhere in this file: {}", parts.join(", "));
    }
}

fn render_symbol(out: &mut String, language: &Language, symbol: &SymbolInfo) {
    let tag = language.fence_tag();
    match symbol {
        SymbolInfo::Found { symbol, text } => {
            let _ = write!(
                out,
                "Enclosing symbol: {}, lines {}-{}",
                symbol.path(),
                symbol.start_line + 1,
                symbol.end_line + 1
            );
            match text {
                None => out.push_str(" (the selection above)\n"),
                Some(text) => {
                    let clipped =
                        text.first_line > symbol.start_line || text.last_line < symbol.end_line;
                    if clipped {
                        let _ = writeln!(
                            out,
                            " (showing lines {}-{})",
                            text.first_line + 1,
                            text.last_line + 1
                        );
                        let _ = writeln!(out, "Signature: {}", symbol.signature_line);
                    } else {
                        out.push('\n');
                    }
                    fence(out, tag, &text.text);
                }
            }
        }
        SymbolInfo::TopLevel => out.push_str("Enclosing symbol: none (top level)\n"),
        SymbolInfo::NoParser { nearby } => {
            let _ = writeln!(
                out,
                "Enclosing symbol: unknown (no parser for {language}); nearby lines {}-{}:",
                nearby.first_line + 1,
                nearby.last_line + 1
            );
            fence(out, tag, &nearby.text);
        }
        SymbolInfo::NotParsed { reason, nearby } => {
            let _ = writeln!(
                out,
                "Enclosing symbol: unknown ({reason}); nearby lines {}-{}:",
                nearby.first_line + 1,
                nearby.last_line + 1
            );
            fence(out, tag, &nearby.text);
        }
        SymbolInfo::NoFocus => {}
    }
}

fn lines(excerpt: &Excerpt) -> usize {
    excerpt.last_line + 1 - excerpt.first_line.min(excerpt.last_line)
}

/// `text` in a code fence longer than any run of backticks inside it.
fn fence(out: &mut String, tag: &str, text: &str) {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let marks = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(out, "{marks}{tag}\n{text}\n{marks}");
}
