//! RPC mode (`tandem --mode rpc`), pi 1.6's headless protocol: commands as JSON lines on stdin,
//! their responses and the session's events as JSON lines on stdout, logs on stderr.
//!
//! The session is the host's ([`crate::host`]), as in print and JSON modes: the events go
//! through JSON mode's translator ([`crate::run::JsonEvents`], pi's event lines) to standard
//! output, and the turn runner is [`Live`]. What RPC adds:
//!
//! - [`wire`]: the input lines (read by [`LineReader`]: split on LF only, one CR before it
//!   dropped, U+2028/U+2029 inside strings left alone, a size limit per line) and the response
//!   records; a line that is not JSON gets pi's `parse` error and the next line is read.
//! - [`commands`]: every command of pi 1.6's `rpc-commands.md`, with pi's response shapes.
//!   A `prompt`, `bash` or `compact` runs in a task of its own, so `abort`, `abort_bash` and
//!   the queries keep answering meanwhile; the other commands answer in order.
//! - [`dialogs`]: questions to the client as `extension_ui_request`s (the folder's trust before
//!   the first prompt; through [`workspace`], a path outside the folder and a file that makes
//!   tools run code), resolved to "no" when not answered in time.
//! - [`ui`]: extensions' `ctx.ui` as pi's extension UI sub-protocol (`ctx.mode` is `"rpc"`,
//!   `ctx.hasUI` true), their handlers' failures as `extension_error` events.
//! - Sessions are replaced whole (`new_session`, `switch_session`, `fork`, `clone`): the
//!   extensions' `session_before_switch` / `session_before_fork` may cancel first; then the
//!   running turn is aborted, the new session is set up like the first (same options, its own
//!   extensions, whose `session_start` says why), and the old one is closed (its extensions get
//!   `session_shutdown` and stop) once the new one stands, so a failure leaves the old session
//!   in place.
//!
//! Shutdown: at the end of stdin, or on SIGTERM/SIGHUP, the running turn is aborted, its events
//! are delivered, an unanswered prompt is saved ([`Live::save_started`]), MCP and language
//! servers are stopped, and the process exits (0 at EOF, 143/129 on a signal). A second signal
//! during shutdown exits at once.

mod commands;
mod dialogs;
mod ui;
mod wire;
mod workspace;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use tandem_ai::registry::{AgentDir, ModelRegistry};
use tandem_ai::sync::lock;
use tandem_coding::agent_session::AgentSessionEvent;
use tandem_coding::session::SessionManager;
use tandem_coding::trust::ProtectedResources;
use tandem_coding::BashPolicy;
use tokio::sync::watch;

use crate::cli::command::SessionChoice;
use crate::cli::json_output::JsonLines;
use crate::cli::RunArgs;
use crate::extensions::Extensions;
use crate::host::pump::{Batching, Translate, Transport};
use crate::host::setup;
use crate::host::turns::Live;
use crate::langserver::LanguageServers;
use crate::mcp::McpTools;
use crate::run::{origin, JsonEvents, Stdout};
use crate::transport::lines::LineReader;
use crate::transport::MessageLimit;

use dialogs::Dialogs;
use workspace::{ClientAsker, RpcWorkspace};

/// Commands read but not yet run, at most (reading waits beyond).
const COMMAND_QUEUE: usize = 256;

/// How long a running turn may take to stop when the process or its session ends.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// One session as RPC mode holds it: the live session and what was started beside it.
struct Held {
    live: Arc<Live>,
    /// How many of the session's events have been written (see [`Held::caught_up`]).
    written: watch::Receiver<u64>,
    /// Events the session had emitted before they were forwarded.
    emitted_before: u64,
    registry: Arc<ModelRegistry>,
    mcp: Mutex<McpTools>,
    languages: Mutex<Option<Arc<LanguageServers>>>,
    /// The folder's trust question, until it was asked (before the first prompt).
    pending_trust: Mutex<Option<ProtectedResources>>,
    /// The session's workspace (kept for a reconfiguration once the folder is trusted).
    workspace: Arc<RpcWorkspace>,
    /// The session's extensions (replaced when the folder is trusted later).
    extensions: Mutex<Option<Extensions>>,
}

