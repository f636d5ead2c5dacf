//! Provider faults in print (`-p`) and JSON (`--mode json`) mode: the mock LLM drops the
//! connection mid-stream, stalls, rate-limits with `retry-after`, fails with 500s until the
//! retries run out, or sends garbage. Each run ends in a clear error (exit 1, the error on
//! stderr or in the JSON events) or recovers (a retry), never panics, and leaves a session file
//! that loads with every entry written before the fault.

use std::io::{BufRead, BufReader};

use serde_json::json;
use tandem_tests::wire::Turn;

use super::harness::{check_session, enqueue_fixture, interrupt, json_lines};
use crate::support::process::{assert_no_panic, command, wait_or_fail, HANG_GUARD};
use crate::support::{type_of, Sandbox, MODEL};

/// The entry kinds every one-prompt session file starts with (the recorded prompt and tools,
/// pi 1.6's `system` message, before the prompt).
const HEAD: [&str; 4] = [
    "model_change",
    "thinking_level_change",
    "message:system",
    "message:user",
];

fn kinds_after_head(kinds: &[String]) -> Vec<&str> {
    assert_eq!(kinds[..4], HEAD, "{kinds:?}");
    kinds[4..].iter().map(String::as_str).collect()
}

#[test]
fn a_connection_cut_mid_stream_is_retried_and_both_attempts_are_kept() {
    let sandbox = Sandbox::with_quick_retries();
    enqueue_fixture(&sandbox, "cut-mid-stream.sse");
    sandbox.answer(&Turn::text("Recovered."));
    let run = sandbox.run(&["--mode", "json", "-p", "hi"]);
    assert_no_panic(&run.stderr);
    run.expect_code(0);
    let lines = json_lines(&run.stdout);
    let retry = lines
        .iter()
        .find(|l| type_of(l) == "auto_retry_start")
        .expect("auto_retry_start");
    assert!(
        retry["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("lost mid-stream")),
        "{retry}"
    );
    assert_eq!(sandbox.requests().len(), 2);
    let session = check_session(&sandbox.only_session());
    assert_eq!(
        kinds_after_head(&session.kinds),
        ["message:assistant", "context_edit", "message:assistant"]
    );
    assert_eq!(session.stop_reasons(), ["error", "stop"]);
    // The failed attempt keeps the text that arrived before the cut.
    let failed = session.message(4);
    assert_eq!(
        failed["content"][0]["text"], "The first half of the answer and more",
        "{failed}"
    );
}

#[test]
fn a_connection_cut_without_retries_is_a_clear_error_in_print_mode() {
    let sandbox = Sandbox::with_quick_retries();
    sandbox.write_settings(json!({"retry": {"enabled": false}}));
    enqueue_fixture(&sandbox, "cut-mid-stream.sse");
    let run = sandbox.run(&["-p", "hi"]);
    assert_no_panic(&run.stderr);
    run.expect_code(1);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("Connection to mock was lost mid-stream"),
        "{}",
        run.stderr
    );
    let session = check_session(&sandbox.only_session());
    assert_eq!(kinds_after_head(&session.kinds), ["message:assistant"]);
    assert_eq!(session.stop_reasons(), ["error"]);
}

/// The idle timeout (`StreamOptions::idle_timeout`, 300 s) has no setting, command-line flag or
/// environment variable, so a stall cannot be run to the timeout through the binary in a test
/// (tandem-tests `providers.rs::a_stalled_stream_times_out` checks the timeout itself on the
/// provider layer, with a short `idle_timeout`). What the binary must do with a stalled
/// provider is let the user out: Ctrl-C (SIGINT) aborts the stalled call, the partial answer is
/// saved as aborted, and the process exits 130 (as a shell reports a process Ctrl-C stopped).
#[test]
fn a_stalled_stream_is_ended_by_ctrl_c_and_the_partial_answer_is_kept() {
    let sandbox = Sandbox::with_quick_retries();
    enqueue_fixture(&sandbox, "stall.sse");
    let mut child = command(
        &sandbox,
        &["--model", MODEL, "--mode", "json", "-p", "hi"],
        "stall.stderr",
    )
    .spawn()
    .expect("spawns tandem");
    drop(child.stdin.take());
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    // Wait until the text before the stall has been streamed.
    let mut seen = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).expect("read stdout") > 0,
            "stdout closed before the partial text: {seen:?}"
        );
        let done = line.contains("text_delta") && line.contains("Thinking about it");
        seen.push(line);
        if done {
            break;
        }
    }
    interrupt(&child);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).expect("read stdout");
    let status = wait_or_fail(&mut child, HANG_GUARD, "tandem after SIGINT");
    let stderr = std::fs::read_to_string(sandbox.home.join("stall.stderr")).unwrap();
    assert_no_panic(&stderr);
    assert_eq!(status.code(), Some(130), "stderr: {stderr}");
    let lines = json_lines(&rest);
    assert_eq!(
        lines.last().map(type_of).as_deref(),
        Some("agent_settled"),
        "{rest}"
    );
    let session = check_session(&sandbox.only_session());
    assert_eq!(kinds_after_head(&session.kinds), ["message:assistant"]);
    assert_eq!(session.stop_reasons(), ["aborted"]);
    assert_eq!(
        session.message(4)["content"][0]["text"],
        "Thinking about it"
    );
}

