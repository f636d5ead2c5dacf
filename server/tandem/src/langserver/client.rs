//! One running language server: its process, async-lsp's main loop over the process's pipes,
//! the `initialize` handshake, requests bounded in time, document sync, and shutdown.

use std::ffi::OsStr;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_lsp::router::Router;
use async_lsp::{MainLoop, ServerSocket};
use serde_json::{json, Value};
use tandem_coding::intel::{Diagnostic, IntelError};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tower_lsp_server::ls_types::notification::{
    DidChangeConfiguration, DidChangeTextDocument, DidOpenTextDocument, Exit, Initialized,
    Notification,
};
use tower_lsp_server::ls_types::request::{Initialize, Request, Shutdown};
use tower_lsp_server::ls_types::{
    ClientCapabilities, ClientInfo, DidChangeConfigurationParams, DidChangeTextDocumentParams,
    DidOpenTextDocumentParams, InitializeParams, InitializedParams, ServerCapabilities,
    TextDocumentContentChangeEvent, TextDocumentItem, VersionedTextDocumentIdentifier,
    WorkspaceFolder,
};

use super::process::ServerProcess;
use super::spec::ServerSpec;
use super::state::{Sent, State};
use super::Limits;
use crate::uri;

/// How long an error message waits for a dying server's exit status and last stderr lines.
const DEATH_WAIT: Duration = Duration::from_secs(2);

/// async-lsp's typed requests name lsp-types' traits; Tandem's payloads are `ls_types`'. The
/// two describe the same wire format, so an `ls_types` request is sent as is.
struct Via<R>(PhantomData<R>);

impl<R: Request> async_lsp::lsp_types::request::Request for Via<R> {
    type Params = R::Params;
    type Result = R::Result;
    const METHOD: &'static str = R::METHOD;
}

struct ViaNote<N>(PhantomData<N>);

impl<N: Notification> async_lsp::lsp_types::notification::Notification for ViaNote<N> {
    type Params = N::Params;
    const METHOD: &'static str = N::METHOD;
}

/// A started and initialized language server.
pub(super) struct Client {
    name: String,
    command: String,
    root: PathBuf,
    socket: ServerSocket,
    process: ServerProcess,
    capabilities: ServerCapabilities,
    state: Arc<State>,
    limits: Limits,
    stopping: AtomicBool,
    main_loop: JoinHandle<()>,
}

impl Drop for Client {
    fn drop(&mut self) {
        self.main_loop.abort();
        self.process.kill();
    }
}

