//! Listings for one working directory and for all of them, and the `--continue` pick.

use std::path::Path;
use std::time::{Duration, SystemTime};

use tandem_ai::registry::AgentDir;

use super::{assistant, user};
use crate::session::time::time_of;
use crate::session::{
    default_session_dir, find_most_recent, list_all_sessions, list_sessions, SessionManager,
};

/// A written session in `dir` whose messages are stamped `base` + 1, 2, ….
fn session(dir: &Path, cwd: &str, first: &str, base: i64) -> SessionManager {
    let mut s = SessionManager::create(cwd, dir);
    s.append_message(user(first, base + 1)).expect("user");
    s.append_message(assistant("sure thing", base + 2))
        .expect("assistant");
    s
}

fn set_mtime(path: &Path, time: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(time))
        .expect("set mtime");
}

#[test]
fn a_folder_lists_newest_activity_first_and_warns_about_bad_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let old = session(dir.path(), "/p", "old question", 1_000_000);
    let mut new = session(dir.path(), "/p", "new question", 2_000_000);
    new.append_session_info("Named").expect("name");
    new.append_message(user("follow-up", 2_000_010))
        .expect("user");
    std::fs::write(dir.path().join("broken.jsonl"), "garbage\n").expect("write");
    std::fs::write(dir.path().join("notes.txt"), "ignored\n").expect("write");

    let list = list_sessions(dir.path());
    assert_eq!(list.sessions.len(), 2);
    assert_eq!(list.warnings.len(), 1);
    assert!(list.warnings[0].path.ends_with("broken.jsonl"));

    let first = &list.sessions[0];
    assert_eq!(first.id, new.session_id());
    assert_eq!(first.path, new.session_file().expect("file"));
    assert_eq!(first.name.as_deref(), Some("Named"));
    assert_eq!(first.cwd, "/p");
    assert_eq!(first.message_count, 3);
    assert_eq!(first.first_message, "new question");
    assert_eq!(first.all_messages_text, "new question sure thing follow-up");
    assert_eq!(first.modified, time_of(2_000_010));
    assert_eq!(first.parent_session_path, None);
    assert_eq!(list.sessions[1].id, old.session_id());
    assert_eq!(list.sessions[1].modified, time_of(1_000_002));

    assert!(list_sessions(&dir.path().join("missing"))
        .sessions
        .is_empty());
}

#[test]
fn all_working_directories_are_listed_together() {
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = AgentDir::new(dir.path());
    let a = session(
        &default_session_dir(&agent, Path::new("/work/a")),
        "/work/a",
        "in a",
        1_000,
    );
    let b = session(
        &default_session_dir(&agent, Path::new("/work/b")),
        "/work/b",
        "in b",
        5_000,
    );
    let fork = b.fork(None).expect("fork");
    assert!(a
        .session_file()
        .expect("file")
        .starts_with(dir.path().join("sessions").join("--work-a--")));

    let list = list_all_sessions(&agent);
    assert!(list.warnings.is_empty());
    let cwds: Vec<&str> = list.sessions.iter().map(|s| s.cwd.as_str()).collect();
    assert_eq!(cwds.len(), 3);
    assert_eq!(cwds[2], "/work/a");
    let forked = list
        .sessions
        .iter()
        .find(|s| s.id == fork.session_id())
        .expect("fork listed");
    assert_eq!(
        forked.parent_session_path.as_deref(),
        b.session_file()
            .map(|p| p.to_string_lossy().into_owned())
            .as_deref()
    );
    assert!(list_all_sessions(&AgentDir::new(dir.path().join("none")))
        .sessions
        .is_empty());
}

#[test]
fn continue_picks_the_latest_valid_file_by_mtime() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = session(dir.path(), "/p", "a", 1);
    let b = session(dir.path(), "/p", "b", 2);
    let now = SystemTime::now();
    set_mtime(a.session_file().expect("a"), now);
    set_mtime(b.session_file().expect("b"), now - Duration::from_secs(60));
    let bad = dir.path().join("zzz.jsonl");
    std::fs::write(&bad, "not a session\n").expect("write");
    set_mtime(&bad, now + Duration::from_secs(60));

    assert_eq!(find_most_recent(dir.path()).as_deref(), a.session_file());
    let a_id = a.session_id().to_string();
    // Released, so that continuing writes to it rather than to a copy.
    drop(a);
    let resumed = SessionManager::continue_recent("/p", dir.path()).expect("continue");
    assert_eq!(resumed.session_id(), a_id);
    assert_eq!(find_most_recent(&dir.path().join("missing")), None);
}

#[test]
fn continue_tells_files_with_one_mtime_apart_by_their_last_entry() {
    // The kernel's file clock ticks every few milliseconds: two processes writing one after
    // the other can leave equal mtimes. The file written last (by its entries' own
    // millisecond timestamps) wins, whatever the names.
    let dir = tempfile::tempdir().expect("temp dir");
    let mut a = session(dir.path(), "/p", "a", 1);
    let b = session(dir.path(), "/p", "b", 2);
    std::thread::sleep(Duration::from_millis(5));
    a.append_session_info("written last").expect("append");
    let (a_path, b_path) = (
        a.session_file().expect("a").to_path_buf(),
        b.session_file().expect("b").to_path_buf(),
    );
    assert!(a_path < b_path, "the names alone would choose b");
    let now = SystemTime::now();
    set_mtime(&a_path, now);
    set_mtime(&b_path, now);
    assert_eq!(find_most_recent(dir.path()), Some(a_path));
}

#[test]
fn a_listing_reads_a_large_session_line_by_line_and_caps_its_search_text() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut s = session(dir.path(), "/p", "the first question", 1_000_000);
    let long = "word ".repeat(1000);
    for i in 0..200 {
        s.append_message(user(&format!("{i} {long}"), 1_000_010 + i))
            .expect("user");
    }
    let list = list_sessions(dir.path());
    let info = &list.sessions[0];
    assert_eq!(info.message_count, 202);
    assert_eq!(info.first_message, "the first question");
    assert!(info
        .all_messages_text
        .starts_with("the first question sure thing 0 word"));
    assert!(
        info.all_messages_text.len() <= 256 << 10,
        "{} bytes",
        info.all_messages_text.len()
    );
    assert!(info.all_messages_text.len() > 200 << 10);
}
