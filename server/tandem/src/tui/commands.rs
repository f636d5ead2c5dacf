//! Slash commands, as pi's interactive mode has them where they apply, plus the pickers they
//! open and what a pick does. A command that takes time (compaction, a new session) runs in a
//! task and reports through [`Done`]; the screen keeps drawing meanwhile.

use std::sync::Arc;

use ratatui::text::Line;
use serde_json::json;
use tandem_agent::AgentMessage;
use tandem_ai::{Message, ThinkingLevel};
use tandem_coding::agent_session::AgentSession;
use tandem_coding::session::{list_sessions, SessionInfo};
use tandem_coding::trust::{ProtectedResources, TrustStore};

use super::app::{App, Done, Modal};
use super::editor::Completion;
use super::picker::{Item, Picker};
use super::session::{self, History};
use super::transcript::{content_text, tokens, Transcript};
use crate::cli::command::SessionChoice;
use crate::host::setup::{switch_announced, thinking_levels};

/// What a picker was opened for.
pub enum Pending {
    /// `/model`: these models.
    Model(Vec<tandem_ai::Model>),
    /// `/thinking`: these levels.
    Thinking(Vec<ThinkingLevel>),
    /// `/resume`: these sessions.
    Resume(Vec<SessionInfo>),
    /// `/fork`: these prompts' entries.
    Fork(Vec<String>),
    /// `/tree`: these entries.
    Tree(Vec<String>),
    /// `/tree`: whether to summarize the branch left when moving to this entry.
    TreeSummary(String),
    /// The folder's trust.
    Trust(ProtectedResources),
    /// Text for the editor (queued messages taken back).
    Restore(String),
}

/// The commands: name, arguments, what it does.
const COMMANDS: &[(&str, &str, &str)] = &[
    ("model", "[provider/model]", "Pick or set the model"),
    ("thinking", "[level]", "Pick or set the thinking level"),
    (
        "compact",
        "[instructions]",
        "Summarize the conversation to free context",
    ),
    ("new", "", "Start a new session"),
    ("resume", "", "Continue an earlier session of this folder"),
    ("fork", "", "Start a new session from an earlier prompt"),
    ("clone", "", "Copy this session into a new one"),
    (
        "tree",
        "",
        "Go to any point of this session's tree and branch from there",
    ),
    ("name", "[name]", "Name this session (or show its name)"),
    (
        "session",
        "",
        "Show this session's file, messages, tokens and cost",
    ),
    ("export", "[path]", "Save this session as an HTML page"),
    ("copy", "", "Copy the last answer to the clipboard"),
    ("undo", "", "Take back the last turn's file changes"),
    (
        "confirm",
        "[on|off]",
        "Show each edit's diff and ask before it is written",
    ),
    ("trust", "", "Trust this folder's project configuration"),
    ("mcp", "", "List the MCP servers' tools"),
    (
        "reload",
        "",
        "Read settings, context files, skills, templates and MCP servers again",
    ),
    ("hotkeys", "", "List the keys"),
    ("quit", "", "Leave (also Ctrl+D, or Ctrl+C twice)"),
];

/// The keys, for `/hotkeys`.
const HOTKEYS: &[(&str, &str)] = &[
    ("Enter", "send (while running: steer the run)"),
    (
        "Alt+Enter",
        "while running: queue a follow-up; otherwise a new line",
    ),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Esc", "stop the run; close completions"),
    (
        "Ctrl+C",
        "stop the run; clear the editor; twice on an empty editor: exit",
    ),
    ("Ctrl+D", "exit (empty editor)"),
    ("Up / Down", "earlier prompts (at the first / last line)"),
    ("Alt+Up", "take queued messages back into the editor"),
    ("Tab", "complete /commands and @files"),
    ("Ctrl+L", "pick the model"),
    ("Ctrl+P", "next model"),
    ("Shift+Tab", "next thinking level"),
    ("Ctrl+T", "show or collapse thinking"),
    ("Ctrl+O", "show tool output whole or shortened"),
    (
        "Ctrl+G",
        "edit the prompt in your editor (externalEditor, $VISUAL, $EDITOR)",
    ),
    ("Ctrl+Z", "suspend to the shell (fg comes back)"),
    (
        "!command",
        "run a shell command; its output joins the conversation",
    ),
];

/// Whether `text` is one of the commands above (not a prompt template or skill, which are
/// sent as prompts and expanded by the session).
pub fn is_command(_app: &App, text: &str) -> bool {
    is_builtin(command_name(text))
}

