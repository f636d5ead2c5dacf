//! The editor context that goes beside a prompt (`tandem/prompt`'s `context`, a command's
//! target): read from the buffer the client sees when the request comes, rendered by
//! [`super::context`] when the turn starts.
//!
//! Its diagnostics come from the same source as the agent's: a language server never sees
//! another's diagnostics, so a client that answers `tandem/diagnostics` is asked for the
//! whole file's ([`PendingContext::complete`], at most [`EDITOR_DIAGNOSTICS_TIMEOUT`]) — not
//! only the one a code action was about, nor the range a `codeAction` request carried. The
//! question is asked from the turn's task, never from the request handler; without an answer
//! in time (or without the capability) the context uses what it has: the diagnostics the prompt
//! carried, else those of the document's last `codeAction` request. A prompt the client sent
//! with its own `context.diagnostics` uses those as they are, and a prompt queued while the
//! session runs is rendered at once, with what it has.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use tandem_ai::sync::lock;

use serde_json::Value;
use tandem_protocol::requests::{DiagnosticsParams, PromptContext};
use tandem_protocol::Diagnostic;

use super::actions::DiagnosticMemory;
use super::context::{build, render, ContextDiagnostic, ContextRequest, Severity};
use super::documents::DocumentStore;
use super::position as pos;
use super::workspace::client::with_timeout;
use super::workspace::EditorClient;

/// The longest the start of a turn waits for the editor's diagnostics of its file.
pub const EDITOR_DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(1);

/// Whose diagnostics a context starts with.
#[derive(Debug, Clone, PartialEq)]
pub enum Diagnostics {
    /// The prompt did not ask for any.
    None,
    /// The client sent these with the prompt: used as they are.
    Sent(Vec<Diagnostic>),
    /// The ones a command is about (`Ask Tandem to fix`), and the document's last `codeAction`
    /// request's: the editor's whole-file list replaces them when it comes, the command's
    /// diagnostics kept in it.
    Known {
        /// Always shown (the diagnostic to fix).
        pinned: Vec<Diagnostic>,
        /// The last `codeAction` request's, when there was one.
        remembered: Option<Vec<Diagnostic>>,
    },
}

/// A prompt's editor context, read from the buffer, waiting for its diagnostics.
#[derive(Debug, Clone)]
pub struct PendingContext {
    uri: String,
    path: PathBuf,
    text: String,
    language_id: Option<String>,
    selection: Option<Range<usize>>,
    open_files: Vec<PathBuf>,
    cwd: PathBuf,
    diagnostics: Diagnostics,
}

impl PendingContext {
    /// Reads `ctx`'s document from the buffer the client sees (the store's copy when open,
    /// the file on disk otherwise); the diagnostics the prompt asked for are `diagnostics`.
    /// A document that is neither open nor readable on disk is an error saying so (naming the
    /// URI), never an empty file shown to the model.
    pub fn read(
        docs: &Mutex<DocumentStore>,
        ctx: &PromptContext,
        cwd: &Path,
        diagnostics: Diagnostics,
    ) -> Result<PendingContext, String> {
        let path = crate::uri::to_path(&ctx.uri).unwrap_or_else(|| PathBuf::from(&ctx.uri));
        let store = lock(docs);
        let open_files: Vec<PathBuf> = store.uris().filter_map(crate::uri::to_path).collect();
        let doc = store.get(&ctx.uri);
        let rope = match &doc {
            Some(d) => d.text().clone(),
            None => match std::fs::read_to_string(&path) {
                Ok(text) => ropey::Rope::from_str(&text),
                Err(e) => {
                    return Err(format!(
                        "document {} is not open and cannot be read from disk ({e})",
                        ctx.uri
                    ))
                }
            },
        };
        let byte = |p: tandem_protocol::Position| {
            pos::position_to_byte(
                &rope,
                pos::Position::new(p.line, p.character),
                store.encoding(),
            )
        };
        let selection = ctx.selection.map(|r| {
            let (a, b) = (byte(r.start), byte(r.end));
            a.min(b)..a.max(b)
        });
        Ok(PendingContext {
            uri: ctx.uri.clone(),
            path,
            text: rope.to_string(),
            language_id: doc.as_ref().map(|d| d.language_id().to_string()),
            selection,
            open_files,
            cwd: cwd.to_path_buf(),
            diagnostics,
        })
    }

