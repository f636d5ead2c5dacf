//! Branches, forks, labels and names.

use std::path::Path;

use super::{assistant, lines_of, roles_and_texts, user};
use crate::session::{EntryKind, SessionError, SessionManager};

/// user1, asst1, user2, asst2; then back at asst1: user3, asst3. Returns the ids in that order.
fn branched(s: &mut SessionManager) -> [String; 6] {
    let u1 = s.append_message(user("one", 1)).expect("u1");
    let a1 = s.append_message(assistant("one!", 2)).expect("a1");
    let u2 = s.append_message(user("two", 3)).expect("u2");
    let a2 = s.append_message(assistant("two!", 4)).expect("a2");
    s.branch(&a1).expect("branch");
    assert_eq!(s.leaf(), Some(a1.as_str()));
    let u3 = s.append_message(user("three", 5)).expect("u3");
    let a3 = s.append_message(assistant("three!", 6)).expect("a3");
    [u1, a1, u2, a2, u3, a3]
}

#[test]
fn branching_moves_the_leaf_and_the_context_follows_the_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut s = SessionManager::create("/p", dir.path());
    let [u1, a1, u2, a2, u3, a3] = branched(&mut s);

    assert_eq!(s.leaf(), Some(a3.as_str()));
    assert_eq!(
        s.entry(&u3).and_then(|e| e.parent_id.clone()).as_deref(),
        Some(a1.as_str())
    );
    let children = s.children(&a1);
    let children: Vec<&str> = children.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(children, [u2.as_str(), u3.as_str()]);
    let path = s.path_to(&a2);
    let path: Vec<&str> = path.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(path, [u1.as_str(), a1.as_str(), u2.as_str(), a2.as_str()]);
    assert_eq!(s.branch_path().len(), 4);
    assert_eq!(
        roles_and_texts(&s.build_context().messages),
        [
            "user:one",
            "assistant:one!",
            "user:three",
            "assistant:three!"
        ]
    );
    assert!(matches!(
        s.branch("nope"),
        Err(SessionError::EntryNotFound { .. })
    ));

    // Reopened, the leaf is the last entry written and the context is the same.
    let again = SessionManager::open(s.session_file().expect("file")).expect("reopens");
    assert_eq!(again.leaf(), Some(a3.as_str()));
    assert_eq!(again.build_context(), s.build_context());

    // reset_leaf: the next append is a new root.
    s.reset_leaf();
    assert!(s.build_context().messages.is_empty());
    let root = s.append_message(user("fresh", 7)).expect("root");
    assert_eq!(s.entry(&root).expect("entry").parent_id, None);
}

#[test]
fn branch_with_summary_appends_the_summary_at_the_new_position() {
    let mut s = SessionManager::in_memory("/p");
    let [_u1, a1, _u2, a2, _u3, a3] = branched(&mut s);
    let id = s
        .branch_with_summary(Some(&a1), "tried three", None, None, None)
        .expect("summary");
    let entry = s.entry(&id).expect("entry");
    assert_eq!(entry.parent_id.as_deref(), Some(a1.as_str()));
    assert!(matches!(&entry.kind, EntryKind::BranchSummary { from_id, .. } if *from_id == a1));
    assert_eq!(s.leaf(), Some(id.as_str()));
    assert_ne!(a2, a3);

    let root = s
        .branch_with_summary(None, "from the top", None, None, None)
        .expect("root");
    let entry = s.entry(&root).expect("entry");
    assert_eq!(entry.parent_id, None);
    assert!(matches!(&entry.kind, EntryKind::BranchSummary { from_id, .. } if from_id == "root"));
}

