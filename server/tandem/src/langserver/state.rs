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
    /// Whether the server was seen reporting twice on one changed text: its waits then last
    /// until it has been quiet for a while. (basedpyright reports in stages when it opens
    /// several files, a partial report and the full one ~150 ms later; the wait after opening
    /// covers that, and it reports once per change.)
    reports_in_stages: bool,
}

struct OpenDoc {
    version: i32,
    text: String,
    /// Whether the latest report is about `version`.
    fresh: bool,
    /// Whether this text was opened rather than changed (a first report may be partial).
    opened: bool,
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
                        opened: matches!(sent, Sent::Open(_)),
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

    /// When the latest report on `path` came.
    #[cfg(test)]
    pub(super) fn reported_at(&self, path: &Path) -> Option<Instant> {
        lock(&self.docs).reports.get(path).map(|r| r.at)
    }

    /// Every file with a report.
    pub(super) fn reported(&self) -> Vec<PathBuf> {
        lock(&self.docs).reports.keys().cloned().collect()
    }

    /// Waits until the server reported on the text last sent for `path` and then, when more
    /// reports on it may follow (a document just opened, or a server seen reporting in
    /// stages), sent none for `quiet`; false when `deadline` came first or `alive` says the
    /// server is gone. A file never sent counts as reported.
    pub(super) async fn wait_fresh(
        &self,
        path: &Path,
        quiet: Duration,
        deadline: Instant,
        alive: impl Fn() -> bool,
    ) -> bool {
        let mut reports = self.reports.subscribe();
        loop {
            // Marked seen before the look, so that a report arriving after it wakes the wait.
            reports.borrow_and_update();
            let wake = {
                let docs = lock(&self.docs);
                let Some(doc) = docs.open.get(path) else {
                    return true;
                };
                let staged = doc.opened || docs.reports_in_stages;
                let last = docs.reports.get(path).map(|r| r.at);
                match (doc.fresh, last) {
                    (false, _) => deadline,
                    (true, None) => return true,
                    (true, Some(_)) if !staged || quiet.is_zero() => return true,
                    (true, Some(at)) => {
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
            let mut again = false;
            if let Some(doc) = docs.open.get_mut(&path) {
                // A report without a version is about the latest text sent before it; one for
                // an older version (late) leaves the document waiting for its own.
                if params.version.is_none_or(|v| v == doc.version) {
                    // Reports in stages on opening are expected (the opened wait covers them);
                    // after a change they mark the server.
                    again = doc.fresh && !doc.opened;
                    doc.fresh = true;
                }
            }
            docs.reports_in_stages |= again;
        }
        self.reports.send_modify(|n| *n += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publish(state: &State, version: Option<i32>) {
        let params = json!({"uri": "file:///w/a.py", "version": version, "diagnostics": []});
        state.published(serde_json::from_value(params).expect("publishDiagnostics params"));
    }

    fn sync(state: &State, text: &str) {
        let sent: Result<Sent, ()> = state.sync(Path::new("/w/a.py"), text, |_| Ok(()));
        assert!(sent.is_ok());
    }

    async fn waited(state: &State, quiet_ms: u64) -> (bool, Duration) {
        let start = Instant::now();
        let fresh = state
            .wait_fresh(
                Path::new("/w/a.py"),
                Duration::from_millis(quiet_ms),
                start + Duration::from_secs(2),
                || true,
            )
            .await;
        (fresh, start.elapsed())
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_waits_for_one_report_and_no_quiet_until_reports_come_in_stages() {
        let state = State::new("s", None, Value::Null);
        sync(&state, "one");
        publish(&state, Some(1));
        // Just opened: a first report may be partial, so the quiet wait applies.
        assert_eq!(
            waited(&state, 250).await,
            (true, Duration::from_millis(250))
        );
        sync(&state, "two");
        publish(&state, Some(2));
        // A change, from a server that reports once per text: no quiet wait.
        assert_eq!(waited(&state, 250).await, (true, Duration::ZERO));
        // A late report for an older version does not make the document fresh.
        sync(&state, "three");
        publish(&state, Some(2));
        assert_eq!(waited(&state, 250).await, (false, Duration::from_secs(2)));
        // Two reports on one text: from now on every wait goes quiet first.
        publish(&state, Some(3));
        publish(&state, Some(3));
        sync(&state, "four");
        publish(&state, None);
        assert_eq!(
            waited(&state, 250).await,
            (true, Duration::from_millis(250))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_report_arriving_during_the_wait_ends_it() {
        let state = std::sync::Arc::new(State::new("s", None, Value::Null));
        sync(&state, "one");
        publish(&state, Some(1));
        sync(&state, "two");
        let later = state.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            publish(&later, Some(2));
        });
        assert_eq!(
            waited(&state, 250).await,
            (true, Duration::from_millis(300))
        );
    }
}
