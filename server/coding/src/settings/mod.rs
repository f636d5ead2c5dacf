//! settings.json: the user's defaults, read from the same files pi reads so a pi user's settings
//! carry over.
//!
//! Two files: global `<agentDir>/settings.json` and project `<cwd>/.pi/settings.json`; the
//! project file wins, objects merging key by key ([`load`]). The project file is read only for
//! a trusted folder ([`crate::trust`]). Both accept comments and trailing commas, as pi's
//! models.json does. A broken file or a value of the wrong kind never stops Tandem: the problem
//! is reported ([`SettingsError`]) and the defaults stand in for what could not be read.
//!
//! MCP servers come from pi 1.6's `mcp.json` files (`<agentDir>/mcp.json`, the project's
//! `.pi/mcp.json` when trusted; pi's format and merge rules, `mcp_json.rs`), gathered in
//! [`LoadedSettings::mcp_servers`]. settings.json's `mcpServers` (Claude Desktop's format,
//! stdio only; `mcp.rs`) still works but is deprecated: pi 1.6 no longer reads MCP servers
//! there, so each file that has it gets one warning pointing to mcp.json, and an mcp.json
//! server of the same name wins. It stays because Tandem documented it before pi 1.6 existed.
//!
//! `languageServers` (the language servers Tandem starts itself where no editor provides
//! language intelligence) and `diagnostics` are Tandem's keys, read as plain data here
//! (`language.rs`); the `tandem` crate merges them over its built-in servers and starts them.
//!
//! [`Settings`] holds what the files say (every field optional); its methods answer with pi's
//! defaults filled in. Keys this version does not know are kept in [`Settings::extra`], so
//! Tandem-only keys can be read once they are supported. Connecting to MCP servers is the front
//! doors' business.

mod language;
mod load;
mod mcp;
mod mcp_json;
mod schema;
mod unused;

pub use language::{DiagnosticsConfig, DiagnosticsSettings, LanguageServerSettings};
pub use load::{deep_merge, load, load_files, parse, LoadedSettings, SettingsError, SettingsPaths};
pub use mcp::McpServerSettings;
pub use mcp_json::{check_http_url, McpExposure, McpServer, McpTransport};

use crate::trust::DefaultProjectTrust;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tandem_agent::QueueMode;
use tandem_ai::{ThinkingBudgets, ThinkingLevel};

/// What one settings file, or the merge of both, says. Absent keys are `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Provider of the model to start with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_provider: Option<String>,
    /// Model id to start with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Thinking level to start with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_thinking_level: Option<ThinkingLevel>,
    /// Thinking level to start a new session with, per model (`provider/modelId`, exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_thinking_levels: Option<BTreeMap<String, ThinkingLevel>>,
    /// The built-in tools to start with: plain names replace the front door's default set,
    /// `+name` / `-name` change it (see [`crate::tools::select_tools`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_tools: Option<Vec<String>>,
    /// Extension files and directories to load (pi's `extensions`; relative to the
    /// settings file's directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Where session files go (relative to the working directory); `--session-dir` and
    /// `PI_CODING_AGENT_SESSION_DIR` win over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_dir: Option<String>,
    /// The proxy for the providers' HTTP requests (agent-directory settings only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_proxy: Option<String>,
    /// Longest silence of a provider's response, in milliseconds; `0` or `"disabled"`: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_idle_timeout_ms: Option<Millis>,
    /// How long one event's extension handlers may take, in milliseconds (default 30000);
    /// `0` or `"disabled"`: no limit (Tandem's own key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_event_timeout_ms: Option<Millis>,
    /// The providers' transport (`auto`, `sse`; pi's WebSocket transports are not Tandem's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// How steering messages are delivered (`all` or `one-at-a-time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steering_mode: Option<QueueMode>,
    /// How follow-up messages are delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up_mode: Option<QueueMode>,
    /// Automatic compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionSettings>,
    /// Summaries of abandoned branches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_summary: Option<BranchSummarySettings>,
    /// Automatic retry of transient provider errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySettings>,
    /// The shell the bash tool runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_path: Option<String>,
    /// Text put before every bash command (e.g. `shopt -s expand_aliases`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_command_prefix: Option<String>,
    /// Model patterns to cycle through (like `--models`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_models: Option<Vec<String>>,
    /// Token budgets per thinking level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budgets: Option<ThinkingBudgets>,
    /// Image handling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<ImageSettings>,
    /// Extra skill files or directories, and `!`/`+`/`-` patterns selecting discovered ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    /// Extra prompt-template files or directories, and selection patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<Vec<String>>,
    /// Offer skills as `/skill:name` commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_skill_commands: Option<bool>,
    /// Hide thinking blocks in the UI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hide_thinking_block: Option<bool>,
    /// The program the terminal mode edits a prompt with (Ctrl+G), before `$VISUAL` and
    /// `$EDITOR`. Read from the agent directory's settings only: a project does not choose
    /// what runs on the user's keystroke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_editor: Option<String>,
    /// The terminal mode starts without its title line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_startup: Option<bool>,
    /// UI theme name (pi's; unused by Tandem).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// Deprecated: MCP servers to start, by name (Claude Desktop's format; pi 1.6 reads them
    /// from mcp.json only, see [`LoadedSettings::mcp_servers`]). A
    /// project entry replaces the global entry of the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<BTreeMap<String, McpServerSettings>>,
    /// What happens to a project folder with no saved trust decision (pi 1.6). Read from the
    /// agent directory's settings only: a project cannot vouch for itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_project_trust: Option<DefaultProjectTrust>,
    /// What the agent is told about diagnostics after its edits (Tandem's key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsSettings>,
    /// Language servers Tandem starts itself where no editor provides language intelligence,
    /// by name (Tandem's key). A project's entries are read only when it is trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language_servers: Option<BTreeMap<String, Option<LanguageServerSettings>>>,
    /// Every other key, as written: pi's UI settings and Tandem keys not read yet.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A duration setting that can be turned off: milliseconds (`0` turns it off) or `"disabled"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Millis {
    /// Milliseconds.
    Count(u64),
    /// `"disabled"` (the schema check lets no other word through).
    Word(String),
}

