//! Print and JSON modes: set up an [`AgentSession`] from the command line and pi's
//! configuration, send the prompts, and print the final answer (text) or every event (JSON).
//! The session is the host's ([`crate::host`]); this front door's translator is pi's JSON lines
//! and its transport standard output.
//!
//! Exit status: 0 when the last answer completed; 1 on any setup error (no usable model among
//! them: the scripted demo model never stands in) or when the run ended in an error or was
//! aborted (the error goes to stderr).
//!
//! Nobody can be asked a question here, so a folder whose project configuration needs trust is
//! not trusted unless `--approve`, trust.json or `defaultProjectTrust` says so (pi's print and
//! JSON modes); stderr says what was left out.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context as _};
use serde_json::Value;
use tandem_ai::registry::AgentDir;
use tandem_ai::{ImageContent, Model, StopReason};
use tandem_coding::agent_session::{AgentSession, AgentSessionEvent, SessionEvent};
use tandem_coding::session;
use tandem_coding::trust::{untrusted_note, ProtectedResources, TrustDecision, TrustSource};
use tandem_coding::{BashPolicy, DiskWorkspace, PermissionPolicy};

use crate::cli::command::SessionChoice;
use crate::cli::json_output::JsonLines;
use crate::cli::{input, text_output, OutputMode, RunArgs};
use crate::extensions::StderrUi;
use crate::host::pump::{Batching, Translate, Transport};
use crate::host::setup::{decide_trust, prepare, SessionRequest, Started};
use crate::host::turns::{Live, Prompt};
use crate::host::{Origin, SessionOptions};

/// Builds the runtime the modes run on.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("could not start the async runtime")
}

/// Builds the runtime print and JSON modes run on: one thread. A run is one stream read,
/// turned into lines and written in order; on one thread no event wakes another thread
/// (with two workers, the futex wake-ups and task switches were a third of JSON mode's CPU for
/// a 20,000-chunk answer; BENCHMARKS.md). Blocking work still goes to tokio's blocking pool.
fn single_thread_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")
}

/// Finds a session by path or by id prefix among the sessions of `dir`.
pub(crate) fn find_session(reference: &str, dir: &Path, cwd: &Path) -> anyhow::Result<PathBuf> {
    let as_path = cwd.join(reference);
    if as_path.is_file() {
        return Ok(as_path);
    }
    let list = session::list_sessions(dir);
    let matches: Vec<_> = list
        .sessions
        .iter()
        .filter(|s| s.id.starts_with(reference))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.path.clone()),
        [] => bail!(
            "Session not found: {reference} (no such file, and no session id in {} starts with it)",
            dir.display()
        ),
        many => bail!(
            "Session id prefix {reference} is ambiguous: {} sessions match; give more characters",
            many.len()
        ),
    }
}

/// The session's origin for the command line's choice (a reference resolved to its file).
pub(crate) fn origin(
    choice: &SessionChoice,
    options: &SessionOptions,
    agent_dir: &AgentDir,
    cwd: &Path,
) -> anyhow::Result<Origin> {
    let dir = options.session_dir(agent_dir, cwd);
    Ok(match choice {
        SessionChoice::New => Origin::New,
        SessionChoice::Pick => bail!(
            "-r/--resume without a session opens a picker, which needs the interactive mode (a \
             terminal, without -p or --mode): give the session's id (or an id prefix) or its \
             file, e.g. `tandem -r 0195 -p \"…\"`"
        ),
        SessionChoice::InMemory => Origin::InMemory,
        SessionChoice::Continue => Origin::Continue,
        SessionChoice::Open(reference) => Origin::Open(find_session(reference, &dir, cwd)?),
        SessionChoice::Fork(reference) => Origin::Fork(find_session(reference, &dir, cwd)?),
        SessionChoice::WithId(id) => match session::list_sessions(&dir)
            .sessions
            .into_iter()
            .find(|s| &s.id == id)
        {
            Some(found) => Origin::Open(found.path),
            None => Origin::NewWithId(id.clone()),
        },
    })
}

