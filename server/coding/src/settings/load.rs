//! Reading, checking and merging the two settings files.
//!
//! Each file is parsed to JSON, migrated from pi's older layouts, checked (values of the wrong
//! kind are dropped and reported), then the project file is merged over the global one (an
//! `mcpServers` or `languageServers` entry of the project replaces the global one of its name
//! whole). The
//! reads are blocking: this runs once at startup, before any async work.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::mcp_json::{Gathered, McpServer, McpTransport, Scope};
use super::schema::{check, describe};
use super::{language, mcp, McpServerSettings, Settings};

/// Where the settings files live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsPaths {
    /// `<agentDir>/settings.json`.
    pub global: PathBuf,
    /// `<cwd>/.pi/settings.json`.
    pub project: PathBuf,
    /// `<agentDir>/mcp.json` (pi 1.6).
    pub global_mcp: PathBuf,
    /// `<cwd>/.pi/mcp.json` (pi 1.6).
    pub project_mcp: PathBuf,
}

impl SettingsPaths {
    /// The files for this agent directory and working directory.
    pub fn new(agent_dir: &Path, cwd: &Path) -> SettingsPaths {
        SettingsPaths {
            global: agent_dir.join("settings.json"),
            project: cwd.join(".pi").join("settings.json"),
            global_mcp: agent_dir.join("mcp.json"),
            project_mcp: cwd.join(".pi").join("mcp.json"),
        }
    }
}

/// A problem in a settings file. None is fatal: what could not be read is left at its default.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("Cannot read {}: {message}. Its settings are ignored; check the file's permissions.", .file.display())]
    Unreadable {
        /// The file.
        file: PathBuf,
        /// The operating system's reason.
        message: String,
    },
    /// The file is not valid JSON.
    #[error(
        "{}: invalid JSON at line {line}, column {column}: {message}. The file's settings are \
         ignored until it is fixed.",
        .file.display()
    )]
    InvalidJson {
        /// The file.
        file: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The file is JSON but not an object.
    #[error(
        "{}: expected a JSON object ({{ ... }}) at the top level, found {found}. The file's \
         settings are ignored.",
        .file.display()
    )]
    NotAnObject {
        /// The file.
        file: PathBuf,
        /// What it holds instead.
        found: String,
    },
    /// A known key holds a value of the wrong kind.
    #[error("{}: {key}: expected {expected}, found {found}. This setting is ignored.", .file.display())]
    WrongType {
        /// The file.
        file: PathBuf,
        /// Dotted key path, e.g. `retry.maxRetries`.
        key: String,
        /// What the key must hold.
        expected: String,
        /// What it held.
        found: String,
    },
    /// A key only the agent directory's settings may set, found in a project's.
    #[error("{}: {key} can only be set in the agent directory's settings.json; the project's value is ignored.", .file.display())]
    GlobalOnly {
        /// The project file.
        file: PathBuf,
        /// The key.
        key: String,
    },
    /// An `mcpServers` entry of the wrong shape; that server is not started.
    #[error("{}: {}: {problem}. {}", .file.display(), mcp_key(.name), mcp_consequence(.name))]
    InvalidMcpServer {
        /// The file.
        file: PathBuf,
        /// The server's name; empty when `mcpServers` itself is not an object.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// A project mcp.json entry overriding a user server, refused; the user's entry applies
    /// unchanged.
    #[error(
        "{}: mcpServers.{name}: {problem}. The agent directory's entry for this server applies \
         unchanged.",
        .file.display()
    )]
    InvalidMcpOverride {
        /// The project's mcp.json.
        file: PathBuf,
        /// The server's name.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// settings.json's `mcpServers`: still started, but pi 1.6 reads MCP servers only from
    /// mcp.json.
    #[error(
        "{}: mcpServers in settings.json is deprecated: pi 1.6 reads MCP servers only from \
         mcp.json. Tandem still starts these ({names}) unless an mcp.json names them; move them \
         to {}.",
        .file.display(),
        .mcp_json.display()
    )]
    DeprecatedMcpServers {
        /// The settings file.
        file: PathBuf,
        /// The mcp.json to move them to (next to it).
        mcp_json: PathBuf,
        /// The servers it names, comma-separated.
        names: String,
    },
    /// A key Tandem does not act on (pi's terminal UI, a pi setting not supported yet, or a
    /// key nobody knows).
    #[error("{}: {key} is {why}; it has no effect here.", .file.display())]
    Unused {
        /// The file.
        file: PathBuf,
        /// Dotted key path.
        key: String,
        /// Why it does nothing.
        why: &'static str,
    },
    /// A `languageServers` entry of the wrong shape; Tandem does not start that server.
    #[error("{}: {}: {problem}. {}", .file.display(), language_key(.name), language_consequence(.name))]
    InvalidLanguageServer {
        /// The file.
        file: PathBuf,
        /// The server's name; empty when `languageServers` itself is not an object.
        name: String,
        /// What is wrong.
        problem: String,
    },
}

