//! Markdown that arrives in deltas: finished blocks rendered once, the open tail on demand.
//!
//! The text is cut into *chunks* at points where CommonMark cannot join what comes before with
//! what comes after, so rendering each chunk alone gives what rendering the whole would:
//! - after a blank line (outside a fenced code block), where the next line starts in column
//!   0 — decided as soon as that line's first character arrives. An indented line after a
//!   blank may still belong to a list item or an indented code block, so it does not cut; nor
//!   does a blank line alone, since the next line decides.
//! - right after the closing line of a fence that opened in column 0 (such a fence is never
//!   inside a list item or quote). A fence opened with ``` is closed only by ``` (at least as
//!   many), one opened with ~~~ only by ~~~. A fence indented one to three columns may belong
//!   to a list item, so its close counts as a blank line instead.
//!
//! A chunk before a cut is *finished*: [`MarkdownStream::take_finished`] renders it once and
//! never again. Ordered-list numbering is carried from one chunk to the next (a list that goes
//! on after a blank line keeps counting). Chunks are separated by one blank row, as blocks are
//! in [`super::render`]; the one difference from rendering the whole text is that a list whose
//! items are separated by blank lines is loose as a whole but tight within each chunk, so blank
//! rows between its first items may be missing. Link reference definitions apply within their
//! chunk only, and an HTML block that holds blank lines (`<pre>`, comments) is cut like text.
//!
//! Cost: [`MarkdownStream::push`] looks at each byte once (a lone `\r` at the end waits for the
//! next delta, which may bring its `\n`), so pushing is linear in the text. Every finished
//! chunk is rendered once, which is linear too. [`MarkdownStream::tail`] renders at most about
//! `max_lines × width × 4` bytes and `2 × max_lines` lines from the end of the open chunk (plus
//! the opening line of a code fence it is inside), whatever the open chunk's length, so the
//! cost of a frame does not grow with the answer.

use ratatui::text::Line;

use super::{render_chunk, OrderedCarry};
use crate::tui::theme::Theme;

/// A code fence left open: its character (`` ` `` or `~`), its length, where its line is.
#[derive(Debug, Clone, Copy)]
struct Fence {
    mark: u8,
    len: usize,
    indented: bool,
    line: (usize, usize),
}

/// Renders markdown as it streams in; see the module docs.
#[derive(Debug, Default)]
pub struct MarkdownStream {
    text: String,
    /// Where the search for the next line end resumes.
    scan: usize,
    /// Where the line being read starts.
    line_start: usize,
    /// Ends of the finished chunks not taken yet, in order.
    finished: Vec<usize>,
    /// Where the first chunk not yet rendered starts.
    taken: usize,
    /// Where the open (unfinished) chunk starts.
    open_start: usize,
    fence: Option<Fence>,
    /// The last line of the open chunk was blank (or closed an indented fence).
    after_blank: bool,
    /// The open chunk has a line that is not blank.
    open_has_text: bool,
    carry: Option<OrderedCarry>,
    rendered_any: bool,
}

