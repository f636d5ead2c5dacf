//! The commands of pi 1.6's RPC mode, each answered with pi's response shape (see
//! `docs/rpc-commands.md` in the pi package). Bad arguments are answered with an error naming
//! the field and what it must be (pi itself fails on them with a JavaScript type error).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tandem_agent::QueueMode;
use tandem_ai::{ImageContent, Model, ThinkingLevel};
use tandem_coding::agent_session::{Accepted, AgentSession, OnAccepted, Queue, SessionError};
use tandem_coding::resources::ResourceSource;
use tandem_coding::session::SessionEntry;
use tandem_coding::trust::TrustStore;

use super::wire::{self, Args, Incoming};
use super::{History, Rpc, Why};
use crate::cli::command::SessionChoice;
use crate::extensions::{Extensions, HandlerFailure, Scope};
use crate::host::model_scope::{resolve_scope, split_patterns};
use crate::host::pump::Transport;
use crate::host::setup::{switch_announced, thinking_levels};
use crate::host::turns::Prompt;
use crate::run::Stdout;

/// How long the folder's trust question waits for an answer before the folder stays
/// untrusted (pi's own answer in RPC mode).
const TRUST_TIMEOUT: Duration = Duration::from_secs(60);

/// pi's refusal of a prompt while a run is active without `streamingBehavior`.
const BUSY: &str =
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

/// Sends one record.
async fn send(value: Value) {
    Stdout.send(value).await;
}

/// Writes one record at once, from code that cannot wait (a bash command's output, a
/// question).
pub(super) fn write_now(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = crate::cli::json_output::JsonLines::write_line(&mut out, value);
    let _ = std::io::Write::flush(&mut out);
}

/// Sends a response once the session's events so far are written.
async fn respond(rpc: &Rpc, value: Value) {
    rpc.held().caught_up().await;
    send(value).await;
}

/// Handles one input line.
pub(super) async fn dispatch(rpc: &Arc<Rpc>, incoming: Incoming) {
    match incoming {
        Incoming::Refused(response) => send(response).await,
        Incoming::DialogAnswer(answer) => rpc.dialogs.answer(answer),
        Incoming::Command { id, kind, body } => {
            let response = match run(rpc, id.clone(), &kind, &body).await {
                Ok(Some(response)) => response,
                // Answered by the task it started.
                Ok(None) => return,
                Err(error) => wire::failure(id, Some(&kind), &error),
            };
            respond(rpc, response).await;
        }
    }
}

type Answer = Result<Option<Value>, String>;

fn ok(id: Option<Value>, kind: &str, data: Option<Value>) -> Answer {
    Ok(Some(wire::success(id, kind, data)))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| format!("could not encode the answer: {e}"))
}

