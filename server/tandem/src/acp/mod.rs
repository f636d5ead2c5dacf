//! `tandem acp`: Tandem as an Agent Client Protocol agent (protocol version 1) on stdio.
//!
//! The official `agent-client-protocol` crate frames and dispatches the messages. Its handlers
//! hold its dispatch loop while they run, so every handler here only checks its request and
//! answers, or spawns the work and returns: a turn runs in a task of its own and answers
//! `session/prompt` when it ends, so `session/cancel` and the client's answers to our requests
//! (permissions, files, terminals) get through meanwhile.
//!
//! Sessions are the same as the CLI's and the language server's ([`crate::setup`]): pi's
//! configuration, pi's session files (so `session/load` resumes a Tandem or a pi session), the
//! same tools, here working through the client ([`workspace`]). The MCP servers of
//! `session/new` join those of settings.json. Stdout carries only JSON-RPC; logs go to stderr.
//! The agent exits when stdin closes.

mod live;
mod modes;
/// Public for the fuzz targets (`fuzz/`), which feed it whatever the SDK parses.
pub mod prompt;
mod updates;
mod workspace;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    CancelNotification, ClientRequest, ConfigOptionUpdate, ContentBlock, ContentChunk,
    CurrentModeUpdate, Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    SessionCapabilities, SessionConfigOptionValue, SessionInfo, SessionListCapabilities,
    SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse, StopReason as AcpStop, TextContent,
};
use agent_client_protocol::{Agent, Error, Stdio};
use serde::Serialize;
use serde_json::Value;
use tandem_ai::registry::{AgentDir, ModelRegistry};
use tandem_ai::StopReason;
use tandem_coding::agent_session::SessionError;
use tandem_coding::session::{self as sessions, time::format_iso, SessionManager};
use tandem_coding::settings;
use tandem_coding::BashPolicy;

use crate::cli::models::{require_key, ModelError};
use crate::cli::RunArgs;
use crate::mcp::{connect_for_session, McpServerConfig};
use crate::setup::{
    build_session, choose_model, decide_trust, reconfigure_session, ChosenModel, ModelSetupError,
    Project, SessionPlan,
};
use live::{AcpSession, FirstTurn};
use modes::{Mode, MODEL_OPTION, MODE_OPTION, THINKING_OPTION};
use tandem_coding::settings::LoadedSettings;
use tandem_coding::trust::{ProtectedResources, TrustDecision, TrustStore};
use tandem_protocol::interaction::TrustAnswer;
use workspace::{AcpWorkspace, ClientCaps, ClientConnection};

type Responder = agent_client_protocol::v1::Responder<Value>;

/// The id of Tandem's one authentication method: pi's key configuration.
const AUTH_METHOD: &str = "pi-config";
/// Sessions per `session/list` page.
const LIST_PAGE: usize = 100;

