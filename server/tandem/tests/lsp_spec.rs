//! The points where protocol-ext/README.md and `tandem lsp` once disagreed, each checked against
//! the real binary as the spec now says (see the spec's changelog): cwd checks, the key check of
//! `tandem/models/set`, cancelled compactions, the configuration pull, `sessionFile`, fork
//! points, `shutdown` after `settled`, the Busy code, a reopened session's model, and the
//! command line of `tandem lsp`.

mod support;

use serde_json::{json, Value};
use support::lsp::{event_client, new_session, prompt, state, ScriptedLsp};
use tandem_tests::lsp_client::{event_type, ClientError};

/// A script whose answers stream one character every `delay_ms`: slow enough to act mid-run.
fn slow(delay_ms: u64, turns: Value) -> Value {
    json!({"chunkSize": 1, "delayMs": delay_ms, "turns": turns})
}

/// Waits until an event of type `kind` has arrived (of any session).
fn wait_for_event(lsp: &mut ScriptedLsp, kind: &str) -> Result<(), ClientError> {
    lsp.wait_until(kind, |client| {
        client
            .seen()
            .iter()
            .any(|m| m.method == "tandem/event" && event_type(&m.params) == kind)
    })
}

fn error_of(r: &Value) -> (i64, String, Value) {
    (
        r["error"]["code"].as_i64().unwrap_or_default(),
        r["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        r["error"]["data"].clone(),
    )
}

#[test]
fn sessions_new_refuses_a_relative_or_missing_cwd_naming_it() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::started(&json!({"turns": []}))?;
    let missing = lsp.project().join("no-such-dir");
    for (cwd, says) in [
        ("project".to_string(), "must be an absolute path"),
        (
            missing.display().to_string(),
            "is not an existing directory",
        ),
    ] {
        let r = lsp.request_response("tandem/sessions/new", json!({"cwd": cwd}))?;
        let (code, message, data) = error_of(&r);
        assert_eq!((code, data), (-32602, json!({"field": "cwd"})), "{r}");
        assert!(
            message.contains(says) && message.contains(&cwd),
            "{message}"
        );
    }
    let r = lsp.request_response("tandem/sessions/list", json!({"cwd": "project"}))?;
    assert_eq!(error_of(&r).0, -32602, "{r}");
    // An existing absolute directory is fine.
    let project = lsp.project().display().to_string();
    let r = lsp.request("tandem/sessions/new", json!({"cwd": project}))?;
    assert!(r["session"].is_string(), "{r}");
    Ok(())
}

#[test]
fn models_set_refuses_a_model_whose_provider_has_no_key() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::started(&json!({"turns": []}))?;
    // A second provider whose key command fails: no usable key.
    let models_json = lsp.dir().join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&models_json)?)?;
    models["providers"]["keyless"] = json!({"api": "openai-completions",
        "apiKey": "!exit 3",
        "baseUrl": "http://127.0.0.1:9/v1", "models": [{"id": "m"}]});
    std::fs::write(&models_json, models.to_string())?;
    let session = new_session(&mut lsp)?;
    let r = lsp.request_response(
        "tandem/models/set",
        json!({"session": session, "provider": "keyless", "id": "m"}),
    )?;
    let (code, message, _) = error_of(&r);
    assert_eq!(code, -32003, "{r}");
    assert!(message.contains("keyless"), "{message}");
    assert_eq!(state(&mut lsp, &session)?["model"]["id"], "t");
    // A model with a key is set.
    let r = lsp.request(
        "tandem/models/set",
        json!({"session": session, "provider": "script", "id": "u"}),
    )?;
    assert_eq!(r["id"], "u", "{r}");
    Ok(())
}

/// A session with two runs of history, compaction keeping almost nothing verbatim, and a
/// summary call that streams slowly.
fn ready_to_compact() -> anyhow::Result<(ScriptedLsp, String)> {
    let long_summary = "a summary that streams one character at a time ".repeat(4);
    let mut lsp = ScriptedLsp::start(&slow(
        25,
        json!([{"text": "a"}, {"text": "b"}, {"text": long_summary}]),
    ))?;
    std::fs::write(
        lsp.dir().join("settings.json"),
        json!({"compaction": {"keepRecentTokens": 1}}).to_string(),
    )?;
    let options = lsp.options();
    lsp.initialize_with(event_client(json!(["utf-16"])), options)?;
    let session = prompt(
        &mut lsp,
        json!({"text": "first question, long enough to keep"}),
    )?;
    lsp.next_run(&session)?;
    prompt(
        &mut lsp,
        json!({"session": session, "text": "second question, long enough too"}),
    )?;
    lsp.next_run(&session)?;
    Ok((lsp, session))
}

