use super::*;
use crate::tui::text::plain;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(plain).collect()
}

#[test]
fn a_diff_shows_the_files_own_line_numbers() {
    let diff = "--- a/x.txt\n+++ b/x.txt\n@@ -10,3 +10,3 @@\n ten\n-eleven\n+ELEVEN\n twelve\n@@ -40,1 +40,2 @@\n forty\n+forty-one\n";
    let lines = diff_lines(diff, &Theme::default(), usize::MAX);
    assert_eq!(
        texts(&lines),
        [
            "10  ten",
            "11 -eleven",
            "11 +ELEVEN",
            "12  twelve",
            " ⋮ …",
            "40  forty",
            "41 +forty-one",
        ]
    );
}

#[test]
fn a_long_diff_is_cut_with_a_count() {
    let mut diff = String::from("@@ -0,0 +1,100 @@\n");
    for i in 0..100 {
        diff.push_str(&format!("+line {i}\n"));
    }
    let lines = diff_lines(&diff, &Theme::default(), 10);
    assert_eq!(lines.len(), 11);
    assert_eq!(plain(&lines[10]), "… 90 more diff lines (Ctrl+O shows all)");
    assert_eq!(plain(&lines[0]), "  1 +line 0");
}

#[test]
fn hostile_output_is_shown_not_obeyed() {
    let mut card = Card::new("c1", "bash");
    card.args = serde_json::json!({"command": "printf"});
    card.output = "ok\u{1b}[2J\u{1b}]52;c;eA==\u{7}".to_string();
    card.state = CallState::Done;
    let lines = card.render(80, Path::new("/"), &Theme::default(), false, false);
    let all = texts(&lines).join("\n");
    assert!(!all.contains('\u{1b}'), "{all}");
    assert!(all.contains("␛[2J"), "{all}");
}

#[test]
fn a_long_command_output_keeps_its_end() {
    let mut card = Card::new("c1", "bash");
    card.args = serde_json::json!({"command": "seq 100"});
    card.output = (1..=100).map(|i| format!("{i}\n")).collect();
    card.state = CallState::Done;
    let lines = texts(&card.render(80, Path::new("/"), &Theme::default(), false, false));
    assert_eq!(lines[0], "● $ seq 100");
    assert_eq!(lines[1], "  … 88 earlier lines");
    assert_eq!(lines.last().map(String::as_str), Some("  100"));
    let live = texts(&card.render(80, Path::new("/"), &Theme::default(), true, false));
    assert_eq!(live.len(), 1 + 1 + LIVE_BASH_LINES);
}

#[test]
fn hunk_headers_are_read() {
    assert_eq!(hunk_starts("-1,3 +1,4 @@"), Some((1, 1)));
    assert_eq!(hunk_starts("-0,0 +1 @@ fn x"), Some((0, 1)));
    assert_eq!(hunk_starts("garbage"), None);
}
