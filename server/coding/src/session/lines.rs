//! The JSON text of each entry, kept so that forks and migrated copies reproduce lines exactly.
//!
//! Typed entries drop fields Tandem does not model, so a fork that re-serialized them could lose
//! data a newer pi wrote. Keeping each line's text avoids that, but a hundred thousand separate
//! strings cost a hundred thousand allocations and a copy of the whole file on every resume.
//! So loaded lines are spans of one buffer, and only entries added afterwards own their text.
//! (An open session keeps no lines: it reads them back from the file, see `index.rs`; this is
//! for [`super::load_session_file`].)

use std::ops::Range;

/// One entry's text: a span of the shared buffer, or its own string.
#[derive(Debug, Clone)]
enum Line {
    Span(Range<usize>),
    Owned(Box<str>),
}

/// The text of every entry, in entry order.
#[derive(Debug, Clone, Default)]
pub struct EntryLines {
    buffer: String,
    lines: Vec<Line>,
}

impl EntryLines {
    /// Lines that will be spans of `buffer`.
    pub fn with_buffer(buffer: String) -> EntryLines {
        EntryLines {
            buffer,
            lines: Vec::new(),
        }
    }

    /// The buffer the spans point into.
    pub fn buffer(&self) -> &str {
        &self.buffer
    }

    /// Adds a line that is `range` of the buffer.
    ///
    /// # Panics
    /// If `range` is not a `str` range of the buffer (a bug in the caller).
    pub fn push_span(&mut self, range: Range<usize>) {
        assert!(
            self.buffer.get(range.clone()).is_some(),
            "line span out of buffer"
        );
        self.lines.push(Line::Span(range));
    }

    /// Adds a line, copied to the end of the buffer.
    pub fn push_text(&mut self, text: &str) {
        let start = self.buffer.len();
        self.buffer.push_str(text);
        self.lines.push(Line::Span(start..self.buffer.len()));
    }

    /// Adds a line with its own text.
    pub fn push(&mut self, line: Box<str>) {
        self.lines.push(Line::Owned(line));
    }

    /// The number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Line `i`.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.lines.get(i).map(|line| match line {
            Line::Span(range) => &self.buffer[range.clone()],
            Line::Owned(text) => &**text,
        })
    }

    /// All lines in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.lines.len()).filter_map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_owned_lines_read_back_in_order() {
        let mut lines = EntryLines::with_buffer("{\"a\":1}\n{\"b\":2}\n".to_string());
        lines.push_span(0..7);
        lines.push_span(8..15);
        lines.push("{\"c\":3}".into());
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines.iter().collect::<Vec<_>>(),
            ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]
        );
        assert_eq!(lines.get(3), None);
    }
}
