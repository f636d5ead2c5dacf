//! One writer per session file: a file another session holds is continued in a copy, and a
//! file changed behind the writer's back is never appended to again.

use std::io::Write;
use std::path::Path;

use super::{assistant, lines_of, user};
use crate::session::file::SessionWriter;
use crate::session::{load_session_file, SessionError, SessionManager};

/// A written session in `dir`: a user message and an answer.
fn written(dir: &Path) -> SessionManager {
    let mut s = SessionManager::create("/p", dir);
    s.append_message(user("first", 1)).expect("user");
    s.append_message(assistant("answer", 2)).expect("assistant");
    assert!(s.is_written());
    s
}

/// Appends `line` the way a program without the lock (pi) does.
fn append_behind_its_back(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("opens");
    writeln!(file, "{line}").expect("appends");
}

#[test]
fn a_file_held_by_another_session_is_continued_in_a_copy_that_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut first = written(dir.path());
    let original = first.session_file().expect("file").to_path_buf();
    let before = std::fs::read(&original).expect("bytes");

    let mut second = SessionManager::open(&original).expect("opens");
    let copy = second.session_file().expect("file").to_path_buf();
    assert_ne!(
        copy, original,
        "the held file is not written by a second session"
    );
    assert_eq!(copy.parent(), original.parent());
    assert_ne!(second.session_id(), first.session_id());
    assert_eq!(
        second.header().parent_session.as_deref(),
        Some(original.to_string_lossy().as_ref())
    );
    assert_eq!(
        second.entries().to_vec(),
        first.entries().to_vec(),
        "the whole history is copied"
    );
    let notices = second.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("in use by another process"),
        "{}",
        notices[0]
    );
    assert!(notices[0].contains(&original.display().to_string()));
    assert!(notices[0].contains(&copy.display().to_string()));
    assert!(second.take_notices().is_empty(), "a notice is given once");

    second.append_message(user("second's", 3)).expect("append");
    assert_eq!(std::fs::read(&original).expect("bytes"), before);
    let copied = lines_of(&copy);
    assert_eq!(copied.len(), 4, "header, the two entries, the new one");
    assert_eq!(&copied[1..3], &lines_of(&original)[1..]);

    // The first session still writes its own file, as one branch.
    first.append_message(user("first's", 4)).expect("append");
    let reread = SessionManager::open(&copy).expect("second's file is held by second");
    assert_ne!(reread.session_file(), Some(copy.as_path()));
    drop(reread);

    // Once the holder is gone the file can be continued in place.
    let first_leaf = first.leaf().map(str::to_string);
    drop(first);
    let mut third = SessionManager::open(&original).expect("opens");
    assert_eq!(third.session_file(), Some(original.as_path()));
    assert!(third.take_notices().is_empty());
    assert_eq!(third.leaf().map(str::to_string), first_leaf);
}

#[test]
fn an_append_by_another_program_is_detected_and_the_branch_moves_to_a_new_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut s = written(dir.path());
    let original = s.session_file().expect("file").to_path_buf();
    let leaf = s.leaf().expect("leaf").to_string();
    let foreign = format!(
        r#"{{"type":"message","id":"0000beef","parentId":"{leaf}","timestamp":"2026-12-02T00:00:00.000Z","message":{{"role":"user","content":"from pi","timestamp":5}}}}"#
    );
    append_behind_its_back(&original, &foreign);
    let before = std::fs::read(&original).expect("bytes");

    s.append_message(user("mine", 6)).expect("append");
    assert_eq!(
        std::fs::read(&original).expect("bytes"),
        before,
        "nothing more goes to the changed file"
    );
    let moved = s.session_file().expect("file").to_path_buf();
    assert_ne!(moved, original);
    assert_eq!(
        s.header().parent_session.as_deref(),
        Some(original.to_string_lossy().as_ref())
    );
    let notices = s.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("changed by another program"),
        "{}",
        notices[0]
    );
    assert!(notices[0].contains(&moved.display().to_string()));

    // The new file is this process's branch, whole: its entries and then the new one.
    let lines = lines_of(&moved);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("from pi")));
    assert_eq!(
        s.entry(s.leaf().expect("leaf"))
            .and_then(|e| e.parent_id.clone())
            .as_deref(),
        Some(leaf.as_str())
    );

    // Later appends go on in the new file without another notice.
    s.append_message(assistant("again", 7)).expect("append");
    assert_eq!(lines_of(&moved).len(), 5);
    assert!(s.take_notices().is_empty());
    let reread = load_session_file(&moved).expect("reads");
    assert_eq!(reread.entries, s.entries().to_vec());
}

#[test]
fn the_writer_sees_a_file_grown_or_cut_behind_its_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.jsonl");
    let mut writer = SessionWriter::create(&path, &["{\"type\":\"session\"}"]).expect("create");
    writer.append("{\"a\":1}").expect("append");
    writer.check_unchanged().expect("only its own writes");

    append_behind_its_back(&path, "{\"b\":2}");
    let err = writer.check_unchanged().expect_err("grown");
    assert!(
        matches!(err, SessionError::ChangedByAnother { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );

    let bytes = std::fs::read(&path).expect("bytes");
    std::fs::write(&path, &bytes[..10]).expect("cut");
    assert!(matches!(
        writer.check_unchanged(),
        Err(SessionError::ChangedByAnother { found: 10, .. })
    ));
}