impl MarkdownStream {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything pushed so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Appends `delta`, finding the chunks it finishes. Amortized O(`delta.len()`).
    pub fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
        loop {
            let bytes = self.text.as_bytes();
            let Some(found) = bytes
                .get(self.scan..)
                .and_then(|rest| rest.iter().position(|b| *b == b'\n' || *b == b'\r'))
            else {
                self.scan = bytes.len();
                self.line_begun();
                return;
            };
            let end = self.scan + found;
            let next = match (bytes[end], bytes.get(end + 1)) {
                (b'\r', None) => {
                    // `\r` may be the first half of `\r\n`: wait for the next delta.
                    self.scan = end;
                    return;
                }
                (b'\r', Some(b'\n')) => end + 2,
                _ => end + 1,
            };
            self.line(self.line_start, end, next);
            self.line_start = next;
            self.scan = next;
        }
    }

    /// The line being read has its first character: one in column 0 after a blank line starts
    /// the next block, so the open chunk is finished without waiting for the line's end.
    fn line_begun(&mut self) {
        let first = self.text.as_bytes().get(self.line_start).copied();
        if self.fence.is_none()
            && self.after_blank
            && first.is_some_and(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            self.cut(self.line_start);
            // The line itself is not blank, whatever else it holds.
            self.open_has_text = true;
        }
    }

    /// One complete line, `text[start..end]`, whose line break ends at `next`.
    fn line(&mut self, start: usize, end: usize, next: usize) {
        let line = self.text.get(start..end).unwrap_or("");
        if let Some(fence) = self.fence {
            if closes(line, fence) {
                self.fence = None;
                if fence.indented {
                    self.after_blank = true;
                } else {
                    self.cut(next);
                }
            }
            return;
        }
        if line.trim_matches([' ', '\t']).is_empty() {
            self.after_blank = self.open_has_text;
            return;
        }
        let opened = opens(line);
        if self.after_blank && !line.starts_with([' ', '\t']) {
            self.cut(start);
        }
        self.after_blank = false;
        self.open_has_text = true;
        self.fence = opened.map(|(mark, len, indented)| Fence {
            mark,
            len,
            indented,
            line: (start, end),
        });
    }

    /// Ends the open chunk at `at`.
    fn cut(&mut self, at: usize) {
        if at > self.open_start {
            self.finished.push(at);
            self.open_start = at;
        }
        self.after_blank = false;
        self.open_has_text = false;
    }

    /// The chunks finished since the last call, rendered at `width`, each once.
    pub fn take_finished(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for end in std::mem::take(&mut self.finished) {
            self.render_upto(end, width, theme, &mut out);
        }
        out
    }

    fn render_upto(&mut self, end: usize, width: u16, theme: &Theme, out: &mut Vec<Line<'static>>) {
        let chunk = self.text.get(self.taken..end).unwrap_or("");
        self.taken = end;
        let lines = render_chunk(chunk, width, theme, &mut self.carry);
        if lines.is_empty() {
            return;
        }
        if self.rendered_any {
            out.push(Line::default());
        }
        self.rendered_any = true;
        out.extend(lines);
    }

    /// The open chunk as it would render now: its last `max_lines` rows. Finished chunks not yet
    /// taken are not included (call [`Self::take_finished`] first). Only the end of a long open
    /// chunk is rendered, so a block cut there may show slightly differently than it will once
    /// finished.
    pub fn tail(&self, width: u16, max_lines: usize, theme: &Theme) -> Vec<Line<'static>> {
        if max_lines == 0 {
            return Vec::new();
        }
        let open = self.text.get(self.open_start..).unwrap_or("");
        let cut = window_start(open, width, max_lines, self.fence.is_some());
        let window = &open[cut..];
        let rendered;
        let source = match self.fence {
            Some(fence) if cut > 0 && fence.line.0 < self.open_start + cut => {
                let fence_line = self.text.get(fence.line.0..fence.line.1).unwrap_or("```");
                rendered = format!("{fence_line}\n{window}");
                rendered.as_str()
            }
            _ => window,
        };
        // The tail is a preview: it must not move the list numbering on.
        let mut carry = self.carry;
        let mut lines = render_chunk(source, width, theme, &mut carry);
        let skip = lines.len().saturating_sub(max_lines);
        lines.drain(..skip);
        lines
    }

    /// The stream ended: everything not returned yet, rendered (an open fence as code).
    pub fn finish(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = self.take_finished(width, theme);
        let end = self.text.len();
        self.render_upto(end, width, theme, &mut out);
        self.scan = end;
        self.line_start = end;
        self.open_start = end;
        self.fence = None;
        self.after_blank = false;
        self.open_has_text = false;
        out
    }
}

/// Where the part of `open` that [`MarkdownStream::tail`] renders starts: within the last
/// `max_lines × (width + 8) × 4` bytes (a row holds at most `width` cells of at most 4 bytes;
/// the 8 allow for markup that shows nothing), and no more than `2 × max_lines + 2` lines
/// back (most lines give at least one row; blank lines, setext underlines and link
/// definitions give none). The start is a line start when the window holds one, and outside a
/// code fence it moves on to a line in column 0 if one comes soon, so a nested list item cut
/// from its parent does not read as indented code.
fn window_start(open: &str, width: u16, max_lines: usize, in_fence: bool) -> usize {
    let budget = max_lines
        .saturating_mul(usize::from(width.max(1)) + 8)
        .saturating_mul(4);
    let mut cut = open.len().saturating_sub(budget);
    while !open.is_char_boundary(cut) {
        cut += 1;
    }
    let keep = max_lines.saturating_mul(2).saturating_add(2);
    match open[cut..].rmatch_indices('\n').nth(keep) {
        Some((newline, _)) => cut += newline + 1,
        None if cut > 0 => {
            if let Some(newline) = open[cut..].find('\n') {
                cut += newline + 1;
            }
        }
        None => return 0,
    }
    if !in_fence {
        let mut at = cut;
        for line in open[cut..].split_inclusive('\n').take(max_lines) {
            if !line.starts_with([' ', '\t', '\n', '\r']) {
                return at;
            }
            at += line.len();
        }
    }
    cut
}

/// A fence opened by `line`: its character, length and whether it is indented.
fn opens(line: &str) -> Option<(u8, usize, bool)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let mark = *rest.as_bytes().first()?;
    if mark != b'`' && mark != b'~' {
        return None;
    }
    let len = rest.len() - rest.trim_start_matches(char::from(mark)).len();
    if len < 3 {
        return None;
    }
    // A backtick fence's info string may not hold a backtick.
    if mark == b'`' && rest[len..].contains('`') {
        return None;
    }
    Some((mark, len, indent > 0))
}

/// Whether `line` closes `fence`.
fn closes(line: &str, fence: Fence) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let len = rest.len() - rest.trim_start_matches(char::from(fence.mark)).len();
    len >= fence.len && rest[len..].trim_matches([' ', '\t']).is_empty()
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
