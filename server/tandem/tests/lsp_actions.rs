//! Code actions, `workspace/executeCommand` and work-done progress, as an editor sees them: the
//! real `tandem lsp` over stdio, the scripted model (a script named as the model's baseUrl in a
//! temp agent dir), and a test client that answers the server's requests the way an editor
//! would: it applies `workspace/applyEdit` to its own copy of the buffer and sends `didChange`.

mod support;

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Value};
use support::lsp::{Buffer, ScriptedLsp};
use tandem_tests::lsp_client::{ClientError, Incoming, LspClient, Outbox};

const MAIN_RS: &str = "fn main() {\n    let x = totl;\n}\n";

/// The editor: the server, and the one open buffer, which the server's edits change.
struct Editor {
    lsp: ScriptedLsp,
    buffer: Arc<Mutex<Buffer>>,
    /// The answer to `tandem/diagnostics` (`None`: it is never answered).
    diagnostics: Arc<Mutex<Option<Value>>>,
}

impl Editor {
    /// Starts the server; its requests are answered as an editor would: `workspace/applyEdit`
    /// is applied to the buffer (and the change sent), `window/showMessageRequest` gets its
    /// first action, anything else `null`.
    fn start(script: &Value) -> Result<Editor, ClientError> {
        let lsp = ScriptedLsp::start(script)?;
        let buffer = Arc::new(Mutex::new(Buffer {
            uri: lsp.uri("main.rs"),
            text: String::new(),
            version: 0,
        }));
        let edited = Arc::clone(&buffer);
        let diagnostics = Arc::new(Mutex::new(None));
        let reported = Arc::clone(&diagnostics);
        let lsp = lsp.with_handler(Box::new(move |request, out| {
            answer(&edited, &reported, request, out)
        }));
        Ok(Editor {
            lsp,
            buffer,
            diagnostics,
        })
    }

    /// Starts the server with `script`, initializes it (with the event stream or not) and opens
    /// main.rs holding [`MAIN_RS`]; the editor and main.rs's URI.
    fn with_main_rs(script: &Value, events: bool) -> Result<(Editor, String), ClientError> {
        let mut lsp = Editor::start(script)?;
        let opts = options(&lsp);
        lsp.initialize(events, opts)?;
        lsp.open(MAIN_RS)?;
        let uri = lsp.uri();
        Ok((lsp, uri))
    }

    fn buffer(&self) -> std::sync::MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn uri(&self) -> String {
        self.buffer().uri.clone()
    }

    fn text(&self) -> String {
        self.buffer().text.clone()
    }

    fn initialize(&mut self, events: bool, options: Value) -> Result<(), ClientError> {
        self.initialize_declaring(json!({"events": events}), options)
    }

    /// Initializes with `tandem` as the client's `experimental.tandem`.
    fn initialize_declaring(&mut self, tandem: Value, options: Value) -> Result<(), ClientError> {
        self.lsp.initialize_with(
            json!({"general": {"positionEncodings": ["utf-16"]},
                "workspace": {"applyEdit": true},
                "window": {"workDoneProgress": true},
                "experimental": {"tandem": tandem}}),
            options,
        )?;
        Ok(())
    }

    /// `tandem/diagnostics` is answered with `result` (`None`: never).
    fn report_diagnostics(&self, result: Option<Value>) {
        *self
            .diagnostics
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = result;
    }

    fn open(&mut self, text: &str) -> Result<(), ClientError> {
        std::fs::write(self.lsp.project().join("main.rs"), text).expect("write main.rs");
        let uri = {
            let mut buffer = self.buffer();
            buffer.text = text.to_string();
            buffer.version = 1;
            buffer.uri.clone()
        };
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1,
                "text": text}}),
        )
    }

    /// The params of every message the server sent with `method`.
    fn received_params(&self, method: &str) -> Vec<Value> {
        let received = self.received(method);
        received.iter().map(|m| m.params.clone()).collect()
    }

    /// Takes the first message with `method` (sent so far or to come).
    fn first(&mut self, method: &str) -> Result<Incoming, ClientError> {
        self.wait_for(method, |m| m.method == method)
    }
}

impl Deref for Editor {
    type Target = LspClient;

    fn deref(&self) -> &LspClient {
        &self.lsp
    }
}

impl DerefMut for Editor {
    fn deref_mut(&mut self) -> &mut LspClient {
        &mut self.lsp
    }
}

