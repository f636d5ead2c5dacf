//! The agent's language intelligence from the editor, through the real binary over stdio: a
//! stand-in editor that declared `tandem/diagnostics` and `tandem/languageRequest` answers
//! them as VS Code and Neovim do. The edit's tool result ends with what the editor reports
//! after it (new since just before, or fixed); the position tools are answered by the editor
//! at the columns it negotiated; an editor that fails to answer degrades the tool, not the run.

mod support;

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Value};
use support::lsp::{Buffer, ScriptedLsp};
use tandem_tests::lsp_client::ClientError;

const MAIN_PY: &str =
    "def greet(name: str) -> str:\n    return \"hi \" + name\n\nprint(greet(\"you\"))\n";

/// How the stand-in editor answers `tandem/diagnostics`.
#[derive(Clone, Copy, PartialEq)]
enum Reports {
    /// The diagnostics of the buffer's text: an error where `greet(1)` is called.
    Real,
    /// Never.
    Hang,
}

struct Editor {
    lsp: ScriptedLsp,
    buffer: Arc<Mutex<Buffer>>,
    requests: Arc<Mutex<Vec<(String, Value)>>>,
}

fn tool_call(name: &str, arguments: Value) -> Value {
    json!({"toolCalls": [{"name": name, "arguments": arguments}], "stopReason": "toolUse"})
}

