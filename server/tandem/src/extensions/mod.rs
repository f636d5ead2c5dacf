//! Extensions — pi's extension system, run out of process. Each extension runs in an
//! extension host that speaks protocol-ext/EXTENSIONS.md: pi's TypeScript and JavaScript
//! extensions in one Node host (Tandem's own, `extension-host/`), any other executable as a
//! host of its own. [`Extensions`] starts the hosts a session's extensions need, offers their
//! tools, runs their commands, asks their handlers at each of the session's events
//! ([`SessionExtensions`] and [`ProviderHooks`]) and answers what they ask (`ui/*`,
//! `session/*`, `agent/*`) through the front door's [`ExtensionUi`] and a [`SessionHandle`].
//!
//! A host that fails is contained: a handler that throws is reported with its extension's name,
//! a host that does not answer within the event's time limit is passed over (a `tool_call`
//! gate then blocks its call), a host that exits fails what was pending with how it exited and
//! is started again for the next event (at most 3 starts a minute).

mod connection;
pub mod discover;
mod node;
mod tool;
mod ui;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use tandem_agent::{
    AfterToolCallResult, AgentMessage, AgentTool, BeforeToolCallResult, BoxFuture, ToolUpdates,
};
use tandem_ai::sync::lock;
use tandem_ai::{HookFuture, ImageContent, ProviderHooks, UserBlock, UserContent};
use tandem_coding::agent_session::{
    AgentSession, AgentSessionEvent, Delivery, SessionEvent, SessionHandle,
};
use tandem_coding::extensions::{
    BeforeStart, FinishedCall, InputOutcome, InputSource, RunStart, SessionExtensions,
};
use tandem_coding::messages::ExtensionMessage;

use connection::{CallError, Connection, HostCalls, Launch};

pub use discover::{discover, Found, Runner, Scope, Sources};
pub use ui::{ExtensionUi, HandlerFailure, Level, NoUi, StderrUi};

/// The protocol version this Tandem speaks.
pub const PROTOCOL_VERSION: u64 = 1;
/// How long `initialize` (loading every extension) may take.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// Starts allowed per [`RESTART_WINDOW`].
const MAX_STARTS: usize = 3;
const RESTART_WINDOW: Duration = Duration::from_secs(60);
/// How long a host has to answer a cancelled tool call.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// What the extensions of a session are started with.
pub struct StartOptions<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// pi's agent directory.
    pub agent_dir: &'a Path,
    /// The front door (`"print"`, `"json"`, `"rpc"`, `"tui"`, `"lsp"`, `"acp"`).
    pub mode: &'static str,
    /// Whether the folder is trusted.
    pub trusted: bool,
    /// How `ctx.ui` reaches the user.
    pub ui: Arc<dyn ExtensionUi>,
    /// Where problems go (one line each: an extension that failed, a handler that threw).
    pub report: Arc<dyn Fn(String) + Send + Sync>,
    /// One event's time limit (`None`: none).
    pub event_timeout: Option<Duration>,
    /// The extension flags the command line gave (`--plan`, `--preset=fast`).
    pub flags: Vec<(String, Value)>,
}

/// A command an extension registered, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSource {
    /// The name to type after `/`.
    pub name: String,
    /// Its description, when it has one.
    pub description: Option<String>,
    /// The extension's file.
    pub path: String,
    /// Where the extension was found.
    pub scope: Scope,
}

/// An extension command that threw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandFailure {
    /// The command's name as typed.
    pub name: String,
    /// What it threw (or why its host could not run it).
    pub error: String,
}

/// The extensions of one session.
#[derive(Clone)]
pub struct Extensions {
    inner: Arc<Inner>,
}

struct Inner {
    hosts: Vec<Host>,
    cwd: PathBuf,
    agent_dir: PathBuf,
    mode: &'static str,
    trusted: bool,
    ui: Arc<dyn ExtensionUi>,
    report: Arc<dyn Fn(String) + Send + Sync>,
    session: Mutex<Option<SessionHandle>>,
    /// Running extension tool calls' update channels, by call id.
    updates: Mutex<HashMap<String, ToolUpdates>>,
    /// Notes already shown (a host repeats its whole list).
    noted: Mutex<std::collections::HashSet<String>>,
    event_timeout: Option<Duration>,
    flags: Map<String, Value>,
}

/// One host: its extensions, its connection (started when needed), what it registered.
struct Host {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    output_fd3: bool,
    extensions: Vec<Found>,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    registered: Mutex<Registered>,
    starts: Mutex<Vec<Instant>>,
    off: AtomicBool,
    /// The `state` last sent, field by field, and how many session entries it had.
    mirror: Mutex<(Map<String, Value>, usize)>,
}

#[derive(Debug, Clone, Default)]
struct Registered {
    tools: Vec<Value>,
    commands: Vec<Value>,
    /// The flags registered (`{name, type, default?, description}`).
    flags: Vec<Value>,
    /// `None`: every event.
    events: Option<Vec<String>>,
    /// Each loaded extension's name and file, as `initialize` answered them (a handler's
    /// error names its extension; pi's RPC mode reports the file).
    paths: Vec<(String, String)>,
}

impl Registered {
    fn update(&mut self, from: &Value) {
        if let Some(rows) = from.get("extensions").and_then(Value::as_array) {
            self.paths = rows
                .iter()
                .filter_map(|row| {
                    let name = row.get("name")?.as_str()?;
                    let path = row.get("path")?.as_str()?;
                    Some((name.to_string(), path.to_string()))
                })
                .collect();
        }
        if let Some(tools) = from.get("tools").and_then(Value::as_array) {
            self.tools = tools.clone();
        }
        if let Some(commands) = from.get("commands").and_then(Value::as_array) {
            self.commands = commands.clone();
        }
        if let Some(flags) = from.get("flags").and_then(Value::as_array) {
            self.flags = flags.clone();
        }
        if let Some(events) = from.get("events").and_then(Value::as_array) {
            self.events = Some(
                events
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            );
        }
    }

    fn listens(&self, event: &str) -> bool {
        self.events
            .as_ref()
            .is_none_or(|e| e.iter().any(|n| n == event))
    }
}

