//! The server's live sessions: one [`AgentSession`] per id, each with its own event stream.
//!
//! Handlers never wait for a run: [`Sessions::prompt`] spawns the run and answers at once, or
//! queues the text as steering / follow-up when the session is busy. A session's events are
//! forwarded by a task of their own ([`super::events::forward`]), so sessions are independent:
//! one streaming does not slow the others' requests.
//!
//! Sessions are built by [`ServerConfig::build_session`] (the CLI's setup over the editor's
//! workspace), so the server and `tandem -p` agree on every default.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::UNIX_EPOCH;

use tandem_ai::registry::ModelRegistry;
use tandem_ai::ImageContent;
use tandem_coding::agent_session::{AgentSession, SessionError};
use tandem_coding::session::{self, time::format_iso};
use tandem_protocol::requests::{
    CompactResult, ImageInput, ModelEntry, ModelInfo, QueueState, SessionInfo, StateResult,
    WhenBusy,
};
use tandem_protocol::{SessionId, TandemError};

use super::config::{from_core, to_core, BuildError, Origin, ServerConfig, SessionDeps};
use super::events::{forward, EventSink};
use super::workspace::LspWorkspace;
use crate::cli::models::{is_available, model_pool};

/// One live session.
pub struct SessionEntry {
    /// The session.
    pub session: Arc<AgentSession>,
    /// Its working directory.
    pub cwd: PathBuf,
    workspace: Arc<LspWorkspace>,
    busy: Arc<AtomicBool>,
    queue: Arc<Mutex<QueueState>>,
}