/// Sets up the session for `run` in `cwd` (the host's setup over the disk): project trust,
/// settings, the model (an error when none can be used, before anything starts), then — with
/// `mcp` — the MCP servers, and the session. `model` replaces the model choice (the demo's
/// scripted model). Problems are printed to stderr as warnings.
pub async fn setup(
    run: &RunArgs,
    cwd: &Path,
    model: Option<Model>,
    mcp: bool,
    mode: OutputMode,
) -> anyhow::Result<Started> {
    let agent_dir = AgentDir::from_env().map_err(|e| anyhow!("{e}"))?;
    let mut trust_problems = Vec::new();
    let trust = trust_for_run(&agent_dir, cwd, run.options.approve, &mut trust_problems);
    let prepared = prepare(SessionRequest {
        origin: origin(&run.session, &run.options, &agent_dir, cwd)?,
        agent_dir,
        cwd: cwd.to_path_buf(),
        options: &run.options,
        trust,
        trust_problems,
        model,
    })?
    .with_extension_front(
        match mode {
            OutputMode::Json => "json",
            OutputMode::Text => "print",
        },
        Arc::new(StderrUi),
    );
    let workspace = Arc::new(DiskWorkspace::new(
        [cwd.to_path_buf()],
        PermissionPolicy::AllowAll,
    ));
    let started = if mcp {
        prepared.start(workspace, BashPolicy::Allow, &[]).await?
    } else {
        prepared.build(workspace, BashPolicy::Allow)?
    };
    for p in &started.problems {
        crate::eprintln_safe!("Warning: {p}");
    }
    if let Some(name) = &run.name {
        started
            .session
            .with_session(|m| m.append_session_info(name.trim()))
            .map_err(|e| anyhow!("could not name the session: {e}"))?;
    }
    Ok(started)
}

/// Fails at once, as for an unknown option, when the command line has flags that are not
/// Tandem's and no extension could register them: none would load even if the folder were
/// trusted. (With extensions to load, the flags are checked once they registered theirs.)
fn no_extension_could_take(options: &SessionOptions, cwd: &Path) -> anyhow::Result<()> {
    if options.extension_flags.is_empty() {
        return Ok(());
    }
    let agent_dir = AgentDir::from_env().map_err(|e| anyhow!("{e}"))?;
    let loaded = tandem_coding::settings::load(agent_dir.path(), cwd, true);
    let (found, _) = crate::extensions::discover(&crate::extensions::Sources {
        cli: &options.extensions,
        no_discovery: options.no_extensions,
        agent_dir: agent_dir.path(),
        cwd,
        trusted: true,
        user_settings: loaded.global.extensions.as_deref().unwrap_or_default(),
        project_settings: loaded.project.extensions.as_deref().unwrap_or_default(),
    });
    if found.is_empty() && !crate::packages::could_add_extensions(&loaded, cwd, &options.extensions)
    {
        let known = crate::cli::args::long_flags();
        let unknown =
            crate::cli::extension_flags::unregistered(&options.extension_flags, &[], &known);
        bail!("{}", unknown.join("; "));
    }
    Ok(())
}

/// Project trust where nobody can be asked (as pi's print and JSON modes): a folder that would
/// need a question is not trusted, and stderr says what was left out and how to trust it.
fn trust_for_run(
    agent_dir: &AgentDir,
    cwd: &Path,
    approve: Option<bool>,
    problems: &mut Vec<String>,
) -> TrustDecision {
    let decision = decide_trust(agent_dir, cwd, approve, &mut |w| problems.push(w));
    let resources = match &decision {
        TrustDecision::Ask(resources) => Some(resources.clone()),
        TrustDecision::Decided { .. } => None,
    };
    let (trusted, source) = decision.or_untrusted();
    match (trusted, &source) {
        (true, _) | (false, TrustSource::CommandLine) => {}
        (false, TrustSource::Saved(path)) => crate::eprintln_safe!(
            "Note: {} is not trusted (saved in trust.json for {}); its project configuration is \
             ignored. Pass --approve to use it for one run.",
            cwd.display(),
            path.display()
        ),
        (false, _) => {
            let resources =
                resources.unwrap_or_else(|| ProtectedResources::find(cwd, home().as_deref()));
            crate::eprintln_safe!("Note: {}", untrusted_note(cwd, &resources));
        }
    }
    TrustDecision::Decided { trusted, source }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

pub(crate) fn current_dir() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    Ok(std::fs::canonicalize(&cwd).unwrap_or(cwd))
}

