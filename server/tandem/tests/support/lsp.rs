//! `tandem lsp` for a test, on tandem-tests' LSP client: in a temp agent dir whose `script/t`
//! model replays a script ([`ScriptedLsp`]: no mock server, no network), or in a [`Sandbox`]
//! ([`sandbox_lsp`]). And a few of Tandem's requests as one call each.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use tandem_tests::lsp_client::{ClientError, Handler, Incoming, LspClient, Outbox};

use super::process::{in_sandbox, HANG_GUARD};
use super::{Sandbox, MODEL};

/// How long any one wait on a [`ScriptedLsp`] may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// `file://` URI of an absolute path (no characters needing escapes in tests).
pub fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// `initialize` (then `initialized`) with the workspace folder `root`, `capabilities` and
/// `initializationOptions`; the server's result.
pub fn initialize(
    lsp: &mut LspClient,
    root: &Path,
    capabilities: Value,
    options: Value,
) -> Result<Value, ClientError> {
    let uri = file_uri(root);
    lsp.initialize(json!({"processId": null, "rootUri": uri,
        "workspaceFolders": [{"uri": uri, "name": "project"}],
        "capabilities": capabilities, "initializationOptions": options}))
}

/// The capabilities of a client with Tandem's event stream that offers `encodings` as position
/// encodings.
pub fn event_client(encodings: Value) -> Value {
    json!({"general": {"positionEncodings": encodings},
        "experimental": {"tandem": {"events": true}}})
}

/// A handler answering every server request with `answer(method, params)`: an editor whose
/// answer depends on the question only.
pub fn answers(mut answer: impl FnMut(&str, &Value) -> Value + Send + 'static) -> Handler {
    Box::new(move |request, out| {
        let result = answer(&request.method, &request.params);
        out.reply(request, result)
    })
}

/// `tandem lsp` in its own temp dir: the agent dir, whose models.json has the `script/t` model
/// replay a script (the built-in `scripted` api, the script file as baseUrl), and an empty
/// `project` folder, the server's cwd. `HOME` is the temp dir; the agent dir is named by
/// `initializationOptions` ([`ScriptedLsp::options`]), not the environment. Derefs to the
/// client.
pub struct ScriptedLsp {
    // Dropped first: the server ends before its directory goes.
    client: LspClient,
    dir: tempfile::TempDir,
}

impl ScriptedLsp {
    /// Starts the server (not initialized yet) with `script`.
    pub fn start(script: &Value) -> Result<ScriptedLsp, ClientError> {
        ScriptedLsp::start_with(script, &[])
    }

    /// Starts `tandem lsp <args>` (not initialized yet) with `script`.
    pub fn start_with(script: &Value, args: &[&str]) -> Result<ScriptedLsp, ClientError> {
        let dir = tempfile::tempdir().expect("temp dir");
        let script_path = dir.path().join("script.json");
        std::fs::write(&script_path, script.to_string()).expect("write the script");
        let models = json!({"providers": {"script": {"api": "scripted", "apiKey": "none",
            "baseUrl": script_path.display().to_string(), "models": [{"id": "t"}, {"id": "u"}]}}});
        std::fs::write(dir.path().join("models.json"), models.to_string()).expect("models.json");
        std::fs::create_dir_all(dir.path().join("project")).expect("project folder");
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command
            .arg("lsp")
            .args(args)
            .current_dir(dir.path().join("project"))
            .env("HOME", dir.path())
            .env_remove("PI_CODING_AGENT_DIR")
            .stderr(Stdio::piped());
        let client = LspClient::spawn(command)?.with_timeout(WAIT);
        Ok(ScriptedLsp { client, dir })
    }

    /// Starts the server with `script` and initializes it as an [`event_client`] offering
    /// UTF-16, with [`ScriptedLsp::options`].
    pub fn started(script: &Value) -> Result<ScriptedLsp, ClientError> {
        let mut lsp = ScriptedLsp::start(script)?;
        let options = lsp.options();
        lsp.initialize_with(event_client(json!(["utf-16"])), options)?;
        Ok(lsp)
    }

