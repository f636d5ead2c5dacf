//! One running MCP server: for stdio, its process (own process group, stderr forwarded, exit
//! watched) and the rmcp client session over its stdin/stdout; for HTTP, the session over
//! rmcp's streamable-HTTP transport ([`super::http`]). Then `tools/call` with cancellation and
//! the server's per-request timeout, and shutdown.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientRequest, Implementation,
    InitializeRequestParams, JsonObject, ProtocolVersion, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{Peer, RoleClient};
use tandem_ai::process_group::{self, Signal};
use tandem_ai::registry::config_value::{self, DEFAULT_COMMAND_TIMEOUT};
use tandem_ai::CancellationToken;
use tokio::process::{ChildStderr, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::http::HttpClient;
use super::{McpServerConfig, REQUEST_TIMEOUT};
use crate::child::{reap, StderrTail};
use tandem_coding::settings::McpTransport;

/// How long shutdown waits for a server to exit after its stdin is closed, then after SIGTERM.
const POLITE_WAIT: Duration = Duration::from_secs(3);
/// How long an error message waits for a dying server's exit status and last stderr lines.
const DEATH_WAIT: Duration = Duration::from_secs(5);
/// How long sending `notifications/cancelled` may take.
const CANCEL_SEND_WAIT: Duration = Duration::from_secs(2);
/// Stderr lines kept for error messages.
const TAIL_LINES: usize = 8;
/// Longest stderr excerpt in a message, in characters.
const MAX_EXCERPT: usize = 1000;

type Session = RunningService<RoleClient, InitializeRequestParams>;

/// A server's process: killed (with its process group) when dropped unless it already exited.
struct Process {
    pid: Option<u32>,
    /// `Some(description)` once the process exited and was reaped ("exit status 3").
    exit: watch::Receiver<Option<String>>,
    /// Owns the `Child` (created with `kill_on_drop`); aborting it kills the process.
    reaper: JoinHandle<()>,
    stderr: Arc<StderrTail>,
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Process {
    /// Kills the process group at once (unless the server already exited) and drops the
    /// `Child`. Needs no runtime.
    fn kill(&self) {
        if self.exit.borrow().is_none() {
            if let Some(pid) = self.pid {
                signal_group(pid, Signal::Kill);
            }
        }
        self.reaper.abort();
    }

    fn exited(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// Waits up to `wait` for the process to exit; its exit description if it did.
    async fn wait_exit(&self, wait: Duration) -> Option<String> {
        let mut exit = self.exit.clone();
        let waited = tokio::time::timeout(wait, exit.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(status)) => status.clone(),
            _ => self.exited(),
        }
    }
}

/// A connected MCP server.
pub(super) struct Connection {
    name: String,
    peer: Peer<RoleClient>,
    session: tokio::sync::Mutex<Option<Session>>,
    closing: AtomicBool,
    /// The server's process; `None` for an HTTP server.
    process: Option<Process>,
    /// An HTTP server's client, for the last HTTP failure in plain words.
    http: Option<HttpClient>,
    /// How long one request may take.
    request_timeout: Duration,
    /// Values its messages must never show (see `Endpoint::secrets`).
    secrets: Vec<String>,
}

/// A server's configuration with `~/`, `${VAR}` and `!command` resolved.
enum Endpoint {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
    },
    Http {
        url: String,
        headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    },
}

impl Endpoint {
    /// The values that must never be shown: an HTTP server's header values (tokens, `${ENV}`
    /// expanded), a stdio server's environment values. A server may echo them back in an
    /// error body or on stderr.
    fn secrets(&self) -> Vec<String> {
        match self {
            Endpoint::Http { headers, .. } => headers
                .values()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| {
                    // `Bearer <token>`: the token alone is what a body echoes most often.
                    let token = v.split_once(' ').map(|(_, t)| t.trim().to_string());
                    std::iter::once(v.to_string()).chain(token)
                })
                .collect(),
            // Environment values are often tokens too, but also plain settings: a value is
            // kept secret when it has no whitespace (tokens have none) or its name says so.
            Endpoint::Stdio { env, .. } => env
                .iter()
                .filter(|(name, value)| {
                    let name = name.to_ascii_uppercase();
                    !value.contains(char::is_whitespace)
                        || ["KEY", "TOKEN", "SECRET", "PASS", "AUTH", "CRED"]
                            .iter()
                            .any(|word| name.contains(word))
                })
                .map(|(_, value)| value.clone())
                .collect(),
        }
    }
}

