//! What Tandem's client knows about one server's documents: the text and version each open
//! document was last sent with, the diagnostics the server published for each file (with a
//! generation counting its reports), and whether the latest report is about the text last
//! sent; and its answers to the server's own requests.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use async_lsp::{AnyNotification, AnyRequest, ErrorCode, ResponseError};
use serde_json::{json, Value};
use tandem_ai::sync::lock;
use tandem_coding::intel::Diagnostic;
use tokio::sync::watch;
use tokio::time::Instant;
use tower_lsp_server::ls_types::{ConfigurationParams, PublishDiagnosticsParams};

use super::convert;

/// One server's view of the documents, shared by its client and its main loop's handlers.
pub(super) struct State {
    name: String,
    settings: Option<Value>,
    folders: Value,
    docs: Mutex<Docs>,
    /// Counts every report, to wake those waiting for one.
    reports: watch::Sender<u64>,
}

#[derive(Default)]
struct Docs {
    open: HashMap<PathBuf, OpenDoc>,
    reports: HashMap<PathBuf, Report>,
}

struct OpenDoc {
    version: i32,
    text: String,
    /// Whether the latest report is about `version`.
    fresh: bool,
}

struct Report {
    generation: u64,
    diagnostics: Vec<Diagnostic>,
    at: Instant,
}

/// What [`State::sync`] sent.
pub(super) enum Sent {
    /// Nothing: the server has this text.
    Nothing,
    /// `didOpen` with version 1.
    Open(i32),
    /// `didChange` to this version.
    Change(i32),
}

impl State {
    pub(super) fn new(name: &str, settings: Option<Value>, folders: Value) -> State {
        State {
            name: name.to_string(),
            settings,
            folders,
            docs: Mutex::new(Docs::default()),
            reports: watch::Sender::new(0),
        }
    }

    /// Records `text` as `path`'s content and says what must be sent for the server to have
    /// it; `send` is called under the lock, so versions reach the server in order.
    pub(super) fn sync<E>(
        &self,
        path: &Path,
        text: &str,
        send: impl FnOnce(&Sent) -> Result<(), E>,
    ) -> Result<Sent, E> {
        let mut docs = lock(&self.docs);
        let sent = match docs.open.get(path) {
            None => Sent::Open(1),
            Some(doc) if doc.text == text => Sent::Nothing,
            Some(doc) => Sent::Change(doc.version + 1),
        };
        send(&sent)?;
        match sent {
            Sent::Nothing => {}
            Sent::Open(version) | Sent::Change(version) => {
                docs.open.insert(
                    path.to_path_buf(),
                    OpenDoc {
                        version,
                        text: text.to_string(),
                        fresh: false,
                    },
                );
            }
        }
        Ok(sent)
    }

    /// `path`'s report generation and diagnostics.
    pub(super) fn report(&self, path: &Path) -> (u64, Vec<Diagnostic>) {
        let docs = lock(&self.docs);
        match docs.reports.get(path) {
            Some(r) => (r.generation, r.diagnostics.clone()),
            None => (0, Vec::new()),
        }
    }

    /// Every file with a report.
    pub(super) fn reported(&self) -> Vec<PathBuf> {
        lock(&self.docs).reports.keys().cloned().collect()
    }