/// Whether `name` (without its `/`) is one of the commands above.
pub fn is_builtin(name: &str) -> bool {
    COMMANDS.iter().any(|(n, _, _)| *n == name) || name == "exit"
}

fn command_name(text: &str) -> &str {
    text.trim_start_matches('/')
        .split(char::is_whitespace)
        .next()
        .unwrap_or("")
}

/// Completions for `/word`: the commands, the extensions' commands, then the prompt templates
/// and skills.
pub fn completions(app: &App, word: &str) -> Vec<Completion> {
    let typed = word.trim_start_matches('/').to_lowercase();
    let mut out: Vec<Completion> = COMMANDS
        .iter()
        .filter(|(name, _, _)| name.starts_with(&typed))
        .map(|(name, args, detail)| Completion {
            replacement: format!("/{name}"),
            detail: if args.is_empty() {
                detail.to_string()
            } else {
                format!("{args}  {detail}")
            },
        })
        .collect();
    out.extend(app.extension_completions(&typed));
    if let Some(resources) = app.held.live.session().resources() {
        for t in &resources.templates {
            if t.name.to_lowercase().starts_with(&typed) {
                out.push(Completion {
                    replacement: format!("/{}", t.name),
                    detail: t.description.clone(),
                });
            }
        }
        for s in &resources.skills {
            let name = format!("skill:{}", s.name);
            if name.starts_with(&typed) {
                out.push(Completion {
                    replacement: format!("/{name}"),
                    detail: s.description.clone(),
                });
            }
        }
    }
    if out.len() == 1 && out[0].replacement.trim_start_matches('/') == typed {
        return Vec::new();
    }
    out
}