fn range(a: (u32, u32), b: (u32, u32)) -> Value {
    json!({"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}})
}

/// The editor's diagnostics of `text`: a type error on each `greet(1)`, and a warning that is
/// always there (line 1).
fn diagnostics_of(text: &str) -> Vec<Value> {
    let mut out = vec![json!({"range": range((0, 4), (0, 9)), "severity": 2,
        "source": "Ruff", "code": "D103", "message": "Missing docstring in public function"})];
    for (line, content) in text.lines().enumerate() {
        if let Some(col) = content.find("greet(1)") {
            let col = col as u32 + 6;
            out.push(json!({"range": range((line as u32, col), (line as u32, col + 1)),
                "severity": 1, "source": "basedpyright", "code": "reportArgumentType",
                "message": "Argument of type \"Literal[1]\" cannot be assigned to parameter \"name\" of type \"str\""}));
        }
    }
    out
}

impl Editor {
    fn start(script: &Value, reports: Reports) -> Result<(Editor, String), ClientError> {
        let lsp = ScriptedLsp::start(script)?;
        let uri = lsp.uri("main.py");
        std::fs::write(lsp.project().join("main.py"), MAIN_PY).expect("write main.py");
        let buffer = Arc::new(Mutex::new(Buffer {
            uri: uri.clone(),
            text: MAIN_PY.to_string(),
            version: 1,
        }));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (edited, asked) = (buffer.clone(), requests.clone());
        let generation = Arc::new(Mutex::new(1u64));
        let lsp = lsp.with_handler(Box::new(move |request, out| {
            asked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((request.method.clone(), request.params.clone()));
            let mut buffer = edited.lock().unwrap_or_else(PoisonError::into_inner);
            let result = match request.method.as_str() {
                "tandem/diagnostics" if reports == Reports::Hang => return Ok(()),
                "tandem/diagnostics" => {
                    let mut generation = generation.lock().unwrap_or_else(PoisonError::into_inner);
                    // A newer report when asked for one after a generation (the edit's).
                    if request.params["after"].is_object() {
                        *generation += 1;
                    }
                    json!({"settled": true, "files": [{"uri": buffer.uri, "generation": *generation,
                        "diagnostics": diagnostics_of(&buffer.text)}]})
                }
                "tandem/languageRequest" => match request.params["method"].as_str() {
                    Some("textDocument/definition") => json!({"servers": 1, "result": [
                        {"uri": buffer.uri, "range": range((0, 4), (0, 9))}]}),
                    Some("textDocument/references") => json!({"servers": 1, "result": [
                        {"uri": buffer.uri, "range": range((0, 4), (0, 9))},
                        {"uri": buffer.uri, "range": range((3, 6), (3, 11))}]}),
                    _ => Value::Null,
                },
                "workspace/applyEdit" => buffer.apply_request(request, out)?,
                "window/showMessageRequest" => request.params["actions"][0].clone(),
                _ => Value::Null,
            };
            drop(buffer);
            out.reply(request, result)
        }));
        let mut editor = Editor {
            lsp,
            buffer,
            requests,
        };
        let options = json!({"model": "script/t", "editMode": "auto",
            "agentDir": editor.lsp.dir().display().to_string()});
        editor.lsp.initialize_with(
            json!({"general": {"positionEncodings": ["utf-16"]},
                "workspace": {"applyEdit": true},
                "experimental": {"tandem": {"events": true, "diagnostics": true,
                    "languageRequests": true}}}),
            options,
        )?;
        editor.lsp.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                "text": MAIN_PY}}),
        )?;
        Ok((editor, uri))
    }

    /// Runs a prompt to its end; the text of each tool result, in order, with its error flag.
    fn run(&mut self, text: &str) -> Result<Vec<(bool, String)>, ClientError> {
        let session = support::lsp::prompt(&mut self.lsp, json!({"text": text}))?;
        let events = self.lsp.next_run(&session)?;
        Ok(events
            .iter()
            .filter(|e| e["event"]["type"] == "tool_end")
            .map(|e| {
                (
                    e["event"]["isError"] == true,
                    e["event"]["text"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect())
    }

    fn asked(&self, method: &str) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    fn text(&self) -> String {
        self.buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .text
            .clone()
    }
}

#[test]
fn an_edit_reports_what_the_editor_sees_after_it_and_what_it_fixed() -> anyhow::Result<()> {
    let script = json!({"turns": [
        tool_call("edit", json!({"path": "main.py",
            "edits": [{"oldText": "greet(\"you\")", "newText": "greet(1)"}]})),
        tool_call("edit", json!({"path": "main.py",
            "edits": [{"oldText": "greet(1)", "newText": "greet(\"again\")"}]})),
        {"text": "ok"}]});
    let (mut editor, uri) = Editor::start(&script, Reports::Real)?;
    let results = editor.run("break it, then mend it")?;
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(
        results[0],
        (
            false,
            "Successfully replaced 1 block(s) in main.py.\n\n\
             New diagnostics in main.py after this change, from the editor:\n\
             main.py:4:13: error [basedpyright reportArgumentType] Argument of type \"Literal[1]\" \
             cannot be assigned to parameter \"name\" of type \"str\""
                .to_string()
        )
    );
    assert_eq!(
        results[1],
        (
            false,
            "Successfully replaced 1 block(s) in main.py.\n\n\
             No new errors or warnings in main.py (0 errors and 1 warning already there).\n\
             Fixed by this change (1): error [basedpyright reportArgumentType] Argument of type \
             \"Literal[1]\" cannot be assigned to parameter \"name\" of type \"str\""
                .to_string()
        )
    );
    assert_eq!(editor.text(), MAIN_PY.replace("\"you\"", "\"again\""));
    // Before each edit, the diagnostics now; after it, newer ones than the generation seen.
    let asked = editor.asked("tandem/diagnostics");
    assert_eq!(asked.len(), 4, "{asked:?}");
    assert_eq!(asked[0], json!({"uris": [uri]}));
    assert_eq!(asked[1]["uris"], json!([uri]));
    assert_eq!(asked[1]["after"], json!({uri.clone(): 1}));
    assert_eq!(asked[1]["waitMs"], 1500);
    assert_eq!(asked[1]["quietMs"], 250);
    assert_eq!(asked[3]["after"], json!({uri.clone(): 2}));
    Ok(())
}

#[test]
fn definition_and_references_come_from_the_editor() -> anyhow::Result<()> {
    let script = json!({"turns": [
        tool_call("definition", json!({"path": "main.py", "line": 4, "column": 8})),
        tool_call("references", json!({"path": "main.py", "line": 1, "column": 5})),
        {"text": "ok"}]});
    let (mut editor, uri) = Editor::start(&script, Reports::Real)?;
    let results = editor.run("where is greet?")?;
    assert_eq!(
        results,
        [
            (
                false,
                "main.py:1:5: def greet(name: str) -> str:".to_string()
            ),
            (
                false,
                "2 references in 1 file:\n\
                 main.py:1:5: def greet(name: str) -> str:\n\
                 main.py:4:7: print(greet(\"you\"))"
                    .to_string()
            ),
        ]
    );
    let asked = editor.asked("tandem/languageRequest");
    assert_eq!(
        asked[0],
        json!({"method": "textDocument/definition", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 3, "character": 7}}})
    );
    assert_eq!(asked[1]["method"], "textDocument/references");
    Ok(())
}

#[test]
fn an_editor_that_never_answers_diagnostics_costs_the_edit_its_report_not_the_run(
) -> anyhow::Result<()> {
    let script = json!({"turns": [
        tool_call("edit", json!({"path": "main.py",
            "edits": [{"oldText": "greet(\"you\")", "newText": "greet(1)"}]})),
        tool_call("diagnostics", json!({"path": "main.py"})),
        {"text": "ok"}]});
    let (mut editor, _) = Editor::start(&script, Reports::Hang)?;
    let results = editor.run("break it")?;
    assert_eq!(results.len(), 2, "{results:?}");
    let (edit_failed, edit) = &results[0];
    assert!(!edit_failed, "{edit}");
    assert!(
        edit.starts_with("Successfully replaced 1 block(s) in main.py.\n\n"),
        "{edit}"
    );
    assert!(
        edit.contains("could not be read") && edit.contains("did not answer"),
        "{edit}"
    );
    let (tool_failed, tool) = &results[1];
    assert!(tool_failed, "{tool}");
    assert!(tool.contains("did not answer"), "{tool}");
    // The edit itself landed.
    assert_eq!(editor.text(), MAIN_PY.replace("\"you\"", "1"));
    Ok(())
}
