//! `tandem demo`: a scripted task end to end, offline. A copy of the demo workspace is made in a
//! temporary directory, the built-in scripted model (or, with `--real`, the configured model)
//! fixes its bug with the real tools, and the streamed answer, the tool calls and the resulting
//! diff are shown. The copy is left in place for inspection.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use tandem_agent::AgentEvent;
use tandem_ai::providers::scripted::demo_model;
use tandem_ai::AssistantMessageEvent;
use tandem_coding::agent_session::{AgentSession, AgentSessionEvent, SessionEvent};
use tandem_coding::describe_tool_call;

use crate::cli::command::SessionChoice;
use crate::cli::{OutputMode, RunArgs};
use crate::run::{execute, runtime, setup_with};

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

fn make_workspace() -> anyhow::Result<(PathBuf, PathBuf)> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let base = std::env::temp_dir().join(format!("tandem-demo-{}-{stamp}", std::process::id()));
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
    Ok((std::fs::canonicalize(&workspace)?, script))
}

/// Prints the streamed answer and tool calls for a person.
fn show(event: &AgentSessionEvent, cwd: &Path, color: bool, out: &mut impl Write) {
    let dim = |s: &str| {
        if color {
            format!("\x1b[2m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let _ = match event {
        AgentSessionEvent::Agent(e) => match e.as_ref() {
            AgentEvent::MessageUpdate {
                assistant_message_event,
            } => match assistant_message_event {
                AssistantMessageEvent::TextDelta { delta, .. } => write!(out, "{delta}"),
                AssistantMessageEvent::ThinkingDelta { delta, .. } => write!(out, "{}", dim(delta)),
                AssistantMessageEvent::TextEnd { .. }
                | AssistantMessageEvent::ThinkingEnd { .. } => {
                    writeln!(out)
                }
                _ => Ok(()),
            },
            AgentEvent::ToolExecutionStart {
                tool_name, args, ..
            } => {
                let info = describe_tool_call(tool_name, args, cwd);
                writeln!(out, "→ {}", info.title)
            }
            AgentEvent::ToolExecutionEnd {
                result, is_error, ..
            } => {
                let first = result
                    .content
                    .iter()
                    .find_map(|b| match b {
                        tandem_ai::UserBlock::Text(t) => t.text.lines().next().map(str::to_string),
                        _ => None,
                    })
                    .unwrap_or_default();
                if *is_error {
                    writeln!(out, "  ✗ {first}")
                } else {
                    writeln!(out, "  {}", dim(&format!("✓ {first}")))
                }
            }
            _ => Ok(()),
        },
        AgentSessionEvent::Session(SessionEvent::AutoRetryStart {
            delay_ms,
            error_message,
            ..
        }) => {
            writeln!(
                out,
                "{}",
                dim(&format!(
                    "(retrying in {:.1} s: {error_message})",
                    *delay_ms as f64 / 1000.0
                ))
            )
        }
        AgentSessionEvent::Session(SessionEvent::AutoCompactionStart { .. }) => {
            writeln!(out, "{}", dim("(compacting the conversation…)"))
        }
        AgentSessionEvent::Session(_) => Ok(()),
    };
    let _ = out.flush();
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

/// Runs the demo.
pub fn run(real: bool, mode: OutputMode, mut args: RunArgs) -> ExitCode {
    let outcome = (|| -> anyhow::Result<bool> {
        let (workspace, script) = make_workspace()?;
        let rt = runtime()?;
        args.session = SessionChoice::InMemory;
        let model = (!real).then(|| {
            let mut m = demo_model();
            m.base_url = script.to_string_lossy().into_owned();
            m
        });
        let task = args
            .messages
            .first()
            .cloned()
            .unwrap_or_else(|| TASK.to_string());
        rt.block_on(async move {
            let setup = setup_with(&args, &workspace, model)?;
            if mode == OutputMode::Json {
                return execute(&setup.session, vec![(task, Vec::new())], mode).await;
            }
            eprintln!("Demo workspace: {}", workspace.display());
            println!("> {task}\n");
            let ok = stream_text(&setup.session, &task, &workspace).await?;
            let changes = diff(&workspace);
            if changes.is_empty() {
                println!("\n(no files changed)");
            } else {
                println!("\nChanges:\n{changes}");
            }
            Ok(ok)
        })
    })();
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn stream_text(session: &AgentSession, task: &str, cwd: &Path) -> anyhow::Result<bool> {
    let mut rx = session.subscribe();
    let color = std::io::stdout().is_terminal();
    let cwd_owned = cwd.to_path_buf();
    let printer = tokio::spawn(async move {
        let mut out = std::io::stdout();
        while let Some(event) = rx.recv().await {
            show(&event, &cwd_owned, color, &mut out);
            if event.kind() == "agent_settled" {
                break;
            }
        }
    });
    session.prompt(task, Vec::new()).await?;
    let _ = printer.await;
    let last = session.last_assistant();
    Ok(last.is_some_and(|m| m.error_message.is_none()))
}