/// The agent: the client's capabilities and the live sessions.
struct AcpAgent {
    run: RunArgs,
    caps: Mutex<ClientCaps>,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

/// Answers `responder` with `result`.
fn reply<T: Serialize>(responder: Responder, result: Result<T, Error>) {
    let sent =
        match result.and_then(|r| serde_json::to_value(r).map_err(Error::into_internal_error)) {
            Ok(value) => responder.respond(value),
            Err(e) => responder.respond_with_error(e),
        };
    if let Err(e) = sent {
        tracing::warn!("could not send a response: {}", e.message);
    }
}

/// Answers a request that set a session up, then tells the client the session's commands.
fn reply_session<T: Serialize>(
    responder: Responder,
    result: Result<Arc<AcpSession>, Error>,
    response: impl FnOnce(&AcpSession) -> T,
) {
    match result {
        Ok(session) => {
            reply(responder, Ok(response(&session)));
            session.notify(SessionUpdate::AvailableCommandsUpdate(
                session.available_commands(),
            ));
        }
        Err(e) => reply::<()>(responder, Err(e)),
    }
}

fn invalid_params(message: impl Into<String>) -> Error {
    Error::invalid_params().data(Value::String(message.into()))
}

fn internal(message: impl Into<String>) -> Error {
    Error::internal_error().data(Value::String(message.into()))
}

fn unknown_session(id: &str) -> Error {
    agent_client_protocol::v1::schema::Error::session_not_found(id.to_string()).into()
}

/// Runs the agent on stdin/stdout until stdin closes.
pub async fn serve_stdio(run: RunArgs) -> Result<(), String> {
    let agent = Arc::new(AcpAgent {
        run,
        caps: Mutex::new(ClientCaps::default()),
        sessions: Mutex::new(HashMap::new()),
    });
    let on_request = agent.clone();
    let on_cancel = agent.clone();
    let served = Agent
        .v1()
        .name("tandem")
        .on_receive_request(
            async move |request: ClientRequest, responder: Responder, cx: ClientConnection| {
                on_request.clone().dispatch(request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |note: CancelNotification, _cx: ClientConnection| {
                on_cancel.cancel(&note.session_id.0);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    agent.shutdown().await;
    served.map_err(|e| match &e.data {
        Some(data) => format!("{}: {data}", e.message),
        None => e.message.clone(),
    })
}

impl AcpAgent {
    fn dispatch(
        self: Arc<Self>,
        request: ClientRequest,
        responder: Responder,
        cx: ClientConnection,
    ) {
        match request {
            ClientRequest::InitializeRequest(r) => reply(responder, Ok(self.initialize(r))),
            ClientRequest::AuthenticateRequest(r) => {
                tokio::spawn(async move { reply(responder, self.authenticate(r).await) });
            }
            ClientRequest::NewSessionRequest(r) => {
                tokio::spawn(async move {
                    let created = self.new_session(r, cx).await;
                    reply_session(responder, created, |s| {
                        NewSessionResponse::new(s.id.clone())
                            .modes(modes::mode_state(s.mode()))
                            .config_options(s.config_options())
                    });
                });
            }
            ClientRequest::LoadSessionRequest(r) => {
                tokio::spawn(async move {
                    let loaded = self.load_session(r, cx).await;
                    reply_session(responder, loaded, |s| {
                        LoadSessionResponse::new()
                            .modes(modes::mode_state(s.mode()))
                            .config_options(s.config_options())
                    });
                });
            }
            ClientRequest::ListSessionsRequest(r) => {
                tokio::spawn(async move {
                    let listed = tokio::task::spawn_blocking(move || list_sessions(&r))
                        .await
                        .unwrap_or_else(|e| Err(internal(format!("listing sessions failed: {e}"))));
                    reply(responder, listed);
                });
            }
            ClientRequest::PromptRequest(r) => self.prompt(r, responder),
            ClientRequest::SetSessionModeRequest(r) => reply(responder, self.set_mode(r)),
            ClientRequest::SetSessionConfigOptionRequest(r) => {
                tokio::spawn(async move { reply(responder, self.set_config_option(r).await) });
            }
            other => {
                let method = other.method().to_string();
                reply::<()>(
                    responder,
                    Err(Error::method_not_found().data(Value::String(format!(
                        "`{method}` is not supported by Tandem"
                    )))),
                );
            }
        }
    }

    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        let c = &request.client_capabilities;
        *lock(&self.caps) = ClientCaps {
            read: c.fs.read_text_file,
            write: c.fs.write_text_file,
            terminal: c.terminal,
        };
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                PromptCapabilities::new()
                    .image(true)
                    .audio(false)
                    .embedded_context(true),
            )
            .mcp_capabilities(McpCapabilities::new().http(false).sse(false))
            .session_capabilities(SessionCapabilities::new().list(SessionListCapabilities::new()));
        let auth = AuthMethodAgent::new(AUTH_METHOD, "Configure an API key").description(
            "Tandem uses pi's configuration: set the provider's API key environment variable \
             (e.g. ANTHROPIC_API_KEY) or add the key to ~/.pi/agent/auth.json, then retry"
                .to_string(),
        );
        // Tandem speaks version 1 only; a client asking for a newer one gets 1 and decides.
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .auth_methods(vec![AuthMethod::Agent(auth)])
            .agent_info(
                Implementation::new("tandem", env!("CARGO_PKG_VERSION"))
                    .title("Tandem".to_string()),
            )
    }

    async fn authenticate(
        &self,
        request: AuthenticateRequest,
    ) -> Result<AuthenticateResponse, Error> {
        if request.method_id.0.as_ref() != AUTH_METHOD {
            return Err(invalid_params(format!(
                "unknown authentication method `{}`; Tandem offers `{AUTH_METHOD}`",
                request.method_id.0
            )));
        }
        let run = self.run.clone();
        let checked = tokio::task::spawn_blocking(move || -> Result<(), Error> {
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
            let agent_dir = agent_dir()?;
            let (trusted, _) =
                decide_trust(&agent_dir, &cwd, run.approve, &mut |_| {}).or_untrusted();
            let loaded = settings::load(agent_dir.path(), &cwd, trusted);
            let registry = ModelRegistry::load(agent_dir);
            let history = SessionManager::in_memory(&cwd);
            choose_model(&registry, &run, &loaded, &history, &|_| {}).map_err(setup_error_any)?;
            Ok(())
        })
        .await
        .unwrap_or_else(|e| Err(internal(format!("the key check failed: {e}"))));
        checked.map(|()| AuthenticateResponse::new())
    }

    fn get(&self, id: &str) -> Result<Arc<AcpSession>, Error> {
        lock(&self.sessions)
            .get(id)
            .cloned()
            .ok_or_else(|| unknown_session(id))
    }

    async fn new_session(
        &self,
        request: NewSessionRequest,
        cx: ClientConnection,
    ) -> Result<Arc<AcpSession>, Error> {
        let cwd = absolute_dir(&request.cwd)?;
        let servers = mcp_servers(&request.mcp_servers)?;
        let agent_dir = agent_dir()?;
        let dir = sessions::default_session_dir(&agent_dir, &cwd);
        let manager = SessionManager::create(&cwd, &dir);
        let extra: Vec<PathBuf> = request.additional_directories.clone();
        self.start_session(agent_dir, manager, cwd, extra, servers, cx)
            .await
    }

    async fn load_session(
        &self,
        request: LoadSessionRequest,
        cx: ClientConnection,
    ) -> Result<Arc<AcpSession>, Error> {
        let id = request.session_id.0.to_string();
        let cwd = absolute_dir(&request.cwd)?;
        let servers = mcp_servers(&request.mcp_servers)?;
        let live = lock(&self.sessions).get(&id).cloned();
        let session = match live {
            Some(live) => live,
            None => {
                let agent_dir = agent_dir()?;
                let path = {
                    let (agent_dir, cwd, id) = (agent_dir.clone(), cwd.clone(), id.clone());
                    tokio::task::spawn_blocking(move || find_session_file(&agent_dir, &cwd, &id))
                        .await
                        .map_err(|e| internal(format!("looking for the session failed: {e}")))?
                }
                .ok_or_else(|| unknown_session(&id))?;
                let manager = SessionManager::open(&path).map_err(|e| {
                    internal(format!(
                        "could not open the session file {}: {e}",
                        path.display()
                    ))
                })?;
                let extra = request.additional_directories.clone();
                self.start_session(agent_dir, manager, cwd, extra, servers, cx)
                    .await?
            }
        };
        let messages = session.session.agent().with_state(|s| s.messages.clone());
        for update in updates::replay(&messages, &session.cwd) {
            session.notify(update);
        }
        Ok(session)
    }

    /// Builds the session over the client's workspace, with the MCP servers of settings and
    /// of the request, and registers it. A folder whose trust needs a question gets an
    /// untrusted session; its first turn asks (see [`AcpAgent::first_turn`]).
    async fn start_session(
        &self,
        agent_dir: AgentDir,
        manager: SessionManager,
        cwd: PathBuf,
        extra_roots: Vec<PathBuf>,
        servers: Vec<McpServerConfig>,
        cx: ClientConnection,
    ) -> Result<Arc<AcpSession>, Error> {
        let run = self.run.clone();
        let prepared = {
            let (agent_dir, cwd) = (agent_dir.clone(), cwd.clone());
            tokio::task::spawn_blocking(move || {
                prepare(&agent_dir, &cwd, &run, &manager).map(|p| (p, manager))
            })
            .await
            .map_err(|e| internal(format!("setting up the session failed: {e}")))??
        };
        let (prepared, manager) = prepared;
        let mcp = connect_for_session(&prepared.loaded, &servers, &cwd).await;
        for w in mcp.warnings() {
            tracing::warn!("{w}");
        }
        let id = manager.session_id().to_string();
        let mut roots = vec![cwd.clone()];
        roots.extend(extra_roots.into_iter().filter(|r| r.is_absolute()));
        let caps = *lock(&self.caps);
        let workspace = Arc::new(AcpWorkspace::new(
            &id,
            cx.clone(),
            caps,
            roots,
            Mode::default(),
        ));
        let registry = prepared.registry.clone();
        let run = self.run.clone();
        let tools = mcp.tools();
        let Prepared {
            loaded,
            registry: _,
            model,
            pending,
            problems,
        } = prepared;
        let built = {
            let (workspace, registry, cwd) = (workspace.clone(), registry.clone(), cwd.clone());
            tokio::task::spawn_blocking(move || {
                let handle = tokio::runtime::Handle::current();
                let _guard = handle.enter();
                build_session(
                    SessionPlan {
                        agent_dir: &agent_dir,
                        settings: &loaded,
                        registry,
                        cwd: &cwd,
                        run: &run,
                        session: manager,
                        workspace,
                        // The workspace asks the client before every command.
                        bash_policy: BashPolicy::Ask,
                        model,
                        extra_tools: tools,
                    },
                    &|w| tracing::warn!("{w}"),
                )
            })
            .await
        };
        let built = match built {
            Ok(Ok(session)) => session,
            Ok(Err(e)) => {
                mcp.shutdown().await;
                return Err(setup_error_any(e));
            }
            Err(e) => {
                mcp.shutdown().await;
                return Err(internal(format!("setting up the session failed: {e}")));
            }
        };
        let session = AcpSession::start(built, workspace.clone(), cwd, registry, mcp, cx);
        *lock(&session.first_turn) = FirstTurn {
            trust: pending.map(|resources| (resources, servers)),
            problems,
        };
        let weak = Arc::downgrade(&session);
        workspace.set_mode_listener(Box::new(move |_mode| {
            if let Some(s) = weak.upgrade() {
                s.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    s.config_options(),
                )));
            }
        }));
        lock(&self.sessions).insert(session.id.clone(), session.clone());
        Ok(session)
    }