    /// Server requests go to `handler` as they arrive.
    pub fn with_handler(mut self, handler: Handler) -> ScriptedLsp {
        self.client = self.client.with_handler(handler);
        self
    }

    /// The temp dir, which is the agent dir.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The project folder: the server's cwd and workspace root.
    pub fn project(&self) -> PathBuf {
        self.dir().join("project")
    }

    /// The URI of `name` in the project.
    pub fn uri(&self, name: &str) -> String {
        file_uri(&self.project().join(name))
    }

    /// `initializationOptions` choosing the script's model in this agent dir.
    pub fn options(&self) -> Value {
        json!({"model": "script/t", "agentDir": self.dir().display().to_string()})
    }

    /// `initialize` over the project with `capabilities` and `options`.
    pub fn initialize_with(
        &mut self,
        capabilities: Value,
        options: Value,
    ) -> Result<Value, ClientError> {
        let root = self.project();
        initialize(&mut self.client, &root, capabilities, options)
    }
}

impl Deref for ScriptedLsp {
    type Target = LspClient;

    fn deref(&self) -> &LspClient {
        &self.client
    }
}

impl DerefMut for ScriptedLsp {
    fn deref_mut(&mut self) -> &mut LspClient {
        &mut self.client
    }
}

/// `tandem lsp` in `sandbox`, initialized by a client with `applyEdit`, versioned document
/// changes, no change annotations, `showMessage` actions and the event stream; `options` are
/// merged over the sandbox's model and agent dir. Server requests are left to the test; stderr
/// is collected. Each wait is guarded by [`HANG_GUARD`].
pub fn sandbox_lsp(sandbox: &Sandbox, options: Value) -> Result<LspClient, ClientError> {
    sandbox_lsp_args(sandbox, &[], options)
}

/// [`sandbox_lsp`] with more arguments after `tandem lsp`.
pub fn sandbox_lsp_args(
    sandbox: &Sandbox,
    args: &[&str],
    options: Value,
) -> Result<LspClient, ClientError> {
    let mut all = vec!["lsp"];
    all.extend_from_slice(args);
    let mut cmd = in_sandbox(sandbox, &all);
    cmd.stderr(Stdio::piped());
    let mut lsp = LspClient::spawn(cmd)?.with_timeout(HANG_GUARD);
    let mut merged = json!({"model": MODEL, "agentDir": sandbox.agent_dir.display().to_string()});
    if let (Some(base), Some(extra)) = (merged.as_object_mut(), options.as_object()) {
        base.extend(extra.clone());
    }
    initialize(
        &mut lsp,
        &sandbox.cwd,
        json!({"workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
            "window": {"showMessage": {"messageActionItem": {}}},
            "experimental": {"tandem": {"events": true}}}),
        merged,
    )?;
    Ok(lsp)
}

/// What the server wrote to stderr; every starter here collects it.
pub fn stderr_of(lsp: &LspClient) -> String {
    lsp.stderr().expect("the server's stderr is collected")
}

/// Prompts with `params` and checks a run started (not queued); the session.
pub fn prompt(lsp: &mut LspClient, params: Value) -> Result<String, ClientError> {
    let started = lsp.request("tandem/prompt", params)?;
    assert_eq!(started["queued"], false, "{started}");
    Ok(session_of(&started))
}

/// A new session; its id.
pub fn new_session(lsp: &mut LspClient) -> Result<String, ClientError> {
    let created = lsp.request("tandem/sessions/new", json!({}))?;
    Ok(session_of(&created))
}

/// `tandem/state` of `session`.
pub fn state(lsp: &mut LspClient, session: &str) -> Result<Value, ClientError> {
    lsp.request("tandem/state", json!({"session": session}))
}

/// The session's file, from `tandem/state`.
pub fn session_file(lsp: &mut LspClient, session: &str) -> Result<PathBuf, ClientError> {
    let state = state(lsp, session)?;
    let file = state["sessionFile"].as_str();
    Ok(file
        .unwrap_or_else(|| panic!("no session file: {state}"))
        .into())
}

