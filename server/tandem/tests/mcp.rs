//! MCP servers configured in mcp.json (and the deprecated settings.json `mcpServers`), through
//! the real binary: print/JSON mode and the language server call the fixture server's tools
//! (fixtures/mcp, the official MCP TypeScript SDK, over stdio and streamable HTTP). A server
//! that cannot start is reported and left out; the run goes on. pi 1.6's configuration rules
//! (merge, overrides, trust, names, `${VAR}`, exposure): mcp/config.rs. (ACP's per-session
//! servers: acp_rust.rs.)

mod support;

#[path = "mcp/config.rs"]
mod config;

use std::process::Command;

use serde_json::{json, Value};
use support::lsp::{event_client, new_session, prompt, ScriptedLsp};
use support::mcp::fixture_server;

/// settings.json with the fixture server and one that cannot start.
fn mcp_settings() -> Value {
    json!({"mcpServers": {
        "fixture": {"command": "node", "args": [fixture_server()],
                    "env": {"FIXTURE_GREETING": "from settings"}},
        "broken": {"command": "tandem-test-no-such-program"}
    }})
}

fn script() -> Value {
    json!({"turns": [
        {"toolCalls": [{"name": "mcp__fixture__add", "arguments": {"a": 20, "b": 22}},
                       {"name": "mcp__fixture__echo_env", "arguments": {"name": "FIXTURE_GREETING"}}]},
        {"text": "The sum is 42."}
    ]})
}

#[test]
fn print_mode_calls_the_tools_of_configured_servers() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(agent.join("script.json"), script().to_string()).unwrap();
    std::fs::write(
        agent.join("models.json"),
        json!({"providers": {"script": {"api": "scripted", "apiKey": "none",
            "baseUrl": agent.join("script.json"), "models": [{"id": "t"}]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(agent.join("settings.json"), mcp_settings().to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["--mode", "json", "--model", "script/t", "-p", "add them"])
        .current_dir(&project)
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("broken") && stderr.contains("tandem-test-no-such-program"),
        "the server that cannot start is reported: {stderr}"
    );
    // settings.json's mcpServers still works, with one warning pointing to mcp.json.
    let deprecations: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("mcpServers in settings.json is deprecated"))
        .collect();
    assert_eq!(deprecations.len(), 1, "{stderr}");
    assert!(
        deprecations[0].contains("(fixture, broken)")
            && deprecations[0].contains(&agent.join("mcp.json").display().to_string()),
        "{stderr}"
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Parallel calls end in completion order.
    let mut results: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .map(|e| {
            (
                e["toolName"].as_str().unwrap().to_string(),
                e["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    results.sort();
    assert_eq!(
        results,
        vec![
            ("mcp__fixture__add".to_string(), "42".to_string()),
            (
                "mcp__fixture__echo_env".to_string(),
                "from settings".to_string()
            )
        ]
    );
    let end = events
        .iter()
        .rev()
        .find(|e| e["type"] == "agent_end")
        .unwrap();
    assert!(end.to_string().contains("The sum is 42."));
}

#[test]
fn the_language_server_offers_configured_mcp_tools_too() -> anyhow::Result<()> {
    let mut lsp = ScriptedLsp::start(&script())?;
    std::fs::write(lsp.dir().join("settings.json"), mcp_settings().to_string())?;
    let options = lsp.options();
    lsp.initialize_with(event_client(json!(["utf-16"])), options)?;
    let session = new_session(&mut lsp)?;
    prompt(&mut lsp, json!({"session": session, "text": "add"}))?;
    let events = lsp.next_run(&session)?;
    let ends: Vec<&Value> = events
        .iter()
        .map(|e| &e["event"])
        .filter(|e| e["type"] == "tool_end")
        .collect();
    assert_eq!(ends.len(), 2, "{events:#?}");
    assert!(ends.iter().all(|e| e["isError"] == false), "{ends:#?}");
    assert!(
        ends.iter().any(|e| e.to_string().contains("42")),
        "{ends:#?}"
    );
    Ok(())
}