#[test]
fn fork_writes_the_path_with_its_labels_to_a_new_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut s = SessionManager::create("/p", dir.path());
    let [u1, a1, u2, _a2, u3, a3] = branched(&mut s);
    s.append_label(&u1, Some("start".into())).expect("label");
    s.append_label(&u2, Some("off path".into())).expect("label");
    s.append_label(&u3, Some("old".into())).expect("label");
    s.append_label(&u3, Some("three".into())).expect("relabel");
    let original = std::fs::read(s.session_file().expect("file")).expect("bytes");

    let fork = s.fork(Some(&a3)).expect("fork");
    let fork_file = fork.session_file().expect("file").to_path_buf();
    assert!(
        fork.is_written(),
        "a path with an assistant message is written at once"
    );
    assert_ne!(fork.session_id(), s.session_id());
    assert_eq!(fork_file.parent(), Some(dir.path()));
    let lines = lines_of(&fork_file);
    let header: serde_json::Value = serde_json::from_str(&lines[0]).expect("header");
    assert_eq!(
        header["parentSession"],
        s.session_file().expect("file").to_string_lossy().as_ref()
    );
    assert_eq!(header["cwd"], "/p");
    // The path, byte for byte, then one label entry per label on it.
    for (line, id) in lines[1..5].iter().zip([&u1, &a1, &u3, &a3]) {
        assert_eq!(*line, s.entry_line(id).expect("line"));
    }
    assert_eq!(lines.len(), 7);
    let labels: Vec<(String, Option<String>, Option<String>)> = fork.entries().to_vec()[4..]
        .iter()
        .map(|e| match &e.kind {
            EntryKind::Label { target_id, label } => {
                (target_id.clone(), label.clone(), e.parent_id.clone())
            }
            _ => panic!("label expected"),
        })
        .collect();
    assert_eq!(labels[0].0, u1);
    assert_eq!(labels[0].1.as_deref(), Some("start"));
    assert_eq!(labels[0].2.as_deref(), Some(a3.as_str()));
    assert_eq!(labels[1].0, u3);
    assert_eq!(labels[1].1.as_deref(), Some("three"));
    assert_eq!(
        labels[1].2.as_deref(),
        Some(fork.entries().to_vec()[4].id.as_str())
    );
    assert_eq!(fork.label(&u3), Some("three"));
    assert_eq!(fork.label(&u2), None);
    assert_eq!(
        roles_and_texts(&fork.build_context().messages),
        roles_and_texts(&s.build_context().messages)
    );
    assert_eq!(
        std::fs::read(s.session_file().expect("file")).expect("bytes"),
        original,
        "the source is untouched"
    );

    // A fork without an assistant message waits for one, like a new session.
    let mut early = s.fork(Some(&u1)).expect("fork");
    assert!(!early.is_written());
    early
        .append_message(assistant("again", 9))
        .expect("assistant");
    assert_eq!(lines_of(early.session_file().expect("file")).len(), 4);
    assert!(matches!(
        s.fork(Some("nope")),
        Err(SessionError::EntryNotFound { .. })
    ));
    assert!(matches!(
        SessionManager::in_memory("/p").fork(None),
        Err(SessionError::NothingToFork)
    ));
}

#[test]
fn labels_and_names_latest_wins() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut s = SessionManager::create("/p", dir.path());
    let u = s.append_message(user("hi", 1)).expect("user");
    s.append_message(assistant("a", 2)).expect("assistant");
    assert_eq!(s.session_name(), None);
    s.append_label(&u, Some("first".into())).expect("label");
    s.append_label(&u, Some("second".into())).expect("label");
    assert_eq!(s.label(&u), Some("second"));
    s.append_label(&u, None).expect("clear");
    assert_eq!(s.label(&u), None);
    s.append_label(&u, Some("back".into())).expect("label");
    s.append_label(&u, Some(String::new()))
        .expect("clear with empty");
    assert_eq!(s.label(&u), None);
    assert!(matches!(
        s.append_label("missing", Some("x".into())),
        Err(SessionError::EntryNotFound { .. })
    ));

    s.append_session_info("  My session  ").expect("name");
    assert_eq!(s.session_name(), Some("My session"));
    s.append_session_info("Renamed").expect("name");
    s.append_session_info("   ").expect("blank name");
    assert_eq!(s.session_name(), Some("Renamed"));

    let again = SessionManager::open(s.session_file().expect("file")).expect("reopens");
    assert_eq!(again.session_name(), Some("Renamed"));
    assert_eq!(again.label(&u), None);
}

#[test]
fn fork_from_copies_everything_and_continue_picks_the_latest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source_dir = dir.path().join("a");
    let target_dir = dir.path().join("b");
    let mut s = SessionManager::create("/a", &source_dir);
    branched(&mut s);
    let source = s.session_file().expect("file").to_path_buf();

    let forked = SessionManager::fork_from(&source, "/b", &target_dir).expect("fork");
    let file = forked.session_file().expect("file").to_path_buf();
    assert!(file.starts_with(&target_dir));
    let lines = lines_of(&file);
    assert_eq!(&lines[1..], &lines_of(&source)[1..]);
    assert_eq!(forked.header().cwd, "/b");
    assert_eq!(forked.cwd(), Path::new("/b"));
    // The fork holds its file until it is dropped; a second holder would move to a new file.
    drop(forked);

    let resumed = SessionManager::continue_recent("/b", &target_dir).expect("continue");
    assert_eq!(resumed.session_file(), Some(file.as_path()));
    let fresh = SessionManager::continue_recent("/c", dir.path().join("c")).expect("new");
    assert!(!fresh.is_written());
    assert!(fresh.entries().is_empty());
}
