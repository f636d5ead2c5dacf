//! What the server proposes: minimal, versioned edits against the buffer the user sees, in the
//! shape the client declared it supports.

use serde_json::json;

use super::harness::*;

const UNSAVED: &str = "fn main() {\n    let s = \"😀 hello world\";\n}\n";
const ON_DISK: &str = "fn main() {}\n";

#[test]
fn an_edit_of_an_unsaved_buffer_is_proposed_as_a_minimal_versioned_edit() -> anyhow::Result<()> {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "a.rs"}}]},
        {"toolCalls": [{"name": "edit", "arguments":
            {"path": "a.rs", "edits": [{"oldText": "world", "newText": "there"}]}}]},
        {"text": "Changed it."},
        {"text": "Looked."}]});
    let mut lsp = started(&script, PLAIN, json!({}))?;
    let path = lsp.project().join("a.rs");
    std::fs::write(&path, ON_DISK).unwrap();
    let uri = open(&mut lsp, "a.rs", 5, UNSAVED)?;
    let session = prompt(
        &mut lsp,
        json!({"text": "say there", "context": {"uri": uri, "selection":
            {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 29}}}}),
    )?;

    // Confirm mode without annotations: the server asks first.
    let ask = lsp.server_request("window/showMessageRequest")?;
    let titles: Vec<&str> = ask.params["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Apply", "Reject", "Apply all"], "{ask}");
    assert!(
        ask.params["message"].as_str().unwrap().contains("a.rs"),
        "{ask}"
    );
    lsp.reply(&ask, json!({"title": "Apply"}))?;

    let apply = lsp.server_request("workspace/applyEdit")?;
    let edit = &apply.params["edit"];
    // `    let s = "` is 13 UTF-16 units, the emoji 2, ` hello ` 7: `world` is 22..27.
    assert_eq!(
        edit,
        &json!({"documentChanges": [{"textDocument": {"uri": uri, "version": 5},
            "edits": [{"range": {"start": {"line": 1, "character": 22},
                                 "end": {"line": 1, "character": 27}},
                       "newText": "there"}]}]}),
        "{apply}"
    );
    assert!(
        apply.params["label"]
            .as_str()
            .unwrap_or("")
            .contains("a.rs"),
        "{apply}"
    );
    lsp.reply(&apply, json!({"applied": true}))?;
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 6}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 22}, "end": {"line": 1, "character": 27}},
             "text": "there"}]}),
    )?;

    let events = lsp.next_run(&session)?;
    assert_contiguous(&events);
    let read = tool_end(&events, "read");
    assert!(
        read["event"]["text"]
            .as_str()
            .unwrap()
            .contains("😀 hello world"),
        "{read}"
    );
    let end = tool_end(&events, "edit");
    assert_eq!(end["event"]["isError"], false, "{end}");
    assert_eq!(answer_text(&events), "Changed it.");
    // Never written behind the editor's back.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), ON_DISK);
    assert_eq!(lsp.received("workspace/applyEdit").len(), 1);

    // The server's copy followed the client's didChange.
    let r = lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "look", "context": {"uri": uri, "selection":
            {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}}}),
    )?;
    assert_eq!(r["queued"], false, "{r}");
    let events = lsp.next_run(&session)?;
    let user = events
        .iter()
        .find(|e| event_type(e) == "message_start" && e["event"]["role"] == "user")
        .expect("user message_start");
    assert_eq!(user["event"]["text"], "look");
    let (_, text) = crate::support::lsp::prompt_and_context(&mut lsp, &json!(session))?;
    assert!(text.contains("let s = \"😀 hello there\";"), "{text}");
    assert!(!text.contains("hello world"), "{text}");
    assert_eq!(answer_text(&events), "Looked.");
    Ok(())
}

#[test]
fn with_change_annotations_the_edit_asks_for_confirmation_in_the_editor() -> anyhow::Result<()> {
    let mut lsp = started(
        &edit_script("c.rs", "old", "new", "Fine."),
        ANNOTATING,
        json!({}),
    )?;
    let uri = open(&mut lsp, "c.rs", 1, "let old = 1;\n")?;
    let session = prompt(&mut lsp, json!({"text": "rename"}))?;
    let apply = lsp.server_request("workspace/applyEdit")?;
    let edit = &apply.params["edit"];
    let annotations = edit["changeAnnotations"].as_object().expect("annotations");
    assert_eq!(annotations.len(), 1, "{apply}");
    let (id, annotation) = annotations.iter().next().unwrap();
    assert_eq!(annotation["needsConfirmation"], true, "{apply}");
    assert!(
        annotation["label"].as_str().unwrap().contains("c.rs"),
        "{apply}"
    );
    let doc = &edit["documentChanges"][0];
    assert_eq!(doc["textDocument"], json!({"uri": uri, "version": 1}));
    assert_eq!(
        doc["edits"],
        json!([{"range": {"start": {"line": 0, "character": 4},
                          "end": {"line": 0, "character": 7}},
                "newText": "new", "annotationId": id}])
    );
    // The user declines in the preview: the client's reason reaches the model.
    lsp.reply(
        &apply,
        json!({"applied": false, "failureReason": "declined in preview"}),
    )?;
    let events = lsp.next_run(&session)?;
    let end = tool_end(&events, "edit");
    assert_eq!(end["event"]["isError"], true, "{end}");
    assert!(
        end["event"]["text"]
            .as_str()
            .unwrap()
            .contains("declined in preview"),
        "{end}"
    );
    assert!(lsp.received("window/showMessageRequest").is_empty());
    assert_eq!(answer_text(&events), "Fine.");
    Ok(())
}

