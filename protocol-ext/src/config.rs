//! The server's settings: `initializationOptions` and `settings.tandem`.
//!
//! Every key is optional; without any the server behaves like the CLI, reading pi's agent dir
//! (`~/.pi/agent`, or `PI_CODING_AGENT_DIR`) for models, keys and settings, with edits confirmed
//! and bash asking first. Settings are read leniently, key by key: a bad value is reported as a
//! warning naming the key and falls back to the default, instead of discarding the user's other
//! settings (a strict parse would turn one typo into "no configuration at all").

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::requests::models::ThinkingLevel;

/// The section name under `workspace/didChangeConfiguration`'s `settings` (and for
/// `workspace/configuration` requests).
pub const SECTION: &str = "tandem";

/// How edits reach the user's files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EditMode {
    /// The user accepts each edit (refactor preview, or Apply / Reject / Apply all).
    #[default]
    Confirm,
    /// Edits are applied as they come (the user can still undo them).
    Auto,
}

/// What happens when the agent wants to run a command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BashPermission {
    /// Ask with `window/showMessageRequest` each time (or allow for the session).
    #[default]
    Ask,
    /// Run without asking.
    Allow,
    /// Never run; the model gets a tool error saying commands are disabled.
    Deny,
}

/// A model named `provider/id` (the id may itself contain `/`, as OpenRouter's do).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelRef {
    /// Provider.
    pub provider: String,
    /// Model id.
    pub id: String,
}

impl ModelRef {
    /// Parses `provider/id`, splitting at the first `/`.
    pub fn parse(s: &str) -> Option<ModelRef> {
        let (provider, id) = s.split_once('/')?;
        (!provider.is_empty() && !id.is_empty()).then(|| ModelRef {
            provider: provider.to_string(),
            id: id.to_string(),
        })
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider, self.id)
    }
}

impl Serialize for ModelRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ModelRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ModelRef::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("`{s}` is not of the form `provider/id`"))
        })
    }
}

/// Tandem's settings, as the client sends them. Absent keys mean "the default".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TandemConfig {
    /// The model for new sessions; absent → pi's `defaultProvider` / `defaultModel`, then the
    /// first available model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// The thinking level for new sessions; absent → pi's `defaultThinkingLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<ThinkingLevel>,
    /// Absent → `confirm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_mode: Option<EditMode>,
    /// Absent → `ask`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bash_permission: Option<BashPermission>,
    /// pi's agent dir (`~` allowed); absent → `PI_CODING_AGENT_DIR`, then `~/.pi/agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_dir: Option<String>,
    /// How long the server waits for the editor to answer an edit or a question, in
    /// milliseconds; absent → 120000. No answer in time is a tool error, never a hung server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_timeout_ms: Option<u64>,
    /// Whether the editor saves the documents Tandem changed before a command runs; absent →
    /// true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save_before_commands: Option<bool>,
    /// The built-in tools of new sessions, by name ([`TOOL_NAMES`]); absent → all seven, plus
    /// the language tools a source answers. The server's `--tools` / `--no-tools` win over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// The built-in tools a `tools` setting may name (the language tools are offered only when the
/// editor or a language server of Tandem's answers them).
pub const TOOL_NAMES: [&str; 13] = [
    "read",
    "bash",
    "edit",
    "write",
    "grep",
    "find",
    "ls",
    "diagnostics",
    "definition",
    "references",
    "symbols",
    "hover",
    "rename",
];

/// The `initializationOptions` key carrying the editor's own workspace trust (VS Code's
/// `workspace.isTrusted`, Neovim's `vim.secure` decision). Read from `initializationOptions`
/// only — at its top level, never inside the `tandem` settings section and never from
/// `workspace/didChangeConfiguration` — so a repository's own settings file cannot vouch for the
/// repository.
pub const WORKSPACE_TRUSTED: &str = "workspaceTrusted";

/// The editor's workspace trust given in `initializationOptions`: `Ok(None)` when the editor
/// says nothing (the server then decides, asking when needed), an error when the value is not a
/// boolean (treated as saying nothing).
pub fn editor_trust(options: Option<&Value>) -> Result<Option<bool>, String> {
    match options.and_then(|o| o.get(WORKSPACE_TRUSTED)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(trusted)) => Ok(Some(*trusted)),
        Some(other) => Err(format!(
            "initializationOptions.{WORKSPACE_TRUSTED}: expected true or false, got {}; the \
             server decides project trust itself",
            kind(other)
        )),
    }
}

