//! `tandem lsp`: the language server over stdio.
//!
//! [`TandemServer`] implements tower-lsp-server's `LanguageServer` for the standard methods
//! (initialize, text sync, configuration, shutdown) and registers the `tandem/...` requests as
//! custom methods. Every custom request takes its params as raw JSON and parses them with
//! [`parse_params`], so an error names the field (-32602), and answers at once: runs are spawned
//! by [`Sessions`]. Documents are updated under a std `Mutex`, never held across an `.await`,
//! in the order tower-lsp-server delivers the notifications.
//!
//! tower-lsp-server reads and writes in-memory pipes: [`crate::transport::lsp`] reads stdin,
//! answers malformed frames itself and passes on only well-formed ones, so bad input never
//! stops the server. Nothing but protocol goes to stdout: logs go to stderr (and
//! `window/logMessage`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use tandem_ai::sync::{lock, write_lock};

use serde::Serialize;
use serde_json::Value;
use tandem_protocol::capabilities::ClientCapability;
use tandem_protocol::errors::parse_params;
use tandem_protocol::requests::{
    AbortParams, CompactParams, ModelsListParams, ModelsSetParams, PromptParams, PromptResult,
    SessionResult, SessionsEntriesParams, SessionsForkParams, SessionsListParams,
    SessionsNewParams, SessionsOpenParams, StateParams, ThinkingSetParams, ThinkingSetResult,
    UndoParams,
};
use tandem_protocol::{methods, Request, SessionId, TandemError};
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use super::actions::{self, DiagnosticMemory};
use super::answer;
use super::client::{absent_params_as_empty, rpc_error, ClientEvents, LspEditor, Outbox};
use super::commands::{self, create_session, CommandDeps, Run};
use super::config::{capabilities, ServerConfig, SessionDeps};
use super::documents::{DocumentStore, TextChange};
use super::position::{self as pos, PositionEncoding};
use super::progress::{self, Progress};
use super::prompt_context::PendingContext;
use super::sessions::Sessions;
use super::workspace::client::EditCapabilities;
use super::workspace::UnsavedEdits;
use crate::host::{Origin, SessionOptions};
use crate::transport::lsp::Transport;
use crate::transport::MessageLimit;
use crate::uri::to_path as uri_path;

/// The language server's state.
pub struct TandemServer {
    client: Client,
    docs: Arc<Mutex<DocumentStore>>,
    sessions: Arc<Sessions>,
    config: Arc<ServerConfig>,
    events: Arc<AtomicBool>,
    edit_capabilities: Arc<RwLock<EditCapabilities>>,
    memory: Arc<DiagnosticMemory>,
    progress: Arc<Progress>,
    /// The client answers `workspace/configuration`.
    pulls_configuration: AtomicBool,
}

fn answer<T: Serialize>(result: Result<T, TandemError>) -> RpcResult<Value> {
    let value = result.map_err(rpc_error)?;
    serde_json::to_value(value).map_err(|e| rpc_error(TandemError::internal(e.to_string())))
}

fn parse<R: Request>(params: Value) -> RpcResult<R> {
    parse_params::<R>(params).map_err(rpc_error)
}

impl TandemServer {
    /// A server talking to `client`, whose sessions start from `options` (the command line's)
    /// under the editor's configuration. Its warnings and errors are also shown in the editor's
    /// log (`window/logMessage`). Its events count as written once `outbox` saw them taken.
    pub fn new(client: Client, options: SessionOptions, outbox: Arc<Outbox>) -> Self {
        let (mirror, mut mirrored) = tokio::sync::mpsc::unbounded_channel();
        crate::logging::set_mirror(mirror);
        let log_client = client.clone();
        tokio::spawn(async move {
            while let Some((level, text)) = mirrored.recv().await {
                let typ = if level == tracing::Level::ERROR {
                    MessageType::ERROR
                } else {
                    MessageType::WARNING
                };
                log_client.log_message(typ, text).await;
            }
        });
        let events = Arc::new(AtomicBool::new(false));
        let config = Arc::new(ServerConfig::new(options));
        let sink = Arc::new(ClientEvents::new(client.clone(), events.clone(), outbox));
        let root = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let docs = Arc::new(Mutex::new(DocumentStore::new(PositionEncoding::Utf16)));
        let edit_capabilities = Arc::new(RwLock::new(EditCapabilities::default()));
        let deps = SessionDeps {
            documents: docs.clone(),
            editor: Arc::new(LspEditor::new(client.clone(), edit_capabilities.clone())),
            unsaved: Arc::new(UnsavedEdits::new()),
            inflight: Arc::new(super::workspace::InFlight::new()),
        };
        TandemServer {
            client: client.clone(),
            docs,
            sessions: Arc::new(Sessions::new(sink, config.clone(), deps, root)),
            config,
            events,
            edit_capabilities,
            memory: Arc::new(DiagnosticMemory::default()),
            progress: Arc::new(Progress::new(client)),
            pulls_configuration: AtomicBool::new(false),
        }
    }

