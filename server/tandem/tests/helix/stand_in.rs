//! A stand-in for Helix, which cannot be installed here (it is on neither crates.io nor Debian
//! 12): `tandem lsp` in a [`Sandbox`] (the mock LLM as the model), started the way Helix
//! starts a server and answered the way Helix answers it.
//!
//! - `initialize` carries Helix's `clientInfo` and capabilities as helix-lsp/src/client.rs
//!   (`Client::initialize`) builds them, recorded in `client-<version>.json` beside this file,
//!   and the `config` table of editors/helix/languages.toml as `initializationOptions`.
//! - After `initialized`, Helix sends that table again as `workspace/didChangeConfiguration`
//!   (helix-term/src/application.rs, `Notification::Initialized`).
//! - Server requests are answered as helix-term/src/application.rs does:
//!   `workspace/configuration` with the `config` table walked down each item's section (null
//!   when absent), `window/showDocument` as the test chooses, `workspace/applyEdit` applied to
//!   the buffer (with a `didChange`), anything else `null` (progress tokens, as Helix does; the
//!   runs here ask nothing else).
//! - A code action without an edit is resolved, then its command executed
//!   (helix-view/src/action.rs).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Value};
use tandem_tests::lsp_client::{ClientError, Incoming, LspClient, Outbox};
use tandem_tests::wire::WireApi;

use crate::support::lsp::{file_uri, Buffer};
use crate::support::process::{in_sandbox, HANG_GUARD};
use crate::support::{Sandbox, MODEL};

/// The project's one file, as the tests open it.
pub const MAIN_RS: &str = "fn main() {\n    let x = totl;\n    println!(\"{x}\");\n}\n";

/// Which Helix stands in: whose `initialize` is sent.
#[derive(Debug, Clone, Copy)]
pub enum Version {
    /// The latest release, 25.07.1: handles `window/showDocument` without declaring it.
    Release,
    /// master at 079a789e (2026-07-23): declares it.
    Master,
}

impl Version {
    /// Both.
    pub const ALL: [Version; 2] = [Version::Release, Version::Master];

    fn fixture(self) -> &'static str {
        match self {
            Version::Release => "client-25.07.1.json",
            Version::Master => "client-master.json",
        }
    }
}

/// How the stand-in answers `window/showDocument`.
#[derive(Debug, Clone, Copy)]
pub enum Opens {
    /// `{"success": …}`: true when the file opened, false as when Helix cannot open the path.
    Success(bool),
    /// MethodNotFound, as Helix before 24.03 answers it.
    MethodNotFound,
}

/// editors/helix/languages.toml, parsed.
pub fn languages_toml() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/helix/languages.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `config` table of `[language-server.tandem]` with the sandbox's model set, as a user
/// sets it (`model` under `[language-server.tandem.config.tandem]`).
fn server_config() -> Value {
    let mut config = languages_toml()["language-server"]["tandem"]["config"].clone();
    config["tandem"]["model"] = json!(MODEL);
    config
}

/// Helix, with `tandem lsp` started and main.rs open.
pub struct Helix {
    // Dropped first: the server ends before the sandbox goes.
    pub lsp: LspClient,
    pub sandbox: Sandbox,
    /// `XDG_CACHE_HOME` of the server.
    pub cache: PathBuf,
    buffer: Arc<Mutex<Buffer>>,
}

