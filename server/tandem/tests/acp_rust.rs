//! `tandem acp` driven by the official Rust ACP crate as the client, over the real binary's
//! stdio, with scripted models. The TypeScript SDK tests (acp_sdk.rs) cover the main flows
//! against the mock LLM server; these cover the rest: concurrent sessions, a cancel while a
//! permission request is open, the model and thinking options, the commands list, protocol
//! errors, extensions (`extensions`: pi 1.6's examples asking through the client), and the
//! process's own behaviour (every stdout line is JSON-RPC; closing stdin exits).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, InitializeRequest, NewSessionRequest,
    PromptRequest, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionConfigOptionValue,
    SessionNotification, SetSessionConfigOptionRequest, StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{AcpAgent, AcpAgentConfig, Agent, Client, Error};
use serde_json::{json, Value};

mod support;

#[path = "acp_rust/extensions.rs"]
mod extensions;

/// A hang guard, never a timing assertion.
const GUARD: Duration = Duration::from_secs(60);

/// A temp HOME with an agent dir: models `a/t` and `b/t` replay their own scripts.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(script_a: &Value, script_b: &Value) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(agent.join("prompts")).unwrap();
        std::fs::create_dir_all(agent.join("skills/lint")).unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        for (name, script) in [("a", script_a), ("b", script_b)] {
            std::fs::write(agent.join(format!("{name}.json")), script.to_string()).unwrap();
        }
        let models = json!({"providers": {
            "a": {"api": "scripted", "apiKey": "none", "baseUrl": agent.join("a.json"),
                  "models": [{"id": "t", "name": "Model A"}]},
            "b": {"api": "scripted", "apiKey": "none", "baseUrl": agent.join("b.json"),
                  "models": [{"id": "t", "name": "Model B", "reasoning": true}]}
        }});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(
            agent.join("settings.json"),
            json!({"defaultProvider": "a", "defaultModel": "t"}).to_string(),
        )
        .unwrap();
        std::fs::write(
            agent.join("prompts/review.md"),
            "---\ndescription: Review the change\n---\nReview $1\n",
        )
        .unwrap();
        std::fs::write(
            agent.join("skills/lint/SKILL.md"),
            "---\nname: lint\ndescription: Lint the project\n---\nRun the linter.\n",
        )
        .unwrap();
        Setup { dir }
    }

    fn agent_dir(&self) -> PathBuf {
        self.dir.path().join("agent")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    fn transport(&self) -> AcpAgent {
        AcpAgent::new(
            AcpAgentConfig::new(env!("CARGO_BIN_EXE_tandem"))
                .arg("acp")
                .env(
                    "PI_CODING_AGENT_DIR",
                    self.agent_dir().display().to_string(),
                )
                .env("HOME", self.dir.path().display().to_string()),
        )
    }
}

/// What the client saw, and the permission requests it holds unanswered.
#[derive(Default)]
struct Seen {
    updates: Mutex<Vec<Value>>,
    held: Mutex<
        Vec<(
            RequestPermissionRequest,
            Responder<RequestPermissionResponse>,
        )>,
    >,
}

impl Seen {
    fn updates_of(&self, session: &str) -> Vec<Value> {
        self.updates
            .lock()
            .unwrap()
            .iter()
            .filter(|u| u["sessionId"] == session)
            .map(|u| u["update"].clone())
            .collect()
    }

    fn text_of(&self, session: &str) -> String {
        self.updates_of(session)
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .map(|u| u["content"]["text"].as_str().unwrap_or("").to_string())
            .collect()
    }
}

/// Runs `body` against a fresh `tandem acp`; permission requests are held in `Seen::held`.
async fn with_agent<F>(setup: &Setup, body: F)
where
    F: AsyncFnOnce(ConnectionTo<Agent>, Arc<Seen>) -> Result<(), Error>,
{
    let seen = Arc::new(Seen::default());
    let (s1, s2) = (seen.clone(), seen.clone());
    let run = Client
        .v1()
        .name("tandem-test")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                s1.updates
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&n).unwrap());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: RequestPermissionRequest, responder, _cx| {
                s2.held.lock().unwrap().push((r, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(setup.transport(), async |cx| {
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1).client_capabilities(
                    ClientCapabilities::new().fs(FileSystemCapabilities::new()),
                ),
            )
            .block_task()
            .await?;
            body(cx, seen).await
        });
    tokio::time::timeout(GUARD, run)
        .await
        .expect("the ACP conversation hung")
        .expect("the ACP conversation failed");
}

async fn new_session(cx: &ConnectionTo<Agent>, cwd: &Path) -> Result<String, Error> {
    let r = cx
        .send_request(NewSessionRequest::new(cwd.to_path_buf()))
        .block_task()
        .await?;
    Ok(r.session_id.0.to_string())
}

fn prompt(session: &str, text: &str) -> PromptRequest {
    PromptRequest::new(
        session.to_string(),
        vec![ContentBlock::Text(TextContent::new(text))],
    )
}

/// Prompts `text` and answers the permission request the turn raises with "allow_always"; the
/// turn's response.
async fn prompt_allowing_always(
    cx: &ConnectionTo<Agent>,
    seen: &Seen,
    session: &str,
    text: &str,
) -> Result<PromptResponse, Error> {
    let turn = cx.send_request(prompt(session, text)).block_task();
    let answer = async {
        wait_until(|| !seen.held.lock().unwrap().is_empty()).await;
        let (_, responder) = seen.held.lock().unwrap().remove(0);
        responder.respond(RequestPermissionResponse::new(
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow_always")),
        ))
    };
    let (result, answered) = tokio::join!(turn, answer);
    answered?;
    result
}

/// Answers the oldest held permission request `cancelled`, as a well-behaved client does after
/// it cancelled the turn.
fn answer_held_cancelled(seen: &Seen) -> Result<(), Error> {
    let (_, responder) = seen.held.lock().unwrap().remove(0);
    responder.respond(RequestPermissionResponse::new(
        RequestPermissionOutcome::Cancelled,
    ))
}