#[test]
fn a_compaction_aborted_answers_request_cancelled_and_still_ends() -> anyhow::Result<()> {
    let (mut lsp, session) = ready_to_compact()?;
    let id = lsp.send_request("tandem/compact", json!({"session": session}))?;
    wait_for_event(&mut lsp, "compaction_start")?;
    lsp.request("tandem/abort", json!({"session": session}))?;
    let r = lsp.response(id)?;
    let (code, message, _) = error_of(&r);
    assert_eq!(code, -32800, "{r}");
    assert!(message.contains("tandem/compact"), "{message}");
    let ended = wait_for_event(&mut lsp, "compaction_end");
    assert!(
        ended.is_ok(),
        "no compaction_end: {:?}",
        lsp.events(&session)
    );
    let end = lsp
        .events(&session)
        .into_iter()
        .find(|e| event_type(e) == "compaction_end")
        .expect("compaction_end");
    assert_eq!(end["event"]["aborted"], true, "{end}");
    Ok(())
}

#[test]
fn a_compaction_cancelled_by_the_client_still_sends_compaction_end() -> anyhow::Result<()> {
    let (mut lsp, session) = ready_to_compact()?;
    let id = lsp.send_request("tandem/compact", json!({"session": session}))?;
    wait_for_event(&mut lsp, "compaction_start")?;
    lsp.notify("$/cancelRequest", json!({"id": id.value()}))?;
    let r = lsp.response(id)?;
    assert_eq!(error_of(&r).0, -32800, "{r}");
    wait_for_event(&mut lsp, "compaction_end")?;
    let end = lsp
        .events(&session)
        .into_iter()
        .find(|e| event_type(e) == "compaction_end")
        .expect("compaction_end");
    assert_eq!(end["event"]["aborted"], true, "{end}");
    // The session is usable again.
    assert_eq!(state(&mut lsp, &session)?["running"], false);
    Ok(())
}

#[test]
fn settings_without_a_tandem_member_are_pulled_with_workspace_configuration() -> anyhow::Result<()>
{
    let lsp = ScriptedLsp::start(&json!({"turns": []}))?;
    // The editor's answer to the pull: a bad model, to see it applied and reported.
    let mut lsp = lsp.with_handler(support::lsp::answers(|method, params| {
        if method == "workspace/configuration" {
            assert_eq!(params["items"][0]["section"], "tandem", "{params}");
            json!([{"model": 5, "editMode": "auto"}])
        } else {
            Value::Null
        }
    }));
    let options = lsp.options();
    let mut capabilities = event_client(json!(["utf-16"]));
    capabilities["workspace"] = json!({"configuration": true});
    lsp.initialize_with(capabilities, options)?;
    lsp.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": null}),
    )?;
    let shown = lsp.wait_for("the warning about the pulled model", |m| {
        m.method == "window/showMessage"
            && m.params["message"]
                .as_str()
                .is_some_and(|t| t.contains("settings.tandem.model"))
    })?;
    assert_eq!(shown.params["type"], 2, "{}", shown.params);
    assert!(
        lsp.log()
            .iter()
            .any(|m| m["method"] == "workspace/configuration"),
        "the server pulled"
    );
    Ok(())
}

#[test]
fn session_file_is_absent_until_the_file_exists() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::started(&json!({"turns": [{"text": "an answer"}]}))?;
    let session = new_session(&mut lsp)?;
    let before = state(&mut lsp, &session)?;
    assert!(before.get("sessionFile").is_none(), "{before}");
    prompt(&mut lsp, json!({"session": session, "text": "hi"}))?;
    lsp.next_run(&session)?;
    let after = state(&mut lsp, &session)?;
    let file = after["sessionFile"].as_str().unwrap_or_default();
    assert!(std::path::Path::new(file).is_file(), "{after}");
    Ok(())
}

