use ratatui::style::Style;
use ratatui::text::Line;

use super::*;
use crate::tui::text::plain;

fn theme() -> Theme {
    Theme::default()
}

/// The style of the first span whose text is exactly `token` on any line.
fn style_of(lines: &[Line<'_>], token: &str) -> Option<Style> {
    lines
        .iter()
        .flat_map(|line| line.spans.iter())
        .find(|span| span.content.trim() == token)
        .map(|span| span.style)
}

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(plain).collect()
}

#[test]
fn rust_tokens_get_their_styles() {
    let t = theme();
    let code = "// note\nfn main() {\n    let s = \"hi\";\n    let n = 42;\n}\n";
    let lines = highlight(code, "rust", &t).expect("rust is known");
    assert_eq!(
        texts(&lines),
        [
            "// note",
            "fn main() {",
            "    let s = \"hi\";",
            "    let n = 42;",
            "}"
        ]
    );
    assert_eq!(style_of(&lines, "// note"), Some(t.syntax_comment));
    assert_eq!(style_of(&lines, "fn"), Some(t.syntax_keyword));
    assert_eq!(style_of(&lines, "let"), Some(t.syntax_keyword));
    assert_eq!(style_of(&lines, "main"), Some(t.syntax_function));
    assert_eq!(style_of(&lines, "\"hi\""), Some(t.syntax_string));
    assert_eq!(style_of(&lines, "42"), Some(t.syntax_number));
}

#[test]
fn every_language_and_alias_highlights_a_keyword() {
    let t = theme();
    let cases: &[(&[&str], &str, &str)] = &[
        (&["rust", "rs", "Rust"], "fn f() {}", "fn"),
        (&["python", "py"], "def f():\n    return 1", "def"),
        (
            &["javascript", "js", "jsx", "mjs", "node"],
            "const x = <div/>;",
            "const",
        ),
        (
            &["typescript", "ts"],
            "interface A { x: number }",
            "interface",
        ),
        (
            &["tsx", "typescriptreact"],
            "const a: number = <b/>;",
            "const",
        ),
        (&["go", "golang"], "package main\nfunc f() {}", "func"),
        (&["c", "h"], "int main(void) { return 0; }", "return"),
        (
            &["cpp", "c++", "cc", "hpp", "hh", "hxx", "cxx"],
            "class A { public: int x; };",
            "class",
        ),
        (&["java"], "class A { void f() {} }", "class"),
    ];
    for (names, code, keyword) in cases {
        for name in *names {
            let lines = highlight(code, name, &t).unwrap_or_else(|| panic!("{name} is known"));
            assert_eq!(texts(&lines).join("\n"), *code, "{name}");
            assert_eq!(style_of(&lines, keyword), Some(t.syntax_keyword), "{name}");
        }
    }
}

#[test]
fn info_strings_use_their_first_word() {
    assert!(highlight("fn f() {}", "rust,ignore", &theme()).is_some());
    assert!(highlight("fn f() {}", "rust title=\"x\"", &theme()).is_some());
}

#[test]
fn unknown_languages_are_none() {
    assert!(highlight("x", "brainfuck", &theme()).is_none());
    assert!(highlight("x", "", &theme()).is_none());
}

#[test]
fn plain_tokens_keep_the_base_style() {
    let mut t = theme();
    t.code_block = Style::new().bg(ratatui::style::Color::Black);
    let lines = highlight("let x = 1;", "rust", &t).expect("known");
    let plain_span = lines[0]
        .spans
        .iter()
        .find(|span| span.content.contains('x'))
        .expect("x is shown");
    assert_eq!(plain_span.style, t.code_block);
    assert_eq!(
        style_of(&lines, "let"),
        Some(t.code_block.patch(t.syntax_keyword))
    );
}

#[test]
fn hostile_code_is_sanitized() {
    let lines = highlight(
        "let s = \"\x1b]52;c;eA==\x07\";\r\n\tx\u{202e}",
        "rust",
        &theme(),
    )
    .expect("known");
    assert_eq!(
        texts(&lines),
        ["let s = \"␛]52;c;eA==␇\";", "    x\u{fffd}"]
    );
}

