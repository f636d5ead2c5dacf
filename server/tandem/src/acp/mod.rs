//! `tandem acp`: Tandem as an Agent Client Protocol agent (protocol version 1) on stdio.
//!
//! The official `agent-client-protocol` crate frames and dispatches the messages; it reads them
//! through [`crate::transport::acp`], which bounds each line and answers the ones it cannot take
//! (not UTF-8, too long), so bad input never ends the connection. Its handlers
//! hold its dispatch loop while they run, so every handler here only checks its request and
//! answers, or spawns the work and returns: a turn runs in a task of its own and answers
//! `session/prompt` when it ends, so `session/cancel` and the client's answers to our requests
//! (permissions, files, terminals) get through meanwhile.
//!
//! Sessions are the host's ([`crate::host`]), as the CLI's and the language server's: pi's
//! configuration, pi's session files (so `session/load` resumes a Tandem or a pi session), the
//! same tools, here working through the client ([`workspace`]). The MCP servers of
//! `session/new` join those of settings.json. Stdout carries only JSON-RPC; logs go to stderr.
//! The agent exits when stdin closes, after cancelling the turns and saving them (a new
//! session's prompt too, before any answer).
//!
//! The code by concern: [`sessions`] (new, load, list, the first turn's questions),
//! [`lifecycle`] (resume, close, delete, logout, titles, requests the client cancels), [`turns`]
//! (prompt, cancel, the answer), [`options`] (authentication, modes and configuration options),
//! [`updates`] and [`live`] (events to `session/update`s), [`errors`].

mod errors;
mod extension_ui;
mod lifecycle;
mod live;
mod modes;
mod options;
/// Public for the fuzz targets (`fuzz/`), which feed it whatever the SDK parses.
pub mod prompt;
mod session_events;
mod sessions;
mod turns;
mod updates;
mod workspace;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AgentCapabilities, AuthMethod, AuthMethodAgent, CancelNotification,
    ClientRequest, Implementation, InitializeRequest, InitializeResponse, LoadSessionResponse,
    LogoutCapabilities, McpCapabilities, NewSessionResponse, PromptCapabilities,
    ResumeSessionResponse, SessionAdditionalDirectoriesCapabilities, SessionCapabilities,
    SessionCloseCapabilities, SessionDeleteCapabilities, SessionListCapabilities,
    SessionResumeCapabilities, SessionUpdate,
};
use agent_client_protocol::{Agent, Error};
use serde::Serialize;
use serde_json::Value;

use crate::host::SessionOptions;
use crate::transport::acp::Transport;
use crate::transport::MessageLimit;
use errors::{reply, unknown_session, Responder};
use live::AcpSession;
use workspace::{ClientCaps, ClientConnection};

/// The id of Tandem's one authentication method: pi's key configuration.
const AUTH_METHOD: &str = "pi-config";

/// The agent: the sessions' options, the client's capabilities and the live sessions.
struct AcpAgent {
    options: SessionOptions,
    caps: Mutex<ClientCaps>,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
    /// The folders the client used (`session/delete` removes only their sessions).
    cwds: Mutex<lifecycle::UsedFolders>,
    /// The title each live session last announced in a `session_info_update`.
    titles: Mutex<HashMap<String, String>>,
    /// Set by `logout`, cleared by `authenticate`: no sessions meanwhile.
    logged_out: AtomicBool,
}

impl AcpAgent {
    /// Answers a request that set a session up, then tells the client the session's commands
    /// and, for a `stored` one, its title and last activity.
    fn reply_session<T: Serialize>(
        &self,
        responder: Responder,
        result: Result<Arc<AcpSession>, Error>,
        stored: bool,
        response: impl FnOnce(&AcpSession) -> T,
    ) {
        match result {
            Ok(session) => {
                reply(responder, Ok(response(&session)));
                session.notify(SessionUpdate::AvailableCommandsUpdate(
                    session.available_commands(),
                ));
                if stored {
                    self.announce_info(&session, None, lifecycle::last_activity(&session));
                }
            }
            Err(e) => reply::<()>(responder, Err(e)),
        }
    }
}