impl Helix {
    /// Starts the server as `version` of Helix does, `window/showDocument` answered with
    /// `opens`; main.rs holds [`MAIN_RS`] and is open.
    pub fn start(version: Version, opens: Opens) -> Result<Helix, ClientError> {
        let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
        sandbox.write("main.rs", MAIN_RS);
        let cache = sandbox.home.join("xdg-cache");
        let config = server_config();
        let buffer = Arc::new(Mutex::new(Buffer {
            uri: file_uri(&sandbox.cwd.join("main.rs")),
            text: MAIN_RS.to_string(),
            // Helix numbers a document's versions from 0.
            version: 0,
        }));
        let mut command = in_sandbox(&sandbox, &["lsp"]);
        command.env("XDG_CACHE_HOME", &cache).stderr(Stdio::piped());
        let (answered_config, edited) = (config.clone(), Arc::clone(&buffer));
        let mut lsp = LspClient::spawn(command)?
            .with_timeout(HANG_GUARD)
            .with_handler(Box::new(move |request, out| {
                answer(&answered_config, opens, &edited, request, out)
            }));
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/helix")
            .join(version.fixture());
        let client: Value = std::fs::read_to_string(&fixture)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
            .unwrap_or_else(|e| panic!("{}: {e}", fixture.display()));
        let root = sandbox.cwd.display().to_string();
        let root_uri = file_uri(&sandbox.cwd);
        lsp.initialize(json!({"processId": std::process::id(), "rootPath": root,
            "rootUri": root_uri, "workspaceFolders": [{"uri": root_uri, "name": "project"}],
            "initializationOptions": config, "capabilities": client["capabilities"],
            "clientInfo": client["clientInfo"]}))?;
        lsp.notify(
            "workspace/didChangeConfiguration",
            json!({"settings": config}),
        )?;
        let uri = file_uri(&sandbox.cwd.join("main.rs"));
        lsp.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 0,
                "text": MAIN_RS}}),
        )?;
        Ok(Helix {
            lsp,
            sandbox,
            cache,
            buffer,
        })
    }

    /// main.rs's URI.
    pub fn uri(&self) -> String {
        self.buffer().uri.clone()
    }

    /// main.rs as the editor has it.
    pub fn text(&self) -> String {
        self.buffer().text.clone()
    }

    fn buffer(&self) -> std::sync::MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `space a` over `range` of main.rs with `diagnostics` under it, then the action whose
    /// command is `command`: resolved, then its command executed. The command's result.
    pub fn run_code_action(
        &mut self,
        range: Value,
        diagnostics: Value,
        command: &str,
    ) -> Result<Value, ClientError> {
        let uri = self.uri();
        let actions = self.lsp.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range,
                "context": {"diagnostics": diagnostics, "triggerKind": 1}}),
        )?;
        let action = actions
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["command"]["command"] == command)
            .unwrap_or_else(|| panic!("no {command} action in {actions}"))
            .clone();
        let resolved = self.lsp.request("codeAction/resolve", action)?;
        let run = &resolved["command"];
        self.lsp.request(
            "workspace/executeCommand",
            json!({"command": run["command"], "arguments": run["arguments"]}),
        )
    }

    /// Takes the first `window/showMessage` (sent so far or to come).
    pub fn message(&mut self) -> Result<Incoming, ClientError> {
        self.lsp
            .wait_for("window/showMessage", |m| m.method == "window/showMessage")
    }

    /// The params of every message the server sent with `method`.
    pub fn received(&self, method: &str) -> Vec<Value> {
        let received = self.lsp.received(method);
        received.iter().map(|m| m.params.clone()).collect()
    }
}

/// Helix's answer to a server request.
fn answer(
    config: &Value,
    opens: Opens,
    buffer: &Mutex<Buffer>,
    request: &Incoming,
    out: &mut Outbox<'_>,
) -> Result<(), ClientError> {
    let result = match request.method.as_str() {
        "workspace/configuration" => {
            let items = request.params["items"].as_array().cloned();
            let sections = items.unwrap_or_default().into_iter().map(|item| {
                let section = item["section"].as_str().unwrap_or_default();
                let parts = section.split('.').filter(|p| !p.is_empty());
                parts.fold(config.clone(), |value, part| value[part].clone())
            });
            Value::Array(sections.collect())
        }
        "window/showDocument" => match opens {
            Opens::Success(success) => json!({"success": success}),
            Opens::MethodNotFound => {
                let message = "Method not found: window/showDocument";
                return out.reply_error(request, -32601, message);
            }
        },
        "workspace/applyEdit" => buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .apply_request(request, out)?,
        _ => Value::Null,
    };
    out.reply(request, result)
}
