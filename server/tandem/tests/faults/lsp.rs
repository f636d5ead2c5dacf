//! Faults through `tandem lsp`: the provider's (the mock LLM's) and the client's own (it never
//! answers `workspace/applyEdit` or `window/showMessageRequest`, names documents and sessions
//! that do not exist, closes stdin in the middle of a run). Each run ends with `settled` (and an
//! `error` event when it failed for good), the server keeps answering, nothing panics, and the
//! session files load with every entry.

use std::process::ExitStatus;

use serde_json::{json, Value};
use tandem_tests::lsp_client::{event_type, ClientError, LspClient};
use tandem_tests::wire::Turn;

use super::harness::{check_first_turn_saved, check_session, enqueue_fixture, enqueue_slow};
use crate::support::lsp::{prompt, sandbox_lsp, session_file, state, stderr_of};
use crate::support::process::{assert_no_panic, HANG_GUARD};
use crate::support::Sandbox;

/// Waits until `session` has settled `runs` times; all its events (the `event` objects) then.
fn settled(lsp: &mut LspClient, session: &str, runs: usize) -> Result<Vec<Value>, ClientError> {
    let events = lsp.wait_settled(session, runs)?;
    Ok(events.into_iter().map(|p| p["event"].clone()).collect())
}

/// Starts a run in a new session; the session.
fn start_run(lsp: &mut LspClient, text: &str) -> Result<String, ClientError> {
    prompt(lsp, json!({"text": text}))
}

/// Waits for a text delta of `session`'s answer, then closes stdin (the editor goes away) and
/// waits for the server to exit, which it must do without a panic; its status and stderr.
fn close_mid_answer(
    lsp: &mut LspClient,
    session: &str,
) -> Result<(ExitStatus, String), ClientError> {
    lsp.wait_for("a text_delta", |m| {
        m.params["session"] == session && event_type(&m.params) == "text_delta"
    })?;
    lsp.close_input();
    let status = lsp.wait_exit(HANG_GUARD)?;
    let stderr = stderr_of(lsp);
    assert_no_panic(&stderr);
    Ok((status, stderr))
}

/// The events' `type`s.
fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect()
}

/// The `message` of the run's `error` event, if any.
fn error_message(events: &[Value]) -> Option<String> {
    events
        .iter()
        .find(|e| e["type"] == "error")
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
}

