//! `tandem lsp` as an editor sees it: the real binary over stdio, driven by tandem-tests' LSP
//! client. The model is the built-in scripted provider (a script file named as the model's
//! baseUrl in a temp agent dir's models.json), so runs are exact and offline.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::lsp::{event_client, new_session, prompt, ScriptedLsp};

fn answer_script(text: &str) -> Value {
    json!({"chunkSize": 3, "turns": [{"text": text}]})
}

#[test]
fn initialize_negotiates_the_position_encoding() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::start(&answer_script("x"))?;
    let r = lsp.initialize_with(event_client(json!(["utf-16"])), json!({}))?;
    let caps = &r["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(caps["textDocumentSync"]["change"], 2);
    assert_eq!(caps["codeActionProvider"]["resolveProvider"], true);
    assert_eq!(caps["experimental"]["tandem"]["version"], 1);
    assert_eq!(caps["workspace"]["workspaceFolders"]["supported"], true);

    let mut lsp = ScriptedLsp::start(&answer_script("x"))?;
    let r = lsp.initialize_with(
        event_client(json!(["utf-32", "utf-8", "utf-16"])),
        json!({}),
    )?;
    assert_eq!(r["capabilities"]["positionEncoding"], "utf-8");
    Ok(())
}

/// Incremental edits with emoji, CJK and CRLF, then a prompt whose context selects the whole
/// buffer: the user message the server builds carries the text the client holds.
fn edits_keep_the_buffer(encoding: &str, emoji_width: u32) -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::start(&answer_script("All good here."))?;
    let options = lsp.options();
    lsp.initialize_with(event_client(json!([encoding])), options)?;
    let uri = lsp.uri("a.rs");
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1,
            "text": "fn a() {}\r\nlet s = \"😀x\";\r\n"}}),
    )?;
    // After the emoji (line 1, after `let s = "😀`): insert CJK.
    let col = 9 + emoji_width;
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": col},
                       "end": {"line": 1, "character": col}}, "text": "漢字"},
            {"range": {"start": {"line": 0, "character": 3},
                       "end": {"line": 0, "character": 4}}, "text": "b\r\n// 🎉"}]}),
    )?;
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///nowhere.rs", "version": 2},
            "contentChanges": [{"text": "ignored"}]}),
    )?;
    let session = prompt(
        &mut lsp,
        json!({"text": "check", "context": {"uri": uri, "selection":
            {"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": 0}}}}),
    )?;
    let events = lsp.next_run(&session)?;
    let user = events
        .iter()
        .find(|e| e["event"]["type"] == "message_start" && e["event"]["role"] == "user")
        .expect("user message_start");
    assert_eq!(user["event"]["text"], "check");
    // The editor context the model read: the client's text after both changes.
    let (text, context) = support::lsp::prompt_and_context(&mut lsp, &json!(session))?;
    assert_eq!(text, "check");
    for line in ["fn b\r", "// 🎉() {}", "let s = \"😀漢字x\";"] {
        assert!(
            context.contains(line.trim_end_matches('\r')),
            "{line:?} not in {context}"
        );
    }
    Ok(())
}

#[test]
fn incremental_edits_in_utf16_keep_the_clients_text() -> anyhow::Result<()> {
    edits_keep_the_buffer("utf-16", 2)
}

#[test]
fn incremental_edits_in_utf8_keep_the_clients_text() -> anyhow::Result<()> {
    edits_keep_the_buffer("utf-8", 4)
}

#[test]
fn a_prompt_streams_numbered_events_ending_in_settled() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::started(&answer_script(
        "Hello from the scripted model, in small chunks.",
    ))?;
    let session = new_session(&mut lsp)?;
    let r = lsp.request("tandem/prompt", json!({"session": session, "text": "hi"}))?;
    assert_eq!(r, json!({"session": session, "queued": false}));
    let events = lsp.next_run(&session)?;
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(events.last().unwrap()["event"]["type"], "settled");
    let text: String = events
        .iter()
        .filter(|e| e["event"]["type"] == "text_delta")
        .map(|e| e["event"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello from the scripted model, in small chunks.");
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(state["model"]["id"], "t", "{state}");
    assert_eq!(state["running"], false);
    Ok(())
}

#[test]
fn errors_name_the_session_and_the_field() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::started(&answer_script("x"))?;
    let r = lsp.request_response("tandem/state", json!({"session": "nope"}))?;
    assert_eq!(r["error"]["code"], -32001, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("`nope`"));
    assert_eq!(r["error"]["data"]["session"], "nope");
    let r = lsp.request_response("tandem/prompt", json!({"text": 5}))?;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "text");
    let r = lsp.request("tandem/models/list", Value::Null)?;
    let models = r.as_array().expect("models without params");
    assert!(
        models
            .iter()
            .any(|m| m["provider"] == "script" && m["id"] == "t"),
        "{r}"
    );
    let r = lsp.request_response("tandem/abort", json!({}))?;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "session");
    Ok(())
}

