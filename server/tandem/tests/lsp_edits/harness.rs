//! What the edit-flow tests share: `tandem lsp` with a scripted model
//! (`support::lsp::ScriptedLsp`), initialized by a client that declares the workspace-edit
//! capabilities a test chooses, and readers of a run's events. Each test answers (or, on
//! purpose, does not answer) the server's `workspace/applyEdit` and `window/showMessageRequest`
//! itself.

use serde_json::{json, Value};
use tandem_tests::lsp_client::ClientError;

pub use crate::support::lsp::{new_session, prompt, ScriptedLsp};
pub use tandem_tests::lsp_client::event_type;

/// What the test client declares at `initialize`.
#[derive(Clone, Copy)]
pub struct Client {
    /// `experimental.tandem.events`.
    pub events: bool,
    /// `workspace.applyEdit`.
    pub apply_edit: bool,
    /// `workspace.workspaceEdit.documentChanges`.
    pub document_changes: bool,
    /// `workspace.workspaceEdit.changeAnnotationSupport`.
    pub annotations: bool,
    /// `experimental.tandem.saveDocuments`.
    pub save_documents: bool,
}

/// A client with versioned document changes but no change annotations.
pub const PLAIN: Client = Client {
    events: true,
    apply_edit: true,
    document_changes: true,
    annotations: false,
    save_documents: false,
};

/// A client that previews edits annotated with `needsConfirmation`.
pub const ANNOTATING: Client = Client {
    events: true,
    apply_edit: true,
    document_changes: true,
    annotations: true,
    save_documents: false,
};

/// Starts the server with `script` and initializes it with `client`'s capabilities and `extra`
/// options (merged over the model and the agent dir).
pub fn started(script: &Value, client: Client, extra: Value) -> Result<ScriptedLsp, ClientError> {
    let mut lsp = ScriptedLsp::start(script)?;
    let mut options = lsp.options();
    if let (Some(o), Some(e)) = (options.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    let mut workspace_edit = json!({"documentChanges": client.document_changes});
    if client.annotations {
        workspace_edit["changeAnnotationSupport"] = json!({"groupsOnLabel": true});
    }
    let mut caps = json!({"general": {"positionEncodings": ["utf-16"]},
        "workspace": {"applyEdit": client.apply_edit, "workspaceEdit": workspace_edit}});
    if client.events || client.save_documents {
        caps["experimental"] =
            json!({"tandem": {"events": client.events, "saveDocuments": client.save_documents}});
    }
    let r = lsp.initialize_with(caps, options)?;
    assert_eq!(r["capabilities"]["positionEncoding"], "utf-16", "{r}");
    Ok(lsp)
}

/// Opens `name` of the project at `version` with `text`; its URI.
pub fn open(
    lsp: &mut ScriptedLsp,
    name: &str,
    version: i32,
    text: &str,
) -> Result<String, ClientError> {
    let uri = lsp.uri(name);
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": version,
            "text": text}}),
    )?;
    Ok(uri)
}

/// The `tool_end` of the first call of tool `name`.
pub fn tool_end<'a>(events: &'a [Value], name: &str) -> &'a Value {
    let id = events
        .iter()
        .find(|e| event_type(e) == "tool_start" && e["event"]["name"] == name)
        .unwrap_or_else(|| panic!("no tool_start for {name}: {events:?}"))["event"]["toolCallId"]
        .clone();
    events
        .iter()
        .find(|e| event_type(e) == "tool_end" && e["event"]["toolCallId"] == id)
        .unwrap_or_else(|| panic!("no tool_end for {name}"))
}

/// The text of the last assistant message.
pub fn answer_text(events: &[Value]) -> String {
    let last_assistant = events
        .iter()
        .rev()
        .find(|e| event_type(e) == "message_end" && e["event"]["message"]["role"] == "assistant")
        .expect("an assistant message");
    let content = last_assistant["event"]["message"]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    content.iter().filter_map(|b| b["text"].as_str()).collect()
}

/// Asserts that the events' seqs are 1, 2, 3, …
pub fn assert_contiguous(events: &[Value]) {
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

/// A script that edits `path` (replacing `old` with `new`), then answers `answer`.
pub fn edit_script(path: &str, old: &str, new: &str, answer: &str) -> Value {
    json!({"turns": [
        {"toolCalls": [{"name": "edit", "arguments":
            {"path": path, "edits": [{"oldText": old, "newText": new}]}}]},
        {"text": answer}]})
}

/// The text edits of `edit` for `uri`, whichever shape carries them (`changes` or
/// `documentChanges`).
pub fn edits_for(edit: &Value, uri: &str) -> Value {
    if let Some(edits) = edit["changes"].get(uri) {
        return edits.clone();
    }
    edit["documentChanges"]
        .as_array()
        .and_then(|docs| docs.iter().find(|d| d["textDocument"]["uri"] == uri))
        .map(|d| d["edits"].clone())
        .unwrap_or_else(|| panic!("no edits for {uri} in {edit}"))
}
