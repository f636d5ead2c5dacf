//! `tandem demo`: a scripted task end to end, offline, through the language server. A copy of the
//! demo workspace is made in a temporary directory; `tandem lsp` is started as a child and driven
//! the way an editor would drive it (with `tandem_tests::lsp_client`, the client the black-box
//! tests use): initialize, open the file, `tandem/prompt` with the selection, apply and save the
//! edits the server proposes.
//! The built-in scripted model (or, with `--real`, the configured model) fixes the bug with the
//! real tools; the streamed answer, the tool calls and the resulting diff are shown. The copy is
//! left in place for inspection. So the demo exercises the same path an editor does, and works
//! as a smoke test of the server when no editor is at hand.
//!
//! `--mode json` keeps the in-process path: it prints the agent's own JSON events, as `--mode
//! json` does elsewhere.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{json, Value};
use tandem_ai::providers::scripted::demo_model;
use tandem_tests::lsp_client::{Incoming, LspClient};

use crate::demo_editor::{Applied, Documents};
use crate::uri::string_from_path as path_to_uri;

use crate::cli::command::SessionChoice;
use crate::cli::{OutputMode, RunArgs};
use crate::run::{execute, runtime, setup, RunEnd};

/// The demo workspace, built into the binary so the demo runs from anywhere.
const FILES: &[(&str, &str)] = &[
    (
        "README.md",
        include_str!("../../../fixtures/demo-workspace/README.md"),
    ),
    (
        "check.sh",
        include_str!("../../../fixtures/demo-workspace/check.sh"),
    ),
    (
        "src/greet.py",
        include_str!("../../../fixtures/demo-workspace/src/greet.py"),
    ),
];
const SCRIPT: &str = include_str!("../../../fixtures/demo-script.json");
const TASK: &str =
    "The greeting printed by src/greet.py looks wrong. Please fix it and run ./check.sh.";

/// The demo's temp folder, removed when the demo ends (also on an error or Ctrl-C).
struct DemoDir(PathBuf);

impl Drop for DemoDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// On Ctrl-C: removes `base` and exits with 130 (the server, in our process group, gets the
/// same signal and ends too).
fn remove_on_ctrl_c(base: PathBuf) {
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        if rt.block_on(tokio::signal::ctrl_c()).is_ok() {
            let _ = std::fs::remove_dir_all(&base);
            std::process::exit(130);
        }
    });
}

/// The demo project and its script in a new temp folder: the folder (a guard that removes it),
/// the project and the script.
fn make_workspace() -> anyhow::Result<(DemoDir, PathBuf, PathBuf)> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let base = std::env::temp_dir().join(format!("tandem-demo-{}-{stamp}", std::process::id()));
    let guard = DemoDir(base.clone());
    let workspace = base.join("workspace");
    for (name, text) in FILES {
        let path = workspace.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let check = workspace.join("check.sh");
        std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", check.display()))?;
    }
    let script = base.join("demo-script.json");
    std::fs::write(&script, SCRIPT)
        .with_context(|| format!("cannot write {}", script.display()))?;
    Ok((guard, std::fs::canonicalize(&workspace)?, script))
}

fn diff(workspace: &Path) -> String {
    let mut out = String::new();
    for (name, before) in FILES {
        let after = std::fs::read_to_string(workspace.join(name)).unwrap_or_default();
        if after != *before {
            let d = similar::TextDiff::from_lines(*before, after.as_str());
            out.push_str(
                &d.unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{name}"), &format!("b/{name}"))
                    .to_string(),
            );
        }
    }
    out
}

