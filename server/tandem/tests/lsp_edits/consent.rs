//! How the user's answer decides an edit: Reject, Apply all, a dismissed question, a failed
//! request, and what the model sees afterwards.

use serde_json::{json, Value};

use super::harness::*;

#[test]
fn a_rejected_edit_is_a_tool_error_the_model_sees() -> anyhow::Result<()> {
    let mut lsp = started(
        &edit_script("b.txt", "one", "two", "Understood, left it alone."),
        PLAIN,
        json!({"editMode": "confirm"}),
    )?;
    let path = lsp.project().join("b.txt");
    std::fs::write(&path, "one\n").unwrap();
    let session = prompt(&mut lsp, json!({"text": "change one to two in b.txt"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    lsp.reply(&ask, json!({"title": "Reject"}))?;

    let events = lsp.next_run(&session)?;
    assert_contiguous(&events);
    let end = tool_end(&events, "edit");
    assert_eq!(end["event"]["isError"], true, "{end}");
    let text = end["event"]["text"].as_str().unwrap();
    assert!(text.contains("rejected by the user"), "{text}");
    // The run went on to the model's next turn, whose context held the tool result.
    assert_eq!(answer_text(&events), "Understood, left it alone.");
    let result = events
        .iter()
        .find(|e| event_type(e) == "message_end" && e["event"]["message"]["role"] == "toolResult")
        .expect("a toolResult message");
    assert_eq!(result["event"]["message"]["isError"], true, "{result}");
    assert!(lsp.received("workspace/applyEdit").is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n");

    // The session file holds the error result before the final answer.
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    let file = state["sessionFile"].as_str().expect("a session file");
    let entries: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let roles: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "toolResult", "assistant"]
    );
    let stored = entries
        .iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .unwrap();
    assert_eq!(stored["message"]["isError"], true, "{stored}");
    let stored_text = stored["message"]["content"][0]["text"].as_str().unwrap();
    assert!(
        stored_text.contains("rejected by the user"),
        "{stored_text}"
    );
    Ok(())
}

#[test]
fn apply_all_skips_the_questions_for_the_rest_of_the_run_only() -> anyhow::Result<()> {
    let edit = |path: &str, old: &str, new: &str| {
        json!({"toolCalls": [{"name": "edit", "arguments":
            {"path": path, "edits": [{"oldText": old, "newText": new}]}}]})
    };
    let script = json!({"turns": [
        edit("h1.txt", "one", "1"), edit("h2.txt", "two", "2"), {"text": "Both."},
        edit("h1.txt", "two", "2"), {"text": "Again."}]});
    let mut lsp = started(&script, PLAIN, json!({}))?;
    for name in ["h1.txt", "h2.txt"] {
        std::fs::write(lsp.project().join(name), "one two\n").unwrap();
    }
    let session = prompt(&mut lsp, json!({"text": "edit both"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    assert!(
        ask.params["message"].as_str().unwrap().contains("h1.txt"),
        "{ask}"
    );
    lsp.reply(&ask, json!({"title": "Apply all"}))?;
    let first = lsp.server_request("workspace/applyEdit")?;
    let h1 = lsp.uri("h1.txt");
    assert_eq!(
        edits_for(&first.params["edit"], &h1),
        json!([{"range": {"start": {"line": 0, "character": 0},
                          "end": {"line": 0, "character": 3}}, "newText": "1"}])
    );
    lsp.reply(&first, json!({"applied": true}))?;
    let second = lsp.server_request("workspace/applyEdit")?;
    assert_eq!(
        edits_for(&second.params["edit"], &lsp.uri("h2.txt")),
        json!([{"range": {"start": {"line": 0, "character": 4},
                          "end": {"line": 0, "character": 7}}, "newText": "2"}])
    );
    lsp.reply(&second, json!({"applied": true}))?;
    let events = lsp.next_run(&session)?;
    assert_eq!(answer_text(&events), "Both.");
    assert_eq!(lsp.received("window/showMessageRequest").len(), 1);
    // Not open, not written: the files are as they were.
    for name in ["h1.txt", "h2.txt"] {
        let text = std::fs::read_to_string(lsp.project().join(name)).unwrap();
        assert_eq!(text, "one two\n");
    }

    // The next run asks again.
    prompt(&mut lsp, json!({"session": session, "text": "once more"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    lsp.reply(&ask, json!({"title": "Apply"}))?;
    let third = lsp.server_request("workspace/applyEdit")?;
    lsp.reply(&third, json!({"applied": true}))?;
    let events = lsp.next_run(&session)?;
    assert_eq!(tool_end(&events, "edit")["event"]["isError"], false);
    assert_eq!(answer_text(&events), "Again.");
    Ok(())
}

#[test]
fn an_error_answer_or_a_dismissed_question_is_a_tool_error() -> anyhow::Result<()> {
    let edit = |path: &str| {
        json!({"toolCalls": [{"name": "edit", "arguments":
            {"path": path, "edits": [{"oldText": "a", "newText": "b"}]}}]})
    };
    let script =
        json!({"turns": [edit("k.rs"), {"text": "First."}, edit("k.rs"), {"text": "Second."}]});
    let mut lsp = started(&script, PLAIN, json!({}))?;
    open(&mut lsp, "k.rs", 1, "a\n")?;

    // Dismissed: the client answers the question with null.
    let session = prompt(&mut lsp, json!({"text": "edit"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    lsp.reply(&ask, Value::Null)?;
    let events = lsp.next_run(&session)?;
    let end = tool_end(&events, "edit");
    assert_eq!(end["event"]["isError"], true, "{end}");
    assert_eq!(answer_text(&events), "First.");
    assert!(lsp.received("workspace/applyEdit").is_empty());

    // A JSON-RPC error instead of an ApplyWorkspaceEditResponse.
    prompt(&mut lsp, json!({"session": session, "text": "again"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    lsp.reply(&ask, json!({"title": "Apply"}))?;
    let apply = lsp.server_request("workspace/applyEdit")?;
    lsp.reply_error(&apply, -32603, "the buffer is read-only")?;
    let events = lsp.next_run(&session)?;
    let end = tool_end(&events, "edit");
    assert_eq!(end["event"]["isError"], true, "{end}");
    assert!(
        end["event"]["text"]
            .as_str()
            .unwrap()
            .contains("the buffer is read-only"),
        "{end}"
    );
    assert_eq!(answer_text(&events), "Second.");
    Ok(())
}

/// The spec: `tool_end.diff` is "present whether or not it was applied: `isError` says".
#[test]
fn a_rejected_edit_still_reports_its_diff() -> anyhow::Result<()> {
    let mut lsp = started(&edit_script("j.txt", "one", "two", "Ok."), PLAIN, json!({}))?;
    std::fs::write(lsp.project().join("j.txt"), "one\n").unwrap();
    let session = prompt(&mut lsp, json!({"text": "edit"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    lsp.reply(&ask, json!({"title": "Reject"}))?;
    let events = lsp.next_run(&session)?;
    let end = tool_end(&events, "edit");
    assert_eq!(end["event"]["isError"], true, "{end}");
    let diff = end["event"]["diff"].as_str().unwrap_or_else(|| {
        panic!("tool_end of a rejected edit has no diff: {end}");
    });
    assert!(diff.contains("-") && diff.contains("two"), "{diff}");
    Ok(())
}