/// The `stopReason`s of the assistant `message_end`s.
fn stop_reasons(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .map(|e| {
            e["message"]["stopReason"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn provider_faults_end_each_run_with_an_error_event_or_a_retry() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;

    // A cut mid-stream is retried, and the retry answers.
    enqueue_fixture(&sandbox, "cut-mid-stream.sse");
    sandbox.answer(&Turn::text("Recovered."));
    let cut = start_run(&mut lsp, "cut")?;
    let events = settled(&mut lsp, &cut, 1)?;
    assert_eq!(error_message(&events), None, "{events:#?}");
    assert_eq!(stop_reasons(&events), ["error", "stop"]);
    let retry_end = events
        .iter()
        .find(|e| e["type"] == "retry_end")
        .expect("retry_end");
    assert_eq!(retry_end["success"], true);

    // A 429 with retry-after: the retry waits as told (baseDelayMs is 5), then answers.
    enqueue_fixture(&sandbox, "rate-limit-retry-after.sse");
    sandbox.answer(&Turn::text("After the wait."));
    let limited = start_run(&mut lsp, "rate limited")?;
    let events = settled(&mut lsp, &limited, 1)?;
    assert_eq!(error_message(&events), None, "{events:#?}");
    let start = events
        .iter()
        .find(|e| e["type"] == "retry_start")
        .expect("retry_start");
    assert_eq!(start["delayMs"], 1000, "{start}");
    assert_eq!(stop_reasons(&events), ["error", "stop"]);

    // 500s until the retries run out: an `error` event, then `settled`.
    for _ in 0..3 {
        enqueue_fixture(&sandbox, "server-error.sse");
    }
    let failing = start_run(&mut lsp, "fail")?;
    let events = settled(&mut lsp, &failing, 1)?;
    let message = error_message(&events).expect("an error event");
    assert!(message.contains("HTTP 500"), "{message}");
    let t = types(&events);
    let error_at = t.iter().position(|x| *x == "error").unwrap();
    assert_eq!(t.last(), Some(&"settled"));
    assert!(error_at < t.len() - 1, "error before settled: {t:?}");
    assert_eq!(stop_reasons(&events), ["error", "error", "error"]);

    // Garbage: not SSE at all, and invalid JSON in a data line (neither is retried).
    for (name, expected) in [
        (
            "not-sse.sse",
            "ended the stream before the response was complete",
        ),
        ("bad-json-data.sse", "Malformed response from mock"),
    ] {
        enqueue_fixture(&sandbox, name);
        let session = start_run(&mut lsp, name)?;
        let events = settled(&mut lsp, &session, 1)?;
        let message = error_message(&events).unwrap_or_else(|| panic!("{name}: no error event"));
        assert!(message.contains(expected), "{name}: {message}");
        assert_eq!(stop_reasons(&events), ["error"], "{name}");
        let file = session_file(&mut lsp, &session)?;
        let checked = check_session(&file);
        assert_eq!(checked.stop_reasons(), ["error"], "{name}");
    }

    for session in [&cut, &limited] {
        let file = session_file(&mut lsp, session)?;
        assert_eq!(check_session(&file).stop_reasons(), ["error", "stop"]);
    }
    let file = session_file(&mut lsp, &failing)?;
    assert_eq!(
        check_session(&file).stop_reasons(),
        ["error", "error", "error"]
    );
    let status = lsp.shutdown()?;
    assert_no_panic(&stderr_of(&lsp));
    assert_eq!(status.code(), Some(0));
    Ok(())
}

/// The idle timeout cannot be shortened (see provider.rs); `tandem/abort` ends a stalled call.
#[test]
fn a_stalled_provider_is_aborted_and_the_partial_answer_kept() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    sandbox.answer(&Turn::text("First answer."));
    let session = start_run(&mut lsp, "first")?;
    settled(&mut lsp, &session, 1)?;

    enqueue_fixture(&sandbox, "stall.sse");
    lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "second"}),
    )?;
    let s = session.clone();
    lsp.wait_for("the text before the stall", |m| {
        m.params["session"] == s
            && event_type(&m.params) == "text_delta"
            && m.params["event"]["delta"]
                .as_str()
                .is_some_and(|d| d.contains("Thinking"))
    })?;
    let state = state(&mut lsp, &session)?;
    assert_eq!(state["running"], true, "{state}");
    lsp.request("tandem/abort", json!({"session": session}))?;
    let events = settled(&mut lsp, &session, 2)?;
    assert_eq!(stop_reasons(&events), ["stop", "aborted"]);
    let file = session_file(&mut lsp, &session)?;
    let checked = check_session(&file);
    assert_eq!(checked.stop_reasons(), ["stop", "aborted"]);
    let last = checked.message(checked.kinds.len() - 1);
    assert_eq!(last["content"][0]["text"], "Thinking about it", "{last}");
    lsp.shutdown()?;
    assert_no_panic(&stderr_of(&lsp));
    Ok(())
}

#[test]
fn an_unanswered_apply_edit_fails_the_tool_after_edit_timeout_ms() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    sandbox.write("hello.txt", "hello world\n");
    let mut lsp = sandbox_lsp(&sandbox, json!({"editMode": "auto", "editTimeoutMs": 200}))?;
    sandbox.answer(&Turn::tool_call(
        "call_edit",
        "edit",
        json!({"path": "hello.txt", "edits": [{"oldText": "world", "newText": "there"}]}),
    ));
    sandbox.answer(&Turn::text("The editor did not answer."));
    let session = start_run(&mut lsp, "edit it")?;
    let _never_answered = lsp.server_request("workspace/applyEdit")?;
    let events = settled(&mut lsp, &session, 1)?;
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_end")
        .expect("tool_end");
    assert_eq!(end["isError"], true, "{end}");
    assert!(
        end["text"].as_str().is_some_and(|t| t
            .contains("the editor did not answer workspace/applyEdit within 1 s")
            && t.contains("do not repeat the change")),
        "{end}"
    );
    assert_eq!(stop_reasons(&events), ["toolUse", "stop"]);
    assert_eq!(sandbox.read("hello.txt"), "hello world\n", "untouched");
    // The model saw the failure in its next call.
    let requests = sandbox.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body_text().contains("did not answer"));
    let checked = check_session(&session_file(&mut lsp, &session)?);
    assert_eq!(
        checked.kinds[2..],
        [
            "message:system",
            "message:user",
            "message:assistant",
            "message:toolResult",
            "message:assistant"
        ]
    );
    assert_eq!(checked.message(5)["isError"], true);
    lsp.shutdown()?;
    assert_no_panic(&stderr_of(&lsp));
    Ok(())
}