/// The editor's answer to a server request.
fn answer(
    buffer: &Mutex<Buffer>,
    diagnostics: &Mutex<Option<Value>>,
    request: &Incoming,
    out: &mut Outbox<'_>,
) -> Result<(), ClientError> {
    let result = match request.method.as_str() {
        "tandem/diagnostics" => {
            let reported = diagnostics.lock().unwrap_or_else(PoisonError::into_inner);
            match reported.clone() {
                Some(result) => result,
                None => return Ok(()),
            }
        }
        "workspace/applyEdit" => buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .apply_request(request, out)?,
        "window/showMessageRequest" => request.params["actions"][0].clone(),
        _ => Value::Null,
    };
    out.reply(request, result)
}

fn options(editor: &Editor) -> Value {
    json!({"model": "script/t", "editMode": "auto",
        "agentDir": editor.lsp.dir().display().to_string()})
}

fn range(a: (u32, u32), b: (u32, u32)) -> Value {
    json!({"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}})
}

fn totl() -> Value {
    json!({"range": range((1, 12), (1, 16)), "severity": 1, "code": "E0425",
        "source": "rustc", "message": "cannot find value `totl` in this scope"})
}

#[test]
fn listing_actions_needs_no_model_call() -> anyhow::Result<()> {
    let (mut lsp, uri) = Editor::with_main_rs(&json!({"turns": [{"text": "never asked"}]}), true)?;
    let r = lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    )?;
    let actions = r.as_array().expect("actions");
    let fix_title = "Ask Tandem to fix: cannot find value `totl` in this scope";
    assert_eq!(
        actions[0],
        json!({"title": fix_title, "kind": "quickfix", "diagnostics": [totl()],
            "command": {"title": fix_title, "command": "tandem.fixDiagnostic",
                "arguments": [{"uri": uri, "range": range((1, 12), (1, 16)),
                    "message": "cannot find value `totl` in this scope", "severity": 1,
                    "source": "rustc", "code": "E0425"}]}})
    );
    let rest: Vec<(&str, &str, &str)> = actions[1..]
        .iter()
        .map(|a| {
            (
                a["title"].as_str().unwrap(),
                a["kind"].as_str().unwrap(),
                a["command"]["command"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rest,
        [
            (
                "Ask Tandem to explain `main`",
                "refactor.tandem",
                "tandem.explain"
            ),
            (
                "Ask Tandem to document `main`",
                "refactor.tandem",
                "tandem.document"
            ),
            (
                "Ask Tandem to write tests for `main`",
                "refactor.tandem",
                "tandem.writeTests"
            ),
        ]
    );
    assert_eq!(
        actions[1]["command"]["arguments"],
        json!([{"uri": uri, "range": range((0, 0), (2, 1)), "symbol": "main"}])
    );
    // A selection: the actions act on it; a diagnostic out of range gets no quickfix.
    let r = lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((0, 0), (0, 9)),
            "context": {"diagnostics": [totl()], "only": ["refactor"]}}),
    )?;
    let titles: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Ask Tandem to explain the selection",
            "Ask Tandem to document the selection",
            "Ask Tandem to write tests for the selection"
        ]
    );
    let resolved = lsp.request("codeAction/resolve", actions[0].clone())?;
    assert_eq!(resolved, actions[0]);
    // No session, no run: nothing but the answers arrived.
    let r = lsp.request("tandem/models/list", json!({}))?;
    assert!(r.is_array(), "{r}");
    assert!(lsp.seen().is_empty(), "{:?}", lsp.seen());
    Ok(())
}

