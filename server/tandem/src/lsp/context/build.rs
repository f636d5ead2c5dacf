//! From what a prompt carries (a document's text, a byte range, diagnostics, open files) to an
//! [`EditorContext`]: the symbol is looked up, the diagnostics filtered to it, paths made
//! relative, and every text capped so one prompt cannot carry a whole minified bundle.
//!
//! Inputs are plain values: the LSP layer converts positions to byte offsets at its boundary and
//! passes the buffer's current text, so this module knows nothing of URIs, encodings or the
//! document store.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::languages::Language;
use super::lines::{clamp_range, LineIndex};
use super::render::{
    ContextDiagnostic, EditorContext, Excerpt, Focus, Selection, Severity, SymbolInfo, TextPosition,
};
use super::symbols::{find_symbol_indexed, SymbolSearch};

/// Most lines of a selection shown.
pub const MAX_SELECTION_LINES: usize = 200;
/// Most lines of the enclosing symbol shown (a window around the focus when it is longer).
pub const MAX_SYMBOL_LINES: usize = 200;
/// Lines shown before and after the focus when no symbol can be looked for.
pub const NEARBY_LINES: usize = 10;
/// Longest line shown, in characters; longer lines are cut with `…`.
pub const MAX_LINE_CHARS: usize = 500;
/// Most diagnostics listed.
pub const MAX_DIAGNOSTICS: usize = 20;
/// Longest diagnostic message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 500;
/// Most open files listed.
pub const MAX_OPEN_FILES: usize = 50;

/// What a prompt carries about the editor, in plain values.
#[derive(Debug, Clone)]
pub struct ContextRequest<'a> {
    /// The document's current text (the editor's buffer, saved or not).
    pub text: &'a str,
    /// The document's file path.
    pub path: &'a Path,
    /// The directory the agent's tools resolve relative paths against; paths inside it are
    /// shown relative to it.
    pub cwd: Option<&'a Path>,
    /// The editor's `languageId` for the document.
    pub language_id: Option<&'a str>,
    /// The selection as a byte range of `text` (empty: the cursor); `None` when the prompt
    /// named only the file. Clamped onto `text`.
    pub selection: Option<Range<usize>>,
    /// The document's diagnostics, when the prompt asked for them.
    pub diagnostics: Option<&'a [ContextDiagnostic]>,
    /// The files open in the editor.
    pub open_files: &'a [PathBuf],
}

/// The editor context for a prompt.
pub fn build(request: &ContextRequest<'_>) -> EditorContext {
    let text = request.text;
    let lines = LineIndex::new(text);
    let language = Language::detect(request.language_id, request.path);
    let range = request.selection.clone().map(|r| clamp_range(text, r));

    let focus = range.clone().map(|range| focus(text, &lines, range));
    // A selection of whole lines ends at the start of the next one: that line is not in it.
    let focus_lines = range.clone().map(|r| {
        let last = if r.is_empty() { r.end } else { r.end - 1 };
        (lines.line_of(r.start), lines.line_of(last))
    });
    let symbol = match (range, focus_lines) {
        (Some(range), Some((first, last))) => symbol_info(
            text,
            &lines,
            &language,
            range,
            (first, last),
            focus.as_ref(),
        ),
        _ => SymbolInfo::NoFocus,
    };

    let diagnostic_lines = match (&symbol, focus_lines) {
        (SymbolInfo::Found { symbol, .. }, _) => Some((symbol.start_line, symbol.end_line)),
        (_, lines) => lines,
    };
    let (diagnostics, diagnostics_omitted) = match request.diagnostics {
        Some(all) => {
            let (kept, omitted) = diagnostics_in(all, diagnostic_lines);
            (Some(kept), omitted)
        }
        None => (None, 0),
    };
    let diagnostics_elsewhere = match (request.diagnostics, diagnostic_lines) {
        (Some(all), Some(lines)) => elsewhere(all, lines),
        _ => Vec::new(),
    };

    let mut open_files: Vec<String> = request
        .open_files
        .iter()
        .map(|path| display_path(path, request.cwd))
        .collect();
    open_files.sort();
    open_files.dedup();
    let open_files_omitted = open_files.len().saturating_sub(MAX_OPEN_FILES);
    open_files.truncate(MAX_OPEN_FILES);

    EditorContext {
        path: display_path(request.path, request.cwd),
        language,
        focus,
        symbol,
        diagnostics,
        diagnostics_omitted,
        diagnostics_elsewhere,
        open_files,
        open_files_omitted,
    }
}