/// In confirm mode without change annotations the server asks with `showMessageRequest`
/// before an edit, and `bashPermission: ask` asks before a command; a client that never
/// answers costs each tool `editTimeoutMs`, then the tool fails and the run goes on.
#[test]
fn unanswered_show_message_requests_fail_the_edit_and_the_command() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    sandbox.write("hello.txt", "hello world\n");
    let mut lsp = sandbox_lsp(
        &sandbox,
        json!({"editMode": "confirm", "bashPermission": "ask", "editTimeoutMs": 200}),
    )?;
    sandbox.answer(&Turn::tool_call(
        "call_edit",
        "edit",
        json!({"path": "hello.txt", "edits": [{"oldText": "world", "newText": "there"}]}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_bash",
        "bash",
        json!({"command": "touch ran.txt"}),
    ));
    sandbox.answer(&Turn::text("Nobody answered."));
    let session = start_run(&mut lsp, "edit, then run")?;
    let ask_edit = lsp.server_request("window/showMessageRequest")?;
    assert!(
        ask_edit.params["message"]
            .as_str()
            .is_some_and(|m| m.contains("hello.txt")),
        "{ask_edit}"
    );
    let ask_bash = lsp.server_request("window/showMessageRequest")?;
    assert!(
        ask_bash.params["message"]
            .as_str()
            .is_some_and(|m| m.contains("touch ran.txt")),
        "{ask_bash}"
    );
    let events = settled(&mut lsp, &session, 1)?;
    let ends: Vec<&Value> = events.iter().filter(|e| e["type"] == "tool_end").collect();
    assert_eq!(ends.len(), 2, "{events:#?}");
    for end in &ends {
        assert_eq!(end["isError"], true, "{end}");
        assert!(
            end["text"]
                .as_str()
                .is_some_and(|t| t.contains("did not answer within 1 s")),
            "{end}"
        );
    }
    assert_eq!(sandbox.read("hello.txt"), "hello world\n", "untouched");
    assert!(
        !sandbox.cwd.join("ran.txt").exists(),
        "the command did not run"
    );
    assert!(lsp
        .log()
        .iter()
        .all(|m| m["method"] != "workspace/applyEdit"));
    let checked = check_session(&session_file(&mut lsp, &session)?);
    assert_eq!(checked.stop_reasons(), ["toolUse", "toolUse", "stop"]);
    lsp.shutdown()?;
    assert_no_panic(&stderr_of(&lsp));
    Ok(())
}

