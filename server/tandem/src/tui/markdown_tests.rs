use ratatui::style::Modifier;

use super::*;
use crate::tui::text::{line_width, plain};

fn theme() -> Theme {
    Theme::default()
}

fn rows(md: &str, width: u16) -> Vec<String> {
    render(md, width, &theme()).iter().map(plain).collect()
}

/// The style of the first span whose text is `text`.
fn style_of(lines: &[Line<'_>], text: &str) -> Style {
    lines
        .iter()
        .flat_map(|line| line.spans.iter())
        .find(|span| span.content == text)
        .map(|span| span.style)
        .unwrap_or_else(|| panic!("no span {text:?} in {lines:?}"))
}

#[test]
fn paragraphs_are_separated_by_one_blank_row() {
    assert_eq!(rows("one\ntwo\n\n\n\nthree", 40), ["one two", "", "three"]);
}

#[test]
fn paragraphs_wrap_at_the_width() {
    assert_eq!(
        rows("the quick brown fox jumps over the lazy dog", 16),
        ["the quick brown", "fox jumps over", "the lazy dog"]
    );
}

#[test]
fn hard_breaks_start_a_new_row() {
    assert_eq!(rows("one  \ntwo\\\nthree", 40), ["one", "two", "three"]);
}

#[test]
fn emphasis_strong_strikethrough_and_inline_code_are_styled() {
    let t = theme();
    let lines = render("*it* **bold** ~~gone~~ `code` ***both***", 80, &t);
    assert_eq!(plain(&lines[0]), "it bold gone code both");
    assert!(style_of(&lines, "it")
        .add_modifier
        .contains(Modifier::ITALIC));
    assert!(style_of(&lines, "bold")
        .add_modifier
        .contains(Modifier::BOLD));
    assert!(style_of(&lines, "gone")
        .add_modifier
        .contains(Modifier::CROSSED_OUT));
    assert_eq!(style_of(&lines, "code"), t.text.patch(t.code));
    let both = style_of(&lines, "both").add_modifier;
    assert!(both.contains(Modifier::BOLD | Modifier::ITALIC));
}

#[test]
fn headings_are_styled_and_separated() {
    let t = theme();
    let lines = render("# Top\n## Sub\ntext", 40, &t);
    assert_eq!(
        lines.iter().map(plain).collect::<Vec<_>>(),
        ["Top", "", "Sub", "", "text"]
    );
    assert_eq!(
        style_of(&lines, "Top"),
        t.heading.add_modifier(Modifier::UNDERLINED)
    );
    assert_eq!(style_of(&lines, "Sub"), t.heading);
}

#[test]
fn links_show_their_url_dimmed_unless_it_is_the_text() {
    let t = theme();
    let lines = render(
        "[docs](https://d.example) <https://a.example> <me@x.example>",
        80,
        &t,
    );
    assert_eq!(
        plain(&lines[0]),
        "docs (https://d.example) https://a.example me@x.example"
    );
    assert_eq!(style_of(&lines, "docs"), t.text.patch(t.link));
    assert_eq!(style_of(&lines, " (https://d.example)"), t.dim);
}

#[test]
fn images_show_their_alt_text_and_url() {
    assert_eq!(rows("![a cat](cat.png)", 40), ["a cat (cat.png)"]);
}

#[test]
fn block_quotes_have_a_bar_and_nest() {
    assert_eq!(
        rows("> one\n> two\n>\n> > deep words here", 14),
        ["│ one two", "│", "│ │ deep words", "│ │ here"]
    );
}

#[test]
fn bullet_lists_nest_with_a_hanging_indent() {
    assert_eq!(
        rows("- alpha beta gamma\n- b\n  - inner item text\n- c", 12),
        [
            "- alpha beta",
            "  gamma",
            "- b",
            "  - inner",
            "    item",
            "    text",
            "- c"
        ]
    );
}

#[test]
fn ordered_lists_count_from_their_start() {
    assert_eq!(
        rows("3. a\n1. b\n1. c\n\n9) x\n9) y", 20),
        ["3. a", "4. b", "5. c", "", "9) x", "10) y"]
    );
}

#[test]
fn loose_lists_have_blank_rows_between_items() {
    assert_eq!(
        rows("- a\n\n- b\n\n  more b", 20),
        ["- a", "", "- b", "", "  more b"]
    );
}

#[test]
fn task_lists_show_their_boxes() {
    let t = theme();
    let lines = render("- [ ] todo\n- [x] done", 20, &t);
    assert_eq!(
        lines.iter().map(plain).collect::<Vec<_>>(),
        ["- [ ] todo", "- [x] done"]
    );
    assert_eq!(style_of(&lines, "[x] "), t.bullet);
    assert_eq!(style_of(&lines, "- "), t.bullet);
}

#[test]
fn empty_items_show_their_marker() {
    assert_eq!(rows("-\n- b", 20), ["-", "- b"]);
}

#[test]
fn lists_inside_quotes_and_quotes_inside_lists() {
    assert_eq!(
        rows("> - q1\n> - q2\n\n- > quoted item", 30),
        ["│ - q1", "│ - q2", "", "- │ quoted item"]
    );
}

#[test]
fn rules_span_the_width() {
    assert_eq!(rows("a\n\n---\n\nb", 5), ["a", "", "─────", "", "b"]);
    assert_eq!(rows("> ***", 6), ["│ ────"]);
}

#[test]
fn fenced_code_is_highlighted_between_fence_rows() {
    let t = theme();
    let lines = render("```rust\nfn main() {}\n```", 40, &t);
    assert_eq!(
        lines.iter().map(plain).collect::<Vec<_>>(),
        ["```rust", "fn main() {}", "```"]
    );
    assert_eq!(style_of(&lines, "```rust"), t.code_fence);
    assert_eq!(style_of(&lines, "fn"), t.code_block.patch(t.syntax_keyword));
}

#[test]
fn code_in_unknown_languages_and_indented_code_is_plain() {
    let t = theme();
    let lines = render("~~~weird\n  a\tb\n~~~\n\n    x = 1", 40, &t);
    assert_eq!(
        lines.iter().map(plain).collect::<Vec<_>>(),
        ["```weird", "  a b", "```", "", "```", "x = 1", "```"]
    );
    assert_eq!(style_of(&lines, "x = 1"), t.code_block);
}

#[test]
fn long_code_lines_are_hard_wrapped_not_cut() {
    assert_eq!(
        rows("```\nlet a = 1; let b = 2;\n```", 8),
        ["```", "let a = ", "1; let b", " = 2;", "```"]
    );
}

#[test]
fn code_in_a_list_item_is_indented_with_it() {
    assert_eq!(
        rows("- item\n\n  ```\n  code\n  ```", 20),
        ["- item", "", "  ```", "  code", "  ```"]
    );
}

#[test]
fn an_unclosed_fence_renders_as_code() {
    assert_eq!(rows("```py\nx = 1\n", 20), ["```py", "x = 1", "```"]);
}

#[test]
fn tables_align_their_columns() {
    assert_eq!(
        rows(
            "| a | b | c |\n|:--|--:|:-:|\n| 1 | 22 | x |\n| long | 3 | yy |",
            40
        ),
        [
            "a    │  b │ c",
            "─────┼────┼───",
            "1    │ 22 │ x",
            "long │  3 │ yy",
        ]
    );
}

#[test]
fn tables_too_wide_fall_back_to_header_value_rows() {
    assert_eq!(
        rows(
            "| name | description |\n|---|---|\n| alpha | the first letter |\n| beta | second |",
            20
        ),
        [
            "name: alpha",
            "description: the",
            "  first letter",
            "",
            "name: beta",
            "description: second",
        ]
    );
}

#[test]
fn html_is_shown_as_text() {
    assert_eq!(
        rows("<div>\n<b>hi</b>\n</div>\n\na <span>b</span>", 40),
        ["<div>", "<b>hi</b>", "</div>", "", "a <span>b</span>"]
    );
}

#[test]
fn hostile_text_is_sanitized_everywhere() {
    let md = "\x1b[2Jtitle\r\n\n`\x1b]52;c;eA==\x07` &#27;[31m &#x9b;x \u{202e}rtl\n\n\
              [l\x1b](http://a\u{9b}b)\n\n```\n\x1b[1m\r\n```";
    let out = rows(md, 80);
    assert_eq!(
        out,
        [
            "␛[2Jtitle",
            "",
            "␛]52;c;eA==␇ ␛[31m \u{fffd}x \u{fffd}rtl",
            "",
            "l␛ (http://a\u{fffd}b)",
            "",
            "```",
            "␛[1m",
            "```",
        ]
    );
    for row in &out {
        assert!(!row.chars().any(|c| c.is_control()), "{row:?}");
    }
}

#[test]
fn every_width_from_1_to_200_keeps_rows_within_it() {
    let md = "# Heading with words\n\nA paragraph with *some* **styled** text and `code`, \
              中文字符 and 😀 emoji.\n\n> quoted text that wraps\n\n- item one\n  - nested item two\n\n\
              1. first\n\n```rust\nfn main() { let x = \"long string literal\"; }\n```\n\n\
              | a | b |\n|---|---|\n| cell | другой |\n\n---\n";
    let t = theme();
    for width in 1..=200u16 {
        for line in render(md, width, &t) {
            // Below 2 columns a double-width character still needs its 2.
            assert!(
                line_width(&line) <= usize::from(width.max(2)),
                "width {width}: {line:?}"
            );
        }
    }
}

#[test]
fn ten_thousand_nested_quotes_and_lists_render() {
    let deep_quote = format!("{}text", ">".repeat(10_000));
    let lines = render(&deep_quote, 20, &theme());
    assert_eq!(lines.len(), 1);
    assert_eq!(plain(&lines[0]), "│ │ │ │ │ text");

    let deep_list = format!("{}text", "- ".repeat(10_000));
    let lines = render(&deep_list, 20, &theme());
    assert_eq!(
        lines.iter().map(plain).collect::<Vec<_>>(),
        ["- - - - - text"]
    );

    let nested_lines: String = (1..2_000)
        .map(|depth| format!("{}x\n", "> ".repeat(depth)))
        .collect();
    assert!(!render(&nested_lines, 80, &theme()).is_empty());
}

#[test]
fn a_megabyte_line_renders() {
    let md = "word ".repeat(200_000);
    let lines = render(&md, 80, &theme());
    assert_eq!(lines.len(), 12_500);
    let lines = render(&"x".repeat(1 << 20), 100, &theme());
    assert_eq!(lines.len(), (1 << 20) / 100 + 1);
}

#[test]
fn empty_text_renders_nothing() {
    assert!(rows("", 40).is_empty());
    assert!(rows("\n\n  \n", 40).is_empty());
}

#[test]
fn pathological_inline_markup_renders_every_character() {
    let cases = [
        "[".repeat(50_000),
        "*a".repeat(50_000),
        format!("{}x", "`".repeat(50_000)),
        "<a".repeat(50_000),
        "![".repeat(20_000),
        "_*".repeat(50_000),
    ];
    for md in cases {
        let lines = render(&md, 80, &theme());
        let shown: usize = lines.iter().map(|l| plain(l).chars().count()).sum();
        assert!(shown > 0 && shown <= md.chars().count(), "{}", &md[..10]);
    }
}

#[test]
fn deep_nesting_costs_nothing_per_inline_piece() {
    // 10,000 open quotes and then 40,000 inline pieces: each piece's style and each row's
    // prefix cost the same as without the nesting.
    let md = format!("{}{}", ">".repeat(10_000), "a *b* `c` ".repeat(10_000));
    let lines = render(&md, 40, &theme());
    assert!(lines.len() > 1_000);
    assert!(lines
        .iter()
        .all(|l| plain(l).starts_with("│ │ │ │ │ │ │ │ │ │ ")));
}
