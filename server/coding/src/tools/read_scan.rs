//! The streaming line scan behind the `read` tool: one pass over a file or an editor buffer,
//! keeping only the window of lines the tool will show and counting the rest.
//!
//! Why a streaming scan: models often read a window of a large log or generated file. A file on
//! disk is scanned once, in fixed chunks on a blocking thread; only the lines that will be shown
//! are kept, the rest is only counted (pi's notices need the total). Memory stays at the window
//! (at most 50 KB) plus one read buffer, whatever the size of the file or of its longest line.
//!
//! Lines are counted like pi's `split("\n")`, and [`Window::truncation`] gives what pi's
//! `truncate_head` would on the selected text, so the tool's notices stay pi's. A kept line is
//! decoded only once it is complete, so a character split across chunks still decodes; bytes
//! that are not UTF-8 become U+FFFD and the window says so. The scan knows nothing of images,
//! paths or messages: those are the tool's.

use std::borrow::Cow;
use std::io::{self, BufRead};

use tokio_util::sync::CancellationToken;

use super::truncate::{TruncatedBy, Truncation};

/// Read buffer of the scan.
pub(super) const CHUNK_BYTES: usize = 64 * 1024;

/// The lines asked for: from `start` (0-based), at most `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) limit: Option<usize>,
}

/// Why a scan stopped early.
#[derive(Debug)]
pub(super) enum ScanError {
    /// The call was cancelled.
    Aborted,
    /// Reading failed.
    Io(io::Error),
}

/// What one pass over a text found: the lines to show and the counts pi's notices need.
#[derive(Debug, Default)]
pub(super) struct Window {
    /// Lines in the whole text, counted like pi's `split("\n")` (a final newline adds an empty
    /// last line; an empty text is one line).
    pub(super) total_lines: usize,
    /// The selected lines that fit the limits, decoded.
    pub(super) kept: Vec<String>,
    /// Lines selected by offset/limit.
    pub(super) selected_lines: usize,
    /// Bytes of the selected lines joined with newlines.
    selected_bytes: usize,
    /// Bytes of the first selected line.
    pub(super) first_line_bytes: usize,
    /// A kept line held bytes that are not UTF-8.
    pub(super) lossy: bool,
    /// Most line bytes held at once (kept lines plus the line being read).
    pub(super) peak_held: usize,
}

impl Window {
    /// pi's head truncation of the selected lines (as `truncate_head` computes it on their text).
    pub(super) fn truncation(&self, max_lines: usize, max_bytes: usize) -> Truncation {
        let content = self.kept.join("\n");
        let mut t = Truncation {
            output_bytes: content.len(),
            content,
            truncated_by: None,
            // pi splits the joined selection: an empty one is still one (empty) line.
            total_lines: self.selected_lines.max(1),
            total_bytes: self.selected_bytes,
            output_lines: self.kept.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
        };
        if self.selected_lines <= max_lines && self.selected_bytes <= max_bytes {
            t.output_lines = t.total_lines;
        } else if self.first_line_bytes > max_bytes {
            t.truncated_by = Some(TruncatedBy::Bytes);
            t.first_line_exceeds_limit = true;
        } else if self.kept.len() >= max_lines {
            t.truncated_by = Some(TruncatedBy::Lines);
        } else {
            t.truncated_by = Some(TruncatedBy::Bytes);
        }
        t
    }
}

/// Scans `reader` once, keeping the lines of `span` that fit `max_lines`/`max_bytes` and
/// counting everything else. Holds at most `max_bytes` of line text plus the reader's buffer.
pub(super) fn scan<R: BufRead>(
    mut reader: R,
    span: Span,
    max_lines: usize,
    max_bytes: usize,
    cancel: &CancellationToken,
) -> Result<Window, ScanError> {
    let mut scanner = Scanner::new(span, max_lines, max_bytes);
    loop {
        if cancel.is_cancelled() {
            return Err(ScanError::Aborted);
        }
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ScanError::Io(e)),
        };
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len();
        scanner.consume(chunk);
        reader.consume(n);
    }
    scanner.end_line();
    scanner.window.total_lines = scanner.line;
    Ok(scanner.window)
}

/// The scan's state between chunks.
struct Scanner {
    start: usize,
    end: usize,
    max_lines: usize,
    max_bytes: usize,
    /// Index of the line being read.
    line: usize,
    /// Its bytes so far.
    line_bytes: usize,
    /// Room left for it when it may still be kept.
    budget: Option<usize>,
    /// Its bytes, while it may be kept.
    buf: Vec<u8>,
    /// Still keeping lines (no selected line was cut yet).
    open: bool,
    /// Bytes of the kept lines joined with newlines.
    kept_bytes: usize,
    window: Window,
}

impl Scanner {
    fn new(span: Span, max_lines: usize, max_bytes: usize) -> Self {
        let mut scanner = Scanner {
            start: span.start,
            end: span
                .limit
                .map_or(usize::MAX, |l| span.start.saturating_add(l)),
            max_lines,
            max_bytes,
            line: 0,
            line_bytes: 0,
            budget: None,
            buf: Vec::new(),
            open: true,
            kept_bytes: 0,
            window: Window::default(),
        };
        scanner.begin_line();
        scanner
    }

    fn selected(&self) -> bool {
        self.line >= self.start && self.line < self.end
    }

    fn begin_line(&mut self) {
        self.line_bytes = 0;
        self.buf.clear();
        self.budget = None;
        if !self.open || !self.selected() {
            return;
        }
        let index = self.line - self.start;
        if index >= self.max_lines {
            self.open = false;
            return;
        }
        match self
            .max_bytes
            .checked_sub(self.kept_bytes + usize::from(index > 0))
        {
            Some(room) => self.budget = Some(room),
            None => self.open = false,
        }
    }

    fn consume(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            if self.line >= self.end {
                // Past the selection: only the total matters.
                self.line += chunk.iter().filter(|&&b| b == b'\n').count();
                return;
            }
            match chunk.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    self.feed(&chunk[..at]);
                    self.end_line();
                    chunk = &chunk[at + 1..];
                }
                None => {
                    self.feed(chunk);
                    return;
                }
            }
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.line_bytes += bytes.len();
        let Some(room) = self.budget else { return };
        if self.buf.len() + bytes.len() <= room {
            self.buf.extend_from_slice(bytes);
            let held = self.kept_bytes + self.buf.len();
            self.window.peak_held = self.window.peak_held.max(held);
        } else {
            // Lossy decoding never shrinks text, so this line cannot fit: stop keeping.
            self.budget = None;
            self.open = false;
            self.buf.clear();
        }
    }

    fn end_line(&mut self) {
        if self.selected() {
            let index = self.line - self.start;
            let mut size = self.line_bytes;
            if let Some(room) = self.budget.take() {
                let text = String::from_utf8_lossy(&self.buf);
                size = text.len();
                if size <= room {
                    self.window.lossy |= matches!(text, Cow::Owned(_));
                    self.kept_bytes += size + usize::from(index > 0);
                    self.window.kept.push(text.into_owned());
                } else {
                    self.open = false;
                }
            }
            if index == 0 {
                self.window.first_line_bytes = size;
            }
            self.window.selected_lines += 1;
            self.window.selected_bytes += size + usize::from(index > 0);
        }
        self.line += 1;
        self.begin_line();
    }
}
