//! What the fault tests share: fixture paths, spawning the real binary with a hang guard, and
//! the checks every test ends with (no panic on stderr, the session file loads and holds the
//! entries written before the fault).

#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_coding::session::{load_session_file, LoadedFile, SessionManager};
use tandem_tests::wire::WireApi;

use crate::support::Sandbox;

/// Longest any one wait on the binary may take before the test fails as hung. A guard only:
/// nothing asserts how fast anything is.
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `fixtures/faults/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("fixtures/faults").join(name)
}

/// A sandbox whose `mock` provider speaks OpenAI Chat Completions, with retries a few
/// milliseconds apart.
pub fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"retry": {"baseDelayMs": 5, "maxRetries": 2}}));
    sandbox
}

/// Queues `fixtures/faults/<name>` on the sandbox's mock.
pub fn enqueue_fixture(sandbox: &Sandbox, name: &str) {
    sandbox
        .mock
        .enqueue_file(fixture(name))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
}

/// `tandem <args>` in the sandbox (its home, agent dir and project), stdout piped, stderr to
/// `<home>/<stderr_name>`, stdin piped.
pub fn command(sandbox: &Sandbox, args: &[&str], stderr_name: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
    let stderr = File::create(sandbox.home.join(stderr_name)).expect("stderr file");
    cmd.args(args)
        .current_dir(&sandbox.cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    cmd
}

/// Waits for `child` to exit; kills it and fails the test if it takes longer than `guard`.
pub fn wait_or_fail(child: &mut Child, guard: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + guard;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: the process did not exit within {guard:?} (hung)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Fails when `stderr` shows a panic.
pub fn assert_no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked"),
        "the process panicked; stderr:\n{stderr}"
    );
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
