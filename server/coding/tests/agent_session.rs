//! The session layer end to end with the real scripted provider: persistence on message end,
//! auto-retry after a transient failure, compaction after a context overflow, steering and
//! follow-ups, model and thinking-level changes recorded, and resuming a session file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tandem_agent::{default_stream_fn, AgentMessage};
use tandem_ai::providers::scripted::demo_model;
use tandem_ai::{Message, Model, StopReason, StreamOptions, ThinkingLevel};
use tandem_coding::agent_session::{
    AgentSession, AgentSessionEvent, AgentSessionOptions, Reconfiguration,
};
use tandem_coding::resources::SystemPrompt;
use tandem_coding::session::{EntryKind, SessionManager};
use tandem_coding::settings::Settings;
use tandem_coding::tools::{tools, DEFAULT_TOOLS};
use tandem_coding::{ScriptedWorkspace, ToolEnv};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    sessions: PathBuf,
    script: PathBuf,
}

fn fixture(script: Value) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canon")
        .join("project");
    std::fs::create_dir_all(&root).expect("project");
    std::fs::write(root.join("hello.txt"), "hello world\n").expect("file");
    let sessions = dir.path().join("sessions");
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).expect("script");
    Fixture {
        _dir: dir,
        root,
        sessions,
        script: script_path,
    }
}

fn model(f: &Fixture, context_window: u64) -> Model {
    let mut m = demo_model();
    m.base_url = f.script.to_string_lossy().into_owned();
    m.context_window = context_window;
    m
}

fn settings(value: Value) -> Settings {
    serde_json::from_value(value).expect("settings")
}

fn session(f: &Fixture, manager: SessionManager, model: Model, settings: Settings) -> AgentSession {
    let workspace = Arc::new(ScriptedWorkspace::new(&f.root));
    let env = Arc::new(ToolEnv::new(workspace, f.root.clone()));
    AgentSession::new(AgentSessionOptions {
        cwd: f.root.clone(),
        model,
        thinking_level: ThinkingLevel::Off,
        tools: tools(&env, &DEFAULT_TOOLS),
        inactive_tools: Vec::new(),
        system_prompt: "You are a test assistant.".into(),
        session: manager,
        settings,
        resources: None,
        registry: None,
        runtime_api_key: None,
        stream_fn: default_stream_fn(),
        stream_options: StreamOptions::default(),
        calls: env.calls.clone(),
        extensions: None,
    })
    .expect("session")
}

