//! Setting a session up, one way for every front door.
//!
//! The CLI, the language server and the ACP agent differ only in where files and consent come
//! from (the [`Workspace`] they build), how bash is allowed, how a project-trust question is
//! asked, and which extra MCP servers a client names. Everything else happens here, so
//! `tandem -p`, `tandem lsp` and `tandem acp` agree on every default and report the same
//! problems:
//!
//! 1. The front door decides the folder's trust as far as it can without asking
//!    ([`decide_trust`], or the editor's say), and calls [`prepare`] with a [`SessionRequest`]:
//!    settings loaded with that decision, the models and keys, the session's history opened
//!    from its [`Origin`], and the model chosen with its key ([`choose_model`]). Nothing has
//!    started yet: no usable model, an unreadable session file or no agent directory is a
//!    [`SetupError`] naming what to fix.
//! 2. It builds its workspace for the session's id and calls [`Prepared::start`]: the MCP
//!    servers of the settings (plus the client's) start, then the resources, system prompt and
//!    tools are assembled into an [`AgentSession`]. The session's language intelligence is the
//!    editor's when the front door gave one ([`Prepared::with_intel`]), else Tandem's own
//!    language servers ([`LanguageServers`], for a trusted folder only; they start on first
//!    use).
//!
//! Every non-fatal problem (a broken settings.json, models.json, auth.json or trust.json, an MCP
//! server that did not start, a resource that did not load, a skipped session line, a model
//! that could not be restored, a session file held by another process and continued in a copy) is collected as one line in [`Started::problems`], for the front
//! door to show its user. A folder trusted after its session was built (a question answered
//! later) gets the project's configuration through [`apply_trust`], with the same assembly.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tandem_agent::{default_stream_fn, AgentTool};
use tandem_ai::registry::{AgentDir, ModelRegistry};
use tandem_ai::sync::lock;
use tandem_ai::{Model, StreamOptions, ThinkingLevel};
use tandem_coding::agent_session::{AgentSession, AgentSessionOptions, Reconfiguration};
use tandem_coding::calls::CallRecords;
use tandem_coding::extensions::SessionExtensions;
use tandem_coding::intel::LanguageIntel;
use tandem_coding::resources::{today_utc, ResourceOptions, Resources, SystemPrompt};
use tandem_coding::session::system::SystemState;
use tandem_coding::session::SessionManager;
use tandem_coding::settings::{self, LoadedSettings};
use tandem_coding::tools::{self, DEFAULT_TOOLS};
use tandem_coding::trust::{self, ProtectedResources, TrustDecision, TrustInputs};
use tandem_coding::{BashPolicy, ShellSettings, ToolEnv, Workspace};

use super::models::{self, require_key, ModelDefaults, ModelError, ResumedSession};
use super::options::{Origin, SessionOptions, ToolSelection, EDITOR_TOOLS};
use crate::extensions::discover::discover_with;
use crate::extensions::{ExtensionUi, Extensions, NoUi, Sources, StartOptions};
use crate::langserver::LanguageServers;
use crate::mcp::{connect_for_session, McpServerConfig, McpTools};

/// Whether `cwd`'s protected project configuration may be used, as far as that can be decided
/// without asking: `command_line` (`--approve` / `--no-approve`), the nearest decision in
/// trust.json, then `defaultProjectTrust` of the agent directory's settings. `warn` hears a
/// trust.json that cannot be read. Blocking (reads two small files).
pub fn decide_trust(
    agent_dir: &AgentDir,
    cwd: &Path,
    command_line: Option<bool>,
    warn: &mut dyn FnMut(String),
) -> TrustDecision {
    // Only the agent directory's settings may say how untrusted folders are treated.
    let global = settings::load(agent_dir.path(), cwd, false);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    trust::decide(
        &TrustInputs {
            dir: cwd,
            agent_dir: agent_dir.path(),
            command_line,
            default: global.global.default_project_trust(),
            home: home.as_deref(),
        },
        warn,
    )
}

/// The model a session runs on, chosen and with its key found.
#[derive(Debug, Clone)]
pub struct ChosenModel {
    /// The model.
    pub model: Model,
    /// Its thinking level (clamped to what it supports).
    pub thinking_level: ThinkingLevel,
    /// The key given with the options (`--api-key`), kept for the session; keys from auth.json,
    /// the environment or models.json are looked up per call.
    pub runtime_key: Option<String>,
}

/// Why no model could be chosen, with the configuration problems that may be the cause (a broken
/// models.json or auth.json), so a broken file is never hidden behind "no key" or "not found".
#[derive(Debug, thiserror::Error)]
#[error("{error}{}", problems_text(.problems))]
pub struct ModelSetupError {
    /// What failed.
    pub error: Box<ModelError>,
    /// The registry's load problems, one line each.
    pub problems: Vec<String>,
}

impl ModelSetupError {
    /// Whether a key (or a provider with one) would fix it: what ACP calls "authentication
    /// required" and the language server "no model".
    pub fn needs_key(&self) -> bool {
        matches!(*self.error, ModelError::Key(_) | ModelError::NoModels(_))
    }
}

fn problems_text(problems: &[String]) -> String {
    problems
        .iter()
        .map(|p| format!("\nConfiguration problem: {p}"))
        .collect()
}