#[test]
fn exit_during_a_run_ends_the_process() -> anyhow::Result<()> {
    let slow = json!({"chunkSize": 1, "delayMs": 200, "turns": [{"text": "a very slow answer"}]});
    let mut lsp = ScriptedLsp::started(&slow)?;
    prompt(&mut lsp, json!({"text": "go"}))?;
    lsp.request("shutdown", Value::Null)?;
    lsp.notify("exit", Value::Null)?;
    lsp.wait_exit(Duration::from_secs(10))?;
    Ok(())
}

#[test]
fn the_read_tool_sees_the_unsaved_buffer() -> anyhow::Result<()> {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "b.py"}}], "stopReason": "toolUse"},
        {"text": "ok"}]});
    let mut lsp = ScriptedLsp::start(&script)?;
    let options = lsp.options();
    lsp.initialize_with(event_client(json!(["utf-8"])), options)?;
    std::fs::write(lsp.project().join("b.py"), "on disk\n")?;
    let uri = lsp.uri("b.py");
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1,
            "text": "unsaved = '漢'\n"}}),
    )?;
    let session = prompt(&mut lsp, json!({"text": "read b.py"}))?;
    let events = lsp.next_run(&session)?;
    let start = events
        .iter()
        .find(|e| e["event"]["type"] == "tool_start")
        .expect("tool_start");
    assert_eq!(start["event"]["name"], "read");
    assert_eq!(start["event"]["kind"], "read");
    assert_eq!(start["event"]["title"], "Read b.py");
    assert_eq!(start["event"]["locations"][0]["uri"], uri);
    let end = events
        .iter()
        .find(|e| e["event"]["type"] == "tool_end")
        .expect("tool_end");
    assert_eq!(end["event"]["isError"], false, "{end}");
    let text = end["event"]["text"].as_str().unwrap();
    assert!(text.contains("unsaved = '漢'"), "{text}");
    Ok(())
}

#[test]
fn grep_find_and_ls_see_the_unsaved_buffers_by_default() -> anyhow::Result<()> {
    let call = |name: &str, arguments: Value| json!({"toolCalls": [{"name": name, "arguments": arguments}], "stopReason": "toolUse"});
    let script = json!({"turns": [
        call("grep", json!({"pattern": "needle"})),
        call("find", json!({"pattern": "*.py"})),
        call("ls", json!({})),
        {"text": "ok"}]});
    let mut lsp = ScriptedLsp::start(&script)?;
    let options = lsp.options();
    lsp.initialize_with(event_client(json!(["utf-8"])), options)?;
    std::fs::write(
        lsp.project().join("b.py"),
        "old_needle = 1
",
    )?;
    for (name, text) in [
        (
            "b.py",
            "# edited
new_needle = 2
",
        ),
        (
            "fresh.py",
            "needle_in_a_new_file = 3
",
        ),
    ] {
        let uri = lsp.uri(name);
        lsp.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python",
                "version": 1, "text": text}}),
        )?;
    }
    let session = prompt(&mut lsp, json!({"text": "look for the needle"}))?;
    let events = lsp.next_run(&session)?;
    // grep, find and ls, in order: each sees the buffers, not the disk.
    let results: Vec<&str> = events
        .iter()
        .filter(|e| e["event"]["type"] == "tool_end")
        .map(|e| {
            assert_eq!(e["event"]["isError"], false, "{e}");
            e["event"]["text"].as_str().unwrap_or_default()
        })
        .collect();
    assert_eq!(
        results,
        [
            "b.py:2: new_needle = 2\nfresh.py:1: needle_in_a_new_file = 3",
            "b.py\nfresh.py",
            "b.py\nfresh.py",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(lsp.project().join("b.py"))?,
        "old_needle = 1\n",
        "nothing was saved"
    );
    Ok(())
}