/// Runs the agent on stdin/stdout until stdin closes, with lines above `limit` refused;
/// sessions start from `options` (the command line's). Then ends the turns (each saved with its
/// partial answer, and a new session's prompt too) and the MCP servers.
pub async fn serve_stdio(options: SessionOptions, limit: MessageLimit) -> Result<(), String> {
    let agent = Arc::new(AcpAgent {
        options,
        caps: Mutex::new(ClientCaps::default()),
        sessions: Mutex::new(HashMap::new()),
        cwds: Mutex::new(Default::default()),
        titles: Mutex::new(HashMap::new()),
        logged_out: AtomicBool::new(false),
    });
    let on_request = agent.clone();
    let on_cancel = agent.clone();
    let (lines, transport) = Transport::start(tokio::io::stdin(), tokio::io::stdout(), limit);
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
        .connect_to(lines)
        .await;
    agent.shutdown().await;
    transport.finish().await;
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
                tokio::spawn(async move {
                    let cancel = responder.cancellation();
                    let checked = cancel.run_until_cancelled(self.authenticate(r)).await;
                    if checked.is_ok() {
                        self.logged_out.store(false, Ordering::Release);
                    }
                    reply(responder, checked);
                });
            }
            ClientRequest::LogoutRequest(_) => {
                tokio::spawn(async move { reply(responder, self.logout().await) });
            }
            ClientRequest::NewSessionRequest(r) => {
                tokio::spawn(async move {
                    let cancel = responder.cancellation();
                    let created = self.new_session(r, cx, &cancel).await;
                    self.reply_session(responder, created, false, |s| {
                        NewSessionResponse::new(s.id.clone())
                            .modes(modes::mode_state(s.mode()))
                            .config_options(s.config_options())
                    });
                });
            }
            ClientRequest::LoadSessionRequest(r) => {
                tokio::spawn(async move {
                    let cancel = responder.cancellation();
                    let loaded = self.load_session(r, cx, &cancel).await;
                    self.reply_session(responder, loaded, true, |s| {
                        LoadSessionResponse::new()
                            .modes(modes::mode_state(s.mode()))
                            .config_options(s.config_options())
                    });
                });
            }
            ClientRequest::ResumeSessionRequest(r) => {
                tokio::spawn(async move {
                    let cancel = responder.cancellation();
                    let resumed = self.resume_session(r, cx, &cancel).await;
                    self.reply_session(responder, resumed, true, |s| {
                        ResumeSessionResponse::new()
                            .modes(modes::mode_state(s.mode()))
                            .config_options(s.config_options())
                    });
                });
            }
            ClientRequest::CloseSessionRequest(r) => {
                tokio::spawn(async move { reply(responder, self.close_session(r).await) });
            }
            ClientRequest::DeleteSessionRequest(r) => {
                tokio::spawn(async move { reply(responder, self.delete_session(r).await) });
            }
            ClientRequest::ListSessionsRequest(r) => {
                tokio::spawn(async move {
                    let cancel = responder.cancellation();
                    let listed = cancel.run_until_cancelled(self.list_sessions(r)).await;
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
        let session = c.session.as_ref();
        *lock(&self.caps) = ClientCaps {
            read: c.fs.read_text_file,
            write: c.fs.write_text_file,
            terminal: c.terminal,
            compaction: session.is_some_and(|s| s.compaction.is_some()),
            notices: session.is_some_and(|s| s.notices.is_some()),
            boolean_options: session
                .and_then(|s| s.config_options.as_ref())
                .is_some_and(|o| o.boolean.is_some()),
            elicitation_form: c.elicitation.as_ref().is_some_and(|e| e.supports_form()),
        };
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                PromptCapabilities::new()
                    .image(true)
                    .audio(false)
                    .embedded_context(true),
            )
            .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .delete(SessionDeleteCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new())
                    // Extra workspace roots (`additionalDirectories`, see `workspace_roots`).
                    .additional_directories(SessionAdditionalDirectoriesCapabilities::new()),
            )
            .auth(AgentAuthCapabilities::new().logout(LogoutCapabilities::new()));
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

    fn get(&self, id: &str) -> Result<Arc<AcpSession>, Error> {
        lock(&self.sessions)
            .get(id)
            .cloned()
            .ok_or_else(|| unknown_session(id))
    }

    /// Ends every session (see [`AcpAgent::end_sessions`]).
    async fn shutdown(&self) {
        let sessions: Vec<_> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        self.end_sessions(sessions).await;
    }
}

/// How long the agent waits for cancelled turns when stdin closes.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