/// Chooses the model for a session over `session`'s history (its last model when it has
/// messages) and finds its key. No usable model, or a chosen model without a key, is a
/// [`ModelSetupError`] naming what to set and any broken configuration file. `warn` hears notes
/// such as a resumed model that no longer exists. May run a `!command` key (blocking).
pub fn choose_model(
    registry: &ModelRegistry,
    options: &SessionOptions,
    loaded: &LoadedSettings,
    session: &SessionManager,
    warn: &mut dyn FnMut(String),
) -> Result<ChosenModel, ModelSetupError> {
    // A session with messages keeps its model (model and thinking-level entries alone, as a
    // new session records before its first message, do not count).
    let context = session.build_context();
    let resumed = (!context.messages.is_empty()).then(|| ResumedSession {
        model: context.model.map(|m| (m.provider, m.model_id)),
        thinking_level: Some(context.thinking_level),
    });
    let merged = &loaded.merged;
    let defaults = ModelDefaults {
        provider: merged.default_provider.clone(),
        model: merged.default_model.clone(),
        thinking_level: merged.default_thinking_level,
        model_thinking_levels: merged.model_thinking_levels.clone().unwrap_or_default(),
        enabled_models: merged.enabled_models.clone(),
    };
    let failed = |error: ModelError| ModelSetupError {
        error: Box::new(error),
        problems: registry
            .load_errors()
            .iter()
            .map(ToString::to_string)
            .collect(),
    };
    let choice =
        models::choose_model(registry, options, &defaults, resumed.as_ref()).map_err(failed)?;
    for w in choice.warnings {
        warn(w);
    }
    let key = require_key(registry, &choice.model, options.api_key.as_deref()).map_err(failed)?;
    Ok(ChosenModel {
        model: choice.model,
        thinking_level: choice.thinking_level,
        // Only an explicit key (`--api-key`) is fixed for the session. A key resolved from
        // auth.json, the environment or models.json belongs to the first model's provider: it
        // must not be sent to another provider after a model switch, so it is resolved per call.
        runtime_key: key.and(options.api_key.clone()),
    })
}

/// Switches `session` to `model` (the user's choice from the registry's list), refusing a model
/// whose key is missing or cannot be read, as setup does. The thinking level is clamped to what
/// the new model supports. May run a `!command` key (blocking).
pub fn switch_model(
    session: &AgentSession,
    registry: &ModelRegistry,
    model: Model,
) -> Result<(), SetupError> {
    require_key(registry, &model, None).map_err(|error| ModelSetupError {
        error: Box::new(error),
        problems: Vec::new(),
    })?;
    let failed = |e| SetupError::Build(anyhow::anyhow!("could not switch the model: {e}"));
    let level = session.agent().with_state(|s| s.thinking_level);
    let effective = model.effective_thinking(level);
    session.set_model(model).map_err(failed)?;
    if effective != level {
        session.set_thinking_level(effective).map_err(failed)?;
    }
    Ok(())
}

/// [`switch_model`], then a thinking level the new model clamped is recorded and reported
/// (`thinking_level_changed`), as a front door switching on the user's word does.
pub async fn switch_announced(
    session: &AgentSession,
    registry: &ModelRegistry,
    model: Model,
) -> Result<(), SetupError> {
    let before = session.agent().with_state(|s| s.thinking_level);
    switch_model(session, registry, model)?;
    if session.agent().with_state(|s| s.thinking_level) != before {
        session.announce_thinking_level().await;
    }
    Ok(())
}

/// The thinking levels `model` accepts, as pi lists them (`off` alone for a model that cannot
/// reason).
pub fn thinking_levels(model: &Model) -> Vec<tandem_ai::ThinkingLevel> {
    tandem_ai::ThinkingLevel::ALL
        .into_iter()
        .filter(|l| model.effective_thinking(*l) == *l)
        .collect()
}

/// Why a session could not be set up. Each names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// pi's agent directory cannot be found (no HOME, no PI_CODING_AGENT_DIR).
    #[error("{0}")]
    AgentDir(String),
    /// The session's history could not be read (a file to open, fork or continue).
    #[error("{0}")]
    SessionFile(String),
    /// No usable model.
    #[error(transparent)]
    Model(#[from] ModelSetupError),
    /// The session could not be assembled (its first entries could not be recorded).
    #[error("the session could not be set up: {0:#}")]
    Build(anyhow::Error),
    /// The command line named flags neither Tandem nor a loaded extension has.
    #[error("{}", .0.join("; "))]
    UnknownFlags(Vec<String>),
}

/// What a front door asks for.
pub struct SessionRequest<'a> {
    /// pi's agent directory.
    pub agent_dir: AgentDir,
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// Model, tools, prompts.
    pub options: &'a SessionOptions,
    /// Where the history comes from.
    pub origin: Origin,
    /// The folder's trust as far as the front door knows it; [`TrustDecision::Ask`] builds an
    /// untrusted session whose question is the front door's to ask.
    pub trust: TrustDecision,
    /// Problems the front door found deciding trust (an unreadable trust.json).
    pub trust_problems: Vec<String>,
    /// A model to use as given instead of choosing one (the demo's scripted model).
    pub model: Option<Model>,
}

