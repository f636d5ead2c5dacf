//! `tandem/undo`: the last turn's changes taken back as one confirmed edit, against the buffer
//! as the user left it.

use serde_json::{json, Value};
use tandem_tests::lsp_client::ClientError;

use super::harness::*;
use crate::support::lsp::{session_file, Buffer};

/// Twelve lines, `line 1` to `line 12`.
fn twelve() -> String {
    (1..=12).map(|i| format!("line {i}\n")).collect()
}

/// Starts the server in confirm mode for a client that takes versioned document changes and
/// creates and deletes files.
fn editor(script: &Value) -> Result<ScriptedLsp, ClientError> {
    let mut lsp = ScriptedLsp::start(script)?;
    let mut options = lsp.options();
    options["editMode"] = json!("confirm");
    let caps = json!({"general": {"positionEncodings": ["utf-16"]},
        "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true,
            "resourceOperations": ["create", "delete"]}},
        "experimental": {"tandem": {"events": true}}});
    lsp.initialize_with(caps, options)?;
    Ok(lsp)
}

/// Answers the confirmation question with `title`; its message.
fn confirm(lsp: &mut ScriptedLsp, title: &str) -> Result<String, ClientError> {
    let ask = lsp.server_request("window/showMessageRequest")?;
    let message = ask.params["message"].as_str().unwrap_or("").to_string();
    lsp.reply(&ask, json!({"title": title}))?;
    Ok(message)
}

/// Applies the next `workspace/applyEdit` to `buffer` as an editor does; the edit.
fn apply(lsp: &mut ScriptedLsp, buffer: &mut Buffer) -> Result<Value, ClientError> {
    let request = lsp.server_request("workspace/applyEdit")?;
    buffer.apply(&request.params["edit"]);
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": buffer.uri, "version": buffer.version},
            "contentChanges": [{"text": buffer.text}]}),
    )?;
    lsp.reply(&request, json!({"applied": true}))?;
    Ok(request.params["edit"].clone())
}

/// The `customType`s of the session file's `custom` entries, in order.
fn custom_types(lsp: &mut ScriptedLsp, session: &str) -> Vec<String> {
    let file = session_file(lsp, session).expect("the session file");
    std::fs::read_to_string(file)
        .expect("read the session file")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "custom")
        .map(|v| v["customType"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn undo_after_user_edits_elsewhere_in_the_file() -> anyhow::Result<()> {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "edit", "arguments": {"path": "a.rs", "edits": [
            {"oldText": "line 2\n", "newText": "LINE TWO\n"},
            {"oldText": "line 9\n", "newText": "LINE NINE\n"}]}}]},
        {"text": "Shouted two lines."}]});
    let mut lsp = editor(&script)?;
    std::fs::write(lsp.project().join("a.rs"), twelve())?;
    let uri = open(&mut lsp, "a.rs", 1, &twelve())?;
    let mut buffer = Buffer {
        uri: uri.clone(),
        text: twelve(),
        version: 1,
    };
    let session = prompt(&mut lsp, json!({"text": "shout lines 2 and 9"}))?;
    confirm(&mut lsp, "Apply")?;
    apply(&mut lsp, &mut buffer)?;
    lsp.next_run(&session)?;
    let after_turn = twelve()
        .replace("line 2\n", "LINE TWO\n")
        .replace("line 9\n", "LINE NINE\n");
    assert_eq!(buffer.text, after_turn);
    assert_eq!(custom_types(&mut lsp, &session), ["tandem.checkpoint"]);

    // The user adds a header above both hunks and edits the second one.
    buffer.text = format!(
        "// the user's header\n{}",
        after_turn.replace("LINE NINE\n", "LINE NINE, said the user\n")
    );
    buffer.version += 1;
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": buffer.version},
            "contentChanges": [{"text": buffer.text}]}),
    )?;

    let id = lsp.send_request("tandem/undo", json!({"session": session}))?;
    let question = confirm(&mut lsp, "Apply")?;
    assert!(question.contains("undo"), "{question}");
    let edit = apply(&mut lsp, &mut buffer)?;
    // One minimal edit against the buffer the user sees: line 2 of the original is now line 3.
    assert_eq!(
        edits_for(&edit, &uri),
        json!([{"range": {"start": {"line": 2, "character": 0},
                          "end": {"line": 2, "character": 8}},
                "newText": "line 2"}])
    );
    let result = lsp.response(id)?["result"].take();
    assert_eq!(result["status"], "applied", "{result}");
    assert_eq!(result["changed"], json!([uri]));
    assert_eq!(result["turns"][0]["prompt"], "shout lines 2 and 9");
    assert_eq!(
        result["refused"],
        json!([{"uri": uri, "line": 8, "reason": "changed since the turn; left as it is"}])
    );
    assert!(
        result["message"]
            .as_str()
            .unwrap_or("")
            .contains("1 hunk you changed since was left as it is"),
        "{result}"
    );
    assert_eq!(
        buffer.text,
        format!(
            "// the user's header\n{}",
            twelve().replace("line 9\n", "LINE NINE, said the user\n")
        )
    );
    assert_eq!(
        custom_types(&mut lsp, &session),
        ["tandem.checkpoint", "tandem.undo"]
    );

    // The turn is undone: a second undo finds nothing and sends nothing.
    let again = lsp.request("tandem/undo", json!({"session": session}))?;
    assert_eq!(again["status"], "nothingToUndo", "{again}");
    assert!(lsp.received("workspace/applyEdit").len() == 2);
    Ok(())
}

