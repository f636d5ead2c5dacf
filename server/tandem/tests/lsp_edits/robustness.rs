//! A server that keeps going: floods of didChange while a request is pending, a client that
//! never answers, concurrent sessions, steering mid-stream, clients without the event opt-in,
//! and exit during a run.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::harness::*;

/// Applies "insert `text` at column 0 of `line`" to `lines`, as the client does.
fn insert_at_start(lines: &mut [String], line: usize, text: &str) {
    lines[line].insert_str(0, text);
}

#[test]
fn did_change_floods_are_processed_while_an_apply_edit_is_pending() -> anyhow::Result<()> {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "edit", "arguments":
            {"path": "e.rs", "edits": [{"oldText": "a", "newText": "b"}]}}]},
        {"text": "Edited."},
        {"text": "Seen."}]});
    let mut lsp = started(&script, PLAIN, json!({"editMode": "auto"}))?;
    let edited = open(&mut lsp, "e.rs", 1, "a\n")?;
    let letters = "abcdefghij";
    let initial: String = letters.chars().map(|c| format!("{c}\n")).collect();
    let other = open(&mut lsp, "other.rs", 1, &initial)?;
    let session = prompt(&mut lsp, json!({"text": "edit e.rs"}))?;
    let apply = lsp.server_request("workspace/applyEdit")?;

    let mut lines: Vec<String> = letters.chars().map(String::from).collect();
    for i in 0..200 {
        let line = i % 10;
        let text = format!("{i},");
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": other, "version": i + 2}, "contentChanges": [
                {"range": {"start": {"line": line, "character": 0},
                           "end": {"line": line, "character": 0}}, "text": text}]}),
        )?;
        insert_at_start(&mut lines, line, &text);
    }
    // Requests are still served while the edit waits for its answer.
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(state["running"], true, "{state}");
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": edited, "version": 2}, "contentChanges": [{"text": "b\n"}]}),
    )?;
    lsp.reply(&apply, json!({"applied": true}))?;
    let events = lsp.next_run(&session)?;
    assert_eq!(tool_end(&events, "edit")["event"]["isError"], false);

    // The server's copy of the flooded document is the client's.
    let r = lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "look", "context": {"uri": other, "selection":
            {"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}}}}),
    )?;
    assert_eq!(r["queued"], false, "{r}");
    let events = lsp.next_run(&session)?;
    let user = events
        .iter()
        .find(|e| event_type(e) == "message_start" && e["event"]["role"] == "user")
        .expect("user message_start");
    assert_eq!(user["event"]["text"], "look");
    let (_, text) = crate::support::lsp::prompt_and_context(&mut lsp, &json!(session))?;
    for line in &lines {
        assert!(text.contains(line.as_str()), "{line:?} not in {text}");
    }
    assert!(text.contains("190,180,170,"), "{text}");
    assert_eq!(answer_text(&events), "Seen.");
    Ok(())
}

/// The server's timeout for `workspace/applyEdit` is a constant (`DEFAULT_CLIENT_TIMEOUT`,
/// 120 s) with no configuration key, so a client that never answers cannot be tested to the
/// timeout in reasonable time. This checks what can be: the server stays responsive, and an
/// abort ends the run while the request is still unanswered.
#[test]
fn a_client_that_never_answers_apply_edit_does_not_stall_the_server() -> anyhow::Result<()> {
    let mut lsp = started(
        &edit_script("f.rs", "x", "y", "unreached"),
        PLAIN,
        json!({"editMode": "auto"}),
    )?;
    open(&mut lsp, "f.rs", 1, "x\n")?;
    let session = prompt(&mut lsp, json!({"text": "edit"}))?;
    let _never_answered = lsp.server_request("workspace/applyEdit")?;
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(state["running"], true, "{state}");
    let other = lsp.request("tandem/sessions/new", json!({}))?;
    assert!(other["session"].is_string(), "{other}");

    let started = Instant::now();
    lsp.request("tandem/abort", json!({"session": session}))?;
    let events = lsp.next_run(&session)?;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "abort took {:?} with an applyEdit pending",
        started.elapsed()
    );
    assert_eq!(event_type(events.last().unwrap()), "settled");
    Ok(())
}

/// The timeout itself, shortened with `editTimeoutMs`.
#[test]
fn an_unanswered_apply_edit_times_out_as_a_tool_error() -> anyhow::Result<()> {
    let mut lsp = started(
        &edit_script("g.rs", "x", "y", "Gave up."),
        PLAIN,
        json!({"editMode": "auto", "editTimeoutMs": 500}),
    )?;
    open(&mut lsp, "g.rs", 1, "x\n")?;
    let session = prompt(&mut lsp, json!({"text": "edit"}))?;
    let _never_answered = lsp.server_request("workspace/applyEdit")?;
    let end = lsp.wait_for("the timeout's tool_end", |m| {
        event_type(&m.params) == "tool_end"
    })?;
    assert_eq!(end.params["event"]["isError"], true, "{end}");
    let events = lsp.next_run(&session)?;
    assert_eq!(answer_text(&events), "Gave up.");
    Ok(())
}