    /// The live sessions (for aborting them when the server exits).
    pub fn sessions(&self) -> Arc<Sessions> {
        self.sessions.clone()
    }

    /// Creates a session.
    async fn create(&self, origin: Origin, cwd: Option<String>) -> Result<SessionId, TandemError> {
        create_session(self.sessions.clone(), origin, cwd).await
    }

    fn command_deps(&self) -> CommandDeps {
        CommandDeps {
            docs: self.docs.clone(),
            sessions: self.sessions.clone(),
            memory: self.memory.clone(),
            progress: self.progress.clone(),
        }
    }

    /// Reports bad configuration values: shown to the user (`window/showMessage` Warning, as
    /// the spec says) and logged (which the editor also gets as `window/logMessage`).
    async fn warn(&self, warnings: Vec<String>) {
        for w in warnings {
            tracing::warn!("{w}");
            self.client
                .show_message(MessageType::WARNING, format!("Tandem: {w}"))
                .await;
        }
    }

    async fn prompt(&self, params: Value) -> RpcResult<Value> {
        let p: PromptParams = parse(params)?;
        let title = progress::first_line(&p.text).to_string();
        // The context first: a document that is neither open nor on disk is -32602 naming
        // `context.uri`, and no session is created for the refused prompt.
        let context = match &p.context {
            Some(ctx) => {
                let root = self.sessions.root();
                let diagnostics = PendingContext::diagnostics_of(ctx, &self.memory);
                let context =
                    PendingContext::read(&self.docs, ctx, &root, diagnostics).map_err(|e| {
                        rpc_error(TandemError::invalid_params(
                            methods::PROMPT,
                            Some("context.uri"),
                            e,
                        ))
                    })?;
                Some(context)
            }
            None => None,
        };
        let session = match p.session {
            Some(id) => id,
            None => self.create(Origin::New, None).await.map_err(rpc_error)?,
        };
        let run = Run {
            title,
            text: p.text,
            context,
            images: p.images,
            when_busy: p.when_busy,
            summary: false,
        };
        let queued = commands::start(&self.command_deps(), &session, run)
            .await
            .map_err(rpc_error)?;
        answer(Ok(PromptResult { session, queued }))
    }

    async fn abort(&self, params: Value) -> RpcResult<Value> {
        let p: AbortParams = parse(params)?;
        answer(self.sessions.abort(&p.session))
    }

    async fn sessions_new(&self, params: Value) -> RpcResult<Value> {
        let p: SessionsNewParams = parse(params)?;
        let cwd = match p.cwd {
            Some(cwd) => Some(existing_dir(methods::SESSIONS_NEW, &cwd).map_err(rpc_error)?),
            None => None,
        };
        let id = self.create(Origin::New, cwd).await;
        answer(id.map(|session| SessionResult { session }))
    }

    async fn sessions_list(&self, params: Value) -> RpcResult<Value> {
        let p: SessionsListParams = parse(params)?;
        if let Some(cwd) = p.cwd.as_deref().filter(|c| !Path::new(c).is_absolute()) {
            return Err(rpc_error(TandemError::invalid_params(
                methods::SESSIONS_LIST,
                Some("cwd"),
                format!("cwd must be an absolute path, got `{cwd}`"),
            )));
        }
        answer(self.sessions.list(p.cwd.as_deref(), p.all))
    }

