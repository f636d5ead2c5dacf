//! The user types while an edit is pending, black-box: the real server, tandem-tests' client as
//! the editor, in each client shape. The editor here types at the worst moment — after the
//! server computed the edit, before the editor applies it — and applies what it gets exactly as
//! a client of that shape does: plain `changes` at their positions whatever happened since,
//! versioned edits only for the version they name.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::harness::{edit_script, open, started, tool_end, Client, ScriptedLsp, PLAIN};
use crate::support::lsp::{prompt, Buffer};

/// A client without `documentChanges`: it gets plain `changes` maps.
const UNVERSIONED: Client = Client {
    document_changes: false,
    ..PLAIN
};

const HELLO: &str = "hello world\nsecond line\n";

/// The editor's buffer of `a.txt`, open at version 1.
fn opened(lsp: &mut ScriptedLsp) -> anyhow::Result<Buffer> {
    let uri = open(lsp, "a.txt", 1, HELLO)?;
    Ok(Buffer {
        uri,
        text: HELLO.into(),
        version: 1,
    })
}

/// The user types `text` at the start of the buffer: the buffer changes and the server is told.
fn type_at_start(lsp: &mut ScriptedLsp, buffer: &mut Buffer, text: &str) -> anyhow::Result<()> {
    buffer.text.insert_str(0, text);
    buffer.version += 1;
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": buffer.uri, "version": buffer.version},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                          "end": {"line": 0, "character": 0}}, "text": text}]}),
    )?;
    Ok(())
}

/// Applies `edit` to the buffer (at its positions), tells the server, answers applied.
fn apply(
    lsp: &mut ScriptedLsp,
    buffer: &mut Buffer,
    request: &tandem_tests::lsp_client::Incoming,
) -> anyhow::Result<()> {
    buffer.apply(&request.params["edit"]);
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": buffer.uri, "version": buffer.version},
            "contentChanges": [{"text": buffer.text}]}),
    )?;
    lsp.reply(request, json!({"applied": true}))?;
    Ok(())
}

/// From now on the client answers `workspace/applyEdit` itself, as an editor of its shape does:
/// a versioned edit for another version is refused, any other edit applied at its positions
/// (its `didChange` sent before the answer). The server may see an answer before the typing
/// that preceded it, so the tests let it resend.
fn editor_from_now_on(lsp: &mut ScriptedLsp, buffer: Buffer) -> Arc<Mutex<Buffer>> {
    let shared = Arc::new(Mutex::new(buffer));
    let editor = shared.clone();
    lsp.set_handler(Some(Box::new(move |request, out| {
        if request.method != "workspace/applyEdit" {
            return out.reply(request, Value::Null);
        }
        let mut buffer = editor.lock().expect("buffer");
        let version =
            request.params["edit"]["documentChanges"][0]["textDocument"]["version"].as_i64();
        if version.is_some_and(|v| v != buffer.version) {
            return out.reply(
                request,
                json!({"applied": false, "failureReason": "document version mismatch"}),
            );
        }
        let answer = buffer.apply_request(request, out)?;
        out.reply(request, answer)
    })));
    shared
}

