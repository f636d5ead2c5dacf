//! settings.json's `mcpServers` (deprecated): the MCP servers Tandem started before pi 1.6
//! moved them to mcp.json (`mcp_json.rs`), in the format Claude Desktop and Cursor use — an
//! object from server name to `{"command", "args", "env", "cwd"}`, stdio only. It still works
//! so that existing setups keep their tools, with one warning per file pointing to mcp.json
//! (`load.rs`); a server an mcp.json names wins.
//!
//! Each entry is checked on its own: an entry of the wrong shape is removed and reported, and
//! the other servers still start. Merging differs from other objects: a project entry replaces
//! the global entry of the same name as a whole (a server's arguments make sense only together
//! with its command), and a project entry set to `null` removes the global one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::schema::{check_env, check_strings, describe};

/// The settings key.
pub(super) const KEY: &str = "mcpServers";

/// One stdio MCP server as written in settings.json.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerSettings {
    /// The program to start (searched on PATH when it has no `/`).
    pub command: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables added to Tandem's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Working directory; relative to the session's directory; the session's directory when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// `true` keeps the entry without starting the server (Cline's and Cursor's key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// `false` keeps the entry without starting the server (pi 1.6's mcp.json key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

impl McpServerSettings {
    /// Whether the server should be started.
    pub fn enabled(&self) -> bool {
        self.disabled != Some(true) && self.enabled != Some(false)
    }
}

/// An `mcpServers` entry that was removed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BadServer {
    /// The server's name (the entry's key).
    pub name: String,
    /// What is wrong with it.
    pub problem: String,
}

/// Removes the `mcpServers` entries of the wrong shape from a file's keys and says which.
/// `mcpServers` itself of the wrong kind is removed and reported with the server name empty.
/// Entries set to `null` stay: they remove a global entry when merged.
pub(super) fn check(root: &mut Map<String, Value>) -> Vec<BadServer> {
    let Some(servers) = root.get_mut(KEY) else {
        return Vec::new();
    };
    if servers.is_null() {
        return Vec::new();
    }
    let Some(servers) = servers.as_object_mut() else {
        let problem = format!(
            "expected an object from server name to {{\"command\", \"args\", \"env\", \"cwd\"}}, \
             found {}",
            describe(servers)
        );
        root.remove(KEY);
        return vec![BadServer {
            name: String::new(),
            problem,
        }];
    };
    let mut bad = Vec::new();
    servers.retain(|name, entry| match check_entry(entry) {
        Ok(()) => true,
        Err(problem) => {
            bad.push(BadServer {
                name: name.clone(),
                problem,
            });
            false
        }
    });
    bad
}

fn check_entry(entry: &mut Value) -> Result<(), String> {
    if entry.is_null() {
        return Ok(());
    }
    if let Some(fields) = entry.as_object_mut() {
        // `null` fields mean "not set"; removing them lets the typed view use its defaults.
        fields.retain(|_, value| !value.is_null());
    }
    let Some(fields) = entry.as_object() else {
        return Err(format!(
            "expected an object with \"command\" (and optionally \"args\", \"env\", \"cwd\"), \
             found {}",
            describe(entry)
        ));
    };
    let remote = fields.contains_key("url") || fields.contains_key("serverUrl");
    match fields.get("type").and_then(Value::as_str) {
        Some("stdio") | None => {}
        Some(other) => {
            return Err(format!(
                "\"type\" is \"{other}\", but settings.json takes only stdio servers (started \
                 by a \"command\"); put other servers in mcp.json"
            ))
        }
    }
    match fields.get("command") {
        Some(Value::String(command)) if !command.trim().is_empty() => {}
        None if remote => {
            return Err(
                "remote servers (\"url\") are read from mcp.json only; settings.json takes \
                 stdio servers started by a \"command\""
                    .to_string(),
            )
        }
        None => {
            return Err("\"command\" is missing: name the program that starts the server".into())
        }
        Some(Value::String(_)) => return Err("\"command\" is empty".to_string()),
        Some(other) => {
            return Err(format!(
                "command: expected a string, found {}",
                describe(other)
            ))
        }
    }
    check_strings(fields, "args")?;
    check_env(fields)?;
    if let Some(cwd) = fields.get("cwd") {
        if !cwd.is_string() {
            return Err(format!("cwd: expected a string, found {}", describe(cwd)));
        }
    }
    for flag in ["disabled", "enabled"] {
        if let Some(value) = fields.get(flag) {
            if !value.is_boolean() {
                return Err(format!(
                    "{flag}: expected true or false, found {}",
                    describe(value)
                ));
            }
        }
    }
    Ok(())
}

/// Drops entries set to `null` (they only matter while merging), so the typed view sees
/// complete entries only.
pub(super) fn drop_null_entries(map: &mut Map<String, Value>) {
    if let Some(Value::Object(servers)) = map.get_mut(KEY) {
        servers.retain(|_, entry| !entry.is_null());
    }
}
