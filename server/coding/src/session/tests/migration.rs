//! Version 1 and 2 files: migrated in memory, never rewritten, continued in a new v3 file.

use std::path::{Path, PathBuf};

use tandem_ai::ThinkingLevel;

use super::{lines_of, roles_and_texts, user};
use crate::session::{EntryKind, SessionManager};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/session/tests/fixtures")
        .join(name)
}

/// A copy of fixture `name` in `dir`.
fn copy(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::copy(fixture(name), &path).expect("copy fixture");
    path
}

#[test]
fn a_v1_file_gets_ids_a_chain_and_a_resolved_compaction() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = copy(dir.path(), "pi-v1-session.jsonl");
    let original = std::fs::read(&path).expect("bytes");

    let s = SessionManager::open(&path).expect("opens");
    assert_eq!(s.load_report().migrated_from, Some(1));
    assert_eq!(s.migrated_from(), Some(path.as_path()));
    assert_eq!(s.cwd(), Path::new("/home/user/old"));
    let entries = s.entries().to_vec();
    assert_eq!(entries.len(), 8);
    assert_eq!(entries[0].parent_id, None);
    for pair in entries.windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()));
        assert_eq!(pair[1].id.len(), 8);
    }
    // firstKeptEntryIndex 4 (the header is index 0) is the second user message.
    let EntryKind::Compaction {
        first_kept_entry_id,
        ..
    } = &entries[5].kind
    else {
        panic!("compaction expected");
    };
    assert_eq!(first_kept_entry_id, &entries[3].id);
    assert!(!s
        .entry_line(&entries[5].id)
        .expect("line")
        .contains("firstKeptEntryIndex"));

    let context = s.build_context();
    assert_eq!(
        roles_and_texts(&context.messages),
        [
            "compactionSummary:They asked two questions.",
            "user:second question",
            "assistant:second answer",
            "user:third question",
            "assistant:third answer",
        ]
    );
    assert_eq!(
        std::fs::read(&path).expect("bytes"),
        original,
        "opening never rewrites"
    );
}

#[test]
fn appending_to_a_migrated_session_continues_in_a_new_v3_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = copy(dir.path(), "pi-v1-session.jsonl");
    let original = std::fs::read(&path).expect("bytes");

    let mut s = SessionManager::open(&path).expect("opens");
    let new_file = s.session_file().expect("file").to_path_buf();
    assert_ne!(new_file, path);
    assert_eq!(new_file.parent(), path.parent());
    assert!(
        !new_file.exists(),
        "nothing is written until something is appended"
    );

    let migrated: Vec<String> = s
        .entries()
        .iter()
        .map(|e| s.entry_line(&e.id).expect("line").to_string())
        .collect();
    let id = s
        .append_message(user("fourth question", 9))
        .expect("append");
    assert_eq!(
        std::fs::read(&path).expect("bytes"),
        original,
        "the v1 file is untouched"
    );

    let lines = lines_of(&new_file);
    let header: serde_json::Value = serde_json::from_str(&lines[0]).expect("header");
    assert_eq!(header["version"], 3);
    assert_eq!(header["cwd"], "/home/user/old");
    assert_eq!(header["parentSession"], path.to_string_lossy().as_ref());
    assert_eq!(header["id"], s.session_id());
    assert_eq!(&lines[1..9], &migrated[..]);
    assert_eq!(lines[9], s.entry_line(&id).expect("line"));

    // The new file is an ordinary v3 session with the same conversation.
    let again = SessionManager::open(&new_file).expect("reopens");
    assert_eq!(again.load_report().migrated_from, None);
    assert_eq!(again.entries().to_vec(), s.entries().to_vec());
    assert_eq!(again.build_context(), s.build_context());
}

#[test]
fn a_v2_file_renames_hook_messages_to_custom() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = copy(dir.path(), "pi-v2-session.jsonl");
    let original = std::fs::read(&path).expect("bytes");

    let s = SessionManager::open(&path).expect("opens");
    assert_eq!(s.load_report().migrated_from, Some(2));
    assert_eq!(s.entries().to_vec()[2].id, "a0000003", "v2 ids are kept");
    let context = s.build_context();
    assert_eq!(context.thinking_level, ThinkingLevel::Medium);
    assert_eq!(
        roles_and_texts(&context.messages),
        [
            "user:hello",
            "custom:injected by a hook",
            "assistant:hi there"
        ]
    );
    assert!(s
        .entry_line("a0000003")
        .expect("line")
        .contains(r#""message":{"role":"custom","customType":"ext""#));
    assert_eq!(std::fs::read(&path).expect("bytes"), original);
}