/// `text` with `secrets` replaced by `***` (see `tandem_ai::http::redact`); the server's name
/// itself is kept.
fn redact(text: &str, secrets: &[String], name: &str) -> String {
    if secrets.is_empty() {
        return text.to_string();
    }
    tandem_ai::http::redact(text, secrets, name)
}

/// `~` or a leading `~/` names the home directory (as pi does for `command`, `args`, `cwd`).
fn expand_home(value: &str) -> String {
    let home = || std::env::var("HOME").ok().filter(|h| !h.is_empty());
    if value == "~" {
        return home().unwrap_or_else(|| value.to_string());
    }
    match (value.strip_prefix("~/"), home()) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest).display().to_string(),
        _ => value.to_string(),
    }
}

/// Resolves `config` against the session's directory. Blocking (a `!command` may run).
fn resolve(config: &McpServerConfig, session_cwd: &Path) -> Result<Endpoint, String> {
    let name = &config.name;
    let value = |raw: &str, what: &str| -> Result<String, String> {
        if !config.templates {
            return Ok(raw.to_string());
        }
        config_value::resolve_template(raw, &config_value::process_env, DEFAULT_COMMAND_TIMEOUT)
            .map_err(|e| {
                format!("MCP server `{name}` was not started: {what} could not be resolved: {e}.")
            })
    };
    match &config.server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let env = env
                .iter()
                .map(|(key, raw)| Ok((key.clone(), value(raw, &format!("env `{key}`"))?)))
                .collect::<Result<_, String>>()?;
            let cwd = match cwd {
                Some(dir) => session_cwd.join(expand_home(dir)),
                None => session_cwd.to_path_buf(),
            };
            Ok(Endpoint::Stdio {
                command: expand_home(command),
                args: args.iter().map(|a| expand_home(a)).collect(),
                env,
                cwd,
            })
        }
        McpTransport::Http { url, headers } => {
            let mut resolved = HashMap::new();
            for (key, raw) in headers {
                let text = value(raw, &format!("header `{key}`"))?;
                let header = reqwest::header::HeaderName::from_bytes(key.as_bytes()).map_err(|_| {
                    format!("MCP server `{name}` was not started: `{key}` is not a valid HTTP header name.")
                })?;
                let text = reqwest::header::HeaderValue::from_str(&text).map_err(|_| {
                    format!(
                        "MCP server `{name}` was not started: the value of header `{key}` is not \
                         a valid HTTP header value (line breaks or control characters)."
                    )
                })?;
                resolved.insert(header, text);
            }
            Ok(Endpoint::Http {
                url: url.clone(),
                headers: resolved,
            })
        }
    }
}

impl Connection {
    /// Starts `config`'s server in `session_cwd` (or its own cwd), initializes the MCP session
    /// and lists its tools, all within `timeout`. `Err` is the warning to show.
    pub(super) async fn start(
        config: &McpServerConfig,
        session_cwd: &Path,
        timeout: Duration,
    ) -> Result<(Connection, Vec<Tool>), String> {
        let name = &config.name;
        let configured = config.server.timeout.map(Duration::from_secs_f64);
        let timeout = configured.unwrap_or(timeout);
        let request_timeout = configured.unwrap_or(REQUEST_TIMEOUT);
        let endpoint = {
            let config = config.clone();
            let session_cwd = session_cwd.to_path_buf();
            tokio::task::spawn_blocking(move || resolve(&config, &session_cwd))
                .await
                .map_err(|e| format!("MCP server `{name}` was not started: {e}."))??
        };
        let secrets = endpoint.secrets();
        Connection::start_endpoint(name, endpoint, timeout, request_timeout, secrets.clone())
            .await
            .map_err(|e| redact(&e, &secrets, name))
    }