fn focus(text: &str, lines: &LineIndex, range: Range<usize>) -> Focus {
    let position = |offset: usize| TextPosition {
        line: lines.line_of(offset),
        column: lines.column_of(text, offset),
    };
    if range.is_empty() {
        let at = position(range.start);
        return Focus::Cursor {
            position: at,
            line_text: cut_line(lines.line_text(text, at.line)),
        };
    }
    let start = position(range.start);
    let end = position(range.end);
    let selected = &text[range.clone()];
    let sub = LineIndex::new(selected);
    let mut count = sub.line_count();
    if count > 1 && sub.line_text(selected, count - 1).is_empty() {
        count -= 1; // the selection ends with a line break
    }
    let shown = count.min(MAX_SELECTION_LINES);
    let body = (0..shown)
        .map(|l| cut_line(sub.line_text(selected, l)))
        .collect::<Vec<_>>()
        .join("\n");
    Focus::Selection(Selection {
        byte_range: range,
        start,
        end,
        text: Excerpt {
            first_line: start.line,
            last_line: start.line + shown - 1,
            text: body,
        },
    })
}

fn symbol_info(
    text: &str,
    lines: &LineIndex,
    language: &Language,
    range: Range<usize>,
    (first, last): (usize, usize),
    focus: Option<&Focus>,
) -> SymbolInfo {
    // The empty "line" after a final line break is not worth showing.
    let last_line = match lines.line_count() - 1 {
        n if n > 0 && lines.line_text(text, n).is_empty() => n - 1,
        n => n,
    };
    let nearby = || {
        let from = first.saturating_sub(NEARBY_LINES);
        let to = (last + NEARBY_LINES).min(last_line).max(from);
        excerpt(text, lines, from, to.min(from + MAX_SYMBOL_LINES - 1))
    };
    match find_symbol_indexed(text, lines, language, range) {
        SymbolSearch::Found(symbol) => {
            let selection_shows_it = match focus {
                Some(Focus::Selection(selection)) => {
                    selection.text.first_line <= symbol.start_line
                        && selection.text.last_line >= symbol.end_line
                }
                _ => false,
            };
            let text = (!selection_shows_it).then(|| {
                let (from, to) = window(symbol.start_line, symbol.end_line, first);
                excerpt(text, lines, from, to)
            });
            SymbolInfo::Found { symbol, text }
        }
        SymbolSearch::TopLevel => SymbolInfo::TopLevel,
        SymbolSearch::NoParser => SymbolInfo::NoParser { nearby: nearby() },
        SymbolSearch::NotParsed(reason) => SymbolInfo::NotParsed {
            reason,
            nearby: nearby(),
        },
    }
}

/// The lines of a symbol to show: all of them when they fit, else [`MAX_SYMBOL_LINES`] starting
/// a little above the focus line (the signature is printed separately then).
fn window(start: usize, end: usize, focus_line: usize) -> (usize, usize) {
    if end + 1 - start <= MAX_SYMBOL_LINES {
        return (start, end);
    }
    let from = focus_line
        .saturating_sub(MAX_SYMBOL_LINES / 10)
        .clamp(start, end + 1 - MAX_SYMBOL_LINES);
    (from, from + MAX_SYMBOL_LINES - 1)
}

fn excerpt(text: &str, lines: &LineIndex, first_line: usize, last_line: usize) -> Excerpt {
    let body = (first_line..=last_line)
        .map(|l| cut_line(lines.line_text(text, l)))
        .collect::<Vec<_>>()
        .join("\n");
    Excerpt {
        first_line,
        last_line,
        text: body,
    }
}

fn cut_line(line: &str) -> String {
    cut(line, MAX_LINE_CHARS)
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// The diagnostics touching `lines` (all of them without lines), sorted by line then severity,
/// capped; and how many the cap left out.
fn diagnostics_in(
    all: &[ContextDiagnostic],
    lines: Option<(usize, usize)>,
) -> (Vec<ContextDiagnostic>, usize) {
    let mut kept: Vec<ContextDiagnostic> = all
        .iter()
        .filter(|d| match lines {
            Some((first, last)) => d.line <= last && d.end_line.max(d.line) >= first,
            None => true,
        })
        .map(|d| ContextDiagnostic {
            message: cut(
                &d.message.split_whitespace().collect::<Vec<_>>().join(" "),
                MAX_MESSAGE_CHARS,
            ),
            ..d.clone()
        })
        .collect();
    kept.sort_by_key(|d| (d.line, d.severity));
    let omitted = kept.len().saturating_sub(MAX_DIAGNOSTICS);
    kept.truncate(MAX_DIAGNOSTICS);
    (kept, omitted)
}

/// The errors and warnings outside `(first, last)`, as (severity, first line), sorted by line.
fn elsewhere(all: &[ContextDiagnostic], (first, last): (usize, usize)) -> Vec<(Severity, usize)> {
    let mut found: Vec<(Severity, usize)> = all
        .iter()
        .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
        .filter(|d| !(d.line <= last && d.end_line.max(d.line) >= first))
        .map(|d| (d.severity, d.line))
        .collect();
    found.sort_by_key(|(severity, line)| (*line, *severity));
    found
}

/// `path` relative to `cwd` with `/` separators when inside it, else as given.
fn display_path(path: &Path, cwd: Option<&Path>) -> String {
    let relative = cwd
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .filter(|rel| !rel.as_os_str().is_empty());
    match relative {
        Some(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        None => path.to_string_lossy().into_owned(),
    }
}