/// The outcome of asking one host about an event.
enum Answer {
    /// The composed result (`None`: no handler returned one, or the host does not listen).
    Result(Option<Value>),
    /// The host failed, timed out or is off: why.
    Failed(String),
}

impl Extensions {
    /// Starts the hosts `found` needs and loads the extensions; `None` when nothing is to be
    /// loaded. Problems (Node missing, an extension that failed to load) go to the report and
    /// never stop the session.
    pub async fn start(found: Vec<Found>, options: StartOptions<'_>) -> Option<Extensions> {
        if found.is_empty() {
            return None;
        }
        let mut hosts = Vec::new();
        let (node, executables): (Vec<Found>, Vec<Found>) =
            found.into_iter().partition(|f| f.runner == Runner::Node);
        if !node.is_empty() {
            match (node::find_node(), node::host_entry()) {
                (Some(program), Ok(entry)) => hosts.push(Host::new(
                    "node".to_string(),
                    program,
                    vec![
                        "--disable-warning=ExperimentalWarning".to_string(),
                        entry.display().to_string(),
                    ],
                    true,
                    node,
                )),
                (None, _) => (options.report)(format!(
                    "{}. These extensions were not loaded: {}.",
                    node::NODE_MISSING,
                    names(&node)
                )),
                (_, Err(why)) => (options.report)(format!(
                    "The extension host could not be prepared ({why}). These extensions were \
                     not loaded: {}.",
                    names(&node)
                )),
            }
        }
        for found in executables {
            let name = file_name(&found.path);
            hosts.push(Host::new(
                name,
                found.path.clone(),
                Vec::new(),
                false,
                vec![found],
            ));
        }
        if hosts.is_empty() {
            return None;
        }
        let inner = Arc::new(Inner {
            hosts,
            cwd: options.cwd.to_path_buf(),
            agent_dir: options.agent_dir.to_path_buf(),
            mode: options.mode,
            trusted: options.trusted,
            ui: options.ui,
            report: options.report,
            session: Mutex::new(None),
            updates: Mutex::new(HashMap::new()),
            noted: Mutex::new(std::collections::HashSet::new()),
            event_timeout: options.event_timeout,
            flags: options.flags.into_iter().collect(),
        });
        for index in 0..inner.hosts.len() {
            Inner::connect(&inner, index).await;
        }
        Some(Extensions { inner })
    }