fn language_key(name: &str) -> String {
    match name {
        "" => language::KEY.to_string(),
        name => format!("{}.{name}", language::KEY),
    }
}

fn language_consequence(name: &str) -> &'static str {
    match name {
        "" => "No language server from this file is used.",
        _ => "This entry is ignored until it is fixed.",
    }
}

fn mcp_key(name: &str) -> String {
    match name {
        "" => mcp::KEY.to_string(),
        name => format!("{}.{name}", mcp::KEY),
    }
}

fn mcp_consequence(name: &str) -> &'static str {
    match name {
        "" => "No MCP server from this file is started.",
        _ => "This MCP server is not started until its entry is fixed.",
    }
}

/// The settings files, their merge, and every problem found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedSettings {
    /// What the global file says.
    pub global: Settings,
    /// What the project file says (empty when the folder is not trusted).
    pub project: Settings,
    /// The project file merged over the global one: what applies.
    pub merged: Settings,
    /// Whether the project's protected files (settings, mcp.json, skills, prompts, system
    /// prompt files) may be used. Decided by [`crate::trust`] before loading; false by default.
    pub project_trusted: bool,
    /// The MCP servers to start, by name: the mcp.json files (the project's over the agent
    /// directory's, by pi's rules), then the deprecated settings.json `mcpServers` entries
    /// whose name no mcp.json uses. Disabled entries included.
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// Problems, global files first; print them as warnings.
    pub errors: Vec<SettingsError>,
}

impl LoadedSettings {
    /// The MCP servers to start (disabled entries left out).
    pub fn enabled_mcp_servers(&self) -> impl Iterator<Item = (&str, &McpServer)> {
        self.mcp_servers
            .iter()
            .filter(|(_, server)| server.enabled)
            .map(|(name, server)| (name.as_str(), server))
    }
}