impl Client {
    /// Starts `spec`'s server for `root` and completes `initialize` within the limit.
    pub(super) async fn start(
        spec: &ServerSpec,
        root: &Path,
        path: &OsStr,
        limits: Limits,
    ) -> Result<Client, IntelError> {
        let name = &spec.name;
        let label = format!("language server `{name}` (`{}`)", spec.command_line());
        let spawned = ServerProcess::spawn(spec, root, path)
            .map_err(|why| IntelError::Failed(format!("{label} could not be started: {why}.")))?;
        let folder_uri = uri::from_path(root).ok_or_else(|| {
            IntelError::Failed(format!(
                "{label}: {} is not an absolute path",
                root.display()
            ))
        })?;
        let folder_name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string());
        let folders = vec![WorkspaceFolder {
            uri: folder_uri.clone(),
            name: folder_name,
        }];
        let state = Arc::new(State::new(
            name,
            spec.settings.clone(),
            serde_json::to_value(&folders).unwrap_or(Value::Null),
        ));
        let (main_loop, socket) = MainLoop::new_client(|_| {
            let mut router = Router::new(state.clone());
            router
                .unhandled_request(|state, request| {
                    let answer = state.answer(&request);
                    async move { answer }
                })
                .unhandled_notification(|state, notification| state.notified(notification))
                .unhandled_event(|_, _| ControlFlow::Continue(()));
            router
        });
        let server = name.clone();
        let (stdin, stdout) = (spawned.stdin, spawned.stdout);
        let main_loop = tokio::spawn(async move {
            let ended = main_loop
                .run_buffered(stdout.compat(), stdin.compat_write())
                .await;
            if let Err(e) = ended {
                tracing::debug!(target: "tandem::langserver", %server, "connection ended: {e}");
            }
        });
        let client = Client {
            name: name.clone(),
            command: spec.command_line(),
            root: root.to_path_buf(),
            socket,
            process: spawned.process,
            capabilities: ServerCapabilities::default(),
            state,
            limits,
            stopping: AtomicBool::new(false),
            main_loop,
        };
        client.initialize(spec, folders).await
    }

    async fn initialize(
        mut self,
        spec: &ServerSpec,
        folders: Vec<WorkspaceFolder>,
    ) -> Result<Client, IntelError> {
        #[allow(deprecated)] // root_uri and root_path: older servers read only those.
        let params = InitializeParams {
            process_id: Some(std::process::id()),
            root_path: Some(self.root.display().to_string()),
            root_uri: Some(folders[0].uri.clone()),
            initialization_options: spec.initialization_options.clone(),
            capabilities: capabilities(),
            workspace_folders: Some(folders),
            client_info: Some(ClientInfo {
                name: "tandem".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            ..InitializeParams::default()
        };
        let limit = self.limits.initialize;
        let answer = tokio::select! {
            answer = tokio::time::timeout(limit, self.socket.request::<Via<Initialize>>(params)) => answer,
            _ = self.process.wait_exit() => Ok(Err(async_lsp::Error::ServiceStopped)),
        };
        let result = match answer {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => return Err(self.failure(Initialize::METHOD, e).await),
            Err(_) => {
                return Err(IntelError::Failed(format!(
                    "{} did not answer `initialize` within {} s, so it was stopped. Check that \
                     `{}` starts a language server that speaks LSP over stdio.",
                    self.label(),
                    limit.as_secs_f32(),
                    self.command
                )))
            }
        };
        if let Some(encoding) = &result.capabilities.position_encoding {
            if encoding.as_str() != "utf-16" {
                tracing::warn!(
                    target: "tandem::langserver",
                    server = %self.name,
                    "chose position encoding {} though only utf-16 was offered; read as utf-16",
                    encoding.as_str()
                );
            }
        }
        self.capabilities = result.capabilities;
        self.notify::<Initialized>(InitializedParams {})?;
        if let Some(settings) = &spec.settings {
            self.notify::<DidChangeConfiguration>(DidChangeConfigurationParams {
                settings: settings.clone(),
            })?;
        }
        tracing::debug!(
            target: "tandem::langserver",
            server = %self.name,
            root = %self.root.display(),
            "initialized"
        );
        Ok(self)
    }

    /// The server's name.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// What the server said it can do.
    pub(super) fn capabilities(&self) -> &ServerCapabilities {
        &self.capabilities
    }

    /// Whether it still runs.
    pub(super) fn alive(&self) -> bool {
        self.process.exited().is_none() && !self.main_loop.is_finished()
    }

    /// Its process id (its process group's), while known.
    #[cfg(test)]
    pub(super) fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// How its process exited, once it did.
    pub(super) fn exit_status(&self) -> Option<String> {
        self.process.exited()
    }

    /// Why it is not running, when it is not.
    pub(super) async fn death(&self) -> String {
        let exit = self
            .process
            .wait_exit_for(DEATH_WAIT)
            .await
            .unwrap_or_else(|| "its connection closed".to_string());
        let stderr = self.process.stderr_excerpt(DEATH_WAIT).await;
        format!("{exit}){}", stderr_note(&stderr))
    }

    fn label(&self) -> String {
        format!("language server `{}`", self.name)
    }

    /// Sends request `R`, answered within the request limit.
    pub(super) async fn request<R: Request>(
        &self,
        params: R::Params,
    ) -> Result<R::Result, IntelError> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err(stopped(&self.name));
        }
        let limit = self.limits.request;
        match tokio::time::timeout(limit, self.socket.request::<Via<R>>(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(e)) => Err(self.failure(R::METHOD, e).await),
            Err(_) => Err(IntelError::Failed(format!(
                "{} did not answer `{}` within {} s.",
                self.label(),
                R::METHOD,
                limit.as_secs_f32()
            ))),
        }
    }

    fn notify<N: Notification>(&self, params: N::Params) -> Result<(), IntelError> {
        self.socket
            .notify::<ViaNote<N>>(params)
            .map_err(|_| IntelError::Failed(format!("{} is not running.", self.label())))
    }

    async fn failure(&self, method: &str, error: async_lsp::Error) -> IntelError {
        let label = self.label();
        IntelError::Failed(match error {
            async_lsp::Error::Response(e) => format!(
                "{label} answered `{method}` with an error: {} (code {}).",
                e.message, e.code.0
            ),
            async_lsp::Error::Deserialize(e) => {
                format!("{label} answered `{method}` with something Tandem cannot read: {e}.")
            }
            _ if self.stopping.load(Ordering::SeqCst) => {
                return stopped(&self.name);
            }
            _ => format!("{label} exited during `{method}` ({}", self.death().await),
        })
    }

    /// Gives the server `text` as `path`'s content (`didOpen`, or a whole-text `didChange`
    /// when it differs from what the server has).
    pub(super) fn sync(&self, path: &Path, text: &str, language: &str) -> Result<Sent, IntelError> {
        let Some(uri) = uri::from_path(path) else {
            return Err(IntelError::Failed(format!(
                "{} is not an absolute path",
                path.display()
            )));
        };
        self.state.sync(path, text, |sent| match *sent {
            Sent::Nothing => Ok(()),
            Sent::Open(version) => self.notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                text_document: TextDocumentItem {
                    uri: uri.clone(),
                    language_id: language.to_string(),
                    version,
                    text: text.to_string(),
                },
            }),
            Sent::Change(version) => {
                self.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
                    text_document: VersionedTextDocumentIdentifier {
                        uri: uri.clone(),
                        version,
                    },
                    content_changes: vec![TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: text.to_string(),
                    }],
                })
            }
        })
    }

    /// `path`'s report generation and diagnostics.
    pub(super) fn report(&self, path: &Path) -> (u64, Vec<Diagnostic>) {
        self.state.report(path)
    }

    /// When the server last reported on `path` (measurements).
    #[cfg(test)]
    pub(super) fn reported_at(&self, path: &Path) -> Option<Instant> {
        self.state.reported_at(path)
    }

    /// Every file the server reported on.
    pub(super) fn reported(&self) -> Vec<PathBuf> {
        self.state.reported()
    }

    /// Waits for a report on the text last sent for `path` (and `quiet` after it when more may
    /// follow: [`State::wait_fresh`]); false when `deadline` came first or the server stopped.
    pub(super) async fn wait_fresh(&self, path: &Path, quiet: Duration, deadline: Instant) -> bool {
        self.state
            .wait_fresh(path, quiet, deadline, || self.alive())
            .await
    }

    /// `shutdown` and `exit` (each within the shutdown limit), then the process group killed.
    pub(super) async fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        if self.alive() {
            let limit = self.limits.shutdown;
            let asked = tokio::time::timeout(limit, self.socket.request::<Via<Shutdown>>(())).await;
            if matches!(asked, Ok(Ok(()))) {
                let _ = self.notify::<Exit>(());
                let _ = self.process.wait_exit_for(limit).await;
            }
        }
        self.process.kill();
        self.main_loop.abort();
    }
}