/// Runs command `text`.
pub fn run(app: &mut App, text: &str) {
    let text = text.trim();
    let name = command_name(text);
    let rest = text
        .trim_start_matches('/')
        .get(name.len()..)
        .unwrap_or("")
        .trim()
        .to_string();
    let theme = app.transcript.theme().clone();
    let session = app.held.live.session().clone();
    let done = app.done_tx.clone();
    let busy = app.held.live.is_busy();
    let refuse_busy = |app: &mut App| {
        app.transcript
            .error(&format!("/{name} waits until the run ends (Esc stops it)."));
    };
    match name {
        "quit" | "exit" => app.quit = true,
        "hotkeys" => {
            let lines: Vec<String> = HOTKEYS
                .iter()
                .map(|(key, what)| format!("  {key:<22} {what}"))
                .collect();
            app.transcript
                .note(&format!("Keys:\n{}", lines.join("\n")), theme.dim);
        }
        "model" if rest.is_empty() => {
            let models: Vec<tandem_ai::Model> =
                app.held.registry.available().into_iter().cloned().collect();
            if models.is_empty() {
                app.transcript
                    .error("No model has a key: set one (see `tandem --list-models`).");
                return;
            }
            let current = session.agent().with_state(|s| s.model.clone());
            let items = models
                .iter()
                .map(|m| Item::with_detail(format!("{}/{}", m.provider, m.id), m.name.clone()))
                .collect();
            let index = models
                .iter()
                .position(|m| m.provider == current.provider && m.id == current.id)
                .unwrap_or(0);
            app.modal = Some(Modal::Picker(
                Box::new(Picker::new("Model", items).select(index)),
                Pending::Model(models),
            ));
        }
        "model" => {
            let available = app.held.registry.available();
            let found = crate::host::model_pattern::exact_reference(&rest, &available)
                .or_else(|| {
                    crate::host::model_pattern::match_pattern(&rest, &available).map(|m| m.model)
                })
                .cloned();
            match found {
                Some(model) => set_model(app, model),
                None => app.transcript.error(&format!(
                    "No available model matches {rest:?}: /model without a name lists them."
                )),
            }
        }
        "thinking" => {
            let model = session.agent().with_state(|s| s.model.clone());
            let levels = thinking_levels(&model);
            if rest.is_empty() {
                let current = session.agent().with_state(|s| s.thinking_level);
                let items = levels.iter().map(|l| Item::new(l.as_str())).collect();
                let index = levels.iter().position(|l| *l == current).unwrap_or(0);
                app.modal = Some(Modal::Picker(
                    Box::new(Picker::new("Thinking level", items).select(index)),
                    Pending::Thinking(levels),
                ));
            } else {
                match ThinkingLevel::parse(&rest) {
                    Some(level) => set_thinking(app, level),
                    None => app.transcript.error(&format!(
                        "Unknown thinking level {rest:?}: one of {}.",
                        levels
                            .iter()
                            .map(|l| l.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
        }
        "compact" => {
            if busy {
                return refuse_busy(app);
            }
            let instructions = (!rest.is_empty()).then_some(rest);
            tokio::spawn(async move {
                match session.compact(instructions).await {
                    // The session's own compaction events say how it ended.
                    Ok(_) | Err(tandem_coding::agent_session::SessionError::Compaction(_)) => {}
                    Err(e) => {
                        let _ = done.send(Done::Error(format!("could not compact: {e}")));
                    }
                }
            });
        }
        "new" => {
            if busy {
                return refuse_busy(app);
            }
            replace(
                app,
                History::Choice(SessionChoice::New),
                Switch::new("new", "session_before_switch", json!({"reason": "new"})),
                "New session.",
            );
        }
        "resume" => {
            if busy {
                return refuse_busy(app);
            }
            let dir = app.args.options.session_dir(&app.agent_dir, &app.cwd);
            let current = session.session_file();
            let sessions: Vec<SessionInfo> = list_sessions(&dir)
                .sessions
                .into_iter()
                .filter(|s| Some(&s.path) != current.as_ref())
                .collect();
            if sessions.is_empty() {
                app.transcript
                    .note("No other session in this folder yet.", theme.dim);
                return;
            }
            let items = sessions.iter().map(session_item).collect();
            app.modal = Some(Modal::Picker(
                Box::new(Picker::new("Resume a session", items)),
                Pending::Resume(sessions),
            ));
        }
        "fork" => {
            if busy {
                return refuse_busy(app);
            }
            let points = session.fork_points();
            if points.is_empty() {
                app.transcript
                    .note("Nothing to fork yet: no prompt in this session.", theme.dim);
                return;
            }
            let items = points
                .iter()
                .map(|p| Item::new(first_line(&p.text)))
                .collect();
            let ids = points.iter().map(|p| p.entry_id.clone()).collect();
            let last = points.len() - 1;
            app.modal = Some(Modal::Picker(
                Box::new(Picker::new("Fork from which prompt?", items).select(last)),
                Pending::Fork(ids),
            ));
        }
        "tree" => {
            if busy {
                return refuse_busy(app);
            }
            let (entries, leaf) = session
                .with_session(|m| (m.entries().to_vec(), m.leaf_entry().map(|e| e.id.clone())));
            let rows = tree_rows(&entries, leaf.as_deref());
            if rows.is_empty() {
                app.transcript
                    .note("The session has no messages yet.", theme.dim);
                return;
            }
            let current = rows
                .iter()
                .position(|(_, item)| item.detail == "← current")
                .unwrap_or(rows.len() - 1);
            let (ids, items): (Vec<String>, Vec<Item>) = rows.into_iter().unzip();
            app.modal = Some(Modal::Picker(
                Box::new(
                    Picker::new(
                        "Session tree: pick where to continue (a prompt goes back into the editor)",
                        items,
                    )
                    .select(current),
                ),
                Pending::Tree(ids),
            ));
        }
        "clone" => {
            if busy {
                return refuse_busy(app);
            }
            let leaf = session.with_session(|m| m.leaf_entry().map(|e| e.id.clone()));
            match session.with_session(|m| m.fork(None)) {
                Ok(copy) => replace(
                    app,
                    History::Opened(Box::new(copy)),
                    Switch::new(
                        "fork",
                        "session_before_fork",
                        json!({"entryId": leaf, "position": "at"}),
                    ),
                    "Cloned: this is a new session with the same conversation.",
                ),
                Err(e) => app.transcript.error(&format!("could not clone: {e}")),
            }
        }
        "name" if rest.is_empty() => {
            let name = session.with_session(|m| m.session_name().map(str::to_string));
            let text = match name {
                Some(name) => format!("This session is named {name:?}."),
                None => "This session has no name: /name NAME gives it one.".to_string(),
            };
            app.transcript.note(&text, theme.dim);
        }
        "name" => {
            tokio::spawn(async move {
                let result = session.set_session_name(&rest).await;
                let _ = done.send(match result {
                    Ok(()) => Done::Note(format!("Session named {rest:?}.")),
                    Err(e) => Done::Error(format!("could not name the session: {e}")),
                });
            });
        }
        "session" => {
            let stats = session.stats();
            let mut text = format!(
                "Session {}\n  file: {}\n  messages: {} prompts, {} answers, {} tool calls\n  \
                 tokens: {} in, {} out, {} cache read, {} cache write\n  cost: ${:.4}",
                stats.session_id,
                stats
                    .session_file
                    .as_deref()
                    .unwrap_or("(not written yet: it is written at the first answer)"),
                stats.user_messages,
                stats.assistant_messages,
                stats.tool_calls,
                tokens(stats.tokens.input),
                tokens(stats.tokens.output),
                tokens(stats.tokens.cache_read),
                tokens(stats.tokens.cache_write),
                stats.cost
            );
            if let Some(usage) = &stats.context_usage {
                text.push_str(&format!(
                    "\n  context: {} of {} ({:.1}%)",
                    tokens(usage.tokens),
                    tokens(usage.context_window),
                    usage.percent
                ));
            }
            app.transcript.note(&text, theme.dim);
        }
        "export" => {
            let output = (!rest.is_empty()).then(|| std::path::PathBuf::from(&rest));
            let cwd = app.cwd.clone();
            match session
                .with_session(|m| crate::cli::export::write_page(m, output.as_deref(), &cwd))
            {
                Ok(path) => app
                    .transcript
                    .note(&format!("Exported to {}", path.display()), theme.dim),
                Err(e) => app.transcript.error(&format!("could not export: {e:#}")),
            }
        }
        "copy" => match session.last_assistant_text() {
            Some(text) => {
                copy_to_clipboard(&text);
                app.transcript.note(
                    &format!(
                        "Copied the last answer ({} characters) to the clipboard.",
                        text.chars().count()
                    ),
                    theme.dim,
                );
            }
            None => app.transcript.note("No answer to copy yet.", theme.dim),
        },
        "undo" => {
            if busy {
                return refuse_busy(app);
            }
            let workspace = app.workspace.clone();
            let cwd = app.cwd.clone();
            tokio::spawn(async move {
                let result = session.undo(workspace.as_ref(), None).await;
                let _ = done.send(match result {
                    Ok(report) => Done::Note(report.describe(&cwd)),
                    Err(e) => Done::Error(format!("nothing undone: {e}")),
                });
            });
        }
        "confirm" => {
            let on = match rest.as_str() {
                "" => !app.workspace.confirm(),
                "on" => true,
                "off" => false,
                other => {
                    app.transcript
                        .error(&format!("/confirm takes on or off, not {other:?}."));
                    return;
                }
            };
            app.workspace.set_confirm(on);
            let text = if on {
                "Edits and writes now show their diff and wait for your answer."
            } else {
                "Edits and writes now go to disk at once."
            };
            app.transcript.note(text, theme.dim);
        }
        "trust" => {
            let resources = ProtectedResources::find(&app.cwd, home().as_deref());
            ask_trust(app, resources);
        }
        "reload" => {
            if busy {
                return refuse_busy(app);
            }
            reload(app, "Reloaded the configuration.");
        }
        "mcp" => {
            let tools = app.held.mcp.tools();
            let mut text = if tools.is_empty() {
                "No MCP tools (servers come from mcp.json; a project's only when trusted)."
                    .to_string()
            } else {
                let names: Vec<String> = tools.iter().map(|t| format!("  {}", t.name())).collect();
                format!("MCP tools:\n{}", names.join("\n"))
            };
            for warning in app.held.mcp.warnings() {
                text.push_str(&format!("\n  warning: {warning}"));
            }
            app.transcript.note(&text, theme.dim);
        }
        _ => app.transcript.error(&format!(
            "Unknown command /{name}: /hotkeys lists keys, Tab completes commands."
        )),
    }
}

/// A picker was answered (`None`: dismissed).
pub fn picked(app: &mut App, pending: Pending, choice: Option<usize>) {
    let theme = app.transcript.theme().clone();
    app.transcript.dirty = true;
    match (pending, choice) {
        (Pending::Model(models), Some(i)) => {
            if let Some(model) = models.into_iter().nth(i) {
                set_model(app, model);
            }
        }
        (Pending::Thinking(levels), Some(i)) => {
            if let Some(level) = levels.get(i) {
                set_thinking(app, *level);
            }
        }
        (Pending::Resume(sessions), Some(i)) => {
            if let Some(chosen) = sessions.get(i) {
                let path = chosen.path.display().to_string();
                replace(
                    app,
                    History::Choice(SessionChoice::Open(path.clone())),
                    Switch {
                        target: Some(path.clone()),
                        ..Switch::new(
                            "resume",
                            "session_before_switch",
                            json!({"reason": "resume", "targetSessionFile": path}),
                        )
                    },
                    "Resumed the session.",
                );
            }
        }
        (Pending::Fork(ids), Some(i)) => {
            let Some(id) = ids.get(i) else { return };
            let session = app.held.live.session().clone();
            let forked = session.with_session(|m| {
                let entry = m.entry(id).map(|e| e.into_owned());
                let text = entry.as_ref().and_then(|e| match &e.kind {
                    tandem_coding::session::EntryKind::Message {
                        message: AgentMessage::Llm(Message::User(u)),
                    } => Some(content_text(&u.content)),
                    _ => None,
                });
                let parent = entry.and_then(|e| e.parent_id);
                let manager = match parent {
                    Some(parent) => m.fork(Some(&parent)),
                    None => Ok(tandem_coding::session::SessionManager::create(
                        m.cwd(),
                        m.session_dir(),
                    )),
                };
                manager.map(|manager| (manager, text))
            });
            match forked {
                Ok((manager, text)) => {
                    if let Some(text) = text {
                        app.editor.set_text(&text, &theme);
                    }
                    replace(
                        app,
                        History::Opened(Box::new(manager)),
                        Switch::new(
                            "fork",
                            "session_before_fork",
                            json!({"entryId": id, "position": "before"}),
                        ),
                        "Forked: edit the prompt and send it.",
                    );
                }
                Err(e) => app.transcript.error(&format!("could not fork: {e}")),
            }
        }
        (Pending::Tree(ids), Some(i)) => {
            let Some(id) = ids.get(i) else { return };
            let session = app.held.live.session().clone();
            let skip = session
                .settings()
                .branch_summary
                .and_then(|b| b.skip_prompt)
                == Some(true);
            if !skip && session.navigation_leaves_messages(id) {
                let items = vec![
                    Item::new("No summary"),
                    Item::new("Summarize the branch you leave (the model writes it)"),
                ];
                app.modal = Some(Modal::Picker(
                    Box::new(
                        Picker::new(
                            "Keep a summary of the branch you leave in the conversation?",
                            items,
                        )
                        .unfiltered(),
                    ),
                    Pending::TreeSummary(id.clone()),
                ));
                return;
            }
            let moved = session.navigate(id).map_err(|e| e.to_string());
            moved_in_tree(app, moved);
        }
        (Pending::TreeSummary(id), Some(0)) => {
            let session = app.held.live.session().clone();
            let moved = session.navigate(&id).map_err(|e| e.to_string());
            moved_in_tree(app, moved);
        }
        (Pending::TreeSummary(id), Some(_)) => {
            let session = app.held.live.session().clone();
            let done = app.done_tx.clone();
            app.transcript.busy = true;
            app.transcript.status = Some("Summarizing the branch you leave… (Esc stops)".into());
            tokio::spawn(async move {
                let moved = session
                    .navigate_summarized(&id, None)
                    .await
                    .map_err(|e| e.to_string());
                let _ = done.send(Done::Moved(moved));
            });
        }
        (Pending::Trust(resources), choice) => trusted(app, resources, choice),
        (Pending::Restore(text), _) => app.editor.set_text(&text, &theme),
        (_, None) => {}
    }
}

/// The end of a move in the session tree (`Err`: what went wrong; the session did not move).
pub fn moved_in_tree(app: &mut App, moved: Result<Option<String>, String>) {
    let theme = app.transcript.theme().clone();
    match moved {
        Ok(prompt) => {
            app.transcript.note(
                "── Moved in the session tree: the conversation continues from here; \
                 the next prompt starts a new branch ──",
                theme.accent,
            );
            let session = app.held.live.session().clone();
            replay(&session, &mut app.transcript);
            if let Some(text) = prompt {
                app.editor.set_text(&text, &theme);
            }
        }
        Err(e) => app.transcript.error(&format!("could not move there: {e}")),
    }
}

/// Opens the folder's trust question.
pub fn ask_trust(app: &mut App, resources: ProtectedResources) {
    let title = crate::lsp::trust::question_text(&resources);
    let items = vec![
        Item::new("Trust this folder (remembered)"),
        Item::new("Trust it for this session only"),
        Item::new("Don't trust it"),
    ];
    app.modal = Some(Modal::Picker(
        Box::new(Picker::new(title, items).unfiltered()),
        Pending::Trust(resources),
    ));
}

fn trusted(app: &mut App, resources: ProtectedResources, choice: Option<usize>) {
    let theme = app.transcript.theme().clone();
    match choice {
        Some(0) => {
            if let Err(e) = TrustStore::new(app.agent_dir.path()).save(&resources.dir, true) {
                app.transcript
                    .error(&format!("could not save the decision: {e}"));
            }
        }
        Some(1) => {}
        _ => {
            app.transcript.note(
                &tandem_coding::trust::untrusted_note(&app.cwd, &resources),
                theme.dim,
            );
            return;
        }
    }
    app.held.trusted = true;
    reload(
        app,
        "The folder is trusted: its project configuration is in use.",
    );
}

/// Reads the configuration again (settings, context files, skills, templates, MCP and language
/// servers), the project's only when the folder is trusted; refused while a run goes on.
fn reload(app: &mut App, said: &str) {
    let session = app.held.live.session().clone();
    let agent_dir = app.agent_dir.clone();
    let cwd = app.cwd.clone();
    let options = app.args.options.clone();
    let workspace = app.workspace.clone();
    let done = app.done_tx.clone();
    let trusted = app.held.trusted;
    let said = said.to_string();
    // The extensions are read again too (a trusted folder's own join the user's); the held
    // ones are replaced when the answer comes.
    let old_extensions = app.held.extensions.clone();
    let ui = app.link.session_ui();
    tokio::spawn(async move {
        let applied = crate::host::setup::apply_trust(
            session.clone(),
            crate::host::setup::TrustLater {
                trusted,
                agent_dir: &agent_dir,
                cwd: &cwd,
                options: &options,
                workspace,
                bash_policy: tandem_coding::BashPolicy::Allow,
                servers: &[],
                intel: None,
            },
        )
        .await;
        let _ = done.send(match applied {
            Ok(mut applied) => {
                let (extensions, problems) = crate::host::setup::reload_extensions(
                    &session,
                    &agent_dir,
                    &cwd,
                    &options,
                    trusted,
                    ("tui", ui),
                    old_extensions,
                )
                .await;
                applied.problems.extend(problems);
                Done::Trusted(Box::new(applied), said, extensions)
            }
            Err(e) => Done::Error(format!("the configuration could not be loaded: {e:#}")),
        });
    });
}

/// Switches the model.
fn set_model(app: &mut App, model: tandem_ai::Model) {
    let session = app.held.live.session().clone();
    let registry = app.held.registry.clone();
    let done = app.done_tx.clone();
    tokio::spawn(async move {
        let name = format!("{}/{}", model.provider, model.id);
        let _ = done.send(match switch_announced(&session, &registry, model).await {
            Ok(()) => Done::Note(format!("Model: {name}")),
            Err(e) => Done::Error(format!("{e:#}")),
        });
    });
}

/// Sets the thinking level (clamped to the model's).
fn set_thinking(app: &mut App, level: ThinkingLevel) {
    let session = app.held.live.session().clone();
    let done = app.done_tx.clone();
    tokio::spawn(async move {
        let _ = done.send(match session.change_thinking_level(level).await {
            Ok(level) => Done::Note(format!("Thinking level: {}", level.as_str())),
            Err(e) => Done::Error(format!("could not set the thinking level: {e}")),
        });
    });
}

/// Ctrl+P: the next available model.
pub fn cycle_model(app: &mut App) {
    let available: Vec<tandem_ai::Model> =
        app.held.registry.available().into_iter().cloned().collect();
    if available.len() < 2 {
        let theme = app.transcript.theme().clone();
        app.transcript
            .note("No other model to switch to.", theme.dim);
        return;
    }
    let current = app
        .held
        .live
        .session()
        .agent()
        .with_state(|s| s.model.clone());
    let next = available
        .iter()
        .position(|m| m.provider == current.provider && m.id == current.id)
        .map_or(0, |i| (i + 1) % available.len());
    set_model(app, available[next].clone());
}

/// Shift+Tab: the next thinking level the model has.
pub fn cycle_thinking(app: &mut App) {
    let session = app.held.live.session().clone();
    let (model, current) = session
        .agent()
        .with_state(|s| (s.model.clone(), s.thinking_level));
    let levels = thinking_levels(&model);
    if levels.len() < 2 {
        let theme = app.transcript.theme().clone();
        app.transcript
            .note("This model has no thinking levels to switch.", theme.dim);
        return;
    }
    let next = levels
        .iter()
        .position(|l| *l == current)
        .map_or(0, |i| (i + 1) % levels.len());
    set_thinking(app, levels[next]);
}

/// `!command`: runs it; its output joins the conversation (after the run, when one goes on).
pub fn shell(app: &mut App, command: String) {
    let session = app.held.live.session().clone();
    let done = app.done_tx.clone();
    tokio::spawn(async move {
        match session.run_bash(&command, false, |_| {}).await {
            Ok(result) => {
                let mut card = super::cards::Card::new("", "bash");
                card.args = serde_json::json!({ "command": command });
                card.output = result.output;
                card.state = match result.exit_code {
                    Some(0) => super::cards::CallState::Done,
                    _ => super::cards::CallState::Failed,
                };
                let _ = done.send(Done::Card(Box::new(card)));
            }
            Err(e) => {
                let _ = done.send(Done::Error(format!("could not run the command: {e}")));
            }
        }
    });
}

/// Why a session is replaced, as extensions hear it: the old session's gate event (which may
/// cancel), its `session_shutdown` (`reason`, `targetSessionFile`), and the new session's
/// `session_start` (`reason`, `previousSessionFile`).
struct Switch {
    reason: &'static str,
    target: Option<String>,
    gate: &'static str,
    gate_event: serde_json::Value,
}

impl Switch {
    fn new(reason: &'static str, gate: &'static str, mut gate_event: serde_json::Value) -> Switch {
        gate_event["type"] = json!(gate);
        Switch {
            reason,
            target: None,
            gate,
            gate_event,
        }
    }
}

/// Replaces the session with one from `history` (in a task); `said` is told once it stands.
/// The old session's extensions may cancel it first; once the new session is set up (its
/// history opened), the old one's extensions are shut down, then the new one's start (pi's
/// order: the two never run side by side).
fn replace(app: &mut App, history: History, switch: Switch, said: &str) {
    let args = app.args.clone();
    let cwd = app.cwd.clone();
    let agent_dir = app.agent_dir.clone();
    let workspace = app.workspace.clone();
    let link = app.link.clone();
    let done = app.done_tx.clone();
    let said = said.to_string();
    let old = app.held.live.clone();
    let old_extensions = app.held.extensions.clone();
    tokio::spawn(async move {
        old.session().abort();
        let _ = old.idle(std::time::Duration::from_secs(10)).await;
        if let Some(extensions) = &old_extensions {
            if extensions.cancels(switch.gate, switch.gate_event).await {
                let _ = done.send(Done::Note(
                    "An extension cancelled the switch: this session goes on.".to_string(),
                ));
                return;
            }
        }
        let previous = old
            .session()
            .session_file()
            .map(|p| p.display().to_string());
        let start = (switch.reason, previous);
        let (tx, rx) = tokio::sync::mpsc::channel(1024);
        let started = match session::prepare(&args, &cwd, &agent_dir, history, &link, start) {
            Ok(prepared) => {
                if let Some(extensions) = old_extensions {
                    extensions
                        .shutdown_for(switch.reason, switch.target.as_deref())
                        .await;
                }
                session::launch(prepared, workspace, tx).await
            }
            Err(e) => Err(e),
        };
        let ok = started.is_ok();
        let _ = done.send(Done::Replace(Box::new(started.map(|held| (held, rx)))));
        if ok {
            let _ = done.send(Done::Note(said));
        }
    });
}

/// Prints what a session already holds (resumed or forked): its messages at the current leaf,
/// as the model sees them. Returns the user's prompts, for the editor's history.
pub fn replay(session: &Arc<AgentSession>, transcript: &mut Transcript) -> Vec<String> {
    let (messages, cwd) =
        session.with_session(|m| (m.build_context().messages, m.cwd().to_path_buf()));
    let theme = transcript.theme().clone();
    let mut prompts = Vec::new();
    let mut shown = 0;
    for message in &messages {
        if tandem_coding::messages::is_hidden(message) {
            continue;
        }
        match message {
            AgentMessage::Llm(Message::User(user)) => {
                let text = content_text(&user.content);
                transcript.prompt(&text);
                prompts.push(text);
                shown += 1;
            }
            AgentMessage::Llm(Message::Assistant(answer)) => {
                for block in &answer.content {
                    match block {
                        tandem_ai::AssistantBlock::Text(t) => transcript.answer(&t.text),
                        tandem_ai::AssistantBlock::ToolCall(call) => {
                            let info = tandem_coding::meta::describe_tool_call(
                                &call.name,
                                &call.arguments,
                                &cwd,
                            );
                            transcript.lines(vec![Line::from(ratatui::text::Span::styled(
                                format!("● {}", super::text::sanitize(&info.title)),
                                theme.dim,
                            ))]);
                        }
                        tandem_ai::AssistantBlock::Thinking(_) => {}
                    }
                }
                shown += 1;
            }
            AgentMessage::Custom(custom) => {
                use tandem_coding::messages::CodingMessage;
                let said = match CodingMessage::parse(custom) {
                    Some(CodingMessage::BranchSummary(m)) => {
                        Some(format!("Summary of a branch left:\n{}", m.summary))
                    }
                    Some(CodingMessage::CompactionSummary(m)) => {
                        Some(format!("Summary of the compacted history:\n{}", m.summary))
                    }
                    _ => None,
                };
                if let Some(text) = said {
                    transcript.note(&text, theme.dim);
                    shown += 1;
                }
            }
            _ => {}
        }
    }
    if shown > 0 {
        transcript.note(&format!("── {shown} earlier messages above ──"), theme.dim);
    }
    prompts
}

/// The session's entries as tree rows (file order, depth first; a row is indented one step
/// more under a point where the conversation branched): prompts, answers, summaries. Tool
/// results, settings changes and hidden messages are left out (their children are kept).
fn tree_rows(
    entries: &[tandem_coding::session::SessionEntry],
    leaf: Option<&str>,
) -> Vec<(String, Item)> {
    use std::collections::HashMap;
    use tandem_coding::session::EntryKind;
    let index: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let tandem_coding::session::TreeLinks { roots, children } =
        tandem_coding::session::TreeLinks::of(entries);
    let label = |entry: &tandem_coding::session::SessionEntry| -> Option<String> {
        match &entry.kind {
            EntryKind::Message { message } if tandem_coding::messages::is_hidden(message) => None,
            EntryKind::Message {
                message: AgentMessage::Llm(Message::User(u)),
            } => Some(format!("› {}", first_line(&content_text(&u.content)))),
            EntryKind::Message {
                message: AgentMessage::Llm(Message::Assistant(a)),
            } => {
                let text = a.text();
                if text.trim().is_empty() {
                    let tools: Vec<String> = a
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            tandem_ai::AssistantBlock::ToolCall(c) => Some(c.name.clone()),
                            _ => None,
                        })
                        .collect();
                    Some(format!("  (calls {})", tools.join(", ")))
                } else {
                    Some(format!("  {}", first_line(&text)))
                }
            }
            EntryKind::Compaction { .. } => Some("  [compacted context]".to_string()),
            EntryKind::BranchSummary { .. } => Some("  [branch summary]".to_string()),
            _ => None,
        }
    };
    let mut rows = Vec::new();
    // Depth-first, iteratively (a long session is a deep chain).
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        let entry = &entries[i];
        if let Some(text) = label(entry) {
            let marker = if depth == 0 {
                String::new()
            } else {
                format!("{}└ ", "  ".repeat(depth - 1))
            };
            let detail = if leaf == Some(entry.id.as_str()) {
                "← current"
            } else {
                ""
            };
            rows.push((
                entry.id.clone(),
                Item::with_detail(format!("{marker}{text}"), detail),
            ));
        }
        let kids = &children[i];
        let next = if kids.len() > 1 { depth + 1 } else { depth };
        for &k in kids.iter().rev() {
            stack.push((k, next));
        }
    }
    // The leaf may be a hidden entry (a tool result): mark the nearest shown row above it.
    if !rows.iter().any(|(_, item)| item.detail == "← current") {
        let mut at = leaf.and_then(|l| index.get(l).copied());
        while let Some(i) = at {
            if let Some(row) = rows.iter_mut().find(|(id, _)| *id == entries[i].id) {
                row.1.detail = "← current".to_string();
                break;
            }
            at = entries[i]
                .parent_id
                .as_deref()
                .and_then(|p| index.get(p).copied());
        }
    }
    rows
}

fn session_item(info: &SessionInfo) -> Item {
    let label = match &info.name {
        Some(name) => format!("{name} — {}", first_line(&info.first_message)),
        None => first_line(&info.first_message),
    };
    let age = info
        .modified
        .elapsed()
        .map(|d| ago(d.as_secs()))
        .unwrap_or_default();
    Item::with_detail(
        label,
        format!(
            "{} messages · {age} · {}",
            info.message_count,
            short_id(&info.id)
        ),
    )
}

fn short_id(id: &str) -> String {
    id.chars().take(8).collect()
}

fn ago(secs: u64) -> String {
    match secs {
        0..=59 => "just now".to_string(),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let short: String = line.chars().take(80).collect();
    if short.len() < line.len() {
        format!("{short}…")
    } else {
        short
    }
}

fn home() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(std::path::PathBuf::from)
}

/// Copies `text` with the terminal's clipboard escape (OSC 52): it works over SSH and in tmux
/// (with `set-clipboard on`), and a terminal that does not know it ignores it.
fn copy_to_clipboard(text: &str) {
    use base64::Engine as _;
    use std::io::Write as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut out = std::io::stdout();
    let _ = write!(out, "\x1b]52;c;{encoded}\x07");
    let _ = out.flush();
}