    /// Before a session's first turn: shows the configuration problems found when it was
    /// built, and asks about its folder's trust when that is pending — when the user trusts
    /// it, the session gets the project's configuration (settings, resources, MCP servers)
    /// before the turn runs.
    async fn first_turn(&self, session: &Arc<AcpSession>) {
        let FirstTurn { trust, problems } = std::mem::take(&mut *lock(&session.first_turn));
        if !problems.is_empty() {
            let text: String = problems
                .iter()
                .map(|p| format!("Tandem: configuration problem: {p}\n\n"))
                .collect();
            session.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::Text(TextContent::new(text)),
            )));
        }
        let Some((resources, servers)) = trust else {
            return;
        };
        let Ok(agent_dir) = agent_dir() else {
            return;
        };
        let answer = session.workspace.ask_trust(&resources).await;
        if answer == TrustAnswer::DontTrust {
            return;
        }
        if answer == TrustAnswer::TrustAlways {
            if let Err(e) = TrustStore::new(agent_dir.path()).save(&resources.dir, true) {
                tracing::warn!("{e}");
            }
        }
        let cwd = session.cwd.clone();
        let loaded = {
            let (agent_dir, cwd) = (agent_dir.clone(), cwd.clone());
            tokio::task::spawn_blocking(move || settings::load(agent_dir.path(), &cwd, true)).await
        };
        let Ok(loaded) = loaded else { return };
        let mcp = connect_for_session(&loaded, &servers, &cwd).await;
        for w in mcp.warnings() {
            tracing::warn!("{w}");
        }
        let (s, run, tools) = (session.clone(), self.run.clone(), mcp.tools());
        let applied = tokio::task::spawn_blocking(move || {
            let workspace: Arc<dyn tandem_coding::Workspace> = s.workspace.clone();
            reconfigure_session(
                &s.session,
                &Project {
                    agent_dir: &agent_dir,
                    settings: &loaded,
                    cwd: &s.cwd,
                    run: &run,
                    workspace,
                    bash_policy: BashPolicy::Ask,
                },
                &s.registry,
                tools,
                &|w| tracing::warn!("{w}"),
            )
        })
        .await;
        match applied {
            Ok(Ok(())) => {
                let old = std::mem::replace(&mut *lock(&session.mcp), mcp);
                old.shutdown().await;
                session.notify(SessionUpdate::AvailableCommandsUpdate(
                    session.available_commands(),
                ));
                session.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    session.config_options(),
                )));
            }
            Ok(Err(e)) => {
                mcp.shutdown().await;
                tracing::warn!("the trusted configuration could not be loaded: {e:#}");
            }
            Err(e) => {
                mcp.shutdown().await;
                tracing::warn!("loading the trusted configuration failed: {e}");
            }
        }
    }

    fn prompt(self: Arc<Self>, request: PromptRequest, responder: Responder) {
        let id = request.session_id.0.to_string();
        let session = match self.get(&id) {
            Ok(s) => s,
            Err(e) => return reply::<()>(responder, Err(e)),
        };
        let prompt = match prompt::convert(&request.prompt, &session.cwd) {
            Ok(p) => p,
            Err(e) => return reply::<()>(responder, Err(invalid_params(e))),
        };
        if session
            .running
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return reply::<()>(
                responder,
                Err(Error::invalid_request().data(Value::String(format!(
                    "session {id} is already running a prompt; send session/cancel or wait for \
                     its answer"
                )))),
            );
        }
        session.cancelled.store(false, Ordering::Release);
        session.workspace.begin_turn();
        tokio::spawn(async move {
            self.first_turn(&session).await;
            let seen = *session.settled.borrow();
            let result = session.session.prompt(&prompt.text, prompt.images).await;
            let ran = !matches!(
                result,
                Err(SessionError::Busy) | Err(SessionError::Expansion(_))
            );
            if ran {
                // Every update of the turn goes out before the answer.
                let mut settled = session.settled.clone();
                let _ = settled.wait_for(|n| *n > seen).await;
            }
            let cancelled = session.cancelled.load(Ordering::Acquire);
            let answer = turn_answer(&session, result, cancelled);
            session.running.store(false, Ordering::Release);
            reply(responder, answer);
        });
    }

    fn cancel(&self, id: &str) {
        match self.get(id) {
            Ok(session) => session.cancel(),
            Err(_) => tracing::warn!("session/cancel for unknown session {id}; ignored"),
        }
    }

    fn set_mode(&self, request: SetSessionModeRequest) -> Result<SetSessionModeResponse, Error> {
        let session = self.get(&request.session_id.0)?;
        let mode = Mode::from_id(&request.mode_id.0).ok_or_else(|| {
            invalid_params(format!(
                "unknown mode `{}`; the modes are {}",
                request.mode_id.0,
                Mode::ALL.map(Mode::id).join(", ")
            ))
        })?;
        session.workspace.set_mode(mode);
        session.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
            mode.id(),
        )));
        session.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            session.config_options(),
        )));
        Ok(SetSessionModeResponse::new())
    }

    async fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let session = self.get(&request.session_id.0)?;
        let SessionConfigOptionValue::ValueId { value } = &request.value else {
            return Err(invalid_params(format!(
                "option `{}` takes one of its listed values, not a boolean",
                request.config_id.0
            )));
        };
        let value = value.0.to_string();
        match request.config_id.0.as_ref() {
            MODE_OPTION => {
                let mode = Mode::from_id(&value)
                    .ok_or_else(|| invalid_params(format!("unknown mode `{value}`")))?;
                session.workspace.set_mode(mode);
                session.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    mode.id(),
                )));
            }
            MODEL_OPTION => {
                let registry = session.registry.clone();
                let chosen = tokio::task::spawn_blocking(move || {
                    let model = registry
                        .all()
                        .iter()
                        .find(|&m| modes::model_value(m) == value)
                        .cloned()
                        .ok_or_else(|| {
                            invalid_params(format!(
                                "unknown model `{value}`; pick one of the option's values"
                            ))
                        })?;
                    require_key(&registry, &model, None).map_err(setup_error)?;
                    Ok::<_, Error>(model)
                })
                .await
                .map_err(|e| internal(format!("choosing the model failed: {e}")))??;
                session
                    .session
                    .set_model(chosen)
                    .map_err(|e| internal(format!("could not switch the model: {e}")))?;
            }
            THINKING_OPTION => {
                let level = modes::thinking_from_id(&value)
                    .ok_or_else(|| invalid_params(format!("unknown thinking level `{value}`")))?;
                // What the model can do: `off` without reasoning, `high` for an unsupported
                // `xhigh`.
                let model = session.session.agent().with_state(|s| s.model.clone());
                session
                    .session
                    .set_thinking_level(model.effective_thinking(level))
                    .map_err(|e| internal(format!("could not set the thinking level: {e}")))?;
            }
            other => {
                return Err(invalid_params(format!(
                    "unknown option `{other}`; the options are {MODE_OPTION}, {MODEL_OPTION} and \
                     {THINKING_OPTION}"
                )))
            }
        }
        Ok(SetSessionConfigOptionResponse::new(
            session.config_options(),
        ))
    }

    /// Ends every session: aborts runs, stops MCP servers.
    async fn shutdown(&self) {
        let sessions: Vec<_> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for s in &sessions {
            s.cancel();
        }
        for s in &sessions {
            let mcp = std::mem::take(&mut *lock(&s.mcp));
            mcp.shutdown().await;
        }
    }
}