/// The prompts of a run: `@file` arguments, piped stdin and messages.
fn prompts(run: &RunArgs, cwd: &Path) -> anyhow::Result<Vec<(String, Vec<ImageContent>)>> {
    let stdin = std::io::stdin();
    let is_terminal = stdin.is_terminal();
    let piped = input::read_piped_stdin(&mut stdin.lock() as &mut dyn Read, is_terminal)?;
    let built = input::build_prompts(&run.file_args, &run.messages, piped, cwd)?;
    let mut out = Vec::new();
    if let Some(initial) = built.initial {
        out.push((initial.text, initial.images));
    }
    out.extend(built.rest.into_iter().map(|m| (m, Vec::new())));
    if out.is_empty() {
        bail!("No prompt given: pass a message, @file arguments or pipe text on stdin (see `tandem --help`)");
    }
    Ok(out)
}

/// How a print or JSON run ended, as its exit status says: 0, 1, or 130 (interrupted, as a
/// shell reports a process Ctrl-C stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// The last answer completed.
    Completed,
    /// The run ended in an error, or was aborted otherwise.
    Failed,
    /// Ctrl-C stopped it.
    Interrupted,
}

impl RunEnd {
    /// The process exit status.
    pub fn exit_code(self) -> ExitCode {
        match self {
            RunEnd::Completed => ExitCode::SUCCESS,
            RunEnd::Failed => ExitCode::from(1),
            RunEnd::Interrupted => ExitCode::from(130),
        }
    }
}