    async fn sessions_entries(&self, params: Value) -> RpcResult<Value> {
        let p: SessionsEntriesParams = parse(params)?;
        answer(self.sessions.entries(&p.session))
    }

    async fn sessions_open(&self, params: Value) -> RpcResult<Value> {
        let p: SessionsOpenParams = parse(params)?;
        if !std::path::Path::new(&p.path).is_file() {
            return Err(rpc_error(TandemError::session_file(
                &p.path,
                "no such file",
            )));
        }
        let id = self
            .create(Origin::Open(PathBuf::from(&p.path)), None)
            .await;
        answer(id.map(|session| SessionResult { session }))
    }

    async fn sessions_fork(&self, params: Value) -> RpcResult<Value> {
        let p: SessionsForkParams = parse(params)?;
        let forked = self.sessions.fork(&p.session, p.entry_id).await;
        answer(forked.map(|session| SessionResult { session }))
    }

    async fn state(&self, params: Value) -> RpcResult<Value> {
        let p: StateParams = parse(params)?;
        answer(self.sessions.state(&p.session))
    }

    async fn models_list(&self, params: Value) -> RpcResult<Value> {
        let _: ModelsListParams = parse(params)?;
        // Whether a model is available may run a provider's `!command` key (once per process).
        let sessions = self.sessions.clone();
        let models = tokio::task::spawn_blocking(move || sessions.models())
            .await
            .unwrap_or_else(|e| Err(TandemError::internal(format!("listing models failed: {e}"))));
        answer(models)
    }

    async fn models_set(&self, params: Value) -> RpcResult<Value> {
        let p: ModelsSetParams = parse(params)?;
        // Checking the key may run a provider's `!command`: off the runtime's workers.
        let sessions = self.sessions.clone();
        let set =
            tokio::task::spawn_blocking(move || sessions.set_model(&p.session, &p.provider, &p.id))
                .await
                .unwrap_or_else(|e| {
                    Err(TandemError::internal(format!(
                        "setting the model failed: {e}"
                    )))
                });
        answer(set)
    }

    async fn thinking_set(&self, params: Value) -> RpcResult<Value> {
        let p: ThinkingSetParams = parse(params)?;
        let result = self.sessions.set_thinking(&p.session, p.level);
        answer(result.map(|level| ThinkingSetResult { level }))
    }

    /// `window/workDoneProgress/cancel` (not in tower-lsp-server's trait): aborts the run.
    async fn progress_cancel(&self, params: Value) {
        match serde_json::from_value::<WorkDoneProgressCancelParams>(params) {
            Ok(p) => {
                let token = match p.token {
                    NumberOrString::String(s) => s,
                    NumberOrString::Number(n) => n.to_string(),
                };
                progress::cancel(&self.progress, &self.sessions, &token);
            }
            Err(e) => tracing::warn!("window/workDoneProgress/cancel: {e}; ignored"),
        }
    }

    async fn undo(&self, params: Value) -> RpcResult<Value> {
        let p: UndoParams = parse(params)?;
        answer(self.sessions.undo(&p.session, p.back_to).await)
    }

    async fn compact(&self, params: Value) -> RpcResult<Value> {
        let p: CompactParams = parse(params)?;
        answer(self.sessions.compact(&p.session, p.instructions).await)
    }
}