/// The answer to a finished turn.
fn turn_answer(
    session: &AcpSession,
    result: Result<(), SessionError>,
    cancelled: bool,
) -> Result<PromptResponse, Error> {
    match result {
        Ok(()) => {}
        Err(SessionError::Busy) => {
            return Err(Error::invalid_request().data(Value::String(format!(
                "session {} is already running a prompt",
                session.id
            ))))
        }
        Err(SessionError::Expansion(e)) => return Err(invalid_params(e)),
        Err(e) => {
            return Err(internal(format!(
                "the turn ran but the session file could not be written: {e}"
            )))
        }
    }
    if cancelled {
        return Ok(PromptResponse::new(AcpStop::Cancelled));
    }
    let Some(last) = session.session.last_assistant() else {
        return Err(internal("the model gave no answer"));
    };
    let stop = match last.stop_reason {
        StopReason::Stop | StopReason::ToolUse => AcpStop::EndTurn,
        StopReason::Length => AcpStop::MaxTokens,
        StopReason::Aborted => AcpStop::Cancelled,
        StopReason::Error => {
            let message = last
                .error_message
                .unwrap_or_else(|| "the model call failed".to_string());
            if message.contains("stop_reason \"refusal\"")
                || message.contains("stop_reason \"sensitive\"")
            {
                AcpStop::Refusal
            } else {
                return Err(internal(message));
            }
        }
    };
    Ok(PromptResponse::new(stop))
}

