//! Code actions, `workspace/executeCommand` and work-done progress, as an editor sees them: the
//! real `tandem lsp` over stdio, the scripted model (a script named as the model's baseUrl in a
//! temp agent dir), and a test client that answers the server's requests the way an editor
//! would: it applies `workspace/applyEdit` to its own copy of the buffer and sends `didChange`.

mod lsp_support;

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use lsp_support::read_message;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(20);
const MAIN_RS: &str = "fn main() {\n    let x = totl;\n}\n";

/// The editor: the server process, what it sent, and the one open buffer.
struct Lsp {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    seen: Vec<Value>,
    uri: String,
    text: String,
    version: i64,
    dir: tempfile::TempDir,
}

impl Lsp {
    fn start(script: &Value) -> Lsp {
        let dir = tempfile::tempdir().unwrap();
        let script_path = dir.path().join("script.json");
        std::fs::write(&script_path, script.to_string()).unwrap();
        let models = json!({"providers": {"script": {"api": "scripted", "apiKey": "none",
            "baseUrl": script_path.display().to_string(), "models": [{"id": "t"}]}}});
        std::fs::write(dir.path().join("models.json"), models.to_string()).unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .arg("lsp")
            .current_dir(dir.path().join("project"))
            .env("HOME", dir.path())
            .env_remove("PI_CODING_AGENT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut reader) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        let uri = format!("file://{}", dir.path().join("project/main.rs").display());
        Lsp {
            child,
            stdin,
            incoming,
            next_id: 0,
            seen: Vec::new(),
            uri,
            text: String::new(),
            version: 0,
            dir,
        }
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn write(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.write(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message; server requests are answered as an editor would, and everything is
    /// recorded in `seen`.
    fn pump(&mut self, deadline: Instant) -> Value {
        let msg = self
            .incoming
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the server went quiet");
        if let (Some(id), Some(method)) = (msg.get("id"), msg["method"].as_str()) {
            let result = match method {
                "workspace/applyEdit" => {
                    self.apply(&msg["params"]["edit"]);
                    json!({"applied": true})
                }
                "window/showMessageRequest" => msg["params"]["actions"][0].clone(),
                _ => Value::Null,
            };
            self.write(json!({"jsonrpc": "2.0", "id": id, "result": result}));
        }
        self.seen.push(msg.clone());
        msg
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + WAIT;
        loop {
            let msg = self.pump(deadline);
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
        }
    }

    /// Waits for (or finds among those seen) the first message whose method is `method`.
    fn wait_for(&mut self, method: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(m) = self.seen.iter().find(|m| m["method"] == method) {
                return m.clone();
            }
            self.pump(deadline);
        }
    }

    fn received(&self, method: &str) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == method)
            .map(|m| m["params"].clone())
            .collect()
    }

    fn initialize(&mut self, events: bool, options: Value) {
        let root = format!("file://{}", self.dir().join("project").display());
        let r = self.request(
            "initialize",
            json!({"processId": null, "rootUri": root, "initializationOptions": options,
                "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                    "workspace": {"applyEdit": true},
                    "window": {"workDoneProgress": true},
                    "experimental": {"tandem": {"events": events}}}}),
        );
        assert!(r.get("error").is_none(), "{r}");
        self.notify("initialized", json!({}));
    }

