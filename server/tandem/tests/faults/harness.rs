//! What the fault tests share: fixture paths, Ctrl-C, and the check every test ends with (the
//! session file loads and holds the entries written before the fault). Spawning the binary with
//! a hang guard is `support::process`, shared with the durability tests.

use std::path::{Path, PathBuf};
use std::process::Child;

use serde_json::Value;
use tandem_coding::session::{load_session_file, LoadedFile, SessionManager};

use crate::support::Sandbox;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `fixtures/faults/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("fixtures/faults").join(name)
}

/// Queues `fixtures/faults/<name>` on the sandbox's mock.
pub fn enqueue_fixture(sandbox: &Sandbox, name: &str) {
    sandbox
        .mock
        .enqueue_file(fixture(name))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
}

/// Sends SIGINT to `child` (what Ctrl-C does).
pub fn interrupt(child: &Child) {
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0, "kill(SIGINT)");
}

/// A session file loaded the way Tandem loads it, with the raw checks of an append-only file.
pub struct Checked {
    /// The file as loaded.
    pub loaded: LoadedFile,
    /// One label per entry: the entry type, with the role for messages
    /// (`message:assistant`), in file order.
    pub kinds: Vec<String>,
}

impl Checked {
    /// The `i`th message entry's message JSON (as written in the file).
    pub fn message(&self, i: usize) -> Value {
        let line = self.loaded.lines.get(i).expect("entry line");
        let v: Value = serde_json::from_str(line).expect("entry JSON");
        v["message"].clone()
    }

    /// Every assistant message's `stopReason`, in order.
    pub fn stop_reasons(&self) -> Vec<String> {
        (0..self.kinds.len())
            .filter(|i| self.kinds[*i] == "message:assistant")
            .map(|i| {
                self.message(i)["stopReason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }
}

/// Loads `path` with Tandem's own loader and `SessionManager::open`, and checks: every line
/// is complete and was loaded (nothing skipped), and the tree has every entry.
pub fn check_session(path: &Path) -> Checked {
    let bytes = std::fs::read(path).expect("session file");
    assert_eq!(
        bytes.last(),
        Some(&b'\n'),
        "{}: the last line is not complete",
        path.display()
    );
    let loaded = load_session_file(path)
        .unwrap_or_else(|e| panic!("{}: does not load: {e}", path.display()));
    assert!(
        loaded.report.skipped.is_empty(),
        "{}: lines skipped: {:?}",
        path.display(),
        loaded.report.skipped
    );
    let lines = bytes.iter().filter(|b| **b == b'\n').count();
    assert_eq!(
        loaded.entries.len() + 1,
        lines,
        "{}: every line after the header is an entry",
        path.display()
    );
    let manager = SessionManager::open(path).expect("SessionManager::open");
    assert_eq!(manager.entries().len(), loaded.entries.len());
    let kinds = loaded.lines.iter().map(kind_label).collect();
    Checked { loaded, kinds }
}

/// `message:<role>` for a message entry's line, else the entry's `type`.
pub fn kind_label(line: &str) -> String {
    let v: Value = serde_json::from_str(line).expect("entry JSON");
    match (v["type"].as_str(), v["message"]["role"].as_str()) {
        (Some("message"), Some(role)) => format!("message:{role}"),
        (kind, _) => kind.unwrap_or_default().to_string(),
    }
}

/// The JSON lines of a JSON-mode stdout.
pub fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}