async fn wait_until(mut ok: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + GUARD;
    while !ok() {
        assert!(tokio::time::Instant::now() < deadline, "waited too long");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn two_sessions_stream_concurrently_and_stay_independent() {
    let a = json!({"chunkSize": 3, "delayMs": 5, "turns": [{"text": "alpha answer from model A"}]});
    let b = json!({"chunkSize": 3, "delayMs": 5, "turns": [{"text": "bravo answer from model B"}]});
    let setup = Setup::new(&a, &b);
    let cwd = setup.project();
    with_agent(&setup, async |cx, seen| {
        let one = new_session(&cx, &cwd).await?;
        let two = new_session(&cx, &cwd).await?;
        assert_ne!(one, two);
        // Session two switches to model B through its config option.
        let options = cx
            .send_request(SetSessionConfigOptionRequest::new(
                two.clone(),
                "model",
                SessionConfigOptionValue::value_id("b/t"),
            ))
            .block_task()
            .await?;
        let options = serde_json::to_value(&options.config_options).unwrap();
        let model = options
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == "model")
            .unwrap();
        assert_eq!(model["currentValue"], "b/t");
        let first = cx.send_request(prompt(&one, "hi")).block_task();
        let second = cx.send_request(prompt(&two, "hi")).block_task();
        let (r1, r2) = futures_join(first, second).await;
        assert_eq!(r1?.stop_reason, StopReason::EndTurn);
        assert_eq!(r2?.stop_reason, StopReason::EndTurn);
        assert_eq!(seen.text_of(&one), "alpha answer from model A");
        assert_eq!(seen.text_of(&two), "bravo answer from model B");
        Ok(())
    })
    .await;
}

async fn futures_join<A: std::future::Future, B: std::future::Future>(
    a: A,
    b: B,
) -> (A::Output, B::Output) {
    tokio::join!(a, b)
}

#[tokio::test]
async fn a_cancel_while_a_permission_request_is_open_ends_the_turn_cancelled_and_untouched() {
    let a = json!({"turns": [
        {"text": "Writing.", "toolCalls": [{"name": "write",
            "arguments": {"path": "notes.txt", "content": "new\n"}}]},
        {"text": "resumed"},
        {"text": "resumed"}
    ]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    std::fs::write(cwd.join("notes.txt"), "old\n").unwrap();
    with_agent(&setup, async |cx, seen| {
        let id = new_session(&cx, &cwd).await?;
        let turn = cx.send_request(prompt(&id, "write it")).block_task();
        let cancel = async {
            wait_until(|| !seen.held.lock().unwrap().is_empty()).await;
            let request = serde_json::to_value(&seen.held.lock().unwrap()[0].0).unwrap();
            assert_eq!(request["toolCall"]["kind"], "edit");
            assert_eq!(request["toolCall"]["content"][0]["type"], "diff");
            assert_eq!(request["toolCall"]["content"][0]["newText"], "new\n");
            cx.send_notification(agent_client_protocol::v1::schema::CancelNotification::new(
                id.clone(),
            ))?;
            Ok::<_, Error>(())
        };
        let (answer, cancelled) = tokio::join!(turn, cancel);
        cancelled?;
        assert_eq!(answer?.stop_reason, StopReason::Cancelled);
        // A well-behaved client answers the open request `cancelled`; the agent has moved on.
        answer_held_cancelled(&seen)?;
        let call = seen
            .updates_of(&id)
            .into_iter()
            .rev()
            .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"].is_string())
            .expect("the call's final status");
        assert_eq!(call["status"], "failed");
        // The session is still usable: the next prompt runs.
        let again = cx.send_request(prompt(&id, "go on")).block_task().await?;
        assert_eq!(again.stop_reason, StopReason::EndTurn);
        Ok(())
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "old\n"
    );
}

#[tokio::test]
async fn an_allowed_edit_applies_and_always_allow_switches_to_accept_edits() {
    let a = json!({"turns": [
        {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "one\n"}}]},
        {"toolCalls": [{"name": "write", "arguments": {"path": "b.txt", "content": "two\n"}}]},
        {"text": "done"}
    ]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    with_agent(&setup, async |cx, seen| {
        let id = new_session(&cx, &cwd).await?;
        let result = prompt_allowing_always(&cx, &seen, &id, "write both").await?;
        assert_eq!(result.stop_reason, StopReason::EndTurn);
        // Only the first write asked; the second went through in accept-edits mode.
        assert!(seen.held.lock().unwrap().is_empty());
        let updates = seen.updates_of(&id);
        assert!(
            updates
                .iter()
                .any(|u| u["sessionUpdate"] == "current_mode_update"
                    && u["currentModeId"] == "accept-edits"),
            "{updates:#?}"
        );
        Ok(())
    })
    .await;
    assert_eq!(std::fs::read_to_string(cwd.join("a.txt")).unwrap(), "one\n");
    assert_eq!(std::fs::read_to_string(cwd.join("b.txt")).unwrap(), "two\n");
}

#[tokio::test]
async fn the_undo_slash_command_takes_the_last_turn_back_around_the_users_edits() {
    let a = json!({"turns": [
        {"toolCalls": [{"name": "edit", "arguments": {"path": "a.txt",
            "edits": [{"oldText": "two\n", "newText": "TWO\n"}]}}]},
        {"text": "done"}
    ]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    std::fs::write(cwd.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    with_agent(&setup, async |cx, seen| {
        let id = new_session(&cx, &cwd).await?;
        let result = prompt_allowing_always(&cx, &seen, &id, "shout two").await?;
        assert_eq!(result.stop_reason, StopReason::EndTurn);
        assert_eq!(
            std::fs::read_to_string(cwd.join("a.txt")).unwrap(),
            "one\nTWO\nthree\n"
        );
        // The user adds a line above the changed one, then undoes the turn.
        std::fs::write(cwd.join("a.txt"), "zero\none\nTWO\nthree\n").unwrap();
        let undone = cx.send_request(prompt(&id, "/undo")).block_task().await?;
        assert_eq!(undone.stop_reason, StopReason::EndTurn);
        assert!(
            seen.text_of(&id)
                .contains("Undid 1 turn: 1 file changed back."),
            "{}",
            seen.text_of(&id)
        );
        assert_eq!(
            std::fs::read_to_string(cwd.join("a.txt")).unwrap(),
            "zero\none\ntwo\nthree\n"
        );
        let again = cx.send_request(prompt(&id, "/undo")).block_task().await?;
        assert_eq!(again.stop_reason, StopReason::EndTurn);
        assert!(seen.text_of(&id).contains("Nothing to undo"));
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn templates_and_skills_are_listed_and_options_switch_thinking() {
    let a = json!({"turns": [{"text": "ok"}]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    with_agent(&setup, async |cx, seen| {
        let id = new_session(&cx, &cwd).await?;
        wait_until(|| {
            seen.updates_of(&id)
                .iter()
                .any(|u| u["sessionUpdate"] == "available_commands_update")
        })
        .await;
        let update = seen
            .updates_of(&id)
            .into_iter()
            .find(|u| u["sessionUpdate"] == "available_commands_update")
            .unwrap();
        let names: Vec<&str> = update["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["undo", "review", "skill:lint"]);
        assert_eq!(
            update["availableCommands"][1]["description"],
            "Review the change"
        );
        // Model A has no reasoning: only `off`. Model B reasons, without xhigh or max.
        let set = |config: &str, value: &str| {
            cx.send_request(SetSessionConfigOptionRequest::new(
                id.clone(),
                config.to_string(),
                SessionConfigOptionValue::value_id(value.to_string()),
            ))
            .block_task()
        };
        let refused = set("thinking", "maximum").await.expect_err("no such level");
        assert_eq!(
            refused.code,
            agent_client_protocol::ErrorCode::INVALID_PARAMS
        );
        set("model", "b/t").await?;
        let options = serde_json::to_value(set("thinking", "high").await?.config_options).unwrap();
        let thinking = options
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == "thinking")
            .unwrap()
            .clone();
        assert_eq!(thinking["currentValue"], "high");
        assert_eq!(thinking["category"], "thought_level");
        let levels: Vec<&str> = thinking["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["value"].as_str().unwrap())
            .collect();
        assert_eq!(levels, ["off", "minimal", "low", "medium", "high"]);
        let unknown = set("colour", "red").await.expect_err("no such option");
        assert_eq!(
            unknown.code,
            agent_client_protocol::ErrorCode::INVALID_PARAMS
        );
        Ok(())
    })
    .await;
}

/// Raw JSON-RPC lines to and from the process, to check the wire itself.
struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Raw {
    fn start(setup: &Setup) -> Raw {
        Raw::start_with(setup, &[])
    }

    /// `tandem acp` with `args` after it.
    fn start_with(setup: &Setup, args: &[&str]) -> Raw {
        Raw::start_with_env(setup, args, &[])
    }

    /// [`Raw::start_with`] with more environment variables.
    fn start_with_env(setup: &Setup, args: &[&str], env: &[(&str, &Path)]) -> Raw {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .arg("acp")
            .args(args)
            .envs(env.iter().map(|(k, v)| (*k, *v)))
            .env("PI_CODING_AGENT_DIR", setup.agent_dir())
            .env("HOME", setup.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Raw {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads lines until the response to `id`; every line must be a JSON-RPC 2.0 message.
    fn response(&mut self, id: i64) -> Value {
        loop {
            let line = self.lines.recv_timeout(GUARD).expect("no response");
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }
}

impl Raw {
    /// The next message on stdout (every line must be JSON).
    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(GUARD)
            .expect("no message from tandem acp");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"))
    }

    /// Reads messages until one `stop` accepts; all of them, that one last.
    fn until(&mut self, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let done = stop(&message);
            seen.push(message);
            if done {
                return seen;
            }
        }
    }
}

/// The statuses call `id` was given, in order, by `messages` (updates and permission requests).
fn statuses(messages: &[Value], id: &str) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| {
            let call = match m["method"].as_str() {
                Some("session/update") => &m["params"]["update"],
                Some("session/request_permission") => &m["params"]["toolCall"],
                _ => return None,
            };
            // A `tool_call` without a status is `pending` (the schema's default).
            let status = match call["status"].as_str() {
                None if call["sessionUpdate"] == "tool_call" => Some("pending"),
                status => status,
            };
            (call["toolCallId"] == id)
                .then(|| status.map(str::to_string))
                .flatten()
                .map(|s| match m["method"].as_str() {
                    Some("session/request_permission") => format!("asked:{s}"),
                    _ => s,
                })
        })
        .collect()
}

/// ACP's `pending` means "awaiting approval": an edit the user must allow stays pending until
/// allowed, then runs `in_progress`; and a question the client answered after `session/cancel`
/// (as the spec asks it to) is never cancelled with `$/cancel_request`.
#[test]
fn a_call_waits_pending_for_approval_and_answered_questions_are_never_cancelled() {
    let a = json!({"turns": [
        {"text": "Writing.", "toolCalls": [{"id": "w1", "name": "write",
            "arguments": {"path": "notes.txt", "content": "new\n"}}]},
        {"text": "done"},
        {"text": "Again.", "toolCalls": [{"id": "w2", "name": "write",
            "arguments": {"path": "notes.txt", "content": "newer\n"}}]},
        {"text": "after"}
    ]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    std::fs::write(cwd.join("notes.txt"), "old\n").unwrap();
    let mut raw = Raw::start(&setup);
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    raw.response(1);
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []}}));
    let id = raw.response(2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let is_question = |m: &Value| m["method"] == "session/request_permission";

    // Allowed: pending while asked, in_progress once allowed, then completed.
    raw.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": id, "prompt": [{"type": "text", "text": "write it"}]}}),
    );
    let mut seen = raw.until(is_question);
    let question = seen.last().unwrap().clone();
    assert_eq!(
        statuses(&seen, "w1"),
        ["pending", "asked:pending"],
        "{seen:?}"
    );
    raw.send(json!({"jsonrpc": "2.0", "id": question["id"], "result":
        {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}));
    seen.extend(raw.until(|m| m["id"] == 3 && m.get("method").is_none()));
    assert_eq!(seen.last().unwrap()["result"]["stopReason"], "end_turn");
    assert_eq!(
        statuses(&seen, "w1"),
        ["pending", "asked:pending", "in_progress", "completed"],
        "{seen:?}"
    );

    // Cancelled while asked: the client cancels, then answers the question `cancelled`.
    raw.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": {"sessionId": id, "prompt": [{"type": "text", "text": "again"}]}}),
    );
    let question = raw.until(is_question).pop().unwrap();
    raw.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": id}}));
    raw.send(json!({"jsonrpc": "2.0", "id": question["id"], "result":
        {"outcome": {"outcome": "cancelled"}}}));
    let mut after = raw.until(|m| m["id"] == 4 && m.get("method").is_none());
    assert_eq!(after.last().unwrap()["result"]["stopReason"], "cancelled");
    // A request answered after everything the turn sent: nothing cancels the answered question.
    raw.send(json!({"jsonrpc": "2.0", "id": 5, "method": "session/list", "params": {}}));
    after.extend(raw.until(|m| m["id"] == 5 && m.get("method").is_none()));
    assert!(
        !after.iter().any(|m| m["method"] == "$/cancel_request"),
        "{after:?}"
    );
    assert_eq!(
        statuses(&after, "w2").last().map(String::as_str),
        Some("failed")
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "new\n"
    );
}

/// A client that shows compactions and notices gets them: a retried failure as a notice, a
/// compaction as one upserted entity with its summary; one that does not, none of them.
#[test]
fn compactions_and_retries_reach_clients_that_show_them() {
    let a = json!({"turns": [
        {"text": "x", "error": "overloaded (503)"},
        {"text": "hello", "usage": {"input": 950, "output": 10}},
        {"text": "## Goal\n\nSay hello"}
    ]});
    for shows in [true, false] {
        let setup = Setup::new(&a, &a);
        let agent = setup.agent_dir();
        let models = json!({"providers": {"a": {"api": "scripted", "apiKey": "none",
            "baseUrl": agent.join("a.json"),
            "models": [{"id": "t", "contextWindow": 1000, "maxTokens": 100}]}}});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(
            agent.join("settings.json"),
            json!({"defaultProvider": "a", "defaultModel": "t",
                   "retry": {"baseDelayMs": 1},
                   "compaction": {"reserveTokens": 100, "keepRecentTokens": 1}})
            .to_string(),
        )
        .unwrap();
        let mut raw = Raw::start(&setup);
        let session_caps = if shows {
            json!({"compaction": {}, "notices": {}})
        } else {
            json!({})
        };
        raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1,
                       "clientCapabilities": {"session": session_caps}}}));
        raw.response(1);
        raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": setup.project(), "mcpServers": []}}));
        let id = raw.response(2)["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        raw.send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": id, "prompt": [{"type": "text", "text": "hi"}]}}),
        );
        let mut seen = raw.until(|m| m["id"] == 3 && m.get("method").is_none());
        assert_eq!(
            seen.last().unwrap()["result"]["stopReason"],
            "end_turn",
            "{seen:?}"
        );
        // The compaction ends after the turn: read on until a later request's answer.
        raw.send(json!({"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {}}));
        seen.extend(raw.until(|m| m["id"] == 4 && m.get("method").is_none()));
        let kinds: Vec<String> = seen
            .iter()
            .filter_map(|m| m["params"]["update"]["sessionUpdate"].as_str())
            .filter(|k| k.starts_with("compaction") || *k == "notice")
            .map(str::to_string)
            .collect();
        if !shows {
            assert!(kinds.is_empty(), "{kinds:?}");
            continue;
        }
        let updates: Vec<&Value> = seen.iter().map(|m| &m["params"]["update"]).collect();
        let notice = updates
            .iter()
            .find(|u| u["sessionUpdate"] == "notice")
            .expect("notice");
        assert_eq!(notice["severity"], "warning", "{notice}");
        assert!(notice["description"]
            .as_str()
            .unwrap_or("")
            .contains("overloaded"));
        let compaction: Vec<&&Value> = updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "compaction_update")
            .collect();
        let statuses: Vec<&str> = compaction
            .iter()
            .map(|u| u["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["in_progress", "completed"], "{kinds:?}");
        let summary: String = updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "compaction_summary_chunk")
            .map(|u| u["content"]["text"].as_str().unwrap_or(""))
            .collect();
        assert!(summary.contains("## Goal\n\nSay hello"), "{summary}");
    }
}

/// `tandem acp --name` names every new session: its title, and its file's `session_info`.
#[test]
fn the_name_flag_titles_new_sessions() {
    let a = json!({"turns": [{"text": "fine"}]});
    let setup = Setup::new(&a, &a);
    let mut raw = Raw::start_with(&setup, &["--name", "Fix the parser"]);
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    raw.response(1);
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": setup.project(), "mcpServers": []}}));
    let id = raw.response(2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    raw.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": id, "prompt": [{"type": "text", "text": "the first prompt"}]}}),
    );
    let seen = raw.until(|m| m["id"] == 3 && m.get("method").is_none());
    let titles: Vec<&Value> = seen
        .iter()
        .map(|m| &m["params"]["update"])
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .filter_map(|u| u.get("title"))
        .collect();
    assert_eq!(titles, [&json!("Fix the parser")], "{seen:?}");
    drop(raw.stdin.take());
    let _ = raw.child.wait();
    let sessions = setup.agent_dir().join("sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("the session file");
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.contains(r#""type":"session_info""#) && text.contains("Fix the parser"),
        "{text}"
    );
}

#[test]
fn protocol_errors_have_the_spec_codes_and_closing_stdin_exits() {
    let a = json!({"turns": [{"text": "fine"}]});
    let setup = Setup::new(&a, &a);
    let mut raw = Raw::start(&setup);
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    let init = raw.response(1);
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["result"]["agentInfo"]["name"], "tandem");
    // An unknown extension notification is ignored; the connection goes on.
    raw.send(json!({"jsonrpc": "2.0", "method": "_vendor/ping", "params": {}}));
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": "relative/dir", "mcpServers": []}}));
    let relative = raw.response(2);
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
    assert!(
        relative["error"].to_string().contains("absolute"),
        "{relative}"
    );
    raw.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": "no-such-session", "prompt": [{"type": "text", "text": "hi"}]}}),
    );
    let unknown = raw.response(3);
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    raw.send(json!({"jsonrpc": "2.0", "id": 4, "method": "session/teleport", "params": {}}));
    assert_eq!(raw.response(4)["error"]["code"], -32601);
    raw.send(json!({"jsonrpc": "2.0", "id": 5, "method": "_vendor/thing", "params": {}}));
    assert_eq!(raw.response(5)["error"]["code"], -32601);
    raw.send(json!({"jsonrpc": "2.0", "id": 6, "method": "session/new",
        "params": {"mcpServers": []}}));
    assert_eq!(raw.response(6)["error"]["code"], -32602, "a missing cwd");
    let cwd = setup.project();
    raw.send(json!({"jsonrpc": "2.0", "id": 7, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []}}));
    let created = raw.response(7);
    let id = created["result"]["sessionId"].as_str().unwrap().to_string();
    // A bad image never reaches the model (it would stay in every later request).
    raw.send(
        json!({"jsonrpc": "2.0", "id": 9, "method": "session/prompt",
        "params": {"sessionId": id, "prompt": [{"type": "text", "text": "look"},
            {"type": "image", "data": "%%%not base64%%%", "mimeType": "text/x-shellscript"}]}}),
    );
    let bad_image = raw.response(9);
    assert_eq!(bad_image["error"]["code"], -32602, "{bad_image}");
    assert!(
        bad_image["error"].to_string().contains("prompt block 1"),
        "{bad_image}"
    );
    raw.send(
        json!({"jsonrpc": "2.0", "id": 8, "method": "session/prompt",
        "params": {"sessionId": id, "prompt": [{"type": "text", "text": "hi"}]}}),
    );
    assert_eq!(raw.response(8)["result"]["stopReason"], "end_turn");
    // Closing stdin ends the process, successfully.
    drop(raw.stdin.take());
    let deadline = std::time::Instant::now() + GUARD;
    let status = loop {
        if let Some(status) = raw.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "tandem acp did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn a_missing_key_asks_the_client_to_authenticate() {
    let a = json!({"turns": [{"text": "fine"}]});
    let setup = Setup::new(&a, &a);
    // A real provider whose key is nowhere.
    std::fs::write(
        setup.agent_dir().join("settings.json"),
        json!({"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}).to_string(),
    )
    .unwrap();
    let mut raw = Raw::start(&setup);
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    let init = raw.response(1);
    assert_eq!(init["result"]["authMethods"][0]["id"], "pi-config");
    let cwd = setup.project();
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []}}));
    let refused = raw.response(2);
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert!(
        refused["error"]["data"]
            .as_str()
            .unwrap_or("")
            .contains("ANTHROPIC_API_KEY"),
        "{refused}"
    );
    raw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "authenticate",
        "params": {"methodId": "pi-config"}}));
    assert_eq!(raw.response(3)["error"]["code"], -32000);
    raw.send(json!({"jsonrpc": "2.0", "id": 4, "method": "authenticate",
        "params": {"methodId": "oauth"}}));
    assert_eq!(raw.response(4)["error"]["code"], -32602);
}