impl Held {
    /// The session's extensions now.
    pub(super) fn extensions(&self) -> Option<Extensions> {
        lock(&self.extensions).clone()
    }
}

impl Held {
    /// Aborts the running turn until none runs (a turn whose question was just closed may
    /// start its run after the first abort); whether it stopped within [`STOP_LIMIT`].
    async fn stop(&self) -> bool {
        let deadline = tokio::time::Instant::now() + STOP_LIMIT;
        loop {
            self.live.session().abort();
            if self.live.idle(Duration::from_millis(50)).await {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
        }
    }

    /// Waits until every event the session has emitted so far is written, so a response
    /// follows the events its command caused (a `queue_update` before `steer`'s answer, the
    /// compaction's events before `compact`'s), as pi writes them.
    async fn caught_up(&self) {
        let target = self
            .live
            .session()
            .emitted_events()
            .saturating_sub(self.emitted_before);
        let mut written = self.written.clone();
        let _ = written.wait_for(|n| *n >= target).await;
    }

    /// Stops the running turn, delivers its events, saves an unanswered prompt, and stops the
    /// extensions and the servers started for the session.
    async fn close(&self, how: Close) {
        self.live.session().abort_bash();
        if !self.stop().await {
            tracing::warn!("the running turn did not stop within {STOP_LIMIT:?}");
        }
        self.live.save_started();
        if let Some(extensions) = &self.extensions() {
            match how {
                Close::Quit => extensions.shutdown_for("quit", None).await,
                // `session_shutdown` was sent before the new session started.
                Close::Replaced => extensions.stop().await,
            }
        }
        self.replace_servers(McpTools::default(), None).await;
    }

    /// Puts in new MCP and language servers (the folder was trusted later) and stops the old.
    async fn replace_servers(&self, mcp: McpTools, languages: Option<Arc<LanguageServers>>) {
        let old_mcp = std::mem::replace(&mut *lock(&self.mcp), mcp);
        old_mcp.shutdown().await;
        let old_languages = std::mem::replace(&mut *lock(&self.languages), languages);
        if let Some(old) = old_languages {
            old.shutdown().await;
        }
    }
}

/// How a session ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    /// The process ends.
    Quit,
    /// Another session took its place.
    Replaced,
}

/// Why a session starts or ends, in pi's words for extensions (`session_start`'s and
/// `session_shutdown`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// The process started.
    Startup,
    /// `new_session`.
    New,
    /// `switch_session`.
    Resume,
    /// `fork` or `clone`.
    Fork,
}

impl Why {
    fn as_str(self) -> &'static str {
        match self {
            Why::Startup => "startup",
            Why::New => "new",
            Why::Resume => "resume",
            Why::Fork => "fork",
        }
    }
}

/// Where a new session's history comes from.
enum History {
    /// As the command line would choose it.
    Choice(SessionChoice),
    /// Opened already (a fork of the current session).
    Opened(Box<SessionManager>),
}

/// RPC mode's state: the options every session is set up with, the current session and the
/// open questions.
pub(crate) struct Rpc {
    args: RunArgs,
    cwd: PathBuf,
    agent_dir: AgentDir,
    held: Mutex<Arc<Held>>,
    dialogs: Arc<Dialogs>,
}

impl Rpc {
    /// The current session.
    fn held(&self) -> Arc<Held> {
        lock(&self.held).clone()
    }

    /// The current live session.
    fn live(&self) -> Arc<Live> {
        self.held().live.clone()
    }

