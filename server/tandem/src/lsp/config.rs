//! The server's configuration and what follows from it: the capabilities it announces and
//! how a session is set up.
//!
//! Configuration comes from the command line (`tandem lsp --model …`, the defaults), then
//! `initializationOptions`, then every `workspace/didChangeConfiguration`, each parsed by
//! [`TandemConfig`] with its warnings. Settings only replace what they name: a
//! `didChangeConfiguration` that sets only `editMode` keeps the model chosen at `initialize`.
//! Without any configuration the server uses pi's config files, like the CLI.
//!
//! Sessions are set up by the host ([`crate::host::setup`]) with [`ServerConfig::session_options`],
//! the agent directory of `agentDir`, an [`super::workspace::LspWorkspace`] (buffers first, edits
//! proposed to the editor) and project trust from the editor or a question ([`super::trust`]).

use std::sync::{Arc, Mutex, RwLock};
use tandem_ai::sync::{lock, read_lock, write_lock};

use serde_json::Value;
use tandem_ai::registry::{AgentDir, NoAgentDir};
use tandem_ai::ThinkingLevel as CoreThinking;
use tandem_protocol::capabilities::ServerCapability;
use tandem_protocol::commands;
use tandem_protocol::config::{editor_trust, ConfigParse, TandemConfig};
use tandem_protocol::requests::ThinkingLevel as Thinking;
use tower_lsp_server::ls_types::*;

use super::documents::DocumentStore;
use super::position::PositionEncoding;
use super::trust::ProjectTrust;
use super::workspace::{EditorClient, WorkspaceSettings};
use crate::host::SessionOptions;

/// The current configuration, shared by the server's handlers.
#[derive(Default)]
pub struct ServerConfig {
    /// The command line's options, under the editor's configuration.
    command_line: SessionOptions,
    current: Mutex<TandemConfig>,
    workspace: Arc<RwLock<WorkspaceSettings>>,
    trust: ProjectTrust,
}

/// What sessions share with the server.
pub struct SessionDeps {
    /// The open documents (the tools read them before the disk).
    pub documents: Arc<Mutex<DocumentStore>>,
    /// The editor, for applying edits and asking questions.
    pub editor: Arc<dyn EditorClient>,
}

impl ServerConfig {
    /// A configuration over the command line's `options`; `--approve` / `--no-approve` join
    /// the folders' trust decisions.
    pub fn new(options: SessionOptions) -> Self {
        ServerConfig {
            trust: ProjectTrust::new(options.approve),
            command_line: options,
            ..ServerConfig::default()
        }
    }

    /// The workspace settings shared with every session's workspace.
    pub fn workspace_handle(&self) -> Arc<RwLock<WorkspaceSettings>> {
        self.workspace.clone()
    }

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

    /// The agent directory: `agentDir` when configured, else pi's (from the environment).
    pub fn agent_dir(&self) -> Result<AgentDir, NoAgentDir> {
        let configured = self.get().agent_dir;
        let home = std::env::var("HOME").ok();
        match configured {
            Some(dir) => AgentDir::from_vars(Some(&dir), home.as_deref()),
            None => AgentDir::from_env(),
        }
    }

    /// The options of a new session: the command line's (`tandem lsp --model …`), with the
    /// editor's `model` and `thinkingLevel` over them.
    pub fn session_options(&self) -> SessionOptions {
        let c = self.get();
        let mut options = self.command_line.clone();
        if let Some(model) = &c.model {
            options.provider = Some(model.provider.clone());
            options.model = Some(model.id.clone());
        }
        if let Some(level) = c.thinking_level {
            options.thinking = Some(to_core(level));
        }
        options
    }
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
        let options = config.session_options();
        assert_eq!(options.provider.as_deref(), Some("scripted"));
        assert_eq!(options.model.as_deref(), Some("t"));
        assert_eq!(options.thinking, Some(CoreThinking::High));
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
