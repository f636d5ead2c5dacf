//! Saved before commands: after the user accepts an edit, the agent's next command sees the
//! edited file on disk — the editor saves it on `tandem/saveDocuments` — and an editor that
//! cannot save (Helix) or fails to leaves the model told which files are unsaved.

use serde_json::{json, Value};

use super::harness::{open, started, tool_end, Client, ScriptedLsp, PLAIN};
use crate::support::lsp::{prompt, Buffer};

/// Edit check.txt's greeting, run `cat check.txt`, answer.
fn script() -> Value {
    json!({"turns": [
        {"toolCalls": [{"name": "edit", "arguments":
            {"path": "check.txt", "edits": [{"oldText": "Helo", "newText": "Hello"}]}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "cat check.txt"}}]},
        {"text": "Checked."}]})
}

const SAVING: Client = Client {
    save_documents: true,
    ..PLAIN
};

/// The server with check.txt on disk and open (same text); the edit applied as an editor does.
fn edited(client: Client) -> anyhow::Result<(ScriptedLsp, Buffer, String)> {
    let mut lsp = started(
        &script(),
        client,
        json!({"editMode": "auto", "bashPermission": "allow"}),
    )?;
    std::fs::write(lsp.project().join("check.txt"), "Helo, world!\n")?;
    let uri = open(&mut lsp, "check.txt", 1, "Helo, world!\n")?;
    let mut buffer = Buffer {
        uri: uri.clone(),
        text: "Helo, world!\n".into(),
        version: 1,
    };
    let session = prompt(&mut lsp, json!({"text": "fix the greeting and check"}))?;
    let apply = lsp.server_request("workspace/applyEdit")?;
    buffer.apply(&apply.params["edit"]);
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": buffer.version},
            "contentChanges": [{"text": buffer.text}]}),
    )?;
    lsp.reply(&apply, json!({"applied": true}))?;
    assert_eq!(buffer.text, "Hello, world!\n");
    Ok((lsp, buffer, session))
}

#[test]
fn the_editor_saves_the_edited_document_before_the_command_runs() -> anyhow::Result<()> {
    let (mut lsp, buffer, session) = edited(SAVING)?;
    let save = lsp.server_request("tandem/saveDocuments")?;
    assert_eq!(save.params["uris"], json!([buffer.uri]), "{save}");
    assert_eq!(save.params["reason"], "before running `cat check.txt`");
    // The editor writes its buffer, says so with didSave, and answers.
    std::fs::write(lsp.project().join("check.txt"), &buffer.text)?;
    lsp.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": buffer.uri}}),
    )?;
    lsp.reply(&save, json!({"saved": [buffer.uri], "failed": []}))?;
    let events = lsp.next_run(&session)?;
    let bash = tool_end(&events, "bash");
    let text = bash["event"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Hello, world!"),
        "the command saw the saved edit: {bash}"
    );
    assert!(!text.contains("unsaved"), "{bash}");
    Ok(())
}

#[test]
fn an_editor_that_cannot_save_leaves_the_model_told_which_files_are_unsaved() -> anyhow::Result<()>
{
    // Helix-like: no saveDocuments capability, so no request; the disk keeps the old text.
    let (mut lsp, _buffer, session) = edited(PLAIN)?;
    let events = lsp.next_run(&session)?;
    assert!(lsp.received("tandem/saveDocuments").is_empty());
    let bash = tool_end(&events, "bash");
    let text = bash["event"]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Helo, world!"), "{bash}");
    assert!(
        text.contains(
            "the editor has unsaved changes in check.txt (this editor cannot be asked to save)"
        ),
        "{bash}"
    );
    Ok(())
}

#[test]
fn a_save_the_editor_refuses_is_named_with_its_reason() -> anyhow::Result<()> {
    let (mut lsp, buffer, session) = edited(SAVING)?;
    let save = lsp.server_request("tandem/saveDocuments")?;
    lsp.reply(
        &save,
        json!({"saved": [], "failed": [{"uri": buffer.uri, "message": "the file is read-only"}]}),
    )?;
    let events = lsp.next_run(&session)?;
    let bash = tool_end(&events, "bash");
    let text = bash["event"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("unsaved changes in check.txt (the file is read-only)"),
        "{bash}"
    );
    Ok(())
}