    /// Replaces the current session with one from `history` (`why` says how, for
    /// extensions): the running turn is stopped first; when the new one cannot be set up, the
    /// old one stays (and the error is returned).
    async fn replace(&self, history: History, why: Why) -> anyhow::Result<()> {
        let old = self.held();
        if !old.stop().await {
            return Err(anyhow!(
                "the running turn did not stop within {STOP_LIMIT:?}; try again"
            ));
        }
        let file = old.live.session().session_file();
        let previous = file.as_ref().map(|f| f.display().to_string());
        let prepared = prepare(
            &self.args,
            &self.cwd,
            &self.agent_dir,
            history,
            &self.dialogs,
            (why, previous),
        )?;
        // pi's order: the old session's extensions hear `session_shutdown` before the new
        // session's start. Their hosts stop only once the new session stands: a new session
        // that fails to start leaves the old one with its extensions running.
        let next_file = prepared.session_file().map(|f| f.display().to_string());
        if let Some(extensions) = &old.extensions() {
            extensions
                .announce_shutdown(why.as_str(), next_file.as_deref())
                .await;
        }
        let new = launch(prepared, &self.cwd, self.dialogs.clone()).await?;
        *lock(&self.held) = Arc::new(new);
        old.close(Close::Replaced).await;
        drop(old);
        // The next command may open the file this session wrote (switch_session back to it):
        // it must find it free, not continue it in a copy as if another process held it.
        if let Some(file) = file {
            if !crate::host::turns::file_released(&file, STOP_LIMIT).await {
                tracing::warn!(
                    "the replaced session's file {} is still held {STOP_LIMIT:?} after it was \
                     closed",
                    file.display()
                );
            }
        }
        Ok(())
    }
}

/// Sets a session up with the command line's options ([`prepare`], then [`launch`]).
async fn start(
    args: &RunArgs,
    cwd: &Path,
    agent_dir: &AgentDir,
    history: History,
    dialogs: Arc<Dialogs>,
    start: (Why, Option<String>),
) -> anyhow::Result<Held> {
    let prepared = prepare(args, cwd, agent_dir, history, &dialogs, start)?;
    launch(prepared, cwd, dialogs).await
}

/// Decides a session with the command line's options (blocking: reads the configuration):
/// the folder's trust as far as it is decided without asking (a question is kept for the
/// first prompt), the client as the extensions' user interface; `why` and the session it
/// replaces are what its extensions' `session_start` will say.
fn prepare(
    args: &RunArgs,
    cwd: &Path,
    agent_dir: &AgentDir,
    history: History,
    dialogs: &Arc<Dialogs>,
    (why, previous): (Why, Option<String>),
) -> anyhow::Result<setup::Prepared> {
    let history = match history {
        History::Choice(choice) => {
            setup::History::Origin(origin(&choice, &args.options, agent_dir, cwd)?)
        }
        History::Opened(manager) => setup::History::Opened(manager),
    };
    let ui = Arc::new(ui::RpcUi::new(dialogs.clone(), commands::write_now));
    Ok(
        setup::prepare_undecided(agent_dir, cwd, &args.options, history)?
            .with_extension_front("rpc", ui)
            .with_start_reason(why.as_str(), previous),
    )
}

/// Starts a prepared session over the disk and forwards its events. Problems go to stderr.
async fn launch(
    prepared: setup::Prepared,
    cwd: &Path,
    dialogs: Arc<Dialogs>,
) -> anyhow::Result<Held> {
    let workspace = Arc::new(RpcWorkspace::new(cwd, false, ClientAsker(dialogs)));
    let started = prepared
        .start(workspace.clone(), BashPolicy::Allow, &[])
        .await?;
    for p in &started.problems {
        crate::eprintln_safe!("Warning: {p}");
    }
    let emitted_before = started.session.emitted_events();
    let (count, written) = watch::channel(0);
    let live = Live::start(
        started.session,
        Events(JsonEvents(JsonLines::new())),
        Output(count),
        Batching::NONE,
    );
    Ok(Held {
        live,
        written,
        emitted_before,
        registry: started.registry,
        mcp: Mutex::new(started.mcp),
        languages: Mutex::new(started.languages),
        pending_trust: Mutex::new(started.pending),
        workspace,
        extensions: Mutex::new(started.extensions),
    })
}

/// The session's events as JSON mode writes them, each followed by a marker (`None`) that
/// [`Output`] counts instead of writing.
struct Events(JsonEvents);

impl Translate for Events {
    type Out = Option<String>;

    fn translate(&mut self, event: &AgentSessionEvent) -> Vec<Option<String>> {
        let mut lines: Vec<Option<String>> =
            self.0.translate(event).into_iter().map(Some).collect();
        lines.push(None);
        lines
    }

    fn delta_len(_: &Option<String>) -> Option<usize> {
        None
    }

    fn merge(_: &mut Option<String>, next: Option<String>) -> Option<Option<String>> {
        Some(next)
    }
}