#[test]
fn auto_mode_applies_without_a_question_or_annotation() -> anyhow::Result<()> {
    let mut lsp = started(
        &edit_script("d.rs", "1", "2", "Done."),
        ANNOTATING,
        json!({"editMode": "auto"}),
    )?;
    let uri = open(&mut lsp, "d.rs", 3, "let x = 1;\n")?;
    let session = prompt(&mut lsp, json!({"text": "bump"}))?;
    let apply = lsp.server_request("workspace/applyEdit")?;
    assert_eq!(
        apply.params["edit"],
        json!({"documentChanges": [{"textDocument": {"uri": uri, "version": 3},
            "edits": [{"range": {"start": {"line": 0, "character": 8},
                                 "end": {"line": 0, "character": 9}},
                       "newText": "2"}]}]}),
        "{apply}"
    );
    // As an editor does: the change, then the answer.
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4},
            "contentChanges": [{"text": "let x = 2;\n"}]}),
    )?;
    lsp.reply(&apply, json!({"applied": true}))?;
    let events = lsp.next_run(&session)?;
    assert_eq!(tool_end(&events, "edit")["event"]["isError"], false);
    assert!(lsp.received("window/showMessageRequest").is_empty());
    assert_eq!(answer_text(&events), "Done.");
    Ok(())
}

/// The spec: "without [`workspace.applyEdit`], edit and write fail as tool errors".
#[test]
fn a_client_without_apply_edit_gets_a_tool_error_and_no_request() -> anyhow::Result<()> {
    let client = Client {
        apply_edit: false,
        ..PLAIN
    };
    let mut lsp = started(
        &edit_script("i.rs", "a", "b", "Could not."),
        client,
        json!({"editMode": "auto"}),
    )?;
    open(&mut lsp, "i.rs", 1, "a\n")?;
    let session = prompt(&mut lsp, json!({"text": "edit"}))?;
    let stop = lsp.wait_for("settled, or an applyEdit the client cannot take", |m| {
        m.method == "workspace/applyEdit"
            || (m.params["session"] == session && event_type(&m.params) == "settled")
    })?;
    assert_ne!(
        stop.method, "workspace/applyEdit",
        "the server sent applyEdit to a client without workspace.applyEdit: {stop}"
    );
    let events = lsp.events(&session);
    assert_eq!(tool_end(&events, "edit")["event"]["isError"], true);
    assert_eq!(answer_text(&events), "Could not.");
    Ok(())
}

#[test]
fn concurrent_edits_of_two_sessions_to_one_document_go_one_at_a_time() -> anyhow::Result<()> {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "edit", "arguments":
            {"path": "m.rs", "edits": [{"oldText": "m", "newText": "n"}]}}]},
        {"text": "Over."}]});
    let mut lsp = started(&script, PLAIN, json!({"editMode": "auto"}))?;
    let uri = open(&mut lsp, "m.rs", 1, "m\n")?;
    let a = prompt(&mut lsp, json!({"text": "a"}))?;
    let b = prompt(&mut lsp, json!({"text": "b"}))?;
    // One unanswered edit per document (issue 29): the other session's waits for its answer.
    let first = lsp.server_request("workspace/applyEdit")?;
    assert_eq!(
        edits_for(&first.params["edit"], &uri),
        json!([{"range": {"start": {"line": 0, "character": 0},
                          "end": {"line": 0, "character": 1}}, "newText": "n"}])
    );
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "n\n"}]}),
    )?;
    lsp.reply(&first, json!({"applied": true}))?;
    let events_a = lsp.next_run(&a)?;
    let events_b = lsp.next_run(&b)?;
    let ends = [tool_end(&events_a, "edit"), tool_end(&events_b, "edit")];
    let refused: Vec<bool> = ends.iter().map(|e| e["event"]["isError"] == true).collect();
    assert_eq!(refused.iter().filter(|r| **r).count(), 1, "{ends:?}");
    // The second edit met the document as the first left it: its region is gone. Which of two
    // words says so depends on when the second session read the file: before the first edit
    // was applied (placed on the new text, it conflicts) or after (its text is not there).
    let refused_end = ends.iter().find(|e| e["event"]["isError"] == true).unwrap();
    let text = refused_end["event"]["text"].as_str().unwrap();
    assert!(
        text.contains("changed m.rs while the change was pending")
            || text.contains("Could not find the exact text in m.rs"),
        "{refused_end}"
    );
    assert_eq!(lsp.received("workspace/applyEdit").len(), 1);
    for events in [&events_a, &events_b] {
        assert_contiguous(events);
        assert_eq!(answer_text(events), "Over.");
    }
    Ok(())
}