#[test]
fn broken_code_still_gives_every_line() {
    let code = "fn (((\n\"unterminated\n}}}";
    let lines = highlight(code, "rust", &theme()).expect("known");
    assert_eq!(texts(&lines), ["fn (((", "\"unterminated", "}}}"]);
}

#[test]
fn oversized_code_is_plain() {
    let t = theme();
    let code = "let x = 1;\n".repeat(MAX_HIGHLIGHT_BYTES / 10);
    let lines = highlight(&code, "rust", &t).expect("known");
    assert_eq!(lines.len(), MAX_HIGHLIGHT_BYTES / 10);
    assert!(lines
        .iter()
        .all(|line| line.spans.iter().all(|span| span.style == t.code_block)));
}

#[test]
fn blank_lines_and_a_final_break() {
    let lines = highlight("a\n\nb\n\n", "python", &theme()).expect("known");
    assert_eq!(texts(&lines), ["a", "", "b", ""]);
    assert_eq!(texts(&plain_lines("x\ny\n", &theme())), ["x", "y"]);
}

#[test]
fn deeply_nested_or_unbalanced_code_is_bounded_and_complete() {
    // Query matching on such trees is quadratic: these stop at the time budget and come back
    // whole (plain or highlighted), never hanging a frame for minutes.
    for (lang, code) in [
        ("rust", "(".repeat(200_000)),
        (
            "js",
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
        ),
        ("python", "{".repeat(200_000)),
        ("c", format!("x = {};", "-".repeat(200_000))),
    ] {
        let lines = highlight(&code, lang, &theme()).expect("known");
        assert_eq!(texts(&lines).concat(), code, "{lang}");
    }
}

#[test]
fn nested_captures_patch_over_the_outer_one() {
    let t = theme();
    let lines = highlight("let s = `a ${f(1)} b`;\n/* x\ny */ z", "js", &t).expect("known");
    assert_eq!(texts(&lines), ["let s = `a ${f(1)} b`;", "/* x", "y */ z"]);
    let string = t.code_block.patch(t.syntax_string);
    assert_eq!(style_of(&lines, "`a"), Some(string));
    assert_eq!(style_of(&lines, "f"), Some(string.patch(t.syntax_function)));
    assert_eq!(style_of(&lines, "1"), Some(string.patch(t.syntax_number)));
    assert_eq!(style_of(&lines, "b`"), Some(string));
    // A comment over two lines is a comment on both.
    let comment = t.code_block.patch(t.syntax_comment);
    assert_eq!(style_of(&lines, "/* x"), Some(comment));
    assert_eq!(style_of(&lines, "y */"), Some(comment));
    assert_eq!(style_of(&lines, "z"), Some(t.code_block));
}

#[test]
fn the_first_capture_of_a_node_wins_and_crossing_marks_are_cut() {
    use ratatui::style::Color;
    let red = Style::new().fg(Color::Red);
    let blue = Style::new().fg(Color::Blue);
    let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
    let base = Style::new();
    let lines = paint(
        "abc def",
        vec![(0, 3, red), (0, 3, blue), (4, 7, blue)],
        base,
    );
    assert_eq!(lines[0].spans[0].style, red);
    assert_eq!(lines[0].spans[2].style, blue);
    // (2, 5) crosses the end of (0, 3): it is cut there; (4, 7) starts a new mark.
    let lines = paint(
        "abcdefg",
        vec![(0, 3, red), (1, 5, bold), (4, 7, blue)],
        base,
    );
    let spans: Vec<(String, Style)> = lines[0]
        .spans
        .iter()
        .map(|s| (s.content.to_string(), s.style))
        .collect();
    assert_eq!(
        spans,
        [
            ("a".to_owned(), red),
            ("bc".to_owned(), red.patch(bold)),
            ("d".to_owned(), base),
            ("efg".to_owned(), blue),
        ]
    );
}

#[test]
fn call_names_are_functions() {
    let t = theme();
    let lines = highlight("fn f(&self) { g(self) }", "rust", &t).expect("known");
    assert_eq!(
        style_of(&lines, "g"),
        Some(t.code_block.patch(t.syntax_function))
    );
    assert_eq!(
        style_of(&lines, "f"),
        Some(t.code_block.patch(t.syntax_function))
    );
}