fn stopped(name: &str) -> IntelError {
    IntelError::Failed(format!(
        "language server `{name}` was stopped with the session."
    ))
}

fn stderr_note(stderr: &str) -> String {
    if stderr.is_empty() {
        ". It wrote nothing to stderr.".to_string()
    } else {
        format!(". Its last stderr output:\n{stderr}")
    }
}

/// What Tandem's client can do: document sync, published diagnostics (with versions), the
/// requests of the language tools; UTF-16 positions only.
fn capabilities() -> ClientCapabilities {
    let kinds: Vec<u32> = (1..=26).collect();
    let value = json!({
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "didChangeConfiguration": {"dynamicRegistration": false},
            "symbol": {"dynamicRegistration": false, "symbolKind": {"valueSet": kinds}},
            "workspaceEdit": {"documentChanges": true},
        },
        "textDocument": {
            "synchronization": {"dynamicRegistration": false, "didSave": false},
            "publishDiagnostics": {"relatedInformation": false, "versionSupport": true},
            "definition": {"dynamicRegistration": false, "linkSupport": true},
            "references": {"dynamicRegistration": false},
            "documentSymbol": {
                "dynamicRegistration": false,
                "hierarchicalDocumentSymbolSupport": true,
                "symbolKind": {"valueSet": kinds},
            },
            "hover": {"dynamicRegistration": false, "contentFormat": ["markdown", "plaintext"]},
            "rename": {"dynamicRegistration": false, "prepareSupport": false},
        },
        "window": {"workDoneProgress": true},
    });
    // A fixed value the crate's own type reads (the unit tests check it does).
    serde_json::from_value(value).unwrap_or_default()
}

#[cfg(test)]
pub(super) fn client_capabilities_for_tests() -> Value {
    serde_json::to_value(capabilities()).unwrap_or_default()
}
