//! Sessions of the ACP agent: `session/new`, `session/load`, `session/list`, and what a
//! session's first turn asks or shows before it runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tandem_ai::sync::lock;

use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, ContentBlock, ContentChunk, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, McpServer, NewSessionRequest, SessionInfo, SessionUpdate, TextContent,
};
use agent_client_protocol::Error;
use tandem_ai::registry::AgentDir;
use tandem_coding::session::{self as sessions, time::format_iso};
use tandem_coding::trust::TrustStore;
use tandem_coding::BashPolicy;
use tandem_protocol::interaction::TrustAnswer;

use super::errors::{internal, invalid_params, setup_error, unknown_session};
use super::live::{AcpSession, FirstTurn};
use super::modes::Mode;
use super::updates;
use super::workspace::{workspace_roots, AcpWorkspace, ClientConnection};
use super::AcpAgent;
use crate::host::setup::{
    apply_trust, decide_trust, prepare, SessionRequest, SetupError, TrustLater, Trusted,
};
use crate::host::Origin;
use crate::mcp::McpServerConfig;

/// Sessions per `session/list` page.
const LIST_PAGE: usize = 100;

impl AcpAgent {
    /// `session/new`.
    pub(super) async fn new_session(
        &self,
        request: NewSessionRequest,
        cx: ClientConnection,
    ) -> Result<Arc<AcpSession>, Error> {
        let cwd = absolute_dir(&request.cwd)?;
        let servers = mcp_servers(&request.mcp_servers)?;
        let extra = request.additional_directories.clone();
        self.start_session(Origin::New, None, cwd, extra, servers, cx)
            .await
    }

    /// `session/load`: the live session, or the stored one of that id, replayed as updates.
    pub(super) async fn load_session(
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
                    let dir = self.options.session_dir(&agent_dir, &cwd);
                    let (agent_dir, id) = (agent_dir.clone(), id.clone());
                    tokio::task::spawn_blocking(move || find_session_file(&agent_dir, &dir, &id))
                        .await
                        .map_err(|e| internal(format!("looking for the session failed: {e}")))?
                }
                .ok_or_else(|| unknown_session(&id))?;
                let extra = request.additional_directories.clone();
                // The client keeps the id it asked for, even when the file is held by another
                // process and the session continues in a copy with an id of its own.
                self.start_session(Origin::Open(path), Some(id), cwd, extra, servers, cx)
                    .await?
            }
        };
        let messages = session.session.agent().with_state(|s| s.messages.clone());
        for update in updates::replay(&messages, &session.cwd) {
            session.notify(update);
        }
        Ok(session)
    }

    /// Sets the session up (the host's setup over the client's workspace, with the MCP servers
    /// of settings and of the request) and registers it. A folder whose trust needs a question
    /// gets an untrusted session; its first turn asks ([`AcpAgent::first_turn`]). `client_id`
    /// is the id the client knows the session by (`session/load`'s); by default the session
    /// file's.
    async fn start_session(
        &self,
        origin: Origin,
        client_id: Option<String>,
        cwd: PathBuf,
        extra_roots: Vec<PathBuf>,
        servers: Vec<McpServerConfig>,
        cx: ClientConnection,
    ) -> Result<Arc<AcpSession>, Error> {
        let roots = workspace_roots(&cwd, &extra_roots)?;
        let agent_dir = agent_dir()?;
        let prepared = {
            let (options, cwd) = (self.options.clone(), cwd.clone());
            tokio::task::spawn_blocking(move || {
                let mut trust_problems = Vec::new();
                let trust = decide_trust(&agent_dir, &cwd, options.approve, &mut |w| {
                    trust_problems.push(w)
                });
                prepare(SessionRequest {
                    agent_dir,
                    cwd,
                    options: &options,
                    origin,
                    trust,
                    trust_problems,
                    model: None,
                })
            })
            .await
            .map_err(|e| internal(format!("setting up the session failed: {e}")))?
            .map_err(setup_error)?
        };
        let id = client_id.unwrap_or_else(|| prepared.session_id().to_string());
        let caps = *lock(&self.caps);
        let workspace = Arc::new(AcpWorkspace::new(
            &id,
            cx.clone(),
            caps,
            roots,
            Mode::default(),
        ));
        // The workspace asks the client before every command.
        let started = prepared
            .start(workspace.clone(), BashPolicy::Ask, &servers)
            .await
            .map_err(setup_error)?;
        for p in &started.problems {
            tracing::warn!("{p}");
        }
        let session = AcpSession::start(
            id,
            started.session,
            workspace.clone(),
            cwd,
            started.registry,
            started.mcp,
            cx,
        );
        *lock(&session.languages) = started.languages;
        *lock(&session.first_turn) = FirstTurn {
            trust: started.pending.map(|resources| (resources, servers)),
            problems: started.problems,
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
    pub(super) async fn first_turn(&self, session: &Arc<AcpSession>) {
        let FirstTurn { trust, problems } = std::mem::take(&mut *lock(&session.first_turn));
        show_problems(session, &problems);
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
        let applied = apply_trust(
            session.session.clone(),
            TrustLater {
                agent_dir: &agent_dir,
                cwd: &session.cwd,
                options: &self.options,
                workspace: session.workspace.clone(),
                bash_policy: BashPolicy::Ask,
                servers: &servers,
                intel: None,
            },
        )
        .await;
        match applied {
            Ok(Trusted {
                mcp,
                languages,
                problems,
            }) => {
                let old = std::mem::replace(&mut *lock(&session.mcp), mcp);
                old.shutdown().await;
                let old = std::mem::replace(&mut *lock(&session.languages), languages);
                if let Some(old) = old {
                    old.shutdown().await;
                }
                show_problems(session, &problems);
                session.notify(SessionUpdate::AvailableCommandsUpdate(
                    session.available_commands(),
                ));
                session.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    session.config_options(),
                )));
            }
            Err(e) => {
                let problem = format!(
                    "the folder is trusted, but its configuration could not be loaded: {e:#}"
                );
                tracing::warn!("{problem}");
                show_problems(session, &[problem]);
            }
        }
    }

    /// `session/list`: the stored sessions of `cwd`, or of every folder, a page at a time.
    pub(super) async fn list_sessions(
        &self,
        request: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, Error> {
        let options = self.options.clone();
        tokio::task::spawn_blocking(move || {
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
                    sessions::list_sessions(&options.session_dir(&agent_dir, &cwd))
                }
                None => match &options.session_dir {
                    Some(dir) => sessions::list_sessions(dir),
                    None => sessions::list_all_sessions(&agent_dir),
                },
            };
            page(list, request.cursor.as_deref())
        })
        .await
        .unwrap_or_else(|e| Err(internal(format!("listing sessions failed: {e}"))))
    }
}