#[test]
fn a_rejected_undo_changes_nothing_and_a_created_file_is_deleted_by_the_next() -> anyhow::Result<()>
{
    let script = json!({"turns": [
        {"toolCalls": [{"name": "write", "arguments":
            {"path": "notes.md", "content": "# Notes\n"}}]},
        {"text": "Wrote it."}]});
    let mut lsp = editor(&script)?;
    let path = lsp.project().join("notes.md");
    let session = prompt(&mut lsp, json!({"text": "start notes"}))?;
    confirm(&mut lsp, "Apply")?;
    let create = lsp.server_request("workspace/applyEdit")?;
    std::fs::write(&path, "# Notes\n")?;
    lsp.reply(&create, json!({"applied": true}))?;
    lsp.next_run(&session)?;

    let id = lsp.send_request("tandem/undo", json!({"session": session}))?;
    confirm(&mut lsp, "Reject")?;
    let result = lsp.response(id)?["result"].take();
    assert_eq!(result["status"], "rejected", "{result}");
    assert!(path.exists());

    let id = lsp.send_request("tandem/undo", json!({"session": session}))?;
    confirm(&mut lsp, "Apply")?;
    let delete = lsp.server_request("workspace/applyEdit")?;
    assert_eq!(
        delete.params["edit"]["documentChanges"],
        json!([{"kind": "delete", "uri": lsp.uri("notes.md"),
                "options": {"recursive": false, "ignoreIfNotExists": true}}]),
        "{delete:?}"
    );
    std::fs::remove_file(&path)?;
    lsp.reply(&delete, json!({"applied": true}))?;
    let result = lsp.response(id)?["result"].take();
    assert_eq!(result["status"], "applied", "{result}");
    assert_eq!(result["deleted"], json!([lsp.uri("notes.md")]));
    assert_eq!(result["refused"], json!([]));
    Ok(())
}

#[test]
fn back_to_an_unknown_turn_names_the_field() -> anyhow::Result<()> {
    let mut lsp = editor(&json!({"turns": [{"text": "hi"}]}))?;
    let session = new_session(&mut lsp)?;
    let response =
        lsp.request_response("tandem/undo", json!({"session": session, "backTo": "nope"}))?;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(response["error"]["data"]["field"], "backTo", "{response}");
    Ok(())
}
