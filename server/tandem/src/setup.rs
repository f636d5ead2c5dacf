//! One way to set up an [`AgentSession`], for every front door.
//!
//! The CLI, the language server and the ACP agent differ only in where files and consent come
//! from (a [`Workspace`]), where the session's history comes from (a [`SessionManager`] they
//! open), how bash is allowed, how a project-trust question is asked, and extra tools (MCP
//! servers). Everything else is decided here, so `tandem -p`, `tandem lsp` and `tandem acp`
//! agree on every default:
//!
//! 1. [`decide_trust`]: whether the folder's protected configuration may be used (pi 1.6's
//!    order; a question, when one is needed, is the front door's).
//! 2. `settings::load` with that decision, then [`choose_model`]: the model (flags, a resumed
//!    session's, settings', the first with a key) and its key — before anything is started, so
//!    a run with no usable model fails at once, saying what to set.
//! 3. The front door starts its MCP servers, then [`build_session`] assembles the resources,
//!    system prompt and tools.
//!
//! A folder trusted after its session was built (an editor's question answered later) gets the
//! project's configuration through [`reconfigure_session`], with the same assembly.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_agent::{default_stream_fn, AgentTool};
use tandem_ai::registry::{AgentDir, ModelRegistry};
use tandem_ai::{Model, StreamOptions, ThinkingLevel};
use tandem_coding::agent_session::{AgentSession, AgentSessionOptions, Reconfiguration};
use tandem_coding::resources::{today_utc, ResourceOptions, Resources};
use tandem_coding::session::SessionManager;
use tandem_coding::settings::{self, LoadedSettings};
use tandem_coding::tools::{self, DEFAULT_TOOLS};
use tandem_coding::trust::{self, TrustDecision, TrustInputs};
use tandem_coding::{BashPolicy, ShellSettings, ToolEnv, Workspace};

use crate::cli::command::ToolSelection;
use crate::cli::models::{self, require_key, ModelDefaults, ModelError, ResumedSession};
use crate::cli::RunArgs;

/// Whether `cwd`'s protected project configuration may be used, as far as that can be decided
/// without asking: `--approve` / `--no-approve`, the nearest decision in trust.json, then
/// `defaultProjectTrust` of the agent directory's settings. `warn` hears a trust.json that
/// cannot be read. Blocking (reads two small files).
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
    /// The key given at run time (`--api-key`), kept for the session; keys from auth.json, the
    /// environment or models.json are looked up per call.
    pub runtime_key: Option<String>,
}

impl ChosenModel {
    /// `model` as given (the demo's scripted model), at `thinking_level`.
    pub fn given(model: Model, thinking_level: ThinkingLevel) -> ChosenModel {
        ChosenModel {
            model,
            thinking_level,
            runtime_key: None,
        }
    }
}

/// Why no model could be chosen, with the configuration problems that may be the cause (a broken
/// models.json or auth.json), so a broken file is never hidden behind "no key" or "not found".
#[derive(Debug, thiserror::Error)]
#[error("{error}{}", problems_text(.problems))]
pub struct ModelSetupError {
    /// What failed.
    pub error: ModelError,
    /// The registry's load problems, one line each.
    pub problems: Vec<String>,
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
    run: &RunArgs,
    loaded: &LoadedSettings,
    session: &SessionManager,
    warn: &dyn Fn(&str),
) -> anyhow::Result<ChosenModel> {
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
    };
    let failed = |error: ModelError| ModelSetupError {
        error,
        problems: registry
            .load_errors()
            .iter()
            .map(ToString::to_string)
            .collect(),
    };
    let choice =
        models::choose_model(registry, run, &defaults, resumed.as_ref()).map_err(failed)?;
    for w in &choice.warnings {
        warn(w);
    }
    let key = require_key(registry, &choice.model, run.api_key.as_deref()).map_err(failed)?;
    Ok(ChosenModel {
        model: choice.model,
        thinking_level: choice.thinking_level,
        // Only an explicit key (`--api-key`) is fixed for the session. A key resolved from
        // auth.json, the environment or models.json belongs to the first model's provider: it
        // must not be sent to another provider after a model switch, so it is resolved per call.
        runtime_key: key.and(run.api_key.clone()),
    })
}

/// What a front door decides; [`build_session`] does the rest.
pub struct SessionPlan<'a> {
    /// pi's agent directory (resources, keys).
    pub agent_dir: &'a AgentDir,
    /// The settings of `agent_dir` and (when trusted) `cwd`.
    pub settings: &'a LoadedSettings,
    /// Models and keys.
    pub registry: Arc<ModelRegistry>,
    /// Working directory.
    pub cwd: &'a Path,
    /// Command-line choices (tools, prompts).
    pub run: &'a RunArgs,
    /// The session's history: new, opened or forked by the front door.
    pub session: SessionManager,
    /// Files and consent.
    pub workspace: Arc<dyn Workspace>,
    /// Whether bash runs, asks the workspace, or is refused.
    pub bash_policy: BashPolicy,
    /// The model ([`choose_model`], or the demo's scripted model).
    pub model: ChosenModel,
    /// Tools besides the built-in ones (MCP servers').
    pub extra_tools: Vec<Arc<dyn AgentTool>>,
}