fn file_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("session file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

fn drain(rx: &mut tokio::sync::mpsc::Receiver<AgentSessionEvent>) -> Vec<String> {
    let mut kinds = Vec::new();
    while let Ok(e) = rx.try_recv() {
        kinds.push(e.kind().to_string());
    }
    kinds
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("finished in time")
}

#[tokio::test]
async fn a_prompt_is_persisted_as_pi_writes_it() {
    let f = fixture(json!({"turns": [
        {"text": "Reading.", "toolCalls": [{"id": "c1", "name": "read", "arguments": {"path": "hello.txt"}}]},
        {"text": "It says hello world."}
    ]}));
    let manager = SessionManager::create(&f.root, &f.sessions);
    let s = session(&f, manager, model(&f, 128_000), Settings::default());
    let mut rx = s.subscribe();
    within(s.prompt("what does hello.txt say?", Vec::new()))
        .await
        .expect("prompt");
    let path = s
        .session_file()
        .expect("written after the first assistant message");
    let lines = file_lines(&path);
    let types: Vec<&str> = lines
        .iter()
        .map(|l| l["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        types,
        [
            "session",
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message",
            "message",
            "message"
        ]
    );
    assert_eq!(lines[0]["version"], 3);
    assert_eq!(lines[1]["provider"], "scripted");
    let roles: Vec<&str> = lines[3..]
        .iter()
        .map(|l| l["message"]["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "toolResult", "assistant"]
    );
    // As pi 1.6 does, the first run records the prompt's sections and the tool declarations.
    let system = &lines[3]["message"];
    assert_eq!(system["content"], "");
    assert_eq!(
        system["sections"],
        json!({"preamble": "You are a test assistant."})
    );
    let declared: Vec<&str> = system["toolsAdded"]
        .as_array()
        .expect("toolsAdded")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(declared, DEFAULT_TOOLS);
    assert!(system["toolsAdded"][0]["parameters"].is_object());
    // Every entry hangs under the previous one.
    for pair in lines[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"]);
    }
    let kinds = drain(&mut rx);
    assert_eq!(kinds.first().map(String::as_str), Some("agent_start"));
    assert_eq!(kinds.last().map(String::as_str), Some("agent_settled"));
}

#[tokio::test]
async fn a_transient_failure_is_retried_then_succeeds() {
    let f = fixture(json!({"turns": [
        {"error": "openai returned HTTP 429 Too Many Requests: slow down"},
        {"text": "Second time lucky."}
    ]}));
    let manager = SessionManager::in_memory(&f.root);
    let s = session(
        &f,
        manager,
        model(&f, 128_000),
        settings(json!({"retry": {"baseDelayMs": 1, "maxDelayMs": 5}})),
    );
    let mut rx = s.subscribe();
    within(s.prompt("hi", Vec::new())).await.expect("prompt");
    let kinds = drain(&mut rx);
    let retry: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .filter(|k| k.starts_with("auto_retry"))
        .collect();
    assert_eq!(retry, ["auto_retry_start", "auto_retry_end"]);
    let last = s.last_assistant().expect("answer");
    assert_eq!(last.stop_reason, StopReason::Stop);
    assert_eq!(last.text(), "Second time lucky.");
    // The failed turn left the context but stays in the session's history.
    let errors_in_context = s.agent().with_state(|st| {
        st.messages
            .iter()
            .filter(|m| {
                m.as_assistant()
                    .is_some_and(|a| a.stop_reason == StopReason::Error)
            })
            .count()
    });
    assert_eq!(errors_in_context, 0);
    let errors_in_session = s.with_session(|m| {
        m.entries()
            .iter()
            .filter(|e| {
                e.message()
                    .and_then(AgentMessage::as_assistant)
                    .is_some_and(|a| a.stop_reason == StopReason::Error)
            })
            .count()
    });
    assert_eq!(errors_in_session, 1);
    // As pi 1.6 records it: a context edit leaves the failed answer out of the context a
    // resumed session builds.
    let (edits, resumed_errors) = s.with_session(|m| {
        let failed = m
            .entries()
            .iter()
            .find(|e| {
                e.message()
                    .and_then(AgentMessage::as_assistant)
                    .is_some_and(|a| a.stop_reason == StopReason::Error)
            })
            .map(|e| e.id.clone())
            .expect("the failed answer");
        let edits: Vec<(String, bool)> = m
            .entries()
            .iter()
            .filter_map(|e| match &e.kind {
                EntryKind::ContextEdit {
                    target_id,
                    replacement,
                } => Some((target_id.clone(), replacement.is_none())),
                _ => None,
            })
            .collect();
        assert_eq!(edits, [(failed, true)]);
        let resumed = m.build_context().messages;
        let errors = resumed
            .iter()
            .filter(|m| {
                m.as_assistant()
                    .is_some_and(|a| a.stop_reason == StopReason::Error)
            })
            .count();
        (edits.len(), errors)
    });
    assert_eq!((edits, resumed_errors), (1, 0));
}

#[tokio::test]
async fn retries_give_up_after_max_retries_with_the_final_error() {
    let err = json!({"error": "anthropic error: overloaded_error: Overloaded"});
    let f = fixture(json!({"turns": [err, err, err]}));
    let s = session(
        &f,
        SessionManager::in_memory(&f.root),
        model(&f, 128_000),
        settings(json!({"retry": {"maxRetries": 2, "baseDelayMs": 1}})),
    );
    let mut rx = s.subscribe();
    within(s.prompt("hi", Vec::new())).await.expect("prompt");
    let kinds = drain(&mut rx);
    let starts = kinds.iter().filter(|k| *k == "auto_retry_start").count();
    assert_eq!(starts, 2);
    assert_eq!(kinds.iter().filter(|k| *k == "auto_retry_end").count(), 1);
    assert_eq!(
        s.last_assistant().map(|a| a.stop_reason),
        Some(StopReason::Error)
    );
}

#[tokio::test]
async fn an_overflow_compacts_and_continues_once() {
    // Long history, a window it overflows, then the two summary calls (the cut splits the
    // last turn, so its beginning is summarized separately), then the answer.
    let long = "x".repeat(4000);
    let f = fixture(json!({"loop": false, "turns": [
        {"text": format!("first answer {long}")},
        {"text": format!("second answer {long}")},
        {"error": "prompt is too long: 9000 tokens > 8000 maximum"},
        {"text": "## Goal\nSummary of the earlier work."},
        {"text": "The current turn began with a long question."},
        {"text": "Answer after compaction."}
    ]}));
    let s = session(
        &f,
        SessionManager::in_memory(&f.root),
        model(&f, 8_000),
        settings(
            json!({"compaction": {"reserveTokens": 100, "keepRecentTokens": 50}, "retry": {"enabled": false}}),
        ),
    );
    let mut rx = s.subscribe();
    within(s.prompt(&format!("one {long}"), Vec::new()))
        .await
        .expect("prompt 1");
    within(s.prompt(&format!("two {long}"), Vec::new()))
        .await
        .expect("prompt 2");
    drain(&mut rx);
    within(s.prompt("three", Vec::new()))
        .await
        .expect("prompt 3");
    let kinds = drain(&mut rx);
    let compaction: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .filter(|k| k.starts_with("compaction_"))
        .collect();
    assert_eq!(
        compaction,
        ["compaction_start", "compaction_end"],
        "{kinds:?}"
    );
    let dump: Vec<String> = s
        .agent()
        .messages()
        .iter()
        .map(|m| {
            let json = serde_json::to_string(m).unwrap_or_default();
            format!(
                "{}: {}",
                m.role(),
                json.chars().take(160).collect::<String>()
            )
        })
        .collect();
    assert_eq!(
        s.last_assistant().map(|a| a.text()),
        Some("Answer after compaction.".into()),
        "{dump:#?}"
    );
    let has_compaction = s.with_session(|m| {
        m.entries().iter().any(|e| {
            matches!(
                e.kind,
                tandem_coding::session::entry::EntryKind::Compaction { .. }
            )
        })
    });
    assert!(has_compaction);
    // The context now starts with the compaction's system checkpoint, then the summary.
    let first_roles: Vec<String> = s.agent().with_state(|st| {
        st.messages
            .iter()
            .take(2)
            .map(|m| m.role().to_string())
            .collect()
    });
    assert_eq!(first_roles, ["system", "compactionSummary"]);
}

#[tokio::test]
async fn model_and_thinking_changes_are_recorded_and_a_session_resumes() {
    let f = fixture(json!({"turns": [{"text": "one"}, {"text": "two"}]}));
    let manager = SessionManager::create(&f.root, &f.sessions);
    let s = session(&f, manager, model(&f, 128_000), Settings::default());
    within(s.prompt("first", Vec::new())).await.expect("prompt");
    s.set_thinking_level(ThinkingLevel::High).expect("recorded");
    let path = s.session_file().expect("file");
    drop(s);

    // The dropped session's tasks release the file (and its lock) as they end; until then a
    // reopen in this process would continue in a copy (a copy not written yet: dropped here).
    let mut reopened = SessionManager::open(&path).expect("reopen");
    for _ in 0..500 {
        if reopened.session_file() == Some(path.as_path()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        reopened = SessionManager::open(&path).expect("reopen");
    }
    assert_eq!(
        reopened.session_file(),
        Some(path.as_path()),
        "the lock was released"
    );
    let s = session(&f, reopened, model(&f, 128_000), Settings::default());
    // The history came back (the recorded prompt, the question, the answer); the second
    // scripted turn answers.
    let history = s.agent().messages();
    assert_eq!(history.len(), 3);
    within(s.prompt("second", Vec::new()))
        .await
        .expect("prompt");
    assert_eq!(s.last_assistant().map(|a| a.text()), Some("two".into()));
    let lines = file_lines(&path);
    assert!(lines
        .iter()
        .any(|l| l["type"] == "thinking_level_change" && l["thinkingLevel"] == "high"));
    let users: Vec<String> = lines
        .iter()
        .filter(|l| l["message"]["role"] == "user")
        .map(|l| {
            l["message"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(users, ["first", "second"]);
    // The prompt and tools did not change: they are recorded once.
    let systems = lines
        .iter()
        .filter(|l| l["message"]["role"] == "system")
        .count();
    assert_eq!(systems, 1);
}

#[tokio::test]
async fn a_changed_prompt_or_tool_set_is_recorded_as_a_patch_and_sent() {
    let f = fixture(json!({"turns": [{"text": "one"}, {"text": "two"}]}));
    let s = session(
        &f,
        SessionManager::in_memory(&f.root),
        model(&f, 128_000),
        Settings::default(),
    );
    within(s.prompt("first", Vec::new())).await.expect("prompt");
    let workspace = Arc::new(ScriptedWorkspace::new(&f.root));
    let env = Arc::new(ToolEnv::new(workspace, f.root.clone()));
    let prompt = SystemPrompt::from_sections([
        (
            "preamble".to_string(),
            "You are a test assistant.".to_string(),
        ),
        ("addendum".to_string(), "Be brief.".to_string()),
    ]);
    s.reconfigure(Reconfiguration {
        settings: Settings::default(),
        resources: None,
        system_prompt: prompt,
        tools: tools(&env, &["read", "bash"]),
        inactive_tools: Vec::new(),
        model: None,
    })
    .expect("reconfigured");
    within(s.prompt("second", Vec::new()))
        .await
        .expect("prompt");
    let messages = s.agent().messages();
    let systems: Vec<Value> = messages
        .iter()
        .filter(|m| m.role() == "system")
        .map(|m| serde_json::to_value(m).expect("json"))
        .collect();
    assert_eq!(systems.len(), 2);
    let patch = &systems[1];
    let keys: Vec<&str> = patch
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["role", "content", "sections", "timestamp", "toolsRemoved"]
    );
    assert_eq!(patch["sections"], json!({"addendum": "Be brief."}));
    assert_eq!(
        patch["toolsRemoved"],
        json!([{"name": "edit"}, {"name": "write"}])
    );
    // The patch comes just before the second question, and the model is sent the whole prompt.
    let roles: Vec<&str> = messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "system", "user", "assistant"]
    );
    let sent = s.agent().with_state(|st| st.system_prompt.clone());
    assert_eq!(
        sent.as_deref(),
        Some("You are a test assistant.\n\nBe brief.")
    );
}

#[tokio::test]
async fn steering_and_follow_ups_go_through_the_session() {
    let f = fixture(json!({"delayMs": 5, "chunkSize": 1, "turns": [
        {"text": "working on it"},
        {"text": "steered"},
        {"text": "followed up"}
    ]}));
    let s = Arc::new(session(
        &f,
        SessionManager::in_memory(&f.root),
        model(&f, 128_000),
        Settings::default(),
    ));
    let mut rx = s.subscribe();
    let runner = {
        let s = s.clone();
        tokio::spawn(async move { s.prompt("start", Vec::new()).await })
    };
    // Queue while the first answer streams.
    loop {
        match within(rx.recv()).await {
            Some(AgentSessionEvent::Agent(e)) if e.kind() == "message_update" => break,
            Some(_) => {}
            None => panic!("events ended"),
        }
    }
    s.steer("change course").await.expect("steer");
    s.follow_up("and then this").await.expect("follow up");
    within(runner).await.expect("joined").expect("prompt");
    let texts: Vec<String> = s
        .agent()
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::Llm(Message::User(u)) => Some(u.content.text()),
            AgentMessage::Llm(Message::Assistant(a)) => Some(a.text()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        [
            "start",
            "working on it",
            "change course",
            "steered",
            "and then this",
            "followed up"
        ]
    );
}

#[tokio::test]
async fn a_prompts_changes_are_checkpointed_and_an_undo_reaches_the_model() {
    let f = fixture(json!({"turns": [
        {"toolCalls": [{"name": "edit", "arguments": {"path": "hello.txt",
            "edits": [{"oldText": "world", "newText": "there"}]}}]},
        {"text": "Changed."}
    ]}));
    let manager = SessionManager::create(&f.root, &f.sessions);
    let s = session(&f, manager, model(&f, 128_000), Settings::default());
    within(s.prompt("say there", vec![])).await.expect("prompt");
    assert_eq!(
        std::fs::read_to_string(f.root.join("hello.txt")).expect("read"),
        "hello there\n"
    );
    let file = s.session_file().expect("session file");
    let lines = file_lines(&file);
    let checkpoint = lines.last().expect("lines");
    assert_eq!(checkpoint["customType"], "tandem.checkpoint");
    assert_eq!(checkpoint["data"]["prompt"], "say there");
    let turn = checkpoint["data"]["turn"]
        .as_str()
        .expect("the prompt's entry");
    let prompt = lines
        .iter()
        .find(|l| l["id"] == turn)
        .expect("the prompt entry");
    assert_eq!(prompt["message"]["role"], "user");

    let workspace = ScriptedWorkspace::new(&f.root);
    let report = within(s.undo(&workspace, None)).await.expect("undo");
    assert_eq!(report.summary(), "Undid 1 turn: 1 file changed back.");
    assert_eq!(
        std::fs::read_to_string(f.root.join("hello.txt")).expect("read"),
        "hello world\n"
    );
    // The model's context ends with the undo's hidden note, as a resumed session's would.
    let last = s.agent().with_state(|st| st.messages.last().cloned());
    let last = serde_json::to_value(last.expect("a message")).expect("json");
    assert_eq!(last["customType"], "tandem.undo-note");
    let resumed = SessionManager::open(&file).expect("open").build_context();
    assert_eq!(
        serde_json::to_value(resumed.messages.last()).expect("json"),
        last
    );
}

#[tokio::test]
async fn a_users_bash_command_streams_and_is_recorded_as_a_bash_execution_message() {
    let f = fixture(json!({"turns": [{"text": "Seen."}]}));
    let manager = SessionManager::create(&f.root, &f.sessions);
    let s = session(&f, manager, model(&f, 128_000), Settings::default());
    let mut streamed = String::new();
    let result = within(s.run_bash("echo hi; exit 4", false, |d| streamed.push_str(&d)))
        .await
        .expect("runs");
    assert_eq!(streamed, "hi\n");
    assert_eq!(
        serde_json::to_value(&result).expect("json"),
        json!({"output": "hi\n", "exitCode": 4, "cancelled": false, "truncated": false})
    );
    within(s.prompt("what did it print?", Vec::new()))
        .await
        .expect("prompt");
    let lines = file_lines(&s.session_file().expect("written"));
    let roles: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["message"]["role"].as_str())
        .collect();
    // The run declares its prompt and tools (pi 1.6's `system` message) before its prompt.
    assert_eq!(roles, ["bashExecution", "system", "user", "assistant"]);
    assert_eq!(lines[3]["message"]["command"], "echo hi; exit 4");
    assert_eq!(s.last_assistant_text().as_deref(), Some("Seen."));
    assert_eq!(s.fork_points().len(), 1);
    let stats = s.stats();
    assert_eq!(
        (
            stats.user_messages,
            stats.assistant_messages,
            stats.total_messages
        ),
        // The system message counts, as in pi 1.6.
        (1, 1, 4)
    );
}

#[tokio::test]
async fn a_bash_command_that_ends_during_a_run_is_recorded_after_the_run() {
    let f = fixture(json!({"turns": [
        {"toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": "sleep 1"}}]},
        {"text": "Done."}
    ]}));
    let manager = SessionManager::create(&f.root, &f.sessions);
    let s = Arc::new(session(
        &f,
        manager,
        model(&f, 128_000),
        Settings::default(),
    ));
    let mut rx = s.subscribe();
    let running = {
        let s = s.clone();
        tokio::spawn(async move { s.prompt("wait a second", Vec::new()).await })
    };
    // Wait for the tool to start, then run the user's command meanwhile.
    within(async {
        while let Some(event) = rx.recv().await {
            if event.kind() == "tool_execution_start" {
                break;
            }
        }
    })
    .await;
    within(s.run_bash("echo meanwhile", false, |_| {}))
        .await
        .expect("runs");
    within(running).await.expect("joins").expect("prompt");
    let lines = file_lines(&s.session_file().expect("written"));
    let roles: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["message"]["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "bashExecution"
        ]
    );
}