/// Loads `<agent_dir>/settings.json` and `<agent_dir>/mcp.json`, and — only when
/// `project_trusted` — the project's `<cwd>/.pi/settings.json` and `.pi/mcp.json`. Decide
/// trust first ([`crate::trust::decide`], which needs only the global file: load it with
/// `project_trusted` false). Blocking.
pub fn load(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> LoadedSettings {
    load_files(&SettingsPaths::new(agent_dir, cwd), project_trusted)
}

/// Loads the files (the project's only when `project_trusted`); a missing file counts as
/// empty. Blocking.
pub fn load_files(paths: &SettingsPaths, project_trusted: bool) -> LoadedSettings {
    let mut errors = Vec::new();
    let global = read(&paths.global, &mut errors);
    let mut project = if project_trusted {
        read(&paths.project, &mut errors)
    } else {
        Map::new()
    };
    for key in GLOBAL_ONLY {
        if project.remove(*key).is_some() {
            errors.push(SettingsError::GlobalOnly {
                file: paths.project.clone(),
                key: key.to_string(),
            });
        }
    }
    let mut merged = Value::Object(global.clone());
    deep_merge(&mut merged, Value::Object(project.clone()));
    if let Value::Object(merged) = &mut merged {
        super::schema::replace_merged_entries(merged, &project, mcp::KEY);
        super::schema::replace_merged_entries(merged, &project, language::KEY);
    }
    for (file, settings) in [(&paths.global, &global), (&paths.project, &project)] {
        let names = legacy_names(settings);
        if !names.is_empty() {
            let mcp_json = file.with_file_name("mcp.json");
            errors.push(SettingsError::DeprecatedMcpServers {
                file: file.clone(),
                mcp_json,
                names,
            });
        }
    }
    let merged = match merged {
        Value::Object(map) => to_settings(map),
        _ => Settings::default(),
    };
    let mut gathered = Gathered::default();
    read_mcp_json(&paths.global_mcp, Scope::User, &mut gathered, &mut errors);
    if project_trusted {
        read_mcp_json(
            &paths.project_mcp,
            Scope::Project,
            &mut gathered,
            &mut errors,
        );
    }
    let mut mcp_servers = gathered.servers();
    for (name, server) in merged.mcp_servers.iter().flatten() {
        if !gathered.has_namespace(name) {
            mcp_servers.insert(name.clone(), from_legacy(server));
        }
    }
    LoadedSettings {
        global: to_settings(global),
        project: to_settings(project),
        merged,
        project_trusted,
        mcp_servers,
        errors,
    }
}

/// The keys only the agent directory's settings may hold: a project cannot vouch for itself,
/// send the user's requests (and keys) through a proxy of its choosing, choose where the
/// user's conversations are written, or choose the program a keystroke runs.
const GLOBAL_ONLY: &[&str] = &[
    "defaultProjectTrust",
    "httpProxy",
    "sessionDir",
    "externalEditor",
];

/// The names under a settings file's `mcpServers` (checked), comma-separated.
fn legacy_names(settings: &Map<String, Value>) -> String {
    match settings.get(mcp::KEY) {
        Some(Value::Object(servers)) => servers
            .iter()
            .filter(|(_, entry)| !entry.is_null())
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}

/// A settings.json `mcpServers` entry (Claude Desktop's format, stdio only) as an mcp.json one.
fn from_legacy(server: &McpServerSettings) -> McpServer {
    let mut typed = McpServer::stdio(&server.command, &server.args);
    typed.enabled = server.enabled();
    typed.transport = McpTransport::Stdio {
        command: server.command.clone(),
        args: server.args.clone(),
        env: server.env.clone(),
        cwd: server.cwd.clone(),
    };
    typed
}

/// Adds an mcp.json file's servers (pi's rules, [`mcp_json`]); a missing file adds none.
/// Other top-level keys are pi's (`autoEnableCodemode`) and are not checked.
fn read_mcp_json(
    file: &Path,
    scope: Scope,
    gathered: &mut Gathered,
    errors: &mut Vec<SettingsError>,
) {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            errors.push(SettingsError::Unreadable {
                file: file.to_path_buf(),
                message: e.to_string(),
            });
            return;
        }
    };
    let root = match parse_root(&text, file) {
        Ok(root) => root,
        Err(error) => {
            errors.push(error);
            return;
        }
    };
    for key in root.keys().filter(|key| key.as_str() != mcp::KEY) {
        let why = match key.as_str() {
            "autoEnableCodemode" => "pi's switch for its codemode tool, which Tandem does not have",
            _ => "not a key of mcp.json (pi 1.6 reads mcpServers and autoEnableCodemode)",
        };
        errors.push(SettingsError::Unused {
            file: file.to_path_buf(),
            key: key.clone(),
            why,
        });
    }
    for (name, problem, kept) in gathered.add_file(&root, scope) {
        let file = file.to_path_buf();
        errors.push(if kept {
            SettingsError::InvalidMcpOverride {
                file,
                name,
                problem,
            }
        } else {
            SettingsError::InvalidMcpServer {
                file,
                name,
                problem,
            }
        });
    }
}