/// The last user message of `session`'s file and the hidden editor context written just before
/// it (the file's `custom_message` entry the model read before the prompt).
pub fn prompt_and_context(
    lsp: &mut LspClient,
    session: &Value,
) -> anyhow::Result<(String, String)> {
    let file = session_file(lsp, session.as_str().unwrap_or_default())?;
    let lines: Vec<Value> = std::fs::read_to_string(&file)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let user = lines
        .iter()
        .rev()
        .find(|l| l["type"] == "message" && l["message"]["role"] == "user")
        .unwrap_or_else(|| panic!("no user message in {lines:?}"));
    let context = lines
        .iter()
        .find(|l| l["id"] == user["parentId"])
        .unwrap_or_else(|| panic!("no entry before the prompt in {lines:?}"));
    assert_eq!(context["type"], "custom_message", "{context}");
    assert_eq!(context["customType"], "tandem.promptContext", "{context}");
    assert_eq!(context["display"], false, "{context}");
    Ok((
        super::content_text(&user["message"]["content"], "\n"),
        super::content_text(&context["content"], "\n"),
    ))
}

/// The `session` of a result that names one.
fn session_of(result: &Value) -> String {
    let session = result["session"].as_str();
    session
        .unwrap_or_else(|| panic!("no session in {result}"))
        .to_string()
}

/// The text of each assistant message in `events` (`tandem/event` params), from its
/// `text_delta`s, in order.
pub fn assistant_texts(events: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for params in events {
        let event = &params["event"];
        match event["type"].as_str() {
            Some("message_start") if event["role"] == "assistant" => {
                current = Some(String::new());
            }
            Some("text_delta") => {
                if let Some(text) = current.as_mut() {
                    text.push_str(event["delta"].as_str().unwrap_or_default());
                }
            }
            Some("message_end") => {
                if let Some(text) = current.take() {
                    out.push(text);
                }
            }
            _ => {}
        }
    }
    out
}

/// An editor's copy of one open document, as the stand-in editors of the tests keep it.
pub struct Buffer {
    pub uri: String,
    pub text: String,
    pub version: i64,
}

impl Buffer {
    /// Applies a WorkspaceEdit's text edits for this document (`changes` and `documentChanges`;
    /// ASCII text: characters are bytes) and counts a new version.
    pub fn apply(&mut self, edit: &Value) {
        let mut edits: Vec<Value> = edit["changes"][&self.uri]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for change in edit["documentChanges"].as_array().into_iter().flatten() {
            if change["textDocument"]["uri"] == self.uri.as_str() {
                edits.extend(change["edits"].as_array().cloned().unwrap_or_default());
            }
        }
        let offset = |text: &str, p: &Value| {
            let line = p["line"].as_u64().expect("a line") as usize;
            let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
            start + p["character"].as_u64().expect("a character") as usize
        };
        let mut spans: Vec<(usize, usize, String)> = edits
            .iter()
            .map(|e| {
                let a = offset(&self.text, &e["range"]["start"]);
                let b = offset(&self.text, &e["range"]["end"]);
                let new = e["newText"].as_str().expect("newText").to_string();
                (a, b, new)
            })
            .collect();
        spans.sort_by_key(|s| std::cmp::Reverse(s.0));
        for (a, b, new) in spans {
            self.text.replace_range(a..b, &new);
        }
        self.version += 1;
    }

    /// Answers `workspace/applyEdit` as an editor does: applies the edit, tells the server the
    /// new text (`textDocument/didChange`, whole document), and returns `{"applied": true}`.
    pub fn apply_request(
        &mut self,
        request: &Incoming,
        out: &mut Outbox<'_>,
    ) -> Result<Value, ClientError> {
        self.apply(&request.params["edit"]);
        out.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": [{"text": self.text}]}),
        )?;
        Ok(json!({"applied": true}))
    }
}