/// How long the demo waits for any one message from the server before it gives up.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the demo.
pub fn run(real: bool, mode: OutputMode, mut args: RunArgs) -> ExitCode {
    let outcome = (|| -> anyhow::Result<RunEnd> {
        let (dir, workspace, script) = make_workspace()?;
        remove_on_ctrl_c(dir.0.clone());
        let task = args
            .messages
            .first()
            .cloned()
            .unwrap_or_else(|| TASK.to_string());
        if mode == OutputMode::Json {
            // The in-process path: the agent's own JSON events.
            let rt = runtime()?;
            args.session = SessionChoice::InMemory;
            let model = (!real).then(|| {
                let mut m = demo_model();
                m.base_url = script.to_string_lossy().into_owned();
                m
            });
            return rt.block_on(async move {
                let started = setup(&args, &workspace, model, false, OutputMode::Text).await?;
                execute(started.session, vec![(task, Vec::new())], mode).await
            });
        }
        crate::eprintln_safe!(
            "Demo workspace: {} (removed when the demo ends)",
            workspace.display()
        );
        println!("> {task}\n");
        let agent_dir = (!real).then(|| write_agent_dir(&script)).transpose()?;
        let ok = drive(&workspace, agent_dir.as_deref(), &task)?;
        let changes = diff(&workspace);
        if changes.is_empty() {
            println!("\n(no files changed)");
        } else {
            println!("\nChanges:\n{changes}");
        }
        Ok(if ok {
            RunEnd::Completed
        } else {
            RunEnd::Failed
        })
    })();
    match outcome {
        Ok(end) => end.exit_code(),
        Err(e) => {
            crate::eprintln_safe!("Error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// An agent dir beside the script whose models.json has the `scripted/demo` model replay it.
fn write_agent_dir(script: &Path) -> anyhow::Result<PathBuf> {
    let dir = script
        .parent()
        .map(|p| p.join("agent"))
        .context("the demo script has no parent directory")?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let models = json!({"providers": {"scripted": {"api": "scripted", "apiKey": "none",
        "baseUrl": script.display().to_string(), "models": [{"id": "demo"}]}}});
    let path = dir.join("models.json");
    std::fs::write(&path, models.to_string())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(dir)
}

/// Plays the editor: starts `tandem lsp`, prompts, answers its requests until `settled`.
/// Returns false when the run reported an error.
fn drive(workspace: &Path, agent_dir: Option<&Path>, task: &str) -> anyhow::Result<bool> {
    let exe = std::env::current_exe().context("cannot find the tandem executable")?;
    let mut command = Command::new(exe);
    command.arg("lsp").current_dir(workspace);
    // The server's stderr is the terminal's: its messages show above the demo's own.
    let mut client = LspClient::spawn(command)?.with_timeout(TIMEOUT);
    let mut options = json!({"editMode": "auto"});
    if let Some(dir) = agent_dir {
        options["agentDir"] = json!(dir.display().to_string());
        options["model"] = json!("scripted/demo");
    }
    let root = path_to_uri(workspace);
    client.request(
        "initialize",
        json!({
            "processId": std::process::id(),
            "rootUri": root,
            "workspaceFolders": [{"uri": root, "name": "demo"}],
            "capabilities": {
                "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
                "window": {"showMessage": {"messageActionItem": {}}},
                "experimental": {"tandem": {"events": true, "saveDocuments": true}}
            },
            "initializationOptions": options,
        }),
    )?;
    client.notify("initialized", json!({}))?;
    let mut docs = Documents::default();
    let file = workspace.join("src/greet.py");
    let uri = path_to_uri(&file);
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let selection = function_range(&text, "def greet(");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": text}}),
    )?;
    docs.open.insert(uri.clone(), (text, 0));
    client.request(
        "tandem/prompt",
        json!({"text": task, "context": {"uri": uri, "selection": selection}}),
    )?;
    let mut printer = Printer::new(std::io::stdout().is_terminal());
    let mut ok = true;
    loop {
        let msg = client.next_incoming("the run to settle")?;
        if msg.method == "tandem/event" {
            let event = &msg.params["event"];
            if event["type"] == "settled" {
                printer.end_line();
                break;
            }
            ok &= printer.show(event);
        } else if msg.is_request() {
            answer(&mut client, &mut docs, &msg)?;
        } else if msg.method == "window/showMessage" {
            printer.end_line();
            crate::eprintln_safe!("{}", msg.params["message"].as_str().unwrap_or_default());
        }
    }
    client.shutdown()?;
    Ok(ok)
}

/// Answers a server→client request.
fn answer(client: &mut LspClient, docs: &mut Documents, msg: &Incoming) -> anyhow::Result<()> {
    match msg.method.as_str() {
        "workspace/applyEdit" => match docs.apply(&msg.params["edit"]) {
            Ok(changed) => {
                // As an editor does: the document changes, then the answer.
                for applied in changed {
                    match applied {
                        Applied::Changed(uri, text, version) => client.notify(
                            "textDocument/didChange",
                            json!({"textDocument": {"uri": uri, "version": version},
                                "contentChanges": [{"text": text}]}),
                        )?,
                        Applied::Opened(uri, text, version) => client.notify(
                            "textDocument/didOpen",
                            json!({"textDocument": {"uri": uri, "languageId": "plaintext",
                                "version": version, "text": text}}),
                        )?,
                    }
                }
                client.reply(msg, json!({"applied": true}))?;
            }
            Err(reason) => {
                client.reply(msg, json!({"applied": false, "failureReason": reason}))?;
            }
        },
        "tandem/saveDocuments" => {
            let uris = msg.params["uris"].as_array().cloned().unwrap_or_default();
            let (saved, failed) = docs.save(&uris);
            for uri in &saved {
                client.notify(
                    "textDocument/didSave",
                    json!({"textDocument": {"uri": uri}}),
                )?;
            }
            let failed: Vec<Value> = failed
                .into_iter()
                .map(|(uri, message)| json!({"uri": uri, "message": message}))
                .collect();
            client.reply(msg, json!({"saved": saved, "failed": failed}))?
        }
        "window/workDoneProgress/create" | "client/registerCapability" => {
            client.reply(msg, Value::Null)?
        }
        "window/showMessageRequest" => {
            let first = msg.params["actions"].get(0).cloned().unwrap_or(Value::Null);
            client.reply(msg, first)?
        }
        other => client.reply_error(msg, -32601, &format!("method not found: {other}"))?,
    }
    Ok(())
}

/// The range from the line starting with `header` to the end of its block (up to a blank line).
fn function_range(text: &str, header: &str) -> Value {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(header))
        .unwrap_or(0);
    let mut end = start;
    while end + 1 < lines.len() && !lines[end + 1].trim().is_empty() {
        end += 1;
    }
    let width = lines.get(end).map_or(0, |l| l.encode_utf16().count());
    json!({"start": {"line": start, "character": 0}, "end": {"line": end, "character": width}})
}

/// Prints `tandem/event`s for a person.
struct Printer {
    color: bool,
    /// What the current line holds: `None` at a line start, else "text" or "thinking".
    open: Option<&'static str>,
}

impl Printer {
    fn new(color: bool) -> Self {
        Printer { color, open: None }
    }

    fn dim(&self, s: &str) -> String {
        if self.color {
            format!("\x1b[2m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    fn end_line(&mut self) {
        if self.open.take().is_some() {
            println!();
        }
    }

    fn stream(&mut self, kind: &'static str, delta: &str) {
        if self.open.is_some_and(|k| k != kind) {
            println!();
        }
        self.open = Some(kind);
        if kind == "thinking" {
            print!("{}", self.dim(delta));
        } else {
            print!("{delta}");
        }
    }

    /// Shows one event; false for an `error` event.
    fn show(&mut self, event: &Value) -> bool {
        let text = |key: &str| event[key].as_str().unwrap_or_default();
        match text("type") {
            "text_delta" => self.stream("text", text("delta")),
            "thinking_delta" => self.stream("thinking", text("delta")),
            "message_end" => self.end_line(),
            "tool_start" => {
                self.end_line();
                println!("→ {}", text("title"));
            }
            "tool_end" => {
                let first = text("text").lines().next().unwrap_or_default();
                if event["isError"] == true {
                    println!("  ✗ {first}");
                } else {
                    println!("  {}", self.dim(&format!("✓ {first}")));
                }
            }
            "retry_start" => {
                self.end_line();
                let secs = event["delayMs"].as_f64().unwrap_or(0.0) / 1000.0;
                let why = text("errorMessage");
                println!("{}", self.dim(&format!("(retrying in {secs:.1} s: {why})")));
            }
            "compaction_start" => {
                self.end_line();
                println!("{}", self.dim("(compacting the conversation…)"));
            }
            "error" => {
                self.end_line();
                crate::eprintln_safe!("Error: {}", text("message"));
                return false;
            }
            _ => {}
        }
        let _ = std::io::stdout().flush();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_the_greet_function() {
        let range = function_range(FILES[2].1, "def greet(");
        assert_eq!(
            range,
            json!({"start": {"line": 3, "character": 0}, "end": {"line": 5, "character": 27}})
        );
    }
}