/// Runs print or JSON mode.
pub fn run(run: RunArgs, mode: OutputMode) -> ExitCode {
    let outcome = (|| -> anyhow::Result<RunEnd> {
        let cwd = current_dir()?;
        no_extension_could_take(&run.options, &cwd)?;
        let prompts = prompts(&run, &cwd)?;
        let rt = single_thread_runtime()?;
        rt.block_on(async move {
            let started = setup(&run, &cwd, None, true, mode).await?;
            let outcome = execute(started.session, prompts, mode).await;
            if let Some(extensions) = &started.extensions {
                extensions.shutdown().await;
            }
            started.mcp.shutdown().await;
            if let Some(languages) = &started.languages {
                languages.shutdown().await;
            }
            outcome
        })
    })();
    match outcome {
        Ok(end) => end.exit_code(),
        Err(e) => {
            crate::eprintln_safe!("Error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// pi's JSON lines, one per event (JSON mode's and RPC mode's events), serialized (without
/// their newlines).
pub(crate) struct JsonEvents(pub(crate) JsonLines);

impl Translate for JsonEvents {
    type Out = String;

    fn translate(&mut self, event: &AgentSessionEvent) -> Vec<String> {
        match event {
            AgentSessionEvent::Agent(e) => self.0.agent_event_lines(e),
            // pi writes nothing for a prompt an extension handled.
            AgentSessionEvent::Session(SessionEvent::PromptHandled) => Vec::new(),
            AgentSessionEvent::Session(e) => serde_json::to_value(e)
                .map(|v| self.0.session_event(v))
                .unwrap_or_default()
                .iter()
                .filter_map(|value| JsonLines::line(value).ok())
                .collect(),
        }
    }

    fn delta_len(_: &String) -> Option<usize> {
        None
    }

    fn merge(_: &mut String, next: String) -> Option<String> {
        Some(next)
    }
}

/// Nothing (text mode prints only the final answer).
struct Silent;

impl Translate for Silent {
    type Out = ();

    fn translate(&mut self, _: &AgentSessionEvent) -> Vec<()> {
        Vec::new()
    }

    fn delta_len(_: &()) -> Option<usize> {
        None
    }

    fn merge(_: &mut (), next: ()) -> Option<()> {
        Some(next)
    }
}

/// Standard output, one line per message, each written at once.
pub(crate) struct Stdout;

/// Standard output for JSON mode: lines gathered while more events are waiting, written
/// together when the pump is idle (one write for a burst of deltas instead of one per line).
#[derive(Default)]
struct BufferedStdout {
    lines: Vec<u8>,
}

/// Lines gathered this large are written even if more events wait.
const STDOUT_BUFFER: usize = 64 * 1024;

impl BufferedStdout {
    fn write_out(&mut self) {
        if self.lines.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&self.lines);
        let _ = out.flush();
        self.lines.clear();
    }
}

impl Transport<String> for BufferedStdout {
    async fn send(&mut self, line: String) {
        self.lines.extend_from_slice(line.as_bytes());
        self.lines.push(b'\n');
        if self.lines.len() >= STDOUT_BUFFER {
            self.write_out();
        }
    }

    async fn idle(&mut self) {
        self.write_out();
    }
}

impl Transport<Value> for Stdout {
    async fn send(&mut self, line: Value) {
        let mut out = std::io::stdout().lock();
        let _ = JsonLines::write_line(&mut out, &line);
        let _ = out.flush();
    }
}

impl Transport<String> for Stdout {
    async fn send(&mut self, mut line: String) {
        line.push('\n');
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    }
}

impl Transport<()> for Stdout {
    async fn send(&mut self, _: ()) {}
}

/// Sends `prompts` to `session` one after another and prints as `mode` says; how it ended.
/// Ctrl-C aborts the running turn and sends no more.
pub async fn execute(
    session: AgentSession,
    prompts: Vec<(String, Vec<ImageContent>)>,
    mode: OutputMode,
) -> anyhow::Result<RunEnd> {
    let live = match mode {
        OutputMode::Json => {
            let header = session.with_session(|s| s.header().clone());
            if let Ok(h) = JsonLines::header(&header) {
                Stdout.send(h).await;
            }
            Live::start(
                session,
                JsonEvents(JsonLines::new()),
                BufferedStdout::default(),
                Batching::NONE,
            )
        }
        OutputMode::Text => Live::start(session, Silent, Stdout, Batching::NONE),
    };
    let abort_on_ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    tokio::pin!(abort_on_ctrl_c);
    let mut interrupted = false;
    let mut handled = false;
    for (text, images) in prompts {
        let prompt = Prompt {
            text,
            images,
            context: None,
        };
        let turn = live.turn(prompt, async {});
        tokio::pin!(turn);
        let (result, aborted) = tokio::select! {
            result = &mut turn => (result, false),
            _ = &mut abort_on_ctrl_c => {
                live.session().abort();
                (turn.await, true)
            }
        };
        for notice in live.take_notices() {
            crate::eprintln_safe!("Warning: {notice}");
        }
        result.map_err(|_| anyhow!("a turn is already running"))??;
        handled |= live.session().last_prompt_handled();
        interrupted |= aborted;
        let failed = live
            .session()
            .last_assistant()
            .is_some_and(|m| matches!(m.stop_reason, StopReason::Error | StopReason::Aborted));
        if aborted || failed {
            break;
        }
    }
    let Some(last) = live.session().last_assistant() else {
        if interrupted {
            return Ok(RunEnd::Interrupted);
        }
        if handled {
            // Extension commands or handled input only: nothing to print, as in pi.
            return Ok(RunEnd::Completed);
        }
        bail!("The model gave no answer");
    };
    if interrupted {
        return Ok(RunEnd::Interrupted);
    }
    match mode {
        OutputMode::Text => match text_output::final_text(&last) {
            Ok(text) => {
                // On a terminal the answer is shown with stand-ins for escapes (a model or the
                // files it read could otherwise drive the terminal); a pipe gets it byte for
                // byte, as pi prints it.
                let text = if std::io::stdout().is_terminal() {
                    crate::terminal_text::sanitize(&text)
                } else {
                    std::borrow::Cow::Borrowed(text.as_str())
                };
                print!("{text}");
                let _ = std::io::stdout().flush();
                Ok(RunEnd::Completed)
            }
            Err(e) => {
                crate::eprintln_safe!("{e}");
                Ok(RunEnd::Failed)
            }
        },
        OutputMode::Json => Ok(
            if matches!(last.stop_reason, StopReason::Error | StopReason::Aborted) {
                RunEnd::Failed
            } else {
                RunEnd::Completed
            },
        ),
    }
}