    /// What `ctx` asks for: the diagnostics it carries, else those of the last `codeAction`
    /// request for its document (completed from the editor when it can be asked).
    pub fn diagnostics_of(ctx: &PromptContext, memory: &DiagnosticMemory) -> Diagnostics {
        match (&ctx.diagnostics, ctx.include_diagnostics) {
            (_, false) => Diagnostics::None,
            (Some(sent), true) => Diagnostics::Sent(sent.clone()),
            (None, true) => Diagnostics::Known {
                pinned: Vec::new(),
                remembered: memory.last(&ctx.uri),
            },
        }
    }

    /// Whether the editor is asked for the file's diagnostics before rendering.
    pub fn wants_editor(&self) -> bool {
        matches!(self.diagnostics, Diagnostics::Known { .. })
    }

    /// The context with the diagnostics it has now.
    pub fn render(&self) -> String {
        let list = match &self.diagnostics {
            Diagnostics::None => None,
            Diagnostics::Sent(list) => Some(list.clone()),
            Diagnostics::Known { pinned, remembered } => {
                let mut list = remembered.clone().unwrap_or_default();
                add_missing(&mut list, pinned);
                Some(list)
            }
        };
        self.render_with(list.as_deref())
    }

    /// The context, its diagnostics the editor's for the whole file when it wants them, the
    /// client declared `tandem/diagnostics` and the editor answers within
    /// [`EDITOR_DIAGNOSTICS_TIMEOUT`]; otherwise as [`PendingContext::render`].
    pub async fn complete(&self, editor: &dyn EditorClient) -> String {
        let Diagnostics::Known { pinned, .. } = &self.diagnostics else {
            return self.render();
        };
        if !editor.capabilities().diagnostics {
            return self.render();
        }
        let params = DiagnosticsParams {
            uris: Some(vec![self.uri.clone()]),
            ..DiagnosticsParams::default()
        };
        let answer = with_timeout(
            tandem_protocol::methods::DIAGNOSTICS,
            EDITOR_DIAGNOSTICS_TIMEOUT,
            editor.diagnostics(params),
        )
        .await;
        let file = match answer {
            Ok(answer) => answer.files.into_iter().find(|f| {
                f.uri == self.uri || crate::uri::to_path(&f.uri).is_some_and(|p| p == self.path)
            }),
            Err(e) => {
                tracing::info!(
                    "the prompt's context uses the diagnostics it has: {e} (for {})",
                    self.uri
                );
                return self.render();
            }
        };
        let mut list = file.map(|f| f.diagnostics).unwrap_or_default();
        add_missing(&mut list, pinned);
        self.render_with(Some(&list))
    }

    fn render_with(&self, diagnostics: Option<&[Diagnostic]>) -> String {
        let diagnostics: Option<Vec<ContextDiagnostic>> =
            diagnostics.map(|list| list.iter().map(context_diagnostic).collect());
        let context = build(&ContextRequest {
            text: &self.text,
            path: &self.path,
            cwd: Some(&self.cwd),
            language_id: self.language_id.as_deref(),
            selection: self.selection.clone(),
            diagnostics: diagnostics.as_deref(),
            open_files: &self.open_files,
        });
        render(&context)
    }
}

/// Adds each of `pinned` that `list` lacks (same range and message).
fn add_missing(list: &mut Vec<Diagnostic>, pinned: &[Diagnostic]) {
    for d in pinned {
        if !list
            .iter()
            .any(|l| l.range == d.range && l.message == d.message)
        {
            list.push(d.clone());
        }
    }
}

fn context_diagnostic(d: &Diagnostic) -> ContextDiagnostic {
    ContextDiagnostic {
        severity: match d.severity {
            Some(2) => Severity::Warning,
            Some(3) => Severity::Information,
            Some(4) => Severity::Hint,
            _ => Severity::Error,
        },
        line: d.range.start.line as usize,
        end_line: d.range.end.line as usize,
        message: d.message.clone(),
        source: d.source.clone(),
        code: d.code.as_ref().map(|c| match c {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
    }
}

#[cfg(test)]
#[path = "prompt_context_tests.rs"]
mod tests;