#[test]
fn entries_give_the_fork_points_and_hide_the_editor_context() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::started(&json!({"turns": [{"text": "It prints hi."}]}))?;
    let file = lsp.project().join("main.rs");
    std::fs::write(&file, "fn main() { println!(\"hi\"); }\n")?;
    let uri = lsp.uri("main.rs");
    let session = prompt(
        &mut lsp,
        json!({"text": "what does it print?", "context": {"uri": uri}}),
    )?;
    lsp.next_run(&session)?;
    let entries = lsp.request("tandem/sessions/entries", json!({"session": session}))?;
    let entries = entries.as_array().cloned().unwrap_or_default();
    let kinds: Vec<(&str, Option<&str>)> = entries
        .iter()
        .map(|e| (e["type"].as_str().unwrap_or(""), e["role"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("model_change", None),
            ("thinking_level_change", None),
            ("message", Some("system")),
            ("custom_message", None),
            ("message", Some("user")),
            ("message", Some("assistant")),
        ],
        "{entries:?}"
    );
    assert!(entries[2].get("text").is_none(), "no text: {}", entries[2]);
    assert!(entries[3].get("text").is_none(), "hidden: {}", entries[3]);
    assert_eq!(entries[4]["text"], "what does it print?");
    assert_eq!(entries[5]["text"], "It prints hi.");
    // The user's own text is what the listing shows.
    let listed = lsp.request("tandem/sessions/list", json!({}))?;
    assert_eq!(listed[0]["firstMessage"], "what does it print?", "{listed}");
    // One session, one message count (issue 29): its `message` entries, in both requests.
    let now = state(&mut lsp, &session)?;
    assert_eq!(listed[0]["messageCount"], 3, "{listed}");
    assert_eq!(now["messageCount"], listed[0]["messageCount"], "{now}");
    // Fork at the user message: its history ends there.
    let forked = lsp.request(
        "tandem/sessions/fork",
        json!({"session": session, "entryId": entries[4]["id"]}),
    )?;
    let forked = forked["session"].as_str().unwrap_or_default().to_string();
    let forked_entries = lsp.request("tandem/sessions/entries", json!({"session": forked}))?;
    assert_eq!(
        forked_entries.as_array().map(Vec::len),
        Some(5),
        "{forked_entries}"
    );
    // As the spec says: forked at the first prompt, the system record and the prompt are its
    // `message` entries (the hidden editor context is a `custom_message`).
    let forked_state = state(&mut lsp, &forked)?;
    assert_eq!(forked_state["messageCount"], 2, "{forked_state}");
    let r = lsp.request_response("tandem/sessions/entries", json!({"session": "nope"}))?;
    assert_eq!(error_of(&r).0, -32001, "{r}");
    Ok(())
}

/// A server with one session in the middle of a slow answer; the session.
fn mid_run() -> anyhow::Result<(ScriptedLsp, String)> {
    let mut lsp = ScriptedLsp::started(&slow(50, json!([{"text": "a slow answer to cut"}])))?;
    let session = prompt(&mut lsp, json!({"text": "go"}))?;
    wait_for_event(&mut lsp, "text_delta")?;
    Ok((lsp, session))
}

#[test]
fn fork_while_running_is_busy_minus_32007() -> anyhow::Result<()> {
    let (mut lsp, session) = mid_run()?;
    for method in ["tandem/sessions/fork", "tandem/compact"] {
        let r = lsp.request_response(method, json!({"session": session}))?;
        let (code, message, data) = error_of(&r);
        assert_eq!((code, data), (-32007, json!({"session": session})), "{r}");
        assert!(message.contains("busy"), "{message}");
    }
    Ok(())
}

#[test]
fn shutdown_answers_after_the_runs_settled_event() -> anyhow::Result<()> {
    let (mut lsp, session) = mid_run()?;
    let id = lsp.send_request("shutdown", Value::Null)?;
    lsp.response(id)?;
    let log = lsp.log().to_vec();
    let settled = log.iter().position(|m| {
        m["method"] == "tandem/event"
            && m["params"]["session"] == session.as_str()
            && m["params"]["event"]["type"] == "settled"
    });
    let answered = log
        .iter()
        .position(|m| m.get("method").is_none() && m["id"] == json!(id.value()));
    assert!(
        matches!((settled, answered), (Some(s), Some(a)) if s < a),
        "settled at {settled:?}, the answer at {answered:?}"
    );
    lsp.notify("exit", Value::Null)?;
    Ok(())
}

#[test]
fn a_reopened_session_keeps_its_model_over_the_model_setting() -> anyhow::Result<()> {
    let script = json!({"turns": [{"text": "on u"}, {"text": "still u"}]});
    let mut lsp = ScriptedLsp::started(&script)?;
    let session = new_session(&mut lsp)?;
    lsp.request(
        "tandem/models/set",
        json!({"session": session, "provider": "script", "id": "u"}),
    )?;
    prompt(&mut lsp, json!({"session": session, "text": "hi"}))?;
    lsp.next_run(&session)?;
    let file = state(&mut lsp, &session)?["sessionFile"].clone();
    lsp.shutdown()?;

    // A new server over the same agent dir, its `model` setting script/t.
    let dir = lsp.dir().to_path_buf();
    let mut again = ScriptedLsp::start(&script)?;
    let options = json!({"model": "script/t", "agentDir": dir.display().to_string()});
    again.initialize_with(event_client(json!(["utf-16"])), options)?;
    let reopened = again.request("tandem/sessions/open", json!({"path": file}))?;
    let reopened = reopened["session"].as_str().unwrap_or_default().to_string();
    assert_eq!(state(&mut again, &reopened)?["model"]["id"], "u");
    // A new session follows the setting.
    let fresh = new_session(&mut again)?;
    assert_eq!(state(&mut again, &fresh)?["model"]["id"], "t");
    Ok(())
}

#[test]
fn the_command_line_model_pins_every_session() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::start_with(&json!({"turns": []}), &["--model", "script/u"])?;
    let options = lsp.options(); // the setting says script/t
    lsp.initialize_with(event_client(json!(["utf-16"])), options)?;
    let session = new_session(&mut lsp)?;
    assert_eq!(state(&mut lsp, &session)?["model"]["id"], "u");
    Ok(())
}
