//! [`LanguageIntel`] over a session's servers: each request goes to every server of the file's
//! type that offers it, and their answers are merged.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use tandem_agent::BoxFuture;
use tandem_coding::intel::{
    DiagnosticsAnswer, Document, Features, FileDiagnostics, FileEdits, IntelError, LanguageIntel,
    Location, Pos, Settle, Symbol,
};
use tandem_coding::settings::DiagnosticsConfig;
use tokio::time::Instant;
use tower_lsp_server::ls_types::request::{
    DocumentSymbolRequest, GotoDefinition, HoverRequest, References, Rename, WorkspaceSymbolRequest,
};
use tower_lsp_server::ls_types::{
    DocumentSymbolParams, GotoDefinitionParams, HoverParams, HoverProviderCapability, OneOf,
    ReferenceContext, ReferenceParams, RenameParams, ServerCapabilities, TextDocumentIdentifier,
    TextDocumentPositionParams, WorkspaceSymbolParams,
};

use super::client::Client;
use super::convert;
use super::spec::{file_type, language_id, root_for};
use super::LanguageServers;
use crate::uri;

/// The servers of one document, synced with its text.
struct Clients {
    clients: Vec<Arc<Client>>,
    /// Servers still starting when the wait ended.
    starting: Vec<String>,
    /// Servers that failed.
    errors: Vec<IntelError>,
}

/// How much longer than a start's own bound a request waits for it (the start's failure,
/// rather than "still starting", is then the answer).
const START_MARGIN: Duration = Duration::from_millis(500);

impl LanguageServers {
    /// The deadline of a request that may start its servers.
    fn start_deadline(&self) -> Instant {
        Instant::now() + self.limits.initialize + START_MARGIN
    }

    /// The entries for `path` and their roots; `NoServer` when none handles it.
    fn entries_for(&self, path: &Path) -> Result<Vec<(usize, PathBuf)>, IntelError> {
        let no_server = |hint: String| IntelError::NoServer {
            path: path.to_path_buf(),
            hint: Some(hint),
        };
        if !path.starts_with(&self.workspace) {
            return Err(no_server(format!(
                "Tandem's own language servers look only at files inside {}",
                self.workspace.display()
            )));
        }
        let Some(ext) = file_type(path) else {
            return Err(no_server(
                "Tandem's language servers are chosen by file extension, and this file has none"
                    .to_string(),
            ));
        };
        let entries = self.table.for_type(&ext);
        if entries.is_empty() {
            return Err(no_server(self.table.hint(&ext)));
        }
        Ok(entries
            .into_iter()
            .filter_map(|i| {
                let spec = &self.table.specs[i];
                root_for(path, &self.workspace, &spec.root_markers).map(|root| (i, root))
            })
            .collect())
    }

    /// The servers of `document` (started if need be, waiting until `deadline`), each given
    /// the document's text.
    async fn clients(&self, document: &Document, deadline: Instant) -> Result<Clients, IntelError> {
        let entries = self.entries_for(&document.path)?;
        let language = file_type(&document.path).unwrap_or_default();
        let language = language_id(&language);
        let got = join_all(entries.into_iter().map(|(index, root)| async move {
            let spec = &self.table.specs[index];
            if spec.program.is_none() {
                return Err(IntelError::NoServer {
                    path: document.path.clone(),
                    hint: Some(format!(
                        "the command `{}` of languageServers.{} in settings.json was not found \
                         on PATH: install it, or give its full path as \"command\"",
                        spec.command, spec.name
                    )),
                });
            }
            let client = self.pool.get(index, spec, root, deadline).await?;
            Ok((spec.name.clone(), client))
        }))
        .await;
        let mut out = Clients {
            clients: Vec::new(),
            starting: Vec::new(),
            errors: Vec::new(),
        };
        for result in got {
            match result {
                Ok((_, Some(client))) => {
                    match client.sync(&document.path, &document.text, language) {
                        Ok(_) => out.clients.push(client),
                        Err(e) => out.errors.push(e),
                    }
                }
                Ok((name, None)) => out.starting.push(name),
                Err(e) => out.errors.push(e),
            }
        }
        Ok(out)
    }