fn agent_dir() -> Result<AgentDir, Error> {
    AgentDir::from_env().map_err(|e| internal(e.to_string()))
}

/// A setup failure: a missing key asks the client to authenticate (-32000), anything else is
/// an internal error with the reason.
fn setup_error(e: ModelError) -> Error {
    match e {
        ModelError::Key(key) => Error::auth_required().data(Value::String(key.to_string())),
        ModelError::NoModels(message) => Error::auth_required().data(Value::String(message)),
        other => internal(other.to_string()),
    }
}

/// What is decided before anything starts: trust, settings, the model.
struct Prepared {
    loaded: LoadedSettings,
    registry: Arc<ModelRegistry>,
    model: ChosenModel,
    /// The trust question, when it must be asked.
    pending: Option<ProtectedResources>,
    /// Configuration problems, for the first turn.
    problems: Vec<String>,
}

/// Decides trust (a question is left pending: nobody can be asked before a turn), loads the
/// settings and chooses the model; no usable model is an error before any MCP server starts.
/// Blocking.
fn prepare(
    agent_dir: &AgentDir,
    cwd: &Path,
    run: &RunArgs,
    manager: &SessionManager,
) -> Result<Prepared, Error> {
    let mut problems = Vec::new();
    let decision = decide_trust(agent_dir, cwd, run.approve, &mut |w| problems.push(w));
    let (trusted, pending) = match decision {
        TrustDecision::Decided { trusted, .. } => (trusted, None),
        TrustDecision::Ask(resources) => (false, Some(resources)),
    };
    let loaded = settings::load(agent_dir.path(), cwd, trusted);
    problems.extend(loaded.errors.iter().map(ToString::to_string));
    let registry = Arc::new(ModelRegistry::load(agent_dir.clone()));
    let model = choose_model(&registry, run, &loaded, manager, &|w| tracing::warn!("{w}"))
        .map_err(setup_error_any)?;
    problems.extend(registry.load_errors().iter().map(ToString::to_string));
    for p in &problems {
        tracing::warn!("{p}");
    }
    Ok(Prepared {
        loaded,
        registry,
        model,
        pending,
        problems,
    })
}