    fn open(&mut self, text: &str) {
        std::fs::write(self.dir().join("project/main.rs"), text).unwrap();
        self.text = text.to_string();
        self.version = 1;
        let uri = self.uri.clone();
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1,
                "text": text}}),
        );
    }

    /// Applies a WorkspaceEdit's text edits to the buffer (ASCII text: characters are bytes)
    /// and tells the server, as an editor does.
    fn apply(&mut self, edit: &Value) {
        let mut edits: Vec<Value> = edit["changes"][&self.uri]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for dc in edit["documentChanges"].as_array().into_iter().flatten() {
            if dc["textDocument"]["uri"] == self.uri.as_str() {
                edits.extend(dc["edits"].as_array().cloned().unwrap_or_default());
            }
        }
        let offset = |text: &str, p: &Value| {
            let line = p["line"].as_u64().unwrap() as usize;
            let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
            start + p["character"].as_u64().unwrap() as usize
        };
        let mut spans: Vec<(usize, usize, String)> = edits
            .iter()
            .map(|e| {
                let a = offset(&self.text, &e["range"]["start"]);
                let b = offset(&self.text, &e["range"]["end"]);
                (a, b, e["newText"].as_str().unwrap().to_string())
            })
            .collect();
        spans.sort_by_key(|s| std::cmp::Reverse(s.0));
        for (a, b, new) in spans {
            self.text.replace_range(a..b, &new);
        }
        self.version += 1;
        let (uri, version, text) = (self.uri.clone(), self.version, self.text.clone());
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}]}),
        );
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn options(lsp: &Lsp) -> Value {
    json!({"model": "script/t", "editMode": "auto",
        "agentDir": lsp.dir().display().to_string()})
}

fn range(a: (u32, u32), b: (u32, u32)) -> Value {
    json!({"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}})
}

fn totl() -> Value {
    json!({"range": range((1, 12), (1, 16)), "severity": 1, "code": "E0425",
        "source": "rustc", "message": "cannot find value `totl` in this scope"})
}

#[test]
fn listing_actions_needs_no_model_call() {
    let mut lsp = Lsp::start(&json!({"turns": [{"text": "never asked"}]}));
    let opts = options(&lsp);
    lsp.initialize(true, opts);
    lsp.open(MAIN_RS);
    let uri = lsp.uri.clone();
    let r = lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    );
    let actions = r["result"].as_array().expect("actions");
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
    );
    let titles: Vec<&str> = r["result"]
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
    let resolved = lsp.request("codeAction/resolve", actions[0].clone());
    assert_eq!(resolved["result"], actions[0]);
    // No session, no run: nothing but the answers arrived.
    let r = lsp.request("tandem/models/list", json!({}));
    assert!(r["result"].is_array(), "{r}");
    assert!(
        lsp.seen.iter().all(|m| m.get("method").is_none()),
        "{:?}",
        lsp.seen
    );
}

#[test]
fn running_fix_edits_the_buffer_with_progress_and_a_summary() {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "main.rs"}}], "stopReason": "toolUse"},
        {"toolCalls": [{"name": "edit", "arguments": {"path": "main.rs",
            "edits": [{"oldText": "totl", "newText": "total"}]}}], "stopReason": "toolUse"},
        {"text": "Fixed the typo: `totl` is now `total`.\nNothing else changed."}]});
    let mut lsp = Lsp::start(&script);
    let opts = options(&lsp);
    lsp.initialize(true, opts);
    lsp.open(MAIN_RS);
    let uri = lsp.uri.clone();
    let r = lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    );
    let command = r["result"][0]["command"].clone();
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    let session = r["result"]["session"].clone();
    assert!(session.is_string(), "{r}");
    let shown = lsp.wait_for("window/showMessage");
    assert_eq!(
        shown["params"],
        json!({"type": 3,
            "message": "Tandem: Fixed the typo: `totl` is now `total`.\nNothing else changed."})
    );
    assert_eq!(lsp.text, "fn main() {\n    let x = total;\n}\n");
    assert_eq!(lsp.received("workspace/applyEdit").len(), 1);
    let created = lsp.received("window/workDoneProgress/create");
    assert_eq!(created.len(), 1);
    let token = created[0]["token"].clone();
    let progress: Vec<Value> = lsp
        .received("$/progress")
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
    // The prompt the model got carries the diagnostic and where it is.
    let user = lsp
        .received("tandem/event")
        .into_iter()
        .find(|e| e["session"] == session && e["event"]["role"] == "user")
        .expect("the user message");
    let text = user["event"]["text"].as_str().unwrap();
    assert!(
        text.contains("cannot find value `totl` in this scope"),
        "{text}"
    );
    assert!(text.contains("main.rs"), "{text}");
    assert!(text.contains("let x = totl;"), "{text}");
}

