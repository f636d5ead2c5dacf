//! Line numbers of byte offsets, with the LSP's three line breaks (`\n`, `\r\n`, `\r`).
//!
//! tree-sitter counts rows by `\n` only, and the editor by all three: the context's line
//! numbers come from here so that they match what the user sees and what the read tool prints.
//! Offsets from outside are clamped onto the text and onto character boundaries, never trusted.

use std::ops::Range;

/// The byte offset where each line of a text starts.
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Indexes `text` in one pass.
    pub(crate) fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// How many lines the text has (an empty text, or one ending in a break, has a last empty
    /// line, as in the editor).
    pub(crate) fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The 0-based line holding byte `offset` (clamped to the text).
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        self.starts.partition_point(|&start| start <= offset) - 1
    }

    /// The bytes of `line` without its line break; an empty range past the last line.
    pub(crate) fn line_range(&self, text: &str, line: usize) -> Range<usize> {
        let Some(&start) = self.starts.get(line) else {
            return self.len..self.len;
        };
        let mut end = self.starts.get(line + 1).copied().unwrap_or(self.len);
        let bytes = text.as_bytes();
        if end > start && bytes.get(end - 1) == Some(&b'\n') {
            end -= 1;
        }
        if end > start && bytes.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        start..end
    }

    /// The text of `line` without its line break.
    pub(crate) fn line_text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        text.get(self.line_range(text, line)).unwrap_or("")
    }

    /// The 0-based column of `offset` on its line, in characters.
    pub(crate) fn column_of(&self, text: &str, offset: usize) -> usize {
        let offset = floor_char_boundary(text, offset);
        let start = self.starts[self.line_of(offset)].min(offset);
        text.get(start..offset).map_or(0, |s| s.chars().count())
    }
}

/// `range` made safe for `text`: ends clamped to its length and moved back onto character
/// boundaries, start and end swapped if reversed.
pub(crate) fn clamp_range(text: &str, range: Range<usize>) -> Range<usize> {
    let a = floor_char_boundary(text, range.start);
    let b = floor_char_boundary(text, range.end);
    a.min(b)..a.max(b)
}

/// `range` without the whitespace at either end, unless it is all whitespace. A selection of
/// whole lines ends at the start of the next line; trimmed, it sits inside the definition the
/// user selected rather than in the one around it.
pub(crate) fn trim_range(text: &str, range: Range<usize>) -> Range<usize> {
    let Some(slice) = text.get(range.clone()) else {
        return range;
    };
    let trimmed = slice.trim();
    if trimmed.is_empty() {
        return range;
    }
    let start = range.start + (slice.len() - slice.trim_start().len());
    start..start + trimmed.len()
}

fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_kinds_of_line_break() {
        let text = "a\nb\r\nc\rd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        let lines: Vec<&str> = (0..4).map(|l| index.line_text(text, l)).collect();
        assert_eq!(lines, ["a", "b", "c", "d"]);
        assert_eq!(index.line_of(0), 0);
        assert_eq!(index.line_of(2), 1);
        // Between \r and \n is still the end of line 1.
        assert_eq!(index.line_of(4), 1);
        assert_eq!(index.line_of(5), 2);
        assert_eq!(index.line_of(7), 3);
        assert_eq!(index.line_of(100), 3);
        assert_eq!(index.line_text(text, 9), "");
    }

    #[test]
    fn trailing_break_makes_an_empty_last_line() {
        let index = LineIndex::new("x\n");
        assert_eq!(index.line_count(), 2);
        assert_eq!(index.line_of(2), 1);
        assert_eq!(LineIndex::new("").line_count(), 1);
    }

    #[test]
    fn columns_count_characters() {
        let text = "ab\n日本x";
        let index = LineIndex::new(text);
        assert_eq!(index.column_of(text, 3), 0);
        assert_eq!(index.column_of(text, 9), 2);
        // Inside a character: the column of the character.
        assert_eq!(index.column_of(text, 4), 0);
    }

    #[test]
    fn ranges_are_clamped_and_trimmed() {
        let text = "日本";
        assert_eq!(clamp_range(text, 1..100), 0..6);
        let reversed = std::ops::Range { start: 5, end: 2 };
        assert_eq!(clamp_range(text, reversed), 0..3);
        assert_eq!(trim_range("  ab \n", 0..6), 2..4);
        assert_eq!(trim_range("  \n", 0..3), 0..3);
        assert_eq!(trim_range("ab", 1..1), 1..1);
    }
}