impl Millis {
    /// The duration, `None` when turned off.
    pub fn duration(&self) -> Option<Duration> {
        match self {
            Millis::Count(0) | Millis::Word(_) => None,
            Millis::Count(ms) => Some(Duration::from_millis(*ms)),
        }
    }
}

/// `compaction` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSettings {
    /// Compact automatically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Tokens kept free for the prompt and the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_tokens: Option<u64>,
    /// Recent tokens kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_recent_tokens: Option<u64>,
    /// The two token settings per model (`provider/modelId`, exact), each falling back on its
    /// ordinary value on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_overrides: Option<BTreeMap<String, CompactionTokens>>,
}

/// A `compaction.modelOverrides` entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionTokens {
    /// Tokens kept free for the prompt and the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_tokens: Option<u64>,
    /// Recent tokens kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_recent_tokens: Option<u64>,
}

/// `branchSummary` as written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummarySettings {
    /// Tokens kept free for the summary prompt and answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_tokens: Option<u64>,
    /// Never offer to summarize a branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_prompt: Option<bool>,
}

/// `retry` as written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetrySettings {
    /// Retry at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Attempts after the first failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
    /// First wait; doubles per attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_delay_ms: Option<u64>,
    /// Longest wait (pi 0.73's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay_ms: Option<u64>,
    /// Longest wait (pi 1.6's name; wins over `maxDelayMs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_agent_delay_ms: Option<u64>,
    /// The provider requests themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderRetrySettings>,
}

/// `retry.provider` as written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderRetrySettings {
    /// Longest silence of a provider's response (default `httpIdleTimeoutMs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Retries of a failed request inside the provider call (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
    /// The longest server-requested wait honoured (default 60000; 0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry_delay_ms: Option<u64>,
}

/// `images` as written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageSettings {
    /// Shrink large images before sending them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_resize: Option<bool>,
    /// Never send images to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_images: Option<bool>,
}

/// Compaction settings with pi's defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionConfig {
    /// Default true.
    pub enabled: bool,
    /// Default 16384.
    pub reserve_tokens: u64,
    /// Default 20000.
    pub keep_recent_tokens: u64,
}

/// Retry settings with pi's defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryConfig {
    /// Default true.
    pub enabled: bool,
    /// Default 3.
    pub max_retries: u64,
    /// Default 2000.
    pub base_delay_ms: u64,
    /// Default 60000.
    pub max_delay_ms: u64,
}

/// Image settings with pi's defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageConfig {
    /// Default true.
    pub auto_resize: bool,
    /// Default false.
    pub block_images: bool,
}

impl Settings {
    /// Steering delivery; pi's default is one at a time.
    pub fn steering_mode(&self) -> QueueMode {
        self.steering_mode.unwrap_or(QueueMode::OneAtATime)
    }