    /// The tools the extensions registered (the first host's of a name wins), to be offered
    /// beside — or instead of — the built-in ones of the same name.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        let mut tools: Vec<Arc<dyn AgentTool>> = Vec::new();
        for (index, host) in self.inner.hosts.iter().enumerate() {
            let registered = lock(&host.registered).tools.clone();
            for definition in registered.into_iter().filter(|d| !is_builtin(d)) {
                let Some(tool) =
                    tool::ExtensionTool::new(Arc::downgrade(&self.inner), index, &definition)
                else {
                    (self.inner.report)(format!(
                        "Extension host {} registered a tool without a name or parameters; it was left out.",
                        host.name
                    ));
                    continue;
                };
                if tools.iter().any(|t| t.name() == tool.name()) {
                    (self.inner.report)(format!(
                        "The tool `{}` is registered by two extensions; the first one loaded is used.",
                        tool.name()
                    ));
                    continue;
                }
                tools.push(Arc::new(tool));
            }
        }
        tools
    }

    /// Built-in tools an extension registered again only to draw them (Tandem keeps its own):
    /// registering makes them active, as in pi.
    pub fn builtins_to_activate(&self) -> Vec<String> {
        self.inner
            .hosts
            .iter()
            .flat_map(|h| {
                lock(&h.registered)
                    .tools
                    .iter()
                    .filter(|d| {
                        is_builtin(d) && d.get("defaultActive") != Some(&Value::Bool(false))
                    })
                    .filter_map(|d| d.get("name").and_then(Value::as_str).map(str::to_string))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The hooks a session asks.
    pub fn session_hooks(&self) -> Arc<dyn SessionExtensions> {
        Arc::new(self.clone())
    }

    /// The names of the flags the extensions registered (`pi.registerFlag`).
    pub fn flags(&self) -> Vec<String> {
        self.inner
            .hosts
            .iter()
            .flat_map(|h| {
                lock(&h.registered)
                    .flags
                    .iter()
                    .filter_map(|f| f.get("name").and_then(Value::as_str).map(str::to_string))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The loaded extensions' files, for the user's view of what runs.
    pub fn loaded(&self) -> Vec<PathBuf> {
        self.inner
            .hosts
            .iter()
            .flat_map(|h| h.extensions.iter().map(|f| f.path.clone()))
            .collect()
    }

    /// Connects the extensions to the session they serve (the mirror, `session/*` requests),
    /// sends `session_start`, and forwards the session's events to the handlers that listen.
    pub async fn bind(&self, session: &AgentSession) {
        self.bind_as(session, "startup", None).await;
    }

    /// [`Extensions::bind`] for a session that replaced another: `session_start` with pi's
    /// `reason` (`"new"`, `"resume"`, `"fork"`) and the session it replaced.
    pub async fn bind_as(
        &self,
        session: &AgentSession,
        reason: &str,
        previous_session_file: Option<&str>,
    ) {
        *lock(&self.inner.session) = Some(session.handle());
        let mut events = session.subscribe();
        let mut start = json!({"type": "session_start", "reason": reason});
        if let Some(previous) = previous_session_file {
            start["previousSessionFile"] = json!(previous);
        }
        self.inner.emit_all("session_start", start).await;
        let inner = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let Some(inner) = inner.upgrade() else { break };
                if let Some((name, value)) = observed(&event) {
                    inner.emit_all(name, value).await;
                }
            }
        });
    }

    /// Sends `session_shutdown`, then stops every host.
    pub async fn shutdown(&self) {
        self.shutdown_for("quit", None).await;
    }

    /// [`Extensions::shutdown`] with pi's `reason` (`"quit"`, `"new"`, `"resume"`, `"fork"`,
    /// `"reload"`) and the session that comes next, when known. Afterwards no host starts
    /// again (an event still on its way finds them off), so a second call does nothing.
    pub async fn shutdown_for(&self, reason: &str, target_session_file: Option<&str>) {
        self.announce_shutdown(reason, target_session_file).await;
        self.stop().await;
    }

    /// The first half of [`Extensions::shutdown_for`]: `session_shutdown` only, the hosts left
    /// running — for a front door that replaces its session and stops these hosts only once
    /// the new session stands ([`Extensions::stop`]), so that a replacement that fails leaves
    /// the old session with working extensions.
    pub async fn announce_shutdown(&self, reason: &str, target_session_file: Option<&str>) {
        let mut event = json!({"type": "session_shutdown", "reason": reason});
        if let Some(target) = target_session_file {
            event["targetSessionFile"] = json!(target);
        }
        self.inner.emit_all("session_shutdown", event).await;
    }

    /// Stops every host without a `session_shutdown` (sent already, see
    /// [`Extensions::announce_shutdown`]); none starts again.
    pub async fn stop(&self) {
        for host in &self.inner.hosts {
            host.off.store(true, Ordering::Release);
            let connection = host.connection.lock().await.take();
            if let Some(connection) = connection {
                connection.shutdown().await;
            }
        }
    }

    /// Runs `/name args` when an extension registered command `name` (`None` otherwise):
    /// what the handler threw, if it did, with the command's name.
    pub async fn run_command(&self, text: &str) -> Option<Result<(), CommandFailure>> {
        let rest = text.strip_prefix('/')?;
        let (name, args) = match rest.split_once(char::is_whitespace) {
            Some((name, args)) => (name, args.trim()),
            None => (rest.trim_end(), ""),
        };
        let (index, command) = self.inner.find_command(name)?;
        let connection = self.inner.connect(index).await?;
        self.inner.sync_state(&self.inner.hosts[index], &connection);
        let ran = connection
            .request("command/run", json!({"name": command, "args": args}), None)
            .await;
        Some(ran.map(|_| ()).map_err(|e| CommandFailure {
            name: name.to_string(),
            error: e.to_string(),
        }))
    }

    /// The commands the extensions registered, in load order, with the file and scope of the
    /// extension behind each (for listings that show where a command comes from, such as
    /// RPC's `get_commands`). Names are as [`Extensions::commands`] gives them.
    pub fn command_sources(&self) -> Vec<CommandSource> {
        let typed = self.commands();
        let mut out = Vec::with_capacity(typed.len());
        let mut rows = Vec::new();
        for host in &self.inner.hosts {
            let commands = lock(&host.registered).commands.clone();
            for command in &commands {
                if command.get("name").and_then(Value::as_str).is_none() {
                    continue;
                }
                let extension = command
                    .get("extension")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let path = host.path_of(extension);
                let scope = host
                    .extensions
                    .iter()
                    .find(|f| f.path.display().to_string() == path)
                    .or(host.extensions.first())
                    .map_or(Scope::Cli, |f| f.scope);
                let description = command
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                rows.push((description, path, scope));
            }
        }
        for ((name, _), (description, path, scope)) in typed.into_iter().zip(rows) {
            out.push(CommandSource {
                name,
                description,
                path,
                scope,
            });
        }
        out
    }

    /// Whether `text` (`/name args`) names a command an extension registered.
    pub fn is_command(&self, text: &str) -> bool {
        text.strip_prefix('/')
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|name| self.inner.find_command(name).is_some())
    }

    /// Asks a gate event (`session_before_switch`, `session_before_fork`) whether the
    /// operation may go on: `true` when a handler answered `{cancel: true}` (the first one
    /// that cancels wins; later hosts are not asked). A host that fails does not cancel.
    pub async fn cancels(&self, name: &str, event: Value) -> bool {
        for index in 0..self.inner.hosts.len() {
            if let Answer::Result(Some(result)) = self.inner.ask(index, name, event.clone()).await {
                if result.get("cancel").and_then(Value::as_bool) == Some(true) {
                    return true;
                }
            }
        }
        false
    }

    /// The commands the extensions registered, in load order: the name to type (`name:1`,
    /// `name:2` when several extensions register one name) and its description.
    pub fn commands(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = Vec::new();
        for host in &self.inner.hosts {
            for command in &lock(&host.registered).commands {
                if let Some(name) = command.get("name").and_then(Value::as_str) {
                    let description = command
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    all.push((name.to_string(), description.to_string()));
                }
            }
        }
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::with_capacity(all.len());
        for (name, description) in &all {
            let shared = all.iter().filter(|(n, _)| n == name).count() > 1;
            let typed = if shared {
                let nth = seen.entry(name.clone()).or_insert(0);
                *nth += 1;
                format!("{name}:{nth}")
            } else {
                name.clone()
            };
            out.push((typed, description.clone()));
        }
        out
    }
}

impl Host {
    fn new(
        name: String,
        program: PathBuf,
        args: Vec<String>,
        output_fd3: bool,
        extensions: Vec<Found>,
    ) -> Host {
        Host {
            name,
            program,
            args,
            output_fd3,
            extensions,
            connection: tokio::sync::Mutex::new(None),
            registered: Mutex::new(Registered::default()),
            starts: Mutex::new(Vec::new()),
            off: AtomicBool::new(false),
            mirror: Mutex::new((Map::new(), 0)),
        }
    }

    fn listens(&self, event: &str) -> bool {
        !self.off.load(Ordering::Acquire) && lock(&self.registered).listens(event)
    }

    fn extension_names(&self) -> String {
        names(&self.extensions)
    }

    /// The file of this host's extension `name` (the host's only file, or its name when
    /// unknown).
    fn path_of(&self, name: &str) -> String {
        let registered = lock(&self.registered);
        if let Some((_, path)) = registered.paths.iter().find(|(n, _)| n == name) {
            return path.clone();
        }
        match self.extensions.as_slice() {
            [only] => only.path.display().to_string(),
            _ => name.to_string(),
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Ok(slot) = self.connection.try_lock() {
            if let Some(connection) = slot.as_ref() {
                connection.kill("its session ended");
            }
        }
    }
}

impl Inner {
    /// The host's connection, started (again) when it is not running; `None` when it cannot
    /// be, or its extensions are off.
    async fn connect(self: &Arc<Self>, index: usize) -> Option<Arc<Connection>> {
        let host = &self.hosts[index];
        if host.off.load(Ordering::Acquire) {
            return None;
        }
        let mut slot = host.connection.lock().await;
        if let Some(connection) = slot.as_ref().filter(|c| c.is_alive()) {
            return Some(connection.clone());
        }
        let restart = slot.is_some();
        {
            let mut starts = lock(&host.starts);
            starts.retain(|t| t.elapsed() < RESTART_WINDOW);
            if starts.len() >= MAX_STARTS {
                host.off.store(true, Ordering::Release);
                (self.report)(format!(
                    "Extension host {} stopped {MAX_STARTS} times within a minute; its \
                     extensions ({}) are off for the rest of this session.",
                    host.name,
                    host.extension_names()
                ));
                *slot = None;
                return None;
            }
            starts.push(Instant::now());
        }
        let calls: Arc<dyn HostCalls> = Arc::new(Calls {
            inner: Arc::downgrade(self),
            host: index,
        });
        let launch = Launch {
            name: host.name.clone(),
            program: &host.program,
            args: host.args.clone(),
            cwd: &self.cwd,
            output_fd3: host.output_fd3,
        };
        let started = Instant::now();
        let connection = match Connection::start(launch, calls) {
            Ok(connection) => connection,
            Err(why) => {
                (self.report)(format!(
                    "{why} Its extensions ({}) are off.",
                    host.extension_names()
                ));
                host.off.store(true, Ordering::Release);
                return None;
            }
        };
        *lock(&host.mirror) = (Map::new(), 0);
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "tandemVersion": env!("CARGO_PKG_VERSION"),
            "extensions": host.extensions.iter().map(|f| json!({
                "path": f.path.display().to_string(),
                "scope": f.scope.as_str(),
            })).collect::<Vec<_>>(),
            "cwd": self.cwd.display().to_string(),
            "agentDir": self.agent_dir.display().to_string(),
            "mode": self.mode,
            "hasUI": self.ui.has_ui(),
            "isProjectTrusted": self.trusted,
            "flags": self.flags,
        });
        let answer = connection
            .request("initialize", params, Some(INITIALIZE_TIMEOUT))
            .await;
        let result = match answer {
            Ok(Some(result)) => result,
            Ok(None) => {
                connection.kill("it did not finish loading its extensions in time");
                (self.report)(format!(
                    "Extension host {} did not load its extensions within {} s; they are off ({}).",
                    host.name,
                    INITIALIZE_TIMEOUT.as_secs(),
                    host.extension_names()
                ));
                host.off.store(true, Ordering::Release);
                return None;
            }
            Err(e) => {
                (self.report)(format!(
                    "Extensions {} were not loaded: {e}",
                    host.extension_names()
                ));
                host.off.store(true, Ordering::Release);
                connection.kill("initialize failed");
                return None;
            }
        };
        let version = result.get("protocolVersion").and_then(Value::as_u64);
        if version != Some(PROTOCOL_VERSION) {
            (self.report)(format!(
                "Extension host {} speaks protocol version {}, this Tandem speaks {PROTOCOL_VERSION}; its extensions are off.",
                host.name,
                version.map_or("(none)".to_string(), |v| v.to_string())
            ));
            host.off.store(true, Ordering::Release);
            connection.kill("protocol version mismatch");
            return None;
        }
        lock(&host.registered).update(&result);
        tracing::info!(
            target: "tandem::extensions",
            host = %host.name,
            "extension host ready in {} ms ({} extensions)",
            started.elapsed().as_millis(),
            host.extensions.len()
        );
        if !restart {
            for failed in result
                .get("extensions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(error) = failed.get("error").and_then(Value::as_str) {
                    let path = failed.get("path").and_then(Value::as_str).unwrap_or("?");
                    (self.report)(format!("Extension {path} failed to load: {error}"));
                }
            }
            for note in result
                .get("notes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(note) = note.as_str() {
                    if lock(&self.noted).insert(note.to_string()) {
                        (self.report)(format!("Extension note: {note}"));
                    }
                }
            }
        }
        *slot = Some(connection.clone());
        drop(slot);
        if restart && lock(&self.session).is_some() {
            self.sync_state(host, &connection);
            let start = json!({"type": "session_start", "reason": "reload"});
            let _ = connection
                .request(
                    "event",
                    json!({"name": "session_start", "event": start}),
                    self.event_timeout,
                )
                .await;
        }
        Some(connection)
    }

    /// Sends `host` what changed in the session since its last `state`.
    fn sync_state(&self, host: &Host, connection: &Connection) {
        let handle = lock(&self.session).clone();
        let mut state = Map::new();
        state.insert("cwd".into(), json!(self.cwd.display().to_string()));
        state.insert("mode".into(), json!(self.mode));
        state.insert("hasUI".into(), json!(self.ui.has_ui()));
        state.insert("isProjectTrusted".into(), json!(self.trusted));
        let mut entries_update = None;
        if let Some(handle) = &handle {
            if let Some(snapshot) = handle.snapshot() {
                let model = &snapshot.model;
                state.insert(
                    "model".into(),
                    json!({
                        "provider": model.provider, "id": model.id, "name": model.name,
                        "api": model.api.to_string(), "reasoning": model.reasoning,
                        "contextWindow": model.context_window, "maxTokens": model.max_tokens,
                    }),
                );
                state.insert("thinkingLevel".into(), json!(snapshot.thinking_level));
                state.insert("activeTools".into(), json!(snapshot.active_tools));
                state.insert(
                    "allTools".into(),
                    Value::Array(
                        snapshot
                            .all_tools
                            .iter()
                            .map(|(name, description, parameters)| {
                                json!({"name": name, "description": description, "parameters": parameters})
                            })
                            .collect(),
                    ),
                );
                state.insert(
                    "session".into(),
                    json!({
                        "id": snapshot.session_id, "file": snapshot.session_file,
                        "name": snapshot.session_name, "leafId": snapshot.leaf_id,
                    }),
                );
                state.insert("systemPrompt".into(), json!(snapshot.system_prompt));
                state.insert("isIdle".into(), json!(snapshot.is_idle));
                state.insert(
                    "hasPendingMessages".into(),
                    json!(snapshot.has_pending_messages),
                );
            }
            entries_update = Some(handle.entry_count());
        }
        let mut mirror = lock(&host.mirror);
        let mut changed = Map::new();
        for (key, value) in state {
            if mirror.0.get(&key) != Some(&value) {
                mirror.0.insert(key.clone(), value.clone());
                changed.insert(key, value);
            }
        }
        if let (Some(handle), Some(count)) = (&handle, entries_update) {
            if mirror.1 == 0 {
                if let Some((header, entries)) = handle.branch() {
                    changed.insert("entries".into(), json!(entries));
                    if let Some(session) = changed.get_mut("session").and_then(Value::as_object_mut)
                    {
                        session.insert("header".into(), header);
                    }
                }
            } else if count > mirror.1 {
                changed.insert(
                    "appendedEntries".into(),
                    json!(handle.entries_from(mirror.1)),
                );
            }
            mirror.1 = count.max(1);
        }
        if !changed.is_empty() {
            connection.notify("state", Value::Object(changed));
        }
    }

    /// Asks host `index` about event `name` (when it listens).
    async fn ask(self: &Arc<Self>, index: usize, name: &str, event: Value) -> Answer {
        let host = &self.hosts[index];
        if !host.listens(name) {
            return Answer::Result(None);
        }
        let Some(connection) = self.connect(index).await else {
            return Answer::Failed(format!("extension host {} is off", host.name));
        };
        self.sync_state(host, &connection);
        let limit = match name {
            "session_before_compact" | "session_before_tree" => {
                self.event_timeout.map(|t| t.max(Duration::from_secs(120)))
            }
            _ => self.event_timeout,
        };
        let answer = connection
            .request("event", json!({"name": name, "event": event}), limit)
            .await;
        match answer {
            Ok(Some(answer)) => {
                for error in answer
                    .get("errors")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let extension = error
                        .get("extension")
                        .and_then(Value::as_str)
                        .unwrap_or(&host.name);
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("it failed");
                    let line = format!("Extension \"{extension}\" failed in {name}: {message}");
                    let path = host.path_of(extension);
                    let failure = HandlerFailure {
                        extension_path: &path,
                        event: name,
                        error: message,
                    };
                    if self.ui.handler_failed(&failure) {
                        tracing::warn!(target: "tandem::extensions", "{line}");
                    } else {
                        (self.report)(line);
                    }
                }
                Answer::Result(answer.get("result").filter(|r| !r.is_null()).cloned())
            }
            Ok(None) => {
                let why = format!(
                    "Extension host {} ({}) did not answer {name} within {} ms",
                    host.name,
                    host.extension_names(),
                    limit.map_or(0, |l| l.as_millis())
                );
                (self.report)(why.clone());
                Answer::Failed(why)
            }
            Err(e) => {
                let why = e.to_string();
                (self.report)(format!("{why} (in {name})"));
                Answer::Failed(why)
            }
        }
    }

    /// A notification-only event, to every host that listens, in load order.
    async fn emit_all(self: &Arc<Self>, name: &str, event: Value) {
        for index in 0..self.hosts.len() {
            let _ = self.ask(index, name, event.clone()).await;
        }
    }

    fn handle(&self) -> Result<SessionHandle, (i64, String)> {
        lock(&self.session)
            .clone()
            .ok_or_else(|| (-32001, "the session is not ready yet".to_string()))
    }
}

