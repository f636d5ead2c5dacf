//! The server's configuration and what follows from it: the capabilities it announces and
//! how a session is set up.
//!
//! Configuration comes from the command line (`tandem lsp --model …`, the defaults), then
//! `initializationOptions`, then every `workspace/didChangeConfiguration`, each parsed by
//! [`TandemConfig`] with its warnings. Each carries the whole configuration (as the spec says):
//! a key left out returns to its default. A `didChangeConfiguration` without a `tandem` member
//! makes the server pull the section with `workspace/configuration`. Without any configuration
//! the server uses pi's config files, like the CLI.
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
use super::workspace::{EditorClient, UnsavedEdits, WorkspaceSettings};
use crate::host::{SessionOptions, ToolSelection};

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
    /// The documents Tandem's applied edits changed and the editor has not saved.
    pub unsaved: Arc<UnsavedEdits>,
    /// The edits the editor has not answered yet, by document.
    pub inflight: Arc<super::workspace::InFlight>,
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
            warnings.extend(self.replace(TandemConfig::from_initialization_options(options)));
        }
        warnings
    }

    /// Applies `workspace/didChangeConfiguration`'s `settings` when they carry a `tandem`
    /// member (the whole configuration: keys left out return to their defaults); returns the
    /// warnings to show, or `None` when there was no `tandem` member (the server then pulls
    /// it with `workspace/configuration`).
    pub fn apply_settings(&self, settings: &Value) -> Option<Vec<String>> {
        TandemConfig::from_settings(settings).map(|parsed| self.replace(parsed))
    }

    /// Applies the `tandem` section a `workspace/configuration` pull returned.
    pub fn apply_section(&self, section: &Value) -> Vec<String> {
        let wrapped = serde_json::json!({ "tandem": section });
        self.apply_settings(&wrapped).unwrap_or_default()
    }

    fn replace(&self, parsed: ConfigParse) -> Vec<String> {
        let mut c = lock(&self.current);
        *c = parsed.config;
        let mut w = write_lock(&self.workspace);
        w.edit_mode = c.edit_mode();
        w.bash_permission = c.bash_permission();
        w.timeout = c
            .edit_timeout_ms
            .map(std::time::Duration::from_millis)
            .unwrap_or(WorkspaceSettings::default().timeout);
        w.save_before_commands = c.save_before_commands.unwrap_or(true);
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

    /// The options of a session: the command line's (`tandem lsp --model …` pins the model),
    /// with the editor's `model` and `thinkingLevel` as the defaults for a session that has no
    /// model of its own (a reopened session keeps its own), and the editor's `tools` unless
    /// `--tools` / `--no-tools` chose.
    pub fn session_options(&self) -> SessionOptions {
        let c = self.get();
        let mut options = self.command_line.clone();
        if let Some(model) = &c.model {
            options.default_provider = Some(model.provider.clone());
            options.default_model = Some(model.id.clone());
        }
        options.default_thinking = c.thinking_level.map(to_core);
        // The editor's tool set, unless the command line chose one.
        if let (ToolSelection::Editor, Some(tools)) = (&options.tools, c.tools) {
            options.tools = ToolSelection::list(tools, true);
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
                // `didSave` tells which edited documents are on disk now.
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
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
        Thinking::Max => CoreThinking::Max,
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
        CoreThinking::Max => Thinking::Max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_editors_tools_apply_unless_the_command_line_chose() {
        let editor = ServerConfig::new(SessionOptions::default().in_editor());
        assert_eq!(editor.session_options().tools, ToolSelection::Editor);
        let settings = json!({"tools": ["read", "grep"]});
        assert!(editor.apply_section(&settings).is_empty());
        let chosen = ToolSelection::Only(vec!["read".into(), "grep".into()]);
        assert_eq!(editor.session_options().tools, chosen);

        let flag = ToolSelection::Only(vec!["read".into()]);
        let pinned = ServerConfig::new(SessionOptions {
            tools: flag.clone(),
            ..SessionOptions::default()
        });
        assert!(pinned.apply_section(&settings).is_empty());
        assert_eq!(pinned.session_options().tools, flag);
    }

    #[test]
    fn each_configuration_replaces_the_last_as_a_whole() {
        let config = ServerConfig::new(SessionOptions {
            model: Some("flag-model".into()),
            no_context_files: true,
            ..SessionOptions::default()
        });
        let warnings = config.apply_initialization_options(Some(&json!({
            "model": "scripted/t", "thinkingLevel": "high", "agentDir": "/tmp/a",
            "editTimeoutMs": 5
        })));
        assert!(warnings.is_empty(), "{warnings:?}");
        // The editor's model is the default; the command line's stays (and wins).
        let options = config.session_options();
        assert_eq!(options.default_provider.as_deref(), Some("scripted"));
        assert_eq!(options.default_model.as_deref(), Some("t"));
        assert_eq!(options.default_thinking, Some(CoreThinking::High));
        assert_eq!(options.model.as_deref(), Some("flag-model"));
        assert!(options.no_context_files);
        assert_eq!(
            config.agent_dir().map(|d| d.path().to_path_buf()),
            Ok(std::path::PathBuf::from("/tmp/a"))
        );
        assert_eq!(
            config.workspace_settings().timeout,
            std::time::Duration::from_millis(5)
        );
        // A later configuration is the whole of it: a bad value and the keys left out go back
        // to their defaults (the command line's model, pi's agent directory).
        let warnings = config
            .apply_settings(&json!({"tandem": {"editMode": "auto", "model": 3}}))
            .expect("a tandem member");
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("settings.tandem.model"),
            "{warnings:?}"
        );
        let c = config.get();
        assert_eq!(c.model, None);
        assert_eq!(c.agent_dir, None);
        assert_eq!(config.session_options().default_model, None);
        assert_eq!(
            config.workspace_settings().timeout,
            WorkspaceSettings::default().timeout
        );
        // No `tandem` member: nothing applied, the server pulls the section.
        assert_eq!(config.apply_settings(&json!({"other": {}})), None);
        assert!(config
            .apply_section(&json!({"editMode": "confirm"}))
            .is_empty());
    }

    #[test]
    fn thinking_levels_round_trip() {
        for level in Thinking::ALL {
            assert_eq!(from_core(to_core(level)), level);
        }
    }
}