#[test]
fn running_fix_edits_the_buffer_with_progress_and_a_summary() -> anyhow::Result<()> {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "main.rs"}}], "stopReason": "toolUse"},
        {"toolCalls": [{"name": "edit", "arguments": {"path": "main.rs",
            "edits": [{"oldText": "totl", "newText": "total"}]}}], "stopReason": "toolUse"},
        {"text": "Fixed the typo: `totl` is now `total`.\nNothing else changed."}]});
    // An editor without the event stream (Helix): the answer comes as a message.
    let (mut lsp, uri) = Editor::with_main_rs(&script, false)?;
    let r = lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    )?;
    let command = r[0]["command"].clone();
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    )?;
    let session = r["session"].clone();
    assert!(session.is_string(), "{r}");
    let shown = lsp.first("window/showMessage")?;
    assert_eq!(
        shown.params,
        json!({"type": 3,
            "message": "Tandem: Fixed the typo: `totl` is now `total`.\nNothing else changed."})
    );
    assert_eq!(lsp.text(), "fn main() {\n    let x = total;\n}\n");
    assert_eq!(lsp.received("workspace/applyEdit").len(), 1);
    let created = lsp.received_params("window/workDoneProgress/create");
    assert_eq!(created.len(), 1);
    let token = created[0]["token"].clone();
    let progress: Vec<Value> = lsp
        .received_params("$/progress")
        .into_iter()
        .map(|p| {
            assert_eq!(p["token"], token);
            p["value"].clone()
        })
        .collect();
    assert_eq!(
        progress,
        [
            json!({"kind": "begin", "title": "Tandem", "cancellable": true,
                "message": "Ask Tandem to fix: cannot find value `totl` in this scope"}),
            json!({"kind": "report", "cancellable": true, "message": "Read main.rs"}),
            json!({"kind": "report", "cancellable": true, "message": "Edit main.rs"}),
            json!({"kind": "end", "message": "Fixed the typo: `totl` is now `total`."}),
        ]
    );
    // The model got the diagnostic and where it is, as context beside the command's request.
    let (user, context) = support::lsp::prompt_and_context(&mut lsp, &session)?;
    assert!(
        user.starts_with("Fix this problem (rustc) at line 2"),
        "{user}"
    );
    assert!(
        context.contains("cannot find value `totl` in this scope"),
        "{context}"
    );
    assert!(context.contains("main.rs"), "{context}");
    assert!(context.contains("let x = totl;"), "{context}");
    assert!(lsp.received("tandem/event").is_empty());
    Ok(())
}

/// A client with the event stream has the answer in the chat: no `window/showMessage` repeats
/// it, and the user's message in the events is the request alone.
#[test]
fn a_command_answers_once_to_a_client_with_events() -> anyhow::Result<()> {
    let (mut lsp, uri) = Editor::with_main_rs(&json!({"turns": [{"text": "It adds one."}]}), true)?;
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.explain", "arguments": [{"uri": uri,
            "range": range((0, 0), (2, 1)), "symbol": "main"}]}),
    )?;
    let session = r["session"].as_str().unwrap_or_default().to_string();
    let events = lsp.wait_settled(&session, 1)?;
    let user: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"]["role"] == "user" || e["event"]["message"]["role"] == "user")
        .collect();
    assert_eq!(user.len(), 2, "message_start and message_end: {events:?}");
    let text = user[0]["event"]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Explain the code above"), "{text}");
    assert!(!text.contains("<editor-context>"), "{text}");
    let end = &user[1]["event"]["message"]["content"];
    assert!(!end.to_string().contains("<editor-context>"), "{end}");
    // No event for the hidden context message.
    assert!(
        events
            .iter()
            .all(|e| e["event"]["role"] != "custom" && e["event"]["message"]["role"] != "custom"),
        "{events:?}"
    );
    let progress_end = lsp.first("$/progress")?;
    assert_eq!(progress_end.params["value"]["kind"], "begin");
    assert!(
        lsp.received("window/showMessage").is_empty(),
        "{:?}",
        lsp.received("window/showMessage")
    );
    Ok(())
}

#[test]
fn cancelling_the_progress_token_aborts_the_run() -> anyhow::Result<()> {
    let slow = json!({"chunkSize": 1, "delayMs": 100,
        "turns": [{"text": "a very slow explanation that would take several seconds"}]});
    let (mut lsp, uri) = Editor::with_main_rs(&slow, false)?;
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.explain", "arguments": [{"uri": uri,
            "range": range((0, 0), (2, 1)), "symbol": "main"}]}),
    )?;
    assert!(r["session"].is_string(), "{r}");
    let begin = lsp.first("$/progress")?;
    assert_eq!(begin.params["value"]["kind"], "begin");
    assert_eq!(
        begin.params["value"]["message"],
        "Ask Tandem to explain `main`"
    );
    let token = begin.params["token"].clone();
    lsp.notify("window/workDoneProgress/cancel", json!({"token": token}))?;
    let shown = lsp.first("window/showMessage")?;
    assert_eq!(shown.params["message"], "Tandem: Stopped.");
    let last = lsp.received_params("$/progress").pop().unwrap();
    assert_eq!(last["value"], json!({"kind": "end", "message": "Stopped."}));
    assert!(lsp.received("tandem/event").is_empty());
    Ok(())
}

