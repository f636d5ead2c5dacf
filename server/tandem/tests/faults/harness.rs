//! What the fault tests share: fixture paths, Ctrl-C, a slow answer, `tandem acp` over raw
//! lines, and the check every test ends with (the session file loads and holds the entries
//! written before the fault). Spawning the binary with a hang guard is `support::process`,
//! shared with the durability tests.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_coding::session::{load_session_file, LoadedFile, SessionManager};
use tandem_tests::wire::{self, Turn, WireApi};

use crate::support::process::{assert_no_panic, command, wait_or_fail, HANG_GUARD};
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

/// Queues `text` as an answer streamed slowly (16-byte chunks, 20 ms apart), so that the client
/// can go away while it streams.
pub fn enqueue_slow(sandbox: &Sandbox, text: &str) {
    sandbox.enqueue(
        wire::response(WireApi::OpenAiCompletions, &Turn::text(text))
            .with_chunk(16)
            .with_chunk_delay(Duration::from_millis(20)),
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

/// Checks the session file of a new session whose first turn was cut short: it holds `prompt`
/// and ends with the aborted assistant message, whose text is a start of `answer`.
pub fn check_first_turn_saved(path: &Path, prompt: &str, answer: &str) {
    let checked = check_session(path);
    let user = checked
        .kinds
        .iter()
        .position(|k| k == "message:user")
        .unwrap_or_else(|| panic!("no user message: {:?}", checked.kinds));
    assert_eq!(
        crate::support::content_text(&checked.message(user)["content"], ""),
        prompt
    );
    assert_eq!(
        checked.kinds.last().map(String::as_str),
        Some("message:assistant")
    );
    assert_eq!(checked.stop_reasons(), ["aborted"]);
    let partial = checked.message(checked.kinds.len() - 1);
    let text = crate::support::content_text(&partial["content"], "");
    assert!(
        !text.is_empty() && answer.starts_with(&text),
        "partial answer: {text:?}"
    );
}

/// `tandem acp` over raw newline-delimited JSON-RPC; its stdout is read on a thread, one JSON
/// message a line.
pub struct RawAcp {
    pub child: Child,
    /// `None` once closed.
    pub stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Every message read so far, in order.
    pub seen: Vec<Value>,
}

impl RawAcp {
    /// Starts `tandem acp ARGS` in the sandbox, its stderr in `acp.stderr` in the sandbox's home.
    pub fn start(sandbox: &Sandbox, args: &[&str]) -> RawAcp {
        let mut all = vec!["acp"];
        all.extend_from_slice(args);
        let mut child = command(sandbox, &all, "acp.stderr")
            .spawn()
            .expect("spawns tandem acp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        RawAcp {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.flush().expect("flush");
    }

    pub fn send(&mut self, message: Value) {
        self.send_bytes(format!("{message}\n").as_bytes());
    }

    /// The first message (seen or new) matching `pred`; every message read is kept in `seen`.
    pub fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(m) = self.seen.iter().find(|m| pred(m)) {
            return m.clone();
        }
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            let m = self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("waiting for {what}: nothing within {HANG_GUARD:?}"));
            self.seen.push(m.clone());
            if pred(&m) {
                return m;
            }
        }
    }

    /// The response to request `id`, a result or an error.
    pub fn response(&mut self, id: i64) -> Value {
        self.wait(&format!("response {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// The result of request `id`, which must not have failed.
    pub fn result(&mut self, id: i64) -> Value {
        let r = self.response(id);
        assert!(r.get("error").is_none(), "{r}");
        r["result"].clone()
    }

    /// `initialize` (id 1), then `session/new` in the sandbox's project (id 2); the session id.
    pub fn new_session(&mut self, sandbox: &Sandbox) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
        self.result(1);
        self.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": sandbox.cwd, "mcpServers": []}}));
        self.result(2)["sessionId"].clone()
    }

    /// Closes stdin and waits for the agent to exit, which it must do with status 0 and no
    /// panic; its stderr.
    pub fn close(&mut self, sandbox: &Sandbox) -> String {
        self.stdin = None;
        let status = wait_or_fail(&mut self.child, HANG_GUARD, "tandem acp after stdin closed");
        let stderr = std::fs::read_to_string(sandbox.home.join("acp.stderr")).unwrap();
        assert_no_panic(&stderr);
        assert_eq!(status.code(), Some(0), "stderr: {stderr}");
        stderr
    }
}
