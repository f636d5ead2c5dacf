//! pi 1.6's `mcp.json`: `<agentDir>/mcp.json`, then the project's `.pi/mcp.json` (read only
//! for a trusted folder), each `{"mcpServers": {name: entry}}`.
//!
//! An entry is a stdio server (`command`, `args`, `env`, `cwd`) or a streamable-HTTP server
//! (`url`, `headers`); both may set `enabled`, `timeout` (seconds per request), `description`,
//! `exposure` and `toolExposure`. The rules are pi's:
//! - a server name is letters, digits, `_` and `-`; two names that differ only in `-` versus
//!   `_` are one server, so the second is rejected;
//! - `type`, when present, is `stdio`, `http` or `streamable-http`; `sse` is rejected;
//! - a project entry replaces the user entry of its name, except an entry without `command`,
//!   `url` and `type`: that one overrides only `enabled`, `exposure` and `toolExposure` of the
//!   user entry and keeps the rest (a repository can switch a user's server off, but cannot
//!   point its credentials elsewhere);
//! - a bad entry is reported and skipped; the other servers still start.
//!
//! Where Tandem differs from pi, it says so rather than guessing: an entry with both `command`
//! and `url` is rejected (pi silently picks the URL), and OAuth (`oauth`, `auth`) is rejected
//! with a message naming the header alternative (Tandem has no sign-in flow). `${VAR}` and
//! `!command` in `env` and `headers` values are kept as written here and resolved when the
//! server starts (`tandem_ai::registry::config_value`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::schema::describe;

/// The file's key holding the servers.
pub(super) const KEY: &str = "mcpServers";

/// How one server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A program Tandem starts, speaking MCP over its stdin and stdout.
    Stdio {
        /// The program: one executable, not a shell command line. A leading `~/` names the
        /// home directory.
        command: String,
        /// Its arguments (a leading `~/` in each names the home directory).
        args: Vec<String>,
        /// Variables added to Tandem's environment; values may hold `${VAR}` or `!command`.
        env: BTreeMap<String, String>,
        /// Working directory, relative to the session's; the session's when absent.
        cwd: Option<String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// `http://` or `https://` URL.
        url: String,
        /// Headers sent with every request; values may hold `${VAR}` or `!command`.
        headers: BTreeMap<String, String>,
    },
}

/// How a server's tools reach the model (pi's `exposure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpExposure {
    /// pi: callable from its `codemode` scripts only. Tandem has no codemode.
    Codemode,
    /// pi: declared once its `tool_search` finds them. Tandem has no tool search.
    Deferred,
    /// Declared to the model like a built-in tool.
    Direct,
    /// Not offered at all.
    Hidden,
}

impl McpExposure {
    /// The value as written in mcp.json.
    pub fn as_str(self) -> &'static str {
        match self {
            McpExposure::Codemode => "codemode",
            McpExposure::Deferred => "deferred",
            McpExposure::Direct => "direct",
            McpExposure::Hidden => "hidden",
        }
    }

    fn parse(value: &str) -> Option<McpExposure> {
        match value {
            "codemode" | "codemode-deferred" => Some(McpExposure::Codemode),
            "deferred" => Some(McpExposure::Deferred),
            "direct" => Some(McpExposure::Direct),
            "hidden" => Some(McpExposure::Hidden),
            _ => None,
        }
    }
}

/// One MCP server as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServer {
    /// Stdio or HTTP, with their fields.
    pub transport: McpTransport,
    /// `false` keeps the entry without starting the server.
    pub enabled: bool,
    /// Seconds each request may take (pi's default: 60).
    pub timeout: Option<f64>,
    /// What the server offers, in a sentence.
    pub description: Option<String>,
    /// The server's exposure; `None` when not written (Tandem then declares its tools).
    pub exposure: Option<McpExposure>,
    /// Per-tool exposures, in file order: exact tool names or `*` patterns.
    pub tool_exposure: Vec<(String, McpExposure)>,
}

impl McpServer {
    /// A stdio server with only a command and arguments (the rest at defaults).
    pub fn stdio(command: &str, args: &[String]) -> McpServer {
        McpServer {
            transport: McpTransport::Stdio {
                command: command.to_string(),
                args: args.to_vec(),
                env: BTreeMap::new(),
                cwd: None,
            },
            enabled: true,
            timeout: None,
            description: None,
            exposure: None,
            tool_exposure: Vec::new(),
        }
    }

    /// The exposure of one of the server's tools: its exact `toolExposure` entry, else the
    /// first matching pattern, else the server's exposure. `None`: nothing written for it.
    pub fn tool_exposure(&self, tool: &str) -> Option<McpExposure> {
        if let Some((_, exposure)) = self.tool_exposure.iter().find(|(name, _)| name == tool) {
            return Some(*exposure);
        }
        self.tool_exposure
            .iter()
            .find(|(pattern, _)| pattern.contains('*') && wildcard_match(pattern, tool))
            .map(|(_, exposure)| *exposure)
            .or(self.exposure)
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any characters (none included).
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().unwrap_or((&"", &[]));
    let Some(mut left) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for part in middle {
        match left.find(part) {
            Some(at) => left = &left[at + part.len()..],
            None => return false,
        }
    }
    left.len() >= last.len() && left.ends_with(last)
}

/// Which file an entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// The agent directory's mcp.json.
    User,
    /// The project's `.pi/mcp.json`.
    Project,
}