fn setup_error_any(e: anyhow::Error) -> Error {
    match e.downcast::<ModelSetupError>() {
        Ok(failed) => {
            let text = failed.to_string();
            match failed.error {
                ModelError::Key(_) | ModelError::NoModels(_) => {
                    Error::auth_required().data(Value::String(text))
                }
                _ => internal(text),
            }
        }
        Err(other) => match other.downcast::<ModelError>() {
            Ok(model) => setup_error(model),
            Err(other) => internal(format!("{other:#}")),
        },
    }
}

/// `cwd` must be absolute (the protocol says so) and an existing directory.
fn absolute_dir(cwd: &Path) -> Result<PathBuf, Error> {
    if !cwd.is_absolute() {
        return Err(invalid_params(format!(
            "cwd must be an absolute path, got `{}`",
            cwd.display()
        )));
    }
    if !cwd.is_dir() {
        return Err(invalid_params(format!(
            "cwd `{}` is not an existing directory",
            cwd.display()
        )));
    }
    Ok(std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf()))
}

/// The stdio servers of a request; HTTP and SSE servers are refused (not announced).
fn mcp_servers(servers: &[McpServer]) -> Result<Vec<McpServerConfig>, Error> {
    servers
        .iter()
        .map(|server| match server {
            McpServer::Stdio(s) => Ok(McpServerConfig {
                name: s.name.clone(),
                command: s.command.display().to_string(),
                args: s.args.clone(),
                env: s
                    .env
                    .iter()
                    .map(|e| (e.name.clone(), e.value.clone()))
                    .collect(),
                cwd: None,
            }),
            _ => Err(invalid_params(
                "only stdio MCP servers are supported (mcpCapabilities.http and .sse are false)",
            )),
        })
        .collect()
}