    async fn start_endpoint(
        name: &String,
        endpoint: Endpoint,
        timeout: Duration,
        request_timeout: Duration,
        secrets: Vec<String>,
    ) -> Result<(Connection, Vec<Tool>), String> {
        let (command, args, env, cwd) = match endpoint {
            Endpoint::Http { url, headers } => {
                return Connection::start_http(
                    name,
                    url,
                    headers,
                    timeout,
                    request_timeout,
                    secrets,
                )
                .await
            }
            Endpoint::Stdio {
                command,
                args,
                env,
                cwd,
            } => (command, args, env, cwd),
        };
        if !cwd.is_dir() {
            return Err(format!(
                "MCP server `{name}` was not started: its working directory {} does not exist \
                 (or is not a directory). Fix the server's \"cwd\".",
                cwd.display()
            ));
        }
        let (mut child, stderr) = spawn(name, &command, &args, &env, &cwd)?;
        let pid = child.id();
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => (stdin, stdout),
            _ => {
                return Err(format!(
                    "MCP server `{name}` was not started: its stdin/stdout pipes could not be \
                     opened."
                ))
            }
        };
        // Each line to our stderr, prefixed with the server's name (never stdout: the protocol
        // channel; a closed stderr is no reason to stop).
        let prefix = format!("[mcp {name}]");
        let (shown, server) = (secrets.clone(), name.clone());
        let tail = StderrTail::read(stderr, TAIL_LINES, MAX_EXCERPT, move |text| {
            crate::eprintln_safe!("{prefix} {}", redact(text, &shown, &server));
        });
        let (exit_rx, reaper) = reap(child);
        let process = Process {
            pid,
            exit: exit_rx,
            reaper,
            stderr: tail,
        };