#[test]
fn bad_command_arguments_name_the_field() -> anyhow::Result<()> {
    let mut lsp = Editor::start(&json!({"turns": [{"text": "never asked"}]}))?;
    let opts = options(&lsp);
    lsp.initialize(false, opts)?;
    let r = lsp.request_response(
        "workspace/executeCommand",
        json!({"command": "tandem.fixDiagnostic",
            "arguments": [{"uri": "file:///x.rs", "message": "m"}]}),
    )?;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "arguments[0].range", "{r}");
    let r = lsp.request_response(
        "workspace/executeCommand",
        json!({"command": "tandem.explain", "arguments": [{"uri": 4,
            "range": range((0, 0), (0, 1))}]}),
    )?;
    assert_eq!(r["error"]["data"]["field"], "arguments[0].uri", "{r}");
    let r = lsp.request_response(
        "workspace/executeCommand",
        json!({"command": "tandem.nope", "arguments": []}),
    )?;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "command", "{r}");
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.abort"}),
    )?;
    assert_eq!(r, Value::Null);
    Ok(())
}

#[test]
fn a_prompt_run_reports_progress_without_a_summary_message() -> anyhow::Result<()> {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "main.rs"}}], "stopReason": "toolUse"},
        {"text": "It has a typo."}]});
    let mut lsp = Editor::start(&script)?;
    let opts = options(&lsp);
    lsp.initialize(false, opts)?;
    lsp.open(MAIN_RS)?;
    let r = lsp.request(
        "tandem/prompt",
        json!({"text": "what is wrong here?\nthanks"}),
    )?;
    assert_eq!(r["queued"], false, "{r}");
    lsp.wait_until("the progress to end", |c| {
        c.received("$/progress")
            .iter()
            .any(|p| p.params["value"]["kind"] == "end")
    })?;
    let values: Vec<Value> = lsp
        .received_params("$/progress")
        .into_iter()
        .map(|p| p["value"].clone())
        .collect();
    assert_eq!(
        values,
        [
            json!({"kind": "begin", "title": "Tandem", "cancellable": true,
                "message": "what is wrong here?"}),
            json!({"kind": "report", "cancellable": true, "message": "Read main.rs"}),
            json!({"kind": "end", "message": "It has a typo."}),
        ]
    );
    lsp.request("tandem/models/list", json!({}))?;
    assert!(lsp.received("window/showMessage").is_empty());
    Ok(())
}

/// A prompt that asks for diagnostics without carrying any gets those of the last codeAction.
#[test]
fn a_prompt_uses_the_diagnostics_of_the_last_code_action() -> anyhow::Result<()> {
    let (mut lsp, uri) = Editor::with_main_rs(&json!({"turns": [{"text": "ok"}]}), true)?;
    lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    )?;
    let r = lsp.request(
        "tandem/prompt",
        json!({"text": "fix it", "context": {"uri": uri, "includeDiagnostics": true}}),
    )?;
    let session = r["session"].clone();
    let user = lsp.wait_for("the user message", |m| {
        m.params["session"] == session && m.params["event"]["role"] == "user"
    })?;
    // The user's own text in the events; the diagnostics went to the model beside it.
    assert_eq!(user.params["event"]["text"], "fix it");
    lsp.wait_settled(session.as_str().unwrap_or_default(), 1)?;
    let (text, context) = support::lsp::prompt_and_context(&mut lsp, &session)?;
    assert_eq!(text, "fix it");
    assert!(
        context.contains("cannot find value `totl` in this scope"),
        "{context}"
    );
    Ok(())
}

/// An editor that answers `tandem/diagnostics`: "Ask Tandem to fix" gives the model the whole
/// file's diagnostics from the editor (asked when the run starts), not only the one fixed.
#[test]
fn a_fix_reads_the_files_diagnostics_from_an_editor_that_reports_them() -> anyhow::Result<()> {
    let mut lsp = Editor::start(&json!({"turns": [{"text": "ok"}]}))?;
    let opts = options(&lsp);
    lsp.initialize_declaring(json!({"events": true, "diagnostics": true}), opts)?;
    let text = "fn main() {\n    let x = totl;\n    let unused = 1;\n}\n\nfn other() { nope }\n";
    lsp.open(text)?;
    let uri = lsp.uri();
    lsp.report_diagnostics(Some(
        json!({"settled": true, "files": [{"uri": uri, "generation": 7,
        "diagnostics": [totl(),
            {"range": range((2, 8), (2, 14)), "severity": 2, "source": "rustc",
             "message": "unused variable: `unused`"},
            {"range": range((5, 13), (5, 17)), "severity": 1, "source": "rustc",
             "message": "cannot find value `nope` in this scope"}]}]}),
    ));
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.fixDiagnostic", "arguments": [{"uri": uri,
            "range": range((1, 12), (1, 16)), "severity": 1, "source": "rustc",
            "message": "cannot find value `totl` in this scope"}]}),
    )?;
    let session = r["session"].clone();
    lsp.wait_settled(session.as_str().unwrap_or_default(), 1)?;
    let asked = lsp.received_params("tandem/diagnostics");
    assert_eq!(asked, vec![json!({"uris": [uri]})]);
    let (_, context) = support::lsp::prompt_and_context(&mut lsp, &session)?;
    assert!(
        context.contains(
            "Diagnostics in range:\n\
             - line 2: error E0425 (rustc): cannot find value `totl` in this scope\n\
             - line 3: warning (rustc): unused variable: `unused`\n\
             Elsewhere in this file: 1 error (line 6)\n"
        ),
        "{context}"
    );
    Ok(())
}

