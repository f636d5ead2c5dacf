//! LSP positions ↔ indices in a [`Rope`], in the position encoding the client negotiated.
//!
//! An LSP position is a line and a character offset counted in UTF-8 bytes, UTF-16 code units
//! or Unicode scalar values (UTF-32), depending on what `initialize` negotiated. Every
//! conversion happens here, at one boundary (as helix-lsp does), so the rest of the server
//! speaks char or byte indices only. The types are the store's own, not tower-lsp's: the
//! server converts its wire types at the edge, and this module knows nothing about JSON-RPC.
//!
//! Each conversion is O(log n): ropey's tree indexes chars, bytes, UTF-16 code units and
//! lines, so no conversion scans a line or the document.
//!
//! Line breaks: LSP counts `\n`, `\r\n` and `\r` only. Ropey 1.6 also counts Unicode breaks
//! (U+000B, U+000C, U+0085, U+2028, U+2029) under its default `unicode_lines` feature, so
//! `Cargo.toml` enables only `cr_lines`. Cargo unifies features, so if another crate in the
//! same build turns `unicode_lines` back on, positions after such a character would shift:
//! [`ropey_counts_lsp_lines`] tells, and a unit test fails loudly when that happens.
//!
//! Out-of-range input never panics; it is clamped the way the LSP specification says:
//! a character past the end of its line means the line end, a line past the last line means
//! the end of the document, and an offset inside a UTF-16 surrogate pair or inside a
//! multi-byte UTF-8 sequence snaps back to the start of that character.

use ropey::Rope;

/// A position in a document as LSP sends it: zero-based line and character offset, the
/// latter counted in the negotiated [`PositionEncoding`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    /// Zero-based line, counted by LSP's line endings (`\n`, `\r\n`, `\r`).
    pub line: u32,
    /// Zero-based offset within the line, in units of the negotiated encoding.
    pub character: u32,
}

impl Position {
    /// A position at `line`, `character`.
    pub const fn new(line: u32, character: u32) -> Self {
        Self { line, character }
    }
}

/// A range between two positions; `end` is exclusive. A reversed range is treated as if its
/// ends were swapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Range {
    /// The first position in the range.
    pub start: Position,
    /// The position just past the range.
    pub end: Position,
}

impl Range {
    /// A range from `start` to `end`.
    pub const fn new(start: Position, end: Position) -> Self {
        Self { start, end }
    }
}

/// The unit LSP positions count characters in (`PositionEncodingKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PositionEncoding {
    /// `"utf-8"`: bytes of the UTF-8 encoding.
    Utf8,
    /// `"utf-16"`: UTF-16 code units; the LSP default, which every server must support.
    #[default]
    Utf16,
    /// `"utf-32"`: Unicode scalar values (Rust `char`s).
    Utf32,
}

impl PositionEncoding {
    /// Chooses the encoding from the client's `general.positionEncodings`: UTF-8 when offered
    /// (ropey stores UTF-8, so it is the cheapest), otherwise UTF-16, which LSP makes
    /// mandatory. UTF-32 is understood but not chosen over UTF-16, as the brief asks.
    pub fn negotiate(client_offers: &[&str]) -> PositionEncoding {
        if client_offers.contains(&"utf-8") {
            PositionEncoding::Utf8
        } else {
            PositionEncoding::Utf16
        }
    }

    /// The encoding's LSP name, as sent back in `capabilities.positionEncoding`.
    pub fn as_lsp_str(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }

    /// Parses an LSP encoding name; `None` for names LSP does not define.
    pub fn from_lsp_str(name: &str) -> Option<PositionEncoding> {
        match name {
            "utf-8" => Some(PositionEncoding::Utf8),
            "utf-16" => Some(PositionEncoding::Utf16),
            "utf-32" => Some(PositionEncoding::Utf32),
            _ => None,
        }
    }
}