/// Standard output, counting the events written.
struct Output(watch::Sender<u64>);

impl Transport<Option<String>> for Output {
    async fn send(&mut self, line: Option<String>) {
        match line {
            None => self.0.send_modify(|n| *n += 1),
            Some(line) => Stdout.send(line).await,
        }
    }
}

/// Runs RPC mode until stdin ends or a signal stops it; the exit status.
pub fn run(args: RunArgs) -> ExitCode {
    let outcome = (|| -> anyhow::Result<ExitCode> {
        let cwd = crate::run::current_dir()?;
        let limit = MessageLimit::resolve(None).map_err(|e| anyhow!(e))?;
        let rt = crate::run::runtime()?;
        let code = rt.block_on(serve(args, cwd, limit));
        // A signal ends serving while stdin's reader may still block in its thread: the
        // runtime does not wait for it.
        rt.shutdown_background();
        code
    })();
    match outcome {
        Ok(code) => code,
        Err(e) => {
            crate::eprintln_safe!("Error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Why serving ended.
enum Ending {
    /// stdin ended.
    Eof,
    /// SIGTERM (143) or SIGHUP (129).
    Signal(u8),
}

async fn serve(args: RunArgs, cwd: PathBuf, limit: MessageLimit) -> anyhow::Result<ExitCode> {
    use tokio::signal::unix::{signal, SignalKind};
    let agent_dir = AgentDir::from_env().map_err(|e| anyhow!("{e}"))?;
    let dialogs = Arc::new(Dialogs::new(Box::new(commands::write_now)));
    let first = start(
        &args,
        &cwd,
        &agent_dir,
        History::Choice(args.session.clone()),
        dialogs.clone(),
        (Why::Startup, None),
    )
    .await?;
    if let Some(name) = &args.name {
        first
            .live
            .session()
            .with_session(|m| m.append_session_info(name.trim()))
            .map_err(|e| anyhow!("could not name the session: {e}"))?;
    }
    let rpc = Arc::new(Rpc {
        args,
        cwd,
        agent_dir,
        held: Mutex::new(Arc::new(first)),
        dialogs,
    });
    let mut term = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut input =
        LineReader::new(tokio::io::stdin(), limit.bytes()).named("RPC", "TANDEM_MAX_MESSAGE_BYTES");
    // Commands run one after another in a task of their own; answers to questions are handed
    // over as they are read, so a command waiting for one (an extension's `confirm` before
    // `new_session`) gets it.
    let (queue, mut queued) = tokio::sync::mpsc::channel::<wire::Incoming>(COMMAND_QUEUE);
    let worker = {
        let rpc = rpc.clone();
        tokio::spawn(async move {
            while let Some(incoming) = queued.recv().await {
                commands::dispatch(&rpc, incoming).await;
            }
        })
    };
    let ending = loop {
        tokio::select! {
            _ = term.recv() => break Ending::Signal(143),
            _ = hangup.recv() => break Ending::Signal(129),
            line = input.next() => match line {
                Ok(Some(line)) => match wire::incoming(line) {
                    wire::Incoming::DialogAnswer(answer) => rpc.dialogs.answer(answer),
                    command => {
                        if queue.send(command).await.is_err() {
                            tracing::error!("the command worker ended; stopping");
                            break Ending::Eof;
                        }
                    }
                },
                Ok(None) => break Ending::Eof,
                Err(e) => {
                    tracing::error!("reading stdin failed: {e}");
                    break Ending::Eof;
                }
            },
        }
    };
    // Shutdown: open questions get their defaults (nobody is left to answer), the commands
    // read so far finish, then the session closes. A second signal exits at once.
    drop(queue);
    let shutdown = async {
        rpc.dialogs.close_all();
        if let Err(e) = worker.await {
            tracing::error!("the command worker failed: {e}");
        }
        rpc.held().close(Close::Quit).await;
    };
    let code = match ending {
        Ending::Eof => 0,
        Ending::Signal(code) => code,
    };
    tokio::select! {
        () = shutdown => {}
        _ = term.recv() => return Ok(ExitCode::from(143)),
        _ = hangup.recv() => return Ok(ExitCode::from(129)),
    }
    Ok(ExitCode::from(code))
}
