//! What a front door asks of a session, as plain data: [`SessionOptions`] (model, tools, prompts,
//! trust — the options every front door shares, whether they came from the command line or an
//! editor's configuration) and [`Origin`] (where the session's history comes from).

use std::path::{Path, PathBuf};

use tandem_ai::registry::AgentDir;
use tandem_ai::ThinkingLevel;
use tandem_coding::{session, settings};

/// The editor front doors' default tools: pi's default set plus the read-only search tools,
/// because they see the editor's unsaved buffers and bash's own grep cannot.
pub const EDITOR_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// Which built-in tools the agent gets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolSelection {
    /// pi's default set: read, bash, edit, write (`tandem -p`).
    #[default]
    Default,
    /// [`EDITOR_TOOLS`] (`tandem lsp`, `tandem acp`).
    Editor,
    /// A list in pi 1.6's `defaultTools` form over pi's default set (after the settings'
    /// `defaultTools`): plain names replace (empty for `--no-tools`), `+name` / `-name` change.
    Only(Vec<String>),
    /// The same over [`EDITOR_TOOLS`]: a list of only `+name` / `-name` changes in an editor
    /// front door.
    EditorList(Vec<String>),
}

impl ToolSelection {
    /// True when the front door's default set is in use, perhaps changed by `+name` / `-name`
    /// (pi 1.6's "default tools": a resumed session then gets the tools its branch recorded).
    pub fn uses_default(&self) -> bool {
        match self {
            ToolSelection::Default | ToolSelection::Editor | ToolSelection::EditorList(_) => true,
            ToolSelection::Only(entries) => {
                !entries.is_empty() && entries.iter().all(|e| e.starts_with(['+', '-']))
            }
        }
    }

    /// The `+name` / `-name` changes the command line or the editor gave, when
    /// [`Self::uses_default`].
    pub fn changes(&self) -> Option<&Vec<String>> {
        match self {
            ToolSelection::EditorList(entries) => Some(entries),
            ToolSelection::Only(entries) if self.uses_default() => Some(entries),
            _ => None,
        }
    }

    /// `entries` (from `--tools` or an editor's configuration) in a front door whose default
    /// set is [`EDITOR_TOOLS`] when `editor`.
    pub fn list(entries: Vec<String>, editor: bool) -> ToolSelection {
        let changes_only = !entries.is_empty() && entries.iter().all(|e| e.starts_with(['+', '-']));
        if editor && changes_only {
            ToolSelection::EditorList(entries)
        } else {
            ToolSelection::Only(entries)
        }
    }
}

/// The options of a session that do not depend on the front door. `tandem -p` takes them from
/// its flags; `tandem lsp` and `tandem acp` from theirs, and the language server adds the
/// editor's model and thinking level as defaults (`default_*`: used where neither a flag nor
/// the session's own history chooses).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionOptions {
    /// The provider (`--provider`).
    pub provider: Option<String>,
    /// The model: `provider/id`, a bare id or a fuzzy pattern, optionally with `:thinking`.
    pub model: Option<String>,
    /// The thinking level.
    pub thinking: Option<ThinkingLevel>,
    /// The model scope (`--models`: patterns, globs, `:thinking` suffixes); a new session
    /// without `--model` starts on its first model. Over settings.json's `enabledModels`.
    pub models: Option<Vec<String>>,
    /// The model for a session without one of its own (an editor's `model` setting, split
    /// like `provider`/`model`): a resumed session keeps its model, a new one gets this before
    /// settings.json's default.
    pub default_provider: Option<String>,
    /// See [`SessionOptions::default_provider`].
    pub default_model: Option<String>,
    /// The thinking level for a session without one of its own (an editor's `thinkingLevel`).
    pub default_thinking: Option<ThinkingLevel>,
    /// A key for the chosen model's provider, kept for the session only.
    pub api_key: Option<String>,
    /// The built-in tools.
    pub tools: ToolSelection,
    /// Where session files are kept and looked up (default: the agent directory's folder for
    /// the working directory).
    pub session_dir: Option<PathBuf>,
    /// Replaces the default system prompt.
    pub system_prompt: Option<String>,
    /// Appended to the system prompt, in order.
    pub append_system_prompt: Vec<String>,
    /// Skip AGENTS.md / CLAUDE.md.
    pub no_context_files: bool,
    /// This process's project-trust decision (`--approve` / `--no-approve`), over any saved one.
    pub approve: Option<bool>,
    /// The name every new session gets (`tandem acp --name`; print mode names its one session
    /// itself).
    pub new_session_name: Option<String>,
    /// Extensions for this run (`-e PATH`, repeatable).
    pub extensions: Vec<String>,
    /// `--no-extensions`: no extension is discovered (the `-e` ones still load).
    pub no_extensions: bool,
    /// Long flags that are not Tandem's, for the extensions that register them
    /// (`--plan` is `true`, `--preset=fast` a string), in command-line order.
    pub extension_flags: Vec<(String, serde_json::Value)>,
}

impl SessionOptions {
    /// The folder holding the session files of `cwd`: `--session-dir`, else
    /// `PI_CODING_AGENT_SESSION_DIR`, else the agent directory's `sessionDir` setting (a
    /// project's is refused when its settings load: a cloned repository does not choose where
    /// the user's conversations are written), else pi's folder for `cwd`. Blocking (reads the
    /// agent directory's settings.json).
    pub fn session_dir(&self, agent_dir: &AgentDir, cwd: &Path) -> PathBuf {
        let setting = match &self.session_dir {
            Some(_) => None,
            None => {
                settings::load(agent_dir.path(), cwd, false)
                    .global
                    .session_dir
            }
        };
        let env = std::env::var(session::SESSION_DIR_ENV).ok();
        session::resolve_session_dir(
            self.session_dir.as_deref(),
            env.as_deref(),
            setting.as_deref(),
            agent_dir,
            cwd,
        )
    }

    /// These options in an editor front door: without `--tools` / `--no-tools`, the
    /// [`ToolSelection::Editor`] set.
    pub fn in_editor(mut self) -> SessionOptions {
        self.tools = match self.tools {
            ToolSelection::Default => ToolSelection::Editor,
            ToolSelection::Only(entries) => ToolSelection::list(entries, true),
            other => other,
        };
        self
    }

    /// Whether a model was asked for by name (then a folder trusted later keeps it).
    pub fn names_model(&self) -> bool {
        self.model.is_some() || self.provider.is_some()
    }
}

/// Where a session's history comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A new session file (written after the first answer).
    New,
    /// Nothing written to disk.
    InMemory,
    /// The most recent session of the working directory, or a new one when there is none.
    Continue,
    /// This stored session file, continued in place.
    Open(PathBuf),
    /// A new session file copied from this one.
    Fork(PathBuf),
    /// A new session file with this id (`--session-id` naming no stored session).
    NewWithId(String),
}

impl Origin {
    /// The stored file this origin reads, if any.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Origin::Open(path) | Origin::Fork(path) => Some(path),
            Origin::New | Origin::InMemory | Origin::Continue | Origin::NewWithId(_) => None,
        }
    }
}