/// The live sessions and what building one needs.
pub struct Sessions {
    map: Mutex<HashMap<SessionId, Arc<SessionEntry>>>,
    sink: Arc<dyn EventSink>,
    config: Arc<ServerConfig>,
    deps: SessionDeps,
    /// The workspace folders, first one first; the process's directory when there are none.
    folders: Mutex<Vec<PathBuf>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Sessions {
    /// No sessions yet; events go to `sink`, new sessions start in `root` and work through
    /// `deps`.
    pub fn new(
        sink: Arc<dyn EventSink>,
        config: Arc<ServerConfig>,
        deps: SessionDeps,
        root: PathBuf,
    ) -> Self {
        Sessions {
            map: Mutex::new(HashMap::new()),
            sink,
            config,
            deps,
            folders: Mutex::new(vec![root]),
        }
    }

    /// Sets the workspace folders (new sessions start in the first; the tools work in all).
    pub fn set_folders(&self, folders: Vec<PathBuf>) {
        if !folders.is_empty() {
            *lock(&self.folders) = folders;
        }
    }

    /// The workspace folders.
    pub fn folders(&self) -> Vec<PathBuf> {
        lock(&self.folders).clone()
    }

    /// The directory new sessions start in.
    pub fn root(&self) -> PathBuf {
        let folders = lock(&self.folders);
        folders
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// The session called `id`, or -32001 naming it.
    pub fn get(&self, id: &SessionId) -> Result<Arc<SessionEntry>, TandemError> {
        lock(&self.map)
            .get(id)
            .cloned()
            .ok_or_else(|| TandemError::unknown_session(id))
    }

    /// Creates a session (new, opened or forked, as `origin` says) in `cwd` (default: the
    /// root).
    pub fn create(&self, origin: Origin, cwd: Option<&str>) -> Result<SessionId, TandemError> {
        if let Origin::Open(path) = &origin {
            // A file already live keeps one writer: answer with the live session.
            let wanted = std::fs::canonicalize(path).ok();
            let live = lock(&self.map).iter().find_map(|(id, e)| {
                let file = e.session.session_file()?;
                (std::fs::canonicalize(file).ok() == wanted).then(|| id.clone())
            });
            if let Some(id) = live {
                return Ok(id);
            }
        }
        let cwd = cwd.map(PathBuf::from).unwrap_or_else(|| self.root());
        let built = self
            .config
            .build_session(&origin, &cwd, &self.folders(), &self.deps);
        let (session, workspace) = built.map_err(|e| match (e, &origin) {
            (BuildError::SessionFile(reason), Origin::Open(p) | Origin::Fork(p)) => {
                TandemError::session_file(&p.display().to_string(), reason)
            }
            (e, _) => TandemError::no_model(e.to_string()),
        })?;
        let session = Arc::new(session);
        let id = SessionId(session.with_session(|s| s.session_id().to_string()));
        let queue = Arc::new(Mutex::new(QueueState::default()));
        tokio::spawn(forward(
            id.clone(),
            cwd.clone(),
            session.subscribe(),
            self.sink.clone(),
            queue.clone(),
        ));
        let entry = SessionEntry {
            session,
            cwd,
            workspace,
            busy: Arc::new(AtomicBool::new(false)),
            queue,
        };
        lock(&self.map).insert(id.clone(), Arc::new(entry));
        Ok(id)
    }

    /// Sends `text` to the session: a spawned run when idle (`Ok(false)`), steering or a
    /// follow-up when busy (`Ok(true)`: queued).
    pub async fn prompt(
        &self,
        id: &SessionId,
        text: String,
        images: Vec<ImageInput>,
        when_busy: WhenBusy,
    ) -> Result<bool, TandemError> {
        let entry = self.get(id)?;
        if entry
            .busy
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            let queued = match when_busy {
                WhenBusy::Steer => entry.session.steer(&text).await,
                WhenBusy::FollowUp => entry.session.follow_up(&text).await,
            };
            queued.map_err(|e| TandemError::internal(e.to_string()))?;
            return Ok(true);
        }
        let images = images
            .into_iter()
            .map(|i| ImageContent {
                data: i.data,
                mime_type: i.mime_type,
            })
            .collect();
        entry.workspace.reset_run_approvals();
        let session = entry.session.clone();
        let busy = entry.busy.clone();
        let id = id.clone();
        tokio::spawn(async move {
            if let Err(e) = session.prompt(&text, images).await {
                eprintln!("tandem lsp: session {id}: the prompt failed: {e}");
            }
            busy.store(false, Ordering::Release);
        });
        Ok(false)
    }

    /// Aborts the session's run (nothing when idle).
    pub fn abort(&self, id: &SessionId) -> Result<(), TandemError> {
        self.get(id)?.session.abort();
        Ok(())
    }

    /// Aborts every session's run (shutdown).
    pub fn abort_all(&self) {
        for entry in lock(&self.map).values() {
            entry.session.abort();
        }
    }

    /// The session's state.
    pub fn state(&self, id: &SessionId) -> Result<StateResult, TandemError> {
        let entry = self.get(id)?;
        let s = &entry.session;
        let (model, thinking, count) = s.agent().with_state(|st| {
            (
                model_info(&st.model),
                st.thinking_level,
                st.messages.len() as u64,
            )
        });
        let queued = lock(&entry.queue).clone();
        Ok(StateResult {
            session: id.clone(),
            model: Some(model),
            thinking_level: from_core(thinking),
            running: entry.busy.load(Ordering::Acquire),
            queued,
            message_count: count,
            session_file: s.session_file().map(|p| p.display().to_string()),
            tokens: None,
        })
    }

    /// Sets the session's model to `provider/id`.
    pub fn set_model(
        &self,
        id: &SessionId,
        provider: &str,
        model_id: &str,
    ) -> Result<ModelInfo, TandemError> {
        let entry = self.get(id)?;
        let registry = self.registry()?;
        let model = model_pool(&registry)
            .into_iter()
            .find(|m| m.provider == provider && m.id == model_id)
            .ok_or_else(|| TandemError::unknown_model(provider, model_id))?;
        let info = model_info(&model);
        entry.session.set_model(model).map_err(internal)?;
        Ok(info)
    }

    /// Sets the session's thinking level.
    pub fn set_thinking(
        &self,
        id: &SessionId,
        level: tandem_protocol::requests::ThinkingLevel,
    ) -> Result<(), TandemError> {
        let entry = self.get(id)?;
        entry
            .session
            .set_thinking_level(to_core(level))
            .map_err(internal)
    }

    /// Compacts the session now (refused while it runs).
    pub async fn compact(
        &self,
        id: &SessionId,
        instructions: Option<String>,
    ) -> Result<CompactResult, TandemError> {
        let entry = self.get(id)?;
        if entry.busy.load(Ordering::Acquire) {
            return Err(TandemError::busy(id, tandem_protocol::methods::COMPACT));
        }
        match entry.session.compact(instructions).await {
            Ok(info) => Ok(CompactResult {
                summary: info.summary,
                tokens_before: info.tokens_before,
            }),
            Err(SessionError::Busy) => {
                Err(TandemError::busy(id, tandem_protocol::methods::COMPACT))
            }
            Err(SessionError::Compaction(m)) if m.to_lowercase().contains("nothing") => {
                Err(TandemError::nothing_to_compact(id))
            }
            Err(e) => Err(internal(e)),
        }
    }

    /// The session file of `id`, for forking.
    pub fn session_file(&self, id: &SessionId) -> Result<PathBuf, TandemError> {
        self.get(id)?.session.session_file().ok_or_else(|| {
            TandemError::session_file(
                id.as_str(),
                "the session has no file yet (it is written after the first answer)",
            )
        })
    }

    /// The models the registry knows, with whether each can be called now.
    pub fn models(&self) -> Result<Vec<ModelEntry>, TandemError> {
        let registry = self.registry()?;
        Ok(model_pool(&registry)
            .iter()
            .map(|m| ModelEntry {
                provider: m.provider.clone(),
                id: m.id.clone(),
                name: m.name.clone(),
                reasoning: m.reasoning,
                context_window: m.context_window,
                available: is_available(&registry, m),
            })
            .collect())
    }

    /// Stored sessions of `cwd` (default: the root), or of every directory when `all`.
    pub fn list(&self, cwd: Option<&str>, all: bool) -> Result<Vec<SessionInfo>, TandemError> {
        let dir = self.config.agent_dir().map_err(internal)?;
        let list = if all {
            session::list_all_sessions(&dir)
        } else {
            let cwd = cwd.map(PathBuf::from).unwrap_or_else(|| self.root());
            session::list_sessions(&session::default_session_dir(&dir, &cwd))
        };
        Ok(list.sessions.iter().map(session_info).collect())
    }

    fn registry(&self) -> Result<ModelRegistry, TandemError> {
        let dir = self.config.agent_dir().map_err(internal)?;
        Ok(ModelRegistry::load(dir))
    }
}

fn internal(e: impl std::fmt::Display) -> TandemError {
    TandemError::internal(e.to_string())
}

fn model_info(m: &tandem_ai::Model) -> ModelInfo {
    ModelInfo {
        provider: m.provider.clone(),
        id: m.id.clone(),
        name: m.name.clone(),
        context_window: m.context_window,
    }
}

fn session_info(s: &session::SessionInfo) -> SessionInfo {
    let iso = |t: std::time::SystemTime| {
        let millis = t
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        format_iso(millis)
    };
    SessionInfo {
        id: s.id.clone(),
        path: path_string(&s.path),
        cwd: s.cwd.clone(),
        name: s.name.clone(),
        parent_session_path: s.parent_session_path.clone(),
        created: iso(s.created),
        modified: iso(s.modified),
        message_count: s.message_count as u64,
        first_message: s.first_message.clone(),
    }
}

fn path_string(p: &Path) -> String {
    p.display().to_string()
}
