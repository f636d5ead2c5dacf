//! `kill -9` in a loop: one session file continued across every run (`--session <file>`, and
//! `-c` every fourth run), each run killed while the model streams, while the bash tool runs,
//! or at a random moment (startup included). After every kill the file is checked: the bytes
//! seen before are a prefix of the file (it is only appended to, never rewritten), it loads
//! with Tandem's loader and `SessionManager::open`, every complete line is an entry except the
//! torn lines, and the torn lines are exactly those left by earlier crashes, still in place.
//!
//! `kill -9` cannot tear a single `write(2)` to a regular file, and each entry is one write, so
//! the loop also tears lines itself: every seventh kill is followed by the first half of an
//! entry line appended without its newline (what a crash inside a write would leave). The next
//! run must skip it on load and start its own entries on a new line.
//!
//! Delays come from a seeded generator (the seed is printed; `TANDEM_KILL_SEED` replays it);
//! the test asserts invariants, not timing. Figures are printed at the end (`--nocapture`).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Child;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_coding::session::{load_session_file, SessionManager};
use tandem_tests::lsp_client::event_type;
use tandem_tests::wire::{self, Turn, WireApi};

use crate::support::lsp::{prompt, sandbox_lsp, session_file, stderr_of};
use crate::support::process::{assert_no_panic, command, wait_or_fail, HANG_GUARD};
use crate::support::{Sandbox, MODEL};

/// Kills the loop must survive.
const KILLS: usize = 50;
/// Every this many runs, one is left to finish (it must succeed on the crashed file).
const FINISH_EVERY: usize = 10;
/// Every this many kills, a torn line is appended.
const TEAR_EVERY: usize = 7;

/// xorshift64*: small, seeded, good enough for delays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Where a run was when it was killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// Before the first event (process start, session load, MCP, the request).
    Startup,
    /// Between `message_start` and `message_end` of an assistant message.
    Streaming,
    /// Between `tool_execution_start` and `tool_execution_end`.
    Tool,
    /// Anywhere else (between messages, persisting, after the tool).
    Between,
}

/// What the reader thread saw on stdout, as the phase it implies.
fn phase_after(line: &str, current: Phase) -> Phase {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
        return current;
    };
    match v["type"].as_str().unwrap_or_default() {
        "message_start" if v["message"]["role"] == "assistant" => Phase::Streaming,
        "message_update" => Phase::Streaming,
        "tool_execution_start" | "tool_execution_update" => Phase::Tool,
        _ => Phase::Between,
    }
}

/// How a run is to be interrupted.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// After the n-th `message_update` (plus a little).
    Streaming(u32, u64),
    /// This long after `tool_execution_start`.
    Tool(u64),
    /// This long after spawning.
    Anytime(u64),
}

/// The state carried from one observation of the file to the next.
struct Observed {
    bytes: Vec<u8>,
    /// 1-based numbers of the lines that are torn (never parse).
    torn: BTreeSet<usize>,
    entries_checked: usize,
    observations: usize,
}

impl Observed {
    /// Checks the file against the previous observation; see the module docs.
    fn check(&mut self, path: &Path, label: &str) {
        let bytes = std::fs::read(path).expect("session file");
        assert!(
            bytes.starts_with(&self.bytes),
            "{label}: the file was rewritten (the previous {} bytes are not a prefix)",
            self.bytes.len()
        );
        // A tail without `\n` is a line torn by this crash: it stays torn forever.
        let complete = bytes.iter().filter(|b| **b == b'\n').count();
        if bytes.last().is_some_and(|b| *b != b'\n') {
            self.torn.insert(complete + 1);
        }
        let loaded = load_session_file(path).unwrap_or_else(|e| panic!("{label}: {e}"));
        let skipped: BTreeSet<usize> = loaded.report.skipped.iter().map(|s| s.line).collect();
        assert_eq!(
            skipped, self.torn,
            "{label}: skipped lines are exactly the torn ones ({:?})",
            loaded.report.skipped
        );
        let lines = complete + usize::from(bytes.last().is_some_and(|b| *b != b'\n'));
        assert_eq!(
            loaded.entries.len(),
            lines - 1 - self.torn.len(),
            "{label}: every whole line after the header is an entry"
        );
        // Every complete line is byte-identical to what the loader kept for it.
        let kept: Vec<&str> = loaded.lines.iter().collect();
        let whole: Vec<&str> = std::str::from_utf8(&bytes)
            .expect("UTF-8")
            .split('\n')
            .enumerate()
            .filter(|(i, l)| *i > 0 && !l.is_empty() && !self.torn.contains(&(i + 1)))
            .map(|(_, l)| l)
            .collect();
        assert_eq!(
            kept, whole,
            "{label}: the loaded lines are the file's lines"
        );
        let manager = SessionManager::open(path).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(manager.entries().len(), loaded.entries.len(), "{label}");
        let _ = manager.build_context();
        self.entries_checked += loaded.entries.len();
        self.observations += 1;
        self.bytes = bytes;
    }
}

