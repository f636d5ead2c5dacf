//! The editor's language intelligence: [`EditorIntel`] implements tandem-coding's
//! [`LanguageIntel`] by asking the client, which runs every language server of the workspace
//! (Tandem sees none of their diagnostics or answers), with the two server → client requests
//! of the protocol extension: `tandem/diagnostics` and `tandem/languageRequest`.
//!
//! - Only what the client declared: diagnostics with `experimental.tandem.diagnostics`, the
//!   other features with `experimental.tandem.languageRequests` ([`EditorIntel::features`]).
//! - Only documents inside the workspace are asked about; an answer's files outside it are
//!   left out of a diagnostics answer (the agent's world is the workspace).
//! - Bounded: a language request waits at most [`REQUEST_TIMEOUT`], diagnostics their wait plus
//!   [`DIAGNOSTICS_GRACE`]. No answer, an error or an answer that cannot be read is an
//!   [`IntelError::Failed`] naming the method; `servers: 0` is [`IntelError::NoServer`]. The
//!   tool fails, the run goes on.
//! - Positions: the editor counts columns in the negotiated encoding, the trait in UTF-16;
//!   [`columns`] converts with the documents' texts, [`results`] reads the standard results.
//!
//! The requests are sent from the tools' tasks (a run's), never from a request handler, as
//! every request to the client is.

pub mod columns;
pub mod results;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tandem_agent::BoxFuture;
use tandem_coding::intel::{
    DiagnosticsAnswer, Document, Features, FileDiagnostics, FileEdits, IntelError, LanguageIntel,
    Location, Pos, Settle, Symbol,
};
use tandem_protocol::requests::{DiagnosticsParams, DiagnosticsResult, LanguageRequestParams};

use crate::lsp::workspace::client::{with_timeout, ClientError};
use crate::lsp::workspace::{EditorClient, OpenDocuments};
use columns::Columns;

/// The longest wait for a `tandem/languageRequest` answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How much longer than its `waitMs` a `tandem/diagnostics` answer may take.
pub const DIAGNOSTICS_GRACE: Duration = Duration::from_secs(2);
/// The editor's own wait when the server sends none (the spec's default `waitMs`).
const DEFAULT_WAIT: Duration = Duration::from_millis(1500);

const DIAGNOSTICS: &str = tandem_protocol::methods::DIAGNOSTICS;
const DEFINITION: &str = "textDocument/definition";
const REFERENCES: &str = "textDocument/references";
const DOCUMENT_SYMBOL: &str = "textDocument/documentSymbol";
const WORKSPACE_SYMBOL: &str = "workspace/symbol";
const HOVER: &str = "textDocument/hover";
const RENAME: &str = "textDocument/rename";

/// What to do when no language server of the editor handles a file.
const NO_SERVER_HINT: &str =
    "the editor runs no language server for it: install or enable its language extension";

/// The editor as a source of language intelligence, for one session's workspace roots.
pub struct EditorIntel {
    roots: Vec<PathBuf>,
    documents: Arc<dyn OpenDocuments>,
    client: Arc<dyn EditorClient>,
    request_timeout: Duration,
    grace: Duration,
}

impl std::fmt::Debug for EditorIntel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorIntel")
            .field("roots", &self.roots)
            .field("features", &self.features())
            .finish()
    }
}

impl EditorIntel {
    /// The editor `client` answering for files inside `roots`; `documents` are its open
    /// documents (their URIs, their texts for columns, the negotiated encoding).
    pub fn new(
        roots: Vec<PathBuf>,
        documents: Arc<dyn OpenDocuments>,
        client: Arc<dyn EditorClient>,
    ) -> Self {
        EditorIntel {
            roots,
            documents,
            client,
            request_timeout: REQUEST_TIMEOUT,
            grace: DIAGNOSTICS_GRACE,
        }
    }

    /// The editor's intelligence when the client declared either request, else `None`.
    pub fn declared(
        roots: Vec<PathBuf>,
        documents: Arc<dyn OpenDocuments>,
        client: Arc<dyn EditorClient>,
    ) -> Option<Arc<dyn LanguageIntel>> {
        let caps = client.capabilities();
        (caps.diagnostics || caps.language_requests)
            .then(|| Arc::new(EditorIntel::new(roots, documents, client)) as Arc<dyn LanguageIntel>)
    }

    /// Waits `request` (instead of [`REQUEST_TIMEOUT`]) for a language request and `grace`
    /// (instead of [`DIAGNOSTICS_GRACE`]) beyond a diagnostics wait: tests.
    pub fn with_timeouts(mut self, request: Duration, grace: Duration) -> Self {
        self.request_timeout = request;
        self.grace = grace;
        self
    }

    fn inside(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }

    /// The URI the editor knows `path` by: the open document's, else the path's own.
    fn uri_of(&self, path: &Path) -> Result<String, IntelError> {
        if let Some(open) = self.documents.find(path) {
            return Ok(open.uri);
        }
        crate::uri::from_path(path)
            .map(|uri| uri.as_str().to_owned())
            .ok_or_else(|| {
                IntelError::Failed(format!(
                    "{} cannot be named to the editor as a file:// URI",
                    path.display()
                ))
            })
    }

    /// `document`, refused when it is outside the workspace; its URI.
    fn target(&self, document: &Document) -> Result<String, IntelError> {
        if !self.inside(&document.path) {
            return Err(IntelError::Failed(format!(
                "{} is outside the workspace; the editor is asked about files inside it only",
                document.path.display()
            )));
        }
        self.uri_of(&document.path)
    }

    fn columns(&self) -> Columns<'_> {
        Columns::new(self.documents.encoding(), self.documents.as_ref())
    }

    /// Sends `tandem/languageRequest` for `method` with `params`; the merged result, or the
    /// failure in words. `path` is the file named when no server answers.
    async fn ask(
        &self,
        method: &'static str,
        params: Value,
        path: &Path,
    ) -> Result<Value, IntelError> {
        let request = LanguageRequestParams {
            method: method.to_owned(),
            params,
        };
        let answer = with_timeout(
            method,
            self.request_timeout,
            self.client.language_request(request),
        )
        .await
        .map_err(|e| failed(method, e))?;
        if answer.servers == 0 {
            return Err(IntelError::NoServer {
                path: path.to_path_buf(),
                hint: Some(NO_SERVER_HINT.to_owned()),
            });
        }
        Ok(answer.result)
    }

    /// The `textDocument` and `position` params of a request at `at` in `document`.
    fn at(
        &self,
        document: &Document,
        at: Pos,
        cols: &mut Columns<'_>,
    ) -> Result<Value, IntelError> {
        let uri = self.target(document)?;
        cols.know(&document.path, &document.text);
        let position = cols.to_wire(&document.text, at);
        Ok(json!({"textDocument": {"uri": uri}, "position": position}))
    }

    async fn diagnostics_of(
        &self,
        files: Option<Vec<Document>>,
        settle: Option<Settle>,
    ) -> Result<DiagnosticsAnswer, IntelError> {
        let mut cols = self.columns();
        // Files outside the workspace are not asked about: answered as not analyzed.
        let mut outside = Vec::new();
        let mut asked: Vec<(String, PathBuf)> = Vec::new();
        if let Some(files) = &files {
            for document in files {
                if self.inside(&document.path) {
                    asked.push((self.uri_of(&document.path)?, document.path.clone()));
                    cols.know(&document.path, &document.text);
                } else {
                    outside.push(FileDiagnostics {
                        path: document.path.clone(),
                        generation: 0,
                        analyzed: false,
                        diagnostics: Vec::new(),
                    });
                }
            }
            if asked.is_empty() {
                return Ok(DiagnosticsAnswer {
                    files: outside,
                    settled: true,
                });
            }
        }
        let after = settle.as_ref().map(|s| {
            asked
                .iter()
                .filter_map(|(uri, path)| s.after.get(path).map(|g| (uri.clone(), *g)))
                .collect()
        });
        let wait = settle.as_ref().map_or(DEFAULT_WAIT, |s| s.wait);
        let params = DiagnosticsParams {
            uris: files
                .is_some()
                .then(|| asked.iter().map(|(uri, _)| uri.clone()).collect()),
            after,
            wait_ms: settle.as_ref().map(|s| millis(s.wait)),
            quiet_ms: settle.as_ref().map(|s| millis(s.quiet)),
        };
        let answer: DiagnosticsResult = with_timeout(
            DIAGNOSTICS,
            wait + self.grace,
            self.client.diagnostics(params),
        )
        .await
        .map_err(|e| failed(DIAGNOSTICS, e))?;
        let mut out: Vec<FileDiagnostics> = Vec::new();
        for file in answer.files {
            let Some(path) = crate::uri::to_path(&file.uri) else {
                continue;
            };
            if !self.inside(&path) || out.iter().any(|f| f.path == path) {
                continue;
            }
            let mut diagnostics = Vec::with_capacity(file.diagnostics.len());
            for d in file.diagnostics {
                diagnostics.push(results::diagnostic(d, &path, &mut cols).await);
            }
            out.push(FileDiagnostics {
                path,
                generation: file.generation,
                analyzed: file.analyzed.unwrap_or(true),
                diagnostics,
            });
        }
        // A requested file the editor left out: it knows nothing of it.
        for (_, path) in &asked {
            if !out.iter().any(|f| &f.path == path) {
                out.push(FileDiagnostics {
                    path: path.clone(),
                    generation: 0,
                    analyzed: true,
                    diagnostics: Vec::new(),
                });
            }
        }
        out.extend(outside);
        Ok(DiagnosticsAnswer {
            files: out,
            settled: answer.settled,
        })
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A request that produced no answer, in words naming the method.
fn failed(method: &str, e: ClientError) -> IntelError {
    IntelError::Failed(match e {
        ClientError::Timeout { seconds, .. } => {
            format!("the editor did not answer {method} within {seconds} s")
        }
        ClientError::Failed(detail) => format!("the editor's {method} failed: {detail}"),
    })
}

/// An answer that could not be read, in words naming the method.
fn unreadable(method: &str, why: String) -> IntelError {
    IntelError::Failed(format!(
        "the editor's answer to {method} could not be read: {why}"
    ))
}

impl LanguageIntel for EditorIntel {
    fn label(&self) -> &str {
        "the editor"
    }

    fn features(&self) -> Features {
        let caps = self.client.capabilities();
        let requests = caps.language_requests;
        Features {
            diagnostics: caps.diagnostics,
            definition: requests,
            references: requests,
            symbols: requests,
            hover: requests,
            rename: requests,
        }
    }

    fn diagnostics<'a>(
        &'a self,
        files: Option<Vec<Document>>,
        settle: Option<Settle>,
    ) -> BoxFuture<'a, Result<DiagnosticsAnswer, IntelError>> {
        Box::pin(self.diagnostics_of(files, settle))
    }

    fn definition<'a>(
        &'a self,
        document: Document,
        at: Pos,
    ) -> BoxFuture<'a, Result<Vec<Location>, IntelError>> {
        Box::pin(async move {
            let mut cols = self.columns();
            let params = self.at(&document, at, &mut cols)?;
            let result = self.ask(DEFINITION, params, &document.path).await?;
            results::locations(result, &mut cols)
                .await
                .map_err(|why| unreadable(DEFINITION, why))
        })
    }

    fn references<'a>(
        &'a self,
        document: Document,
        at: Pos,
        declaration: bool,
    ) -> BoxFuture<'a, Result<Vec<Location>, IntelError>> {
        Box::pin(async move {
            let mut cols = self.columns();
            let mut params = self.at(&document, at, &mut cols)?;
            params["context"] = json!({"includeDeclaration": declaration});
            let result = self.ask(REFERENCES, params, &document.path).await?;
            results::locations(result, &mut cols)
                .await
                .map_err(|why| unreadable(REFERENCES, why))
        })
    }

    fn document_symbols<'a>(
        &'a self,
        document: Document,
    ) -> BoxFuture<'a, Result<Vec<Symbol>, IntelError>> {
        Box::pin(async move {
            let mut cols = self.columns();
            let uri = self.target(&document)?;
            cols.know(&document.path, &document.text);
            let params = json!({"textDocument": {"uri": uri}});
            let result = self.ask(DOCUMENT_SYMBOL, params, &document.path).await?;
            results::document_symbols(result, &document.path, &mut cols)
                .await
                .map_err(|why| unreadable(DOCUMENT_SYMBOL, why))
        })
    }

    fn workspace_symbols<'a>(
        &'a self,
        query: String,
        hint: Option<Document>,
    ) -> BoxFuture<'a, Result<Vec<Symbol>, IntelError>> {
        Box::pin(async move {
            let mut cols = self.columns();
            if let Some(document) = &hint {
                cols.know(&document.path, &document.text);
            }
            // The editor asks every server it runs; a hint only names the file when none does.
            let named = hint
                .as_ref()
                .map(|d| d.path.clone())
                .or_else(|| self.roots.first().cloned())
                .unwrap_or_default();
            let params = json!({"query": query});
            let result = self.ask(WORKSPACE_SYMBOL, params, &named).await?;
            results::workspace_symbols(result, &mut cols)
                .await
                .map_err(|why| unreadable(WORKSPACE_SYMBOL, why))
        })
    }

    fn hover<'a>(
        &'a self,
        document: Document,
        at: Pos,
    ) -> BoxFuture<'a, Result<Option<String>, IntelError>> {
        Box::pin(async move {
            let mut cols = self.columns();
            let params = self.at(&document, at, &mut cols)?;
            let result = self.ask(HOVER, params, &document.path).await?;
            results::hover_text(result).map_err(|why| unreadable(HOVER, why))
        })
    }

    fn rename<'a>(
        &'a self,
        document: Document,
        at: Pos,
        new_name: String,
    ) -> BoxFuture<'a, Result<Vec<FileEdits>, IntelError>> {
        Box::pin(async move {
            let mut cols = self.columns();
            let mut params = self.at(&document, at, &mut cols)?;
            params["newName"] = Value::String(new_name);
            let result = self.ask(RENAME, params, &document.path).await?;
            results::workspace_edit(result, &mut cols)
                .await
                .map_err(|why| unreadable(RENAME, why))
        })
    }
}

#[cfg(test)]
mod tests;