#[test]
fn unknown_sessions_and_documents_are_errors_naming_them() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    let ghost = "no-such-session";
    for method in [
        "tandem/prompt",
        "tandem/abort",
        "tandem/state",
        "tandem/sessions/fork",
        "tandem/models/set",
        "tandem/thinking/set",
        "tandem/compact",
    ] {
        let r = lsp.request_response(
            method,
            json!({"session": ghost, "text": "x", "provider": "mock", "id": "mock-model",
                   "level": "off"}),
        )?;
        assert_eq!(r["error"]["code"], -32001, "{method}: {r}");
        assert_eq!(r["error"]["data"]["session"], ghost, "{method}: {r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(ghost)),
            "{method}: {r}"
        );
    }
    let r = lsp.request_response(
        "tandem/sessions/open",
        json!({"path": "/no/such/session.jsonl"}),
    )?;
    assert_eq!(r["error"]["code"], -32005, "{r}");
    assert_eq!(r["error"]["data"]["path"], "/no/such/session.jsonl", "{r}");

    // A document that is neither open nor on disk.
    let uri = format!("file://{}/nope.rs", sandbox.cwd.display());
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}});
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "x"}]}),
    )?;
    let r = lsp.request_response(
        "tandem/prompt",
        json!({"text": "why?", "context": {"uri": uri, "selection": range}}),
    )?;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "context.uri", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&uri)),
        "{r}"
    );
    for command in ["tandem.explain", "tandem.fixDiagnostic"] {
        let r = lsp.request_response(
            "workspace/executeCommand",
            json!({"command": command, "arguments": [{"uri": uri, "range": range,
                   "message": "broken"}]}),
        )?;
        assert_eq!(r["error"]["code"], -32602, "{command}: {r}");
        assert_eq!(
            r["error"]["data"]["field"], "arguments[0].uri",
            "{command}: {r}"
        );
        assert!(
            r["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(&uri)),
            "{command}: {r}"
        );
    }
    // Code actions are listed from the request alone (the document is not needed for that);
    // running one for a document that is neither open nor on disk is the same -32602.
    let r = lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
    )?;
    let action = &r[0]["command"];
    assert_eq!(action["command"], "tandem.explain", "{r}");
    let r = lsp.request_response("workspace/executeCommand", action.clone())?;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "arguments[0].uri", "{r}");
    // None of it started a run or a session.
    assert!(sandbox.requests().is_empty());
    assert!(lsp.log().iter().all(|m| m["method"] != "tandem/event"));
    // The ignored didChange is logged, naming the document.
    let status = lsp.shutdown()?;
    assert_eq!(status.code(), Some(0));
    let stderr = stderr_of(&lsp);
    assert_no_panic(&stderr);
    assert!(
        stderr.contains(&format!("document {uri} is not open")),
        "{stderr}"
    );
    Ok(())
}

#[test]
fn closing_stdin_mid_run_ends_the_server_and_keeps_the_session_file() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    sandbox.answer(&Turn::text("A first, complete answer."));
    let session = start_run(&mut lsp, "first")?;
    // Taken, so that the text_delta waited for below is the second run's.
    lsp.next_run(&session)?;
    let file = session_file(&mut lsp, &session)?;
    let before = std::fs::read(&file).unwrap();

    let slow = "a slow answer that is still streaming when the editor goes away ".repeat(20);
    enqueue_slow(&sandbox, &slow);
    lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "second"}),
    )?;
    let (status, _) = close_mid_answer(&mut lsp, &session)?;
    assert!(status.code().is_some(), "exited, not killed: {status:?}");

    let after = std::fs::read(&file).unwrap();
    assert!(after.starts_with(&before), "the file was only appended to");
    let checked = check_session(&file);
    // The first run, then at least the second prompt.
    assert_eq!(
        checked.kinds[..6],
        [
            "model_change",
            "thinking_level_change",
            "message:system",
            "message:user",
            "message:assistant",
            "message:user"
        ]
    );
    Ok(())
}

/// Issue 16, part 7: pi writes a session's file at its first answer, so a client gone during the
/// first turn used to cost the prompt and the partial answer. Now the run is aborted and both
/// are saved before the server exits.
#[test]
fn closing_stdin_in_a_new_sessions_first_turn_saves_the_prompt_and_the_partial_answer(
) -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    let slow = "the first answer, still streaming when the editor goes away ".repeat(60);
    enqueue_slow(&sandbox, &slow);
    let session = start_run(&mut lsp, "my first prompt")?;
    let (status, stderr) = close_mid_answer(&mut lsp, &session)?;
    // Gone without `shutdown`: status 1 (protocol-ext/README.md, "shutdown and exit").
    assert_eq!(status.code(), Some(1), "{stderr}");

    check_first_turn_saved(&sandbox.only_session(), "my first prompt", &slow);
    Ok(())
}