/// The mock's two answers, replayed in a cycle: text then a bash call that sleeps, and a final
/// text; both streamed in small, delayed pieces.
fn queue_answers(sandbox: &Sandbox) {
    let tool_turn = Turn::text("Let me look at the tree first, one small step at a time.")
        .with_tool_call(
            "call_sleep",
            "bash",
            json!({"command": "sleep 0.15; echo slept"}),
        );
    let final_turn = Turn::text("All done: the tree is as expected and nothing needed changing.");
    for turn in [tool_turn, final_turn] {
        sandbox.enqueue(
            wire::response(WireApi::OpenAiCompletions, &turn)
                .with_chunk(64)
                .with_chunk_delay(Duration::from_millis(2)),
        );
    }
    sandbox.mock.set_cycle(true);
}

/// Spawns a run continuing the session; returns it and its stdout lines.
fn spawn(sandbox: &Sandbox, file: &Path, run: usize) -> (Child, Receiver<String>) {
    let prompt = format!("run {run}");
    let file = file.to_str().expect("UTF-8 path");
    let args: Vec<&str> = if run % 4 == 3 {
        vec!["--model", MODEL, "--mode", "json", "-c", "-p", &prompt]
    } else {
        vec![
            "--model",
            MODEL,
            "--mode",
            "json",
            "--session",
            file,
            "-p",
            &prompt,
        ]
    };
    let mut child = command(sandbox, &args, &format!("run-{run}.stderr"))
        .spawn()
        .expect("spawns tandem");
    drop(child.stdin.take());
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Follows the run's events until `target` says to kill; returns the phase at the kill, or
/// `None` when the run ended first.
fn run_until(child: &mut Child, lines: &Receiver<String>, target: Target) -> Option<Phase> {
    let started = Instant::now();
    let guard = started + HANG_GUARD;
    let mut phase = Phase::Startup;
    let mut updates = 0u32;
    let mut kill_at: Option<Instant> = match target {
        Target::Anytime(ms) => Some(started + Duration::from_millis(ms)),
        _ => None,
    };
    loop {
        let now = Instant::now();
        assert!(now < guard, "the run did not finish within {HANG_GUARD:?}");
        if kill_at.is_some_and(|at| now >= at) {
            break;
        }
        let wait = kill_at
            .map(|at| at.saturating_duration_since(now))
            .unwrap_or(Duration::from_millis(50))
            .min(Duration::from_millis(50));
        match lines.recv_timeout(wait) {
            Ok(line) => {
                phase = phase_after(&line, phase);
                if line.contains("\"message_update\"") {
                    updates += 1;
                }
                match target {
                    Target::Streaming(n, ms) if kill_at.is_none() && updates >= n => {
                        kill_at = Some(Instant::now() + Duration::from_millis(ms));
                    }
                    Target::Tool(ms)
                        if kill_at.is_none() && line.contains("\"tool_execution_start\"") =>
                    {
                        kill_at = Some(Instant::now() + Duration::from_millis(ms));
                    }
                    _ => {}
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // stdout closed: the run ended (a child of the bash tool may keep it open a
                // little longer, so the exit is what counts).
                if child.try_wait().expect("try_wait").is_some() {
                    return None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    if child.try_wait().expect("try_wait").is_some() {
        return None;
    }
    child.kill().expect("SIGKILL");
    Some(phase)
}

/// Appends the first half of the file's last entry line, without a newline.
fn tear(path: &Path) {
    let text = std::fs::read_to_string(path).expect("session file");
    let last = text
        .trim_end_matches('\n')
        .rsplit('\n')
        .next()
        .unwrap_or_default();
    let mut half = last.len() / 2;
    while !last.is_char_boundary(half) {
        half -= 1;
    }
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(&last.as_bytes()[..half]).unwrap();
}

#[test]
fn kill_9_during_streaming_and_tool_execution_never_loses_or_rewrites_entries() {
    let seed = std::env::var("TANDEM_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    println!("kill loop seed: {seed} (TANDEM_KILL_SEED={seed} replays it)");
    let mut rng = Rng(seed);
    let sandbox = Sandbox::with_quick_retries();
    queue_answers(&sandbox);

    // The first run finishes: the session file exists from here on (run 3 uses `-c`, which
    // creates the session when there is none).
    let (mut child, _lines) = spawn(&sandbox, Path::new("unused"), 3);
    let status = wait_or_fail(&mut child, HANG_GUARD, "the first run");
    let stderr = std::fs::read_to_string(sandbox.home.join("run-3.stderr")).unwrap();
    assert!(status.success(), "the first run failed: {stderr}");
    let file = sandbox.only_session();
    let mut observed = Observed {
        bytes: Vec::new(),
        torn: BTreeSet::new(),
        entries_checked: 0,
        observations: 0,
    };
    observed.check(&file, "after the first run");

    let mut kills: Vec<Phase> = Vec::new();
    let mut finished = 1usize;
    let mut torn_injected = 0usize;
    let mut run = 3usize;
    while kills.len() < KILLS {
        run += 1;
        assert!(run < 400, "too few kills landed: {}", kills.len());
        let (mut child, lines) = spawn(&sandbox, &file, run);
        let label = format!("run {run}");
        if run.is_multiple_of(FINISH_EVERY) {
            let status = wait_or_fail(&mut child, HANG_GUARD, &label);
            let stderr =
                std::fs::read_to_string(sandbox.home.join(format!("run-{run}.stderr"))).unwrap();
            assert_no_panic(&stderr);
            assert!(
                status.success(),
                "{label} on the crashed file failed: {stderr}"
            );
            finished += 1;
            observed.check(&file, &label);
            continue;
        }
        let target = match kills.len() % 3 {
            0 => Target::Streaming(1 + rng.below(6) as u32, rng.below(20)),
            1 => Target::Tool(rng.below(180)),
            _ => Target::Anytime(rng.below(400)),
        };
        let killed = run_until(&mut child, &lines, target);
        let status = wait_or_fail(&mut child, HANG_GUARD, &label);
        let stderr =
            std::fs::read_to_string(sandbox.home.join(format!("run-{run}.stderr"))).unwrap();
        assert_no_panic(&stderr);
        // The process may exit on its own between the last look and the kill (the signal
        // then hits a zombie): an exit status means it finished, not that it was killed.
        let killed = killed.filter(|_| status.code().is_none());
        match killed {
            Some(phase) => kills.push(phase),
            None => {
                assert!(status.success(), "{label} failed: {stderr}");
                finished += 1;
            }
        }
        observed.check(&file, &format!("{label} ({target:?}, killed: {killed:?})"));
        if killed.is_some() && kills.len().is_multiple_of(TEAR_EVERY) {
            tear(&file);
            torn_injected += 1;
            observed.check(&file, &format!("{label}, torn"));
        }
    }
    // A last run on the file all those crashes left: it loads and finishes.
    run += 1;
    let (mut child, _lines) = spawn(&sandbox, &file, run);
    let status = wait_or_fail(&mut child, HANG_GUARD, "the last run");
    let stderr = std::fs::read_to_string(sandbox.home.join(format!("run-{run}.stderr"))).unwrap();
    assert!(status.success(), "the last run failed: {stderr}");
    finished += 1;
    observed.check(&file, "after the last run");
    assert_eq!(
        sandbox.session_files().len(),
        1,
        "every run continued the one file"
    );

    // Every request made on the crashed file was a well-formed conversation: each tool call
    // has a result (a call cut off by a kill gets a synthetic one), as real providers demand.
    let requests = sandbox.requests();
    for (n, request) in requests.iter().enumerate() {
        let body = request.json().expect("JSON body");
        let messages = body["messages"].as_array().expect("messages");
        for (i, m) in messages.iter().enumerate() {
            for call in m["tool_calls"].as_array().into_iter().flatten() {
                let id = &call["id"];
                assert!(
                    messages[i + 1..]
                        .iter()
                        .any(|r| r["role"] == "tool" && &r["tool_call_id"] == id),
                    "request {n}: tool call {id} has no result"
                );
            }
        }
    }

    let count = |p: Phase| kills.iter().filter(|k| **k == p).count();
    let final_entries = load_session_file(&file).unwrap().entries.len();
    println!(
        "kill -9 loop: {} kills survived (streaming {}, tool execution {}, startup {}, between {}); \
         {finished} runs finished normally; {torn_injected} torn lines injected, {} torn lines \
         in all; {} observations, {} entries checked; final file: {final_entries} entries, {} bytes; \
         {} requests checked for unanswered tool calls",
        kills.len(),
        count(Phase::Streaming),
        count(Phase::Tool),
        count(Phase::Startup),
        count(Phase::Between),
        observed.torn.len(),
        observed.observations,
        observed.entries_checked,
        observed.bytes.len(),
        requests.len(),
    );
    assert!(
        count(Phase::Streaming) > 0 && count(Phase::Tool) > 0,
        "{kills:?}"
    );
}

/// The same through the language server: `tandem lsp` is killed while it streams, ten times,
/// each new server reopening the same file with `tandem/sessions/open`.
#[test]
fn kill_9_of_the_language_server_mid_run_keeps_the_session_file() -> anyhow::Result<()> {
    const LSP_KILLS: usize = 10;
    let sandbox = Sandbox::with_quick_retries();
    let slow = "An answer streamed slowly enough to be cut off by a crash. ".repeat(4);
    sandbox.enqueue(
        wire::response(WireApi::OpenAiCompletions, &Turn::text(slow))
            .with_chunk(32)
            .with_chunk_delay(Duration::from_millis(3)),
    );
    sandbox.mock.set_cycle(true);
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    let session = prompt(&mut lsp, json!({"text": "first"}))?;
    lsp.wait_settled(&session, 1)?;
    let file = session_file(&mut lsp, &session)?;
    lsp.shutdown()?;
    let mut observed = Observed {
        bytes: Vec::new(),
        torn: BTreeSet::new(),
        entries_checked: 0,
        observations: 0,
    };
    observed.check(&file, "after the first run");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for kill in 0..LSP_KILLS {
        let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
        let r = lsp.request("tandem/sessions/open", json!({"path": file}))?;
        let session = r["session"].clone();
        assert!(session.is_string(), "{r}");
        lsp.request(
            "tandem/prompt",
            json!({"session": session, "text": format!("kill {kill}")}),
        )?;
        let deltas = 1 + rng.below(3);
        for _ in 0..deltas {
            lsp.wait_for("a text_delta", |m| {
                m.params["session"] == session && event_type(&m.params) == "text_delta"
            })?;
        }
        lsp.kill()?;
        assert_no_panic(&stderr_of(&lsp));
        observed.check(&file, &format!("language server kill {kill}"));
    }
    println!(
        "kill -9 of tandem lsp: {LSP_KILLS} kills survived; {} observations, {} entries checked",
        observed.observations, observed.entries_checked
    );
    Ok(())
}