#[tokio::test]
async fn navigating_with_a_summary_records_the_branch_left_where_the_conversation_continues() {
    let f = fixture(json!({"turns": [
        {"text": "First answer."},
        {"text": "Second answer."},
        {"text": "The user asked a second thing; it was answered."},
        {"text": "Answer after the summary."}
    ]}));
    let manager = SessionManager::create(&f.root, &f.sessions);
    let s = session(&f, manager, model(&f, 128_000), Settings::default());
    within(s.prompt("first", Vec::new())).await.expect("first");
    within(s.prompt("second", Vec::new()))
        .await
        .expect("second");
    let second_prompt = s
        .fork_points()
        .into_iter()
        .find(|p| p.text == "second")
        .expect("the second prompt")
        .entry_id;
    assert!(s.navigation_leaves_messages(&second_prompt));
    let text = within(s.navigate_summarized(&second_prompt, Some("the tests".into())))
        .await
        .expect("navigates with a summary");
    assert_eq!(text.as_deref(), Some("second"));
    // The model's context: the shared history, then the summary of what was left.
    let context = s.agent().with_state(|st| st.messages.clone());
    let roles: Vec<&str> = context.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["system", "user", "assistant", "branchSummary"]);
    let path = s.session_file().expect("written");
    let lines = file_lines(&path);
    let summary = lines
        .iter()
        .find(|l| l["type"] == "branch_summary")
        .expect("a branch_summary line");
    let text = summary["summary"].as_str().expect("summary text");
    assert!(
        text.starts_with("Before coming back to this point")
            && text.ends_with("The user asked a second thing; it was answered."),
        "{text}"
    );
    let first_answer = lines
        .iter()
        .find(|l| l["message"]["content"][0]["text"] == "First answer.")
        .expect("the first answer");
    assert_eq!(summary["parentId"], first_answer["id"]);
    assert_eq!(summary["fromId"], first_answer["id"]);
    assert_eq!(
        summary["details"],
        json!({"readFiles": [], "modifiedFiles": []})
    );
    assert!(summary["usage"].is_object(), "{summary}");
    // The next prompt continues under the summary.
    within(s.prompt("another second", Vec::new()))
        .await
        .expect("prompt on the branch");
    let lines = file_lines(&path);
    let prompt = lines
        .iter()
        .find(|l| l["message"]["content"][0]["text"] == "another second")
        .expect("the new prompt");
    assert_eq!(prompt["parentId"], summary["id"]);

    // Moving to where the conversation already is leaves nothing: a plain move.
    let leaf = lines.last().expect("entries")["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert!(!s.navigation_leaves_messages(&leaf));

    // A summary that fails (the model has no answer left) leaves the session where it was.
    let before = s.agent().with_state(|st| st.messages.len());
    let failed = within(s.navigate_summarized(&second_prompt, None)).await;
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(s.agent().with_state(|st| st.messages.len()), before);
    assert_eq!(
        s.last_assistant_text().as_deref(),
        Some("Answer after the summary.")
    );
}