/// The file of session `id`: in `cwd`'s session folder first, then anywhere under the agent
/// directory's sessions.
fn find_session_file(agent_dir: &AgentDir, cwd: &Path, id: &str) -> Option<PathBuf> {
    let here = sessions::list_sessions(&sessions::default_session_dir(agent_dir, cwd));
    if let Some(found) = here.sessions.into_iter().find(|s| s.id == id) {
        return Some(found.path);
    }
    sessions::list_all_sessions(agent_dir)
        .sessions
        .into_iter()
        .find(|s| s.id == id)
        .map(|s| s.path)
}

fn list_sessions(request: &ListSessionsRequest) -> Result<ListSessionsResponse, Error> {
    let agent_dir = agent_dir()?;
    let list = match &request.cwd {
        Some(cwd) if !cwd.is_absolute() => {
            return Err(invalid_params(format!(
                "cwd must be an absolute path, got `{}`",
                cwd.display()
            )))
        }
        // A directory that no longer exists may still have sessions.
        Some(cwd) => {
            let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.clone());
            sessions::list_sessions(&sessions::default_session_dir(&agent_dir, &cwd))
        }
        None => sessions::list_all_sessions(&agent_dir),
    };
    let start = match &request.cursor {
        Some(c) => c
            .parse::<usize>()
            .map_err(|_| invalid_params(format!("invalid cursor `{c}`")))?,
        None => 0,
    };
    let total = list.sessions.len();
    let page: Vec<SessionInfo> = list
        .sessions
        .into_iter()
        .skip(start)
        .take(LIST_PAGE)
        .map(|s| {
            let title = s
                .name
                .clone()
                .unwrap_or_else(|| one_line(&s.first_message, 80));
            let updated = s
                .modified
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| format_iso(d.as_millis() as i64))
                .ok();
            SessionInfo::new(s.id, PathBuf::from(s.cwd))
                .title(title)
                .updated_at(updated)
        })
        .collect();
    let next = (start + LIST_PAGE < total).then(|| (start + LIST_PAGE).to_string());
    Ok(ListSessionsResponse::new(page).next_cursor(next))
}

fn one_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}