#[test]
fn cancelling_the_progress_token_aborts_the_run() {
    let slow = json!({"chunkSize": 1, "delayMs": 100,
        "turns": [{"text": "a very slow explanation that would take several seconds"}]});
    let mut lsp = Lsp::start(&slow);
    let opts = options(&lsp);
    lsp.initialize(false, opts);
    lsp.open(MAIN_RS);
    let uri = lsp.uri.clone();
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.explain", "arguments": [{"uri": uri,
            "range": range((0, 0), (2, 1)), "symbol": "main"}]}),
    );
    assert!(r["result"]["session"].is_string(), "{r}");
    let begin = lsp.wait_for("$/progress");
    assert_eq!(begin["params"]["value"]["kind"], "begin");
    assert_eq!(
        begin["params"]["value"]["message"],
        "Ask Tandem to explain `main`"
    );
    let token = begin["params"]["token"].clone();
    lsp.notify("window/workDoneProgress/cancel", json!({"token": token}));
    let shown = lsp.wait_for("window/showMessage");
    assert_eq!(shown["params"]["message"], "Tandem: Stopped.");
    let last = lsp.received("$/progress").pop().unwrap();
    assert_eq!(last["value"], json!({"kind": "end", "message": "Stopped."}));
    assert!(lsp.received("tandem/event").is_empty());
}

#[test]
fn bad_command_arguments_name_the_field() {
    let mut lsp = Lsp::start(&json!({"turns": [{"text": "never asked"}]}));
    let opts = options(&lsp);
    lsp.initialize(false, opts);
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.fixDiagnostic",
            "arguments": [{"uri": "file:///x.rs", "message": "m"}]}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "arguments[0].range", "{r}");
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.explain", "arguments": [{"uri": 4,
            "range": range((0, 0), (0, 1))}]}),
    );
    assert_eq!(r["error"]["data"]["field"], "arguments[0].uri", "{r}");
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.nope", "arguments": []}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["field"], "command", "{r}");
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.abort"}),
    );
    assert_eq!(r["result"], Value::Null, "{r}");
    assert!(r.get("error").is_none(), "{r}");
}

#[test]
fn a_prompt_run_reports_progress_without_a_summary_message() {
    let script = json!({"turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "main.rs"}}], "stopReason": "toolUse"},
        {"text": "It has a typo."}]});
    let mut lsp = Lsp::start(&script);
    let opts = options(&lsp);
    lsp.initialize(false, opts);
    lsp.open(MAIN_RS);
    let r = lsp.request(
        "tandem/prompt",
        json!({"text": "what is wrong here?\nthanks"}),
    );
    assert_eq!(r["result"]["queued"], false, "{r}");
    let deadline = Instant::now() + WAIT;
    while !lsp
        .received("$/progress")
        .iter()
        .any(|p| p["value"]["kind"] == "end")
    {
        lsp.pump(deadline);
    }
    let values: Vec<Value> = lsp
        .received("$/progress")
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
    lsp.request("tandem/models/list", json!({}));
    assert!(lsp.received("window/showMessage").is_empty());
}

/// A prompt that asks for diagnostics without carrying any gets those of the last codeAction.
#[test]
fn a_prompt_uses_the_diagnostics_of_the_last_code_action() {
    let mut lsp = Lsp::start(&json!({"turns": [{"text": "ok"}]}));
    let opts = options(&lsp);
    lsp.initialize(true, opts);
    lsp.open(MAIN_RS);
    let uri = lsp.uri.clone();
    lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    );
    let r = lsp.request(
        "tandem/prompt",
        json!({"text": "fix it", "context": {"uri": uri, "includeDiagnostics": true}}),
    );
    let session = r["result"]["session"].clone();
    let deadline = Instant::now() + WAIT;
    let user = loop {
        let found = lsp
            .received("tandem/event")
            .into_iter()
            .find(|e| e["session"] == session && e["event"]["role"] == "user");
        if let Some(u) = found {
            break u;
        }
        lsp.pump(deadline);
    };
    let text = user["event"]["text"].as_str().unwrap();
    assert!(
        text.contains("cannot find value `totl` in this scope"),
        "{text}"
    );
}