/// An editor that declared `tandem/diagnostics` but does not answer costs the run's start a
/// second at most: the context falls back on the last code action's diagnostics.
#[test]
fn a_prompt_whose_editor_does_not_report_diagnostics_uses_the_code_actions() -> anyhow::Result<()> {
    let mut lsp = Editor::start(&json!({"turns": [{"text": "ok"}]}))?;
    let opts = options(&lsp);
    lsp.initialize_declaring(json!({"events": true, "diagnostics": true}), opts)?;
    lsp.open(MAIN_RS)?;
    let uri = lsp.uri();
    lsp.report_diagnostics(None);
    lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    )?;
    let r = lsp.request(
        "tandem/prompt",
        json!({"text": "fix it", "context": {"uri": uri, "includeDiagnostics": true}}),
    )?;
    let session = r["session"].clone();
    lsp.wait_settled(session.as_str().unwrap_or_default(), 1)?;
    assert_eq!(lsp.received("tandem/diagnostics").len(), 1);
    let (_, context) = support::lsp::prompt_and_context(&mut lsp, &session)?;
    assert!(
        context.contains("cannot find value `totl` in this scope"),
        "{context}"
    );
    // A prompt that carries its own diagnostics is not asked about.
    let r = lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "and this", "context": {"uri": uri,
            "includeDiagnostics": true, "diagnostics": [totl()]}}),
    )?;
    assert_eq!(r["queued"], false, "{r}");
    lsp.wait_settled(session.as_str().unwrap_or_default(), 2)?;
    assert_eq!(lsp.received("tandem/diagnostics").len(), 1);
    Ok(())
}

/// editors/helix/languages.toml, parsed.
fn helix_config() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/helix/languages.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_helix_like_client_gets_fixes_applied_and_commands_refused_with_the_helix_settings(
) -> anyhow::Result<()> {
    // Helix's capabilities: applyEdit and progress, no change annotations, no
    // showMessageRequest, no tandem events.
    let script = json!({"turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "cargo check"}}], "stopReason": "toolUse"},
        {"toolCalls": [{"name": "edit", "arguments": {"path": "main.rs",
            "edits": [{"oldText": "totl", "newText": "total"}]}}], "stopReason": "toolUse"},
        {"text": "Fixed the typo."}]});
    let mut lsp = Editor::start(&script)?;
    // The settings are under `tandem` there (tests/helix.rs checks the file itself).
    let mut opts = helix_config()["language-server"]["tandem"]["config"].clone();
    opts["tandem"]["model"] = json!("script/t");
    opts["tandem"]["agentDir"] = json!(lsp.lsp.dir().display().to_string());
    lsp.initialize(false, opts)?;
    lsp.open(MAIN_RS)?;
    let uri = lsp.uri();
    let r = lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    )?;
    let command = r[0]["command"].clone();
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    )?;
    assert!(r["session"].is_string(), "{r}");
    let shown = lsp.first("window/showMessage")?;
    assert_eq!(shown.params["message"], "Tandem: Fixed the typo.");
    assert_eq!(lsp.text(), "fn main() {\n    let x = total;\n}\n");
    assert!(lsp.received("window/showMessageRequest").is_empty());
    assert!(lsp.received("tandem/event").is_empty());
    assert_eq!(lsp.received("window/workDoneProgress/create").len(), 1);
    // The command was refused without asking: the session file holds the tool error.
    let sessions = lsp.lsp.dir().join("sessions");
    let stored: String = walk(&sessions)
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        stored.contains("bash is disabled (bashPermission: deny)"),
        "{stored}"
    );
    Ok(())
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