/// The keys a project entry without `command`, `url` and `type` may set.
const OVERRIDE_KEYS: &[&str] = &["enabled", "exposure", "toolExposure"];

/// The servers gathered so far: each validated entry as written (a project override is merged
/// into it), by name.
#[derive(Debug, Default)]
pub(super) struct Gathered {
    entries: BTreeMap<String, Map<String, Value>>,
}

impl Gathered {
    /// Adds one file's `mcpServers` (its root already parsed): returns `(server name, problem)`
    /// for each entry skipped; an empty name is a problem with the file as a whole.
    pub(super) fn add_file(
        &mut self,
        root: &Map<String, Value>,
        scope: Scope,
    ) -> Vec<(String, String)> {
        let servers = match root.get(KEY) {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::Object(servers)) => servers,
            Some(other) => {
                return vec![(
                    String::new(),
                    format!(
                        "expected an object from server name to server entry, found {}",
                        describe(other)
                    ),
                )]
            }
        };
        let mut problems = Vec::new();
        for (name, value) in servers {
            if let Err(problem) = self.add_entry(name, value, scope) {
                problems.push((name.clone(), problem));
            }
        }
        problems
    }

    fn add_entry(&mut self, name: &str, value: &Value, scope: Scope) -> Result<(), String> {
        check_name(name)?;
        let Some(fields) = value.as_object() else {
            return Err(format!("expected an object, found {}", describe(value)));
        };
        if scope == Scope::Project && is_override(fields) {
            let Some(base) = self.entries.get(name) else {
                return Err(
                    "needs \"command\" or \"url\" (an entry with neither only overrides a server \
                     of the same name in the agent directory's mcp.json, and there is none)"
                        .to_string(),
                );
            };
            if let Some(extra) = fields.keys().find(|k| !OVERRIDE_KEYS.contains(&k.as_str())) {
                return Err(format!(
                    "\"{extra}\" cannot be set here: an entry without \"command\" or \"url\" \
                     overrides only {} of the agent directory's server",
                    OVERRIDE_KEYS.join(", ")
                ));
            }
            let mut merged = base.clone();
            merged.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
            parse_entry(&merged)?;
            self.entries.insert(name.to_string(), merged);
            return Ok(());
        }
        parse_entry(fields)?;
        if let Some(other) = self
            .entries
            .keys()
            .find(|other| *other != name && namespace(other) == namespace(name))
        {
            return Err(format!(
                "conflicts with server \"{other}\": names that differ only in \"-\" and \"_\" \
                 are the same server; rename one"
            ));
        }
        self.entries.insert(name.to_string(), fields.clone());
        Ok(())
    }

    /// The servers, typed, by name.
    pub(super) fn servers(&self) -> BTreeMap<String, McpServer> {
        self.entries
            .iter()
            .filter_map(|(name, fields)| Some((name.clone(), parse_entry(fields).ok()?)))
            .collect()
    }

    /// Whether a server of this name or namespace was gathered.
    pub(super) fn has_namespace(&self, name: &str) -> bool {
        self.entries.keys().any(|n| namespace(n) == namespace(name))
    }
}

/// Server names may be letters, digits, `_` and `-` (they become part of tool names).
fn check_name(name: &str) -> Result<(), String> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        Ok(())
    } else {
        Err("invalid server name: use only letters, digits, \"_\" and \"-\"".to_string())
    }
}

/// Names that differ only in `-` versus `_` share one namespace.
pub(super) fn namespace(name: &str) -> String {
    name.replace('-', "_")
}

fn is_override(fields: &Map<String, Value>) -> bool {
    !fields.contains_key("command") && !fields.contains_key("url") && !fields.contains_key("type")
}