/// The event an extension sees for a session event, when it has one.
fn observed(event: &AgentSessionEvent) -> Option<(&'static str, Value)> {
    match event {
        AgentSessionEvent::Agent(agent) => {
            let name = agent.kind();
            Some((name, serde_json::to_value(agent.as_ref()).ok()?))
        }
        AgentSessionEvent::Session(session) => match session {
            SessionEvent::AgentSettled { aborted } => Some((
                "agent_settled",
                json!({"type": "agent_settled", "aborted": aborted}),
            )),
            SessionEvent::SessionInfoChanged { name } => Some((
                "session_info_changed",
                json!({"type": "session_info_changed", "name": name}),
            )),
            SessionEvent::ThinkingLevelChanged { level } => Some((
                "thinking_level_select",
                json!({"type": "thinking_level_select", "level": level}),
            )),
            SessionEvent::CompactionEnd {
                reason,
                result: Some(result),
                will_retry,
                ..
            } => Some((
                "session_compact",
                json!({"type": "session_compact", "reason": reason, "willRetry": will_retry,
                       "fromExtension": false, "compactionEntry": result}),
            )),
            _ => None,
        },
    }
}

impl SessionExtensions for Extensions {
    fn command<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Option<Result<(), String>>> {
        Box::pin(async move {
            let failed = self.run_command(text).await?;
            Some(failed.map_err(|f| format!("Extension command /{} failed: {}", f.name, f.error)))
        })
    }

