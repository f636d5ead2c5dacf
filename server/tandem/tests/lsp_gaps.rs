//! Gaps in `tandem lsp` closed after the first version: `tandem/sessions/fork` at an `entryId`,
//! `tokens` in `tandem/state`, and the `error` event of a run that fails. The real binary over
//! stdio, with the scripted model (`support::lsp::ScriptedLsp`).

mod support;

use serde_json::{json, Value};
use support::lsp::{new_session, prompt, state, ScriptedLsp};

/// A started, initialized server with one session that has run `text` to `settled`; returns
/// the server, the session id and the run's events.
fn after_one_run(script: Value, text: &str) -> anyhow::Result<(ScriptedLsp, String, Vec<Value>)> {
    let mut lsp = ScriptedLsp::started(&script)?;
    let session = prompt(&mut lsp, json!({"text": text}))?;
    let events = lsp.next_run(&session)?;
    Ok((lsp, session, events))
}

/// The JSON lines of a session file: the header, then the entries.
fn file_lines(path: &Value) -> Vec<Value> {
    let path = path.as_str().expect("a session file path");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn fork_at_an_entry_ends_the_history_there() -> anyhow::Result<()> {
    let script = json!({"turns": [{"text": "first answer", "usage": {"input": 10, "output": 5}}]});
    let (mut lsp, session, _) = after_one_run(script, "hello there")?;
    let file = state(&mut lsp, &session)?["sessionFile"].clone();
    let lines = file_lines(&file);
    let user = lines
        .iter()
        .find(|l| l["type"] == "message" && l["message"]["role"] == "user")
        .expect("the user message entry");
    let entry_id = user["id"].clone();

    let r = lsp.request(
        "tandem/sessions/fork",
        json!({"session": session, "entryId": entry_id}),
    )?;
    let forked = r["session"].as_str().unwrap_or_default();
    assert!(!forked.is_empty() && forked != session, "{r}");
    let st = state(&mut lsp, forked)?;
    // The recorded prompt and tools (a `system` message) and the question.
    assert_eq!(st["messageCount"], 2, "{st}");
    let fork_lines = file_lines(&st["sessionFile"]);
    assert_eq!(fork_lines[0]["type"], "session");
    assert_eq!(fork_lines[0]["parentSession"], file);
    assert_eq!(fork_lines.last().unwrap()["id"], entry_id);
    // The original is unchanged.
    assert_eq!(file_lines(&file), lines);
    assert_eq!(state(&mut lsp, &session)?["messageCount"], 3);
    Ok(())
}

#[test]
fn fork_at_an_unknown_entry_names_entry_id() -> anyhow::Result<()> {
    let (mut lsp, session, _) = after_one_run(json!({"turns": [{"text": "ok"}]}), "hi")?;
    let r = lsp.request_response(
        "tandem/sessions/fork",
        json!({"session": session, "entryId": "nope1234"}),
    )?;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "entryId", "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("entryId") && message.contains("nope1234"),
        "{message}"
    );
    Ok(())
}

#[test]
fn state_reports_tokens_after_a_model_call() -> anyhow::Result<()> {
    let script = json!({"turns": [{"text": "answer", "usage": {"input": 10, "output": 5}}]});
    let mut lsp = ScriptedLsp::started(&script)?;
    let session = new_session(&mut lsp)?;
    assert!(state(&mut lsp, &session)?.get("tokens").is_none());

    prompt(&mut lsp, json!({"session": session, "text": "hi"}))?;
    lsp.next_run(&session)?;
    let tokens = state(&mut lsp, &session)?["tokens"].clone();
    assert_eq!(tokens["input"], 10, "{tokens}");
    assert_eq!(tokens["output"], 5, "{tokens}");
    assert_eq!(tokens["cacheRead"], 0, "{tokens}");
    assert_eq!(tokens["cacheWrite"], 0, "{tokens}");
    // The last answer's usage (10 + 5) and nothing after it.
    assert_eq!(tokens["contextTokens"], 15, "{tokens}");
    Ok(())
}

#[test]
fn a_failed_turn_sends_error_before_settled() -> anyhow::Result<()> {
    let script = json!({"turns": [{"text": "partial", "error": "invalid request: bad thing"}]});
    let (_lsp, _, events) = after_one_run(script, "go")?;
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap())
        .collect();
    let n = types.len();
    assert_eq!(
        &types[n - 3..],
        ["agent_end", "error", "settled"],
        "{types:?}"
    );
    assert_eq!(types.iter().filter(|t| **t == "error").count(), 1);
    let message = events[n - 2]["event"]["message"].as_str().unwrap();
    assert!(message.contains("invalid request: bad thing"), "{message}");
    let seqs: Vec<u64> = events.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert_eq!(seqs, (1..=n as u64).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn a_successful_turn_sends_no_error() -> anyhow::Result<()> {
    let (_lsp, _, events) = after_one_run(json!({"turns": [{"text": "fine"}]}), "go")?;
    assert!(events.iter().all(|e| e["event"]["type"] != "error"));
    assert_eq!(events.last().unwrap()["event"]["type"], "settled");
    Ok(())
}