#[test]
fn a_rate_limit_with_retry_after_waits_as_told_then_recovers() {
    let sandbox = Sandbox::with_quick_retries();
    enqueue_fixture(&sandbox, "rate-limit-retry-after.sse");
    sandbox.answer(&Turn::text("After the wait."));
    let run = sandbox.run(&["--mode", "json", "-p", "hi"]);
    assert_no_panic(&run.stderr);
    run.expect_code(0);
    let lines = json_lines(&run.stdout);
    let start = lines
        .iter()
        .find(|l| type_of(l) == "auto_retry_start")
        .expect("auto_retry_start");
    // baseDelayMs is 5: the 1 s comes from the server's retry-after header.
    assert_eq!(start["delayMs"], 1000, "{start}");
    assert!(
        start["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("429") && m.contains("retry after 1s")),
        "{start}"
    );
    let end = lines
        .iter()
        .find(|l| type_of(l) == "auto_retry_end")
        .expect("auto_retry_end");
    assert_eq!(end["success"], true);
    let session = check_session(&sandbox.only_session());
    assert_eq!(session.stop_reasons(), ["error", "stop"]);
}

#[test]
fn server_errors_until_the_retries_run_out_end_in_a_clear_error() {
    let sandbox = Sandbox::with_quick_retries();
    for _ in 0..3 {
        enqueue_fixture(&sandbox, "server-error.sse");
    }
    let run = sandbox.run(&["--mode", "json", "-p", "hi"]);
    assert_no_panic(&run.stderr);
    run.expect_code(1);
    assert_eq!(sandbox.requests().len(), 3, "the first call and 2 retries");
    let lines = json_lines(&run.stdout);
    let end = lines
        .iter()
        .find(|l| type_of(l) == "auto_retry_end")
        .expect("auto_retry_end");
    assert_eq!(end["success"], false, "{end}");
    assert_eq!(end["attempt"], 2, "{end}");
    assert!(
        end["finalError"]
            .as_str()
            .is_some_and(|e| e.contains("HTTP 500") && e.contains("server had an error")),
        "{end}"
    );
    let session = check_session(&sandbox.only_session());
    assert_eq!(session.stop_reasons(), ["error", "error", "error"]);

    // Print mode says the same on stderr.
    for _ in 0..3 {
        enqueue_fixture(&sandbox, "server-error.sse");
    }
    let file = sandbox.only_session();
    let run = sandbox.run(&["--session", file.to_str().unwrap(), "-p", "again"]);
    assert_no_panic(&run.stderr);
    run.expect_code(1);
    assert!(run.stderr.contains("HTTP 500"), "{}", run.stderr);
    let again = check_session(&file);
    assert_eq!(again.stop_reasons().len(), 6);
}

/// Each kind of garbage, through print mode with retries off: the error, or the answer, and
/// what the session file holds afterwards.
#[test]
fn garbage_from_the_provider_ends_in_a_clear_error_and_a_loadable_session() {
    // (fixture, Ok(answer) or Err(what stderr must say), the saved assistant text)
    let cases: [(&str, Result<&str, &str>, &str); 4] = [
        (
            "not-sse.sse",
            Err("mock ended the stream before the response was complete"),
            "",
        ),
        (
            "bad-json-data.sse",
            Err("Malformed response from mock: event data is not JSON"),
            "Hi",
        ),
        // A truncated UTF-8 sequence inside a data line is replaced (U+FFFD), as a browser's
        // TextDecoder does for pi: the answer survives.
        (
            "truncated-utf8.sse",
            Ok("price: 5\u{FFFD}"),
            "price: 5\u{FFFD}",
        ),
        // The connection drops inside a UTF-8 sequence.
        (
            "truncated-utf8-eof.sse",
            Err("Connection to mock was lost mid-stream"),
            "The total",
        ),
    ];
    for (name, expected, saved) in cases {
        let sandbox = Sandbox::with_quick_retries();
        sandbox.write_settings(json!({"retry": {"enabled": false}}));
        enqueue_fixture(&sandbox, name);
        let run = sandbox.run(&["-p", "hi"]);
        assert_no_panic(&run.stderr);
        match expected {
            Ok(answer) => {
                run.expect_code(0);
                assert_eq!(run.stdout.trim_end(), answer, "{name}");
            }
            Err(message) => {
                run.expect_code(1);
                assert!(run.stderr.contains(message), "{name}: {}", run.stderr);
            }
        }
        let session = check_session(&sandbox.only_session());
        assert_eq!(
            kinds_after_head(&session.kinds),
            ["message:assistant"],
            "{name}"
        );
        let message = session.message(4);
        let text = message["content"]
            .as_array()
            .and_then(|c| c.first())
            .and_then(|b| b["text"].as_str())
            .unwrap_or_default();
        assert_eq!(text, saved, "{name}: {message}");
        assert_eq!(
            message["stopReason"],
            if expected.is_ok() { "stop" } else { "error" },
            "{name}"
        );
    }
}