/// Shows configuration problems to the user as a message chunk (ACP has no other channel for
/// them; they are logged too).
fn show_problems(session: &AcpSession, problems: &[String]) {
    if problems.is_empty() {
        return;
    }
    let text: String = problems
        .iter()
        .map(|p| format!("Tandem: configuration problem: {p}\n\n"))
        .collect();
    session.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
        ContentBlock::Text(TextContent::new(text)),
    )));
}

/// Shows the session's notices (it moved to a new file because another program wrote to its
/// own) as a message chunk, the way configuration problems are shown.
pub(super) fn show_notices(session: &AcpSession, notices: &[String]) {
    for notice in notices {
        tracing::warn!("{notice}");
        session.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::Text(TextContent::new(format!("Tandem: {notice}\n\n"))),
        )));
    }
}

fn agent_dir() -> Result<AgentDir, Error> {
    AgentDir::from_env().map_err(|e| setup_error(SetupError::AgentDir(e.to_string())))
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
            McpServer::Stdio(s) => {
                let mut server = tandem_coding::settings::McpServer::stdio(
                    &s.command.display().to_string(),
                    &s.args,
                );
                if let tandem_coding::settings::McpTransport::Stdio { env, .. } =
                    &mut server.transport
                {
                    env.extend(s.env.iter().map(|e| (e.name.clone(), e.value.clone())));
                }
                Ok(McpServerConfig {
                    name: s.name.clone(),
                    server,
                    templates: false,
                })
            }
            _ => Err(invalid_params(
                "only stdio MCP servers are supported (mcpCapabilities.http and .sse are false)",
            )),
        })
        .collect()
}

/// The file of session `id`: in the folder's session directory `dir` first, then anywhere
/// under the agent directory's sessions.
fn find_session_file(agent_dir: &AgentDir, dir: &Path, id: &str) -> Option<PathBuf> {
    let here = sessions::list_sessions(dir);
    if let Some(found) = here.sessions.into_iter().find(|s| s.id == id) {
        return Some(found.path);
    }
    sessions::list_all_sessions(agent_dir)
        .sessions
        .into_iter()
        .find(|s| s.id == id)
        .map(|s| s.path)
}

/// One page of `list` from `cursor` (an offset).
fn page(list: sessions::SessionList, cursor: Option<&str>) -> Result<ListSessionsResponse, Error> {
    let start = match cursor {
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
