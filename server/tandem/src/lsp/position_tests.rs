use super::*;

use PositionEncoding::{Utf16, Utf32, Utf8};

const ALL: [PositionEncoding; 3] = [Utf8, Utf16, Utf32];

fn at(line: u32, character: u32) -> Position {
    Position::new(line, character)
}

fn to_char(text: &str, line: u32, character: u32, encoding: PositionEncoding) -> usize {
    position_to_char(&Rope::from_str(text), at(line, character), encoding)
}

#[test]
fn negotiation_prefers_utf8_then_falls_back_to_utf16() {
    assert_eq!(PositionEncoding::negotiate(&["utf-16", "utf-8"]), Utf8);
    assert_eq!(PositionEncoding::negotiate(&["utf-8"]), Utf8);
    assert_eq!(PositionEncoding::negotiate(&["utf-16"]), Utf16);
    assert_eq!(PositionEncoding::negotiate(&["utf-32"]), Utf16);
    assert_eq!(PositionEncoding::negotiate(&["utf-32", "utf-16"]), Utf16);
    assert_eq!(PositionEncoding::negotiate(&[]), Utf16);
    assert_eq!(PositionEncoding::negotiate(&["UTF-8", "latin-1"]), Utf16);
}

#[test]
fn encoding_names_round_trip() {
    for encoding in ALL {
        assert_eq!(
            PositionEncoding::from_lsp_str(encoding.as_lsp_str()),
            Some(encoding)
        );
    }
    assert_eq!(Utf8.as_lsp_str(), "utf-8");
    assert_eq!(Utf16.as_lsp_str(), "utf-16");
    assert_eq!(Utf32.as_lsp_str(), "utf-32");
    assert_eq!(PositionEncoding::from_lsp_str("utf8"), None);
    assert_eq!(PositionEncoding::default(), Utf16);
}

#[test]
fn ropey_is_built_with_lsp_line_breaks_only() {
    assert!(
        ropey_counts_lsp_lines(),
        "ropey was built with `unicode_lines`: some crate in this build depends on ropey with \
         default features; depend on it with default-features = false, features = [\"cr_lines\"]"
    );
}

#[test]
fn empty_document_clamps_everything_to_zero() {
    let rope = Rope::new();
    for encoding in ALL {
        for (line, character) in [(0, 0), (0, 7), (1, 0), (u32::MAX, u32::MAX)] {
            assert_eq!(position_to_char(&rope, at(line, character), encoding), 0);
            assert_eq!(position_to_byte(&rope, at(line, character), encoding), 0);
        }
        assert_eq!(char_to_position(&rope, 0, encoding), at(0, 0));
        assert_eq!(char_to_position(&rope, 5, encoding), at(0, 0));
        assert_eq!(byte_to_position(&rope, 5, encoding), at(0, 0));
    }
}

#[test]
fn utf16_position_inside_a_surrogate_pair_snaps_to_the_emoji() {
    // a 😀 b: the emoji is two UTF-16 code units, four UTF-8 bytes, one char.
    let text = "a😀b";
    assert_eq!(to_char(text, 0, 1, Utf16), 1);
    assert_eq!(to_char(text, 0, 2, Utf16), 1);
    assert_eq!(to_char(text, 0, 3, Utf16), 2);
    assert_eq!(to_char(text, 0, 4, Utf16), 3);
    assert_eq!(to_char(text, 0, 5, Utf16), 3);
    assert_eq!(to_char(text, 0, u32::MAX, Utf16), 3);
}

#[test]
fn utf8_position_inside_a_multibyte_sequence_snaps_to_its_start() {
    let text = "a😀b中";
    for character in 1..=4 {
        assert_eq!(to_char(text, 0, character, Utf8), 1, "byte {character}");
    }
    assert_eq!(to_char(text, 0, 5, Utf8), 2);
    assert_eq!(to_char(text, 0, 6, Utf8), 3);
    assert_eq!(to_char(text, 0, 7, Utf8), 3);
    assert_eq!(to_char(text, 0, 8, Utf8), 3);
    assert_eq!(to_char(text, 0, 9, Utf8), 4);
    let rope = Rope::from_str(text);
    assert_eq!(position_to_byte(&rope, at(0, 3), Utf8), 1);
    assert_eq!(byte_to_position(&rope, 3, Utf8), at(0, 1));
    assert_eq!(byte_to_position(&rope, 7, Utf16), at(0, 4));
}

