//! The session host seen from each front door. One setup for all three means one story for the
//! user: the same broken configuration gives `tandem -p`, `tandem lsp` and `tandem acp` the same
//! error (what to set, and which file is broken), and the same non-fatal problem reaches each
//! user (stderr, `window/showMessage`, the first turn's message). The command-line flags of
//! `tandem lsp` and `tandem acp` are honoured or refused, never dropped.

mod support;

use std::process::Stdio;

use serde_json::{json, Value};
use support::front_doors::{cli, lsp_with, Acp};
use support::lsp::initialize;
use support::process::in_sandbox;
use support::Sandbox;
use tandem_tests::lsp_client::LspClient;
use tandem_tests::wire::{Turn, WireApi};

/// A sandbox whose models.json and settings.json are both broken: no model is usable, and the
/// error must name both files.
fn broken() -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_agent_file("models.json", "{\"providers\": {\"mock\": ");
    sandbox.write_agent_file("settings.json", "{\"defaultProvider\": \"mock\",,}");
    sandbox
}

/// Asserts `text` tells the user what to do and names both broken files.
fn tells_what_to_fix(door: &str, sandbox: &Sandbox, text: &str) {
    assert!(text.contains("No models available"), "{door}: {text}");
    for file in ["models.json", "settings.json"] {
        let path = sandbox.agent_dir.join(file).display().to_string();
        assert!(
            text.contains(&format!("Configuration problem: {path}")),
            "{door} does not name {path}: {text}"
        );
    }
}