    /// Asks every server of `document` that `offers` the feature (`what`, for messages) with
    /// `ask`; the answers of those that answered, or the failures when none did.
    async fn ask<T, F, Fut>(
        &self,
        document: &Document,
        what: &str,
        offers: fn(&ServerCapabilities) -> bool,
        ask: F,
    ) -> Result<Vec<T>, IntelError>
    where
        F: Fn(Arc<Client>) -> Fut,
        Fut: Future<Output = Result<T, IntelError>>,
    {
        let deadline = self.start_deadline();
        let Clients {
            clients,
            starting,
            mut errors,
        } = self.clients(document, deadline).await?;
        errors.extend(starting.iter().map(|name| {
            IntelError::Failed(format!("language server `{name}` is still starting."))
        }));
        let (offering, others): (Vec<_>, Vec<_>) =
            clients.into_iter().partition(|c| offers(c.capabilities()));
        if offering.is_empty() {
            if !errors.is_empty() {
                return Err(combine(errors));
            }
            let names: Vec<&str> = others.iter().map(|c| c.name()).collect();
            return Err(IntelError::Failed(format!(
                "no language server for {} answers {what} (running: {}).",
                document.path.display(),
                names.join(", ")
            )));
        }
        let mut answers = Vec::new();
        for result in join_all(offering.into_iter().map(&ask)).await {
            match result {
                Ok(answer) => answers.push(answer),
                Err(e) => errors.push(e),
            }
        }
        if answers.is_empty() {
            return Err(combine(errors));
        }
        for e in errors {
            tracing::warn!(target: "tandem::langserver", "{e}");
        }
        Ok(answers)
    }

    /// `document`'s diagnostics from its servers, once each reported on this text (and, where
    /// more reports may follow, went quiet: [`Client::wait_fresh`]). With `settle`, bounded by
    /// its wait; without (the report before an edit), a server that has to start first gets
    /// its start's own bound, then the first report's.
    async fn file_diagnostics(
        &self,
        document: Document,
        settle: Option<&Settle>,
    ) -> Result<(FileDiagnostics, bool), IntelError> {
        let settle_deadline = settle.map(|s| Instant::now() + s.wait);
        let quiet = settle.map_or_else(|| DiagnosticsConfig::default().quiet, |s| s.quiet);
        let start_deadline = settle_deadline.unwrap_or_else(|| self.start_deadline());
        let unanalyzed = |path: PathBuf| FileDiagnostics {
            path,
            generation: 0,
            analyzed: false,
            diagnostics: Vec::new(),
        };
        let clients = match self.clients(&document, start_deadline).await {
            Ok(clients) => clients,
            Err(IntelError::NoServer { .. }) => return Ok((unanalyzed(document.path), true)),
            Err(e) => return Err(e),
        };
        if clients.clients.is_empty() && clients.starting.is_empty() {
            return Err(combine(clients.errors));
        }
        for e in &clients.errors {
            tracing::warn!(target: "tandem::langserver", "{e}");
        }
        let path = &document.path;
        let deadline = settle_deadline.unwrap_or_else(|| Instant::now() + self.limits.first_report);
        let waits = join_all(
            clients
                .clients
                .iter()
                .map(|c| c.wait_fresh(path, quiet, deadline)),
        )
        .await;
        let settled = clients.starting.is_empty() && waits.iter().all(|w| *w);
        Ok((merged(path, &clients.clients), settled))
    }
}

/// A file's diagnostics from `clients`, in their order; the generation counts every report.
fn merged(path: &Path, clients: &[Arc<Client>]) -> FileDiagnostics {
    let mut file = FileDiagnostics {
        path: path.to_path_buf(),
        generation: 0,
        analyzed: true,
        diagnostics: Vec::new(),
    };
    for client in clients {
        let (generation, diagnostics) = client.report(path);
        file.generation += generation;
        file.diagnostics.extend(diagnostics);
    }
    file
}

/// One error for several: the first when alone, else their messages together.
fn combine(mut errors: Vec<IntelError>) -> IntelError {
    if errors.len() == 1 {
        return errors.remove(0);
    }
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    IntelError::Failed(text.join(" "))
}

fn offered<T>(capability: &Option<OneOf<bool, T>>) -> bool {
    matches!(capability, Some(OneOf::Left(true)) | Some(OneOf::Right(_)))
}

fn at(document: &Document, pos: Pos) -> Result<TextDocumentPositionParams, IntelError> {
    Ok(TextDocumentPositionParams {
        text_document: identifier(&document.path)?,
        position: convert::position(pos),
    })
}