/// Parses one file's text (`file` names it in errors): the checked keys, and the problems.
/// Empty text is an empty object.
pub fn parse(text: &str, file: &Path) -> (Map<String, Value>, Vec<SettingsError>) {
    let mut map = match parse_root(text, file) {
        Ok(map) => map,
        Err(error) => return (Map::new(), vec![error]),
    };
    migrate(&mut map);
    let mut errors: Vec<SettingsError> = check(&mut map)
        .into_iter()
        .map(|m| SettingsError::WrongType {
            file: file.to_path_buf(),
            key: m.key,
            expected: m.expected,
            found: m.found,
        })
        .collect();
    errors.extend(
        mcp::check(&mut map)
            .into_iter()
            .map(|bad| SettingsError::InvalidMcpServer {
                file: file.to_path_buf(),
                name: bad.name,
                problem: bad.problem,
            }),
    );
    errors.extend(
        language::check(&mut map)
            .into_iter()
            .map(|(name, problem)| SettingsError::InvalidLanguageServer {
                file: file.to_path_buf(),
                name,
                problem,
            }),
    );
    errors.extend(super::unused::unused(&map).into_iter().map(|(key, why)| {
        SettingsError::Unused {
            file: file.to_path_buf(),
            key,
            why,
        }
    }));
    (map, errors)
}

/// A file's top-level object (empty text is an empty object), or why there is none.
fn parse_root(text: &str, file: &Path) -> Result<Map<String, Value>, SettingsError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match tandem_ai::jsonc::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(SettingsError::NotAnObject {
            file: file.to_path_buf(),
            found: describe(&other),
        }),
        Err(e) => {
            let position = format!(" at line {} column {}", e.line(), e.column());
            let full = e.to_string();
            Err(SettingsError::InvalidJson {
                file: file.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message: full.strip_suffix(&position).unwrap_or(&full).to_string(),
            })
        }
    }
}

/// Merges `over` into `base`: objects merge key by key, recursively; anything else in `over`
/// (arrays, scalars, `null`) replaces what `base` had.
pub fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(slot) if slot.is_object() && value.is_object() => deep_merge(slot, value),
                    _ => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

fn read(file: &Path, errors: &mut Vec<SettingsError>) -> Map<String, Value> {
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let (map, found) = parse(&text, file);
            errors.extend(found);
            map
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => {
            errors.push(SettingsError::Unreadable {
                file: file.to_path_buf(),
                message: e.to_string(),
            });
            Map::new()
        }
    }
}

/// pi's migrations of older layouts: `queueMode` became `steeringMode`; `skills` was an object
/// `{enableSkillCommands, customDirectories}` before it became a list of paths.
fn migrate(map: &mut Map<String, Value>) {
    if !map.contains_key("steeringMode") {
        if let Some(mode) = map.remove("queueMode") {
            map.insert("steeringMode".to_string(), mode);
        }
    }
    if let Some(Value::Object(old)) = map.get("skills").cloned() {
        if let Some(enable) = old.get("enableSkillCommands") {
            if !map.contains_key("enableSkillCommands") {
                map.insert("enableSkillCommands".to_string(), enable.clone());
            }
        }
        match old.get("customDirectories") {
            Some(Value::Array(dirs)) if !dirs.is_empty() => {
                map.insert("skills".to_string(), Value::Array(dirs.clone()));
            }
            _ => {
                map.remove("skills");
            }
        }
    }
}

/// The typed view of checked keys. After [`check`] every known key has the right kind, so this
/// cannot fail on them; if it ever did, the defaults are the safe answer.
fn to_settings(mut map: Map<String, Value>) -> Settings {
    mcp::drop_null_entries(&mut map);
    serde_json::from_value(Value::Object(map)).unwrap_or_default()
}
