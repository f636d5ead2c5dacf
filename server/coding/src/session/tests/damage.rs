//! Damaged files: skipped lines, torn tails, broken headers. Bytes are never rewritten.

use super::{reference_text, user};
use crate::session::{SessionError, SessionManager};

#[test]
fn a_torn_last_line_is_skipped_and_the_next_entry_starts_a_new_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.jsonl");
    let text = reference_text();
    let last = text.lines().last().expect("last line");
    let torn = format!("{text}{}", &last[..last.len() / 2]);
    std::fs::write(&path, &torn).expect("write");

    let mut s = SessionManager::open(&path).expect("opens");
    assert_eq!(s.entries().len(), 8);
    let report = s.load_report();
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].line, 10);
    assert!(report.skipped[0].reason.starts_with("not valid JSON"));
    assert_eq!(s.leaf(), Some("1388a736"));

    let id = s
        .append_message(user("after the crash", 5))
        .expect("append");
    let bytes = std::fs::read_to_string(&path).expect("text");
    assert!(bytes.starts_with(&torn), "the torn bytes are untouched");
    let added = &bytes[torn.len()..];
    assert_eq!(added, format!("\n{}\n", s.entry_line(&id).expect("line")));

    // A second append needs no extra newline.
    let id2 = s.append_message(user("again", 6)).expect("append");
    let bytes2 = std::fs::read_to_string(&path).expect("text");
    assert_eq!(
        &bytes2[bytes.len()..],
        format!("{}\n", s.entry_line(&id2).expect("line"))
    );

    let again = SessionManager::open(&path).expect("reopens");
    assert_eq!(again.entries().len(), 10);
    assert_eq!(again.load_report().skipped.len(), 1);
    assert_eq!(
        again
            .entry(&id)
            .and_then(|e| e.parent_id.clone())
            .as_deref(),
        Some("1388a736")
    );
}

#[test]
fn garbage_lines_in_the_middle_are_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.jsonl");
    let mut lines: Vec<String> = reference_text().lines().map(str::to_string).collect();
    lines.insert(3, "this is not json".into());
    lines.insert(5, "[1,2,3]".into());
    lines.insert(6, r#"{"type":"message","parentId":null}"#.into());
    lines.insert(7, String::new());
    let text = lines.join("\n") + "\n";
    std::fs::write(&path, &text).expect("write");

    let s = SessionManager::open(&path).expect("opens");
    assert_eq!(s.entries().len(), 8);
    let skipped: Vec<usize> = s.load_report().skipped.iter().map(|l| l.line).collect();
    assert_eq!(skipped, vec![4, 6, 7]);
    assert_eq!(s.build_context().messages.len(), 6, "the chain is intact");
    assert_eq!(std::fs::read_to_string(&path).expect("text"), text);
}

#[test]
fn a_bad_header_is_an_error_naming_the_file_and_the_file_is_untouched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        ("garbage.jsonl", "not a header\n{\"type\":\"message\"}\n"),
        (
            "entry-first.jsonl",
            "{\"type\":\"message\",\"id\":\"abcd1234\",\"parentId\":null}\n",
        ),
        ("no-id.jsonl", "{\"type\":\"session\",\"version\":3}\n"),
    ];
    for (name, content) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, content).expect("write");
        let err = SessionManager::open(&path).expect_err("bad header");
        assert!(
            matches!(err, SessionError::InvalidHeader { .. }),
            "{name}: {err}"
        );
        assert!(err.to_string().contains(name), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("text"), content);
    }

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "\n\n").expect("write");
    let err = SessionManager::open(&empty).expect_err("empty");
    assert!(matches!(err, SessionError::Empty { .. }));
    assert!(err.to_string().contains("empty.jsonl"));
    assert_eq!(std::fs::read_to_string(&empty).expect("text"), "\n\n");

    let missing = dir.path().join("missing.jsonl");
    let err = SessionManager::open(&missing).expect_err("missing");
    assert!(matches!(err, SessionError::Read { .. }));
    assert!(err.to_string().contains("missing.jsonl"));
    assert!(!missing.exists());
}