fn tool_text(events: &[Value]) -> String {
    tool_end(events, "edit")["event"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_plain_changes_client_applying_at_stale_positions_gets_a_repair_and_no_keystroke_is_lost(
) -> anyhow::Result<()> {
    let mut lsp = started(
        &edit_script("a.txt", "world", "there", "Done."),
        UNVERSIONED,
        json!({"editMode": "auto"}),
    )?;
    let mut buffer = opened(&mut lsp)?;
    let session = prompt(&mut lsp, json!({"text": "change it"}))?;
    let first = lsp.server_request("workspace/applyEdit")?;
    assert!(first.params["edit"]["changes"].is_object(), "{first}");
    // The user types before the editor applies the edit; the editor then applies the plain
    // edit at its (now stale) positions: "XYZ hello world" → "XYZ hellthererld"-like damage.
    type_at_start(&mut lsp, &mut buffer, "XYZ ")?;
    apply(&mut lsp, &mut buffer, &first)?;
    assert_ne!(
        buffer.text, "XYZ hello there\nsecond line\n",
        "the stale edit landed wrong"
    );
    // The server sees what happened and repairs it.
    let repair = lsp.server_request("workspace/applyEdit")?;
    assert_eq!(repair.params["label"], "Tandem: repair a.txt", "{repair}");
    apply(&mut lsp, &mut buffer, &repair)?;
    let events = lsp.next_run(&session)?;
    assert_eq!(buffer.text, "XYZ hello there\nsecond line\n");
    assert_eq!(tool_end(&events, "edit")["event"]["isError"], false);
    assert!(tool_text(&events).contains("The user had changed the file meanwhile"));
    Ok(())
}

#[test]
fn a_versioned_edit_refused_after_typing_is_placed_again_and_applied() -> anyhow::Result<()> {
    let mut lsp = started(
        &edit_script("a.txt", "world", "there", "Done."),
        PLAIN,
        json!({"editMode": "auto"}),
    )?;
    let mut buffer = opened(&mut lsp)?;
    let session = prompt(&mut lsp, json!({"text": "change it"}))?;
    let first = lsp.server_request("workspace/applyEdit")?;
    type_at_start(&mut lsp, &mut buffer, "XYZ ")?;
    // A versioned client refuses an edit for an older version.
    lsp.reply(
        &first,
        json!({"applied": false, "failureReason": "document version mismatch"}),
    )?;
    let second = lsp.server_request("workspace/applyEdit")?;
    let doc = &second.params["edit"]["documentChanges"][0];
    assert_eq!(doc["textDocument"]["version"], 2, "{second}");
    assert_eq!(
        doc["edits"][0]["range"]["start"],
        json!({"line": 0, "character": 10}),
        "placed after the typed text: {second}"
    );
    apply(&mut lsp, &mut buffer, &second)?;
    let events = lsp.next_run(&session)?;
    assert_eq!(buffer.text, "XYZ hello there\nsecond line\n");
    assert_eq!(tool_end(&events, "edit")["event"]["isError"], false);
    Ok(())
}

#[test]
fn typing_while_the_question_is_open_is_kept_and_apply_means_apply() -> anyhow::Result<()> {
    for client in [PLAIN, UNVERSIONED] {
        let mut lsp = started(
            &edit_script("a.txt", "world", "there", "Done."),
            client,
            json!({"editMode": "confirm"}),
        )?;
        let mut buffer = opened(&mut lsp)?;
        let session = prompt(&mut lsp, json!({"text": "change it"}))?;
        let question = lsp.server_request("window/showMessageRequest")?;
        type_at_start(&mut lsp, &mut buffer, "XYZ ")?;
        let buffer = editor_from_now_on(&mut lsp, buffer);
        lsp.reply(&question, json!({"title": "Apply"}))?;
        let events = lsp.next_run(&session)?;
        let buffer = buffer.lock().expect("buffer");
        assert_eq!(buffer.text, "XYZ hello there\nsecond line\n");
        assert_eq!(tool_end(&events, "edit")["event"]["isError"], false);
    }
    Ok(())
}

#[test]
fn typing_inside_the_region_is_a_conflict_the_model_is_told_about() -> anyhow::Result<()> {
    let mut lsp = started(
        &edit_script("a.txt", "world", "there", "Done."),
        PLAIN,
        json!({"editMode": "confirm"}),
    )?;
    let mut buffer = opened(&mut lsp)?;
    let session = prompt(&mut lsp, json!({"text": "change it"}))?;
    let question = lsp.server_request("window/showMessageRequest")?;
    // "hello world" → "hello wo!!rld": the text the edit replaces is gone.
    buffer.text = "hello wo!!rld\nsecond line\n".into();
    buffer.version += 1;
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": buffer.uri, "version": buffer.version},
            "contentChanges": [{"text": buffer.text}]}),
    )?;
    let buffer = editor_from_now_on(&mut lsp, buffer);
    lsp.reply(&question, json!({"title": "Apply"}))?;
    let events = lsp.next_run(&session)?;
    let buffer = buffer.lock().expect("buffer");
    let end = tool_end(&events, "edit");
    assert_eq!(end["event"]["isError"], true);
    let text = tool_text(&events);
    assert!(
        text.contains("The user changed a.txt while the change was pending"),
        "{text}"
    );
    assert!(
        text.contains("hello wo!!rld"),
        "the current line is quoted: {text}"
    );
    assert!(!text.contains("rejected"), "{text}");
    assert_eq!(buffer.text, "hello wo!!rld\nsecond line\n");
    Ok(())
}

/// Issue 29: an editor without version checks answers an edit after `editTimeoutMs`, and the
/// model, told the edit timed out, makes the same insertion again. The second edit waits for
/// the first one's answer instead of going out beside it; the answer says it was applied, so
/// the same change is not sent again. The insertion is in the document once, and the text the
/// server reads is the editor's.
#[test]
fn a_late_answer_and_a_repeated_insertion_insert_once_and_the_views_agree() -> anyhow::Result<()> {
    let insert = json!({"name": "edit", "arguments": {"path": "a.txt",
        "edits": [{"oldText": "hello world\n", "newText": "hello world\ninserted\n"}]}});
    let script = json!({"turns": [
        {"toolCalls": [insert.clone()]},
        {"toolCalls": [insert]},
        {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "Done."}]});
    let mut lsp = started(
        &script,
        UNVERSIONED,
        json!({"editMode": "auto", "editTimeoutMs": 1000}),
    )?;
    let mut buffer = opened(&mut lsp)?;
    let session = prompt(&mut lsp, json!({"text": "insert a line"}))?;
    let first = lsp.server_request("workspace/applyEdit")?;
    // The first edit times out; the model repeats it (its second call starts).
    let s = session.clone();
    lsp.wait_until("the second edit call", |client| {
        client
            .events(&s)
            .iter()
            .filter(|e| e["event"]["type"] == "tool_start" && e["event"]["name"] == "edit")
            .count()
            >= 2
    })?;
    // Only now does the editor answer the first edit: it applied it.
    apply(&mut lsp, &mut buffer, &first)?;
    // Whatever else it was or is sent, it applies in order, as an editor of its shape does: at
    // the edit's positions.
    let s = session.clone();
    loop {
        let next = lsp.wait_for("an edit or the end of the run", |m| {
            (m.method == "workspace/applyEdit" && m.is_request())
                || (m.method == "tandem/event"
                    && m.params["session"] == s
                    && m.params["event"]["type"] == "settled")
        })?;
        if next.method != "workspace/applyEdit" {
            break;
        }
        apply(&mut lsp, &mut buffer, &next)?;
    }
    let events = lsp.wait_settled(&session, 1)?;
    let text = buffer.text.clone();
    assert_eq!(
        text, "hello world\ninserted\nsecond line\n",
        "inserted once"
    );
    // The server's text (what `read` gave the model) is the editor's.
    let read = tool_end(&events, "read")["event"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(read.matches("inserted").count(), 1, "{read}");
    assert!(
        read.contains("hello world\ninserted\nsecond line"),
        "{read}"
    );
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"]["type"] == "tool_end")
        .collect();
    assert!(
        ends.iter().any(|e| e["event"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("applied by the editor after all"))),
        "{ends:?}"
    );
    Ok(())
}