#[test]
fn two_sessions_stream_independently_at_once() -> anyhow::Result<()> {
    let script = json!({"chunkSize": 2, "delayMs": 15,
        "turns": [{"text": "an answer streamed slowly enough to overlap"}]});
    let mut lsp = started(&script, PLAIN, json!({}))?;
    let a = new_session(&mut lsp)?;
    let b = new_session(&mut lsp)?;
    assert_ne!(a, b);
    prompt(&mut lsp, json!({"session": a, "text": "first"}))?;
    prompt(&mut lsp, json!({"session": b, "text": "second"}))?;
    let events_a = lsp.next_run(&a)?;
    let events_b = lsp.next_run(&b)?;
    for (events, prompt_text) in [(&events_a, "first"), (&events_b, "second")] {
        assert_contiguous(events);
        assert_eq!(event_type(&events[0]), "agent_start");
        assert_eq!(event_type(events.last().unwrap()), "settled");
        let user = events
            .iter()
            .find(|e| event_type(e) == "message_start" && e["event"]["role"] == "user")
            .unwrap();
        assert_eq!(user["event"]["text"], prompt_text);
        let text: String = events
            .iter()
            .filter(|e| event_type(e) == "text_delta")
            .map(|e| e["event"]["delta"].as_str().unwrap())
            .collect();
        assert_eq!(text, "an answer streamed slowly enough to overlap");
    }
    // They ran at once: b started before a settled.
    let position = |session: &str, kind: &str| {
        lsp.log()
            .iter()
            .position(|m| m["params"]["session"] == session && event_type(&m["params"]) == kind)
            .unwrap()
    };
    assert!(position(&b, "agent_start") < position(&a, "settled"));
    Ok(())
}

#[test]
fn a_prompt_while_streaming_steers_before_the_next_model_call() -> anyhow::Result<()> {
    let script = json!({"turns": [
        {"text": "a slow answer that streams for a while", "chunkSize": 1, "delayMs": 20},
        {"text": "Steered."}]});
    let mut lsp = started(&script, PLAIN, json!({}))?;
    let session = prompt(&mut lsp, json!({"text": "start"}))?;
    lsp.wait_for("the first text_delta", |m| {
        event_type(&m.params) == "text_delta"
    })?;
    let r = lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "focus on tests"}),
    )?;
    assert_eq!(r, json!({"session": session, "queued": true}), "{r}");
    let events = lsp.next_run(&session)?;
    let at = |pred: &dyn Fn(&Value) -> bool| events.iter().position(pred);
    let queued = at(&|e| {
        event_type(e) == "queue_update" && e["event"]["steering"] == json!(["focus on tests"])
    })
    .expect("queue_update with the steering message");
    let first_answer_end =
        at(&|e| event_type(e) == "message_end" && e["event"]["message"]["role"] == "assistant")
            .unwrap();
    let steer = at(&|e| {
        event_type(e) == "message_start"
            && e["event"]["role"] == "user"
            && e["event"]["text"] == "focus on tests"
    })
    .expect("the steering message as a user message_start");
    let second_answer = events
        .iter()
        .rposition(|e| event_type(e) == "message_start" && e["event"]["role"] == "assistant")
        .unwrap();
    assert!(queued < steer && first_answer_end < steer && steer < second_answer);
    assert_eq!(answer_text(&events), "Steered.");
    assert_eq!(
        events
            .iter()
            .filter(|e| event_type(e) == "message_start" && e["event"]["role"] == "assistant")
            .count(),
        2
    );
    Ok(())
}

#[test]
fn a_client_without_the_opt_in_gets_no_events() -> anyhow::Result<()> {
    let client = Client {
        events: false,
        ..PLAIN
    };
    let mut lsp = started(&json!({"turns": [{"text": "quiet"}]}), client, json!({}))?;
    let session = prompt(&mut lsp, json!({"text": "hi"}))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let state = lsp.request("tandem/state", json!({"session": session}))?;
        // The recorded prompt and tools (a `system` message), the question, the answer.
        if state["running"] == false && state["messageCount"] == 3 {
            break;
        }
        assert!(Instant::now() < deadline, "the run did not finish: {state}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lsp.received("tandem/event").is_empty(), "{:?}", lsp.log());
    Ok(())
}

#[test]
fn shutdown_and_exit_mid_run_exit_with_code_zero() -> anyhow::Result<()> {
    let slow = json!({"chunkSize": 1, "delayMs": 100, "turns": [{"text": "a very slow answer"}]});
    let mut lsp = started(&slow, PLAIN, json!({}))?;
    prompt(&mut lsp, json!({"text": "go"}))?;
    lsp.wait_for("a text_delta", |m| event_type(&m.params) == "text_delta")?;
    let started = Instant::now();
    lsp.request("shutdown", Value::Null)?;
    lsp.notify("exit", Value::Null)?;
    let status = lsp
        .wait_exit(Duration::from_secs(3))
        .expect("the server did not exit within 3 s");
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    Ok(())
}