/// editors/helix/languages.toml, parsed.
fn helix_config() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/helix/languages.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Helix's default servers (25.07) for the languages the file configures: the file must keep
/// them, since Helix replaces a language's server list instead of adding to it.
const HELIX_DEFAULTS: &[(&str, &[&str])] = &[
    ("rust", &["rust-analyzer"]),
    ("python", &["ty", "ruff", "jedi", "pylsp"]),
    ("javascript", &["typescript-language-server"]),
    ("jsx", &["typescript-language-server"]),
    ("typescript", &["typescript-language-server"]),
    ("tsx", &["typescript-language-server"]),
    ("go", &["gopls", "golangci-lint-lsp"]),
    ("c", &["clangd"]),
    ("cpp", &["clangd"]),
    ("java", &["jdtls"]),
    ("ruby", &["ruby-lsp", "solargraph"]),
    ("lua", &["lua-language-server"]),
    ("bash", &["bash-language-server"]),
    ("markdown", &["marksman", "markdown-oxide"]),
];

#[test]
fn the_helix_languages_toml_adds_tandem_to_each_language_after_its_defaults() {
    let config = helix_config();
    let server = &config["language-server"]["tandem"];
    assert_eq!(server["command"], "tandem");
    assert_eq!(server["args"], json!(["lsp"]));
    // The settings are Tandem's, without a warning.
    let parsed =
        tandem_protocol::config::TandemConfig::from_initialization_options(&server["config"]);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    assert_eq!(server["config"]["editMode"], "auto");
    assert_eq!(server["config"]["bashPermission"], "deny");
    let languages = config["language"].as_array().unwrap();
    let names: Vec<&str> = languages
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = HELIX_DEFAULTS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, expected);
    for (language, (name, defaults)) in languages.iter().zip(HELIX_DEFAULTS) {
        let servers = language["language-servers"].as_array().unwrap();
        let (last, first) = servers.split_last().unwrap();
        let first: Vec<&str> = first.iter().map(|s| s.as_str().unwrap()).collect();
        assert_eq!(&first, defaults, "{name}: Helix's own servers come first");
        assert_eq!(last["name"], "tandem", "{name}");
        assert_eq!(
            last["only-features"],
            json!(["code-action", "workspace-command"]),
            "{name}"
        );
    }
}

#[test]
fn a_helix_like_client_gets_fixes_applied_and_commands_refused_with_the_helix_settings() {
    // Helix's capabilities: applyEdit and progress, no change annotations, no
    // showMessageRequest, no tandem events.
    let script = json!({"turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "cargo check"}}], "stopReason": "toolUse"},
        {"toolCalls": [{"name": "edit", "arguments": {"path": "main.rs",
            "edits": [{"oldText": "totl", "newText": "total"}]}}], "stopReason": "toolUse"},
        {"text": "Fixed the typo."}]});
    let mut lsp = Lsp::start(&script);
    let mut opts = helix_config()["language-server"]["tandem"]["config"].clone();
    opts["model"] = json!("script/t");
    opts["agentDir"] = json!(lsp.dir().display().to_string());
    lsp.initialize(false, opts);
    lsp.open(MAIN_RS);
    let uri = lsp.uri.clone();
    let r = lsp.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((1, 13), (1, 13)),
            "context": {"diagnostics": [totl()]}}),
    );
    let command = r["result"][0]["command"].clone();
    let r = lsp.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    assert!(r["result"]["session"].is_string(), "{r}");
    let shown = lsp.wait_for("window/showMessage");
    assert_eq!(shown["params"]["message"], "Tandem: Fixed the typo.");
    assert_eq!(lsp.text, "fn main() {\n    let x = total;\n}\n");
    assert!(lsp.received("window/showMessageRequest").is_empty());
    assert!(lsp.received("tandem/event").is_empty());
    assert_eq!(lsp.received("window/workDoneProgress/create").len(), 1);
    // The command was refused without asking: the session file holds the tool error.
    let sessions = lsp.dir().join("sessions");
    let stored: String = walk(&sessions)
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        stored.contains("bash is disabled (bashPermission: deny)"),
        "{stored}"
    );
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