        let handshake = handshake(rmcp::serve_client(client_info(), (stdout, stdin)));
        let outcome = tokio::time::timeout(timeout, handshake).await;
        let (session, tools) = match outcome {
            Ok(Ok(done)) => done,
            Ok(Err((step, error))) => {
                return Err(startup_failure(name, &process, step, &error).await);
            }
            Err(_) => {
                let line = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                return Err(format!(
                    "MCP server `{name}` was not started: it did not complete `initialize` and \
                     `tools/list` within {} s, so it was stopped. Check that `{line}` starts an \
                     MCP server that speaks over stdio.",
                    timeout.as_secs_f32(),
                ));
            }
        };
        let connection = Connection {
            name: name.clone(),
            peer: session.peer().clone(),
            session: tokio::sync::Mutex::new(Some(session)),
            closing: AtomicBool::new(false),
            process: Some(process),
            http: None,
            request_timeout,
            secrets,
        };
        Ok((connection, tools))
    }

    /// Connects to a streamable-HTTP server: `initialize` and `tools/list` within `timeout`.
    async fn start_http(
        name: &str,
        url: String,
        headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
        timeout: Duration,
        request_timeout: Duration,
        secrets: Vec<String>,
    ) -> Result<(Connection, Vec<Tool>), String> {
        let client =
            HttpClient::new().map_err(|e| format!("MCP server `{name}` was not started: {e}."))?;
        let http = client.clone();
        let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
        transport_config.custom_headers = headers;
        // A dropped stream is not retried forever: the next call reports the problem.
        let mut retry = rmcp::transport::common::client_side_sse::FixedInterval::default();
        retry.max_times = Some(2);
        retry.duration = Duration::from_millis(500);
        transport_config.retry_config = Arc::new(retry);
        let transport = StreamableHttpClientTransport::with_client(client, transport_config);
        let handshake = handshake(rmcp::serve_client(client_info(), transport));
        let (session, tools) = match tokio::time::timeout(timeout, handshake).await {
            Ok(Ok(done)) => done,
            Ok(Err((step, error))) => {
                let error = http.take_error().unwrap_or(error);
                return Err(format!(
                    "MCP server `{name}` was not connected: `{step}` to {url} failed: {error}."
                ));
            }
            Err(_) => {
                return Err(format!(
                    "MCP server `{name}` was not connected: {url} did not complete `initialize` \
                     and `tools/list` within {} s.",
                    timeout.as_secs_f32()
                ))
            }
        };
        let connection = Connection {
            name: name.to_string(),
            peer: session.peer().clone(),
            session: tokio::sync::Mutex::new(Some(session)),
            closing: AtomicBool::new(false),
            process: None,
            http: Some(http),
            request_timeout,
            secrets,
        };
        Ok((connection, tools))
    }

    /// The process id, while known.
    #[cfg(test)]
    pub(super) fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(|p| p.pid)
    }

    /// The last stderr lines kept.
    #[cfg(test)]
    pub(super) fn stderr_lines(&self) -> Vec<String> {
        self.process
            .as_ref()
            .map(|p| p.stderr.lines())
            .unwrap_or_default()
    }

    /// Calls `tool` with `arguments`. When `cancel` fires, stops waiting at once and tells the
    /// server (`notifications/cancelled`). `Err` is the message for the model.
    pub(super) async fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, String> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let what = Asked::Call(tool);
        match self.request(what, request, cancel).await? {
            ServerResult::CallToolResult(result) => Ok(result),
            // A result with no fields at all parses as an empty result.
            ServerResult::EmptyResult(_) => Ok(CallToolResult::default()),
            other => Err(self.unexpected(what, "a tool result", &other)),
        }
    }

    /// Sends `request` and waits for its answer, within the server's timeout counted from the
    /// last progress report; when `cancel` fires, stops waiting at once and tells the server
    /// (`notifications/cancelled`). `Err` is the message for the model.
    pub(super) async fn request(
        &self,
        what: Asked<'_>,
        request: ClientRequest,
        cancel: &CancellationToken,
    ) -> Result<ServerResult, String> {
        self.send(what, request, cancel)
            .await
            .map_err(|e| redact(&e, &self.secrets, &self.name))
    }

    async fn send(
        &self,
        what: Asked<'_>,
        request: ClientRequest,
        cancel: &CancellationToken,
    ) -> Result<ServerResult, String> {
        let name = &self.name;
        if let Some(problem) = self.unavailable() {
            return Err(problem);
        }
        // Checked first, and the request is then sent without racing the cancellation: a
        // request queued while the race was lost would run on the server unseen.
        if cancel.is_cancelled() {
            return Err(aborted(name, what));
        }
        // The server's timeout runs from the last sign of life: a progress notification for
        // this request starts it again (pi 1.6's rule), so a long job that reports progress is
        // not cut off; one that goes silent is.
        let options =
            PeerRequestOptions::with_timeout(self.request_timeout).reset_timeout_on_progress();
        let sent = self.peer.send_cancellable_request(request, options).await;
        let handle = match sent {
            Ok(handle) => handle,
            Err(error) => return Err(self.failure(what, error).await),
        };
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        let response = tokio::select! {
            biased;
            response = handle.await_response() => response,
            _ = cancel.cancelled() => {
                let reason = "The user aborted the call.".to_string();
                let notice = CancelledNotification::new(CancelledNotificationParam::new(
                    Some(id),
                    Some(reason),
                ));
                let _ = tokio::time::timeout(
                    CANCEL_SEND_WAIT,
                    peer.send_notification(notice.into()),
                )
                .await;
                return Err(aborted(name, what));
            }
        };
        match response {
            Ok(result) => Ok(result),
            // rmcp has told the server (`notifications/cancelled`).
            Err(ServiceError::Timeout { .. }) => Err(format!(
                "MCP server `{name}` did not answer {what} within {} s of its last progress \
                 report (its \"timeout\"; 60 s when not set); it was cancelled.",
                self.request_timeout.as_secs_f32()
            )),
            Err(error) => Err(self.failure(what, error).await),
        }
    }

    /// The message for an answer of the wrong kind.
    pub(super) fn unexpected(&self, what: Asked<'_>, expected: &str, got: &ServerResult) -> String {
        format!(
            "MCP server `{}` answered {what} with something other than {expected} ({}); Tandem \
             cannot use it.",
            self.name,
            result_kind(got)
        )
    }

    /// Whether the server offers resources (`resources` in its `initialize` capabilities).
    pub(super) fn offers_resources(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some())
    }

    /// Whether the server is gone without being shut down: its process exited, or its
    /// connection closed. The next call starts it again (see [`super::server`]).
    pub(super) fn is_dead(&self) -> bool {
        !self.closing.load(Ordering::SeqCst)
            && (self.process.as_ref().and_then(Process::exited).is_some()
                || self.peer.is_transport_closed())
    }

    /// How the server went, when its process exited.
    pub(super) fn death(&self) -> Option<String> {
        self.process.as_ref().and_then(Process::exited)
    }

    /// Why no call can be made now, if so.
    fn unavailable(&self) -> Option<String> {
        let name = &self.name;
        if self.closing.load(Ordering::SeqCst) {
            return Some(format!(
                "MCP server `{name}` was shut down with its session."
            ));
        }
        if let Some(exit) = self.process.as_ref().and_then(Process::exited) {
            return Some(format!(
                "MCP server `{name}` is not running: it exited ({exit})."
            ));
        }
        None
    }

    /// The message for a request that failed with `error`.
    async fn failure(&self, what: Asked<'_>, error: ServiceError) -> String {
        let name = &self.name;
        match error {
            ServiceError::McpError(error) => format!(
                "MCP server `{name}` rejected {what}: {} (error {}).",
                error.message, error.code.0
            ),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                if self.closing.load(Ordering::SeqCst) {
                    return format!("MCP server `{name}` was shut down during {what}.");
                }
                let Some(process) = &self.process else {
                    let why = self.http.as_ref().and_then(HttpClient::take_error);
                    return format!(
                        "MCP server `{name}` could not be reached during {what}: {}.",
                        why.as_deref()
                            .unwrap_or("its HTTP connection failed or was closed")
                    );
                };
                match process.wait_exit(DEATH_WAIT).await {
                    Some(exit) => {
                        let stderr = process.stderr.excerpt(DEATH_WAIT).await;
                        format!(
                            "MCP server `{name}` exited during {what} ({exit}).{}",
                            stderr_note(&stderr)
                        )
                    }
                    None => format!("MCP server `{name}` closed its connection during {what}."),
                }
            }
            other => format!(
                "{} on MCP server `{name}` failed: {other}.",
                what.capitalized()
            ),
        }
    }

    /// Kills the server at once; calls in flight end with an error.
    pub(super) fn kill(&self) {
        self.closing.store(true, Ordering::SeqCst);
        if let Some(process) = &self.process {
            process.kill();
        }
    }

    /// Closes the session (the server's stdin), waits for the server to exit, then sends
    /// SIGTERM, then SIGKILL, to its process group.
    pub(super) async fn shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let session = self.session.lock().await.take();
        if let Some(mut session) = session {
            let _ = session.close_with_timeout(POLITE_WAIT).await;
        }
        let Some(process) = &self.process else {
            return;
        };
        let Some(pid) = process.pid else {
            return;
        };
        if process.wait_exit(POLITE_WAIT).await.is_none() {
            signal_group(pid, Signal::Term);
            if process.wait_exit(POLITE_WAIT).await.is_none() {
                signal_group(pid, Signal::Kill);
                let _ = process.wait_exit(DEATH_WAIT).await;
            }
        }
        // What the server started and left behind (its group outlives it while populated).
        signal_group(pid, Signal::Kill);
    }
}

