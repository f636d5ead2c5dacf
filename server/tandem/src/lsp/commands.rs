//! `workspace/executeCommand`: running what a code action offered.
//!
//! A command answers at once with the session it runs in (a new one unless the argument names
//! one, as protocol-ext's README says); the run itself is spawned by [`Sessions::prompt`] and
//! followed by [`Progress`]. The prompt is written here, in our own words, on top of the same
//! editor context a `tandem/prompt` gets ([`PendingContext`]), so the model sees the file,
//! the range, the enclosing symbol and the diagnostics (the whole file's, from the editor when
//! it answers `tandem/diagnostics`) without reading first.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tandem_protocol::commands::{Command, CommandResult, FixDiagnosticArgs, TargetArgs};
use tandem_protocol::requests::{ImageInput, PromptContext, WhenBusy};
use tandem_protocol::Diagnostic;
use tandem_protocol::{SessionId, TandemError};

use super::actions::DiagnosticMemory;
use super::documents::DocumentStore;
use super::progress::Progress;
use super::prompt_context::{Diagnostics, PendingContext};
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
    pub context: Option<PendingContext>,
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
fn fix_prompt(
    deps: &CommandDeps,
    a: &FixDiagnosticArgs,
) -> Result<(String, PendingContext), String> {
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
        diagnostics: None,
    };
    // The file's diagnostics (the editor's when it answers), this one always among them.
    let diagnostics = Diagnostics::Known {
        pinned: vec![diagnostic],
        remembered: deps.memory.last(&a.uri),
    };
    let context = PendingContext::read(&deps.docs, &ctx, &deps.sessions.root(), diagnostics)?;
    Ok((ask, context))
}

/// The command's request and the editor context it goes with.
fn target_prompt(
    deps: &CommandDeps,
    a: &TargetArgs,
    ask: &str,
) -> Result<(String, PendingContext), String> {
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
    let context = PendingContext::read(&deps.docs, &ctx, &deps.sessions.root(), Diagnostics::None)?;
    Ok((ask, context))
}