#[test]
fn a_prompt_to_a_busy_session_is_queued() -> anyhow::Result<()> {
    let slow = json!({"chunkSize": 1, "delayMs": 30, "turns": [
        {"text": "a slow first answer"}, {"text": "second"}]});
    let mut lsp = ScriptedLsp::started(&slow)?;
    let session = prompt(&mut lsp, json!({"text": "first"}))?;
    let other = new_session(&mut lsp)?;
    assert_ne!(session, other);
    let r = lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "then this", "whenBusy": "followUp"}),
    )?;
    assert_eq!(r["queued"], true, "{r}");
    let events = lsp.next_run(&session)?;
    assert!(events
        .iter()
        .any(|e| e["event"]["type"] == "queue_update"
            && e["event"]["followUp"] == json!(["then this"])));
    // The other session is idle and untouched.
    let state = lsp.request("tandem/state", json!({"session": other}))?;
    assert_eq!(state["running"], false, "{state}");
    assert_eq!(state["messageCount"], 0, "{state}");
    Ok(())
}

#[test]
fn opening_a_session_another_process_holds_continues_in_a_copy_and_warns() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::started(&json!({"loop": true, "turns": [{"text": "noted"}]}))?;
    let dir = lsp.dir().join("held");
    std::fs::create_dir_all(&dir)?;
    let held = dir.join("2026-11-30T07-13-25-974Z_01a22b4d.jsonl");
    let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/reference/pi-0.73.1-session.jsonl");
    std::fs::copy(&reference, &held)?;
    let before = std::fs::read(&held)?;
    // Another process writing the session holds its lock (std's lock is the same flock).
    let holder = std::fs::OpenOptions::new().append(true).open(&held)?;
    holder.try_lock()?;

    let open = lsp.request("tandem/sessions/open", json!({"path": held}))?;
    let session = open["session"].as_str().expect("a session id").to_string();
    assert_ne!(
        session, "01a22b4d-25d5-77de-8d60-df9ef5711e8b",
        "a copy has its own id"
    );
    // The session's model (the reference file's) is not configured here, which is shown too, in
    // either order.
    let warning = lsp.wait_for("the warning", |m| {
        m.method == "window/showMessage"
            && m.params["message"]
                .as_str()
                .is_some_and(|t| t.contains("in use by another process"))
    })?;
    let text = warning.params["message"].as_str().unwrap_or_default();
    assert_eq!(warning.params["type"], 2, "a warning: {text}");
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(state["messageCount"], 6, "the history came along: {state}");
    let r = lsp.request("tandem/prompt", json!({"session": session, "text": "more"}))?;
    assert_eq!(r["queued"], false, "{r}");
    lsp.next_run(&session)?;
    drop(holder);
    assert_eq!(std::fs::read(&held)?, before, "the held file is untouched");
    let copies: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| *p != held)
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(text.contains(&*copies[0].to_string_lossy()), "{text}");
    Ok(())
}

#[test]
fn sessions_are_listed_forked_and_opened() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::started(&json!({"loop": true, "turns": [{"text": "noted"}]}))?;
    let session = prompt(&mut lsp, json!({"text": "remember this"}))?;
    lsp.next_run(&session)?;
    let list = lsp.request("tandem/sessions/list", json!({}))?;
    let list = list.as_array().expect("a list").clone();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["id"], session);
    assert_eq!(list[0]["firstMessage"], "remember this");
    let path = list[0]["path"].clone();

    let fork = lsp.request("tandem/sessions/fork", json!({"session": session}))?;
    let forked = fork["session"].clone();
    assert!(forked.is_string() && forked != session, "{fork}");
    let open = lsp.request("tandem/sessions/open", json!({"path": path}))?;
    assert_eq!(open["session"], session, "{open}");
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    // The recorded prompt and tools (a `system` message), the question, the answer.
    assert_eq!(state["messageCount"], 3, "{state}");

    let missing =
        lsp.request_response("tandem/sessions/open", json!({"path": "/no/such.jsonl"}))?;
    assert_eq!(missing["error"]["code"], -32005, "{missing}");
    let r = lsp.request_response(
        "tandem/models/set",
        json!({"session": session, "provider": "script", "id": "nope"}),
    )?;
    assert_eq!(r["error"]["code"], -32004, "{r}");
    let r = lsp.request(
        "tandem/thinking/set",
        json!({"session": session, "level": "high"}),
    )?;
    // The scripted model cannot reason: the level in effect is `off`, as the spec says.
    assert_eq!(r, json!({"level": "off"}), "{r}");
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(state["thinkingLevel"], "off", "{state}");
    let r = lsp.request_response(
        "tandem/thinking/set",
        json!({"session": session, "level": "maximum"}),
    )?;
    assert_eq!(r["error"]["data"]["field"], "level", "{r}");
    Ok(())
}
