use std::borrow::Cow;

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::*;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(plain).collect()
}

#[test]
fn clean_text_is_borrowed() {
    assert!(matches!(
        sanitize("plain text, ünïcödé, 中文\n"),
        Cow::Borrowed(_)
    ));
}

#[test]
fn escape_sequences_become_visible() {
    assert_eq!(sanitize("\x1b[2J\x1b[31mred"), "␛[2J␛[31mred");
    // OSC 52 writes the clipboard; BEL ends it.
    assert_eq!(sanitize("\x1b]52;c;ZXZpbA==\x07"), "␛]52;c;ZXZpbA==␇");
    assert_eq!(sanitize("a\0b\x08c\x7f"), "a␀b␈c␡");
}

#[test]
fn c1_controls_are_replaced() {
    // U+009B is a one-character CSI for some terminals; U+009D an OSC.
    assert_eq!(
        sanitize("x\u{9b}2Jy\u{9d}z\u{80}"),
        "x\u{fffd}2Jy\u{fffd}z\u{fffd}"
    );
}

#[test]
fn bidi_overrides_are_replaced() {
    assert_eq!(
        sanitize("if admin \u{202e}\u{2066} {"),
        "if admin \u{fffd}\u{fffd} {"
    );
    for c in [
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{2067}', '\u{2068}', '\u{2069}',
    ] {
        assert_eq!(sanitize(&c.to_string()), "\u{fffd}");
    }
}

#[test]
fn carriage_returns_end_lines_and_never_rewind() {
    assert_eq!(sanitize("a\r\nb"), "a\nb");
    assert_eq!(sanitize("10%\r20%\r"), "10%\n20%\n");
    assert_eq!(sanitize("a\r\r\nb"), "a\n\nb");
}

#[test]
fn tabs_expand_to_the_next_stop_from_the_line_start() {
    assert_eq!(sanitize("\tx"), "    x");
    assert_eq!(sanitize("ab\tx"), "ab  x");
    assert_eq!(sanitize("abcd\tx"), "abcd    x");
    assert_eq!(sanitize("ab\n\tx"), "ab\n    x");
    // Wide characters count two columns.
    assert_eq!(sanitize("中\tx"), "中  x");
    // Earlier replacements count as the one column they show.
    assert_eq!(sanitize("\x1b\tx"), "␛   x");
}

#[test]
fn width_counts_columns() {
    assert_eq!(width("abc"), 3);
    assert_eq!(width("中文"), 4);
    assert_eq!(width(""), 0);
    assert_eq!(width("e\u{301}"), 1);
}

#[test]
fn wrap_breaks_at_spaces() {
    let rows = wrap(Line::from("the quick brown fox jumps"), 10);
    assert_eq!(texts(&rows), ["the quick", "brown fox", "jumps"]);
}

#[test]
fn wrap_splits_only_words_wider_than_the_line() {
    let rows = wrap(Line::from("a abcdefghijkl b"), 5);
    assert_eq!(texts(&rows), ["a", "abcde", "fghij", "kl b"]);
}

#[test]
fn wrap_keeps_span_styles_across_rows() {
    let red = Style::new().fg(Color::Red);
    let line = Line::from(vec![Span::raw("one "), Span::styled("two three", red)]);
    let rows = wrap(line, 8);
    assert_eq!(texts(&rows), ["one two", "three"]);
    assert_eq!(rows[0].spans[1].style, red);
    assert_eq!(rows[0].spans[1].content, "two");
    assert_eq!(rows[1].spans[0].style, red);
}

#[test]
fn wide_characters_never_straddle_the_edge() {
    let rows = wrap(Line::from("中文中文中"), 5);
    assert_eq!(texts(&rows), ["中文", "中文", "中"]);
    for row in &rows {
        assert!(line_width(row) <= 5);
    }
    let rows = wrap(Line::from("ab😀cd"), 3);
    assert_eq!(texts(&rows), ["ab", "😀c", "d"]);
}

#[test]
fn combining_marks_stay_with_their_letter() {
    let rows = wrap(Line::from("ae\u{301}b"), 2);
    assert_eq!(texts(&rows), ["ae\u{301}", "b"]);
}

#[test]
fn prefixes_give_a_hanging_indent() {
    let rows = wrap_with_prefix(
        Line::from("alpha beta gamma delta"),
        12,
        vec![Span::raw("- ")],
        vec![Span::raw("  ")],
    );
    assert_eq!(texts(&rows), ["- alpha beta", "  gamma", "  delta"]);
}

#[test]
fn an_empty_line_keeps_its_prefix() {
    let rows = wrap_with_prefix(Line::default(), 10, vec![Span::raw("│ ")], vec![]);
    assert_eq!(texts(&rows), ["│ "]);
}

#[test]
fn a_prefix_wider_than_the_line_is_dropped() {
    let rows = wrap_with_prefix(
        Line::from("abc"),
        3,
        vec![Span::raw("long prefix")],
        vec![Span::raw("xxx")],
    );
    assert_eq!(texts(&rows), ["abc"]);
}

#[test]
fn hard_wrap_keeps_spaces() {
    let rows = hard_wrap_with_prefix(Line::from("  let x =  1;"), 5, vec![], vec![]);
    assert_eq!(texts(&rows), ["  let", " x = ", " 1;"]);
}

#[test]
fn tiny_widths_terminate() {
    let line = Line::from("中 a  bc 😀 é\u{301}");
    for width in 0..4u16 {
        let rows = wrap(line.clone(), width);
        let joined: String = texts(&rows).concat();
        assert_eq!(joined.replace(' ', ""), "中abc😀é\u{301}", "width {width}");
        for row in &rows {
            // Only a lone double-width character may exceed a width below 2.
            assert!(
                line_width(row) <= usize::from(width.max(2)),
                "width {width}"
            );
        }
        let rows = hard_wrap_with_prefix(line.clone(), width, vec![], vec![]);
        assert_eq!(texts(&rows).concat(), plain(&line));
    }
    assert_eq!(texts(&wrap(Line::from("abc"), 0)), ["a", "b", "c"]);
}

#[test]
fn every_width_keeps_every_character_and_the_limit() {
    let text = "Lorem ipsum dolor sit amet, 中文字符 consectetur adipiscing-elit-sed-do-eiusmod 😀😀 tempor";
    for width in 2..=120u16 {
        let rows = wrap(Line::from(text), width);
        for row in &rows {
            assert!(
                line_width(row) <= usize::from(width),
                "width {width}: {row:?}"
            );
        }
        let joined: String = texts(&rows).concat();
        assert_eq!(
            joined.replace(' ', ""),
            text.replace(' ', ""),
            "width {width}"
        );
    }
}

#[test]
fn a_megabyte_line_wraps() {
    let text = "word ".repeat(200_000);
    let rows = wrap(Line::from(text), 80);
    assert_eq!(rows.len(), 200_000 * 5 / 80);
    let rows = wrap(Line::from("x".repeat(1 << 20)), 100);
    assert_eq!(rows.len(), (1 << 20) / 100 + 1);
}
