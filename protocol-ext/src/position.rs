//! LSP's `Position` and `Range`, defined here so the crate needs no LSP library.
//!
//! They serialize exactly like LSP's (`{"line", "character"}`, `{"start", "end"}`), so a client
//! can pass an LSP range straight through. Columns are in the position encoding negotiated at
//! `initialize` (UTF-16 unless the server chose UTF-8); the server converts them to byte offsets
//! at its one document boundary.

use serde::{Deserialize, Serialize};

/// A zero-based line and column, as in LSP.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Position {
    /// Zero-based line.
    pub line: u32,
    /// Zero-based column, in the negotiated position encoding's code units.
    pub character: u32,
}

impl Position {
    /// A position at `line`, `character`.
    pub const fn new(line: u32, character: u32) -> Self {
        Position { line, character }
    }
}

/// A half-open span `[start, end)`, as in LSP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Range {
    /// Inclusive start.
    pub start: Position,
    /// Exclusive end.
    pub end: Position,
}

impl Range {
    /// A range from `start` to `end`.
    pub const fn new(start: Position, end: Position) -> Self {
        Range { start, end }
    }

    /// True when the range covers no text (a cursor).
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_like_lsp() {
        let r = Range::new(Position::new(3, 4), Position::new(5, 0));
        let v = json!({"start": {"line": 3, "character": 4}, "end": {"line": 5, "character": 0}});
        assert_eq!(serde_json::to_value(r).unwrap(), v);
        assert_eq!(serde_json::from_value::<Range>(v).unwrap(), r);
        assert!(!r.is_empty());
        assert!(Range::new(Position::new(1, 1), Position::new(1, 1)).is_empty());
    }

    #[test]
    fn missing_field_is_named() {
        let err = serde_json::from_value::<Position>(json!({"line": 1})).unwrap_err();
        assert_eq!(err.to_string(), "missing field `character`");
    }
}