/// Builds the session `plan` describes; `warn` hears every non-fatal problem (a skipped session
/// line, a resource that did not load, a duplicate tool).
pub fn build_session(plan: SessionPlan<'_>, warn: &dyn Fn(&str)) -> anyhow::Result<AgentSession> {
    let SessionPlan {
        agent_dir,
        settings: loaded,
        registry,
        cwd,
        run,
        session: manager,
        workspace,
        bash_policy,
        model,
        extra_tools,
    } = plan;
    if let Some(path) = manager.session_file() {
        for skipped in &manager.load_report().skipped {
            warn(&format!(
                "{}: line {} was skipped ({})",
                path.display(),
                skipped.line,
                skipped.reason
            ));
        }
    }
    let parts = assemble(
        &Project {
            agent_dir,
            settings: loaded,
            cwd,
            run,
            workspace,
            bash_policy,
        },
        extra_tools,
        warn,
    );
    Ok(AgentSession::new(AgentSessionOptions {
        cwd: cwd.to_path_buf(),
        model: model.model,
        thinking_level: model.thinking_level,
        tools: parts.tools,
        system_prompt: parts.system_prompt,
        session: manager,
        settings: loaded.merged.clone(),
        resources: Some(parts.resources),
        registry: Some(registry),
        runtime_api_key: model.runtime_key,
        stream_fn: default_stream_fn(),
        stream_options: StreamOptions::default(),
    })?)
}

/// What the project contributes to a session, for [`reconfigure_session`].
pub struct Project<'a> {
    /// pi's agent directory.
    pub agent_dir: &'a AgentDir,
    /// The settings, now with the project's (trusted) files.
    pub settings: &'a LoadedSettings,
    /// Working directory.
    pub cwd: &'a Path,
    /// Command-line choices.
    pub run: &'a RunArgs,
    /// Files and consent (the session's own workspace).
    pub workspace: Arc<dyn Workspace>,
    /// The bash policy the session was built with.
    pub bash_policy: BashPolicy,
}

/// Gives a live session what `project` now provides (a folder trusted after the session was
/// built): settings, resources, system prompt, tools with `extra_tools`, and — for a session
/// without messages whose model was not asked for by name — the model the new settings choose.
/// Refused while the session runs.
pub fn reconfigure_session(
    session: &AgentSession,
    project: &Project<'_>,
    registry: &ModelRegistry,
    extra_tools: Vec<Arc<dyn AgentTool>>,
    warn: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let fresh = session.agent().with_state(|s| s.messages.is_empty());
    let model = if fresh && project.run.model.is_none() && project.run.provider.is_none() {
        let chosen = session.with_session(|manager| {
            choose_model(registry, project.run, project.settings, manager, warn)
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
    let parts = assemble(project, extra_tools, warn);
    session.reconfigure(Reconfiguration {
        settings: project.settings.merged.clone(),
        resources: Some(parts.resources),
        system_prompt: parts.system_prompt,
        tools: parts.tools,
        model,
    })?;
    Ok(())
}

/// Resources, tools and system prompt, assembled the same way for a new session and a
/// reconfigured one.
struct Parts {
    resources: Arc<Resources>,
    tools: Vec<Arc<dyn AgentTool>>,
    system_prompt: String,
}

fn assemble(
    project: &Project<'_>,
    extra_tools: Vec<Arc<dyn AgentTool>>,
    warn: &dyn Fn(&str),
) -> Parts {
    let Project {
        agent_dir,
        settings: loaded,
        cwd,
        run,
        workspace,
        bash_policy,
    } = project;
    let merged = &loaded.merged;
    let resources = Resources::load(
        agent_dir.path(),
        cwd,
        loaded,
        &ResourceOptions {
            no_context_files: run.no_context_files,
            system_prompt: run.system_prompt.clone(),
            append_system_prompt: (!run.append_system_prompt.is_empty())
                .then(|| run.append_system_prompt.join("\n\n")),
            ..ResourceOptions::default()
        },
    );
    for d in &resources.diagnostics {
        warn(&d.to_string());
    }
    let env = Arc::new(
        ToolEnv::new(workspace.clone(), *cwd).with_shell(ShellSettings {
            shell: merged.shell_path.clone().map(PathBuf::from),
            command_prefix: merged.shell_command_prefix.clone(),
            policy: *bash_policy,
        }),
    );
    let mut tool_names: Vec<String> = match &run.tools {
        ToolSelection::Default => DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect(),
        ToolSelection::Only(names) => names.clone(),
    };
    let name_refs: Vec<&str> = tool_names.iter().map(String::as_str).collect();
    let mut tools = tools::tools(&env, &name_refs);
    for tool in extra_tools {
        if tool_names.iter().any(|n| n == tool.name()) {
            warn(&format!(
                "the tool `{}` is already defined; the second one was left out",
                tool.name()
            ));
            continue;
        }
        tool_names.push(tool.name().to_string());
        tools.push(tool);
    }
    let system_prompt = resources.system_prompt_for(&tool_names, &today_utc());
    Parts {
        resources: Arc::new(resources),
        tools,
        system_prompt,
    }
}
