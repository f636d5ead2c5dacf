//! The session the terminal mode holds: set up like RPC mode's (the host's setup over the
//! disk, with the terminal's workspace and the terminal's user interface for extensions), its
//! events forwarded to the app's channel, and replaced whole for `/new`, `/resume`, `/fork`
//! and `/clone` — its extensions with it.

use std::path::Path;
use std::sync::Arc;

use tandem_ai::registry::{AgentDir, ModelRegistry};
use tandem_coding::agent_session::AgentSessionEvent;
use tandem_coding::session::SessionManager;
use tandem_coding::trust::ProtectedResources;
use tandem_coding::BashPolicy;
use tokio::sync::mpsc;

use crate::cli::command::SessionChoice;
use crate::cli::RunArgs;
use crate::host::pump::{Batching, Failure, Translate, Transport};
use crate::host::setup;
use crate::host::turns::Live;
use crate::langserver::LanguageServers;
use crate::mcp::McpTools;
use crate::run::origin;

use super::extension_ui::ExtensionLink;
use super::workspace::TuiWorkspace;
use crate::extensions::Extensions;

/// What reaches the app from the session.
pub enum FromSession {
    /// One of its events.
    Event(AgentSessionEvent),
    /// A run that failed without events.
    Failed(Failure),
}

/// Where a session's history comes from.
pub enum History {
    /// As the command line chooses it.
    Choice(SessionChoice),
    /// Opened already (a fork).
    Opened(Box<SessionManager>),
}

/// A live session and what was started beside it.
pub struct Held {
    /// Its extensions, when any are loaded.
    pub extensions: Option<Extensions>,
    /// Its number among the sessions this terminal held (see
    /// [`super::extension_ui::TerminalUi::generation`]).
    pub generation: u64,
    /// The session with its turn runner.
    pub live: Arc<Live>,
    /// The models and keys.
    pub registry: Arc<ModelRegistry>,
    /// Its MCP servers.
    pub mcp: McpTools,
    /// Tandem's own language servers.
    pub languages: Option<Arc<LanguageServers>>,
    /// The folder's trust question, still to ask.
    pub pending_trust: Option<ProtectedResources>,
    /// Whether the project's configuration is in use.
    pub trusted: bool,
    /// Problems found while setting it up.
    pub problems: Vec<String>,
}

impl Held {
    /// Stops the session's turn, extensions and servers, saving an unanswered prompt.
    pub async fn close(self) {
        self.live.session().abort_bash();
        self.live.session().abort();
        let _ = self.live.idle(std::time::Duration::from_secs(10)).await;
        self.live.save_started();
        // Extensions replaced with their session were shut down already; this does nothing
        // then.
        if let Some(extensions) = &self.extensions {
            extensions.shutdown().await;
        }
        self.mcp.shutdown().await;
        if let Some(languages) = self.languages {
            languages.shutdown().await;
        }
    }
}

/// A session set up but not started yet: its extensions do not run yet, so a session it
/// replaces can shut its own down first (pi's order), once it is known the new one opens.
pub struct Prepared {
    prepared: setup::Prepared,
    generation: u64,
}

/// Sets up a session from `history` with the command line's options, its extensions speaking
/// to the terminal through `link` and told why it starts (`start`: pi's `session_start`
/// reason and the session it replaces) (blocking: reads the configuration).
pub fn prepare(
    args: &RunArgs,
    cwd: &Path,
    agent_dir: &AgentDir,
    history: History,
    link: &ExtensionLink,
    (reason, previous): (&'static str, Option<String>),
) -> anyhow::Result<Prepared> {
    let history = match history {
        History::Choice(choice) => {
            setup::History::Origin(origin(&choice, &args.options, agent_dir, cwd)?)
        }
        History::Opened(manager) => setup::History::Opened(manager),
    };
    let ui = link.session_ui();
    let generation = ui.generation();
    let prepared = setup::prepare_undecided(agent_dir, cwd, &args.options, history)?
        .with_extension_front("tui", ui)
        .with_start_reason(reason, previous);
    Ok(Prepared {
        prepared,
        generation,
    })
}

/// Starts a prepared session (its servers and extensions); its events go to `events`.
pub async fn launch(
    prepared: Prepared,
    workspace: Arc<TuiWorkspace>,
    events: mpsc::Sender<FromSession>,
) -> anyhow::Result<Held> {
    let Prepared {
        prepared,
        generation,
    } = prepared;
    let started = prepared.start(workspace, BashPolicy::Allow, &[]).await?;
    let live = Live::start(started.session, Forward, Channel(events), Batching::NONE);
    // Prompts here are typed: extensions' `input` event says so.
    live.set_typed(true);
    Ok(Held {
        extensions: started.extensions,
        generation,
        live,
        registry: started.registry,
        mcp: started.mcp,
        languages: started.languages,
        pending_trust: started.pending,
        trusted: started.trusted,
        problems: started.problems,
    })
}

/// [`prepare`], then [`launch`], for the first session.
pub async fn start(
    args: &RunArgs,
    cwd: &Path,
    agent_dir: &AgentDir,
    history: History,
    workspace: Arc<TuiWorkspace>,
    events: mpsc::Sender<FromSession>,
    link: &ExtensionLink,
) -> anyhow::Result<Held> {
    let prepared = prepare(args, cwd, agent_dir, history, link, ("startup", None))?;
    launch(prepared, workspace, events).await
}

/// Every event as it is.
struct Forward;

impl Translate for Forward {
    type Out = FromSession;

    fn translate(&mut self, event: &AgentSessionEvent) -> Vec<FromSession> {
        vec![FromSession::Event(event.clone())]
    }

    fn failed(&mut self, failure: &Failure) -> Vec<FromSession> {
        vec![FromSession::Failed(failure.clone())]
    }

    fn delta_len(_: &FromSession) -> Option<usize> {
        None
    }

    fn merge(_: &mut FromSession, next: FromSession) -> Option<FromSession> {
        Some(next)
    }
}

/// The app's channel (bounded: a busy screen slows the stream, never reorders it).
struct Channel(mpsc::Sender<FromSession>);

impl Transport<FromSession> for Channel {
    async fn send(&mut self, out: FromSession) {
        let _ = self.0.send(out).await;
    }
}
