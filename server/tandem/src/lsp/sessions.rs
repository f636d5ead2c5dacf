//! The server's live sessions: one host [`Live`] session per id, each with its own event stream.
//!
//! Handlers never wait for a run: [`Sessions::prompt`] starts the turn in a task of its own and
//! answers at once, or queues the text as steering / follow-up when the session is busy. A
//! session's events are forwarded by the host's pump with this front door's translator
//! ([`LspEvents`]), so sessions are independent: one streaming does not slow the others'
//! requests. A run that fails (it cannot start, or the agent's call fails for good) is reported
//! to the session's stream as an `error` event before `settled`.
//!
//! Sessions are set up by the host ([`crate::host::setup`]), so the server and `tandem -p` agree
//! on every default and report the same problems.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};
use tandem_ai::sync::lock;

use tandem_ai::registry::ModelRegistry;
use tandem_ai::ImageContent;
use tandem_coding::agent_session::{AgentSession, Queue, SessionError};
use tandem_coding::checkpoint::{UndoError, UndoOutcome, UndoReport};
use tandem_coding::compaction::tokens::estimate_context_tokens;
use tandem_coding::intel::LanguageIntel;
use tandem_coding::session::{self, time::format_iso, EntryKind, SessionManager};
use tandem_coding::trust::ProtectedResources;
use tandem_coding::workspace::Workspace as _;
use tandem_coding::BashPolicy;
use tandem_protocol::requests::{
    CompactResult, EntryInfo, ImageInput, ModelEntry, ModelInfo, QueueState, RefusedHunk,
    SessionInfo, StateResult, TokenStats, TrustState, UndoResult, UndoStatus, UndoneTurn, WhenBusy,
};
use tandem_protocol::{methods, SessionId, TandemError};
use tower_lsp_server::ls_types::MessageType;

use super::config::{from_core, to_core, ServerConfig, SessionDeps};
use super::events::{EventSink, EventTransport, LspEvents};
use super::intel::EditorIntel;
use super::prompt_context::PendingContext;
use super::workspace::{LspWorkspace, UnsavedEdits};
use crate::host::models::is_available;
use crate::host::pump::Batching;
use crate::host::setup::{
    apply_trust, prepare, reload_extensions, switch_model, SessionRequest, SetupError, TrustLater,
    Trusted,
};
use crate::host::turns::{Live, Prompt};
use crate::host::Origin;
use crate::langserver::LanguageServers;
use crate::mcp::McpTools;

/// One live session.
pub struct SessionEntry {
    /// The session.
    pub session: Arc<AgentSession>,
    /// Its working directory.
    pub cwd: PathBuf,
    live: Arc<Live>,
    workspace: Arc<LspWorkspace>,
    queue: Arc<Mutex<QueueState>>,
    /// The session's MCP servers (stopped when the entry is dropped, or replaced when the
    /// folder becomes trusted).
    mcp: Mutex<McpTools>,
    /// Tandem's own language servers, when the session uses them (stopped like `mcp`).
    languages: Mutex<Option<Arc<LanguageServers>>>,
    /// Whether the project's configuration is in use.
    trusted: AtomicBool,
    /// The folder's trust question, until it is asked (before the first run).
    pending_trust: Mutex<Option<ProtectedResources>>,
    /// Configuration problems found when the session was built.
    problems: Vec<String>,
    /// The session's extensions (shut down when the entry is closed; killed when dropped;
    /// replaced when the folder is trusted later).
    extensions: Mutex<Option<crate::extensions::Extensions>>,
}

/// The live sessions and what building one needs.
pub struct Sessions {
    map: Mutex<HashMap<SessionId, Arc<SessionEntry>>>,
    /// Configuration problems already shown to the user (each is shown once per server).
    reported: Mutex<HashSet<String>>,
    sink: Arc<dyn EventSink>,
    config: Arc<ServerConfig>,
    deps: SessionDeps,
    /// The workspace folders, first one first; the process's directory when there are none.
    folders: Mutex<Vec<PathBuf>>,
}

