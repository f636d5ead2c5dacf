//! Resuming a large session file (issue 29): `tandem --session big.jsonl -p …` on a 120,000-entry
//! file of about 50 MB, compacted every 1000 entries like a long-lived session. The model is
//! shown the latest compaction's part only, so the process must not hold the file in memory:
//! it used to peak at six times the file's size (4.9 GB for a 331 MB file of a million
//! entries); the bound asserted is twice the file, generous for an index of the entries plus
//! the context. The peak is the child's own `ru_maxrss`, read by `wait4` (exact, no sampling);
//! no timing is asserted.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tandem_tests::wire::Turn;

use crate::support::process::{assert_no_panic, in_sandbox};
use crate::support::Sandbox;

const ENTRIES: usize = 120_020;
const COMPACT_EVERY: usize = 1000;
/// Entries a compaction keeps before it.
const KEPT: usize = 50;
/// A hang guard for the debug build, never a timing assertion.
const GUARD: Duration = Duration::from_secs(180);

/// Writes the session; returns the id of its last entry.
fn write_big_session(path: &Path, cwd: &Path) -> String {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    writeln!(
        out,
        r#"{{"type":"session","version":3,"id":"0199a000-0000-7000-8000-00000000b16e","timestamp":"2026-11-30T07:13:25.974Z","cwd":{}}}"#,
        Value::from(cwd.to_string_lossy())
    )
    .expect("write");
    let filler = "lorem ipsum dolor sit amet ".repeat(4);
    for i in 1..=ENTRIES {
        let id = format!("{i:08x}");
        let parent = match i {
            1 => "null".to_string(),
            _ => format!("\"{:08x}\"", i - 1),
        };
        let head =
            format!(r#""id":"{id}","parentId":{parent},"timestamp":"2026-11-30T07:13:25.974Z""#);
        if i == 1 {
            writeln!(
                out,
                r#"{{"type":"model_change",{head},"provider":"mock","modelId":"mock-model"}}"#
            )
            .expect("write");
            continue;
        }
        if i % COMPACT_EVERY == 0 {
            writeln!(
                out,
                r#"{{"type":"compaction",{head},"summary":"Summary number {i}: the parser accepts trailing commas.","firstKeptEntryId":"{:08x}","tokensBefore":150000}}"#,
                i - KEPT
            )
            .expect("write");
            continue;
        }
        let line = match i % 4 {
            0 => format!(
                r#"{{"type":"message",{head},"message":{{"role":"user","content":[{{"type":"text","text":"prompt {i}: {filler}"}}],"timestamp":{i}}}}}"#
            ),
            1 | 2 => format!(
                r#"{{"type":"message",{head},"message":{{"role":"assistant","content":[{{"type":"text","text":"answer {i}: {filler}"}},{{"type":"toolCall","id":"call_{i}","name":"read","arguments":{{"path":"src/module_{i}.rs"}}}}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{{"input":1200,"output":40,"cacheRead":0,"cacheWrite":0,"totalTokens":1240,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"toolUse","timestamp":{i},"responseId":"chatcmpl-{i:012x}"}}}}"#
            ),
            _ => format!(
                r#"{{"type":"message",{head},"message":{{"role":"toolResult","toolCallId":"call_{}","toolName":"read","content":[{{"type":"text","text":"fn parse_{i}(input: &str) -> Result<Ast, Error> {{\n    todo!()\n}}\n"}}],"isError":false,"timestamp":{i}}}}}"#,
                i - 1
            ),
        };
        writeln!(out, "{line}").expect("write");
    }
    out.flush().expect("flush");
    format!("{ENTRIES:08x}")
}

/// Waits for `pid` and returns its exit code and peak resident set in bytes (`ru_maxrss`).
fn wait_with_peak(child: &mut std::process::Child) -> (i32, u64) {
    let pid = child.id() as libc::pid_t;
    let deadline = Instant::now() + GUARD;
    loop {
        let mut status = 0;
        // SAFETY: `rusage` is a plain C struct that wait4 fills in; all-zero is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own unreaped child; `status` and `usage` are valid for writes.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(got >= 0, "wait4: {}", std::io::Error::last_os_error());
        if got == pid {
            assert!(
                libc::WIFEXITED(status),
                "tandem did not exit normally: {status}"
            );
            // Linux reports kilobytes.
            return (libc::WEXITSTATUS(status), usage.ru_maxrss as u64 * 1024);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("tandem did not exit within {GUARD:?} (hung)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn resuming_a_120k_entry_session_peaks_below_twice_the_file_size() {
    let sandbox = Sandbox::new(tandem_tests::wire::WireApi::OpenAiCompletions);
    let path = sandbox.home.join("big.jsonl");
    let last = write_big_session(&path, &sandbox.cwd);
    let before = std::fs::read(&path).expect("session bytes");
    let file_size = before.len() as u64;
    assert!(file_size > 40 << 20, "{file_size} bytes");

    sandbox.answer(&Turn::text("Resumed."));
    let mut child = in_sandbox(
        &sandbox,
        &[
            "--model",
            "mock/mock-model",
            "--session",
            &path.to_string_lossy(),
            "-p",
            "What next?",
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawns tandem");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let (code, peak) = wait_with_peak(&mut child);
    let (stdout, stderr) = (
        stdout.join().expect("stdout"),
        stderr.join().expect("stderr"),
    );
    println!(
        "session file {:.1} MiB, {ENTRIES} entries; peak RSS {:.1} MiB ({:.2}× the file)",
        file_size as f64 / 1048576.0,
        peak as f64 / 1048576.0,
        peak as f64 / file_size as f64
    );
    assert_no_panic(&stderr);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(stdout, "Resumed.\n");
    assert!(
        peak < 2 * file_size,
        "peak RSS {peak} bytes is not below twice the session file ({file_size} bytes)"
    );

    // The model was shown the latest compaction, what it kept and what followed; nothing older.
    let requests = sandbox.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].body_text();
    assert!(body.contains("Summary number 120000"), "the latest summary");
    assert!(body.contains("prompt 119952:"), "a kept prompt");
    assert!(!body.contains("Summary number 119000"), "an older summary");
    assert!(!body.contains("prompt 100:"), "an old prompt");

    // The file grew by the new turn only, chained to its last entry.
    let after = std::fs::read(&path).expect("session bytes");
    assert!(after.starts_with(&before), "nothing was rewritten");
    let added: Vec<Value> = std::str::from_utf8(&after[before.len()..])
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("an entry line"))
        .collect();
    assert!(!added.is_empty());
    assert_eq!(added[0]["parentId"], Value::from(last));
    for pair in added.windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"]);
    }
    let roles: Vec<&str> = added
        .iter()
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(roles[roles.len() - 2..], ["user", "assistant"]);
    assert_eq!(
        added.last().expect("answer")["message"]["content"][0]["text"],
        "Resumed."
    );
}