/// The fixture MCP server (fixtures/mcp, installed by scripts/install-node-deps).
fn fixture_mcp_server() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let server = root.join("fixtures/mcp/server.mjs");
    assert!(
        root.join("fixtures/mcp/node_modules").is_dir(),
        "fixtures/mcp/node_modules is missing: run scripts/install-node-deps"
    );
    server.canonicalize().unwrap()
}

#[tokio::test]
async fn mcp_servers_of_session_new_offer_their_tools_to_the_model() {
    let server = fixture_mcp_server();
    let a = json!({"turns": [
        {"toolCalls": [{"name": "mcp__fixture__add", "arguments": {"a": 2, "b": 3}},
                       {"name": "mcp__fixture__echo_env", "arguments": {"name": "FIXTURE_GREETING"}}]},
        {"text": "2 + 3 = 5"}
    ]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    with_agent(&setup, async |cx, seen| {
        let stdio = agent_client_protocol::v1::schema::McpServerStdio::new("fixture", "node")
            .args(vec![server.display().to_string()])
            .env(vec![agent_client_protocol::v1::schema::EnvVariable::new(
                "FIXTURE_GREETING",
                "hello from the session",
            )]);
        let created = cx
            .send_request(NewSessionRequest::new(cwd.clone()).mcp_servers(vec![
                agent_client_protocol::v1::schema::McpServer::Stdio(stdio),
            ]))
            .block_task()
            .await?;
        let id = created.session_id.0.to_string();
        let done = cx.send_request(prompt(&id, "add")).block_task().await?;
        assert_eq!(done.stop_reason, StopReason::EndTurn);
        let finished: Vec<Value> = seen
            .updates_of(&id)
            .into_iter()
            .filter(|u| u["status"] == "completed")
            .collect();
        let texts: Vec<String> = finished
            .iter()
            .map(|u| {
                u["content"][0]["content"]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect();
        assert!(texts.contains(&"5".to_string()), "{finished:#?}");
        assert!(
            texts.contains(&"hello from the session".to_string()),
            "{finished:#?}"
        );
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn http_mcp_servers_of_session_new_are_reached_with_their_headers_and_bad_ones_refused() {
    let fixture = support::mcp::HttpFixture::start(&[("FIXTURE_TOKEN", "s3cret")]);
    let a = json!({"turns": [
        {"toolCalls": [{"name": "mcp__remote__add", "arguments": {"a": 40, "b": 2}},
                       {"name": "mcp__literal__add", "arguments": {"a": 1, "b": 1}}]},
        {"text": "40 + 2 = 42"}
    ]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    let url = fixture.url.clone();
    with_agent(&setup, async |cx, seen| {
        use agent_client_protocol::v1::schema::{
            HttpHeader, McpServer, McpServerHttp, McpServerSse,
        };
        // A header value that a file would expand is sent as it is: the fixture refuses it.
        let literal = McpServerHttp::new("literal", url.clone()).headers(vec![HttpHeader::new(
            "Authorization",
            "Bearer ${FIXTURE_TOKEN}",
        )]);
        let remote = McpServerHttp::new("remote", url.clone())
            .headers(vec![HttpHeader::new("Authorization", "Bearer s3cret")]);
        let created = cx
            .send_request(
                NewSessionRequest::new(cwd.clone())
                    .mcp_servers(vec![McpServer::Http(literal), McpServer::Http(remote)]),
            )
            .block_task()
            .await?;
        let id = created.session_id.0.to_string();
        let done = cx.send_request(prompt(&id, "add")).block_task().await?;
        assert_eq!(done.stop_reason, StopReason::EndTurn);
        let ended = |status: &str| -> Vec<Value> {
            seen.updates_of(&id)
                .into_iter()
                .filter(|u| u["status"] == status)
                .map(|u| u["content"][0]["content"]["text"].clone())
                .collect()
        };
        assert_eq!(
            ended("completed"),
            vec![json!("42")],
            "{:#?}",
            seen.updates_of(&id)
        );
        // The server that refused the literal header never started: its tool does not exist.
        assert_eq!(
            ended("failed"),
            vec![json!("Tool mcp__literal__add not found")],
            "{:#?}",
            seen.updates_of(&id)
        );

        for (server, needle) in [
            (
                McpServer::Http(McpServerHttp::new("ftp", "ftp://127.0.0.1/mcp")),
                "MCP server `ftp`: url \"ftp://127.0.0.1/mcp\" must be an http:// or https:// URL",
            ),
            (
                McpServer::Sse(McpServerSse::new("old", url.clone())),
                "mcpCapabilities.sse is false",
            ),
        ] {
            let refused = cx
                .send_request(NewSessionRequest::new(cwd.clone()).mcp_servers(vec![server]))
                .block_task()
                .await
                .expect_err("a server Tandem cannot reach is refused");
            assert_eq!(
                refused.code,
                agent_client_protocol::ErrorCode::INVALID_PARAMS
            );
            let data = refused.data.as_ref().and_then(Value::as_str).unwrap_or("");
            let said = format!("{}: {data}", refused.message);
            assert!(said.contains(needle), "{said}");
        }
        Ok(())
    })
    .await;
}

/// Copies pi 0.73.1's own session file where pi keeps the sessions of another directory; its
/// path.
fn copy_pi_session(setup: &Setup) -> PathBuf {
    let pi_dir = setup.agent_dir().join("sessions/--home-user-project--");
    std::fs::create_dir_all(&pi_dir).unwrap();
    let reference = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/reference/pi-0.73.1-session.jsonl");
    let pi_file = pi_dir.join("2026-11-30T07-13-25-974Z_01a22b4d.jsonl");
    std::fs::copy(&reference, &pi_file).unwrap();
    pi_file
}

#[tokio::test]
async fn session_load_replays_a_pi_session_and_the_session_goes_on() {
    let a = json!({"loop": true, "turns": [{"text": "continuing"}]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    let pi_file = copy_pi_session(&setup);
    let before = std::fs::read(&pi_file).unwrap();
    with_agent(&setup, async |cx, seen| {
        let id = "01a22b4d-25d5-77de-8d60-df9ef5711e8b";
        let loaded = cx
            .send_request(agent_client_protocol::v1::schema::LoadSessionRequest::new(
                id.to_string(),
                cwd.clone(),
            ))
            .block_task()
            .await?;
        let loaded = serde_json::to_value(&loaded).unwrap();
        assert_eq!(loaded["modes"]["currentModeId"], "ask");
        // The history arrived before the answer.
        let kinds: Vec<(String, String)> = seen
            .updates_of(id)
            .iter()
            .filter(|u| {
                u["sessionUpdate"] != "available_commands_update"
                    && u["sessionUpdate"] != "session_info_update"
            })
            .map(|u| {
                let kind = u["sessionUpdate"].as_str().unwrap().to_string();
                let detail = match kind.as_str() {
                    "tool_call" => format!("{} {}", u["title"].as_str().unwrap(), u["status"]),
                    _ => u["content"]["text"].as_str().unwrap_or("").to_string(),
                };
                (kind, detail)
            })
            .collect();
        let expected = [
            ("user_message_chunk", "change world to there in hello.txt"),
            ("agent_message_chunk", "Let me read the file."),
            ("tool_call", "Read hello.txt \"completed\""),
            ("tool_call", "Edit hello.txt \"completed\""),
            ("agent_message_chunk", "Done: I changed world to there."),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(k, d)| (k.to_string(), d.to_string()))
            .collect();
        assert_eq!(kinds, expected);
        // After the answer: the title, from the session's first prompt.
        wait_until(|| !infos(&seen, id).is_empty()).await;
        assert_eq!(
            infos(&seen, id)[0]["title"],
            "change world to there in hello.txt"
        );
        // An unknown id is -32002.
        let missing = cx
            .send_request(agent_client_protocol::v1::schema::LoadSessionRequest::new(
                "00000000-0000-0000-0000-000000000000",
                cwd.clone(),
            ))
            .block_task()
            .await
            .expect_err("no such session");
        assert_eq!(i32::from(missing.code), -32002);
        // The loaded session takes prompts; its file only grows.
        let r = cx.send_request(prompt(id, "and now?")).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        Ok(())
    })
    .await;
    let after = std::fs::read(&pi_file).unwrap();
    assert!(after.len() > before.len() && after.starts_with(&before));
}

#[tokio::test]
async fn session_load_of_a_session_another_process_holds_continues_in_a_copy_and_says_so() {
    let a = json!({"loop": true, "turns": [{"text": "continuing"}]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    let pi_file = copy_pi_session(&setup);
    let before = std::fs::read(&pi_file).unwrap();
    // Another process writing the session holds its lock (std's lock is the same flock).
    let holder = std::fs::OpenOptions::new()
        .append(true)
        .open(&pi_file)
        .unwrap();
    holder.try_lock().expect("the test holds the session file");
    with_agent(&setup, async |cx, seen| {
        let id = "01a22b4d-25d5-77de-8d60-df9ef5711e8b";
        cx.send_request(agent_client_protocol::v1::schema::LoadSessionRequest::new(
            id.to_string(),
            cwd.clone(),
        ))
        .block_task()
        .await?;
        // The session goes on under the id the client knows, and says where it is written.
        let r = cx.send_request(prompt(id, "and now?")).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        let said: String = seen
            .updates_of(id)
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str().map(str::to_string))
            .collect();
        assert!(
            said.contains("in use by another process") && said.contains("continuing"),
            "{said}"
        );
        Ok(())
    })
    .await;
    drop(holder);
    assert_eq!(
        std::fs::read(&pi_file).unwrap(),
        before,
        "the held file is untouched"
    );
    let copies: Vec<_> = std::fs::read_dir(pi_file.parent().expect("pi's session folder"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| *p != pi_file)
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    let copy = std::fs::read_to_string(&copies[0]).unwrap();
    let header: Value = serde_json::from_str(copy.lines().next().unwrap()).unwrap();
    assert_eq!(header["parentSession"], json!(pi_file.to_string_lossy()));
    assert!(copy.contains("and now?"));
}

/// Every `.jsonl` file under `dir`, recursively.
fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(session_files(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    out
}

/// The usages of the assistant messages of the one session file under the agent directory.
fn assistant_usages(setup: &Setup) -> Vec<Value> {
    let files = session_files(&setup.agent_dir().join("sessions"));
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "assistant")
        .map(|e| e["message"]["usage"].clone())
        .collect()
}

#[tokio::test]
async fn usage_updates_follow_each_model_call_and_match_the_session_file() {
    let a = json!({"turns": [
        {"thinking": "check the notes", "text": "Reading.",
         "toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}],
         "usage": {"input": 1000, "output": 50}},
        {"text": "The notes say hi.", "usage": {"input": 1200, "output": 30, "cacheRead": 100}}
    ]});
    let setup = Setup::new(&a, &a);
    // Model a/t with a price and a window of its own.
    let agent = setup.agent_dir();
    let models = json!({"providers": {"a": {"api": "scripted", "apiKey": "none",
        "baseUrl": agent.join("a.json"),
        "models": [{"id": "t", "name": "Model A", "contextWindow": 50000,
                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let cwd = setup.project();
    std::fs::write(cwd.join("notes.txt"), "hi\n").unwrap();
    with_agent(&setup, async |cx, seen| {
        let id = new_session(&cx, &cwd).await?;
        let done = cx
            .send_request(prompt(&id, "read the notes"))
            .block_task()
            .await?;
        assert_eq!(done.stop_reason, StopReason::EndTurn);
        let updates = seen.updates_of(&id);
        let usage: Vec<&Value> = updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "usage_update")
            .collect();
        assert_eq!(usage.len(), 2, "{updates:#?}");
        let file = assistant_usages(&setup);
        assert_eq!(file.len(), 2);
        // After each call: that call's context, the window, the cost so far — the file's.
        let mut spent = 0.0;
        for (update, recorded) in usage.iter().zip(&file) {
            spent += recorded["cost"]["total"].as_f64().unwrap();
            assert_eq!(update["used"], recorded["totalTokens"], "{update}");
            assert_eq!(update["size"], 50000);
            // To the last digit (serde_json reads floats to within one unit of it).
            let amount = update["cost"]["amount"].as_f64().unwrap();
            assert!((amount - spent).abs() <= spent * 1e-15, "{update}");
            assert_eq!(update["cost"]["currency"], "USD");
        }
        assert_eq!(usage[1]["used"], 1330);
        // 1000*3 + 50*15 then 1200*3 + 30*15 + 100*0.3, per million tokens.
        assert!((spent - 0.00783).abs() < 1e-12, "{spent}");

        // The read call names its tool; each answer's chunks share one id, a new one each.
        let call = updates
            .iter()
            .find(|u| u["sessionUpdate"] == "tool_call")
            .unwrap();
        assert_eq!(call["name"], "read");
        let ids_of = |kind: &str| -> Vec<String> {
            updates
                .iter()
                .filter(|u| u["sessionUpdate"] == kind)
                .map(|u| u["messageId"].as_str().unwrap().to_string())
                .collect()
        };
        // The first answer's thinking, its reply, the second answer's reply: three messages.
        let (thought, mut replies) = (ids_of("agent_thought_chunk"), ids_of("agent_message_chunk"));
        assert!(!thought.is_empty(), "{updates:#?}");
        assert!(thought.iter().all(|i| *i == thought[0]), "{thought:?}");
        replies.dedup();
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert!(!replies.contains(&thought[0]));
        assert_eq!(seen.text_of(&id), "Reading.The notes say hi.");
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn model_and_thinking_are_config_options_and_auto_compact_a_select_without_booleans() {
    let a = json!({"turns": [{"text": "ok"}]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    with_agent(&setup, async |cx, _seen| {
        let created = cx
            .send_request(NewSessionRequest::new(cwd.clone()))
            .block_task()
            .await?;
        let created = serde_json::to_value(&created).unwrap();
        // No `models` (ACP's older session/set_model): the model is an option.
        assert!(created.get("models").is_none(), "{created}");
        let options = created["configOptions"].as_array().unwrap();
        let ids: Vec<&str> = options.iter().map(|o| o["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["mode", "model", "thinking", "auto-compact"]);
        let categories: Vec<&Value> = options.iter().map(|o| &o["category"]).collect();
        assert_eq!(categories[1], "model");
        assert_eq!(categories[2], "thought_level");
        // Model A has no reasoning: `off` is its only level, and the only one accepted.
        assert_eq!(
            options[2]["options"],
            json!([{"value": "off", "name": "off"}])
        );
        // This client declared no `session.configOptions.boolean`: a select of on and off.
        assert_eq!(options[3]["type"], "select");
        assert_eq!(options[3]["currentValue"], "on");
        let id = created["sessionId"].as_str().unwrap().to_string();
        let set = |config: &str, value: SessionConfigOptionValue| {
            cx.send_request(SetSessionConfigOptionRequest::new(
                id.clone(),
                config.to_string(),
                value,
            ))
            .block_task()
        };
        let refused = set("thinking", SessionConfigOptionValue::value_id("high"))
            .await
            .expect_err("model A cannot think");
        assert_eq!(
            refused.code,
            agent_client_protocol::ErrorCode::INVALID_PARAMS
        );
        assert!(
            format!("{refused:?}").contains("its levels are off"),
            "{refused:?}"
        );
        // Model B reasons; back on model A its `high` falls to `off`.
        set("model", SessionConfigOptionValue::value_id("b/t")).await?;
        set("thinking", SessionConfigOptionValue::value_id("high")).await?;
        let back = set("model", SessionConfigOptionValue::value_id("a/t")).await?;
        let back = serde_json::to_value(back.config_options).unwrap();
        assert_eq!(back[2]["currentValue"], "off");
        assert_eq!(back[2]["options"].as_array().map(Vec::len), Some(1));
        // Off, on, and nothing else; a boolean value is taken too.
        let off = set("auto-compact", SessionConfigOptionValue::value_id("off")).await?;
        let off = serde_json::to_value(off.config_options).unwrap();
        assert_eq!(off[3]["currentValue"], "off");
        // A client that sends every value as an id (acpx 0.19's `set auto-compact true`).
        let on = set("auto-compact", SessionConfigOptionValue::value_id("true")).await?;
        let on = serde_json::to_value(on.config_options).unwrap();
        assert_eq!(on[3]["currentValue"], "on");
        let off = set("auto-compact", SessionConfigOptionValue::boolean(false)).await?;
        let off = serde_json::to_value(off.config_options).unwrap();
        assert_eq!(off[3]["currentValue"], "off");
        let wrong = set("auto-compact", SessionConfigOptionValue::value_id("no"))
            .await
            .expect_err("on or off");
        assert_eq!(wrong.code, agent_client_protocol::ErrorCode::INVALID_PARAMS);
        let wrong = set("model", SessionConfigOptionValue::boolean(true))
            .await
            .expect_err("a select option");
        assert_eq!(wrong.code, agent_client_protocol::ErrorCode::INVALID_PARAMS);
        Ok(())
    })
    .await;
    // `session/set_model` is not a method Tandem offers.
    let mut raw = Raw::start(&setup);
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    let init = raw.response(1);
    assert_eq!(
        init["result"]["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"],
        json!({})
    );
    raw.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/set_model",
        "params": {"sessionId": "x", "modelId": "b/t"}}),
    );
    assert_eq!(raw.response(2)["error"]["code"], -32601);
}

#[tokio::test]
async fn additional_directories_are_workspace_roots_with_the_same_outside_rules() {
    let setup = Setup::new(
        &json!({"turns": [{"text": "-"}]}),
        &json!({"turns": [{"text": "-"}]}),
    );
    let base = setup.dir.path().canonicalize().unwrap();
    let (extra, outside) = (base.join("extra"), base.join("outside"));
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, extra.join("link")).unwrap();
    let a = json!({"turns": [
        {"toolCalls": [{"name": "write", "arguments": {"path": extra.join("inside.txt"), "content": "in\n"}}]},
        {"toolCalls": [{"name": "write", "arguments": {"path": extra.join("link/escape.txt"), "content": "out\n"}}]},
        {"toolCalls": [{"name": "write", "arguments": {"path": format!("{}/../outside/up.txt", extra.display()), "content": "up\n"}}]},
        {"text": "done"}
    ]});
    std::fs::write(setup.agent_dir().join("a.json"), a.to_string()).unwrap();
    let cwd = setup.project();
    with_agent(&setup, async |cx, seen| {
        // Bad roots are refused by name.
        for (bad, says) in [
            (PathBuf::from("relative/dir"), "not an absolute path"),
            (base.join("missing"), "not an existing directory"),
            (cwd.join("file.txt"), "not an existing directory"),
        ] {
            std::fs::write(cwd.join("file.txt"), "x").unwrap();
            let refused = cx
                .send_request(
                    NewSessionRequest::new(cwd.clone()).additional_directories(vec![bad.clone()]),
                )
                .block_task()
                .await
                .expect_err("a bad root");
            assert_eq!(
                refused.code,
                agent_client_protocol::ErrorCode::INVALID_PARAMS
            );
            let text = format!("{refused:?}");
            assert!(
                text.contains(&bad.display().to_string()) && text.contains(says),
                "{text}"
            );
        }
        let created = cx
            .send_request(
                NewSessionRequest::new(cwd.clone()).additional_directories(vec![extra.clone()]),
            )
            .block_task()
            .await?;
        let id = created.session_id.0.to_string();
        cx.send_request(SetSessionConfigOptionRequest::new(
            id.clone(),
            "mode".to_string(),
            SessionConfigOptionValue::value_id("accept-edits"),
        ))
        .block_task()
        .await?;
        // The write inside the extra root needs no question; the two that resolve outside
        // every root (a symlink, `..`) ask, and are rejected.
        let turn = cx
            .send_request(prompt(&id, "write three files"))
            .block_task();
        let answer = async {
            let mut asked = Vec::new();
            for _ in 0..2 {
                wait_until(|| !seen.held.lock().unwrap().is_empty()).await;
                let (request, responder) = seen.held.lock().unwrap().remove(0);
                asked.push(serde_json::to_value(&request.tool_call).unwrap());
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        "reject_once",
                    )),
                ))?;
            }
            Ok::<_, Error>(asked)
        };
        let (result, asked) = tokio::join!(turn, answer);
        assert_eq!(result?.stop_reason, StopReason::EndTurn);
        let asked = asked?;
        assert_eq!(
            asked[0]["locations"][0]["path"].as_str(),
            Some(outside.join("escape.txt").to_str().unwrap()),
            "{asked:#?}"
        );
        assert!(
            asked[1]
                .to_string()
                .contains(outside.join("up.txt").to_str().unwrap()),
            "{asked:#?}"
        );
        Ok(())
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(extra.join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(!outside.join("escape.txt").exists());
    assert!(!outside.join("up.txt").exists());
}

// --- Session lifecycle: resume, close, delete, list pages, titles, logout, $/cancel_request ---

use agent_client_protocol::v1::schema::{
    CloseSessionRequest, DeleteSessionRequest, ListSessionsRequest, ResumeSessionRequest,
};
use tandem_tests::mock_llm::MockLlm;

impl Setup {
    /// Points the default model at the mock LLM server (OpenAI chat completions): `mock/m`.
    fn use_mock(&self, mock: &MockLlm) {
        let models = json!({"providers": {"mock": {
            "api": "openai-completions",
            "baseUrl": format!("{}/v1", mock.base_url()),
            "apiKey": "test-key",
            "models": [{"id": "m", "name": "Mock"}],
        }}});
        let agent = self.agent_dir();
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(
            agent.join("settings.json"),
            json!({"defaultProvider": "mock", "defaultModel": "m"}).to_string(),
        )
        .unwrap();
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/acp")
        .join(name)
}

/// The code of a refused request.
fn code(e: &Error) -> i32 {
    i32::from(e.code)
}

/// The `session_info_update`s of `session`.
fn infos(seen: &Seen, session: &str) -> Vec<Value> {
    seen.updates_of(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .collect()
}

/// The session files (`*.jsonl`) directly in `dir`.
fn jsonl_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    files.sort();
    files
}

/// The file of session `id` under the agent directory's sessions.
fn session_file(setup: &Setup, id: &str) -> PathBuf {
    let root = setup.agent_dir().join("sessions");
    for dir in std::fs::read_dir(&root).unwrap() {
        for file in jsonl_in(&dir.unwrap().path()) {
            if std::fs::read_to_string(&file)
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .contains(id)
            {
                return file;
            }
        }
    }
    panic!("no file of session {id} under {}", root.display())
}

#[tokio::test]
async fn session_resume_in_a_new_process_goes_on_with_the_conversation_without_replaying_it() {
    let mock = MockLlm::start().await.unwrap();
    mock.enqueue_file(fixture("streamed.sse")).unwrap();
    mock.enqueue_file(fixture("done.sse")).unwrap();
    let a = json!({"turns": []});
    let setup = Setup::new(&a, &a);
    setup.use_mock(&mock);
    let cwd = setup.project();
    let id = Arc::new(Mutex::new(String::new()));
    with_agent(&setup, async |cx, seen| {
        let created = new_session(&cx, &cwd).await?;
        let r = cx
            .send_request(prompt(&created, "Remember the word pineapple\nplease"))
            .block_task()
            .await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        // The title came with the first prompt; the turn's end says when it was active.
        let infos = infos(&seen, &created);
        assert_eq!(
            infos[0]["title"], "Remember the word pineapple",
            "{infos:#?}"
        );
        assert!(
            infos.iter().any(|u| u["updatedAt"].is_string()),
            "{infos:#?}"
        );
        *id.lock().unwrap() = created;
        Ok(())
    })
    .await;
    let id = id.lock().unwrap().clone();
    with_agent(&setup, async |cx, seen| {
        let resumed = cx
            .send_request(ResumeSessionRequest::new(id.clone(), cwd.clone()))
            .block_task()
            .await?;
        assert_eq!(
            serde_json::to_value(&resumed).unwrap()["modes"]["currentModeId"],
            "ask"
        );
        // No history: only the commands and the session's title and last activity.
        wait_until(|| !infos(&seen, &id).is_empty()).await;
        let kinds: Vec<Value> = seen
            .updates_of(&id)
            .iter()
            .map(|u| u["sessionUpdate"].clone())
            .collect();
        assert_eq!(
            kinds,
            [
                json!("available_commands_update"),
                json!("session_info_update")
            ]
        );
        let info = &infos(&seen, &id)[0];
        assert_eq!(info["title"], "Remember the word pineapple");
        assert!(info["updatedAt"].is_string(), "{info}");
        let r = cx
            .send_request(prompt(&id, "Which word?"))
            .block_task()
            .await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        // Unknown ids and bad folders are refused.
        let missing = cx
            .send_request(ResumeSessionRequest::new("no-such-session", cwd.clone()))
            .block_task()
            .await
            .expect_err("no such session");
        assert_eq!(code(&missing), -32002);
        let relative = cx
            .send_request(ResumeSessionRequest::new(id.clone(), "relative/dir"))
            .block_task()
            .await
            .expect_err("relative cwd");
        assert_eq!(code(&relative), -32602);
        Ok(())
    })
    .await;
    // The model's request after the resume holds the earlier conversation.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let body = requests[1].json().unwrap().to_string();
    assert!(body.contains("Remember the word pineapple"), "{body}");
    assert!(body.contains("Which word?"), "{body}");
    let first_answer = requests[0].json().unwrap();
    assert!(!first_answer.to_string().contains("Which word?"));
    let messages = requests[1].json().unwrap()["messages"].clone();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user"],
        "{messages:#}"
    );
}

#[tokio::test]
async fn session_close_ends_the_turn_frees_the_session_and_stops_its_mcp_server() {
    let server = fixture_mcp_server();
    let a = json!({"turns": [
        {"text": "Writing.", "toolCalls": [{"name": "write",
            "arguments": {"path": "notes.txt", "content": "new\n"}}]},
        {"text": "never"}
    ]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    let started = setup.dir.path().join("mcp-started");
    with_agent(&setup, async |cx, seen| {
        let stdio = agent_client_protocol::v1::schema::McpServerStdio::new("fixture", "node")
            .args(vec![server.display().to_string()])
            .env(vec![agent_client_protocol::v1::schema::EnvVariable::new(
                "FIXTURE_STARTED_FILE",
                started.display().to_string(),
            )]);
        let created = cx
            .send_request(NewSessionRequest::new(cwd.clone()).mcp_servers(vec![
                agent_client_protocol::v1::schema::McpServer::Stdio(stdio),
            ]))
            .block_task()
            .await?;
        let id = created.session_id.0.to_string();
        let pid = std::fs::read_to_string(&started)
            .unwrap()
            .trim()
            .to_string();
        let proc_dir = PathBuf::from(format!("/proc/{pid}"));
        assert!(proc_dir.exists());
        let turn = cx.send_request(prompt(&id, "write it")).block_task();
        let close = async {
            wait_until(|| !seen.held.lock().unwrap().is_empty()).await;
            cx.send_request(CloseSessionRequest::new(id.clone()))
                .block_task()
                .await
        };
        let (answer, closed) = tokio::join!(turn, close);
        closed?;
        assert_eq!(answer?.stop_reason, StopReason::Cancelled);
        // The session is gone: prompts and a second close are refused.
        let gone = cx
            .send_request(prompt(&id, "hello?"))
            .block_task()
            .await
            .expect_err("closed");
        assert_eq!(code(&gone), -32002);
        let again = cx
            .send_request(CloseSessionRequest::new(id.clone()))
            .block_task()
            .await
            .expect_err("closed twice");
        assert_eq!(code(&again), -32002);
        // Its MCP server was stopped (and reaped).
        wait_until(|| !proc_dir.exists()).await;
        // The partial turn was saved: the session file has the prompt.
        let file = session_file(&setup, &id);
        assert!(std::fs::read_to_string(file).unwrap().contains("write it"));
        Ok(())
    })
    .await;
    assert!(!cwd.join("notes.txt").exists(), "the write never ran");
}

#[tokio::test]
async fn cancel_request_for_a_prompt_ends_the_turn_cancelled() {
    let a = json!({"turns": [
        {"text": "Writing.", "toolCalls": [{"name": "write",
            "arguments": {"path": "notes.txt", "content": "new\n"}}]},
        {"text": "resumed"},
        {"text": "resumed"}
    ]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    with_agent(&setup, async |cx, seen| {
        let id = new_session(&cx, &cwd).await?;
        let sent = cx.send_request(prompt(&id, "write it"));
        let handle = sent.cancellation_handle();
        let turn = sent.block_task();
        let cancel = async {
            wait_until(|| !seen.held.lock().unwrap().is_empty()).await;
            handle.cancel()
        };
        let (answer, cancelled) = tokio::join!(turn, cancel);
        cancelled?;
        assert_eq!(answer?.stop_reason, StopReason::Cancelled);
        answer_held_cancelled(&seen)?;
        // The session goes on.
        let again = cx.send_request(prompt(&id, "go on")).block_task().await?;
        assert_eq!(again.stop_reason, StopReason::EndTurn);
        Ok(())
    })
    .await;
    assert!(!cwd.join("notes.txt").exists());
}

#[tokio::test]
async fn session_delete_removes_only_a_session_file_of_this_client() {
    let a = json!({"loop": true, "turns": [{"text": "ok"}]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    // A session of a folder this client never uses (pi's own file).
    let foreign = copy_pi_session(&setup);
    let foreign_id = "01a22b4d-25d5-77de-8d60-df9ef5711e8b";
    // A precious file outside the session folders, with a session header naming an id.
    let precious = setup.dir.path().join("precious.jsonl");
    let header = json!({"type": "session", "version": 3, "id": "linked-session",
        "timestamp": "2026-11-30T07:13:25.974Z", "cwd": cwd});
    std::fs::write(&precious, format!("{header}\n")).unwrap();
    with_agent(&setup, async |cx, _seen| {
        let kept = new_session(&cx, &cwd).await?;
        cx.send_request(prompt(&kept, "keep me"))
            .block_task()
            .await?;
        let doomed = new_session(&cx, &cwd).await?;
        cx.send_request(prompt(&doomed, "delete me"))
            .block_task()
            .await?;
        let dir = session_file(&setup, &doomed)
            .parent()
            .unwrap()
            .to_path_buf();
        // A link in the session folder to the precious file.
        std::os::unix::fs::symlink(&precious, dir.join("linked.jsonl")).unwrap();
        let delete = |id: &str| {
            cx.send_request(DeleteSessionRequest::new(id.to_string()))
                .block_task()
        };
        let refused = |e: Error, needle: &str| {
            assert_eq!(code(&e), -32602, "{e:?}");
            let data = e.data.clone().unwrap_or_default().to_string();
            assert!(data.contains(needle), "{needle}: {data}");
            // The reason is in the message too: many clients show nothing else.
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        };
        for hostile in ["../../precious", "a/b", "..", "", "x\u{0}y"] {
            refused(
                delete(hostile).await.expect_err(hostile),
                "invalid session id",
            );
        }
        refused(delete(foreign_id).await.expect_err("foreign"), "no session");
        refused(
            delete("linked-session").await.expect_err("link"),
            "not a regular file",
        );
        refused(
            delete("no-such-session").await.expect_err("unknown"),
            "no session",
        );
        // Another process holding the file (session/close answered once Tandem let go of it).
        let held = new_session(&cx, &cwd).await?;
        cx.send_request(prompt(&held, "hold me"))
            .block_task()
            .await?;
        cx.send_request(CloseSessionRequest::new(held.clone()))
            .block_task()
            .await?;
        let held_file = session_file(&setup, &held);
        let holder = std::fs::OpenOptions::new()
            .append(true)
            .open(&held_file)
            .unwrap();
        holder.try_lock().unwrap_or_else(|e| {
            panic!(
                "tandem still holds {} after session/close: {e}",
                held_file.display()
            )
        });
        refused(delete(&held).await.expect_err("held"), "another process");
        drop(holder);
        delete(&held).await?;
        assert!(!held_file.exists());
        // Issue 29: the session open in this connection (the thread the user is in) is closed,
        // then deleted.
        let file = session_file(&setup, &doomed);
        delete(&doomed).await?;
        assert!(!file.exists());
        let gone = cx
            .send_request(prompt(&doomed, "still there?"))
            .block_task()
            .await
            .expect_err("the deleted session is closed");
        assert!(format!("{gone:?}").contains(&doomed), "{gone:?}");
        refused(
            delete(&doomed).await.expect_err("deleted already"),
            "no session",
        );
        let listed = cx
            .send_request(ListSessionsRequest::new().cwd(cwd.clone()))
            .block_task()
            .await?;
        let ids: Vec<String> = listed
            .sessions
            .iter()
            .map(|s| s.session_id.0.to_string())
            .collect();
        // (The link is listed, as any readable session file is; it was not deleted.)
        assert!(ids.contains(&kept) && !ids.contains(&doomed), "{ids:?}");
        Ok(())
    })
    .await;
    assert!(foreign.exists());
    assert_eq!(
        std::fs::read_to_string(&precious).unwrap(),
        format!("{header}\n")
    );
}

#[tokio::test]
async fn session_list_pages_through_every_session_and_refuses_bad_cursors() {
    let a = json!({"loop": true, "turns": [{"text": "ok"}]});
    let setup = Setup::new(&a, &a);
    let cwd = setup.project();
    with_agent(&setup, async |cx, _seen| {
        let first = new_session(&cx, &cwd).await?;
        cx.send_request(prompt(&first, "the real one"))
            .block_task()
            .await?;
        // 149 more sessions of this folder, written as files.
        let dir = session_file(&setup, &first).parent().unwrap().to_path_buf();
        for n in 0..149 {
            let id = format!("0000{n:04}-0000-4000-8000-000000000000");
            let header = json!({"type": "session", "version": 3, "id": id,
                "timestamp": format!("2026-01-01T00:00:{:02}.{:03}Z", n % 60, n), "cwd": cwd});
            std::fs::write(dir.join(format!("{id}.jsonl")), format!("{header}\n")).unwrap();
        }
        let list = |cursor: Option<String>| {
            cx.send_request(ListSessionsRequest::new().cwd(cwd.clone()).cursor(cursor))
                .block_task()
        };
        let mut ids = Vec::new();
        let mut cursor = None;
        let mut pages = 0;
        loop {
            let page = list(cursor).await?;
            pages += 1;
            ids.extend(page.sessions.iter().map(|s| s.session_id.0.to_string()));
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(pages, 2);
        assert_eq!(ids.len(), 150);
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 150, "no session twice");
        for bad in ["abc", "-1", "99999"] {
            let e = list(Some(bad.to_string())).await.expect_err(bad);
            assert_eq!(code(&e), -32602);
            assert!(e.data.unwrap().to_string().contains("invalid cursor"));
        }
        // Another folder has none.
        let other = setup.dir.path().join("elsewhere");
        let page = cx
            .send_request(ListSessionsRequest::new().cwd(other))
            .block_task()
            .await?;
        assert!(page.sessions.is_empty() && page.next_cursor.is_none());
        Ok(())
    })
    .await;
}

#[test]
fn logout_closes_the_sessions_and_asks_to_authenticate_again_keeping_the_keys() {
    let a = json!({"loop": true, "turns": [{"text": "fine"}]});
    let setup = Setup::new(&a, &a);
    let models = std::fs::read(setup.agent_dir().join("models.json")).unwrap();
    let mut raw = Raw::start(&setup);
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    let init = raw.response(1);
    let caps = &init["result"]["agentCapabilities"];
    assert_eq!(caps["auth"]["logout"], json!({}), "{caps}");
    for method in ["list", "delete", "resume", "close"] {
        assert_eq!(caps["sessionCapabilities"][method], json!({}), "{caps}");
    }
    let cwd = setup.project();
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []}}));
    let id = raw.response(2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    raw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "logout", "params": {}}));
    assert_eq!(raw.response(3)["result"], json!({}));
    raw.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": {"sessionId": id, "prompt": [{"type": "text", "text": "hi"}]}}),
    );
    assert_eq!(raw.response(4)["error"]["code"], -32002);
    raw.send(json!({"jsonrpc": "2.0", "id": 5, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []}}));
    let refused = raw.response(5);
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert!(refused["error"]["data"]
        .as_str()
        .unwrap()
        .contains("authenticate"));
    raw.send(
        json!({"jsonrpc": "2.0", "id": 6, "method": "session/resume",
        "params": {"sessionId": id, "cwd": cwd}}),
    );
    assert_eq!(raw.response(6)["error"]["code"], -32000);
    raw.send(json!({"jsonrpc": "2.0", "id": 7, "method": "authenticate",
        "params": {"methodId": "pi-config"}}));
    assert_eq!(raw.response(7)["result"], json!({}));
    raw.send(json!({"jsonrpc": "2.0", "id": 8, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []}}));
    assert!(raw.response(8)["result"]["sessionId"].is_string());
    assert_eq!(
        std::fs::read(setup.agent_dir().join("models.json")).unwrap(),
        models
    );
}

#[test]
fn lifecycle_requests_with_bad_params_get_invalid_params() {
    let a = json!({"turns": [{"text": "fine"}]});
    let setup = Setup::new(&a, &a);
    let mut raw = Raw::start(&setup);
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    raw.response(1);
    let bad = [
        ("session/resume", json!({"cwd": "/tmp"})),
        ("session/resume", json!({"sessionId": 7, "cwd": "/tmp"})),
        ("session/close", json!({})),
        ("session/delete", json!({"sessionId": null})),
        ("session/list", json!({"cwd": "not/absolute"})),
    ];
    for (n, (method, params)) in bad.iter().enumerate() {
        let id = 10 + n as i64;
        raw.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = raw.response(id);
        assert_eq!(
            answer["error"]["code"], -32602,
            "{method} {params}: {answer}"
        );
    }
    raw.send(
        json!({"jsonrpc": "2.0", "id": 20, "method": "session/close",
        "params": {"sessionId": "no-such-session"}}),
    );
    assert_eq!(raw.response(20)["error"]["code"], -32002);
}