/// Spawns the server with piped stdio, in its own process group, killed if dropped.
fn spawn(
    name: &str,
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &PathBuf,
) -> Result<(tokio::process::Child, Option<ChildStderr>), String> {
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    match command.spawn() {
        Ok(mut child) => {
            let stderr = child.stderr.take();
            Ok((child, stderr))
        }
        Err(error) => Err(match error.kind() {
            std::io::ErrorKind::NotFound => format!(
                "MCP server `{name}` was not started: command `{program}` was not found. \
                     Install it, or give its full path as the server's \"command\"."
            ),
            std::io::ErrorKind::PermissionDenied => format!(
                "MCP server `{name}` was not started: command `{program}` is not executable \
                     (permission denied)."
            ),
            _ => format!(
                "MCP server `{name}` was not started: command `{program}` could not be run: \
                     {error}."
            ),
        }),
    }
}

/// The warning for a server that failed during `step`.
async fn startup_failure(name: &str, process: &Process, step: &str, error: &str) -> String {
    match process.wait_exit(DEATH_WAIT).await {
        Some(exit) => {
            let stderr = process.stderr.excerpt(DEATH_WAIT).await;
            format!(
                "MCP server `{name}` was not started: it exited before answering `{step}` \
                 ({exit}).{}",
                stderr_note(&stderr)
            )
        }
        None => format!(
            "MCP server `{name}` was not started: `{step}` failed: {error}. It was stopped."
        ),
    }
}