async fn run(rpc: &Arc<Rpc>, id: Option<Value>, kind: &str, body: &Map<String, Value>) -> Answer {
    let args = Args::new(kind, body);
    if let Some(answer) = replacing(rpc, id.clone(), kind, &args).await {
        return answer;
    }
    let live = rpc.live();
    let session = live.session().clone();
    match kind {
        "prompt" => prompt(rpc, id, &args).await,
        "steer" | "follow_up" => {
            let message = args.string("message")?;
            let images = images(&args)?;
            let extensions = rpc.held().extensions();
            if extensions.is_some_and(|e| e.is_command(message)) {
                let name = message
                    .trim_start_matches('/')
                    .split(' ')
                    .next()
                    .unwrap_or_default();
                return Err(format!(
                    "Extension command \"/{name}\" cannot be queued. Use prompt() or execute the \
                     command when not streaming."
                ));
            }
            let queue = if kind == "steer" {
                Queue::Steering
            } else {
                Queue::FollowUp
            };
            session
                .queue_with_images(message, images, None, queue)
                .await
                .map_err(|e| e.to_string())?;
            ok(id, kind, Some(json!({ "disposition": "queued" })))
        }
        "abort" => {
            session.abort();
            live.idle(super::STOP_LIMIT).await;
            ok(id, kind, None)
        }
        "clear_queue" => {
            let (steering, follow_up) = session.clear_queue().await;
            ok(id, kind, Some(wire::queue_texts(steering, follow_up)))
        }
        "get_state" => ok(id, kind, Some(state(&session, live.is_busy()))),
        "set_model" => {
            let provider = args.string("provider")?;
            let model_id = args.string("modelId")?;
            let registry = rpc.held().registry.clone();
            let Some(model) = registry
                .available()
                .into_iter()
                .find(|m| m.provider == provider && m.id == model_id)
                .cloned()
            else {
                return Err(format!("Model not found: {provider}/{model_id}"));
            };
            switch_announced(&session, &registry, model.clone())
                .await
                .map_err(|e| format!("{e:#}"))?;
            ok(id, kind, Some(wire::model(&model)))
        }
        "cycle_model" => {
            let data = cycle_model(rpc, &session).await?;
            ok(id, kind, Some(data))
        }
        "get_available_models" => {
            let registry = rpc.held().registry.clone();
            let models: Vec<Value> = registry.available().into_iter().map(wire::model).collect();
            ok(id, kind, Some(json!({ "models": models })))
        }
        "set_thinking_level" => {
            let allowed: Vec<&str> = ThinkingLevel::ALL.iter().map(|l| l.as_str()).collect();
            let level = args.one_of("level", &allowed)?;
            let level = ThinkingLevel::parse(level).unwrap_or_default();
            set_thinking(&session, level).await?;
            ok(id, kind, None)
        }
        "cycle_thinking_level" => {
            let model = session.agent().with_state(|s| s.model.clone());
            if !model.reasoning {
                return ok(id, kind, Some(Value::Null));
            }
            let levels = thinking_levels(&model);
            let current = session.agent().with_state(|s| s.thinking_level);
            let next = levels
                .iter()
                .position(|l| *l == current)
                .map_or(0, |i| (i + 1) % levels.len());
            let level = levels.get(next).copied().unwrap_or_default();
            let level = set_thinking(&session, level).await?;
            ok(id, kind, Some(json!({ "level": level })))
        }
        "get_available_thinking_levels" => {
            let model = session.agent().with_state(|s| s.model.clone());
            ok(id, kind, Some(json!({ "levels": thinking_levels(&model) })))
        }
        "set_steering_mode" | "set_follow_up_mode" => {
            let mode = match args.one_of("mode", &["all", "one-at-a-time"])? {
                "all" => QueueMode::All,
                _ => QueueMode::OneAtATime,
            };
            if kind == "set_steering_mode" {
                session.set_steering_mode(mode);
            } else {
                session.set_follow_up_mode(mode);
            }
            ok(id, kind, None)
        }
        "compact" => {
            let instructions = args.opt_string("customInstructions")?.map(str::to_string);
            let kind = kind.to_string();
            let rpc = rpc.clone();
            tokio::spawn(async move {
                let response = match session.compact(instructions).await {
                    Ok(result) => match to_json(&result) {
                        Ok(data) => wire::success(id, &kind, Some(data)),
                        Err(e) => wire::failure(id, Some(&kind), &e),
                    },
                    Err(e) => wire::failure(id, Some(&kind), &e.to_string()),
                };
                respond(&rpc, response).await;
            });
            Ok(None)
        }
        "set_auto_compaction" => {
            session.set_auto_compaction(args.boolean("enabled")?);
            ok(id, kind, None)
        }
        "set_auto_retry" => {
            session.set_auto_retry(args.boolean("enabled")?);
            ok(id, kind, None)
        }
        "abort_retry" => {
            session.abort_retry();
            ok(id, kind, None)
        }
        "bash" => {
            let command = args.string("command")?.to_string();
            let exclude = args.opt_boolean("excludeFromContext")?.unwrap_or(false);
            let kind = kind.to_string();
            let rpc = rpc.clone();
            tokio::spawn(async move {
                let updates_id = id.clone();
                let result = session
                    .run_bash(&command, exclude, |delta| {
                        write_now(&wire::bash_update(updates_id.as_ref(), delta))
                    })
                    .await;
                let response = match result.map_err(|e| e.to_string()).and_then(|r| to_json(&r)) {
                    Ok(data) => wire::success(id, &kind, Some(data)),
                    Err(e) => wire::failure(id, Some(&kind), &e),
                };
                respond(&rpc, response).await;
            });
            Ok(None)
        }
        "abort_bash" => {
            session.abort_bash();
            ok(id, kind, None)
        }
        "get_session_stats" => ok(id, kind, Some(to_json(&session.stats())?)),
        "export_html" => {
            let output = args.opt_string("outputPath")?.map(Path::new);
            let path = session
                .with_session(|m| crate::cli::export::write_page(m, output, &rpc.cwd))
                .map_err(|e| format!("{e:#}"))?;
            ok(
                id,
                kind,
                Some(json!({ "path": path.display().to_string() })),
            )
        }
        "get_fork_messages" => ok(
            id,
            kind,
            Some(json!({ "messages": to_json(&session.fork_points())? })),
        ),
        "get_entries" => {
            let since = args.opt_string("since")?;
            let (entries, leaf) = session.with_session(|m| {
                let entries = m.entries().to_vec();
                let from = match since {
                    None => Ok(0),
                    Some(since) => entries
                        .iter()
                        .position(|e| e.id == since)
                        .map(|i| i + 1)
                        .ok_or_else(|| format!("Entry not found: {since}")),
                };
                from.map(|from| (entries[from..].to_vec(), m.leaf().map(str::to_string)))
            })?;
            ok(
                id,
                kind,
                Some(json!({ "entries": to_json(&entries)?, "leafId": leaf })),
            )
        }
        "get_tree" => {
            let (entries, leaf) =
                session.with_session(|m| (m.entries().to_vec(), m.leaf().map(str::to_string)));
            ok(
                id,
                kind,
                Some(json!({ "tree": tree(&entries)?, "leafId": leaf })),
            )
        }
        "get_last_assistant_text" => {
            let mut data = Map::new();
            if let Some(text) = session.last_assistant_text() {
                data.insert("text".into(), text.into());
            }
            ok(id, kind, Some(Value::Object(data)))
        }
        "set_session_name" => {
            let name = args.string("name")?.trim();
            if name.is_empty() {
                return Err("Session name cannot be empty".into());
            }
            session
                .set_session_name(name)
                .await
                .map_err(|e| format!("could not name the session: {e}"))?;
            ok(id, kind, None)
        }
        "get_messages" => {
            let messages = session.agent().with_state(|s| to_json(&s.messages))?;
            ok(id, kind, Some(json!({ "messages": messages })))
        }
        "get_commands" => {
            let extensions = rpc.held().extensions();
            let listed = commands(extensions.as_ref(), &session);
            ok(id, kind, Some(json!({ "commands": listed })))
        }
        _ => Ok(Some(wire::unknown(id, Some(kind)))),
    }
}