impl Sessions {
    /// The documents Tandem's applied edits changed and the editor has not saved.
    pub fn unsaved(&self) -> &UnsavedEdits {
        &self.deps.unsaved
    }

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
            reported: Mutex::new(HashSet::new()),
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

    /// Whether the client receives the event stream (it opted in).
    pub fn events_delivered(&self) -> bool {
        self.sink.delivers()
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
    /// root). Setup reads files and may run a `!command` key: it runs on the blocking pool.
    pub async fn create(
        &self,
        origin: Origin,
        cwd: Option<&str>,
    ) -> Result<SessionId, TandemError> {
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
        let started = self.start(origin.clone(), cwd.clone()).await;
        let (started, workspace) = match started {
            Ok(started) => started,
            Err(e) => {
                let error = match (&e, origin.file()) {
                    (SetupError::SessionFile(reason), Some(path)) => {
                        TandemError::session_file(&path.display().to_string(), reason)
                    }
                    _ => {
                        // Editors without the event stream (Helix, or a plugin that only runs
                        // commands) still learn why nothing runs; a plugin with the stream shows
                        // the request's error itself.
                        if !self.sink.delivers() {
                            self.show(MessageType::ERROR, format!("Tandem: {e}"));
                        }
                        TandemError::no_model(e.to_string())
                    }
                };
                return Err(error);
            }
        };
        self.report(&started.problems);
        let id = SessionId(started.session.with_session(|s| s.session_id().to_string()));
        let queue = Arc::new(Mutex::new(QueueState::default()));
        let records = started.session.calls().clone();
        let live = Live::start(
            started.session,
            LspEvents::new(cwd.clone(), records, queue.clone()),
            EventTransport::new(id.clone(), self.sink.clone()),
            Batching::EDITOR,
        );
        let entry = SessionEntry {
            session: live.session().clone(),
            cwd,
            live,
            workspace,
            queue,
            mcp: Mutex::new(started.mcp),
            languages: Mutex::new(started.languages),
            trusted: AtomicBool::new(started.trusted),
            pending_trust: Mutex::new(started.pending),
            problems: started.problems,
            extensions: Mutex::new(started.extensions),
        };
        lock(&self.map).insert(id.clone(), Arc::new(entry));
        Ok(id)
    }

    /// The host's setup over the editor's workspace: `cwd` and the workspace folders.
    async fn start(
        &self,
        origin: Origin,
        cwd: PathBuf,
    ) -> Result<(crate::host::setup::Started, Arc<LspWorkspace>), SetupError> {
        let agent_dir = self
            .config
            .agent_dir()
            .map_err(|e| SetupError::AgentDir(e.to_string()))?;
        let folders = self.folders();
        let config = self.config.clone();
        let prepared = {
            let (cwd, folders) = (cwd.clone(), folders.clone());
            tokio::task::spawn_blocking(move || {
                let mut trust_problems = Vec::new();
                let trust = config
                    .trust()
                    .now(&agent_dir, &cwd, &folders, &mut |w| trust_problems.push(w));
                prepare(SessionRequest {
                    agent_dir,
                    cwd,
                    options: &config.session_options(),
                    origin,
                    trust,
                    trust_problems,
                    model: None,
                })
            })
            .await
            .map_err(|e| SetupError::Build(anyhow::anyhow!("the setup task failed: {e}")))??
        };
        let mut roots = vec![cwd.clone()];
        roots.extend(folders.iter().filter(|f| !cwd.starts_with(f)).cloned());
        let workspace = Arc::new(
            LspWorkspace::new(
                roots,
                self.deps.documents.clone(),
                self.deps.editor.clone(),
                self.config.workspace_handle(),
            )
            .with_unsaved(self.deps.unsaved.clone())
            .with_inflight(self.deps.inflight.clone()),
        );
        let intel = self.editor_intel(workspace.roots().to_vec());
        // The workspace decides, following `bashPermission` as it is now.
        let ui = Arc::new(super::extension_ui::EditorUi::new(self.deps.editor.clone()));
        let started = prepared
            .with_intel(intel)
            .with_extension_front("lsp", ui)
            .start(workspace.clone(), BashPolicy::Ask, &[])
            .await?;
        Ok((started, workspace))
    }

    /// The editor's language intelligence for a session working in `roots`, when the client
    /// declared `tandem/diagnostics` or `tandem/languageRequest`.
    fn editor_intel(&self, roots: Vec<PathBuf>) -> Option<Arc<dyn LanguageIntel>> {
        EditorIntel::declared(roots, self.deps.documents.clone(), self.deps.editor.clone())
    }

    /// Shows `message` in the editor (from any thread inside the runtime).
    fn show(&self, typ: MessageType, message: String) {
        let editor = self.deps.editor.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { editor.show_message(typ, message).await });
        }
    }

    /// What a turn does with its result: shows the session's notices (it moved to a new file
    /// because another program wrote to its own), as warnings like configuration problems.
    fn notices(
        &self,
        entry: Arc<SessionEntry>,
    ) -> impl FnOnce(Result<(), tandem_coding::agent_session::SessionError>) + Send + 'static {
        let editor = self.deps.editor.clone();
        move |_| {
            let notices = entry.live.take_notices();
            if notices.is_empty() {
                return;
            }
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    for notice in notices {
                        tracing::warn!("{notice}");
                        editor
                            .show_message(MessageType::WARNING, format!("Tandem: {notice}"))
                            .await;
                    }
                });
            }
        }
    }

    /// Shows each configuration problem not shown before, as a warning.
    fn report(&self, problems: &[String]) {
        for problem in problems {
            tracing::warn!("{problem}");
            if lock(&self.reported).insert(problem.clone()) {
                self.show(MessageType::WARNING, format!("Tandem: {problem}"));
            }
        }
    }

    /// Sends `text` (with the editor `context` the model reads before it) to the session: a
    /// turn in a task of its own when idle (`Ok(false)`), steering or a follow-up when busy
    /// (`Ok(true)`: queued).
    pub async fn prompt(
        &self,
        id: &SessionId,
        text: String,
        context: Option<PendingContext>,
        images: Vec<ImageInput>,
        when_busy: WhenBusy,
    ) -> Result<bool, TandemError> {
        let entry = self.get(id)?;
        let images: Vec<ImageContent> = images
            .into_iter()
            .map(|i| ImageContent {
                data: i.data,
                mime_type: i.mime_type,
            })
            .collect();
        let context = context.map(Arc::new);
        if !entry.live.is_busy() {
            entry.workspace.reset_run_approvals();
            let before = self.trust_step(entry.clone());
            // The editor context is completed in the turn's task (it may ask the editor for
            // the file's diagnostics), after the trust question.
            let editor = self.deps.editor.clone();
            let (text, pending) = (text.clone(), context.clone());
            let prompt = async move {
                before.await;
                let context = match pending {
                    Some(pending) => Some(pending.complete(editor.as_ref()).await),
                    None => None,
                };
                Prompt {
                    text,
                    images,
                    context,
                }
            };
            let notices = self.notices(entry.clone());
            match entry.live.spawn_prepared(prompt, notices) {
                Ok(()) => return Ok(false),
                // Another prompt started it meanwhile: this one joins the queue.
                Err(_busy) => {}
            }
        }
        let queue = match when_busy {
            WhenBusy::Steer => Queue::Steering,
            WhenBusy::FollowUp => Queue::FollowUp,
        };
        let context = context.map(|c| c.render());
        let queued = entry.session.queue(&text, context.as_deref(), queue).await;
        queued.map_err(|e| TandemError::internal(e.to_string()))?;
        Ok(true)
    }

    /// The work a turn does first when its folder's trust is still pending: ask (once per
    /// folder), and when trusted give the session the project's configuration. The question is
    /// asked from the turn's task, never a handler.
    fn trust_step(
        &self,
        entry: Arc<SessionEntry>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let config = self.config.clone();
        let editor = self.deps.editor.clone();
        let intel = self.editor_intel(entry.workspace.roots().to_vec());
        async move {
            let Some(resources) = lock(&entry.pending_trust).take() else {
                return;
            };
            let agent_dir = match config.agent_dir() {
                Ok(dir) => dir,
                Err(e) => {
                    tracing::warn!("cannot ask about project trust: {e}");
                    return;
                }
            };
            let timeout = config.workspace_settings().timeout;
            let trusted = config
                .trust()
                .ask(&agent_dir, &resources, editor.as_ref(), timeout)
                .await;
            if !trusted {
                return;
            }
            let options = config.session_options();
            let applied = apply_trust(
                entry.session.clone(),
                TrustLater {
                    trusted: true,
                    agent_dir: &agent_dir,
                    cwd: &entry.cwd,
                    options: &options,
                    workspace: entry.workspace.clone(),
                    bash_policy: BashPolicy::Ask,
                    servers: &[],
                    intel,
                },
            )
            .await;
            match applied {
                Ok(Trusted {
                    mcp,
                    languages,
                    problems,
                }) => {
                    let old = std::mem::replace(&mut *lock(&entry.mcp), mcp);
                    old.shutdown().await;
                    let old = std::mem::replace(&mut *lock(&entry.languages), languages);
                    if let Some(old) = old {
                        old.shutdown().await;
                    }
                    entry.trusted.store(true, Ordering::Release);
                    let old = lock(&entry.extensions).take();
                    let ui = Arc::new(super::extension_ui::EditorUi::new(editor.clone()));
                    let (extensions, more) = reload_extensions(
                        &entry.session,
                        &agent_dir,
                        &entry.cwd,
                        &options,
                        true,
                        ("lsp", ui),
                        old,
                    )
                    .await;
                    *lock(&entry.extensions) = extensions;
                    for problem in problems.into_iter().chain(more) {
                        tracing::warn!("{problem}");
                        editor
                            .show_message(MessageType::WARNING, format!("Tandem: {problem}"))
                            .await;
                    }
                }
                Err(e) => {
                    let message = format!(
                        "Tandem: the folder is trusted, but its configuration could not be \
                         loaded: {e:#}"
                    );
                    editor.show_message(MessageType::ERROR, message).await;
                }
            }
        }
    }

    /// Aborts the session's run (nothing when idle).
    pub fn abort(&self, id: &SessionId) -> Result<(), TandemError> {
        self.get(id)?.session.abort();
        Ok(())
    }

    /// Aborts every session's run.
    pub fn abort_all(&self) {
        for entry in lock(&self.map).values() {
            entry.session.abort();
        }
    }

    /// Aborts every run and waits up to `limit` for them to end and their events (the last
    /// `settled` among them) to be sent; whether all did.
    pub async fn shutdown(&self, limit: Duration) -> bool {
        let entries: Vec<_> = lock(&self.map).values().cloned().collect();
        for entry in &entries {
            entry.session.abort();
        }
        let deadline = tokio::time::Instant::now() + limit;
        let mut all = true;
        for entry in &entries {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            all &= entry.live.idle(left).await;
        }
        // The extensions hear `session_shutdown`, within what is left of the limit.
        for entry in &entries {
            let extensions = lock(&entry.extensions).take();
            if let Some(extensions) = extensions {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let _ = tokio::time::timeout(left, extensions.shutdown()).await;
            }
        }
        all
    }

    /// Writes the file of every new session that has a prompt but no answer yet (pi writes a
    /// session's file at its first answer): the prompt of a turn that could not finish is kept.
    pub fn save_started(&self) {
        let entries: Vec<_> = lock(&self.map).values().cloned().collect();
        for entry in &entries {
            entry.live.save_started();
        }
    }

    /// The session's state.
    pub fn state(&self, id: &SessionId) -> Result<StateResult, TandemError> {
        let entry = self.get(id)?;
        let s = &entry.session;
        let (model, thinking) = s
            .agent()
            .with_state(|st| (model_info(&st.model), st.thinking_level));
        // What `tandem/sessions/list` counts for the same session: its `message` entries, every
        // branch (not the hidden editor context, a `custom_message`, nor summaries).
        let count = s.with_session(|m| m.totals().messages);
        let queued = lock(&entry.queue).clone();
        let extensions = lock(&entry.extensions)
            .as_ref()
            .map(|e| e.loaded().iter().map(|p| p.display().to_string()).collect())
            .unwrap_or_default();
        Ok(StateResult {
            session: id.clone(),
            model: Some(model),
            thinking_level: from_core(thinking),
            running: entry.live.is_busy(),
            queued,
            message_count: count,
            // Absent until the file exists (it is written at the first answer).
            session_file: s
                .with_session(|m| {
                    m.is_written()
                        .then(|| m.session_file().map(Path::to_path_buf))
                })
                .flatten()
                .map(|p| p.display().to_string()),
            tokens: token_stats(s),
            extensions,
            trust: if lock(&entry.pending_trust).is_some() {
                TrustState::Pending
            } else if entry.trusted.load(Ordering::Acquire) {
                TrustState::Trusted
            } else {
                TrustState::Untrusted
            },
            config_problems: entry.problems.clone(),
        })
    }

    /// Forks session `id` at `entry_id` (the current leaf when `None`) into a new live session
    /// whose file holds the path from the root to that entry. Refused while `id` runs; an
    /// unknown entry is -32602 naming `entryId`.
    pub async fn fork(
        &self,
        id: &SessionId,
        entry_id: Option<String>,
    ) -> Result<SessionId, TandemError> {
        let entry = self.get(id)?;
        if entry.live.is_busy() {
            return Err(TandemError::busy(id, methods::SESSIONS_FORK));
        }
        let (session, source) = (entry.session.clone(), id.clone());
        let path = tokio::task::spawn_blocking(move || {
            let forked = session.with_session(|s| s.fork(entry_id.as_deref()));
            let forked = forked.map_err(|e| match e {
                session::SessionError::EntryNotFound { id: missing } => {
                    TandemError::invalid_params(
                        methods::SESSIONS_FORK,
                        Some("entryId"),
                        format!("entryId: session {source} has no entry {missing}"),
                    )
                }
                e => TandemError::session_file(source.as_str(), e),
            })?;
            write_fork(&forked)
        })
        .await
        .unwrap_or_else(|e| Err(TandemError::internal(format!("fork failed: {e}"))))?;
        let cwd = entry.cwd.to_str().map(str::to_string);
        self.create(Origin::Open(path), cwd.as_deref()).await
    }

    /// Sets the session's model to `provider/id`: -32004 for an unknown model, -32003 when its
    /// key is missing or cannot be read (as setup refuses it). Blocking (may run a `!command`
    /// key).
    pub fn set_model(
        &self,
        id: &SessionId,
        provider: &str,
        model_id: &str,
    ) -> Result<ModelInfo, TandemError> {
        let entry = self.get(id)?;
        let registry = self.registry()?;
        let model = registry
            .all()
            .iter()
            .find(|&m| m.provider == provider && m.id == model_id)
            .cloned()
            .ok_or_else(|| TandemError::unknown_model(provider, model_id))?;
        let info = model_info(&model);
        switch_model(&entry.session, &registry, model).map_err(|e| match e {
            SetupError::Model(e) => TandemError::no_model(e.to_string()),
            other => internal(other),
        })?;
        Ok(info)
    }

    /// The entries of the session's current branch, root first, for picking a fork point.
    pub fn entries(&self, id: &SessionId) -> Result<Vec<EntryInfo>, TandemError> {
        let entry = self.get(id)?;
        Ok(entry
            .session
            .with_session(|s| s.branch_path().iter().map(|e| entry_info(e)).collect()))
    }

    /// Sets the session's thinking level; answers the level in effect (lower than asked when
    /// the model cannot do it).
    pub fn set_thinking(
        &self,
        id: &SessionId,
        level: tandem_protocol::requests::ThinkingLevel,
    ) -> Result<tandem_protocol::requests::ThinkingLevel, TandemError> {
        let entry = self.get(id)?;
        let model = entry.session.agent().with_state(|s| s.model.clone());
        let effective = model.effective_thinking(to_core(level));
        entry
            .session
            .set_thinking_level(effective)
            .map_err(internal)?;
        Ok(from_core(effective))
    }

    /// Undoes the session's last turn (or every turn after `back_to`) through the editor: one
    /// `workspace/applyEdit` under the edit mode's confirmation. Refused while it runs.
    pub async fn undo(
        &self,
        id: &SessionId,
        back_to: Option<String>,
    ) -> Result<UndoResult, TandemError> {
        let entry = self.get(id)?;
        if entry.live.is_busy() {
            return Err(TandemError::busy(id, methods::UNDO));
        }
        // The edit goes to the editor from a task of its own, never from the handler.
        let session = entry.session.clone();
        let workspace = entry.workspace.clone();
        let undone =
            tokio::spawn(async move { session.undo(workspace.as_ref(), back_to.as_deref()).await })
                .await
                .map_err(|e| TandemError::internal(format!("the undo failed: {e}")))?;
        match undone {
            Ok(report) => Ok(undo_result(&report)),
            Err(UndoError::NothingToUndo) => Ok(UndoResult {
                status: UndoStatus::NothingToUndo,
                turns: Vec::new(),
                changed: Vec::new(),
                deleted: Vec::new(),
                refused: Vec::new(),
                message: UndoError::NothingToUndo.to_string(),
            }),
            Err(UndoError::Busy) => Err(TandemError::busy(id, methods::UNDO)),
            Err(e @ UndoError::UnknownTurn(_)) => Err(TandemError::invalid_params(
                methods::UNDO,
                Some("backTo"),
                e,
            )),
            Err(e) => Err(internal(e)),
        }
    }

    /// Compacts the session now (refused while it runs).
    pub async fn compact(
        &self,
        id: &SessionId,
        instructions: Option<String>,
    ) -> Result<CompactResult, TandemError> {
        let entry = self.get(id)?;
        if entry.live.is_busy() {
            return Err(TandemError::busy(id, tandem_protocol::methods::COMPACT));
        }
        // In a task of its own, so a `$/cancelRequest` (which drops this future) aborts the
        // compaction and its `compaction_end` still goes out.
        let session = entry.session.clone();
        let mut guard = AbortOnDrop(Some(session.clone()));
        let compacted = tokio::spawn(async move { session.compact(instructions).await })
            .await
            .map_err(|e| TandemError::internal(format!("the compaction failed: {e}")))?;
        guard.0 = None;
        match compacted {
            Ok(info) => Ok(CompactResult {
                summary: info.summary,
                tokens_before: info.tokens_before,
            }),
            Err(SessionError::Busy) => {
                Err(TandemError::busy(id, tandem_protocol::methods::COMPACT))
            }
            Err(SessionError::Aborted(_)) => Err(TandemError::cancelled(&format!(
                "{} of session {id}",
                tandem_protocol::methods::COMPACT
            ))),
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
        Ok(registry
            .all()
            .iter()
            .map(|m| ModelEntry {
                provider: m.provider.clone(),
                id: m.id.clone(),
                name: m.name.clone(),
                reasoning: m.reasoning,
                context_window: m.context_window,
                available: is_available(&registry, m),
                key_env: tandem_ai::keys::env_var_names(&m.provider)
                    .iter()
                    .map(|name| name.to_string())
                    .collect(),
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
            session::list_sessions(&self.config.session_options().session_dir(&dir, &cwd))
        };
        Ok(list.sessions.iter().map(session_info).collect())
    }

    fn registry(&self) -> Result<ModelRegistry, TandemError> {
        let dir = self.config.agent_dir().map_err(internal)?;
        Ok(ModelRegistry::load(dir))
    }
}

/// Aborts a session's work when dropped (a request handler cancelled mid-way), unless disarmed.
struct AbortOnDrop(Option<Arc<AgentSession>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(session) = self.0.take() {
            session.abort();
        }
    }
}

/// The protocol's answer for an undo.
fn undo_result(report: &UndoReport) -> UndoResult {
    let uri = |path: &Path| crate::uri::string_from_path(path);
    UndoResult {
        status: match report.outcome {
            UndoOutcome::Applied => UndoStatus::Applied,
            UndoOutcome::Rejected { .. } => UndoStatus::Rejected,
            UndoOutcome::NothingToApply => UndoStatus::NothingToApply,
        },
        turns: report
            .turns
            .iter()
            .map(|t| UndoneTurn {
                checkpoint: t.checkpoint.clone(),
                turn: t.turn.clone(),
                prompt: t.prompt.clone(),
            })
            .collect(),
        changed: report.changed.iter().map(|p| uri(p)).collect(),
        deleted: report.deleted.iter().map(|p| uri(p)).collect(),
        refused: report
            .refused
            .iter()
            .map(|h| RefusedHunk {
                uri: uri(Path::new(&h.path)),
                line: u32::try_from(h.line.saturating_sub(1)).unwrap_or(u32::MAX),
                reason: h.reason.clone(),
            })
            .collect(),
        message: report.summary(),
    }
}

/// An entry as `tandem/sessions/entries` shows it.
fn entry_info(e: &session::SessionEntry) -> EntryInfo {
    let (role, text) = match &e.kind {
        EntryKind::Message { message } => {
            let value = serde_json::to_value(message).unwrap_or_default();
            (
                Some(message.role().to_string()),
                content_text(&value["content"]),
            )
        }
        EntryKind::Compaction { summary, .. } | EntryKind::BranchSummary { summary, .. } => {
            (None, Some(summary.clone()))
        }
        EntryKind::CustomMessage {
            content,
            display: true,
            ..
        } => (None, Some(content.text())),
        _ => (None, None),
    };
    EntryInfo {
        id: e.id.clone(),
        kind: e.kind.type_name().to_string(),
        role,
        text: text.filter(|t| !t.is_empty()).map(|t| preview(&t, 200)),
        timestamp: e.timestamp.clone(),
    }
}

/// The text blocks of a message's `content` (a string or blocks), joined.
fn content_text(content: &serde_json::Value) -> Option<String> {
    match content {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(serde_json::Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn preview(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

/// The fork's file, written now even when it holds no assistant message yet (the core writes
/// such a fork lazily), so it can be opened like any stored session.
fn write_fork(forked: &SessionManager) -> Result<PathBuf, TandemError> {
    let path = forked
        .session_file()
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            TandemError::internal("the forked session has no file (an in-memory session)")
        })?;
    if forked.is_written() {
        return Ok(path);
    }
    let header = serde_json::to_string(forked.header()).map_err(internal)?;
    let mut text = header + "\n";
    for e in forked.entries() {
        let line = forked
            .entry_line(&e.id)
            .map(|line| line.into_owned())
            .map_or_else(|| serde_json::to_string(&e), Ok)
            .map_err(internal)?;
        text.push_str(&line);
        text.push('\n');
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(internal)?;
    }
    std::fs::write(&path, text).map_err(|e| TandemError::session_file(&path_string(&path), e))?;
    Ok(path)
}

/// Token use over every model call of the session file (all branches: answers, summaries and
/// pi 1.6's usage entries), and the
/// estimated size of the current context; `None` before the first model call.
fn token_stats(s: &AgentSession) -> Option<TokenStats> {
    let mut stats = s.with_session(|m| {
        // Summed as the entries were read and appended: nothing is read back here.
        let totals = m.totals();
        let usage = &totals.usage;
        (totals.usage_records > 0).then(|| TokenStats {
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            cost: usage.cost.total,
            ..TokenStats::default()
        })
    })?;
    let context = s
        .agent()
        .with_state(|st| estimate_context_tokens(&st.messages).tokens);
    stats.context_tokens = Some(context);
    Some(stats)
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

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod fork_tests;
