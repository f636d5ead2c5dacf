//! Tandem's language-intelligence keys: `diagnostics` (what the agent is told after its edits)
//! and `languageServers` (the servers Tandem starts itself where no editor provides language
//! intelligence: the CLI, ACP, Helix).
//!
//! `languageServers` is checked entry by entry, as `mcpServers` is: an entry of the wrong shape
//! is removed and reported, the others stay. A project entry replaces the global entry of its
//! name as a whole, and an entry set to `null` stays in the merge (it removes a global entry,
//! or one of Tandem's built-in servers, by name).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::schema::{check_env, check_strings, describe};

/// The settings key of the language servers.
pub(super) const KEY: &str = "languageServers";

/// `diagnostics` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsSettings {
    /// Report new and changed errors and warnings at the end of an applied edit's or write's
    /// result (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_edit: Option<bool>,
    /// At most this many diagnostics in one report (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The longest wait for the language servers to report after an edit (default 1500 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_ms: Option<u64>,
    /// How long reports must stop coming before they count as settled (default 250 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
    /// Only diagnostics from these sources (`pyright`, `Ruff`, `ts`; compared without case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<String>>,
    /// Never diagnostics from these sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_sources: Option<Vec<String>>,
    /// The least severity reported after edits: `error` or `warning` (default `warning`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_severity: Option<String>,
}

/// `diagnostics` with the defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticsConfig {
    /// Report after edits.
    pub after_edit: bool,
    /// At most this many in one report.
    pub max_items: usize,
    /// The longest wait after an edit.
    pub settle: Duration,
    /// The quiet time that counts as settled.
    pub quiet: Duration,
    /// Only these sources (lower case), when set.
    pub sources: Option<Vec<String>>,
    /// Never these sources (lower case).
    pub ignore_sources: Vec<String>,
    /// Report warnings too (else errors only).
    pub warnings: bool,
}

impl Default for DiagnosticsConfig {
    fn default() -> Self {
        DiagnosticsSettings::default().config()
    }
}

impl DiagnosticsSettings {
    /// With the defaults filled in.
    pub fn config(&self) -> DiagnosticsConfig {
        let lower = |v: &Vec<String>| v.iter().map(|s| s.to_lowercase()).collect::<Vec<_>>();
        DiagnosticsConfig {
            after_edit: self.after_edit.unwrap_or(true),
            max_items: self.max_items.unwrap_or(20).clamp(1, 1000) as usize,
            settle: Duration::from_millis(self.settle_ms.unwrap_or(1500).min(60_000)),
            quiet: Duration::from_millis(self.quiet_ms.unwrap_or(250).min(10_000)),
            sources: self.sources.as_ref().map(lower),
            ignore_sources: self.ignore_sources.as_ref().map(lower).unwrap_or_default(),
            warnings: self.min_severity.as_deref() != Some("error"),
        }
    }
}

impl DiagnosticsConfig {
    /// Whether a diagnostic from `source` is reported.
    pub fn wants_source(&self, source: Option<&str>) -> bool {
        let source = source.map(str::to_lowercase);
        if let Some(only) = &self.sources {
            if !source.as_ref().is_some_and(|s| only.contains(s)) {
                return false;
            }
        }
        !source
            .as_ref()
            .is_some_and(|s| self.ignore_sources.contains(s))
    }
}

/// One `languageServers` entry: a language server Tandem starts itself. A project entry
/// replaces the global entry of the same name as a whole; `null` (or `enabled: false`)
/// removes a global or built-in entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LanguageServerSettings {
    /// The program (searched on PATH when it has no `/`). Empty: the built-in server of the
    /// same name's (an entry that only changes a built-in server's `settings`, say).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// Its arguments; the built-in server's when left out (`[]`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// File extensions it handles, without the dot (`py`, `pyi`); the built-in server's when
    /// left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_types: Vec<String>,
    /// Files or folders whose nearest ancestor folder is the server's root (`pyproject.toml`,
    /// `package.json`); the workspace root when none is found. The built-in server's when left
    /// out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub root_markers: Vec<String>,
    /// Environment variables added to Tandem's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// `initializationOptions` sent at `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization_options: Option<Value>,
    /// `workspace/configuration` answers, by section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    /// `false` keeps the entry without starting the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

impl LanguageServerSettings {
    /// Whether the server may be started (`enabled` is not `false`).
    pub fn enabled(&self) -> bool {
        self.enabled != Some(false)
    }
}

/// Removes the `languageServers` entries of the wrong shape from a file's keys and returns
/// `(name, problem)` for each; `languageServers` itself of the wrong kind is removed and
/// reported with the name empty. Entries set to `null` stay (they remove an entry by name).
pub(super) fn check(root: &mut Map<String, Value>) -> Vec<(String, String)> {
    let Some(servers) = root.get_mut(KEY) else {
        return Vec::new();
    };
    if servers.is_null() {
        return Vec::new();
    }
    let Some(servers) = servers.as_object_mut() else {
        let problem = format!(
            "expected an object from server name to {{\"command\", \"args\", \"fileTypes\", \
             \"rootMarkers\"}}, found {}",
            describe(servers)
        );
        root.remove(KEY);
        return vec![(String::new(), problem)];
    };
    let mut bad = Vec::new();
    servers.retain(|name, entry| match check_entry(entry) {
        Ok(()) => true,
        Err(problem) => {
            bad.push((name.clone(), problem));
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
        // `null` fields mean "not set".
        fields.retain(|_, value| !value.is_null());
    }
    let Some(fields) = entry.as_object() else {
        return Err(format!(
            "expected an object with \"command\" (and optionally \"args\", \"fileTypes\", \
             \"rootMarkers\", \"env\", \"initializationOptions\", \"settings\", \"enabled\"), \
             or null to remove the server, found {}",
            describe(entry)
        ));
    };
    match fields.get("command") {
        None => {}
        Some(Value::String(command)) if !command.trim().is_empty() => {}
        Some(Value::String(_)) => return Err("\"command\" is empty".to_string()),
        Some(other) => {
            return Err(format!(
                "command: expected a string, found {}",
                describe(other)
            ))
        }
    }
    for list in ["args", "fileTypes", "rootMarkers"] {
        check_strings(fields, list)?;
    }
    check_env(fields)?;
    if let Some(value) = fields.get("enabled") {
        if !value.is_boolean() {
            return Err(format!(
                "enabled: expected true or false, found {}",
                describe(value)
            ));
        }
    }
    Ok(())
}
