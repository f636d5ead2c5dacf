//! Terminal-safe text: what every string the terminal mode prints goes through.
//!
//! Answers, tool output, diffs and file names come from a model or a repository, so they may
//! hold escape sequences that would move the cursor, retitle the window, write the clipboard
//! (OSC 52) or reorder what the user reads (bidirectional overrides, "Trojan source").
//! [`sanitize`] (from [`crate::terminal_text`], which every other path to a terminal uses too)
//! turns every such character into a visible stand-in before a line is built, and expands tabs
//! so that widths are known. [`wrap`] and its variants then cut styled lines to the
//! screen's width by display columns (unicode-width), never splitting a wide character.
//!
//! Everything here is linear in the text's length: `sanitize` is one pass, and wrapping looks
//! back at most one screen line for a space before it breaks.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

pub use crate::terminal_text::{sanitize, TAB_WIDTH};

/// Display width of `s` in terminal columns.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Display width of a line's spans.
pub fn line_width(line: &Line<'_>) -> usize {
    spans_width(&line.spans)
}

/// Display width of `spans` side by side.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|span| width(&span.content)).sum()
}

/// The plain text of a line, styles dropped.
pub fn plain(line: &Line<'_>) -> String {
    line.spans
        .iter()
        .map(|span| span.content.as_ref())
        .collect()
}

/// Word-wraps `line` so that no result is wider than `width` columns.
///
/// Breaks at spaces (a line feed inside a span counts as one: split text into lines first); a
/// word is split only when it is wider than a whole line. Spaces at a
/// break are dropped. Styles are kept span by span. See [`wrap_with_prefix`] for the limits
/// at tiny widths.
pub fn wrap(line: Line<'static>, width: u16) -> Vec<Line<'static>> {
    wrap_with_prefix(line, width, Vec::new(), Vec::new())
}

/// [`wrap`], with `first_prefix` before the first row and `rest_prefix` before every other row
/// (a list marker and its hanging indent, a quote bar).
///
/// The prefixes count toward `width`. When a prefix leaves no room for text it is left out. A
/// width of 0 is read as 1; at width 1 a double-width character still gets a row of its own
/// (it cannot be split), so that row is 2 columns wide. An empty line gives one row.
pub fn wrap_with_prefix(
    line: Line<'static>,
    width: u16,
    first_prefix: Vec<Span<'static>>,
    rest_prefix: Vec<Span<'static>>,
) -> Vec<Line<'static>> {
    wrap_cells(line, width, first_prefix, rest_prefix, Mode::Words)
}

/// Hard-wraps `line` at exactly `width` columns, keeping every space: for code and tool output,
/// where whitespace matters. Prefixes and tiny widths as in [`wrap_with_prefix`].
pub fn hard_wrap_with_prefix(
    line: Line<'static>,
    width: u16,
    first_prefix: Vec<Span<'static>>,
    rest_prefix: Vec<Span<'static>>,
) -> Vec<Line<'static>> {
    wrap_cells(line, width, first_prefix, rest_prefix, Mode::Chars)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Words,
    Chars,
}

/// One character of the line with its style and width (0 for combining marks).
struct Cell {
    c: char,
    style: Style,
    width: usize,
}

impl Cell {
    fn is_space(&self) -> bool {
        self.c == ' ' || self.c == '\n'
    }
}

fn wrap_cells(
    line: Line<'static>,
    width: u16,
    first_prefix: Vec<Span<'static>>,
    rest_prefix: Vec<Span<'static>>,
    mode: Mode,
) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let line_style = line.style;
    let alignment = line.alignment;
    let cells: Vec<Cell> = line
        .spans
        .iter()
        .flat_map(|span| {
            let style = span.style;
            span.content.chars().map(move |c| Cell {
                c,
                style,
                width: c.width().unwrap_or(0),
            })
        })
        .collect();

    let make_row = |prefix: &[Span<'static>], cells: &[Cell]| {
        let mut spans: Vec<Span<'static>> = prefix.to_vec();
        let mut text = String::new();
        let mut style = None;
        for cell in cells {
            if style != Some(cell.style) {
                if let Some(style) = style {
                    spans.push(Span::styled(std::mem::take(&mut text), style));
                }
                style = Some(cell.style);
            }
            text.push(cell.c);
        }
        if let Some(style) = style {
            spans.push(Span::styled(text, style));
        }
        let mut row = Line::from(spans).style(line_style);
        row.alignment = alignment;
        row
    };

    let fit = |prefix: Vec<Span<'static>>| {
        let prefix_width = spans_width(&prefix);
        if prefix_width >= width {
            (Vec::new(), width)
        } else {
            (prefix, width - prefix_width)
        }
    };
    let (first_prefix, first_room) = fit(first_prefix);
    let (rest_prefix, rest_room) = fit(rest_prefix);

    let mut rows = Vec::new();
    let mut start = 0usize;
    let mut first = true;
    loop {
        let (prefix, room) = if first {
            (&first_prefix, first_room)
        } else {
            (&rest_prefix, rest_room)
        };
        if !first && mode == Mode::Words {
            while cells.get(start).is_some_and(Cell::is_space) {
                start += 1;
            }
        }
        if start >= cells.len() {
            if first {
                rows.push(make_row(prefix, &[]));
            }
            break;
        }
        // Take as many cells as fit; always at least one visible cell, so the loop advances.
        let mut end = start;
        let mut used = 0usize;
        let mut took_visible = false;
        while let Some(cell) = cells.get(end) {
            if cell.width > 0 && used + cell.width > room && took_visible {
                break;
            }
            used += cell.width;
            took_visible |= cell.width > 0;
            end += 1;
        }
        let mut next = end;
        if mode == Mode::Words && end < cells.len() && !cells[end].is_space() {
            // Mid-word: go back to the last space, unless the word fills the whole row.
            if let Some(space) = (start + 1..end).rev().find(|&i| cells[i].is_space()) {
                if cells[start..space].iter().any(|cell| !cell.is_space()) {
                    end = space;
                    next = space + 1;
                }
            }
        }
        let mut shown_end = end;
        if mode == Mode::Words {
            while shown_end > start && cells[shown_end - 1].is_space() {
                shown_end -= 1;
            }
        }
        rows.push(make_row(prefix, &cells[start..shown_end]));
        start = next;
        first = false;
    }
    rows
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
