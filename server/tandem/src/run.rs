//! Print and JSON modes: set up an [`AgentSession`] from the command line and pi's
//! configuration, send the prompts, and print the final answer (text) or every event (JSON).
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
use tandem_agent::AgentTool;
use tandem_ai::registry::{AgentDir, ModelRegistry};
use tandem_ai::{ImageContent, Model, StopReason};
use tandem_coding::agent_session::{AgentSession, AgentSessionEvent};
use tandem_coding::session::{self, SessionManager};
use tandem_coding::settings::{self, LoadedSettings};
use tandem_coding::trust::{untrusted_note, ProtectedResources, TrustDecision, TrustSource};
use tandem_coding::{BashPolicy, DiskWorkspace, PermissionPolicy};

use crate::cli::command::SessionChoice;
use crate::cli::json_output::JsonLines;
use crate::cli::{input, text_output, OutputMode, RunArgs};
use crate::mcp::{connect_for_session, McpTools};
use crate::setup::{build_session, choose_model, decide_trust, ChosenModel, SessionPlan};

/// Everything a run needs, set up.
pub struct Setup {
    /// The session.
    pub session: AgentSession,
    /// The MCP servers of settings.json, connected (stop them with `shutdown` at the end).
    pub mcp: McpTools,
}

/// Builds the runtime the modes run on.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("could not start the async runtime")
}

fn print_settings_errors(loaded: &LoadedSettings) {
    for e in &loaded.errors {
        eprintln!("Warning: {e}");
    }
}

