//! One way to set up an [`AgentSession`], for every front door.
//!
//! The CLI, the language server and the ACP agent differ only in where files and consent come
//! from (a [`Workspace`]), where the session's history comes from (a [`SessionManager`] they
//! open), how bash is allowed, and extra tools (MCP servers). Everything else — the model
//! choice (flags, settings, a resumed session's last model), the key, the resources and system
//! prompt, the tool set — is decided here, so `tandem -p`, `tandem lsp` and `tandem acp` agree
//! on every default.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_agent::{default_stream_fn, AgentTool};
use tandem_ai::registry::{AgentDir, ModelRegistry};
use tandem_ai::{Model, StreamOptions};
use tandem_coding::agent_session::{AgentSession, AgentSessionOptions};
use tandem_coding::resources::{today_utc, ResourceOptions, Resources};
use tandem_coding::session::SessionManager;
use tandem_coding::settings::LoadedSettings;
use tandem_coding::tools::{self, DEFAULT_TOOLS};
use tandem_coding::{BashPolicy, ShellSettings, ToolEnv, Workspace};

use crate::cli::command::ToolSelection;
use crate::cli::models::{choose_model, require_key, ModelDefaults, ResumedSession};
use crate::cli::RunArgs;

/// What a front door decides; [`build_session`] does the rest.
pub struct SessionPlan<'a> {
    /// pi's agent directory (resources, keys).
    pub agent_dir: &'a AgentDir,
    /// The merged settings of `agent_dir` and `cwd`.
    pub settings: &'a LoadedSettings,
    /// Models and keys.
    pub registry: Arc<ModelRegistry>,
    /// Working directory.
    pub cwd: &'a Path,
    /// Command-line choices (model, thinking level, tools, prompts).
    pub run: &'a RunArgs,
    /// The session's history: new, opened or forked by the front door.
    pub session: SessionManager,
    /// Files and consent.
    pub workspace: Arc<dyn Workspace>,
    /// Whether bash runs, asks the workspace, or is refused.
    pub bash_policy: BashPolicy,
    /// A model that replaces the choice (the demo's scripted model).
    pub model: Option<Model>,
    /// Tools besides the built-in ones (MCP servers').
    pub extra_tools: Vec<Arc<dyn AgentTool>>,
}

/// Builds the session `plan` describes; `warn` hears every non-fatal problem (a skipped session
/// line, a model fallback, a resource that did not load).
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
    let resumed = (!manager.entries().is_empty()).then(|| {
        let context = manager.build_context();
        ResumedSession {
            model: context.model.map(|m| (m.provider, m.model_id)),
            thinking_level: Some(context.thinking_level),
        }
    });
    let merged = &loaded.merged;
    let defaults = ModelDefaults {
        provider: merged.default_provider.clone(),
        model: merged.default_model.clone(),
        thinking_level: merged.default_thinking_level,
    };
    let (model, thinking_level, key) = match model {
        Some(model) => (model, run.thinking.unwrap_or_default(), None),
        None => {
            let choice = choose_model(&registry, run, &defaults, resumed.as_ref())?;
            for w in &choice.warnings {
                warn(w);
            }
            let key = require_key(&registry, &choice.model, run.api_key.as_deref())?;
            (choice.model, choice.thinking_level, key)
        }
    };

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
    let env = Arc::new(ToolEnv::new(workspace, cwd).with_shell(ShellSettings {
        shell: merged.shell_path.clone().map(PathBuf::from),
        command_prefix: merged.shell_command_prefix.clone(),
        policy: bash_policy,
    }));
    let mut tool_names: Vec<String> = match &run.tools {
        ToolSelection::Default => DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect(),
        ToolSelection::Only(names) => names.clone(),
    };
    let name_refs: Vec<&str> = tool_names.iter().map(String::as_str).collect();
    let mut active = tools::tools(&env, &name_refs);
    for tool in extra_tools {
        if tool_names.iter().any(|n| n == tool.name()) {
            warn(&format!(
                "the tool `{}` is already defined; the second one was left out",
                tool.name()
            ));
            continue;
        }
        tool_names.push(tool.name().to_string());
        active.push(tool);
    }
    let system_prompt = resources.system_prompt_for(&tool_names, &today_utc());
    Ok(AgentSession::new(AgentSessionOptions {
        cwd: cwd.to_path_buf(),
        model,
        thinking_level,
        tools: active,
        system_prompt,
        session: manager,
        settings: merged.clone(),
        resources: Some(Arc::new(resources)),
        registry: Some(registry),
        // Only an explicit key (`--api-key`) is fixed for the session. A key resolved from
        // auth.json, the environment or models.json belongs to the first model's provider: it
        // must not be sent to another provider after a model switch, so it is resolved per call.
        runtime_api_key: key.and(run.api_key.clone()),
        stream_fn: default_stream_fn(),
        stream_options: StreamOptions::default(),
    })?)
}