    fn input<'a>(
        &'a self,
        text: String,
        images: Vec<ImageContent>,
        source: InputSource,
        streaming: Option<&'a str>,
    ) -> BoxFuture<'a, InputOutcome> {
        Box::pin(async move {
            let (mut text, mut images) = (text, images);
            for index in 0..self.inner.hosts.len() {
                let event = json!({
                    "type": "input", "text": text, "images": images,
                    "source": source.as_str(), "streamingBehavior": streaming,
                });
                let Answer::Result(Some(result)) = self.inner.ask(index, "input", event).await
                else {
                    continue;
                };
                match result.get("action").and_then(Value::as_str) {
                    Some("handled") => return InputOutcome::Handled,
                    Some("transform") => {
                        if let Some(t) = result.get("text").and_then(Value::as_str) {
                            text = t.to_string();
                        }
                        if let Some(i) = result.get("images") {
                            if let Ok(i) = serde_json::from_value(i.clone()) {
                                images = i;
                            }
                        }
                    }
                    _ => {}
                }
            }
            InputOutcome::Continue { text, images }
        })
    }

    fn before_agent_start<'a>(&'a self, run: RunStart<'a>) -> BoxFuture<'a, BeforeStart> {
        Box::pin(async move {
            let mut system_prompt = run.system_prompt.to_string();
            let mut forced = false;
            let mut messages = Vec::new();
            for index in 0..self.inner.hosts.len() {
                let event = json!({
                    "type": "before_agent_start", "messageType": "user",
                    "prompt": run.prompt, "images": run.images,
                    "systemPrompt": system_prompt, "systemPromptOptions": {},
                });
                let Answer::Result(Some(result)) =
                    self.inner.ask(index, "before_agent_start", event).await
                else {
                    continue;
                };
                if let Some(prompt) = result.get("systemPrompt").and_then(Value::as_str) {
                    system_prompt = prompt.to_string();
                    forced = true;
                }
                let injected = match result.get("messages") {
                    Some(Value::Array(list)) => list.clone(),
                    _ => result.get("message").cloned().into_iter().collect(),
                };
                for message in injected {
                    match extension_message(&message) {
                        Some(m) => messages.push(m),
                        None => (self.inner.report)(format!(
                            "Extension host {} returned a before_agent_start message without \
                             customType or content; it was left out.",
                            self.inner.hosts[index].name
                        )),
                    }
                }
            }
            BeforeStart {
                system_prompt: forced.then_some(system_prompt),
                messages,
            }
        })
    }

    fn tool_call<'a>(
        &'a self,
        call_id: &'a str,
        tool: &'a str,
        input: &'a Value,
    ) -> BoxFuture<'a, Option<BeforeToolCallResult>> {
        Box::pin(async move {
            let mut input = input.clone();
            let mut changed = false;
            for index in 0..self.inner.hosts.len() {
                let event = json!({"type": "tool_call", "toolCallId": call_id, "toolName": tool, "input": input});
                match self.inner.ask(index, "tool_call", event).await {
                    Answer::Result(Some(result)) => {
                        if result.get("block").and_then(Value::as_bool) == Some(true) {
                            return Some(BeforeToolCallResult {
                                block: true,
                                reason: result
                                    .get("reason")
                                    .and_then(Value::as_str)
                                    .map(str::to_string),
                                terminate: result.get("terminate").and_then(Value::as_bool)
                                    == Some(true),
                                args: None,
                            });
                        }
                        if let Some(new) = result.get("input").filter(|v| v.is_object()) {
                            input = new.clone();
                            changed = true;
                        }
                    }
                    Answer::Result(None) => {}
                    // A gate that cannot decide blocks (pi: a throwing tool_call handler blocks).
                    Answer::Failed(why) => {
                        return Some(BeforeToolCallResult {
                            block: true,
                            reason: Some(format!(
                                "Blocked: an extension's tool_call check failed ({why})"
                            )),
                            terminate: false,
                            args: None,
                        })
                    }
                }
            }
            changed.then(|| BeforeToolCallResult {
                args: Some(input),
                ..Default::default()
            })
        })
    }

    fn tool_result<'a>(
        &'a self,
        call: FinishedCall<'a>,
    ) -> BoxFuture<'a, Option<AfterToolCallResult>> {
        Box::pin(async move {
            let mut content = call.result.get("content").cloned().unwrap_or(json!([]));
            let mut details = call.result.get("details").cloned().unwrap_or(Value::Null);
            let mut is_error = call.is_error;
            let mut changed = AfterToolCallResult::default();
            for index in 0..self.inner.hosts.len() {
                let event = json!({
                    "type": "tool_result", "toolCallId": call.call_id, "toolName": call.tool,
                    "input": call.input, "content": content, "details": details, "isError": is_error,
                });
                let Answer::Result(Some(result)) =
                    self.inner.ask(index, "tool_result", event).await
                else {
                    continue;
                };
                if let Some(new) = result.get("content") {
                    match serde_json::from_value::<Vec<UserBlock>>(new.clone()) {
                        Ok(blocks) => {
                            content = new.clone();
                            changed.content = Some(blocks);
                        }
                        Err(e) => (self.inner.report)(format!(
                            "Extension host {} returned tool_result content that is not a list of text and image blocks ({e}); it was ignored.",
                            self.inner.hosts[index].name
                        )),
                    }
                }
                if let Some(new) = result.get("details") {
                    details = new.clone();
                    changed.details = Some(new.clone());
                }
                if let Some(new) = result.get("isError").and_then(Value::as_bool) {
                    is_error = new;
                    changed.is_error = Some(new);
                }
            }
            let untouched = changed.content.is_none()
                && changed.details.is_none()
                && changed.is_error.is_none();
            (!untouched).then_some(changed)
        })
    }

    fn context<'a>(&'a self, messages: Vec<AgentMessage>) -> BoxFuture<'a, Vec<AgentMessage>> {
        Box::pin(async move {
            if !self.inner.hosts.iter().any(|h| h.listens("context")) {
                return messages;
            }
            // Handlers see the conversation without the `system` records, which are put back
            // in front of what they return (pi does the same).
            let (system, mut visible): (Vec<AgentMessage>, Vec<AgentMessage>) =
                messages.into_iter().partition(|m| m.role() == "system");
            for index in 0..self.inner.hosts.len() {
                let event = json!({"type": "context", "messages": visible});
                let Answer::Result(Some(result)) = self.inner.ask(index, "context", event).await
                else {
                    continue;
                };
                let Some(list) = result.get("messages") else {
                    continue;
                };
                match serde_json::from_value::<Vec<AgentMessage>>(list.clone()) {
                    Ok(new) => visible = new,
                    Err(e) => (self.inner.report)(format!(
                        "Extension host {} returned context messages Tandem cannot read ({e}); they were ignored.",
                        self.inner.hosts[index].name
                    )),
                }
            }
            system.into_iter().chain(visible).collect()
        })
    }

    fn user_bash<'a>(
        &'a self,
        command: &'a str,
        exclude_from_context: bool,
    ) -> BoxFuture<'a, Option<Value>> {
        Box::pin(async move {
            let cwd = self.inner.cwd.display().to_string();
            for index in 0..self.inner.hosts.len() {
                let event = json!({"type": "user_bash", "command": command,
                    "excludeFromContext": exclude_from_context, "cwd": cwd});
                match self.inner.ask(index, "user_bash", event).await {
                    Answer::Result(Some(result)) => {
                        if let Some(done) = result.get("result").filter(|r| r.is_object()) {
                            return Some(done.clone());
                        }
                    }
                    Answer::Result(None) => {}
                    // As pi: a failing handler blocks the command rather than run it here.
                    Answer::Failed(why) => {
                        return Some(json!({"output": format!("Not run: {why}"), "exitCode": 1,
                            "cancelled": false, "truncated": false}))
                    }
                }
            }
            None
        })
    }

    fn provider_hooks(&self) -> Option<Arc<dyn ProviderHooks>> {
        let listens =
            self.inner.hosts.iter().any(|h| {
                h.listens("before_provider_request") || h.listens("after_provider_response")
            });
        listens.then(|| Arc::new(Provider(Arc::downgrade(&self.inner))) as Arc<dyn ProviderHooks>)
    }
}

