//! The server's configuration and what follows from it: the capabilities it announces and
//! how a session is set up.
//!
//! Configuration comes from `initializationOptions` first, then every
//! `workspace/didChangeConfiguration`, each parsed by [`TandemConfig`] with its warnings.
//! Settings only replace what they name: a `didChangeConfiguration` that sets only `editMode`
//! keeps the model chosen at `initialize`. Without any configuration the server uses pi's config
//! files, like the CLI, because the [`RunArgs`] built here leave everything unset.
//!
//! [`ServerConfig::build_session`] sets sessions up as the CLI does ([`crate::setup`]), with
//! three differences: the agent directory comes from `agentDir`, the tools work through an
//! [`LspWorkspace`] (buffers first, edits proposed to the editor) instead of the disk, and
//! project trust comes from the editor or a question ([`super::trust`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use tandem_ai::sync::{lock, read_lock, write_lock};

use anyhow::anyhow;
use tandem_ai::registry::ModelRegistry;
use tandem_coding::agent_session::AgentSession;
use tandem_coding::session::{self, SessionManager};
use tandem_coding::settings;
use tandem_coding::BashPolicy;
use tandem_protocol::capabilities::ServerCapability;
use tandem_protocol::commands;
use tower_lsp_server::ls_types::*;

use super::documents::DocumentStore;
use super::position::PositionEncoding;
use super::trust::{ProjectTrust, TrustNow};
use super::workspace::{EditorClient, LspWorkspace, WorkspaceSettings};
use crate::mcp::{connect_for_session, servers_from_settings, McpTools};
use crate::setup::{build_session, choose_model, reconfigure_session, Project, SessionPlan};

use serde_json::Value;
use tandem_ai::registry::{AgentDir, NoAgentDir};
use tandem_ai::ThinkingLevel as CoreThinking;
use tandem_protocol::config::{editor_trust, ConfigParse, TandemConfig};
use tandem_protocol::requests::ThinkingLevel as Thinking;

use crate::cli::RunArgs;

/// The current configuration, shared by the server's handlers.
#[derive(Default)]
pub struct ServerConfig {
    current: Mutex<TandemConfig>,
    workspace: Arc<RwLock<WorkspaceSettings>>,
    trust: ProjectTrust,
}

/// Where a new session's history comes from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A new session file.
    New,
    /// A stored session file.
    Open(PathBuf),
    /// A copy of a stored session file.
    Fork(PathBuf),
}

/// What sessions share with the server.
pub struct SessionDeps {
    /// The open documents (the tools read them before the disk).
    pub documents: Arc<Mutex<DocumentStore>>,
    /// The editor, for applying edits and asking questions.
    pub editor: Arc<dyn EditorClient>,
}

/// Why a session could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The session file could not be opened or forked.
    #[error("{0}")]
    SessionFile(String),
    /// Anything else: the agent dir, the model, its key.
    #[error("{0:#}")]
    Setup(anyhow::Error),
}

/// A session built by [`ServerConfig::build_session`], with what the server keeps beside it.
pub struct Built {
    /// The session.
    pub session: AgentSession,
    /// Its workspace.
    pub workspace: Arc<LspWorkspace>,
    /// Its MCP servers.
    pub mcp: McpTools,
    /// The folder's trust, as far as it was known.
    pub trust: TrustNow,
    /// Configuration problems found while building it (broken settings.json, models.json,
    /// auth.json or trust.json), each a line for the user.
    pub problems: Vec<String>,
}

impl ServerConfig {
    /// A snapshot of the configuration.
    pub fn get(&self) -> TandemConfig {
        lock(&self.current).clone()
    }

    /// Project trust: the editor's say and this server's answers.
    pub fn trust(&self) -> &ProjectTrust {
        &self.trust
    }

    /// The workspace settings (for the question timeout).
    pub fn workspace_settings(&self) -> WorkspaceSettings {
        *read_lock(&self.workspace)
    }

    /// Applies `initializationOptions` (settings and the editor's workspace trust); returns the
    /// warnings to log.
    pub fn apply_initialization_options(&self, options: Option<&Value>) -> Vec<String> {
        let mut warnings = Vec::new();
        match editor_trust(options) {
            Ok(trusted) => self.trust.set_editor(trusted),
            Err(e) => warnings.push(e),
        }
        if let Some(options) = options {
            warnings.extend(self.merge(TandemConfig::from_initialization_options(options)));
        }
        warnings
    }

    /// Applies `workspace/didChangeConfiguration`'s `settings`; returns the warnings to log.
    pub fn apply_settings(&self, settings: &Value) -> Vec<String> {
        match TandemConfig::from_settings(settings) {
            Some(parsed) => self.merge(parsed),
            None => Vec::new(),
        }
    }