#[tokio::test]
async fn navigating_the_tree_branches_and_sets_the_models_context() {
    let f = fixture(json!({"turns": [
        {"text": "First answer."},
        {"text": "Second answer."},
        {"text": "Answer on the new branch."}
    ]}));
    let manager = SessionManager::create(&f.root, &f.sessions);
    let s = session(&f, manager, model(&f, 128_000), Settings::default());
    within(s.prompt("first", Vec::new())).await.expect("first");
    within(s.prompt("second", Vec::new()))
        .await
        .expect("second");
    let second_prompt = s
        .fork_points()
        .into_iter()
        .find(|p| p.text == "second")
        .expect("the second prompt")
        .entry_id;
    // Choosing a prompt moves to just before it and gives its text back.
    let text = s.navigate(&second_prompt).expect("navigates");
    assert_eq!(text.as_deref(), Some("second"));
    let context = s.agent().with_state(|st| st.messages.clone());
    let texts: Vec<String> = context
        .iter()
        .filter_map(|m| match m {
            AgentMessage::Llm(Message::User(u)) => Some(u.content.text()),
            AgentMessage::Llm(Message::Assistant(a)) => Some(a.text()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["first", "First answer."]);
    within(s.prompt("another second", Vec::new()))
        .await
        .expect("prompt on the branch");
    // The file holds both branches: the new prompt's parent is the first answer, as the old
    // second prompt's is.
    let path = s.session_file().expect("written");
    let lines = file_lines(&path);
    let parent_of = |text: &str| {
        lines
            .iter()
            .find(|l| l["message"]["content"][0]["text"] == text)
            .map(|l| l["parentId"].clone())
            .expect("the prompt's line")
    };
    assert_eq!(parent_of("another second"), parent_of("second"));
    // An unknown entry is refused and changes nothing.
    assert!(s.navigate("nope1234").is_err());
    assert_eq!(
        s.last_assistant_text().as_deref(),
        Some("Answer on the new branch.")
    );
}