impl Inner {
    /// Gives the session the tools host `index` registered since `before` (a tool registered
    /// in `session_start` or by a command), once the session is bound.
    fn add_late_tools(self: &Arc<Self>, index: usize, before: &[Value]) {
        let Some(handle) = lock(&self.session).clone() else {
            return;
        };
        let now = lock(&self.hosts[index].registered).tools.clone();
        let builtins: Vec<String> = now
            .iter()
            .filter(|t| !before.contains(t) && is_builtin(t))
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
            .collect();
        if !builtins.is_empty() {
            let _ = handle.activate(&builtins);
        }
        let added: Vec<Arc<dyn AgentTool>> = now
            .iter()
            .filter(|t| !before.contains(t) && !is_builtin(t))
            .filter_map(|t| tool::ExtensionTool::new(Arc::downgrade(self), index, t))
            .map(|t| Arc::new(t) as Arc<dyn AgentTool>)
            .collect();
        if !added.is_empty() {
            if let Err(e) = handle.add_tools(added) {
                tracing::warn!(target: "tandem::extensions", "late tools not added: {e}");
            }
        }
    }

    /// The host and registered name of command `name` (`review:2` is the second `review`).
    fn find_command(&self, name: &str) -> Option<(usize, String)> {
        let mut all = Vec::new();
        for (index, host) in self.hosts.iter().enumerate() {
            for command in &lock(&host.registered).commands {
                if let Some(n) = command.get("name").and_then(Value::as_str) {
                    all.push((index, n.to_string()));
                }
            }
        }
        let count = |n: &str| all.iter().filter(|(_, c)| c == n).count();
        if count(name) == 1 {
            return all.into_iter().find(|(_, c)| c == name);
        }
        let (base, nth) = name.rsplit_once(':')?;
        let nth: usize = nth.parse().ok()?;
        all.into_iter()
            .filter(|(_, c)| c == base)
            .nth(nth.checked_sub(1)?)
    }
}

