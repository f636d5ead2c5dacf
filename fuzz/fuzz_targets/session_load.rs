//! The session JSONL loader, migrations included (`tandem_coding::session`).
//!
//! Input: the bytes of a session file. The target writes them to a file in a private temp
//! folder and opens it with `SessionManager::open` (the path every front door takes), then
//! walks the tree, builds the context and reads the listing's `session_info`. Checks: no panic;
//! opening never changes the file; appending after a load only appends (a migrated v1/v2 file
//! is not touched at all: the session continues in a new file); a torn last line added to a
//! loadable file is skipped and changes no entry.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tandem_ai::{Api, AssistantMessage, UserMessage};
use tandem_coding::session::{session_info, SessionManager};

fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        // One folder per process; those of processes that are gone are removed.
        let prefix = "tandem-fuzz-session-";
        for entry in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix(prefix) {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = base.join(format!("{prefix}{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    })
}

fn clear(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let _ = std::fs::remove_file(entry.path());
    }
}

/// Opens `path` and exercises the loaded session; the entry ids, or `None` when it does not
/// open.
fn open(path: &Path) -> Option<(SessionManager, Vec<String>)> {
    let s = SessionManager::open(path).ok()?;
    let ids: Vec<String> = s.entries().iter().map(|e| e.id.clone()).collect();
    let _ = s.build_context();
    let _ = s.branch_path();
    let _ = s.session_name();
    for id in ids.iter().take(16) {
        let _ = s.path_to(id);
        let _ = s.children(id);
        let _ = s.label(id);
        let _ = s.entry_line(id);
    }
    if let Some(leaf) = s.leaf() {
        assert!(s.entry(leaf).is_some(), "the leaf is an entry");
    }
    Some((s, ids))
}

fuzz_target!(|data: &[u8]| {
    let dir = dir();
    clear(dir);
    let path = dir.join("session.jsonl");
    std::fs::write(&path, data).expect("write");

    let opened = open(&path);
    let _ = session_info(&path);
    assert_eq!(
        std::fs::read(&path).expect("read"),
        data,
        "opening changed the file"
    );
    let Some((mut s, ids)) = opened else {
        return;
    };
    let migrated = s.migrated_from().is_some();

    // A torn last line (a crash mid-append) is skipped and changes nothing else.
    if data.ends_with(b"\n") {
        let torn = dir.join("torn.jsonl");
        let mut bytes = data.to_vec();
        bytes.extend_from_slice(
            br#"{"type":"message","id":"f00dfeed","parentId":null,"timestamp":"2025-"#,
        );
        std::fs::write(&torn, &bytes).expect("write");
        let (t, torn_ids) = open(&torn).expect("a loadable file with a torn tail still loads");
        if migrated {
            // Migration makes up ids afresh on every load: compare the count only.
            assert_eq!(
                torn_ids.len(),
                ids.len(),
                "the torn line changed the entries"
            );
        } else {
            assert_eq!(torn_ids, ids, "the torn line changed the entries");
        }
        assert_eq!(
            t.load_report().skipped.len(),
            s.load_report().skipped.len() + 1,
            "the torn line is reported as skipped"
        );
        assert_eq!(std::fs::read(&torn).expect("read"), bytes);
        std::fs::remove_file(&torn).expect("remove");
    }

    // Appending only appends (or, for a migrated file, writes elsewhere).
    let mut answer = AssistantMessage::empty(Api::OpenAiCompletions, "mock", "mock-model");
    answer.timestamp = 2;
    let appended = s
        .append_message(UserMessage::text("fuzz"))
        .and_then(|_| s.append_message(answer));
    let after = std::fs::read(&path).expect("read");
    if migrated {
        assert_eq!(after, data, "a migrated file was written to");
    } else {
        assert!(after.starts_with(data), "an append rewrote the file");
        if appended.is_ok() {
            let reopened = SessionManager::open(&path).expect("the appended file opens");
            assert_eq!(
                reopened.entries().len(),
                ids.len() + 2,
                "both appends load back"
            );
        }
    }
});