    fn merge(&self, parsed: ConfigParse) -> Vec<String> {
        let new = parsed.config;
        let mut c = lock(&self.current);
        c.model = new.model.or(c.model.take());
        c.thinking_level = new.thinking_level.or(c.thinking_level);
        c.edit_mode = new.edit_mode.or(c.edit_mode);
        c.bash_permission = new.bash_permission.or(c.bash_permission);
        c.agent_dir = new.agent_dir.or(c.agent_dir.take());
        c.edit_timeout_ms = new.edit_timeout_ms.or(c.edit_timeout_ms);
        let mut w = write_lock(&self.workspace);
        w.edit_mode = c.edit_mode();
        w.bash_permission = c.bash_permission();
        if let Some(ms) = c.edit_timeout_ms {
            w.timeout = std::time::Duration::from_millis(ms);
        }
        parsed.warnings
    }

    /// Sets up a session in `cwd`, as the CLI does, over the editor's workspace (`cwd` and the
    /// workspace `folders`). A folder whose trust needs a question gets an untrusted session
    /// ([`TrustNow::Pending`]); [`ServerConfig::trust_session`] gives it the project's
    /// configuration once the user says yes. No usable model is an error before any MCP server
    /// starts. Blocking.
    pub fn build_session(
        &self,
        origin: &Origin,
        cwd: &Path,
        folders: &[PathBuf],
        deps: &SessionDeps,
    ) -> Result<Built, BuildError> {
        let setup = |e: anyhow::Error| BuildError::Setup(e);
        let agent_dir = self.agent_dir().map_err(|e| setup(anyhow!("{e}")))?;
        let mut problems = Vec::new();
        let trust = self
            .trust
            .now(&agent_dir, cwd, folders, &mut |w| problems.push(w));
        let loaded = settings::load(agent_dir.path(), cwd, trust.trusted());
        problems.extend(loaded.errors.iter().map(ToString::to_string));
        let registry = Arc::new(ModelRegistry::load(agent_dir.clone()));
        let dir = session::default_session_dir(&agent_dir, cwd);
        let file_error = |e: session::SessionError| BuildError::SessionFile(e.to_string());
        let manager = match origin {
            Origin::New => SessionManager::create(cwd, &dir),
            Origin::Open(path) => SessionManager::open(path).map_err(file_error)?,
            Origin::Fork(path) => SessionManager::fork_from(path, cwd, &dir).map_err(file_error)?,
        };
        let run = self.run_args();
        let warn = |w: &str| tracing::warn!("{w}");
        // The registry's own problems are part of this error when they leave no model.
        let model = choose_model(&registry, &run, &loaded, &manager, &warn).map_err(setup)?;
        problems.extend(registry.load_errors().iter().map(ToString::to_string));
        let mut roots = vec![cwd.to_path_buf()];
        roots.extend(folders.iter().filter(|f| !cwd.starts_with(f)).cloned());
        let workspace = Arc::new(LspWorkspace::new(
            roots,
            deps.documents.clone(),
            deps.editor.clone(),
            self.workspace.clone(),
        ));
        let mcp = connect_mcp(&loaded, cwd);
        for w in mcp.warnings() {
            tracing::warn!("{w}");
        }
        let session = build_session(
            SessionPlan {
                agent_dir: &agent_dir,
                settings: &loaded,
                registry,
                cwd,
                run: &run,
                session: manager,
                workspace: workspace.clone(),
                // The workspace decides, following `bashPermission` as it is now.
                bash_policy: BashPolicy::Ask,
                model,
                extra_tools: mcp.tools(),
            },
            &warn,
        )
        .map_err(setup)?;
        Ok(Built {
            session,
            workspace,
            mcp,
            trust,
            problems,
        })
    }

    /// Gives `session` (built untrusted while its folder's trust was pending) the project's
    /// configuration now that the folder is trusted: settings, resources, system prompt, MCP
    /// servers. Returns the new MCP servers (the caller keeps them alive). Blocking.
    pub fn trust_session(
        &self,
        session: &AgentSession,
        workspace: Arc<LspWorkspace>,
        cwd: &Path,
    ) -> anyhow::Result<McpTools> {
        let agent_dir = self.agent_dir().map_err(|e| anyhow!("{e}"))?;
        let loaded = settings::load(agent_dir.path(), cwd, true);
        for e in &loaded.errors {
            tracing::warn!("{e}");
        }
        let registry = ModelRegistry::load(agent_dir.clone());
        let run = self.run_args();
        let mcp = connect_mcp(&loaded, cwd);
        for w in mcp.warnings() {
            tracing::warn!("{w}");
        }
        reconfigure_session(
            session,
            &Project {
                agent_dir: &agent_dir,
                settings: &loaded,
                cwd,
                run: &run,
                workspace,
                bash_policy: BashPolicy::Ask,
            },
            &registry,
            mcp.tools(),
            &|w| tracing::warn!("{w}"),
        )?;
        Ok(mcp)
    }