/// `prompt`: starts a turn (`started`), or queues the message while one runs when
/// `streamingBehavior` says how (`queued`). The response comes before the run's events. An
/// extension command runs at once, even while a run streams, and is answered `handled` when it
/// is done (a command that threw is an `extension_error` event, as in pi); with extensions, the
/// answer waits for their `input` handlers (`handled` when one handled the prompt).
async fn prompt(rpc: &Arc<Rpc>, id: Option<Value>, args: &Args<'_>) -> Answer {
    let message = args.string("message")?.to_string();
    let images = images(args)?;
    let behavior = args.opt_one_of("streamingBehavior", &["steer", "followUp"])?;
    let held = rpc.held();
    let live = held.live.clone();
    let session = live.session().clone();
    let extensions = held.extensions();
    if let Some(extensions) = extensions.clone().filter(|e| e.is_command(&message)) {
        let rpc = rpc.clone();
        tokio::spawn(async move {
            if let Some(Err(failure)) = extensions.run_command(&message).await {
                let path = format!("command:{}", failure.name);
                write_now(&super::ui::extension_error(&HandlerFailure {
                    extension_path: &path,
                    event: "command",
                    error: &failure.error,
                }));
            }
            let handled = json!({ "disposition": "handled" });
            respond(&rpc, wire::success(id, "prompt", Some(handled))).await;
        });
        return Ok(None);
    }
    let queue_instead = |behavior: Option<&str>| match behavior {
        Some("steer") => Ok(Queue::Steering),
        Some(_) => Ok(Queue::FollowUp),
        None => Err(BUSY.to_string()),
    };
    if live.is_busy() || session.agent().is_running() {
        let queue = queue_instead(behavior)?;
        session
            .queue_with_images(&message, images, None, queue)
            .await
            .map_err(|e| e.to_string())?;
        return ok(id, "prompt", Some(json!({ "disposition": "queued" })));
    }
    if extensions.is_some() {
        return prompt_accepting(rpc, id, &held, message, images);
    }
    // Problems that refuse the prompt before it starts are its response's (a skill that
    // cannot be read).
    session.expand(&message).map_err(|e| e.to_string())?;
    respond(
        rpc,
        wire::success(id, "prompt", Some(json!({ "disposition": "started" }))),
    )
    .await;
    let pending = tandem_ai::sync::lock(&held.pending_trust).take();
    let asker = rpc.clone();
    let before = async move {
        if let Some(resources) = pending {
            ask_trust(&asker, resources).await;
        }
    };
    let notices = live.clone();
    let prompt = Prompt {
        text: message,
        images,
        context: None,
    };
    let kept = prompt.clone();
    let started = live.spawn_turn(prompt, before, move |result| {
        if let Err(e) = result {
            crate::eprintln_safe!("Error: the prompt failed: {e}");
        }
        for notice in notices.take_notices() {
            crate::eprintln_safe!("Warning: {notice}");
        }
    });
    if started.is_err() {
        // A run started between the check and now (late messages): the prompt follows it.
        session
            .queue_with_images(&kept.text, kept.images, None, Queue::FollowUp)
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(None)
}

/// `prompt` in a session with extensions: the turn runs (after the trust question), and the
/// response is written once the session knows what became of the prompt (after the `input`
/// handlers): `started` before the run's first event, or `handled`. A prompt refused before
/// that (a skill that cannot be read) is answered with the error.
fn prompt_accepting(
    rpc: &Arc<Rpc>,
    id: Option<Value>,
    held: &super::Held,
    message: String,
    images: Vec<ImageContent>,
) -> Answer {
    let live = held.live.clone();
    let answered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let accepted: OnAccepted = {
        let (id, answered) = (id.clone(), answered.clone());
        Box::new(move |what| {
            answered.store(true, std::sync::atomic::Ordering::Release);
            let disposition = match what {
                Accepted::Started => "started",
                Accepted::Handled => "handled",
            };
            write_now(&wire::success(
                id,
                "prompt",
                Some(json!({ "disposition": disposition })),
            ));
        })
    };
    let pending = tandem_ai::sync::lock(&held.pending_trust).take();
    let asker = rpc.clone();
    let prompt = async move {
        if let Some(resources) = pending {
            ask_trust(&asker, resources).await;
        }
        Prompt {
            text: message,
            images,
            context: None,
        }
    };
    let notices = live.clone();
    // A run that started since the busy check makes `spawn_accepting` refuse: the answer
    // hears `Busy` and the prompt's response is that failure.
    let _ = live.spawn_accepting(prompt, Some(accepted), move |result| {
        if let Err(e) = result {
            if answered.load(std::sync::atomic::Ordering::Acquire) {
                crate::eprintln_safe!("Error: the prompt failed: {e}");
            } else {
                write_now(&wire::failure(id, Some("prompt"), &e.to_string()));
            }
        }
        for notice in notices.take_notices() {
            crate::eprintln_safe!("Warning: {notice}");
        }
    });
    Ok(None)
}

/// Asks the client whether to trust the folder (before the first prompt); a trusted folder
/// gives the session the project's configuration. No answer in time leaves it untrusted.
async fn ask_trust(rpc: &Arc<Rpc>, resources: tandem_coding::trust::ProtectedResources) {
    const ONCE: &str = "Trust";
    const ALWAYS: &str = "Trust always";
    const NEVER: &str = "Don't trust";
    let title = crate::lsp::trust::question_text(&resources);
    let choice = rpc
        .dialogs
        .select(&title, &[ONCE, ALWAYS, NEVER], TRUST_TIMEOUT)
        .await;
    match choice.as_deref() {
        Some(ALWAYS) => {
            if let Err(e) = TrustStore::new(rpc.agent_dir.path()).save(&resources.dir, true) {
                crate::eprintln_safe!("Warning: {e}");
            }
        }
        Some(ONCE) => {}
        _ => {
            crate::eprintln_safe!(
                "Note: {}",
                tandem_coding::trust::untrusted_note(&rpc.cwd, &resources)
            );
            return;
        }
    }
    let held = rpc.held();
    let applied = crate::host::setup::apply_trust(
        held.live.session().clone(),
        crate::host::setup::TrustLater {
            trusted: true,
            agent_dir: &rpc.agent_dir,
            cwd: &rpc.cwd,
            options: &rpc.args.options,
            workspace: held.workspace.clone(),
            bash_policy: tandem_coding::BashPolicy::Allow,
            servers: &[],
            intel: None,
        },
    )
    .await;
    match applied {
        Ok(trusted) => {
            // The folder's own extensions join the user's now.
            let ui = Arc::new(super::ui::RpcUi::new(rpc.dialogs.clone(), write_now));
            let (extensions, more) = crate::host::setup::reload_extensions(
                held.live.session(),
                &rpc.agent_dir,
                &rpc.cwd,
                &rpc.args.options,
                true,
                ("rpc", ui),
                held.extensions(),
            )
            .await;
            *tandem_ai::sync::lock(&held.extensions) = extensions;
            for p in trusted.problems.iter().chain(&more) {
                crate::eprintln_safe!("Warning: {p}");
            }
            held.replace_servers(trusted.mcp, trusted.languages).await;
        }
        Err(e) => crate::eprintln_safe!(
            "Warning: the folder is trusted, but its configuration could not be loaded: {e:#}"
        ),
    }
}

/// The commands that replace the session. They hold no handle of the current session while
/// the replacement runs, so that its file is free once they answer (see [`Rpc::replace`]).
/// `None` for other commands.
async fn replacing(
    rpc: &Arc<Rpc>,
    id: Option<Value>,
    kind: &str,
    args: &Args<'_>,
) -> Option<Answer> {
    match kind {
        "new_session" | "switch_session" | "fork" | "clone" => {
            Some(replace_session(rpc, id, kind, args).await)
        }
        _ => None,
    }
}

/// Whether the current session's extensions cancel a replacement (`session_before_switch`,
/// `session_before_fork` with `event`).
async fn cancelled_by_extensions(rpc: &Rpc, name: &str, event: Value) -> bool {
    let extensions = rpc.held().extensions();
    match extensions {
        Some(extensions) => extensions.cancels(name, event).await,
        None => false,
    }
}

/// pi's answer to a replacement an extension cancelled.
fn cancelled_answer(id: Option<Value>, kind: &str) -> Answer {
    ok(id, kind, Some(json!({ "cancelled": true })))
}

/// One of the [`replacing`] commands.
async fn replace_session(rpc: &Arc<Rpc>, id: Option<Value>, kind: &str, args: &Args<'_>) -> Answer {
    match kind {
        "new_session" => {
            let _parent = args.opt_string("parentSession")?;
            let choice = match rpc.args.session {
                SessionChoice::InMemory => SessionChoice::InMemory,
                _ => SessionChoice::New,
            };
            let event = json!({"type": "session_before_switch", "reason": "new"});
            if cancelled_by_extensions(rpc, "session_before_switch", event).await {
                return cancelled_answer(id, kind);
            }
            replace(rpc, History::Choice(choice), Why::New).await?;
            ok(id, kind, Some(json!({ "cancelled": false })))
        }
        "switch_session" => {
            let path = args.string("sessionPath")?;
            let event = json!({"type": "session_before_switch", "reason": "resume",
                               "targetSessionFile": path});
            if cancelled_by_extensions(rpc, "session_before_switch", event).await {
                return cancelled_answer(id, kind);
            }
            let choice = History::Choice(SessionChoice::Open(path.to_string()));
            replace(rpc, choice, Why::Resume).await?;
            ok(id, kind, Some(json!({ "cancelled": false })))
        }
        "fork" => {
            let entry_id = args.string("entryId")?;
            // Asked first, as pi asks it (before the entry is checked).
            let event = json!({"type": "session_before_fork", "entryId": entry_id,
                               "position": "before"});
            if cancelled_by_extensions(rpc, "session_before_fork", event).await {
                return cancelled_answer(id, kind);
            }
            let (text, manager) = rpc.live().session().with_session(|m| {
                saved(m)?;
                let entry = m.entry(entry_id).map(|e| e.into_owned());
                let text = entry.as_ref().and_then(user_prompt_text);
                match (entry, text) {
                    (Some(entry), Some(text)) => {
                        let manager = match entry.parent_id.as_deref() {
                            Some(parent) => m.fork(Some(parent)).map_err(|e| e.to_string()),
                            None => Ok(fresh_like(m)),
                        };
                        Ok((text, manager))
                    }
                    _ => Err("Invalid entry ID for forking".to_string()),
                }
            })?;
            replace(rpc, History::Opened(Box::new(manager?)), Why::Fork).await?;
            ok(id, kind, Some(json!({ "text": text, "cancelled": false })))
        }
        "clone" => {
            let leaf = rpc.live().session().with_session(|m| match m.leaf() {
                _ if !m.is_written() => Err(NOT_SAVED.to_string()),
                None => Err("Cannot clone session: no current entry selected".to_string()),
                Some(leaf) => Ok(leaf.to_string()),
            })?;
            let event = json!({"type": "session_before_fork", "entryId": leaf, "position": "at"});
            if cancelled_by_extensions(rpc, "session_before_fork", event).await {
                return cancelled_answer(id, kind);
            }
            let manager = rpc.live().session().with_session(|m| match m.leaf() {
                _ if !m.is_written() => Err(NOT_SAVED.to_string()),
                None => Err("Cannot clone session: no current entry selected".to_string()),
                Some(leaf) => {
                    let leaf = leaf.to_string();
                    m.fork(Some(&leaf)).map_err(|e| e.to_string())
                }
            })?;
            replace(rpc, History::Opened(Box::new(manager)), Why::Fork).await?;
            ok(id, kind, Some(json!({ "cancelled": false })))
        }
        other => Err(format!("`{other}` does not replace the session")),
    }
}

async fn replace(rpc: &Arc<Rpc>, history: History, why: Why) -> Result<(), String> {
    rpc.replace(history, why)
        .await
        .map_err(|e| format!("{e:#}"))
}

/// pi's refusal to fork or clone a session that has no file yet.
const NOT_SAVED: &str =
    "This session has not been saved yet. Send a message before cloning or forking it.";

fn saved(m: &tandem_coding::session::SessionManager) -> Result<(), String> {
    if m.is_written() {
        Ok(())
    } else {
        Err(NOT_SAVED.to_string())
    }
}

/// A new, empty session beside `m` (forking at a session's first prompt).
fn fresh_like(
    m: &tandem_coding::session::SessionManager,
) -> tandem_coding::session::SessionManager {
    tandem_coding::session::SessionManager::create(m.cwd(), m.session_dir())
}

/// The text of a user prompt's entry.
fn user_prompt_text(entry: &SessionEntry) -> Option<String> {
    match &entry.kind {
        tandem_coding::session::EntryKind::Message {
            message: tandem_agent::AgentMessage::Llm(tandem_ai::Message::User(u)),
        } => Some(u.content.text()),
        _ => None,
    }
}

/// `images`: pi's image blocks, each checked (valid base64, a PNG, JPEG, GIF or WebP of the
/// type it claims) before it joins the session, as ACP's are.
fn images(args: &Args<'_>) -> Result<Vec<ImageContent>, String> {
    let images = args
        .opt_typed::<Vec<ImageContent>>(
            "images",
            "an array of {\"type\": \"image\", \"data\": base64, \"mimeType\"}",
        )?
        .unwrap_or_default();
    images
        .iter()
        .enumerate()
        .map(|(i, image)| {
            tandem_coding::images::checked_image(&image.data, &image.mime_type)
                .map_err(|why| format!("images[{i}]: {why}"))
        })
        .collect()
}

/// Sets the thinking level, clamped to the model's; recorded and reported only when it
/// changes. The level in effect.
async fn set_thinking(
    session: &AgentSession,
    level: ThinkingLevel,
) -> Result<ThinkingLevel, String> {
    session
        .change_thinking_level(level)
        .await
        .map_err(|e: SessionError| e.to_string())
}

/// `cycle_model`: the next model of the scope (`--models`) or of every available model;
/// `null` when there is no other.
async fn cycle_model(rpc: &Rpc, session: &AgentSession) -> Result<Value, String> {
    let registry = rpc.held().registry.clone();
    let available = registry.available();
    let scoped: Vec<(Model, Option<ThinkingLevel>)> = match &rpc.args.options.models {
        Some(patterns) => resolve_scope(&split_patterns(patterns), &available)
            .0
            .into_iter()
            .map(|s| (s.model, s.thinking))
            .collect(),
        None => available.iter().map(|m| ((*m).clone(), None)).collect(),
    };
    if scoped.len() < 2 {
        return Ok(Value::Null);
    }
    let current = session.agent().with_state(|s| s.model.clone());
    let index = scoped
        .iter()
        .position(|(m, _)| m.provider == current.provider && m.id == current.id)
        .map_or(0, |i| (i + 1) % scoped.len());
    let (model, thinking) = scoped[index].clone();
    switch_announced(session, &registry, model.clone())
        .await
        .map_err(|e| format!("{e:#}"))?;
    if let Some(level) = thinking {
        set_thinking(session, level).await?;
    }
    let level = session.agent().with_state(|s| s.thinking_level);
    Ok(json!({
        "model": wire::model(&model),
        "thinkingLevel": level,
        "isScoped": rpc.args.options.models.is_some(),
    }))
}

/// `get_state`'s data, field for field as pi's `RpcSessionState`.
fn state(session: &AgentSession, busy: bool) -> Value {
    let (model, level, count) = session
        .agent()
        .with_state(|s| (s.model.clone(), s.thinking_level, s.messages.len()));
    let running = session.agent().is_running();
    let (file, id, name) = session.with_session(|m| {
        (
            m.session_file().map(|p| p.display().to_string()),
            m.session_id().to_string(),
            m.session_name().map(str::to_string),
        )
    });
    let mut state = Map::new();
    state.insert("model".into(), wire::model(&model));
    state.insert("thinkingLevel".into(), json!(level));
    state.insert("isStreaming".into(), (busy || running).into());
    state.insert("isCompacting".into(), session.is_compacting().into());
    state.insert("steeringMode".into(), json!(session.steering_mode()));
    state.insert("followUpMode".into(), json!(session.follow_up_mode()));
    if let Some(file) = file {
        state.insert("sessionFile".into(), file.into());
    }
    state.insert("sessionId".into(), id.into());
    if let Some(name) = name {
        state.insert("sessionName".into(), name.into());
    }
    state.insert(
        "autoCompactionEnabled".into(),
        session.auto_compaction_enabled().into(),
    );
    state.insert("messageCount".into(), count.into());
    state.insert(
        "pendingMessageCount".into(),
        session.pending_message_count().into(),
    );
    Value::Object(state)
}

/// The session's entries as pi's tree: `{entry, children}` from each root, in file order.
/// Built from the last entry back (a child always follows its parent in the file), so a long
/// session cannot overflow the stack.
fn tree(entries: &[SessionEntry]) -> Result<Value, String> {
    let tandem_coding::session::TreeLinks { roots, children } =
        tandem_coding::session::TreeLinks::of(entries);
    let mut built: Vec<Option<Value>> = vec![None; entries.len()];
    for i in (0..entries.len()).rev() {
        let kids: Vec<Value> = children[i]
            .iter()
            .filter_map(|&k| built[k].take())
            .collect();
        built[i] = Some(json!({ "entry": to_json(&entries[i])?, "children": kids }));
    }
    Ok(Value::Array(
        roots.into_iter().filter_map(|i| built[i].take()).collect(),
    ))
}

/// `get_commands`: the extension commands, prompt templates and skills a prompt can name, in
/// pi's order.
fn commands(extensions: Option<&Extensions>, session: &AgentSession) -> Vec<Value> {
    let mut out = Vec::new();
    for command in extensions
        .map(Extensions::command_sources)
        .unwrap_or_default()
    {
        let (source, scope) = match command.scope {
            Scope::Cli => ("cli", "temporary"),
            Scope::User => ("auto", "user"),
            Scope::Project => ("auto", "project"),
        };
        let mut entry = Map::new();
        entry.insert("name".into(), command.name.into());
        if let Some(description) = command.description {
            entry.insert("description".into(), description.into());
        }
        entry.insert("source".into(), "extension".into());
        entry.insert(
            "sourceInfo".into(),
            json!({"path": command.path, "source": source, "scope": scope, "origin": "top-level"}),
        );
        out.push(Value::Object(entry));
    }
    let Some(resources) = session.resources() else {
        return out;
    };
    let source_info = |path: &Path, source: ResourceSource| {
        json!({
            "path": path.display().to_string(),
            "source": "local",
            "scope": match source {
                ResourceSource::User => "user",
                ResourceSource::Project => "project",
                ResourceSource::Path => "temporary",
            },
            "origin": "top-level",
        })
    };
    for t in &resources.templates {
        out.push(json!({
            "name": t.name,
            "description": t.description,
            "source": "prompt",
            "sourceInfo": source_info(&t.file_path, t.source),
        }));
    }
    for s in &resources.skills {
        out.push(json!({
            "name": format!("skill:{}", s.name),
            "description": s.description,
            "source": "skill",
            "sourceInfo": source_info(&s.file_path, s.source),
        }));
    }
    out
}
