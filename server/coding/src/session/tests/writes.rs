//! When and how entries reach the file.

use tandem_ai::ThinkingLevel;

use super::{assistant, lines_of, reference_text, tool_result, user};
use crate::session::json::to_js_line;
use crate::session::{SessionError, SessionManager};

#[test]
fn nothing_is_written_before_the_first_assistant_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let session_dir = dir.path().join("sessions").join("--p--");
    let mut s = SessionManager::create("/p", &session_dir);
    s.append_model_change("mock", "mock-model").expect("model");
    s.append_thinking_level_change(ThinkingLevel::Off)
        .expect("level");
    s.append_message(user("hi", 1)).expect("user");
    let path = s.session_file().expect("path").to_path_buf();
    assert!(!s.is_written());
    assert!(!session_dir.exists(), "not even the folder is created");
    assert_eq!(
        path.file_name()
            .and_then(|n| n.to_str())
            .map(|n| n.ends_with(&format!("_{}.jsonl", s.session_id()))),
        Some(true)
    );

    s.append_message(assistant("hello", 2)).expect("assistant");
    assert!(s.is_written());
    let mut expected = vec![to_js_line(s.header()).expect("header")];
    expected.extend(
        s.entries()
            .iter()
            .map(|e| s.entry_line(&e.id).expect("line").to_string()),
    );
    assert_eq!(lines_of(&path), expected);
    assert_eq!(expected.len(), 5);
    assert!(expected[0].starts_with(r#"{"type":"session","version":3,"id":""#));

    s.append_message(tool_result("ok", 3)).expect("tool result");
    let lines = lines_of(&path);
    assert_eq!(lines.len(), 6);
    assert_eq!(
        lines[5],
        s.entry_line(s.leaf().expect("leaf")).expect("line")
    );
    assert!(std::fs::read_to_string(&path)
        .expect("text")
        .ends_with('\n'));
}

#[test]
fn write_started_saves_an_unanswered_prompt_and_appends_go_on_in_that_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let session_dir = dir.path().join("sessions").join("--p--");
    let mut s = SessionManager::create("/p", &session_dir);
    s.append_model_change("mock", "mock-model").expect("model");
    // Nothing to save without a message.
    assert!(!s.write_started().expect("no-op"));
    assert!(!session_dir.exists());

    s.append_message(user("hi", 1)).expect("user");
    assert!(s.write_started().expect("writes"));
    assert!(s.is_written());
    let path = s.session_file().expect("path").to_path_buf();
    assert_eq!(lines_of(&path).len(), 3, "header, model change, prompt");
    // Once written, it is a no-op; the answer is appended to the same file.
    assert!(!s.write_started().expect("no-op"));
    s.append_message(assistant("hello", 2)).expect("assistant");
    assert_eq!(lines_of(&path).len(), 4);

    let mut memory = SessionManager::in_memory("/p");
    memory.append_message(user("hi", 1)).expect("user");
    assert!(!memory.write_started().expect("in memory"));
}

#[test]
fn appends_only_ever_grow_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, reference_text()).expect("copy");
    let mut s = SessionManager::open(&path).expect("opens");
    assert!(s.is_written());
    let mut before = std::fs::read(&path).expect("bytes");
    for i in 0..5 {
        s.append_message(user(&format!("more {i}"), 10 + i))
            .expect("append");
        let after = std::fs::read(&path).expect("bytes");
        assert!(after.len() > before.len());
        assert_eq!(
            &after[..before.len()],
            &before[..],
            "earlier bytes unchanged"
        );
        before = after;
    }
    // The reopened file has every entry, chained.
    let again = SessionManager::open(&path).expect("reopens");
    assert_eq!(again.entries().len(), 13);
    assert_eq!(again.leaf(), s.leaf());
    assert_eq!(
        again.entries().to_vec()[8].parent_id.as_deref(),
        Some("1388a736")
    );
}

#[test]
fn an_opened_file_without_assistant_messages_is_appended_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.jsonl");
    let header = reference_text().lines().next().expect("header").to_string();
    std::fs::write(&path, format!("{header}\n")).expect("write");
    let mut s = SessionManager::open(&path).expect("opens");
    s.append_message(user("hi", 1)).expect("append");
    let lines = lines_of(&path);
    assert_eq!(
        lines.len(),
        2,
        "one header, then the entry: never a second header"
    );
}

#[test]
fn in_memory_sessions_never_touch_the_disk() {
    let mut s = SessionManager::in_memory("/p");
    s.append_message(user("hi", 1)).expect("user");
    s.append_message(assistant("hello", 2)).expect("assistant");
    assert_eq!(s.session_file(), None);
    assert!(!s.is_persisted());
    assert_eq!(s.build_context().messages.len(), 2);
}

#[test]
fn a_write_failure_changes_nothing_and_names_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").expect("file");
    // The session folder cannot be created: a file is in the way.
    let mut s = SessionManager::create("/p", blocker.join("sessions"));
    s.append_message(user("hi", 1)).expect("buffered");
    let err = s
        .append_message(assistant("hello", 2))
        .expect_err("cannot write");
    assert!(matches!(err, SessionError::Write { .. }));
    assert!(err.to_string().contains("not-a-dir"), "{err}");
    assert_eq!(s.entries().len(), 1, "the failed entry was not recorded");
    assert!(!s.is_written());
}

#[test]
fn an_existing_file_is_never_clobbered_by_a_new_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("taken.jsonl");
    std::fs::write(&path, "precious\n").expect("write");
    let mut s = SessionManager::create_at("/p", &path);
    s.append_message(user("hi", 1)).expect("buffered");
    let err = s.append_message(assistant("a", 2)).expect_err("exists");
    assert!(matches!(err, SessionError::AlreadyExists { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&path).expect("text"), "precious\n");
}