    /// The agent directory: `agentDir` when configured, else pi's (from the environment).
    pub fn agent_dir(&self) -> Result<AgentDir, NoAgentDir> {
        let configured = self.get().agent_dir;
        let home = std::env::var("HOME").ok();
        match configured {
            Some(dir) => AgentDir::from_vars(Some(&dir), home.as_deref()),
            None => AgentDir::from_env(),
        }
    }

    /// Command-line-equivalent arguments for a new session: the configured model and
    /// thinking level, everything else pi's defaults.
    pub fn run_args(&self) -> RunArgs {
        let c = self.get();
        RunArgs {
            provider: c.model.as_ref().map(|m| m.provider.clone()),
            model: c.model.as_ref().map(|m| m.id.clone()),
            thinking: c.thinking_level.map(to_core),
            ..RunArgs::default()
        }
    }
}

/// The MCP servers of the settings and mcp.json files, connected (none configured: nothing to
/// wait for). Sessions are built on blocking threads (see `commands.rs`), so waiting here holds
/// no LSP handler.
fn connect_mcp(settings: &settings::LoadedSettings, cwd: &Path) -> McpTools {
    if servers_from_settings(settings).is_empty() {
        return McpTools::default();
    }
    let handle = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| handle.block_on(connect_for_session(settings, &[], cwd)))
}

/// What the server announces at `initialize`, positions counted in `encoding`.
pub fn capabilities(encoding: PositionEncoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::new(encoding.as_lsp_str())),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..TextDocumentSyncOptions::default()
            },
        )),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::new(commands::KIND_FIX),
                CodeActionKind::new(commands::KIND_ASSIST),
            ]),
            resolve_provider: Some(true),
            ..CodeActionOptions::default()
        })),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
            ..ExecuteCommandOptions::default()
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        experimental: Some(ServerCapability::current().to_experimental()),
        ..ServerCapabilities::default()
    }
}

/// The core's thinking level for the protocol's.
pub fn to_core(level: Thinking) -> CoreThinking {
    match level {
        Thinking::Off => CoreThinking::Off,
        Thinking::Minimal => CoreThinking::Minimal,
        Thinking::Low => CoreThinking::Low,
        Thinking::Medium => CoreThinking::Medium,
        Thinking::High => CoreThinking::High,
        Thinking::Xhigh => CoreThinking::Xhigh,
    }
}

/// The protocol's thinking level for the core's.
pub fn from_core(level: CoreThinking) -> Thinking {
    match level {
        CoreThinking::Off => Thinking::Off,
        CoreThinking::Minimal => Thinking::Minimal,
        CoreThinking::Low => Thinking::Low,
        CoreThinking::Medium => Thinking::Medium,
        CoreThinking::High => Thinking::High,
        CoreThinking::Xhigh => Thinking::Xhigh,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_replace_only_what_they_name() {
        let config = ServerConfig::default();
        let warnings = config.apply_initialization_options(Some(&json!({
            "model": "scripted/t", "thinkingLevel": "high", "agentDir": "/tmp/a"
        })));
        assert!(warnings.is_empty(), "{warnings:?}");
        let warnings = config.apply_settings(&json!({"tandem": {"editMode": "auto", "model": 3}}));
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("settings.tandem.model"),
            "{warnings:?}"
        );
        let c = config.get();
        assert_eq!(
            c.model.map(|m| m.to_string()).as_deref(),
            Some("scripted/t")
        );
        assert_eq!(c.agent_dir.as_deref(), Some("/tmp/a"));
        let args = config.run_args();
        assert_eq!(args.provider.as_deref(), Some("scripted"));
        assert_eq!(args.model.as_deref(), Some("t"));
        assert_eq!(args.thinking, Some(CoreThinking::High));
        assert_eq!(
            config.agent_dir().map(|d| d.path().to_path_buf()),
            Ok(std::path::PathBuf::from("/tmp/a"))
        );
    }

    #[test]
    fn thinking_levels_round_trip() {
        for level in Thinking::ALL {
            assert_eq!(from_core(to_core(level)), level);
        }
    }
}
