//! What the consent tests share: a project planted with MCP servers, the marker they leave, and
//! the scripted model that calls one of their tools.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::front_doors::sandbox;
use crate::support::Sandbox;

/// The fixture MCP server (official MCP SDK).
pub fn fixture_server() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    assert!(
        root.join("fixtures/mcp/node_modules").is_dir(),
        "fixtures/mcp/node_modules is missing: run scripts/install-node-deps"
    );
    root.join("fixtures/mcp/server.mjs").canonicalize().unwrap()
}

/// The marker file the planted servers append to.
pub fn marker_file(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.join("mcp-ran.txt")
}

/// An MCP server entry that records `name` in the marker, then serves the fixture's tools.
pub fn marker_server(sandbox: &Sandbox, name: &str) -> Value {
    let script = format!(
        "echo {name} >> '{}'; exec node '{}'",
        marker_file(sandbox).display(),
        fixture_server().display()
    );
    json!({"command": "sh", "args": ["-c", script]})
}

/// The names of the planted servers that ran, in order.
pub fn servers_that_ran(sandbox: &Sandbox) -> Vec<String> {
    std::fs::read_to_string(marker_file(sandbox))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The script: call the planted server's `add`, then answer.
pub fn script() -> Value {
    json!({"turns": [
        {"toolCalls": [{"name": "mcp__fromsettings__add", "arguments": {"a": 20, "b": 22}}]},
        {"text": "done"}
    ]})
}

/// A sandbox (security harness: scripted model `script/t`, fast retries) whose project is a
/// cloned repository with MCP servers in `.pi/settings.json` (`fromsettings`) and
/// `.pi/mcp.json` (`frommcpjson`).
pub fn planted() -> Sandbox {
    let sandbox = sandbox(&script());
    let pi = sandbox.cwd.join(".pi");
    std::fs::create_dir_all(&pi).unwrap();
    std::fs::write(
        pi.join("settings.json"),
        json!({"mcpServers": {"fromsettings": marker_server(&sandbox, "fromsettings")}})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        pi.join("mcp.json"),
        json!({"mcpServers": {"frommcpjson": marker_server(&sandbox, "frommcpjson")}}).to_string(),
    )
    .unwrap();
    sandbox
}

/// Both planted servers ran (in either order).
pub fn both_ran(sandbox: &Sandbox) -> bool {
    let mut ran = servers_that_ran(sandbox);
    ran.sort();
    ran == ["frommcpjson", "fromsettings"]
}

/// Writes `trust.json` in the agent directory with `decisions` (pi's layout).
pub fn write_trust(sandbox: &Sandbox, decisions: &[(&Path, bool)]) {
    let mut map = serde_json::Map::new();
    for (dir, trusted) in decisions {
        map.insert(dir.display().to_string(), json!(trusted));
    }
    sandbox.write_agent_file("trust.json", &serde_json::to_string_pretty(&map).unwrap());
}

/// trust.json as JSON (empty when missing).
pub fn read_trust(sandbox: &Sandbox) -> Value {
    std::fs::read_to_string(sandbox.agent_dir.join("trust.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(json!({}))
}

/// What the user reads on stderr: the CLI's own lines, without the log's (the harness turns
/// the log all the way up with `TANDEM_LOG=trace`; log lines start with a timestamp).
pub fn user_stderr(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !is_log_line(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn is_log_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (Some(time), Some(level)) = (words.next(), words.next()) else {
        return false;
    };
    time.len() > 20
        && time.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && time.contains('T')
        && ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&level)
}