#[test]
fn the_same_setup_error_reaches_the_user_of_every_front_door() -> anyhow::Result<()> {
    let sandbox = broken();

    let run = cli(&sandbox, &["-p", "hi"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    tells_what_to_fix("tandem -p", &sandbox, &run.stderr);

    // An editor without the event stream: the request's error, and a message it shows.
    let mut lsp = lsp_with(&sandbox, json!({}), Box::new(|_, _| Ok(())), false)?;
    let r = lsp.request_response("tandem/sessions/new", json!({}))?;
    assert_eq!(r["error"]["code"], -32003, "{r}");
    tells_what_to_fix(
        "tandem lsp",
        &sandbox,
        r["error"]["message"].as_str().unwrap_or(""),
    );
    let shown = lsp.wait_for("the error shown", |m| {
        m.method == "window/showMessage" && m.params["type"] == 1
    })?;
    tells_what_to_fix(
        "tandem lsp's showMessage",
        &sandbox,
        shown.params["message"].as_str().unwrap_or(""),
    );
    lsp.shutdown()?;

    let mut acp = Acp::start(&sandbox, Box::new(|_, _| Value::Null));
    let r = acp.call("session/new", json!({"cwd": sandbox.cwd, "mcpServers": []}));
    // ACP's "authentication required", with the same text.
    assert_eq!(r["error"]["code"], -32000, "{r}");
    tells_what_to_fix(
        "tandem acp",
        &sandbox,
        r["error"]["data"].as_str().unwrap_or(""),
    );
    acp.close();
    Ok(())
}

#[test]
fn a_non_fatal_problem_reaches_the_user_of_every_front_door() -> anyhow::Result<()> {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_agent_file("settings.json", "{\"theme\": \"dark\",,}");
    let settings = sandbox
        .agent_dir
        .join("settings.json")
        .display()
        .to_string();

    sandbox.answer(&Turn::text("ok"));
    let run = cli(&sandbox, &["--model", "mock/mock-model", "-p", "hi"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("Warning: {settings}")),
        "{}",
        run.stderr
    );

    let mut lsp = lsp_with(
        &sandbox,
        json!({"model": "mock/mock-model"}),
        Box::new(|_, _| Ok(())),
        true,
    )?;
    lsp.request("tandem/sessions/new", json!({}))?;
    let shown = lsp.wait_for("the problem shown", |m| {
        m.method == "window/showMessage"
            && m.params["message"]
                .as_str()
                .is_some_and(|t| t.contains(&settings))
    })?;
    assert_eq!(shown.params["type"], 2, "a warning: {}", shown.params);
    lsp.shutdown()?;

    let mut acp = acp_said_hi(&sandbox, &["--model", "mock/mock-model"]);
    let told = acp.updates().iter().any(|u| {
        u["sessionUpdate"] == "agent_message_chunk"
            && u["content"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("configuration problem") && t.contains(&settings))
    });
    assert!(told, "{:?}", acp.updates());
    acp.close();
    Ok(())
}

#[test]
fn servers_refuse_what_they_cannot_use_at_start() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    // Given before the subcommand: refused by name; after it: not one of its flags.
    for (args, says) in [
        (
            &["--continue", "lsp"][..],
            "--continue cannot be used with `tandem lsp`",
        ),
        (
            &["--session", "x.jsonl", "lsp"],
            "--session cannot be used with `tandem lsp`",
        ),
        (
            &["--fork", "abc", "acp"],
            "--fork cannot be used with `tandem acp`",
        ),
        (
            &["--no-session", "acp"],
            "--no-session cannot be used with `tandem acp`",
        ),
        (
            &["--model", "x", "trust"],
            "--model cannot be used with `tandem trust`",
        ),
        (&["lsp", "--continue"], "unexpected argument '--continue'"),
        (&["trust", "--model", "x"], "unexpected argument '--model'"),
    ] {
        let out = in_sandbox(&sandbox, args)
            .stdin(Stdio::null())
            .output()
            .expect("runs tandem");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// `tandem acp ARGS` (permission requests left unanswered) after a new session's "hi" was
/// answered "ok", to the end of the turn.
fn acp_said_hi(sandbox: &Sandbox, args: &[&str]) -> Acp {
    sandbox.answer(&Turn::text("ok"));
    let mut acp = Acp::start_with(sandbox, args, Box::new(|_, _| Value::Null));
    let session = acp.new_session(&sandbox.cwd);
    let answered = acp.prompt(&session, "hi");
    assert_eq!(answered["result"]["stopReason"], "end_turn", "{answered}");
    acp
}

/// The tools the model was offered in the mock's `index`th request.
fn offered_tools(sandbox: &Sandbox, index: usize) -> Vec<String> {
    sandbox.offered_tools(index)
}

/// `tandem lsp ARGS` (events on, `settings` as its initialization options) after a new
/// session's "hi" was answered "ok" and the run settled.
fn lsp_said_hi(sandbox: &Sandbox, args: &[&str], settings: Value) -> anyhow::Result<LspClient> {
    sandbox.answer(&Turn::text("ok"));
    let mut argv = vec!["lsp"];
    argv.extend_from_slice(args);
    let mut cmd = in_sandbox(sandbox, &argv);
    cmd.stderr(Stdio::null());
    let mut lsp = LspClient::spawn(cmd)?;
    initialize(
        &mut lsp,
        &sandbox.cwd,
        json!({"experimental": {"tandem": {"events": true}}}),
        settings,
    )?;
    let r = lsp.request("tandem/prompt", json!({"text": "hi"}))?;
    let session = r["session"].as_str().unwrap_or_default().to_string();
    lsp.wait_settled(&session, 1)?;
    Ok(lsp)
}

#[test]
fn servers_honour_the_session_flags() -> anyhow::Result<()> {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);

    // tandem lsp --tools read --model …: the editor sets no model, the flag does.
    let mut lsp = lsp_said_hi(
        &sandbox,
        &["--tools", "read", "--model", "mock/mock-model"],
        json!({"agentDir": sandbox.agent_dir}),
    )?;
    assert_eq!(offered_tools(&sandbox, 0), ["read"]);
    lsp.shutdown()?;

    // tandem acp --no-tools --model …
    let mut acp = acp_said_hi(&sandbox, &["--no-tools", "--model", "mock/mock-model"]);
    assert!(offered_tools(&sandbox, 1).is_empty());
    acp.close();

    // Without a flag an editor front door adds the search tools, which see unsaved buffers.
    let mut acp = acp_said_hi(&sandbox, &["--model", "mock/mock-model"]);
    assert_eq!(
        offered_tools(&sandbox, 2),
        ["read", "bash", "edit", "write", "grep", "find", "ls"]
    );
    acp.close();

    // The language server also takes the tool set from the editor's `tools` setting.
    let mut lsp = lsp_said_hi(
        &sandbox,
        &["--model", "mock/mock-model"],
        json!({"agentDir": sandbox.agent_dir, "tools": ["read", "grep"]}),
    )?;
    assert_eq!(offered_tools(&sandbox, 3), ["read", "grep"]);
    lsp.shutdown()?;
    Ok(())
}
