//! `workspace/executeCommand`: running what a code action offered.
//!
//! A command answers at once with the session it runs in (a new one unless the argument names
//! one, as protocol-ext's README says); the run itself is spawned by [`Sessions::prompt`] and
//! followed by [`Progress`]. The prompt is written here, in our own words, on top of the same
//! editor context a `tandem/prompt` gets ([`editor_context`]), so the model sees the file,
//! the range, the enclosing symbol and the diagnostic without reading first.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use serde_json::Value;
use tandem_protocol::commands::{Command, CommandResult, FixDiagnosticArgs, TargetArgs};
use tandem_protocol::requests::{ImageInput, PromptContext, WhenBusy};
use tandem_protocol::Diagnostic;
use tandem_protocol::{SessionId, TandemError};

use super::actions::DiagnosticMemory;
use super::context::{build, render, ContextDiagnostic, ContextRequest, Severity};
use super::documents::DocumentStore;
use super::position as pos;
use super::progress::Progress;
use super::sessions::Sessions;
use crate::host::Origin;

/// What running a command needs from the server.
#[derive(Clone)]
pub struct CommandDeps {
    /// The open documents.
    pub docs: Arc<Mutex<DocumentStore>>,
    /// The live sessions.
    pub sessions: Arc<Sessions>,
    /// Diagnostics last seen per document.
    pub memory: Arc<DiagnosticMemory>,
    /// Progress reporting.
    pub progress: Arc<Progress>,
}

/// Creates a new session (the host's setup runs its blocking parts on the blocking pool).
pub async fn create_session(
    sessions: Arc<Sessions>,
    origin: Origin,
    cwd: Option<String>,
) -> Result<SessionId, TandemError> {
    sessions.create(origin, cwd.as_deref()).await
}

/// Runs `command` with `arguments`: `Ok(None)` for `tandem.abort`, the session otherwise.
/// Bad arguments are -32602 naming the field.
pub async fn execute(
    deps: &CommandDeps,
    command: &str,
    arguments: &[Value],
) -> Result<Option<CommandResult>, TandemError> {
    let command = Command::parse(command, arguments)?;
    // A document that is neither open nor on disk: -32602 naming `arguments[0].uri`.
    let unreadable = |detail: String| {
        TandemError::invalid_params(
            &format!("workspace/executeCommand {}", command.name()),
            Some("arguments[0].uri"),
            detail,
        )
    };
    let ((text, context), title, session) = match &command {
        Command::Abort(a) => {
            match &a.session {
                Some(id) => deps.sessions.abort(id)?,
                None => deps.sessions.abort_all(),
            }
            return Ok(None);
        }
        Command::FixDiagnostic(a) => (
            fix_prompt(deps, a).map_err(unreadable)?,
            command.title(),
            a.session.clone(),
        ),
        Command::Explain(a) => (
            target_prompt(deps, a, EXPLAIN).map_err(unreadable)?,
            command.title(),
            a.session.clone(),
        ),
        Command::Document(a) => (
            target_prompt(deps, a, DOCUMENT).map_err(unreadable)?,
            command.title(),
            a.session.clone(),
        ),
        Command::WriteTests(a) => (
            target_prompt(deps, a, WRITE_TESTS).map_err(unreadable)?,
            command.title(),
            a.session.clone(),
        ),
    };
    let session = match session {
        Some(id) => id,
        None => create_session(deps.sessions.clone(), Origin::New, None).await?,
    };
    let run = Run {
        text,
        context: Some(context),
        images: Vec::new(),
        when_busy: WhenBusy::FollowUp,
        title,
        // A client with the event stream shows the answer already: once is enough.
        summary: !deps.sessions.events_delivered(),
    };
    start(deps, &session, run).await?;
    Ok(Some(CommandResult { session }))
}

/// A run to start in a session.
pub struct Run {
    /// The user's message.
    pub text: String,
    /// The editor context the model reads before it (not part of the user's message).
    pub context: Option<String>,
    /// Its images.
    pub images: Vec<ImageInput>,
    /// What to do when the session is busy.
    pub when_busy: WhenBusy,
    /// The progress message: the command's title or the prompt's first line.
    pub title: String,
    /// Whether the run ends with a `window/showMessage` summary (commands run by a client
    /// without the event stream) or not.
    pub summary: bool,
}

