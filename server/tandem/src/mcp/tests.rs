//! The MCP client against the fixture server (fixtures/mcp/server.mjs, on the official MCP
//! TypeScript SDK). Timeouts here only guard against hangs; nothing asserts on timing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, ToolError, ToolInvocation, ToolOutput, ToolUpdates};
use tandem_ai::{CancellationToken, UserBlock};
use tandem_coding::settings::{LoadedSettings, McpServer, McpTransport, Settings};

use super::*;

/// Generous bound for anything that should finish: only a hang reaches it.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `node fixtures/mcp/server.mjs` as server `name`; fails with what to run when the SDK is
/// not installed.
fn fixture(name: &str) -> McpServerConfig {
    let dir = repo_root().join("fixtures/mcp");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the MCP fixture's npm packages are missing: run scripts/install-node-deps (it runs \
         `npm ci` in fixtures/mcp)"
    );
    stdio(
        name,
        "node",
        &[&dir.join("server.mjs").display().to_string()],
    )
}

/// A stdio server running `command args`.
fn stdio(name: &str, command: &str, args: &[&str]) -> McpServerConfig {
    let args: Vec<String> = args.iter().map(ToString::to_string).collect();
    McpServerConfig {
        name: name.to_string(),
        server: McpServer::stdio(command, &args),
        templates: true,
    }
}

/// The stdio fields of `config`, to change them.
fn fields(
    config: &mut McpServerConfig,
) -> (
    &mut String,
    &mut Vec<String>,
    &mut std::collections::BTreeMap<String, String>,
    &mut Option<String>,
) {
    match &mut config.server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => (command, args, env, cwd),
        McpTransport::Http { .. } => panic!("a stdio server expected"),
    }
}

async fn connect(servers: &[McpServerConfig], cwd: &Path) -> McpTools {
    tokio::time::timeout(HANG_GUARD, McpTools::connect(servers, cwd))
        .await
        .expect("connect finished")
}

fn find(tools: &McpTools, name: &str) -> Arc<dyn AgentTool> {
    tools
        .tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}; have {tools:?}"))
}

async fn call_with(
    tool: &Arc<dyn AgentTool>,
    args: Value,
    cancel: CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let call = ToolInvocation {
        call_id: "call-1".to_string(),
        args,
        cancel,
        updates: ToolUpdates::discard(),
    };
    tokio::time::timeout(HANG_GUARD, tool.execute(call))
        .await
        .expect("the call finished")
}

async fn call(tools: &McpTools, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    call_with(&find(tools, name), args, CancellationToken::new()).await
}

