//! Sessions of the ACP agent: `session/new`, `session/load`, `session/list`, and what a
//! session's first turn asks or shows before it runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tandem_ai::sync::lock;

use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, ContentBlock, ContentChunk, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, McpServer, NewSessionRequest, ResumeSessionRequest, SessionInfo,
    SessionUpdate, TextContent,
};
use agent_client_protocol::{Error, RequestCancellation};
use tandem_ai::registry::AgentDir;
use tandem_coding::session::{self as sessions, time::format_iso};
use tandem_coding::trust::TrustStore;
use tandem_coding::BashPolicy;
use tandem_protocol::interaction::TrustAnswer;

use super::errors::{internal, invalid_params, setup_error, unknown_session};
use super::extension_ui::AcpUi;
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
        cancel: &RequestCancellation,
    ) -> Result<Arc<AcpSession>, Error> {
        let cwd = absolute_dir(&request.cwd)?;
        let servers = mcp_servers(&request.mcp_servers)?;
        self.check_logged_in()?;
        self.remember_cwd(&cwd);
        let extra = request.additional_directories.clone();
        let session = self
            .start_session(Origin::New, None, cwd, extra, servers, cx)
            .await?;
        if let Some(name) = &self.options.new_session_name {
            let named = session
                .session
                .with_session(|m| m.append_session_info(name));
            if let Err(e) = named {
                tracing::warn!("session {}: could not record its name: {e}", session.id);
            }
        }
        self.unless_cancelled((session, true), cancel).await
    }

    /// `session/load`: the session as `session/resume` opens it, its history replayed as
    /// updates.
    pub(super) async fn load_session(
        &self,
        request: LoadSessionRequest,
        cx: ClientConnection,
        cancel: &RequestCancellation,
    ) -> Result<Arc<AcpSession>, Error> {
        let resume = ResumeSessionRequest::new(request.session_id, request.cwd)
            .mcp_servers(request.mcp_servers)
            .additional_directories(request.additional_directories);
        let session = self.resume_session(resume, cx, cancel).await?;
        let messages = session.session.agent().with_state(|s| s.messages.clone());
        for update in updates::replay(&messages, &session.cwd) {
            session.notify(update);
        }
        Ok(session)
    }

    /// The live session `id`, or the stored one (a Tandem or a pi session file, in the session
    /// folder of `cwd` first, then anywhere under the agent directory's sessions) set up again;
    /// whether it was set up by this call. Its history is not sent (`session/load` replays it,
    /// `session/resume` does not).
    pub(super) async fn open_stored(
        &self,
        id: String,
        cwd: &Path,
        servers: &[McpServer],
        extra: Vec<PathBuf>,
        cx: ClientConnection,
    ) -> Result<(Arc<AcpSession>, bool), Error> {
        let cwd = absolute_dir(cwd)?;
        let servers = mcp_servers(servers)?;
        self.check_logged_in()?;
        self.remember_cwd(&cwd);
        if let Some(live) = lock(&self.sessions).get(&id).cloned() {
            return Ok((live, false));
        }
        let agent_dir = agent_dir()?;
        let path = {
            let dir = self.options.session_dir(&agent_dir, &cwd);
            let (agent_dir, id) = (agent_dir.clone(), id.clone());
            tokio::task::spawn_blocking(move || find_session_file(&agent_dir, &dir, &id))
                .await
                .map_err(|e| internal(format!("looking for the session failed: {e}")))?
        }
        .ok_or_else(|| unknown_session(&id))?;
        // The client keeps the id it asked for, even when the file is held by another
        // process and the session continues in a copy with an id of its own.
        let session = self
            .start_session(Origin::Open(path), Some(id), cwd, extra, servers, cx)
            .await?;
        Ok((session, true))
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
        let ui = Arc::new(AcpUi::new(&id, cx.clone(), workspace.clone()));
        // The workspace asks the client before every command.
        let started = prepared
            .with_extension_front("acp", ui)
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
        *lock(&session.extensions) = started.extensions;
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
                trusted: true,
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
                // The folder's own extensions join the user's now.
                let ui = Arc::new(AcpUi::new(
                    &session.id,
                    session.cx.clone(),
                    session.workspace.clone(),
                ));
                let current = lock(&session.extensions).clone();
                let (extensions, more) = crate::host::setup::reload_extensions(
                    &session.session,
                    &agent_dir,
                    &session.cwd,
                    &self.options,
                    true,
                    ("acp", ui),
                    current,
                )
                .await;
                *lock(&session.extensions) = extensions;
                let problems: Vec<String> = problems.into_iter().chain(more).collect();
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
        let cwd = match &request.cwd {
            Some(cwd) if !cwd.is_absolute() => {
                return Err(invalid_params(format!(
                    "cwd must be an absolute path, got `{}`",
                    cwd.display()
                )))
            }
            // A directory that no longer exists may still have sessions.
            Some(cwd) => Some(std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.clone())),
            None => None,
        };
        if let Some(cwd) = &cwd {
            self.remember_cwd(cwd);
        }
        let options = self.options.clone();
        tokio::task::spawn_blocking(move || {
            let agent_dir = agent_dir()?;
            let list = match &cwd {
                Some(cwd) => sessions::list_sessions(&options.session_dir(&agent_dir, cwd)),
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

pub(super) fn agent_dir() -> Result<AgentDir, Error> {
    AgentDir::from_env().map_err(|e| setup_error(SetupError::AgentDir(e.to_string())))
}

/// `cwd` must be absolute (the protocol says so) and an existing directory.
pub(super) fn absolute_dir(cwd: &Path) -> Result<PathBuf, Error> {
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

/// The stdio and streamable-HTTP servers of a request, their values taken literally (no
/// `${VAR}` or `!command`: they come from the client, not from a file); SSE servers are refused
/// (not announced).
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
            McpServer::Http(h) => {
                tandem_coding::settings::check_http_url(&h.url)
                    .map_err(|e| invalid_params(format!("MCP server `{}`: {e}", h.name)))?;
                let server = tandem_coding::settings::McpServer::new(
                    tandem_coding::settings::McpTransport::Http {
                        url: h.url.clone(),
                        headers: h
                            .headers
                            .iter()
                            .map(|header| (header.name.clone(), header.value.clone()))
                            .collect(),
                    },
                );
                Ok(McpServerConfig {
                    name: h.name.clone(),
                    server,
                    templates: false,
                })
            }
            _ => Err(invalid_params(
                "only stdio and streamable-HTTP MCP servers are supported \
                 (mcpCapabilities.sse is false)",
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

/// One page of `list` from `cursor` (the offset of the page's first session, as a previous
/// page's `nextCursor` gave it).
fn page(list: sessions::SessionList, cursor: Option<&str>) -> Result<ListSessionsResponse, Error> {
    let total = list.sessions.len();
    let start = match cursor {
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|&start| start <= total)
            .ok_or_else(|| {
                invalid_params(format!(
                    "invalid cursor `{c}`: pass a `nextCursor` of a previous session/list \
                     answer for the same cwd, or no cursor for the first page"
                ))
            })?,
        None => 0,
    };
    let page: Vec<SessionInfo> = list
        .sessions
        .into_iter()
        .skip(start)
        .take(LIST_PAGE)
        .map(|s| {
            let title = listed_title(&s);
            let updated = iso_time(s.modified);
            SessionInfo::new(s.id, PathBuf::from(s.cwd))
                .title(title)
                .updated_at(updated)
        })
        .collect();
    let next = (start + LIST_PAGE < total).then(|| (start + LIST_PAGE).to_string());
    Ok(ListSessionsResponse::new(page).next_cursor(next))
}

/// A listed session's title: its recorded name, else the first line of its first prompt.
pub(super) fn listed_title(s: &sessions::SessionInfo) -> String {
    s.name
        .clone()
        .unwrap_or_else(|| one_line(&s.first_message, TITLE_CHARS))
}

/// The longest title taken from a prompt, in characters.
pub(super) const TITLE_CHARS: usize = 80;

/// `time` in ISO 8601, as ACP's `updatedAt`.
pub(super) fn iso_time(time: std::time::SystemTime) -> Option<String> {
    time.duration_since(std::time::UNIX_EPOCH)
        .map(|d| format_iso(d.as_millis() as i64))
        .ok()
}

pub(super) fn one_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(n: usize) -> sessions::SessionList {
        let sessions = (0..n)
            .map(|i| sessions::SessionInfo {
                path: PathBuf::from(format!("/s/{i}.jsonl")),
                id: format!("id-{i}"),
                cwd: "/p".to_string(),
                name: None,
                parent_session_path: None,
                created: std::time::UNIX_EPOCH,
                modified: std::time::UNIX_EPOCH,
                message_count: 0,
                first_message: format!("prompt {i}\nsecond line"),
                all_messages_text: String::new(),
            })
            .collect();
        sessions::SessionList {
            sessions,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn pages_follow_their_cursors_to_the_end() {
        let first = page(list(LIST_PAGE + 5), None).unwrap();
        assert_eq!(first.sessions.len(), LIST_PAGE);
        assert_eq!(first.sessions[0].title.as_deref(), Some("prompt 0"));
        let cursor = first.next_cursor.expect("a second page");
        let second = page(list(LIST_PAGE + 5), Some(&cursor)).unwrap();
        assert_eq!(second.sessions.len(), 5);
        assert_eq!(second.sessions[0].session_id.0.as_ref(), "id-100");
        assert_eq!(second.next_cursor, None);
        // The end itself is a valid (empty) page; past it, or garbage, is refused.
        assert!(page(list(3), Some("3")).unwrap().sessions.is_empty());
        for bad in ["4", "-1", "x", ""] {
            let e = page(list(3), Some(bad)).expect_err(bad);
            assert_eq!(i32::from(e.code), -32602);
        }
    }
}