/// `before_provider_request` and `after_provider_response`.
struct Provider(Weak<Inner>);

impl ProviderHooks for Provider {
    fn before_request<'a>(&'a self, payload: Value) -> HookFuture<'a, Value> {
        Box::pin(async move {
            let Some(inner) = self.0.upgrade() else {
                return payload;
            };
            let mut payload = payload;
            for index in 0..inner.hosts.len() {
                let event = json!({"type": "before_provider_request", "payload": payload});
                if let Answer::Result(Some(result)) =
                    inner.ask(index, "before_provider_request", event).await
                {
                    payload = result;
                }
            }
            payload
        })
    }

    fn after_response<'a>(
        &'a self,
        status: u16,
        headers: Vec<(String, String)>,
    ) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let Some(inner) = self.0.upgrade() else {
                return;
            };
            let headers: Map<String, Value> = headers
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            inner
                .emit_all(
                    "after_provider_response",
                    json!({"type": "after_provider_response", "status": status, "headers": headers}),
                )
                .await;
        })
    }
}

/// A user message's text (its text blocks joined by newlines) and images.
fn prompt_parts(content: &UserContent) -> (String, Vec<ImageContent>) {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in content.blocks() {
        match block {
            UserBlock::Text(t) => texts.push(t.text),
            UserBlock::Image(i) => images.push(i),
        }
    }
    (texts.join("\n"), images)
}

/// A tool definition that only says an extension registered a built-in tool again.
fn is_builtin(definition: &Value) -> bool {
    definition.get("builtin").and_then(Value::as_bool) == Some(true)
}

/// A `custom` message an extension returned or sent.
fn extension_message(value: &Value) -> Option<ExtensionMessage> {
    let custom_type = value.get("customType")?.as_str()?.to_string();
    let content = match value.get("content") {
        Some(Value::String(text)) => UserContent::Text(text.clone()),
        Some(blocks @ Value::Array(_)) => serde_json::from_value(blocks.clone()).ok()?,
        _ => return None,
    };
    Some(ExtensionMessage {
        custom_type,
        content,
        display: value
            .get("display")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        details: value.get("details").filter(|d| !d.is_null()).cloned(),
        timestamp: tandem_ai::now_millis(),
    })
}

fn delivery(options: &Value) -> Delivery {
    match options.get("deliverAs").and_then(Value::as_str) {
        Some("followUp") => Delivery::FollowUp,
        Some("nextTurn") => Delivery::NextTurn,
        _ => Delivery::Steer,
    }
}

/// What a host asks of Tandem.
struct Calls {
    inner: Weak<Inner>,
    host: usize,
}