/// Finds a session by path or by id prefix among the sessions of `dir`.
fn find_session(reference: &str, dir: &Path, cwd: &Path) -> anyhow::Result<PathBuf> {
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

fn open_session(run: &RunArgs, agent_dir: &AgentDir, cwd: &Path) -> anyhow::Result<SessionManager> {
    let dir = run
        .session_dir
        .clone()
        .unwrap_or_else(|| session::default_session_dir(agent_dir, cwd));
    Ok(match &run.session {
        SessionChoice::New => SessionManager::create(cwd, &dir),
        SessionChoice::InMemory => SessionManager::in_memory(cwd),
        SessionChoice::Continue => {
            SessionManager::continue_recent(cwd, &dir).with_context(|| {
                format!("could not continue the latest session in {}", dir.display())
            })?
        }
        SessionChoice::Open(reference) => {
            let path = find_session(reference, &dir, cwd)?;
            SessionManager::open(&path)?
        }
        SessionChoice::Fork(reference) => {
            let path = find_session(reference, &dir, cwd)?;
            SessionManager::fork_from(&path, cwd, &dir)?
        }
    })
}

/// Sets up the session for `run` in `cwd`: project trust, settings, the model (an error when
/// none can be used, before anything starts), then the MCP servers and the session.
pub async fn setup(run: &RunArgs, cwd: &Path) -> anyhow::Result<Setup> {
    let prepared = prepare(run, cwd, None)?;
    let mcp = connect_for_session(&prepared.settings, &[], cwd).await;
    for w in mcp.warnings() {
        eprintln!("Warning: {w}");
    }
    match prepared.build(run, cwd, mcp.tools()) {
        Ok(session) => Ok(Setup { session, mcp }),
        Err(e) => {
            mcp.shutdown().await;
            Err(e)
        }
    }
}

/// Like [`setup`] without MCP servers, with `model` replacing the model choice (the demo's
/// scripted model).
pub fn setup_with(run: &RunArgs, cwd: &Path, model: Option<Model>) -> anyhow::Result<Setup> {
    let prepared = prepare(run, cwd, model)?;
    let session = prepared.build(run, cwd, Vec::new())?;
    Ok(Setup {
        session,
        mcp: McpTools::default(),
    })
}

/// Everything decided before anything is started.
struct Prepared {
    agent_dir: AgentDir,
    settings: LoadedSettings,
    registry: Arc<ModelRegistry>,
    manager: SessionManager,
    model: ChosenModel,
}

fn prepare(run: &RunArgs, cwd: &Path, model: Option<Model>) -> anyhow::Result<Prepared> {
    let agent_dir = AgentDir::from_env().map_err(|e| anyhow!("{e}"))?;
    let trusted = trust_for_run(&agent_dir, cwd, run.approve);
    let settings = settings::load(agent_dir.path(), cwd, trusted);
    print_settings_errors(&settings);
    let registry = Arc::new(ModelRegistry::load(agent_dir.clone()));
    let manager = open_session(run, &agent_dir, cwd)?;
    let warn = |w: &str| eprintln!("Warning: {w}");
    let model = match model {
        Some(model) => ChosenModel::given(model, run.thinking.unwrap_or_default()),
        // A failure names the broken configuration files itself.
        None => choose_model(&registry, run, &settings, &manager, &warn)?,
    };
    for e in registry.load_errors() {
        eprintln!("Warning: {e}");
    }
    Ok(Prepared {
        agent_dir,
        settings,
        registry,
        manager,
        model,
    })
}

impl Prepared {
    fn build(
        self,
        run: &RunArgs,
        cwd: &Path,
        extra_tools: Vec<Arc<dyn AgentTool>>,
    ) -> anyhow::Result<AgentSession> {
        let workspace = Arc::new(DiskWorkspace::new(
            [cwd.to_path_buf()],
            PermissionPolicy::AllowAll,
        ));
        build_session(
            SessionPlan {
                agent_dir: &self.agent_dir,
                settings: &self.settings,
                registry: self.registry,
                cwd,
                run,
                session: self.manager,
                workspace,
                bash_policy: BashPolicy::Allow,
                model: self.model,
                extra_tools,
            },
            &|w| eprintln!("Warning: {w}"),
        )
    }
}

/// Project trust where nobody can be asked (as pi's print and JSON modes): a folder that would
/// need a question is not trusted, and stderr says what was left out and how to trust it.
fn trust_for_run(agent_dir: &AgentDir, cwd: &Path, approve: Option<bool>) -> bool {
    let decision = decide_trust(agent_dir, cwd, approve, &mut |w| eprintln!("Warning: {w}"));
    let resources = match &decision {
        TrustDecision::Ask(resources) => Some(resources.clone()),
        TrustDecision::Decided { .. } => None,
    };
    let (trusted, source) = decision.or_untrusted();
    match (trusted, source) {
        (true, _) | (false, TrustSource::CommandLine) => {}
        (false, TrustSource::Saved(path)) => eprintln!(
            "Note: {} is not trusted (saved in trust.json for {}); its project configuration is \
             ignored. Pass --approve to use it for one run.",
            cwd.display(),
            path.display()
        ),
        (false, _) => {
            let resources =
                resources.unwrap_or_else(|| ProtectedResources::find(cwd, home().as_deref()));
            eprintln!("Note: {}", untrusted_note(cwd, &resources));
        }
    }
    trusted
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

fn current_dir() -> anyhow::Result<PathBuf> {
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

/// Runs print or JSON mode.
pub fn run(run: RunArgs, mode: OutputMode) -> ExitCode {
    let outcome = (|| -> anyhow::Result<bool> {
        let cwd = current_dir()?;
        let prompts = prompts(&run, &cwd)?;
        let rt = runtime()?;
        rt.block_on(async move {
            let setup = setup(&run, &cwd).await?;
            let outcome = execute(&setup.session, prompts, mode).await;
            setup.mcp.shutdown().await;
            outcome
        })
    })();
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Sends `prompts` and prints as `mode` says; `Ok(false)` when the run ended badly.
pub async fn execute(
    session: &AgentSession,
    prompts: Vec<(String, Vec<ImageContent>)>,
    mode: OutputMode,
) -> anyhow::Result<bool> {
    // The JSON printer reports how many `agent_settled` events it has written, so the run can
    // wait for the last one before returning.
    let (settled_tx, mut settled_rx) = tokio::sync::watch::channel(0usize);
    let printer = (mode == OutputMode::Json).then(|| {
        let header = session.with_session(|s| s.header().clone());
        let mut rx = session.subscribe();
        tokio::spawn(async move {
            if let Ok(h) = JsonLines::header(&header) {
                let _ = JsonLines::write_line(&mut std::io::stdout().lock(), &h);
            }
            let mut lines = JsonLines::new();
            while let Some(event) = rx.recv().await {
                let value = match &event {
                    AgentSessionEvent::Agent(e) => lines.agent_event(e),
                    AgentSessionEvent::Session(e) => serde_json::to_value(e),
                };
                if let Ok(v) = value {
                    let mut out = std::io::stdout().lock();
                    let _ = JsonLines::write_line(&mut out, &v);
                    let _ = out.flush();
                }
                if event.kind() == "agent_settled" {
                    settled_tx.send_modify(|n| *n += 1);
                }
            }
        })
    });
    let abort_on_ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    tokio::pin!(abort_on_ctrl_c);
    let mut sent = 0usize;
    for (text, images) in prompts {
        sent += 1;
        let prompt = session.prompt(&text, images);
        tokio::pin!(prompt);
        tokio::select! {
            result = &mut prompt => result?,
            _ = &mut abort_on_ctrl_c => {
                session.abort();
                prompt.await?;
                break;
            }
        }
        if session
            .last_assistant()
            .is_some_and(|m| matches!(m.stop_reason, StopReason::Error | StopReason::Aborted))
        {
            break;
        }
    }
    let last = session.last_assistant();
    if printer.is_some() {
        let _ = settled_rx.wait_for(|n| *n >= sent).await;
    }
    let Some(last) = last else {
        bail!("The model gave no answer");
    };
    match mode {
        OutputMode::Text => match text_output::final_text(&last) {
            Ok(text) => {
                print!("{text}");
                let _ = std::io::stdout().flush();
                Ok(true)
            }
            Err(e) => {
                eprintln!("{e}");
                Ok(false)
            }
        },
        OutputMode::Json => Ok(!matches!(
            last.stop_reason,
            StopReason::Error | StopReason::Aborted
        )),
    }
}