impl LanguageServer for TandemServer {
    #[allow(deprecated)] // root_uri: the fallback for clients without workspace folders
    async fn initialize(&self, params: InitializeParams) -> RpcResult<InitializeResult> {
        let offers: Vec<&str> = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .map(|e| e.iter().map(|k| k.as_str()).collect())
            .unwrap_or_default();
        let encoding = PositionEncoding::negotiate(&offers);
        lock(&self.docs).set_encoding(encoding);
        let tandem = ClientCapability::from_experimental(params.capabilities.experimental.as_ref());
        self.events.store(tandem.events, Ordering::Release);
        let window = params.capabilities.window.as_ref();
        let progress = window.and_then(|w| w.work_done_progress).unwrap_or(false);
        self.progress.set_supported(progress);
        let opens = answer::opens_documents(&params.capabilities, params.client_info.as_ref());
        self.progress.answers().set_opens_documents(opens);
        *write_lock(&self.edit_capabilities) = EditCapabilities::from_client(&params.capabilities);
        let pulls = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.configuration)
            .unwrap_or(false);
        self.pulls_configuration.store(pulls, Ordering::Release);
        let folders: Vec<PathBuf> = match &params.workspace_folders {
            Some(folders) => folder_paths(folders),
            None => params
                .root_uri
                .iter()
                .filter_map(|u| uri_path(u.as_str()))
                .collect(),
        };
        self.sessions.set_folders(folders);
        let warnings = self
            .config
            .apply_initialization_options(params.initialization_options.as_ref());
        self.warn(warnings).await;
        if !pos::ropey_counts_lsp_lines() {
            tracing::warn!("ropey counts Unicode line breaks; positions may be off");
        }
        Ok(InitializeResult {
            capabilities: capabilities(encoding),
            server_info: Some(ServerInfo {
                name: "tandem".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    /// Aborts every run and answers once they have ended and their events went out (at most
    /// [`SHUTDOWN_WAIT`]), so a client waiting for `settled` gets it before the answer.
    async fn shutdown(&self) -> RpcResult<()> {
        if !self.sessions.shutdown(SHUTDOWN_WAIT).await {
            tracing::warn!("shutdown: a run did not end within {SHUTDOWN_WAIT:?}");
        }
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        lock(&self.docs).open(d.uri.as_str(), &d.language_id, d.version, &d.text);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let changes: Vec<TextChange> = params
            .content_changes
            .into_iter()
            .map(|c| match c.range {
                Some(r) => TextChange::replace(
                    pos::Range::new(
                        pos::Position::new(r.start.line, r.start.character),
                        pos::Position::new(r.end.line, r.end.character),
                    ),
                    c.text,
                ),
                None => TextChange::full(c.text),
            })
            .collect();
        let doc = params.text_document;
        let result = lock(&self.docs).change(doc.uri.as_str(), doc.version, &changes);
        if let Err(e) = result {
            tracing::warn!("{e}");
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.sessions
            .unsaved()
            .settled(params.text_document.uri.as_str());
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.sessions
            .unsaved()
            .settled(params.text_document.uri.as_str());
        self.memory.forget(params.text_document.uri.as_str());
        if let Err(e) = lock(&self.docs).close(params.text_document.uri.as_str()) {
            tracing::warn!("{e}");
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> RpcResult<Option<CodeActionResponse>> {
        Ok(Some(actions::list(&self.docs, &self.memory, &params)))
    }

    async fn code_action_resolve(&self, action: CodeAction) -> RpcResult<CodeAction> {
        Ok(action)
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> RpcResult<Option<Value>> {
        let deps = self.command_deps();
        let result = commands::execute(&deps, &params.command, &params.arguments).await;
        let result = result.map_err(rpc_error)?;
        Ok(Some(serde_json::to_value(result).unwrap_or(Value::Null)))
    }

    /// Applies the settings it carries, or — without a `tandem` member — pulls the section with
    /// `workspace/configuration` when the client can answer (in a task: the answer arrives on
    /// the connection this notification came from).
    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        if let Some(warnings) = self.config.apply_settings(&params.settings) {
            self.warn(warnings).await;
            return;
        }
        if !self.pulls_configuration.load(Ordering::Acquire) {
            return;
        }
        let (client, config) = (self.client.clone(), self.config.clone());
        tokio::spawn(async move {
            let item = ConfigurationItem {
                scope_uri: None,
                section: Some("tandem".to_string()),
            };
            match client.configuration(vec![item]).await {
                Ok(values) => {
                    let section = values.into_iter().next().unwrap_or(Value::Null);
                    // null: the client has no `tandem` section (Helix answers with what is
                    // under `config.tandem`, Neovim's default handler with settings.tandem):
                    // the settings it gave at initialize stay, rather than falling back to
                    // defaults the user never chose.
                    if section.is_null() {
                        tracing::debug!(
                            "workspace/configuration has no `tandem` section; settings unchanged"
                        );
                        return;
                    }
                    for w in config.apply_section(&section) {
                        tracing::warn!("{w}");
                        client
                            .show_message(MessageType::WARNING, format!("Tandem: {w}"))
                            .await;
                    }
                }
                Err(e) => tracing::warn!("workspace/configuration failed: {e}; settings unchanged"),
            }
        });
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let gone = folder_paths(&params.event.removed);
        let mut folders = self.sessions.folders();
        folders.retain(|f| !gone.contains(f));
        folders.extend(folder_paths(&params.event.added));
        self.sessions.set_folders(folders);
    }
}

/// `cwd` checked as the spec says (an absolute path to an existing directory) and resolved;
/// -32602 naming `cwd` otherwise.
fn existing_dir(method: &str, cwd: &str) -> Result<String, TandemError> {
    let invalid = |detail: String| TandemError::invalid_params(method, Some("cwd"), detail);
    let path = Path::new(cwd);
    if !path.is_absolute() {
        return Err(invalid(format!(
            "cwd must be an absolute path, got `{cwd}`"
        )));
    }
    if !path.is_dir() {
        return Err(invalid(format!("cwd `{cwd}` is not an existing directory")));
    }
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(real.display().to_string())
}

fn folder_paths(folders: &[WorkspaceFolder]) -> Vec<PathBuf> {
    folders
        .iter()
        .filter_map(|f| uri_path(f.uri.as_str()))
        .collect()
}

/// How long `shutdown` waits for the runs to end.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Serves the language server on stdin/stdout until `exit` or the end of stdin, with messages
/// above `limit` refused; then ends every run, waiting (at most [`SHUTDOWN_WAIT`]) for it to be
/// saved, and writes the session files of new sessions that have a prompt. Sessions start from
/// `options` (the command line's). Returns the exit status LSP asks for
/// ([`crate::transport::lsp::Ending::exit_code`]).
pub async fn serve_stdio(options: SessionOptions, limit: MessageLimit) -> u8 {
    let sessions: Arc<OnceLock<Arc<Sessions>>> = Arc::new(OnceLock::new());
    let slot = sessions.clone();
    let outbox = Arc::new(Outbox::default());
    let events_outbox = outbox.clone();
    let (service, socket) = LspService::build(move |client| {
        let server = TandemServer::new(client, options.clone(), events_outbox.clone());
        let _ = slot.set(server.sessions());
        server
    })
    .custom_method(methods::PROMPT, TandemServer::prompt)
    .custom_method(methods::ABORT, TandemServer::abort)
    .custom_method(methods::SESSIONS_NEW, TandemServer::sessions_new)
    .custom_method(methods::SESSIONS_LIST, TandemServer::sessions_list)
    .custom_method(methods::SESSIONS_OPEN, TandemServer::sessions_open)
    .custom_method(methods::SESSIONS_FORK, TandemServer::sessions_fork)
    .custom_method(methods::SESSIONS_ENTRIES, TandemServer::sessions_entries)
    .custom_method(methods::STATE, TandemServer::state)
    .custom_method(methods::MODELS_LIST, TandemServer::models_list)
    .custom_method(methods::MODELS_SET, TandemServer::models_set)
    .custom_method(methods::THINKING_SET, TandemServer::thinking_set)
    .custom_method(methods::COMPACT, TandemServer::compact)
    .custom_method(methods::UNDO, TandemServer::undo)
    .custom_method(
        "window/workDoneProgress/cancel",
        TandemServer::progress_cancel,
    )
    .finish();
    let service = tower::ServiceExt::map_request(service, absent_params_as_empty);
    let (input, output, transport) =
        Transport::start(tokio::io::stdin(), tokio::io::stdout(), limit);
    Server::new(input, output, outbox.socket(socket))
        .serve(service)
        .await;
    outbox.close();
    let ending = transport.ending.clone();
    if let Some(sessions) = sessions.get() {
        // A client that went away mid-turn (no `shutdown`) must not cost the turn: abort it and
        // let its partial answer be saved before the process ends.
        if !sessions.shutdown(SHUTDOWN_WAIT).await {
            tracing::warn!("a run did not end within {SHUTDOWN_WAIT:?} of the end of input");
        }
        sessions.save_started();
    }
    transport.finish().await;
    if !ending.exited() {
        tracing::info!("stdin closed; the language server stops");
    }
    ending.exit_code()
}