    /// Waits until the server reported on the text last sent for `path` and, with `quiet`,
    /// sent no report on it for that long; false when `deadline` came first or `alive` says
    /// the server is gone. A file never sent counts as reported.
    pub(super) async fn wait_fresh(
        &self,
        path: &Path,
        quiet: Option<Duration>,
        deadline: Instant,
        alive: impl Fn() -> bool,
    ) -> bool {
        let mut reports = self.reports.subscribe();
        loop {
            let wake = {
                let docs = lock(&self.docs);
                let Some(doc) = docs.open.get(path) else {
                    return true;
                };
                let last = docs.reports.get(path).map(|r| r.at);
                match (doc.fresh, quiet, last) {
                    (false, _, _) => deadline,
                    (true, None, _) | (true, Some(_), None) => return true,
                    (true, Some(quiet), Some(at)) => {
                        let until = at + quiet;
                        if until <= Instant::now() {
                            return true;
                        }
                        until.min(deadline)
                    }
                }
            };
            if !alive() || Instant::now() >= deadline {
                return false;
            }
            reports.borrow_and_update();
            tokio::select! {
                changed = reports.changed() => {
                    if changed.is_err() {
                        return false;
                    }
                }
                _ = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// The answer to a request from the server.
    pub(super) fn answer(&self, request: &AnyRequest) -> Result<Value, ResponseError> {
        match request.method.as_str() {
            "workspace/configuration" => {
                let params: ConfigurationParams = serde_json::from_value(request.params.clone())
                    .map_err(|e| ResponseError::new(ErrorCode::INVALID_PARAMS, e))?;
                let answers: Vec<Value> = params
                    .items
                    .iter()
                    .map(|item| self.setting(item.section.as_deref()))
                    .collect();
                Ok(Value::Array(answers))
            }
            "workspace/workspaceFolders" => Ok(self.folders.clone()),
            "window/workDoneProgress/create"
            | "client/registerCapability"
            | "client/unregisterCapability"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/inlineValue/refresh"
            | "workspace/codeLens/refresh"
            | "workspace/diagnostic/refresh" => Ok(Value::Null),
            "window/showMessageRequest" => {
                let message = request.params["message"].as_str().unwrap_or_default();
                tracing::info!(target: "tandem::langserver", server = %self.name, "asks: {message}");
                Ok(Value::Null)
            }
            "window/showDocument" => Ok(json!({"success": false})),
            "workspace/applyEdit" => Ok(json!({
                "applied": false,
                "failureReason": "Tandem changes files through its agent's tools only",
            })),
            other => Err(ResponseError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Tandem's client does not handle {other}"),
            )),
        }
    }

    /// `section` (`python.analysis`) of the entry's `settings`, or null.
    fn setting(&self, section: Option<&str>) -> Value {
        let Some(settings) = &self.settings else {
            return Value::Null;
        };
        let mut value = settings;
        for key in section
            .unwrap_or_default()
            .split('.')
            .filter(|k| !k.is_empty())
        {
            match value.get(key) {
                Some(v) => value = v,
                None => return Value::Null,
            }
        }
        value.clone()
    }

    /// Takes a notification from the server; never stops the main loop.
    pub(super) fn notified(
        &self,
        notification: AnyNotification,
    ) -> ControlFlow<async_lsp::Result<()>> {
        match notification.method.as_str() {
            "textDocument/publishDiagnostics" => {
                match serde_json::from_value::<PublishDiagnosticsParams>(notification.params) {
                    Ok(params) => self.published(params),
                    Err(e) => tracing::debug!(
                        target: "tandem::langserver",
                        server = %self.name,
                        "unreadable publishDiagnostics: {e}"
                    ),
                }
            }
            "window/logMessage" | "window/showMessage" => {
                let message = notification.params["message"].as_str().unwrap_or_default();
                tracing::debug!(target: "tandem::langserver", server = %self.name, "{message}");
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn published(&self, params: PublishDiagnosticsParams) {
        let Some(path) = convert::path(&params.uri) else {
            return;
        };
        let diagnostics = params
            .diagnostics
            .into_iter()
            .map(convert::diagnostic)
            .collect();
        {
            let mut docs = lock(&self.docs);
            let report = docs.reports.entry(path.clone()).or_insert(Report {
                generation: 0,
                diagnostics: Vec::new(),
                at: Instant::now(),
            });
            report.generation += 1;
            report.diagnostics = diagnostics;
            report.at = Instant::now();
            if let Some(doc) = docs.open.get_mut(&path) {
                // A report without a version is about the latest text sent before it; one for
                // an older version (late) leaves the document waiting for its own.
                if params.version.is_none_or(|v| v == doc.version) {
                    doc.fresh = true;
                }
            }
        }
        self.reports.send_modify(|n| *n += 1);
    }
}
