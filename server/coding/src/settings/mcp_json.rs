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

/// Refuses a streamable-HTTP server's `url` unless it is `http://` or `https://` with a host.
pub fn check_http_url(url: &str) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    if !rest.is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/')) {
        return Err(format!("url \"{url}\" must be an http:// or https:// URL"));
    }
    Ok(())
}

impl McpServer {
    /// A stdio server with only a command and arguments (the rest at defaults).
    pub fn stdio(command: &str, args: &[String]) -> McpServer {
        McpServer::new(McpTransport::Stdio {
            command: command.to_string(),
            args: args.to_vec(),
            env: BTreeMap::new(),
            cwd: None,
        })
    }

    /// A server reached through `transport`, the rest at defaults.
    pub fn new(transport: McpTransport) -> McpServer {
        McpServer {
            transport,
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
    /// Adds one file's `mcpServers` (its root already parsed): returns `(server name, problem,
    /// whether the entry was a project override of a user server, which stays as it was)` for
    /// each entry skipped; an empty name is a problem with the file as a whole.
    pub(super) fn add_file(
        &mut self,
        root: &Map<String, Value>,
        scope: Scope,
    ) -> Vec<(String, String, bool)> {
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
                    false,
                )]
            }
        };
        let mut problems = Vec::new();
        for (name, value) in servers {
            if let Err(problem) = self.add_entry(name, value, scope) {
                let kept = scope == Scope::Project
                    && value.as_object().is_some_and(is_override)
                    && self.entries.contains_key(name);
                problems.push((name.clone(), problem, kept));
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
    if fields.contains_key("disabled") {
        return Err(
            "\"disabled\" is not a key of mcp.json: write \"enabled\": false (pi 1.6's key)"
                .to_string(),
        );
    }
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
        check_http_url(&url)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("an object expected, found {other}"),
        }
    }

    /// Gathers a user file, then a project file; the servers and each file's problems.
    fn gather(user: Value, project: Value) -> (BTreeMap<String, McpServer>, Vec<String>) {
        let mut gathered = Gathered::default();
        let mut problems = Vec::new();
        for (file, scope) in [(user, Scope::User), (project, Scope::Project)] {
            let root = object(json!({ KEY: file }));
            for (name, problem, _) in gathered.add_file(&root, scope) {
                problems.push(format!("{name}: {problem}"));
            }
        }
        (gathered.servers(), problems)
    }

    fn env_of(server: &McpServer) -> BTreeMap<String, String> {
        match &server.transport {
            McpTransport::Stdio { env, .. } => env.clone(),
            McpTransport::Http { .. } => panic!("stdio expected"),
        }
    }

    #[test]
    fn a_project_entry_replaces_the_user_entry_whole() {
        let (servers, problems) = gather(
            json!({"s": {"command": "user", "args": ["a"], "env": {"K": "v"}, "cwd": "d",
                         "timeout": 5, "description": "user's", "exposure": "hidden"}}),
            json!({"s": {"command": "project"}}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(servers["s"], McpServer::stdio("project", &[]));
        // A project entry may switch the transport too.
        let (servers, _) = gather(
            json!({"s": {"command": "user"}}),
            json!({"s": {"url": "https://example.com/mcp", "headers": {"A": "b"}}}),
        );
        assert_eq!(
            servers["s"].transport,
            McpTransport::Http {
                url: "https://example.com/mcp".to_string(),
                headers: [("A".to_string(), "b".to_string())].into()
            }
        );
    }

    #[test]
    fn a_project_entry_without_command_url_or_type_overrides_three_keys_only() {
        let user = json!({"s": {"command": "user", "env": {"TOKEN": "${SECRET}"},
                                "exposure": "direct", "timeout": 7}});
        let (servers, problems) = gather(
            user.clone(),
            json!({"s": {"enabled": false, "exposure": "hidden",
                         "toolExposure": {"get_*": "direct", "get_one": "hidden"}}}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        let s = &servers["s"];
        assert!(!s.enabled);
        assert_eq!(s.exposure, Some(McpExposure::Hidden));
        assert_eq!(s.timeout, Some(7.0));
        assert_eq!(env_of(s)["TOKEN"], "${SECRET}");
        // Exact names win over patterns; unmatched tools take the server's exposure.
        assert_eq!(s.tool_exposure("get_one"), Some(McpExposure::Hidden));
        assert_eq!(s.tool_exposure("get_two"), Some(McpExposure::Direct));
        assert_eq!(s.tool_exposure("put"), Some(McpExposure::Hidden));

        // Any other key in an override is refused, and the user's entry stands unchanged.
        let (servers, problems) = gather(
            user.clone(),
            json!({"s": {"enabled": false, "env": {"TOKEN": "stolen"}}}),
        );
        assert_eq!(
            problems,
            [
                "s: \"env\" cannot be set here: an entry without \"command\" or \"url\" overrides \
              only enabled, exposure, toolExposure of the agent directory's server"
            ]
        );
        assert!(servers["s"].enabled);
        assert_eq!(env_of(&servers["s"])["TOKEN"], "${SECRET}");

        // An override of a server the user file does not have.
        let (servers, problems) = gather(json!({}), json!({"ghost": {"enabled": true}}));
        assert!(servers.is_empty());
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("ghost: needs \"command\" or \"url\""));

        // A bad value in an override is refused; the user's entry stands.
        let (servers, problems) = gather(user, json!({"s": {"exposure": "maybe"}}));
        assert_eq!(servers["s"].exposure, Some(McpExposure::Direct));
        assert_eq!(
            problems,
            ["s: exposure: expected \"codemode\", \"deferred\", \"direct\" or \"hidden\", found \
              a string (\"maybe\")"]
        );
    }

    #[test]
    fn in_the_user_file_an_entry_without_command_or_url_is_an_error() {
        let (servers, problems) = gather(json!({"s": {"enabled": false}}), json!({}));
        assert!(servers.is_empty());
        assert_eq!(
            problems,
            ["s: needs either \"command\" (a stdio server) or \"url\" (a streamable-HTTP server)"]
        );
    }

    #[test]
    fn names_that_differ_only_in_dash_and_underscore_are_one_server() {
        let (servers, problems) = gather(
            json!({"a-b": {"command": "first"}, "a_b": {"command": "second"}}),
            json!({"a_b": {"command": "project"}, "c": {"command": "c"}}),
        );
        let names: Vec<&str> = servers.keys().map(String::as_str).collect();
        assert_eq!(names, ["a-b", "c"]);
        let expected = "conflicts with server \"a-b\": names that differ only in \"-\" and \"_\" \
                        are the same server; rename one";
        assert_eq!(
            problems,
            [format!("a_b: {expected}"), format!("a_b: {expected}")]
        );
        // The same name in the project file is a replacement, not a conflict.
        let (servers, problems) = gather(
            json!({"a-b": {"command": "user"}}),
            json!({"a-b": {"command": "project"}}),
        );
        assert!(problems.is_empty());
        assert_eq!(servers["a-b"], McpServer::stdio("project", &[]));
    }

    #[test]
    fn entries_are_checked_field_by_field() {
        let cases = [
            (json!({"command": "x"}), None),
            (json!({"type": "stdio", "command": "x", "args": ["a"], "cwd": "~/d"}), None),
            (json!({"type": "http", "url": "http://127.0.0.1:3/mcp"}), None),
            (json!({"type": "streamable-http", "url": "https://h/mcp", "timeout": 0.5}), None),
            (json!({"command": "x", "exposure": "codemode-deferred"}), None),
            (json!("npx x"), Some("expected an object, found a string (\"npx x\")")),
            (
                json!({"type": "sse", "url": "https://h/sse"}),
                Some("\"type\": \"sse\": the legacy SSE transport is not supported; use the \
                      server's streamable-HTTP URL (often /mcp instead of /sse)"),
            ),
            (
                json!({"type": "ws", "url": "wss://h"}),
                Some("\"type\" is \"ws\"; it must be \"stdio\", \"http\" or \"streamable-http\""),
            ),
            (json!({"type": 1, "command": "x"}), Some("type: expected a string, found a number (1)")),
            (
                json!({"command": "x", "url": "https://h"}),
                Some("has both \"command\" and \"url\"; keep \"command\" for a stdio server or \
                      \"url\" for a streamable-HTTP one"),
            ),
            (json!({"type": "http", "command": "x"}), Some("\"type\" is HTTP but \"url\" is missing")),
            (json!({"type": "stdio", "url": "https://h"}), Some("\"type\" is \"stdio\" but \"command\" is missing")),
            (json!({"url": "ftp://h/mcp"}), Some("url \"ftp://h/mcp\" must be an http:// or https:// URL")),
            (json!({"url": "https://"}), Some("url \"https://\" must be an http:// or https:// URL")),
            (json!({"url": "https://h", "env": {}}), Some("\"env\" applies to stdio servers only, not to a \"url\"")),
            (json!({"command": "x", "headers": {}}), Some("\"headers\" applies to HTTP servers (\"url\") only")),
            (json!({"command": " "}), Some("\"command\" is empty")),
            (json!({"command": ["x"]}), Some("command: expected a string, found an array")),
            (json!({"command": "x", "args": ["a", 2]}), Some("args[1]: expected a string, found a number (2)")),
            (json!({"command": "x", "env": {"A": 1}}), Some("env.A: expected a string, found a number (1)")),
            (json!({"url": "https://h", "headers": {"A": true}}), Some("headers.A: expected a string, found a boolean (true)")),
            (json!({"command": "x", "timeout": 0}), Some("timeout: expected a positive number of seconds, found a number (0)")),
            (json!({"command": "x", "timeout": "5"}), Some("timeout: expected a positive number of seconds, found a string (\"5\")")),
            (json!({"command": "x", "enabled": "no"}), Some("enabled: expected true or false, found a string (\"no\")")),
            (json!({"command": "x", "description": 3}), Some("description: expected a string, found a number (3)")),
            (
                json!({"command": "x", "disabled": true}),
                Some("\"disabled\" is not a key of mcp.json: write \"enabled\": false (pi 1.6's key)"),
            ),
            (
                json!({"command": "x", "toolExposure": {"t": "open"}}),
                Some("toolExposure.t: expected \"codemode\", \"deferred\", \"direct\" or \"hidden\", found a string (\"open\")"),
            ),
            (
                json!({"url": "https://h", "auth": {"provider": "github"}}),
                Some("\"auth\": OAuth sign-in is not supported by Tandem; send a token in \"headers\" instead, e.g. \"Authorization\": \"Bearer ${TOKEN_VARIABLE}\""),
            ),
        ];
        for (entry, expected) in cases {
            let result = match &entry {
                Value::Object(fields) => parse_entry(fields).map(|_| ()),
                other => Err(format!("expected an object, found {}", describe(other))),
            };
            assert_eq!(result.err().as_deref(), expected, "{entry}");
        }
        assert_eq!(check_name("ok_name-2"), Ok(()));
        for bad in ["", "a b", "a.b", "é", "a/b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn wildcards_match_any_characters() {
        assert!(wildcard_match("get_*", "get_"));
        assert!(wildcard_match("get_*", "get_all"));
        assert!(wildcard_match("*_all", "get_all"));
        assert!(wildcard_match("g*t*l", "get_all"));
        assert!(wildcard_match("*", ""));
        assert!(!wildcard_match("get_*", "put_all"));
        assert!(!wildcard_match("a*a", "a"));
        assert!(!wildcard_match("exact", "exact2"));
    }
}