/// Checks one entry and gives its typed view; the error says what is wrong.
pub(super) fn parse_entry(fields: &Map<String, Value>) -> Result<McpServer, String> {
    let enabled = match fields.get("enabled") {
        None => true,
        Some(Value::Bool(enabled)) => *enabled,
        Some(other) => {
            return Err(format!(
                "enabled: expected true or false, found {}",
                describe(other)
            ))
        }
    };
    let description = optional_string(fields, "description")?;
    let timeout = match fields.get("timeout") {
        None => None,
        Some(Value::Number(n)) if n.as_f64().is_some_and(|t| t > 0.0 && t.is_finite()) => {
            n.as_f64()
        }
        Some(other) => {
            return Err(format!(
                "timeout: expected a positive number of seconds, found {}",
                describe(other)
            ))
        }
    };
    let exposure = match fields.get("exposure") {
        None => None,
        Some(value) => Some(exposure_value(value, "exposure")?),
    };
    let tool_exposure = match fields.get("toolExposure") {
        None => Vec::new(),
        Some(Value::Object(tools)) => tools
            .iter()
            .map(|(tool, value)| {
                Ok((
                    tool.clone(),
                    exposure_value(value, &format!("toolExposure.{tool}"))?,
                ))
            })
            .collect::<Result<_, String>>()?,
        Some(other) => {
            return Err(format!(
                "toolExposure: expected an object from tool name to exposure, found {}",
                describe(other)
            ))
        }
    };
    for key in ["oauth", "auth"] {
        if fields.contains_key(key) {
            return Err(format!(
                "\"{key}\": OAuth sign-in is not supported by Tandem; send a token in \"headers\" \
                 instead, e.g. \"Authorization\": \"Bearer ${{TOKEN_VARIABLE}}\""
            ));
        }
    }
    let command = fields.get("command");
    let url = fields.get("url");
    let kind = match fields.get("type") {
        None => None,
        Some(Value::String(kind)) => match kind.as_str() {
            "stdio" => Some(false),
            "http" | "streamable-http" => Some(true),
            "sse" => {
                return Err(
                    "\"type\": \"sse\": the legacy SSE transport is not supported; use the \
                     server's streamable-HTTP URL (often /mcp instead of /sse)"
                        .to_string(),
                )
            }
            other => {
                return Err(format!(
                    "\"type\" is \"{other}\"; it must be \"stdio\", \"http\" or \"streamable-http\""
                ))
            }
        },
        Some(other) => {
            return Err(format!(
                "type: expected a string, found {}",
                describe(other)
            ))
        }
    };
    if command.is_some() && url.is_some() {
        return Err(
            "has both \"command\" and \"url\"; keep \"command\" for a stdio server or \"url\" for \
             a streamable-HTTP one"
                .to_string(),
        );
    }
    let http =
        match (kind, command, url) {
            (Some(true), _, None) => return Err("\"type\" is HTTP but \"url\" is missing".into()),
            (Some(false), None, _) => {
                return Err("\"type\" is \"stdio\" but \"command\" is missing".into())
            }
            (Some(false), _, Some(_)) => {
                return Err("\"type\" is \"stdio\" but the entry has a \"url\"".into())
            }
            (Some(true), Some(_), _) => {
                return Err("\"type\" is HTTP but the entry has a \"command\"".into())
            }
            (_, _, Some(_)) => true,
            (_, Some(_), None) => false,
            (None, None, None) => return Err(
                "needs either \"command\" (a stdio server) or \"url\" (a streamable-HTTP server)"
                    .to_string(),
            ),
        };
    let transport = if http {
        let url = match url {
            Some(Value::String(url)) => url.clone(),
            Some(other) => {
                return Err(format!("url: expected a string, found {}", describe(other)))
            }
            None => return Err("\"url\" is missing".to_string()),
        };
        let lower = url.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("https://")
            .or_else(|| lower.strip_prefix("http://"));
        if !rest.is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/')) {
            return Err(format!("url \"{url}\" must be an http:// or https:// URL"));
        }
        for key in ["args", "env", "cwd"] {
            if fields.contains_key(key) {
                return Err(format!(
                    "\"{key}\" applies to stdio servers only, not to a \"url\""
                ));
            }
        }
        McpTransport::Http {
            url,
            headers: string_map(fields, "headers")?,
        }
    } else {
        let command = match command {
            Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
            Some(Value::String(_)) => return Err("\"command\" is empty".to_string()),
            Some(other) => {
                return Err(format!(
                    "command: expected a string, found {}",
                    describe(other)
                ))
            }
            None => return Err("\"command\" is missing".to_string()),
        };
        if fields.contains_key("headers") {
            return Err("\"headers\" applies to HTTP servers (\"url\") only".to_string());
        }
        let args = match fields.get("args") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(format!(
                        "args[{i}]: expected a string, found {}",
                        describe(other)
                    )),
                })
                .collect::<Result<_, String>>()?,
            Some(other) => {
                return Err(format!(
                    "args: expected a list of strings, found {}",
                    describe(other)
                ))
            }
        };
        McpTransport::Stdio {
            command,
            args,
            env: string_map(fields, "env")?,
            cwd: optional_string(fields, "cwd")?,
        }
    };
    Ok(McpServer {
        transport,
        enabled,
        timeout,
        description,
        exposure,
        tool_exposure,
    })
}

fn exposure_value(value: &Value, key: &str) -> Result<McpExposure, String> {
    value.as_str().and_then(McpExposure::parse).ok_or_else(|| {
        format!(
            "{key}: expected \"codemode\", \"deferred\", \"direct\" or \"hidden\", found {}",
            describe(value)
        )
    })
}

fn optional_string(fields: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match fields.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "{key}: expected a string, found {}",
            describe(other)
        )),
    }
}

fn string_map(fields: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match fields.get(key) {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(name, value)| match value {
                Value::String(s) => Ok((name.clone(), s.clone())),
                other => Err(format!(
                    "{key}.{name}: expected a string, found {}",
                    describe(other)
                )),
            })
            .collect(),
        Some(other) => Err(format!(
            "{key}: expected an object from name to string, found {}",
            describe(other)
        )),
    }
}