/// Whether the linked ropey counts lines exactly as LSP does (`\n`, `\r\n`, `\r`, and no
/// Unicode line separators). False means some crate in the build enabled ropey's
/// `unicode_lines` feature; positions after U+2028, U+0085 and the like would then be wrong.
pub fn ropey_counts_lsp_lines() -> bool {
    let rope = Rope::from_str("a\rb\r\nc\nd\u{2028}e\u{85}f\u{b}g\u{c}h\u{2029}i");
    rope.len_lines() == 4
}

/// The char index `position` designates in `rope`, clamped as LSP specifies.
pub fn position_to_char(rope: &Rope, position: Position, encoding: PositionEncoding) -> usize {
    let line = position.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let start = rope.line_to_char(line);
    let end = line_content_end(rope, line);
    let character = position.character as usize;
    match encoding {
        PositionEncoding::Utf32 => start + character.min(end - start),
        PositionEncoding::Utf16 => {
            let target = rope.char_to_utf16_cu(start) + character;
            if target >= rope.char_to_utf16_cu(end) {
                end
            } else {
                // Inside a surrogate pair, ropey returns the pair's char: its start.
                rope.utf16_cu_to_char(target)
            }
        }
        PositionEncoding::Utf8 => {
            let target = rope.char_to_byte(start) + character;
            if target >= rope.char_to_byte(end) {
                end
            } else {
                // Inside a multi-byte sequence, ropey returns that char: its start.
                rope.byte_to_char(target)
            }
        }
    }
}

/// The position of char index `char_idx` in `rope`; an index past the end means the end.
///
/// An index between the `\r` and `\n` of a CRLF gives a character one past the line's
/// content, which LSP clients (and [`position_to_char`]) clamp to the line end.
pub fn char_to_position(rope: &Rope, char_idx: usize, encoding: PositionEncoding) -> Position {
    let char_idx = char_idx.min(rope.len_chars());
    let line = rope.char_to_line(char_idx);
    let start = rope.line_to_char(line);
    let character = match encoding {
        PositionEncoding::Utf32 => char_idx - start,
        PositionEncoding::Utf16 => rope.char_to_utf16_cu(char_idx) - rope.char_to_utf16_cu(start),
        PositionEncoding::Utf8 => rope.char_to_byte(char_idx) - rope.char_to_byte(start),
    };
    Position {
        line: saturate(line),
        character: saturate(character),
    }
}

/// The byte offset (into the text as one UTF-8 string) that `position` designates, clamped
/// as LSP specifies; always on a char boundary.
pub fn position_to_byte(rope: &Rope, position: Position, encoding: PositionEncoding) -> usize {
    rope.char_to_byte(position_to_char(rope, position, encoding))
}

/// The position of byte offset `byte_idx` in the text as one UTF-8 string. An offset past the
/// end means the end; one inside a multi-byte character means that character's start.
pub fn byte_to_position(rope: &Rope, byte_idx: usize, encoding: PositionEncoding) -> Position {
    let char_idx = rope.byte_to_char(byte_idx.min(rope.len_bytes()));
    char_to_position(rope, char_idx, encoding)
}

/// The char range `range` designates, clamped, with its ends in order.
pub fn range_to_chars(
    rope: &Rope,
    range: Range,
    encoding: PositionEncoding,
) -> std::ops::Range<usize> {
    let start = position_to_char(rope, range.start, encoding);
    let end = position_to_char(rope, range.end, encoding);
    start.min(end)..start.max(end)
}

/// The char index just past the content of `line` (before its `\n`, `\r\n` or `\r`).
/// `line` must be less than `rope.len_lines()`.
fn line_content_end(rope: &Rope, line: usize) -> usize {
    let start = rope.line_to_char(line);
    let next = rope.line_to_char(line + 1);
    if next == start {
        return start;
    }
    match rope.char(next - 1) {
        '\n' if next - 1 > start && rope.char(next - 2) == '\r' => next - 2,
        '\n' | '\r' => next - 1,
        // The last line has no break; so would any break LSP does not count (see module docs).
        _ => next,
    }
}

/// LSP positions are `u32`; a document longer than that cannot be addressed anyway.
fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "position_tests.rs"]
mod tests;