/// A session decided but not started: no MCP server runs yet.
pub struct Prepared {
    agent_dir: AgentDir,
    cwd: PathBuf,
    options: SessionOptions,
    settings: LoadedSettings,
    registry: Arc<ModelRegistry>,
    manager: SessionManager,
    model: ChosenModel,
    trusted: bool,
    pending: Option<ProtectedResources>,
    problems: Vec<String>,
    intel: Option<Arc<dyn LanguageIntel>>,
    /// The front door's name and user interface for extensions.
    extension_front: (&'static str, Arc<dyn ExtensionUi>),
    /// Why the session starts, as extensions' `session_start` says, and the session it
    /// replaces.
    start_reason: (&'static str, Option<String>),
}

/// Where the history of a session a front door (re)starts comes from.
pub enum History {
    /// Opened (or created) by origin.
    Origin(Origin),
    /// Opened already (a fork or a copy).
    Opened(Box<SessionManager>),
}

/// The folder's trust as far as it is decided without asking — a question is kept for the
/// front door to ask ([`Started::pending`]) — then [`prepare`] or [`prepare_history`]: what
/// RPC mode and the terminal mode start every session with.
pub fn prepare_undecided(
    agent_dir: &AgentDir,
    cwd: &Path,
    options: &SessionOptions,
    history: History,
) -> Result<Prepared, SetupError> {
    let mut trust_problems = Vec::new();
    let trust = decide_trust(agent_dir, cwd, options.approve, &mut |w| {
        trust_problems.push(w)
    });
    let request = |origin| SessionRequest {
        agent_dir: agent_dir.clone(),
        cwd: cwd.to_path_buf(),
        options,
        origin,
        trust,
        trust_problems,
        model: None,
    };
    match history {
        History::Origin(origin) => prepare(request(origin)),
        History::Opened(manager) => prepare_history(request(Origin::InMemory), *manager),
    }
}

/// Decides everything a session needs before anything starts (blocking: reads the
/// configuration files, may run a `!command` key). See the module docs.
pub fn prepare(request: SessionRequest<'_>) -> Result<Prepared, SetupError> {
    let manager = open_history(
        &request.origin,
        request.options,
        &request.agent_dir,
        &request.cwd,
    )?;
    prepare_history(request, manager)
}

/// [`prepare`] over a history the caller opened (a fork of a live session's branch);
/// `request.origin` is not read.
pub fn prepare_history(
    request: SessionRequest<'_>,
    mut manager: SessionManager,
) -> Result<Prepared, SetupError> {
    let SessionRequest {
        agent_dir,
        cwd,
        options,
        origin: _,
        trust,
        trust_problems,
        model,
    } = request;
    let mut problems = trust_problems;
    let (trusted, pending) = match trust {
        TrustDecision::Decided { trusted, .. } => (trusted, None),
        TrustDecision::Ask(resources) => (false, Some(resources)),
    };
    let loaded = settings::load(agent_dir.path(), &cwd, trusted);
    problems.extend(loaded.errors.iter().map(ToString::to_string));
    let registry = Arc::new(ModelRegistry::load(agent_dir.clone()));
    // A session file another process holds is continued in a copy: the user hears which.
    problems.extend(manager.take_notices());
    let model = match model {
        Some(model) => ChosenModel {
            thinking_level: model.effective_thinking(options.thinking.unwrap_or_default()),
            model,
            runtime_key: None,
        },
        // A failure names the broken configuration files: the registry's, and those found so
        // far (a settings.json that did not load may be why the wrong model was chosen).
        None => {
            let chosen = choose_model(&registry, options, &loaded, &manager, &mut |w| {
                problems.push(w)
            });
            chosen.map_err(|mut e| {
                e.problems.splice(0..0, problems.iter().cloned());
                e
            })?
        }
    };
    problems.extend(registry.load_errors().iter().map(ToString::to_string));
    if let Some(path) = manager.session_file() {
        for skipped in &manager.load_report().skipped {
            problems.push(format!(
                "{}: line {} was skipped ({})",
                path.display(),
                skipped.line,
                skipped.reason
            ));
        }
    }
    Ok(Prepared {
        agent_dir,
        cwd,
        options: options.clone(),
        settings: loaded,
        registry,
        manager,
        model,
        trusted,
        pending,
        problems,
        intel: None,
        extension_front: ("print", Arc::new(NoUi)),
        start_reason: ("startup", None),
    })
}

/// Opens the session's history as `origin` says.
fn open_history(
    origin: &Origin,
    options: &SessionOptions,
    agent_dir: &AgentDir,
    cwd: &Path,
) -> Result<SessionManager, SetupError> {
    let dir = options.session_dir(agent_dir, cwd);
    let failed = |e: tandem_coding::session::SessionError| SetupError::SessionFile(e.to_string());
    Ok(match origin {
        Origin::New => SessionManager::create(cwd, &dir),
        Origin::NewWithId(id) => SessionManager::create_with_id(cwd, &dir, id.clone()),
        Origin::InMemory => SessionManager::in_memory(cwd),
        Origin::Continue => SessionManager::continue_recent(cwd, &dir).map_err(|e| {
            SetupError::SessionFile(format!(
                "could not continue the latest session in {}: {e}",
                dir.display()
            ))
        })?,
        Origin::Open(path) => SessionManager::open(path).map_err(failed)?,
        Origin::Fork(path) => SessionManager::fork_from(path, cwd, &dir).map_err(failed)?,
    })
}

/// A session set up, with what its front door keeps beside it.
pub struct Started {
    /// The session.
    pub session: AgentSession,
    /// Its MCP servers (stop them with `shutdown` when the session ends).
    pub mcp: McpTools,
    /// Its extensions (stop them with `shutdown` when the session ends; dropped, their hosts
    /// are killed).
    pub extensions: Option<Extensions>,
    /// Tandem's own language servers, when the session uses them (stop them with `shutdown`
    /// when the session ends).
    pub languages: Option<Arc<LanguageServers>>,
    /// The models and keys it was set up with (for model switches).
    pub registry: Arc<ModelRegistry>,
    /// Whether the project's configuration is in use.
    pub trusted: bool,
    /// The folder's trust question, when it must still be asked.
    pub pending: Option<ProtectedResources>,
    /// Problems and notes for the user, one line each (see the module docs).
    pub problems: Vec<String>,
}

impl Prepared {
    /// With the editor's language intelligence (its diagnostics, definitions, …) rather than
    /// language servers of Tandem's own (`None`: Tandem's own, for a trusted folder).
    pub fn with_intel(mut self, intel: Option<Arc<dyn LanguageIntel>>) -> Self {
        self.intel = intel;
        self
    }

    /// How this front door names itself to extensions (`ctx.mode`) and shows their dialogs
    /// (default: print mode, no one to ask).
    pub fn with_extension_front(mut self, mode: &'static str, ui: Arc<dyn ExtensionUi>) -> Self {
        self.extension_front = (mode, ui);
        self
    }

    /// Why the session starts, for its extensions' `session_start` (pi's `"new"`, `"resume"`,
    /// `"fork"` when it replaces the session in `previous`; default `"startup"`).
    pub fn with_start_reason(mut self, reason: &'static str, previous: Option<String>) -> Self {
        self.start_reason = (reason, previous);
        self
    }

    /// The file of the session that will be started (`None` for one kept in memory).
    pub fn session_file(&self) -> Option<PathBuf> {
        self.manager.session_file().map(Path::to_path_buf)
    }

    /// The id of the session that will be started.
    pub fn session_id(&self) -> &str {
        self.manager.session_id()
    }

    /// Starts the MCP servers of the settings and `servers` (a client's), then builds the
    /// session over `workspace`; the servers are stopped again when the build fails.
    pub async fn start(
        self,
        workspace: Arc<dyn Workspace>,
        bash_policy: BashPolicy,
        servers: &[McpServerConfig],
    ) -> Result<Started, SetupError> {
        let mcp = connect_for_session(&self.settings, servers, &self.cwd).await;
        let tools = mcp.tools();
        let (extensions, mut extension_problems) = self.start_extensions().await;
        let given = &self.options.extension_flags;
        if !given.is_empty() {
            let registered = extensions
                .as_ref()
                .map(Extensions::flags)
                .unwrap_or_default();
            let unknown = crate::cli::extension_flags::unregistered(
                given,
                &registered,
                &crate::cli::args::long_flags(),
            );
            if !unknown.is_empty() {
                mcp.shutdown().await;
                if let Some(extensions) = extensions {
                    extensions.shutdown().await;
                }
                return Err(SetupError::UnknownFlags(unknown));
            }
        }
        let ext_tools = extensions
            .as_ref()
            .map(Extensions::tools)
            .unwrap_or_default();
        let hooks = extensions.as_ref().map(Extensions::session_hooks);
        let (reason, previous) = self.start_reason.clone();
        let built = tokio::task::spawn_blocking(move || {
            self.build_with(workspace, bash_policy, tools, true, (ext_tools, hooks))
        })
        .await
        .map_err(|e| SetupError::Build(anyhow::anyhow!("the setup task failed: {e}")));
        match built {
            Ok(Ok(mut started)) => {
                started.problems.extend(mcp.warnings().iter().cloned());
                started.problems.append(&mut extension_problems);
                started.mcp = mcp;
                if let Some(extensions) = &extensions {
                    let builtins = extensions.builtins_to_activate();
                    let _ = started.session.handle().activate(&builtins);
                    extensions
                        .bind_as(&started.session, reason, previous.as_deref())
                        .await;
                }
                started.extensions = extensions;
                Ok(started)
            }
            Ok(Err(e)) | Err(e) => {
                mcp.shutdown().await;
                if let Some(extensions) = extensions {
                    extensions.shutdown().await;
                }
                Err(e)
            }
        }
    }

    /// Finds this session's extensions and starts their hosts; their problems, one line each.
    async fn start_extensions(&self) -> (Option<Extensions>, Vec<String>) {
        // Packages first: `-e npm:…` and configured packages that are missing are installed.
        let packages = crate::packages::resolve_for_session(
            self.agent_dir.path(),
            &self.cwd,
            &self.settings,
            self.trusted,
            &self.options.extensions,
        )
        .await;
        let mut problems = packages.problems;
        let (found, more) = discover_with(
            &Sources {
                cli: &packages.cli_paths,
                no_discovery: self.options.no_extensions,
                agent_dir: self.agent_dir.path(),
                cwd: &self.cwd,
                trusted: self.trusted,
                user_settings: self
                    .settings
                    .global
                    .extensions
                    .as_deref()
                    .unwrap_or_default(),
                project_settings: if self.trusted {
                    self.settings
                        .project
                        .extensions
                        .as_deref()
                        .unwrap_or_default()
                } else {
                    &[]
                },
            },
            &packages.extensions,
        );
        problems.extend(more);
        if found.is_empty() {
            return (None, problems);
        }
        let extensions = start_reporting(
            found,
            ExtensionStart {
                cwd: &self.cwd,
                agent_dir: &self.agent_dir,
                front: self.extension_front.clone(),
                trusted: self.trusted,
                settings: &self.settings,
                options: &self.options,
            },
            &mut problems,
        )
        .await;
        (extensions, problems)
    }

    /// Builds the session without MCP servers or language servers of Tandem's own (blocking;
    /// the demo's in-process run).
    pub fn build(
        self,
        workspace: Arc<dyn Workspace>,
        bash_policy: BashPolicy,
    ) -> Result<Started, SetupError> {
        self.build_with(
            workspace,
            bash_policy,
            Vec::new(),
            false,
            (Vec::new(), None),
        )
    }

    fn build_with(
        self,
        workspace: Arc<dyn Workspace>,
        bash_policy: BashPolicy,
        extra_tools: Vec<Arc<dyn AgentTool>>,
        own_servers: bool,
        (ext_tools, ext_hooks): ExtensionParts,
    ) -> Result<Started, SetupError> {
        let Prepared {
            agent_dir,
            cwd,
            options,
            settings: loaded,
            registry,
            manager,
            model,
            trusted,
            pending,
            mut problems,
            intel,
            extension_front: _,
            start_reason: _,
        } = self;
        let (intel, languages) = match intel {
            Some(editor) => (Some(editor), None),
            None if own_servers => {
                let own = LanguageServers::for_session(&loaded, &cwd, trusted);
                problems.extend(own.problems);
                (own.servers.as_ref().map(|s| s.intel()), own.servers)
            }
            None => (None, None),
        };
        let calls = Arc::new(CallRecords::new());
        let parts = assemble(
            &Project {
                agent_dir: &agent_dir,
                settings: &loaded,
                cwd: &cwd,
                options: &options,
                workspace,
                bash_policy,
                calls: calls.clone(),
                intel: intel.clone(),
                recorded: recorded(&manager),
            },
            extra_tools,
            ext_tools,
            &mut problems,
        );
        let session = AgentSession::new(AgentSessionOptions {
            cwd: cwd.clone(),
            model: model.model,
            thinking_level: model.thinking_level,
            tools: parts.tools,
            inactive_tools: parts.inactive,
            system_prompt: parts.system_prompt,
            session: manager,
            settings: loaded.merged.clone(),
            resources: Some(parts.resources),
            registry: Some(registry.clone()),
            runtime_api_key: model.runtime_key,
            stream_fn: default_stream_fn(),
            stream_options: StreamOptions::default(),
            calls,
            extensions: ext_hooks,
        })
        .map_err(|e| SetupError::Build(e.into()))?;
        Ok(Started {
            session,
            extensions: None,
            mcp: McpTools::default(),
            languages,
            registry,
            trusted,
            pending,
            problems,
        })
    }
}

/// An extension's tools and the hooks a session asks (none without extensions).
type ExtensionParts = (Vec<Arc<dyn AgentTool>>, Option<Arc<dyn SessionExtensions>>);

/// What a folder trusted after its session was built needs: the session's own setup.
pub struct TrustLater<'a> {
    /// pi's agent directory.
    pub agent_dir: &'a AgentDir,
    /// The session's working directory.
    pub cwd: &'a Path,
    /// The options the session was set up with.
    pub options: &'a SessionOptions,
    /// The session's workspace.
    pub workspace: Arc<dyn Workspace>,
    /// The bash policy the session was built with.
    pub bash_policy: BashPolicy,
    /// The client's MCP servers, started again with the project's.
    pub servers: &'a [McpServerConfig],
    /// The editor's language intelligence; `None`: Tandem's own language servers, now that
    /// the folder is trusted.
    pub intel: Option<Arc<dyn LanguageIntel>>,
    /// Whether the project's configuration is used: `true` when the folder was just trusted;
    /// the folder's current decision when the configuration is only read again (`/reload`).
    pub trusted: bool,
}

/// What trusting a session's folder later started: replace the session's MCP servers and own
/// language servers with these (stopping the old ones).
pub struct Trusted {
    /// The MCP servers of the settings, the project's included.
    pub mcp: McpTools,
    /// Tandem's own language servers, when the session uses them.
    pub languages: Option<Arc<LanguageServers>>,
    /// Problems for the user, one line each.
    pub problems: Vec<String>,
}

/// What starting a session's extensions takes.
struct ExtensionStart<'a> {
    cwd: &'a Path,
    agent_dir: &'a AgentDir,
    front: (&'static str, Arc<dyn ExtensionUi>),
    trusted: bool,
    settings: &'a LoadedSettings,
    options: &'a SessionOptions,
}

/// Starts the hosts of `found`. While they start, their problems join `problems` (the
/// session's list, shown with the others); afterwards the front door shows them as they come.
async fn start_reporting(
    found: Vec<crate::extensions::Found>,
    start: ExtensionStart<'_>,
    problems: &mut Vec<String>,
) -> Option<Extensions> {
    let reported = Arc::new(Mutex::new(Some(Vec::new())));
    let sink = reported.clone();
    let (mode, ui) = start.front;
    let front = ui.clone();
    let extensions = Extensions::start(
        found,
        StartOptions {
            cwd: start.cwd,
            agent_dir: start.agent_dir.path(),
            mode,
            trusted: start.trusted,
            ui,
            event_timeout: start.settings.merged.extension_event_timeout(),
            flags: start.options.extension_flags.clone(),
            report: Arc::new(move |line| {
                tracing::warn!(target: "tandem::extensions", "{line}");
                match lock(&sink).as_mut() {
                    Some(collected) => collected.push(line),
                    None => front.problem(&line),
                }
            }),
        },
    )
    .await;
    problems.extend(lock(&reported).take().unwrap_or_default());
    extensions
}

/// The session's extensions after its configuration was read again ([`apply_trust`]: a folder
/// trusted later, or `/reload`): with `trusted`, the project's `.pi/extensions/` and project
/// settings' extensions join the user's. When that changes what loads, `old` is shut down and
/// new hosts are started (in load order: a host's extensions are loaded together), their tools
/// given to the session and its hooks replaced; otherwise `old` is kept. The extensions to
/// keep, and the problems found.
pub async fn reload_extensions(
    session: &AgentSession,
    agent_dir: &AgentDir,
    cwd: &Path,
    options: &SessionOptions,
    trusted: bool,
    (mode, ui): (&'static str, Arc<dyn ExtensionUi>),
    old: Option<Extensions>,
) -> (Option<Extensions>, Vec<String>) {
    let loaded = {
        let (dir, cwd) = (agent_dir.clone(), cwd.to_path_buf());
        match tokio::task::spawn_blocking(move || settings::load(dir.path(), &cwd, trusted)).await {
            Ok(loaded) => loaded,
            Err(e) => {
                return (
                    old,
                    vec![format!("the project's settings could not be read: {e}")],
                )
            }
        }
    };
    let packages = crate::packages::resolve_for_session(
        agent_dir.path(),
        cwd,
        &loaded,
        trusted,
        &options.extensions,
    )
    .await;
    let mut problems = packages.problems;
    let (found, more) = discover_with(
        &Sources {
            cli: &packages.cli_paths,
            no_discovery: options.no_extensions,
            agent_dir: agent_dir.path(),
            cwd,
            trusted,
            user_settings: loaded.global.extensions.as_deref().unwrap_or_default(),
            project_settings: loaded.project.extensions.as_deref().unwrap_or_default(),
        },
        &packages.extensions,
    );
    problems.extend(more);
    let before = old.as_ref().map(Extensions::loaded).unwrap_or_default();
    if found.iter().map(|f| &f.path).eq(before.iter()) {
        return (old, problems);
    }
    if let Some(old) = old {
        old.shutdown().await;
    }
    let extensions = start_reporting(
        found,
        ExtensionStart {
            cwd,
            agent_dir,
            front: (mode, ui),
            trusted,
            settings: &loaded,
            options,
        },
        &mut problems,
    )
    .await;
    match &extensions {
        Some(extensions) => {
            if let Err(e) = session.handle().add_tools(extensions.tools()) {
                problems.push(format!("the extensions' tools could not be added: {e}"));
            }
            session.set_extensions(Some(extensions.session_hooks()));
            let _ = session
                .handle()
                .activate(&extensions.builtins_to_activate());
            extensions.bind(session).await;
        }
        None => session.set_extensions(None),
    }
    (extensions, problems)
}

/// Gives `session` (built untrusted while its folder's trust was pending) the project's
/// configuration now that the folder is trusted: settings, resources, system prompt, MCP servers
/// and tools, and — for a session without messages whose model was not asked for by name — the
/// model the new settings choose; and Tandem's own language servers unless the editor gives
/// language intelligence. Returns the new MCP servers and language servers (the caller keeps
/// them and stops the old ones) and the problems found. Refused while the session runs.
pub async fn apply_trust(
    session: Arc<AgentSession>,
    later: TrustLater<'_>,
) -> anyhow::Result<Trusted> {
    let loaded = {
        let (dir, cwd, trusted) = (
            later.agent_dir.clone(),
            later.cwd.to_path_buf(),
            later.trusted,
        );
        tokio::task::spawn_blocking(move || settings::load(dir.path(), &cwd, trusted)).await?
    };
    let mcp = connect_for_session(&loaded, later.servers, later.cwd).await;
    let (intel, languages, own_problems) = match later.intel {
        Some(editor) => (Some(editor), None, Vec::new()),
        None => {
            let (settings, cwd, trusted) = (loaded.clone(), later.cwd.to_path_buf(), later.trusted);
            let own = tokio::task::spawn_blocking(move || {
                LanguageServers::for_session(&settings, &cwd, trusted)
            })
            .await?;
            (
                own.servers.as_ref().map(|s| s.intel()),
                own.servers,
                own.problems,
            )
        }
    };
    let problems = Arc::new(Mutex::new(
        loaded
            .errors
            .iter()
            .map(ToString::to_string)
            .chain(mcp.warnings().iter().cloned())
            .chain(own_problems)
            .collect::<Vec<_>>(),
    ));
    let applied = {
        let tools = mcp.tools();
        let (agent_dir, cwd, options) = (
            later.agent_dir.clone(),
            later.cwd.to_path_buf(),
            later.options.clone(),
        );
        let (workspace, bash_policy, problems) =
            (later.workspace, later.bash_policy, problems.clone());
        tokio::task::spawn_blocking(move || {
            let mut found = Vec::new();
            let registry = ModelRegistry::load(agent_dir.clone());
            let result = reconfigure(
                &session,
                &Project {
                    agent_dir: &agent_dir,
                    settings: &loaded,
                    cwd: &cwd,
                    options: &options,
                    workspace,
                    bash_policy,
                    calls: session.calls().clone(),
                    intel,
                    recorded: session.with_session(|m| recorded(m)),
                },
                &registry,
                tools,
                &mut found,
            );
            lock(&problems).extend(found);
            result
        })
        .await
    };
    let failed = match applied {
        Ok(Ok(())) => {
            let problems = std::mem::take(&mut *lock(&problems));
            return Ok(Trusted {
                mcp,
                languages,
                problems,
            });
        }
        Ok(Err(e)) => e,
        Err(e) => e.into(),
    };
    mcp.shutdown().await;
    if let Some(languages) = languages {
        languages.shutdown().await;
    }
    Err(failed)
}

/// What the project contributes to a session.
struct Project<'a> {
    agent_dir: &'a AgentDir,
    settings: &'a LoadedSettings,
    cwd: &'a Path,
    options: &'a SessionOptions,
    workspace: Arc<dyn Workspace>,
    bash_policy: BashPolicy,
    /// The session's call records (kept across a reconfiguration).
    calls: Arc<CallRecords>,
    /// Language intelligence, when any.
    intel: Option<Arc<dyn LanguageIntel>>,
    /// The prompt and tools the session's branch recorded, when it recorded any.
    recorded: Option<SystemState>,
}

/// The prompt and tools `manager`'s branch recorded in its system messages, when it has any.
fn recorded(manager: &SessionManager) -> Option<SystemState> {
    let state = SystemState::replay(&manager.build_context().messages);
    (!state.is_empty()).then_some(state)
}

fn reconfigure(
    session: &AgentSession,
    project: &Project<'_>,
    registry: &ModelRegistry,
    extra_tools: Vec<Arc<dyn AgentTool>>,
    problems: &mut Vec<String>,
) -> anyhow::Result<()> {
    let fresh = session.agent().with_state(|s| s.messages.is_empty());
    let model = if fresh && !project.options.names_model() {
        let chosen = session.with_session(|manager| {
            choose_model(
                registry,
                project.options,
                project.settings,
                manager,
                &mut |w| problems.push(w),
            )
        })?;
        let current = session
            .agent()
            .with_state(|s| (s.model.clone(), s.thinking_level));
        let same = current.0.provider == chosen.model.provider
            && current.0.id == chosen.model.id
            && current.1 == chosen.thinking_level;
        (!same).then_some((chosen.model, chosen.thinking_level))
    } else {
        None
    };
    let parts = assemble(project, extra_tools, Vec::new(), problems);
    session.reconfigure(Reconfiguration {
        settings: project.settings.merged.clone(),
        resources: Some(parts.resources),
        system_prompt: parts.system_prompt,
        tools: parts.tools,
        inactive_tools: parts.inactive,
        model,
    })?;
    Ok(())
}

/// The tools of a session whose branch recorded its tools, as pi 1.6 restores them when the
/// default set is in use: the recorded tools Tandem has, then the MCP tools and language tools
/// the branch never mentioned (they came after it recorded its tools; a built-in it never
/// mentioned stays out), then the `+name` / `-name` changes of `selection`.
///
/// A session file is data and may come from anywhere (`--session PATH`): its record restores a
/// built-in tool only when the settings allow it. Without `defaultTools` anywhere every
/// built-in is allowed; with them, only the tools a new session would get (`fresh`: the
/// settings' lists and this run's `--tools` changes), so neither `["read", "ls"]` nor
/// `["-bash"]` lets a record bring bash back, while `--tools +bash` on this run does. The
/// settings' plain names do not replace the record (they chose the tools a session starts
/// with). Each recorded tool left out is named in `problems`.
fn restored_tools(
    recorded: &SystemState,
    offered: &[&str],
    extra_tools: &[Arc<dyn AgentTool>],
    selection: &ToolSelection,
    restricted_to: Option<&[String]>,
    problems: &mut Vec<String>,
) -> (Vec<String>, Vec<tools::UnknownTool>) {
    let extra: Vec<&str> = extra_tools.iter().map(|t| t.name()).collect();
    let available =
        |n: &str| tools::ALL_TOOLS.contains(&n) || offered.contains(&n) || extra.contains(&n);
    let allowed = |n: &str| {
        extra.contains(&n) || restricted_to.is_none_or(|fresh| fresh.iter().any(|f| f == n))
    };
    let mentioned = recorded.mentioned_tools();
    let mut base: Vec<&str> = Vec::new();
    for name in recorded.tool_names() {
        if !available(name) {
            continue;
        }
        if !allowed(name) {
            problems.push(format!(
                "the resumed session recorded the tool `{name}`, which your settings' \
                 defaultTools leave out; it stays off (add it for this run with --tools +{name})"
            ));
            continue;
        }
        base.push(name);
    }
    for name in offered.iter().chain(&extra) {
        if !mentioned.iter().any(|m| m == name) && !base.contains(name) {
            base.push(name);
        }
    }
    let changes: Vec<&[String]> = selection.changes().map(Vec::as_slice).into_iter().collect();
    tools::select_tools(&base, &changes)
}

/// Resources, tools and system prompt, assembled the same way for a new session and a
/// reconfigured one.
struct Parts {
    resources: Arc<Resources>,
    tools: Vec<Arc<dyn AgentTool>>,
    /// Built-in tools the session starts without (an extension may turn them on).
    inactive: Vec<Arc<dyn AgentTool>>,
    system_prompt: SystemPrompt,
}

fn assemble(
    project: &Project<'_>,
    extra_tools: Vec<Arc<dyn AgentTool>>,
    ext_tools: Vec<Arc<dyn AgentTool>>,
    problems: &mut Vec<String>,
) -> Parts {
    let Project {
        agent_dir,
        settings: loaded,
        cwd,
        options,
        workspace,
        bash_policy,
        calls,
        intel,
        recorded,
    } = project;
    let merged = &loaded.merged;
    // The skills and prompt templates of the packages installed (installing them is the
    // extensions' start's business).
    let packages = crate::packages::for_session(&crate::packages::SessionRequest {
        agent_dir: agent_dir.path(),
        cwd,
        settings: loaded,
        trusted: loaded.project_trusted,
        cli: &options.extensions,
        install: false,
    });
    let resources = Resources::load(
        agent_dir.path(),
        cwd,
        loaded,
        &ResourceOptions {
            no_context_files: options.no_context_files,
            system_prompt: options.system_prompt.clone(),
            append_system_prompt: (!options.append_system_prompt.is_empty())
                .then(|| options.append_system_prompt.join("\n\n")),
            package_skills: packages.skills,
            package_prompts: packages.prompts,
            ..ResourceOptions::default()
        },
    );
    problems.extend(resources.diagnostics.iter().map(ToString::to_string));
    let env = Arc::new(
        ToolEnv::new(workspace.clone(), *cwd)
            .with_shell(ShellSettings {
                shell: merged.shell_path.clone().map(PathBuf::from),
                command_prefix: merged.shell_command_prefix.clone(),
                policy: *bash_policy,
            })
            .with_calls(calls.clone())
            .with_intel(intel.clone(), merged.diagnostics()),
    );
    let features = intel.as_ref().map(|i| i.features()).unwrap_or_default();
    let offered = tools::language_tools(features);
    let restoring = recorded.as_ref().filter(|_| options.tools.uses_default());
    let settings_lists: Vec<&[String]> = [
        loaded.global.default_tools.as_deref(),
        loaded.project.default_tools.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    // The front door's default set and the language tools a source answers, changed by the
    // settings' `defaultTools` (the user's, then the project's) and `--tools`.
    let fresh = {
        let (base, flag): (&[&str], Option<&Vec<String>>) = match &options.tools {
            ToolSelection::Default => (&DEFAULT_TOOLS, None),
            ToolSelection::Editor => (&EDITOR_TOOLS, None),
            ToolSelection::Only(list) => (&DEFAULT_TOOLS, Some(list)),
            ToolSelection::EditorList(list) => (&EDITOR_TOOLS, Some(list)),
        };
        let base: Vec<&str> = base.iter().chain(&offered).copied().collect();
        let lists: Vec<&[String]> = settings_lists
            .iter()
            .copied()
            .chain(flag.map(Vec::as_slice))
            .collect();
        tools::select_tools(&base, &lists)
    };
    let (chosen, unknown) = match restoring {
        Some(recorded) => {
            let restricted_to = (!settings_lists.is_empty()).then_some(fresh.0.as_slice());
            let restored = restored_tools(
                recorded,
                &offered,
                &extra_tools,
                &options.tools,
                restricted_to,
                problems,
            );
            // Unknown names in the settings are reported once, from the fresh selection.
            (restored.0, fresh.1)
        }
        None => fresh,
    };
    problems.extend(unknown.iter().map(|u| format!("defaultTools: {u}")));
    // Named language tools without a source to answer them are left out.
    let mut tool_names: Vec<String> = chosen
        .iter()
        .filter(|n| tools::ALL_TOOLS.contains(&n.as_str()) || offered.contains(&n.as_str()))
        .cloned()
        .collect();
    let name_refs: Vec<&str> = tool_names.iter().map(String::as_str).collect();
    let mut tools = tools::tools(&env, &name_refs);
    // Every MCP tool, unless the restored tools leave it out.
    for tool in extra_tools {
        if restoring.is_some() && !chosen.iter().any(|n| n == tool.name()) {
            continue;
        }
        if tool_names.iter().any(|n| n == tool.name()) {
            problems.push(format!(
                "the tool `{}` is already defined; the second one was left out",
                tool.name()
            ));
            continue;
        }
        tool_names.push(tool.name().to_string());
        tools.push(tool);
    }
    // An extension's tool replaces the tool of the same name (pi: a built-in `read` overridden).
    for tool in ext_tools {
        match tools.iter().position(|t| t.name() == tool.name()) {
            Some(at) => tools[at] = tool,
            None => {
                tool_names.push(tool.name().to_string());
                tools.push(tool);
            }
        }
    }
    let system_prompt = resources.system_prompt_for(&tool_names, &today_utc());
    // The built-in tools the session does not start with, for an extension to turn on
    // (`pi.setActiveTools`), as pi offers every built-in tool.
    let inactive: Vec<&str> = tools::ALL_TOOLS
        .iter()
        .chain(&offered)
        .copied()
        .filter(|n| !tools.iter().any(|t| t.name() == *n))
        .collect();
    let inactive = tools::tools(&env, &inactive);
    Parts {
        resources: Arc::new(resources),
        tools,
        inactive,
        system_prompt,
    }
}