/// Starts `run` in `session` with work-done progress; `Ok(true)` when the session was busy
/// and the text was queued (a prompt then gets no progress of its own: the running one has it).
pub async fn start(deps: &CommandDeps, session: &SessionId, run: Run) -> Result<bool, TandemError> {
    let entry = deps.sessions.get(session)?;
    // Subscribed before the run starts, so progress sees every tool of it.
    let events = entry.session.subscribe();
    let queued = deps
        .sessions
        .prompt(session, run.text, run.context, run.images, run.when_busy)
        .await?;
    if !queued || run.summary {
        let cwd = entry.cwd.clone();
        deps.progress
            .follow(session.clone(), cwd, events, run.title, run.summary);
    }
    Ok(queued)
}

const EXPLAIN: &str = "Explain the code above: what it does, how, and anything surprising \
in it. Do not change any file.";
const DOCUMENT: &str = "Write documentation comments for the code above, in the language's \
usual style: what it is for, its parameters and result, its errors. Change nothing but comments.";
const WRITE_TESTS: &str = "Write tests for the code above, following how this project already \
tests its code (look for existing tests first). Cover the normal case, the edges and the errors.";

/// The command's request and the editor context it goes with.
fn fix_prompt(deps: &CommandDeps, a: &FixDiagnosticArgs) -> Result<(String, String), String> {
    let from = a
        .source
        .as_deref()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    let ask = format!(
        "Fix this problem{from} at line {}: {}\nChange only what the fix needs, then say in one \
         sentence what you changed.",
        a.range.start.line + 1,
        a.message
    );
    let diagnostic = Diagnostic {
        range: a.range,
        severity: a.severity,
        code: a.code.clone(),
        source: a.source.clone(),
        message: a.message.clone(),
    };
    let ctx = PromptContext {
        uri: a.uri.clone(),
        selection: Some(a.range),
        include_diagnostics: true,
        diagnostics: Some(vec![diagnostic]),
    };
    let context = editor_context(&deps.docs, &deps.memory, &ctx, &deps.sessions.root())?;
    Ok((ask, context))
}

/// The command's request and the editor context it goes with.
fn target_prompt(
    deps: &CommandDeps,
    a: &TargetArgs,
    ask: &str,
) -> Result<(String, String), String> {
    let ask = match &a.symbol {
        Some(s) => format!("{ask}\n(The code is `{s}`.)"),
        None => ask.to_string(),
    };
    let ctx = PromptContext {
        uri: a.uri.clone(),
        selection: Some(a.range),
        include_diagnostics: false,
        diagnostics: None,
    };
    let context = editor_context(&deps.docs, &deps.memory, &ctx, &deps.sessions.root())?;
    Ok((ask, context))
}

/// The editor context `ctx` describes, rendered from the buffer the client sees (the store's
/// copy when open, the file on disk otherwise). It travels beside the user's text, as a hidden
/// message the model reads before it. Diagnostics asked for but not
/// carried are the ones the last `codeAction` request brought for the document. A document
/// that is neither open nor readable on disk is an error saying so (naming the URI), never an
/// empty file shown to the model.
pub fn editor_context(
    docs: &Mutex<DocumentStore>,
    memory: &DiagnosticMemory,
    ctx: &PromptContext,
    cwd: &Path,
) -> Result<String, String> {
    let path = crate::uri::to_path(&ctx.uri).unwrap_or_else(|| PathBuf::from(&ctx.uri));
    let (buffer, language_id, selection, open_files) = {
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
        let language = doc.as_ref().map(|d| d.language_id().to_string());
        (rope.to_string(), language, selection, open_files)
    };
    let diagnostics: Option<Vec<ContextDiagnostic>> = ctx.include_diagnostics.then(|| {
        let carried = ctx.diagnostics.clone();
        let list = carried
            .or_else(|| memory.last(&ctx.uri))
            .unwrap_or_default();
        list.iter().map(context_diagnostic).collect()
    });
    let context = build(&ContextRequest {
        text: &buffer,
        path: &path,
        cwd: Some(cwd),
        language_id: language_id.as_deref(),
        selection,
        diagnostics: diagnostics.as_deref(),
        open_files: &open_files,
    });
    Ok(render(&context))
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