/// The outcome of reading settings: what was understood, and what was not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigParse {
    /// The settings, with each bad value left out.
    pub config: TandemConfig,
    /// One line per bad value, naming the key and the default used instead.
    pub warnings: Vec<String>,
}

impl TandemConfig {
    /// The edit mode in effect.
    pub fn edit_mode(&self) -> EditMode {
        self.edit_mode.unwrap_or_default()
    }

    /// The bash permission in effect.
    pub fn bash_permission(&self) -> BashPermission {
        self.bash_permission.unwrap_or_default()
    }

    /// Reads `initializationOptions`: Tandem's settings object itself (`{"editMode": ...}`),
    /// or an object holding it under `tandem` (the same shape as `settings`).
    pub fn from_initialization_options(options: &Value) -> ConfigParse {
        match options.get(SECTION) {
            Some(section) if section.is_object() => {
                TandemConfig::parse(section, "initializationOptions.tandem")
            }
            _ => TandemConfig::parse(options, "initializationOptions"),
        }
    }

    /// Reads `workspace/didChangeConfiguration`'s `settings`, whose `tandem` member replaces the
    /// whole configuration. `None` when it has no `tandem` member (a client that only signals a
    /// change; the server then asks with `workspace/configuration`).
    pub fn from_settings(settings: &Value) -> Option<ConfigParse> {
        settings
            .get(SECTION)
            .map(|section| TandemConfig::parse(section, "settings.tandem"))
    }

    /// Reads a settings object key by key; `origin` prefixes warnings (`settings.tandem`).
    /// `null` is an empty configuration; unknown keys are ignored.
    pub fn parse(value: &Value, origin: &str) -> ConfigParse {
        let mut out = ConfigParse::default();
        let map = match value {
            Value::Object(map) => map,
            Value::Null => return out,
            other => {
                out.warnings.push(format!(
                    "{origin}: expected an object of Tandem settings, got {}; using the defaults",
                    kind(other)
                ));
                return out;
            }
        };
        let c = &mut out.config;
        let w = &mut out.warnings;
        c.model = key(
            map,
            origin,
            "model",
            "`provider/id`",
            "pi's default model",
            w,
        );
        c.thinking_level = key(
            map,
            origin,
            "thinkingLevel",
            "one of `off`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`",
            "pi's default level",
            w,
        );
        c.edit_mode = key(
            map,
            origin,
            "editMode",
            "`confirm` or `auto`",
            "`confirm`",
            w,
        );
        c.bash_permission = key(
            map,
            origin,
            "bashPermission",
            "`ask`, `allow` or `deny`",
            "`ask`",
            w,
        );
        c.agent_dir = key(map, origin, "agentDir", "a path", "pi's agent dir", w);
        c.edit_timeout_ms = key::<u64>(
            map,
            origin,
            "editTimeoutMs",
            "a positive whole number of milliseconds",
            "120000",
            w,
        )
        .filter(|ms| *ms > 0);
        c.save_before_commands = key(
            map,
            origin,
            "saveBeforeCommands",
            "true or false",
            "true",
            w,
        );
        c.tools = key::<Vec<String>>(
            map,
            origin,
            "tools",
            "an array of tool names",
            "every tool",
            w,
        )
        .map(|names| {
            // Unknown names are left out with a warning, as the command line's `--tools` does.
            names
                .into_iter()
                .filter(|name| {
                    let known = TOOL_NAMES.contains(&name.as_str());
                    if !known {
                        w.push(format!(
                            "{origin}.tools: unknown tool `{name}` left out; the tools are {}",
                            TOOL_NAMES.join(", ")
                        ));
                    }
                    known
                })
                .collect()
        });
        out
    }
}

/// One key of the object at `origin`: absent or `null` → `None`; a bad value → `None` and a
/// warning saying what was expected and what is used instead.
fn key<T: serde::de::DeserializeOwned>(
    map: &Map<String, Value>,
    origin: &str,
    name: &str,
    expected: &str,
    default: &str,
    warnings: &mut Vec<String>,
) -> Option<T> {
    match map.get(name) {
        None | Some(Value::Null) => None,
        Some(v) => match serde_json::from_value(v.clone()) {
            Ok(t) => Some(t),
            Err(_) => {
                warnings.push(format!(
                    "{origin}.{name}: expected {expected}, got {v}; using {default}"
                ));
                None
            }
        },
    }
}

/// A JSON value's kind in words ("a number", "an array", …), for errors about bad values.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