#[test]
fn utf32_counts_chars_and_combining_marks_are_their_own_chars() {
    let text = "e\u{301}😀x";
    assert_eq!(to_char(text, 0, 1, Utf32), 1);
    assert_eq!(to_char(text, 0, 2, Utf32), 2);
    assert_eq!(to_char(text, 0, 3, Utf32), 3);
    assert_eq!(to_char(text, 0, 9, Utf32), 4);
    // LSP counts code units, not grapheme clusters: between `e` and its accent is valid.
    assert_eq!(to_char(text, 0, 1, Utf16), 1);
    assert_eq!(to_char(text, 0, 1, Utf8), 1);
    assert_eq!(to_char(text, 0, 3, Utf8), 2);
}

#[test]
fn lines_end_at_lf_crlf_and_lone_cr() {
    // Lines: "ab", "cd", "e", "f" (chars 0..2, 4..6, 7..8, 9..10).
    let text = "ab\r\ncd\re\nf";
    for encoding in ALL {
        assert_eq!(to_char(text, 0, 2, encoding), 2);
        assert_eq!(
            to_char(text, 0, 3, encoding),
            2,
            "past the end stops before CRLF"
        );
        assert_eq!(to_char(text, 0, 9, encoding), 2);
        assert_eq!(to_char(text, 1, 0, encoding), 4);
        assert_eq!(to_char(text, 1, 5, encoding), 6, "stops before a lone CR");
        assert_eq!(to_char(text, 2, 0, encoding), 7);
        assert_eq!(to_char(text, 2, 1, encoding), 8);
        assert_eq!(to_char(text, 3, 1, encoding), 10);
        assert_eq!(
            to_char(text, 4, 0, encoding),
            10,
            "a line past the end is the end"
        );
        assert_eq!(to_char(text, u32::MAX, 0, encoding), 10);
        let rope = Rope::from_str(text);
        assert_eq!(char_to_position(&rope, 2, encoding), at(0, 2));
        assert_eq!(
            char_to_position(&rope, 3, encoding),
            at(0, 3),
            "between CR and LF"
        );
        assert_eq!(char_to_position(&rope, 4, encoding), at(1, 0));
        assert_eq!(char_to_position(&rope, 7, encoding), at(2, 0));
        assert_eq!(char_to_position(&rope, 10, encoding), at(3, 1));
        assert_eq!(char_to_position(&rope, 11, encoding), at(3, 1));
    }
}

#[test]
fn unicode_line_separators_do_not_start_lines() {
    let text = "a\u{2028}b\u{85}c\u{2029}d\u{b}\u{c}e\nf";
    let rope = Rope::from_str(text);
    assert_eq!(rope.len_lines(), 2);
    for encoding in ALL {
        assert_eq!(char_to_position(&rope, 8, encoding).line, 0);
        assert_eq!(char_to_position(&rope, 11, encoding), at(1, 0));
        assert_eq!(to_char(text, 1, 0, encoding), 11);
    }
    assert_eq!(to_char(text, 0, 4, Utf16), 4);
    assert_eq!(to_char(text, 0, 99, Utf32), 10);
}

#[test]
fn a_trailing_newline_opens_an_empty_last_line() {
    let text = "a\n";
    for encoding in ALL {
        assert_eq!(to_char(text, 1, 0, encoding), 2);
        assert_eq!(to_char(text, 1, 3, encoding), 2);
        assert_eq!(to_char(text, 2, 0, encoding), 2);
        assert_eq!(
            char_to_position(&Rope::from_str(text), 2, encoding),
            at(1, 0)
        );
    }
}

#[test]
fn reversed_ranges_are_put_in_order() {
    let rope = Rope::from_str("hello\nworld");
    let range = Range::new(at(1, 2), at(0, 1));
    assert_eq!(range_to_chars(&rope, range, Utf16), 1..8);
}

#[test]
fn positions_on_later_lines_account_for_wide_chars_on_earlier_lines() {
    let text = "😀中\r\nx😀y\rz";
    let rope = Rope::from_str(text);
    assert_eq!(char_to_position(&rope, 6, Utf16), at(1, 3));
    assert_eq!(char_to_position(&rope, 6, Utf8), at(1, 5));
    assert_eq!(char_to_position(&rope, 6, Utf32), at(1, 2));
    assert_eq!(position_to_char(&rope, at(1, 3), Utf16), 6);
    assert_eq!(position_to_char(&rope, at(1, 5), Utf8), 6);
    assert_eq!(position_to_char(&rope, at(2, 1), Utf8), 9);
    assert_eq!(byte_to_position(&rope, text.len(), Utf16), at(2, 1));
}