impl HostCalls for Calls {
    fn request(
        &self,
        method: String,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, (i64, String)>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let inner = inner
                .upgrade()
                .ok_or((-32001, "the session has ended".to_string()))?;
            let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_string);
            let timeout = params
                .get("timeout")
                .and_then(Value::as_u64)
                .filter(|t| *t > 0)
                .map(Duration::from_millis);
            let bounded = |f: BoxFuture<'static, Value>| async move {
                match timeout {
                    Some(limit) => tokio::time::timeout(limit, f).await.ok(),
                    None => Some(f.await),
                }
            };
            let ui = inner.ui.clone();
            match method.as_str() {
                "ui/select" => {
                    let options: Vec<String> = params
                        .get("options")
                        .and_then(Value::as_array)
                        .map(|o| {
                            o.iter()
                                .filter_map(|v| v.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    let title = text("title").unwrap_or_default();
                    let chosen = bounded(Box::pin(async move {
                        json!(ui.select_within(title, options, timeout).await)
                    }))
                    .await;
                    Ok(chosen.unwrap_or(Value::Null))
                }
                "ui/confirm" => {
                    let (title, message) = (
                        text("title").unwrap_or_default(),
                        text("message").unwrap_or_default(),
                    );
                    let yes = bounded(Box::pin(async move {
                        json!(ui.confirm_within(title, message, timeout).await)
                    }))
                    .await;
                    Ok(yes.unwrap_or(json!(false)))
                }
                "ui/input" => {
                    let (title, placeholder) =
                        (text("title").unwrap_or_default(), text("placeholder"));
                    let typed = bounded(Box::pin(async move {
                        json!(ui.input_within(title, placeholder, timeout).await)
                    }))
                    .await;
                    Ok(typed.unwrap_or(Value::Null))
                }
                "ui/editor" => {
                    let (title, prefill) = (text("title").unwrap_or_default(), text("prefill"));
                    let typed = bounded(Box::pin(
                        async move { json!(ui.editor(title, prefill).await) },
                    ))
                    .await;
                    Ok(typed.unwrap_or(Value::Null))
                }
                "session/appendEntry" => {
                    let custom_type =
                        text("customType").ok_or((-32602, "customType is missing".to_string()))?;
                    let data = params.get("data").filter(|d| !d.is_null()).cloned();
                    let id = inner
                        .handle()?
                        .append_custom(&custom_type, data)
                        .map_err(|e| (-32603, e))?;
                    Ok(json!({"id": id}))
                }
                "session/setName" => {
                    let name = text("name").unwrap_or_default();
                    inner
                        .handle()?
                        .set_name(&name)
                        .await
                        .map_err(|e| (-32603, e))?;
                    Ok(Value::Null)
                }
                "session/setLabel" => {
                    let id = text("entryId").ok_or((-32602, "entryId is missing".to_string()))?;
                    inner
                        .handle()?
                        .set_label(&id, text("label"))
                        .map_err(|e| (-32603, e))?;
                    Ok(Value::Null)
                }
                "session/sendMessage" => {
                    let message = params.get("message").and_then(extension_message).ok_or((
                        -32602,
                        "message needs customType and content (a string or text and image blocks)"
                            .to_string(),
                    ))?;
                    let options = params.get("options").cloned().unwrap_or(Value::Null);
                    let handle = inner.handle()?;
                    let delivery = delivery(&options);
                    // An idle session records it at once (pi: stored without starting a turn).
                    if !handle.is_running() && delivery != Delivery::NextTurn {
                        handle
                            .append_custom_message(message)
                            .map_err(|e| (-32603, e))?;
                    } else {
                        handle
                            .queue_custom(message, delivery)
                            .map_err(|e| (-32603, e))?;
                    }
                    Ok(Value::Null)
                }
                "session/sendUserMessage" => {
                    let content: UserContent = params
                        .get("content")
                        .cloned()
                        .and_then(|c| serde_json::from_value(c).ok())
                        .ok_or((
                            -32602,
                            "content must be a string or text and image blocks".to_string(),
                        ))?;
                    let options = params.get("options").cloned().unwrap_or(Value::Null);
                    let handle = inner.handle()?;
                    // An idle session runs it as a prompt of its own (pi starts a turn).
                    let (text, images) = prompt_parts(&content);
                    if handle.prompt_when_idle(text, images) {
                        return Ok(Value::Null);
                    }
                    let message = tandem_ai::Message::User(tandem_ai::UserMessage {
                        content,
                        timestamp: tandem_ai::now_millis(),
                    });
                    handle
                        .queue(AgentMessage::Llm(message), delivery(&options))
                        .map_err(|e| (-32603, e))?;
                    Ok(Value::Null)
                }
                "agent/setActiveTools" => {
                    let names: Vec<String> = params
                        .get("names")
                        .and_then(Value::as_array)
                        .map(|n| {
                            n.iter()
                                .filter_map(|v| v.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    let active = inner
                        .handle()?
                        .set_active_tools(&names)
                        .map_err(|e| (-32603, e))?;
                    Ok(json!(active))
                }
                "agent/abort" => {
                    inner.handle()?.abort();
                    Ok(Value::Null)
                }
                "agent/waitForIdle" => {
                    inner.handle()?.wait_for_idle().await;
                    Ok(Value::Null)
                }
                other => Err((
                    -32001,
                    format!(
                        "`{other}` is not available to extensions in Tandem's {} mode yet",
                        inner.mode
                    ),
                )),
            }
        })
    }

    fn notify(&self, method: &str, params: Value) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        let text = |key: &str| {
            params
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match method {
            "ui/notify" => inner
                .ui
                .notify(&text("message"), Level::parse(&text("level"))),
            "ui/setStatus" => {
                let value = params.get("text").and_then(Value::as_str);
                inner.ui.set_status(&text("key"), value);
            }
            "ui/setWidget" => {
                let lines = params.get("lines").and_then(Value::as_array).map(|l| {
                    l.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                });
                let placement = params.get("placement").and_then(Value::as_str);
                inner.ui.set_widget_placed(&text("key"), lines, placement);
            }
            "ui/setTitle" => inner.ui.set_title(&text("title")),
            "ui/setEditorText" => inner.ui.set_editor_text(&text("text")),
            "tool/update" => {
                let id = text("toolCallId");
                let updates = lock(&inner.updates).get(&id).cloned();
                if let (Some(updates), Some(partial)) = (updates, params.get("partialResult")) {
                    if let Some(output) = tool::output(partial) {
                        tokio::spawn(async move { updates.send(output).await });
                    }
                }
            }
            "registered" => {
                let before = lock(&inner.hosts[self.host].registered).tools.clone();
                lock(&inner.hosts[self.host].registered).update(&params);
                inner.add_late_tools(self.host, &before);
                for note in params
                    .get("notes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(note) = note.as_str() {
                        if lock(&inner.noted).insert(note.to_string()) {
                            (inner.report)(format!("Extension note: {note}"));
                        }
                    }
                }
            }
            "log" => {
                tracing::info!(target: "tandem::extensions", host = %inner.hosts[self.host].name, "{}", text("message"));
            }
            _ => {}
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("extension")
        .to_string()
}

fn names(found: &[Found]) -> String {
    found
        .iter()
        .map(|f| f.path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