fn text(output: &ToolOutput) -> String {
    output
        .content
        .iter()
        .filter_map(|block| match block {
            UserBlock::Text(text) => Some(text.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether process `pid` still runs. A zombie does not: it has exited, and whether its parent
/// (for a grandchild, whatever init the machine has) reaps it is no concern of Tandem's.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) state ...": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

async fn wait_until_gone(pids: &[u32]) {
    let gone = async {
        while pids.iter().any(|pid| alive(*pid)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(HANG_GUARD, gone)
        .await
        .unwrap_or_else(|_| panic!("server processes {pids:?} still running"));
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

#[tokio::test]
async fn connects_lists_tools_and_calls_add() {
    let dir = temp_dir();
    let tools = connect(&[fixture("fixture")], dir.path()).await;
    assert!(tools.warnings().is_empty(), "{:?}", tools.warnings());
    let names: Vec<String> = tools.tools().iter().map(|t| t.name().to_string()).collect();
    assert_eq!(
        names,
        [
            "mcp__fixture__add",
            "mcp__fixture__echo_env",
            "mcp__fixture__read_cwd",
            "mcp__fixture__pid",
            "mcp__fixture__slow",
            "mcp__fixture__progress",
            "mcp__fixture__cancellations",
            "mcp__fixture__crash",
            "mcp__fixture__fail",
            "mcp__fixture__image",
            "mcp__fixture__resource",
            "mcp__fixture__structured",
        ]
    );
    let add = find(&tools, "mcp__fixture__add");
    assert_eq!(add.label(), "fixture/add");
    assert_eq!(
        add.description(),
        "[MCP server `fixture`] Adds two numbers."
    );
    assert_eq!(
        add.parameters(),
        &json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        })
    );
    let output = call(&tools, "mcp__fixture__add", json!({"a": 2, "b": 3.5}))
        .await
        .expect("add");
    assert_eq!(text(&output), "5.5");
    assert_eq!(
        output.details,
        Some(json!({"server": "fixture", "tool": "add"}))
    );
    tools.shutdown().await;
}

#[tokio::test]
async fn env_and_cwd_are_passed_to_the_server() {
    let session = temp_dir();
    let session_cwd = session.path().canonicalize().expect("canonical");
    std::fs::create_dir(session_cwd.join("sub")).expect("mkdir");
    let own = temp_dir();
    let own_cwd = own.path().canonicalize().expect("canonical");

    let mut default_cwd = fixture("default");
    fields(&mut default_cwd).2.insert(
        "TANDEM_FIXTURE_VALUE".to_string(),
        "from settings".to_string(),
    );
    let mut relative = fixture("relative");
    *fields(&mut relative).3 = Some("sub".to_string());
    let mut absolute = fixture("absolute");
    *fields(&mut absolute).3 = Some(own_cwd.display().to_string());

    let tools = connect(&[default_cwd, relative, absolute], &session_cwd).await;
    assert!(tools.warnings().is_empty(), "{:?}", tools.warnings());
    let echo = |server: &str| format!("mcp__{server}__echo_env");
    let value = call(
        &tools,
        &echo("default"),
        json!({"name": "TANDEM_FIXTURE_VALUE"}),
    )
    .await
    .expect("echo_env");
    assert_eq!(text(&value), "from settings");
    let unset = call(
        &tools,
        &echo("relative"),
        json!({"name": "TANDEM_FIXTURE_VALUE"}),
    )
    .await
    .expect("echo_env");
    assert_eq!(text(&unset), "(unset)");
    // Tandem's own environment is inherited.
    let path = call(&tools, &echo("relative"), json!({"name": "PATH"}))
        .await
        .expect("echo_env");
    assert_eq!(text(&path), std::env::var("PATH").unwrap_or_default());

    for (server, expected) in [
        ("default", session_cwd.clone()),
        ("relative", session_cwd.join("sub")),
        ("absolute", own_cwd.clone()),
    ] {
        let output = call(&tools, &format!("mcp__{server}__read_cwd"), json!({}))
            .await
            .expect("read_cwd");
        assert_eq!(PathBuf::from(text(&output)), expected, "{server}");
    }
    tools.shutdown().await;
}

#[tokio::test]
async fn results_errors_images_resources_and_structured_content() {
    let dir = temp_dir();
    let tools = connect(&[fixture("fixture")], dir.path()).await;

    let error = call(&tools, "mcp__fixture__fail", json!({}))
        .await
        .expect_err("isError");
    assert_eq!(error.0, "the fixture failed on purpose");

    let image = call(&tools, "mcp__fixture__image", json!({}))
        .await
        .expect("image");
    assert!(matches!(&image.content[0], UserBlock::Text(t) if t.text == "a red pixel"));
    assert!(matches!(
        &image.content[1],
        UserBlock::Image(i) if i.mime_type == "image/png" && i.data.starts_with("iVBORw0KGgo")
    ));

    let resource = call(&tools, "mcp__fixture__resource", json!({}))
        .await
        .expect("resource");
    assert_eq!(
        text(&resource),
        "[resource file:///notes.txt]\nresource body"
    );

    let structured = call(&tools, "mcp__fixture__structured", json!({}))
        .await
        .expect("structured");
    assert_eq!(text(&structured), "{\n  \"answer\": 42\n}");

    // A call the server rejects at the protocol level (missing arguments are the server's
    // business; an unknown tool is the SDK's).
    let not_object = call(&tools, "mcp__fixture__add", json!([1, 2]))
        .await
        .expect_err("not an object");
    assert!(
        not_object.0.contains("must be a JSON object"),
        "{}",
        not_object.0
    );
    tools.shutdown().await;
}

#[tokio::test]
async fn a_server_dying_mid_call_fails_the_call_and_the_next_call_starts_it_again() {
    let dir = temp_dir();
    let tools = connect(&[fixture("fixture")], dir.path()).await;
    let first_pid = tools.pids();
    let error = call(&tools, "mcp__fixture__crash", json!({}))
        .await
        .expect_err("crash");
    assert!(
        error
            .0
            .starts_with("MCP server `fixture` exited during the call to `crash` (exit status 3)."),
        "{}",
        error.0
    );
    assert!(
        error.0.contains("fixture: crashing on purpose"),
        "{}",
        error.0
    );
    // The next call starts the server again and goes through.
    let later = call(&tools, "mcp__fixture__add", json!({"a": 1, "b": 1}))
        .await
        .expect("the server was started again");
    assert_eq!(text(&later), "2");
    assert_ne!(tools.pids(), first_pid);
    assert_eq!(tools.pids().len(), 1);
    tools.shutdown().await;
    // Once shut down, nothing starts it again.
    let after = call(&tools, "mcp__fixture__add", json!({"a": 1, "b": 1}))
        .await
        .expect_err("shut down");
    assert_eq!(
        after.0,
        "MCP server `fixture` was shut down with its session."
    );
}

/// A server that dies and then cannot start says both, and calls keep saying so (each call
/// tries once more).
#[tokio::test]
async fn a_server_that_cannot_start_again_says_why() {
    let dir = temp_dir();
    let marker = dir.path().join("started-once");
    let node = fixture("x");
    let McpTransport::Stdio { args, .. } = &node.server.transport else {
        panic!("stdio")
    };
    let script = format!(
        "if [ -e '{m}' ]; then echo 'refusing a second start' >&2; exit 7; fi; touch '{m}'; \
         exec node '{s}'",
        m = marker.display(),
        s = args[0]
    );
    let once = stdio("once", "sh", &["-c", &script]);
    let tools = connect(&[once], dir.path()).await;
    assert!(tools.warnings().is_empty(), "{:?}", tools.warnings());
    call(&tools, "mcp__once__crash", json!({}))
        .await
        .expect_err("crash");
    for _ in 0..2 {
        let error = call(&tools, "mcp__once__add", json!({"a": 1, "b": 1}))
            .await
            .expect_err("cannot start again");
        assert!(
            error.0.starts_with(
                "MCP server `once` stopped earlier (exit status 3) and could not be started again:"
            ) && error.0.contains("refusing a second start"),
            "{}",
            error.0
        );
    }
    tools.shutdown().await;
}

#[tokio::test]
async fn cancelling_a_call_returns_promptly_and_tells_the_server() {
    let dir = temp_dir();
    let tools = connect(&[fixture("fixture")], dir.path()).await;
    let slow = find(&tools, "mcp__fixture__slow");
    let cancel = CancellationToken::new();
    // Ten minutes: only the cancellation can end this call within the hang guard.
    let running = {
        let (slow, cancel) = (slow.clone(), cancel.clone());
        tokio::spawn(async move { call_with(&slow, json!({"ms": 600_000}), cancel).await })
    };
    let started = async {
        while !tools
            .stderr_lines()
            .iter()
            .any(|line| line.starts_with("fixture: slow call started"))
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(HANG_GUARD, started)
        .await
        .expect("the slow call reached the server");
    cancel.cancel();
    let error = running.await.expect("task").expect_err("aborted");
    assert_eq!(
        error.0,
        "The call to `slow` on MCP server `fixture` was aborted."
    );
    // notifications/cancelled went out before the call returned, and the server lives on.
    let count = call(&tools, "mcp__fixture__cancellations", json!({}))
        .await
        .expect("cancellations");
    assert_eq!(text(&count), "1");
    let sum = call(&tools, "mcp__fixture__add", json!({"a": 1, "b": 2}))
        .await
        .expect("add");
    assert_eq!(text(&sum), "3");

    // Cancelled before the call starts: nothing is sent.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = call_with(&slow, json!({"ms": 600_000}), cancel)
        .await
        .expect_err("aborted");
    assert!(error.0.ends_with("was aborted."), "{}", error.0);
    tools.shutdown().await;
}

#[tokio::test]
async fn servers_that_cannot_start_are_warnings_and_the_others_still_connect() {
    let dir = temp_dir();
    let missing = stdio("missing", "tandem-test-no-such-command", &[]);
    let mut failing = fixture("failing");
    fields(&mut failing).2.insert(
        "FIXTURE_FAIL_AT_START".to_string(),
        "bad config: TOKEN is not set".to_string(),
    );
    let mut no_dir = fixture("nodir");
    *fields(&mut no_dir).3 = Some("does-not-exist".to_string());
    let duplicate = fixture("fixture");
    let tools = connect(
        &[missing, fixture("fixture"), failing, no_dir, duplicate],
        dir.path(),
    )
    .await;
    let warnings = tools.warnings();
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert_eq!(
        warnings[0],
        "MCP server `fixture` is configured twice; only the first is started."
    );
    assert_eq!(
        warnings[1],
        "MCP server `missing` was not started: command `tandem-test-no-such-command` was not \
         found. Install it, or give its full path as the server's \"command\"."
    );
    assert_eq!(
        warnings[2],
        "MCP server `failing` was not started: it exited before answering `initialize` (exit \
         status 2). Its last stderr output:\nbad config: TOKEN is not set"
    );
    assert_eq!(
        warnings[3],
        format!(
            "MCP server `nodir` was not started: its working directory {} does not exist (or is \
             not a directory). Fix the server's \"cwd\".",
            dir.path().join("does-not-exist").display()
        )
    );
    assert_eq!(tools.pids().len(), 1);
    let sum = call(&tools, "mcp__fixture__add", json!({"a": 20, "b": 22}))
        .await
        .expect("add");
    assert_eq!(text(&sum), "42");
    tools.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_stopped() {
    let dir = temp_dir();
    // `sleep` reads nothing and writes nothing: initialize never gets an answer.
    let silent = stdio("silent", "sleep", &["600"]);
    let tools = tokio::time::timeout(
        HANG_GUARD,
        McpTools::connect_within(&[silent], dir.path(), Duration::from_secs(1)),
    )
    .await
    .expect("connect finished");
    assert_eq!(
        tools.warnings(),
        ["MCP server `silent` was not started: it did not complete `initialize` and `tools/list` \
          within 1 s, so it was stopped. Check that `sleep 600` starts an MCP server that speaks \
          over stdio."]
    );
    assert!(tools.tools().is_empty());
}

#[tokio::test]
async fn the_same_tool_on_two_servers_gets_two_names() {
    let dir = temp_dir();
    // Both server names sanitize to `my_server` (mcp.json refuses such a pair; an ACP client
    // may still send it).
    let tools = connect(&[fixture("my-server"), fixture("my_server")], dir.path()).await;
    assert!(tools.warnings().is_empty(), "{:?}", tools.warnings());
    let adds: Vec<String> = tools
        .tools()
        .iter()
        .map(|t| t.name().to_string())
        .filter(|name| name.starts_with("mcp__my_server__add"))
        .collect();
    // The second gets pi's hash suffix: SHA-256 of "my_server\0add" (as node computes it).
    assert_eq!(
        adds,
        ["mcp__my_server__add", "mcp__my_server__add_8d06a5d9"]
    );
    for name in &adds {
        let sum = call(&tools, name, json!({"a": 1, "b": 1}))
            .await
            .expect("add");
        assert_eq!(text(&sum), "2");
    }
    tools.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_the_servers_and_later_calls_fail() {
    let dir = temp_dir();
    let tools = connect(&[fixture("one"), fixture("two")], dir.path()).await;
    let pids = tools.pids();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|pid| alive(*pid)));
    tokio::time::timeout(HANG_GUARD, tools.shutdown())
        .await
        .expect("shutdown finished");
    // Shutdown waited for the exits (and reaped the processes).
    for pid in &pids {
        assert!(!alive(*pid), "server {pid} still running after shutdown");
    }
    let error = call(&tools, "mcp__one__add", json!({"a": 1, "b": 1}))
        .await
        .expect_err("shut down");
    assert_eq!(error.0, "MCP server `one` was shut down with its session.");
}

/// The fixture behind `sh`, so that the server's process group holds two processes: killing
/// only the first would leave node running.
fn fixture_behind_a_shell(name: &str) -> McpServerConfig {
    let mut node = fixture(name);
    let script = fields(&mut node).1[0].clone();
    let line = format!("node '{script}'; echo 'node exited' >&2");
    stdio(name, "sh", &["-c", &line])
}

/// Starts a ten-minute `slow` call (node does not exit on stdin's end while it runs) and
/// returns once the server has it, with the pid of the node process.
async fn busy_server(
    tools: &McpTools,
    server: &str,
) -> (tokio::task::JoinHandle<Result<ToolOutput, ToolError>>, u32) {
    let pid = call(tools, &format!("mcp__{server}__pid"), json!({}))
        .await
        .expect("pid");
    let pid: u32 = text(&pid).parse().expect("a pid");
    let slow = find(tools, &format!("mcp__{server}__slow"));
    let running = tokio::spawn(async move {
        call_with(&slow, json!({"ms": 600_000}), CancellationToken::new()).await
    });
    let started = async {
        while !tools
            .stderr_lines()
            .iter()
            .any(|line| line.starts_with("fixture: slow call started"))
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(HANG_GUARD, started)
        .await
        .expect("the slow call reached the server");
    (running, pid)
}

#[tokio::test]
async fn shutdown_during_a_call_ends_the_call_and_stops_the_whole_process_group() {
    let dir = temp_dir();
    let tools = connect(&[fixture_behind_a_shell("busy")], dir.path()).await;
    assert!(tools.warnings().is_empty(), "{:?}", tools.warnings());
    let (running, node) = busy_server(&tools, "busy").await;
    let mut pids = tools.pids();
    pids.push(node);
    tokio::time::timeout(HANG_GUARD, tools.shutdown())
        .await
        .expect("shutdown finished");
    let error = tokio::time::timeout(HANG_GUARD, running)
        .await
        .expect("the call ended")
        .expect("task")
        .expect_err("shut down");
    assert_eq!(
        error.0,
        "MCP server `busy` was shut down during the call to `slow`."
    );
    wait_until_gone(&pids).await;
}

#[tokio::test]
async fn dropping_the_tools_kills_the_whole_process_group() {
    let dir = temp_dir();
    let tools = connect(&[fixture_behind_a_shell("busy")], dir.path()).await;
    let (running, node) = busy_server(&tools, "busy").await;
    let mut pids = tools.pids();
    pids.push(node);
    drop(tools);
    wait_until_gone(&pids).await;
    let error = tokio::time::timeout(HANG_GUARD, running)
        .await
        .expect("the call ended")
        .expect("task")
        .expect_err("killed");
    assert!(error.0.starts_with("MCP server `busy`"), "{}", error.0);
}

#[tokio::test]
async fn dropping_the_tools_kills_the_servers_even_while_the_agent_keeps_the_tools() {
    let dir = temp_dir();
    let tools = connect(&[fixture("fixture")], dir.path()).await;
    let pids = tools.pids();
    let kept = find(&tools, "mcp__fixture__add");
    drop(tools);
    wait_until_gone(&pids).await;
    let error = call_with(&kept, json!({"a": 1, "b": 1}), CancellationToken::new())
        .await
        .expect_err("gone");
    assert_eq!(
        error.0,
        "MCP server `fixture` was shut down with its session."
    );
}

#[tokio::test]
async fn connect_for_session_merges_settings_and_extra_servers() {
    let dir = temp_dir();
    let mut settings: Settings = serde_json::from_value(json!({"mcpServers": {
        "fromSettings": {"command": "node", "args": ["unused"]},
        "replaced": {"command": "tandem-test-no-such-command"},
        "off": {"command": "tandem-test-no-such-command", "disabled": true}
    }}))
    .expect("settings");
    // Point the settings server at the fixture.
    if let Some(servers) = settings.mcp_servers.as_mut() {
        if let Some(server) = servers.get_mut("fromSettings") {
            server.args = fields(&mut fixture("x")).1.clone();
            server
                .env
                .insert("TANDEM_FIXTURE_VALUE".to_string(), "s".to_string());
        }
    }
    let settings = LoadedSettings {
        mcp_servers: settings
            .mcp_servers
            .iter()
            .flatten()
            .map(|(name, server)| {
                let mut typed = McpServer::stdio(&server.command, &server.args);
                typed.enabled = server.enabled();
                if let McpTransport::Stdio { env, .. } = &mut typed.transport {
                    env.clone_from(&server.env);
                }
                (name.clone(), typed)
            })
            .collect(),
        merged: settings,
        ..LoadedSettings::default()
    };
    let configs = servers_from_settings(&settings);
    let names: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["fromSettings", "replaced"]);
    let mut first = configs[0].clone();
    assert_eq!(
        fields(&mut first)
            .2
            .get("TANDEM_FIXTURE_VALUE")
            .map(String::as_str),
        Some("s")
    );

    let tools = tokio::time::timeout(
        HANG_GUARD,
        connect_for_session(&settings, &[fixture("replaced")], dir.path()),
    )
    .await
    .expect("connect finished");
    assert!(tools.warnings().is_empty(), "{:?}", tools.warnings());
    let value = call(
        &tools,
        "mcp__fromSettings__echo_env",
        json!({"name": "TANDEM_FIXTURE_VALUE"}),
    )
    .await
    .expect("echo_env");
    assert_eq!(text(&value), "s");
    call(&tools, "mcp__replaced__add", json!({"a": 1, "b": 1}))
        .await
        .expect("the extra server replaced the settings one");
    tools.shutdown().await;
}

/// The server's `timeout` counts from the call's last progress report (pi 1.6): a call that
/// reports progress outlives it; a silent one is cancelled when it runs out.
#[tokio::test]
async fn progress_reports_keep_a_call_alive_past_its_timeout() {
    let dir = temp_dir();
    let mut server = fixture("fixture");
    server.server.timeout = Some(1.0);
    let tools = connect(&[server], dir.path()).await;
    assert!(tools.warnings().is_empty(), "{:?}", tools.warnings());
    // Ten reports 300 ms apart: three seconds in all, never a second without news.
    let output = call(
        &tools,
        "mcp__fixture__progress",
        json!({"steps": 10, "ms": 300}),
    )
    .await
    .expect("the call outlives its timeout");
    assert_eq!(text(&output), "reported 10 steps");
    // Silent for longer than the timeout: cancelled, and the server is told.
    let error = call(&tools, "mcp__fixture__slow", json!({"ms": 600_000}))
        .await
        .expect_err("times out");
    assert!(
        error
            .to_string()
            .contains("did not answer the call to `slow` within 1 s of its last progress report"),
        "{error}"
    );
    let cancelled = call(&tools, "mcp__fixture__cancellations", json!({}))
        .await
        .expect("counted");
    assert_eq!(text(&cancelled), "1");
}

/// The fixture with resources, as server `name`.
fn with_resources(name: &str) -> McpServerConfig {
    let mut config = fixture(name);
    fields(&mut config)
        .2
        .insert("FIXTURE_RESOURCES".to_string(), "1".to_string());
    config
}

fn json_text(output: &ToolOutput) -> Value {
    serde_json::from_str(&text(output)).unwrap_or_else(|e| panic!("{e}: {}", text(output)))
}

#[tokio::test]
async fn resource_tools_exist_only_for_servers_that_offer_resources_and_are_not_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let names = |tools: &McpTools| -> Vec<String> {
        tools
            .tools()
            .iter()
            .map(|t| t.name().to_string())
            .filter(|n| !n.starts_with("mcp__"))
            .collect()
    };
    let plain = connect(&[fixture("plain")], dir.path()).await;
    assert_eq!(names(&plain), Vec::<String>::new());
    plain.shutdown().await;
    let mut hidden = with_resources("hidden");
    hidden.server.exposure = Some(McpExposure::Hidden);
    let tools = connect(&[hidden], dir.path()).await;
    assert_eq!(names(&tools), Vec::<String>::new());
    tools.shutdown().await;
    let tools = connect(&[with_resources("docs"), fixture("plain")], dir.path()).await;
    assert_eq!(
        names(&tools),
        [
            "list_mcp_resources",
            "list_mcp_resource_templates",
            "read_mcp_resource"
        ]
    );
    tools.shutdown().await;
}

#[tokio::test]
async fn listing_pages_one_server_or_gathers_every_page_of_every_server() {
    let dir = tempfile::tempdir().unwrap();
    let tools = connect(&[with_resources("b"), with_resources("a")], dir.path()).await;
    let first = call(&tools, "list_mcp_resources", json!({"server": "a"}))
        .await
        .unwrap();
    // App interfaces (ui://) are left out; `_meta` and icons too; the server is named.
    assert_eq!(
        json_text(&first),
        json!({"server": "a", "nextCursor": "page-2", "resources": [
            {"server": "a", "uri": "fixture://notes/readme", "name": "readme",
             "description": "The fixture's notes.", "mimeType": "text/plain"}]})
    );
    let second = call(
        &tools,
        "list_mcp_resources",
        json!({"server": "a", "cursor": "page-2"}),
    )
    .await
    .unwrap();
    let second = json_text(&second);
    assert_eq!(second.get("nextCursor"), None, "{second}");
    assert_eq!(second["resources"].as_array().map(Vec::len), Some(2));
    let all = json_text(&call(&tools, "list_mcp_resources", json!({})).await.unwrap());
    let uris: Vec<(String, String)> = all["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["server"].as_str().unwrap().to_string(),
                r["uri"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut expected = Vec::new();
    for server in ["a", "b"] {
        for uri in [
            "fixture://notes/readme",
            "fixture://pixel.png",
            "fixture://data.bin",
        ] {
            expected.push((server.to_string(), uri.to_string()));
        }
    }
    assert_eq!(uris, expected);
    assert_eq!(all.get("errors"), None, "{all}");
    let templates = json_text(
        &call(
            &tools,
            "list_mcp_resource_templates",
            json!({"server": "b"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        templates,
        json!({"server": "b", "resourceTemplates": [
            {"server": "b", "uriTemplate": "fixture://notes/{name}", "name": "note",
             "mimeType": "text/plain"}]})
    );
    // Bad arguments say what is wrong.
    for (args, needle) in [
        (
            json!({"cursor": "page-2"}),
            "`cursor` goes with the `server`",
        ),
        (
            json!({"server": "c"}),
            "MCP server `c` offers no resources. Servers with resources: a, b.",
        ),
        (json!({"server": 7}), "`server` must be a string"),
        (
            json!({"server": "a", "cursor": "nope"}),
            "unknown cursor nope",
        ),
    ] {
        let error = call(&tools, "list_mcp_resources", args.clone())
            .await
            .expect_err("refused");
        assert!(error.0.contains(needle), "{args}: {}", error.0);
    }
    tools.shutdown().await;
}

#[tokio::test]
async fn reading_gives_text_images_and_saved_binaries() {
    let dir = tempfile::tempdir().unwrap();
    let tools = connect(&[with_resources("docs")], dir.path()).await;
    let read = |uri: &str| {
        let args = json!({"server": "docs", "uri": uri});
        let tools = &tools;
        async move { call(tools, "read_mcp_resource", args).await }
    };
    let note = read("fixture://notes/todo").await.unwrap();
    assert_eq!(text(&note), "note todo");
    let details = note.details.clone().unwrap();
    assert_eq!(
        details["structuredContent"],
        json!({"server": "docs", "uri": "fixture://notes/todo", "contents": [
            {"uri": "fixture://notes/todo", "mimeType": "text/plain", "text": "note todo"}]})
    );
    let pixel = read("fixture://pixel.png").await.unwrap();
    assert!(
        matches!(&pixel.content[..], [UserBlock::Image(image)] if image.mime_type == "image/png"),
        "{:?}",
        pixel.content
    );
    let binary = text(&read("fixture://data.bin").await.unwrap());
    let path = binary
        .split(" saved to ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{binary}"));
    assert!(
        binary.starts_with("[resource fixture://data.bin (application/octet-stream, 8 bytes)"),
        "{binary}"
    );
    assert_eq!(std::fs::read(path).unwrap(), b"\x00\x01binary");
    let _ = std::fs::remove_file(path);
    let pair = read("fixture://pair").await.unwrap();
    assert_eq!(text(&pair), "fixture://pair/a:\nA\nfixture://pair/b:\nB");
    let pair_details = pair.details.unwrap();
    assert_eq!(
        pair_details["structuredContent"]["contents"][1],
        json!({"uri": "fixture://pair/b", "text": "B"}),
        "_meta is left out"
    );
    assert_eq!(
        text(&read("fixture://empty").await.unwrap()),
        "Resource fixture://empty is empty."
    );
    let missing = read("fixture://nothing").await.expect_err("not found");
    assert_eq!(
        missing.0,
        "MCP server `docs` rejected the `resources/read` of `fixture://nothing`: MCP error \
         -32002: Resource not found: fixture://nothing (error -32002)."
    );
    for (args, needle) in [
        (json!({"server": "docs"}), "`uri` must be given."),
        (json!({"uri": "fixture://pair"}), "`server` must be given."),
        (json!(["docs"]), "must be a JSON object"),
    ] {
        let error = call(&tools, "read_mcp_resource", args.clone())
            .await
            .expect_err("refused");
        assert!(error.0.contains(needle), "{args}: {}", error.0);
    }
    tools.shutdown().await;
}

#[tokio::test]
async fn a_listing_of_every_server_names_the_one_that_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut broken = with_resources("broken");
    fields(&mut broken)
        .2
        .insert("FIXTURE_RESOURCES".to_string(), "broken".to_string());
    let tools = connect(&[with_resources("good"), broken], dir.path()).await;
    let all = json_text(&call(&tools, "list_mcp_resources", json!({})).await.unwrap());
    assert_eq!(all["resources"].as_array().map(Vec::len), Some(3), "{all}");
    assert_eq!(
        all["errors"],
        json!([{"server": "broken", "error": "MCP server `broken` rejected the \
            `resources/list` request: MCP error -32603: the listing fails on purpose (error \
            -32603)."}])
    );
    tools.shutdown().await;
}