fn stderr_note(stderr: &str) -> String {
    if stderr.is_empty() {
        " It wrote nothing to stderr.".to_string()
    } else {
        format!(" Its last stderr output:\n{stderr}")
    }
}

fn aborted(server: &str, what: Asked<'_>) -> String {
    format!(
        "{} on MCP server `{server}` was aborted.",
        what.capitalized()
    )
}

/// What a request asked, for messages: "the call to `add`", "the `resources/read` of `x://y`".
#[derive(Debug, Clone, Copy)]
pub(super) enum Asked<'a> {
    /// A tool call.
    Call(&'a str),
    /// Another request: its method, and what it is about.
    Method(&'static str, Option<&'a str>),
}

impl Asked<'_> {
    fn capitalized(self) -> String {
        let text = self.to_string();
        match text.strip_prefix("the ") {
            Some(rest) => format!("The {rest}"),
            None => text,
        }
    }
}

impl std::fmt::Display for Asked<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Asked::Call(tool) => write!(f, "the call to `{tool}`"),
            Asked::Method(method, None) => write!(f, "the `{method}` request"),
            Asked::Method(method, Some(about)) => write!(f, "the `{method}` of `{about}`"),
        }
    }
}

fn client_info() -> InitializeRequestParams {
    InitializeRequestParams::new(
        ClientCapabilities::default(),
        Implementation::new("tandem", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// `initialize` (the `serve` future), then `tools/list` when the server offers tools. `Err`
/// names the step that failed.
async fn handshake<E: std::fmt::Display>(
    serve: impl std::future::Future<Output = Result<Session, E>>,
) -> Result<(Session, Vec<Tool>), (&'static str, String)> {
    let session = serve.await.map_err(|e| ("initialize", e.to_string()))?;
    let offers_tools = session
        .peer()
        .peer_info()
        .is_none_or(|info| info.capabilities.tools.is_some());
    let tools = if offers_tools {
        session
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| ("tools/list", e.to_string()))?
    } else {
        Vec::new()
    };
    Ok((session, tools))
}

fn result_kind(result: &ServerResult) -> String {
    match result {
        ServerResult::InputRequiredResult(_) => "a request for more input".to_string(),
        ServerResult::CreateTaskResult(_) => "a task to poll".to_string(),
        other => {
            let json = serde_json::to_string(other).unwrap_or_default();
            json.chars().take(200).collect()
        }
    }
}

/// Sends `signal` to the process group led by `pid` (the server and what it started).
fn signal_group(pid: u32, signal: Signal) {
    process_group::signal(pid, signal);
}