    /// Follow-up delivery; pi's default is one at a time.
    pub fn follow_up_mode(&self) -> QueueMode {
        self.follow_up_mode.unwrap_or(QueueMode::OneAtATime)
    }

    /// Compaction with defaults (enabled, reserve 16384, keep 20000), for any model.
    pub fn compaction(&self) -> CompactionConfig {
        self.compaction_for("", "")
    }

    /// Compaction for `provider/model_id`: each token setting from the model's
    /// `compaction.modelOverrides` entry, else the ordinary setting, else the default.
    pub fn compaction_for(&self, provider: &str, model_id: &str) -> CompactionConfig {
        let c = self.compaction.clone().unwrap_or_default();
        let key = format!("{provider}/{model_id}");
        let model = c
            .model_overrides
            .as_ref()
            .and_then(|overrides| overrides.get(&key))
            .copied()
            .unwrap_or_default();
        CompactionConfig {
            enabled: c.enabled.unwrap_or(true),
            reserve_tokens: model.reserve_tokens.or(c.reserve_tokens).unwrap_or(16384),
            keep_recent_tokens: model
                .keep_recent_tokens
                .or(c.keep_recent_tokens)
                .unwrap_or(20000),
        }
    }

    /// The thinking level `modelThinkingLevels` gives `provider/model_id`, if any.
    pub fn model_thinking_level(&self, provider: &str, model_id: &str) -> Option<ThinkingLevel> {
        self.model_thinking_levels
            .as_ref()?
            .get(&format!("{provider}/{model_id}"))
            .copied()
    }

    /// The longest silence tolerated from a provider: `retry.provider.timeoutMs`, else
    /// `httpIdleTimeoutMs`, else 300 s; `None` when turned off.
    pub fn provider_idle_timeout(&self) -> Option<Duration> {
        let provider = self.retry.and_then(|r| r.provider);
        match (
            provider.and_then(|p| p.timeout_ms),
            &self.http_idle_timeout_ms,
        ) {
            (Some(ms), _) => Millis::Count(ms).duration(),
            (None, Some(setting)) => setting.duration(),
            (None, None) => Some(tandem_ai::DEFAULT_IDLE_TIMEOUT),
        }
    }

    /// How long one event's extension handlers may take (`extensionEventTimeoutMs`, default
    /// 30 s); `None` when turned off.
    pub fn extension_event_timeout(&self) -> Option<Duration> {
        match &self.extension_event_timeout_ms {
            Some(setting) => setting.duration(),
            None => Some(Duration::from_secs(30)),
        }
    }

    /// Tokens reserved when summarizing a branch (default 16384).
    pub fn branch_summary_reserve_tokens(&self) -> u64 {
        self.branch_summary
            .and_then(|b| b.reserve_tokens)
            .unwrap_or(16384)
    }

    /// Retry with defaults (enabled, 3 retries, 2000 ms doubling, at most 60000 ms).
    pub fn retry(&self) -> RetryConfig {
        let r = self.retry.unwrap_or_default();
        RetryConfig {
            enabled: r.enabled.unwrap_or(true),
            max_retries: r.max_retries.unwrap_or(3),
            base_delay_ms: r.base_delay_ms.unwrap_or(2000),
            max_delay_ms: r.max_agent_delay_ms.or(r.max_delay_ms).unwrap_or(60000),
        }
    }

    /// Images with defaults (resize on, blocking off).
    pub fn images(&self) -> ImageConfig {
        let i = self.images.unwrap_or_default();
        ImageConfig {
            auto_resize: i.auto_resize.unwrap_or(true),
            block_images: i.block_images.unwrap_or(false),
        }
    }

    /// Whether skills are offered as `/skill:name` commands (default true).
    pub fn skill_commands_enabled(&self) -> bool {
        self.enable_skill_commands.unwrap_or(true)
    }

    /// The skill entries (paths and patterns), empty when unset.
    pub fn skill_entries(&self) -> &[String] {
        self.skills.as_deref().unwrap_or_default()
    }

    /// `defaultProjectTrust` with pi's default (`ask`).
    pub fn default_project_trust(&self) -> DefaultProjectTrust {
        self.default_project_trust.unwrap_or_default()
    }

    /// `diagnostics` with its defaults.
    pub fn diagnostics(&self) -> DiagnosticsConfig {
        self.diagnostics.clone().unwrap_or_default().config()
    }

    /// The prompt-template entries (paths and patterns), empty when unset.
    pub fn prompt_entries(&self) -> &[String] {
        self.prompts.as_deref().unwrap_or_default()
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