fn identifier(path: &Path) -> Result<TextDocumentIdentifier, IntelError> {
    uri::from_path(path)
        .map(|uri| TextDocumentIdentifier { uri })
        .ok_or_else(|| IntelError::Failed(format!("{} is not an absolute path", path.display())))
}

/// Items of all answers in order, each once.
fn unique<T: PartialEq>(answers: Vec<Vec<T>>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in answers.into_iter().flatten() {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

impl LanguageIntel for LanguageServers {
    fn label(&self) -> &str {
        "Tandem's language servers"
    }

    fn features(&self) -> Features {
        if self.table.specs.is_empty() {
            Features::default()
        } else {
            Features::ALL
        }
    }

    fn prepare<'a>(&'a self, document: Document) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            // Started and given the text; failures are the tools' to report when asked.
            if let Err(e) = self.clients(&document, self.start_deadline()).await {
                tracing::debug!(target: "tandem::langserver", "not prepared: {e}");
            }
        })
    }

    fn diagnostics<'a>(
        &'a self,
        files: Option<Vec<Document>>,
        settle: Option<Settle>,
    ) -> BoxFuture<'a, Result<DiagnosticsAnswer, IntelError>> {
        Box::pin(async move {
            let Some(files) = files else {
                return Ok(self.known_diagnostics(settle.as_ref()).await);
            };
            let answers = join_all(
                files
                    .into_iter()
                    .map(|d| self.file_diagnostics(d, settle.as_ref())),
            )
            .await;
            let mut answer = DiagnosticsAnswer {
                files: Vec::new(),
                settled: true,
            };
            for result in answers {
                let (file, settled) = result?;
                answer.settled &= settled;
                answer.files.push(file);
            }
            Ok(answer)
        })
    }

    fn definition<'a>(
        &'a self,
        document: Document,
        pos: Pos,
    ) -> BoxFuture<'a, Result<Vec<Location>, IntelError>> {
        Box::pin(async move {
            let params = GotoDefinitionParams {
                text_document_position_params: at(&document, pos)?,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let answers = self
                .ask(
                    &document,
                    "definitions",
                    |c| offered(&c.definition_provider),
                    |client| {
                        let params = params.clone();
                        async move {
                            let answer = client.request::<GotoDefinition>(params).await?;
                            Ok(convert::definition(answer))
                        }
                    },
                )
                .await?;
            Ok(unique(answers))
        })
    }

    fn references<'a>(
        &'a self,
        document: Document,
        pos: Pos,
        declaration: bool,
    ) -> BoxFuture<'a, Result<Vec<Location>, IntelError>> {
        Box::pin(async move {
            let params = ReferenceParams {
                text_document_position: at(&document, pos)?,
                context: ReferenceContext {
                    include_declaration: declaration,
                },
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let answers = self
                .ask(
                    &document,
                    "references",
                    |c| offered(&c.references_provider),
                    |client| {
                        let params = params.clone();
                        async move {
                            let answer = client.request::<References>(params).await?;
                            Ok(answer
                                .unwrap_or_default()
                                .into_iter()
                                .filter_map(convert::location)
                                .collect::<Vec<_>>())
                        }
                    },
                )
                .await?;
            Ok(unique(answers))
        })
    }

    fn document_symbols<'a>(
        &'a self,
        document: Document,
    ) -> BoxFuture<'a, Result<Vec<Symbol>, IntelError>> {
        Box::pin(async move {
            let params = DocumentSymbolParams {
                text_document: identifier(&document.path)?,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let path = document.path.clone();
            let answers = self
                .ask(
                    &document,
                    "document symbols",
                    |c| offered(&c.document_symbol_provider),
                    |client| {
                        let (params, path) = (params.clone(), path.clone());
                        async move {
                            let answer = client.request::<DocumentSymbolRequest>(params).await?;
                            Ok(convert::document_symbols(answer, &path))
                        }
                    },
                )
                .await?;
            Ok(unique(answers))
        })
    }

    fn workspace_symbols<'a>(
        &'a self,
        query: String,
        hint: Option<Document>,
    ) -> BoxFuture<'a, Result<Vec<Symbol>, IntelError>> {
        Box::pin(async move {
            let params = WorkspaceSymbolParams {
                query,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let ask = |client: Arc<Client>| {
                let params = params.clone();
                async move {
                    let answer = client.request::<WorkspaceSymbolRequest>(params).await?;
                    Ok(convert::workspace_symbols(answer))
                }
            };
            let offers = |c: &ServerCapabilities| offered(&c.workspace_symbol_provider);
            let answers = match hint {
                Some(document) => {
                    self.ask(&document, "workspace symbols", offers, ask)
                        .await?
                }
                None => {
                    let running: Vec<Arc<Client>> = self
                        .pool
                        .running()
                        .into_iter()
                        .filter(|c| offers(c.capabilities()))
                        .collect();
                    if running.is_empty() {
                        return Err(IntelError::Failed(
                            "no language server answering workspace symbols runs yet: name a \
                             file of the language to search (its servers are started for it)."
                                .to_string(),
                        ));
                    }
                    let mut answers = Vec::new();
                    let mut errors = Vec::new();
                    for result in join_all(running.into_iter().map(ask)).await {
                        match result {
                            Ok(a) => answers.push(a),
                            Err(e) => errors.push(e),
                        }
                    }
                    if answers.is_empty() {
                        return Err(combine(errors));
                    }
                    answers
                }
            };
            Ok(unique(answers))
        })
    }

    fn hover<'a>(
        &'a self,
        document: Document,
        pos: Pos,
    ) -> BoxFuture<'a, Result<Option<String>, IntelError>> {
        Box::pin(async move {
            let params = HoverParams {
                text_document_position_params: at(&document, pos)?,
                work_done_progress_params: Default::default(),
            };
            let answers = self
                .ask(
                    &document,
                    "hover texts",
                    |c| {
                        matches!(
                            c.hover_provider,
                            Some(HoverProviderCapability::Simple(true))
                                | Some(HoverProviderCapability::Options(_))
                        )
                    },
                    |client| {
                        let params = params.clone();
                        async move {
                            let answer = client.request::<HoverRequest>(params).await?;
                            Ok(convert::hover(answer))
                        }
                    },
                )
                .await?;
            let texts: Vec<String> = answers.into_iter().flatten().collect();
            Ok((!texts.is_empty()).then(|| texts.join("\n\n---\n\n")))
        })
    }

    fn rename<'a>(
        &'a self,
        document: Document,
        pos: Pos,
        new_name: String,
    ) -> BoxFuture<'a, Result<Vec<FileEdits>, IntelError>> {
        Box::pin(async move {
            let clients = self.clients(&document, self.start_deadline()).await?;
            let Some(client) = clients
                .clients
                .iter()
                .find(|c| offered(&c.capabilities().rename_provider))
            else {
                if !clients.errors.is_empty() {
                    return Err(combine(clients.errors));
                }
                let names: Vec<&str> = clients.clients.iter().map(|c| c.name()).collect();
                return Err(IntelError::Failed(format!(
                    "no language server for {} renames (running: {}).",
                    document.path.display(),
                    names.join(", ")
                )));
            };
            let params = RenameParams {
                text_document_position: at(&document, pos)?,
                new_name,
                work_done_progress_params: Default::default(),
            };
            let answer = client.request::<Rename>(params).await?;
            convert::workspace_edit(answer).map_err(|why| {
                IntelError::Failed(format!(
                    "language server `{}` answered the rename, but {why}.",
                    client.name()
                ))
            })
        })
    }
}

impl LanguageServers {
    /// Every file a running server reported on; with `settle`, once the open ones settled.
    async fn known_diagnostics(&self, settle: Option<&Settle>) -> DiagnosticsAnswer {
        let running = self.pool.running();
        let mut paths: Vec<PathBuf> = running.iter().flat_map(|c| c.reported()).collect();
        paths.sort();
        paths.dedup();
        let settled = match settle {
            None => true,
            Some(settle) => {
                let deadline = Instant::now() + settle.wait;
                let waits = running.iter().flat_map(|client| {
                    paths
                        .iter()
                        .map(move |p| client.wait_fresh(p, settle.quiet, deadline))
                });
                join_all(waits).await.into_iter().all(|w| w)
            }
        };
        let files = paths
            .iter()
            .map(|path| {
                let handling: Vec<Arc<Client>> = running
                    .iter()
                    .filter(|c| c.reported().contains(path))
                    .cloned()
                    .collect();
                merged(path, &handling)
            })
            .collect();
        DiagnosticsAnswer { files, settled }
    }
}
