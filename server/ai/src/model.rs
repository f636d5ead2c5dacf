//! Model descriptions: which wire API a model speaks, where, and what it costs.
//!
//! The shapes match pi's `Model` and its models.json entries, so a user's custom providers load
//! unchanged. `compat` carries the OpenAI-compatible server quirks; absent fields are auto-detected
//! from the provider name and base URL (see `providers::openai_completions::compat`).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The wire protocol a model speaks. Unknown names (APIs Tandem does not implement, found in pi
/// sessions or models.json) are kept verbatim so they round-trip.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Api {
    /// OpenAI Chat Completions and the many servers that copy it.
    OpenAiCompletions,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    AnthropicMessages,
    /// Google Generative Language (Gemini).
    GoogleGenerativeAi,
    /// Tandem's built-in scripted model: replays a script file, no network.
    Scripted,
    /// Any other API name.
    Other(String),
}

impl Api {
    /// The API's name as pi writes it.
    pub fn as_str(&self) -> &str {
        match self {
            Api::OpenAiCompletions => "openai-completions",
            Api::OpenAiResponses => "openai-responses",
            Api::AnthropicMessages => "anthropic-messages",
            Api::GoogleGenerativeAi => "google-generative-ai",
            Api::Scripted => "scripted",
            Api::Other(name) => name,
        }
    }

    /// Parses a name; unknown names become [`Api::Other`].
    pub fn parse(name: &str) -> Api {
        match name {
            "openai-completions" => Api::OpenAiCompletions,
            "openai-responses" => Api::OpenAiResponses,
            "anthropic-messages" => Api::AnthropicMessages,
            "google-generative-ai" => Api::GoogleGenerativeAi,
            "scripted" => Api::Scripted,
            other => Api::Other(other.to_string()),
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Api {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Api {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Api::parse(&name))
    }
}

/// Reasoning effort. `off` sends no reasoning request; `xhigh` and `max` (pi 1.6) are clamped
/// on models that do not support them (`max` to `xhigh`, then `high`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning.
    #[default]
    Off,
    /// The least reasoning the provider offers.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high (a few models only).
    Xhigh,
    /// The most a model offers (pi 1.6: Anthropic's adaptive-thinking `max` effort).
    Max,
}

impl ThinkingLevel {
    /// All levels, lowest first.
    pub const ALL: [ThinkingLevel; 7] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
        ThinkingLevel::Max,
    ];

    /// The level's name as pi writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }

    /// Parses a level name.
    pub fn parse(name: &str) -> Option<ThinkingLevel> {
        ThinkingLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// `xhigh` and `max` become `high`; everything else is unchanged.
    pub fn clamp_xhigh(self) -> ThinkingLevel {
        if matches!(self, ThinkingLevel::Xhigh | ThinkingLevel::Max) {
            ThinkingLevel::High
        } else {
            self
        }
    }
}

impl fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Token budgets per thinking level for providers that take budgets (pi's defaults:
/// 1024 / 2048 / 8192 / 16384).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingBudgets {
    /// Budget for `minimal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimal: Option<u64>,
    /// Budget for `low`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<u64>,
    /// Budget for `medium`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub medium: Option<u64>,
    /// Budget for `high` (and a clamped `xhigh`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<u64>,
}

impl ThinkingBudgets {
    /// The budget for `level` with pi's defaults filling the gaps; `None` for `off`.
    pub fn budget(&self, level: ThinkingLevel) -> Option<u64> {
        match level.clamp_xhigh() {
            ThinkingLevel::Off => None,
            ThinkingLevel::Minimal => Some(self.minimal.unwrap_or(1024)),
            ThinkingLevel::Low => Some(self.low.unwrap_or(2048)),
            ThinkingLevel::Medium => Some(self.medium.unwrap_or(8192)),
            ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => {
                Some(self.high.unwrap_or(16384))
            }
        }
    }
}

/// Kinds of input a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// Text.
    Text,
    /// Images.
    Image,
}

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    /// Input tokens.
    #[serde(default)]
    pub input: f64,
    /// Output tokens.
    #[serde(default)]
    pub output: f64,
    /// Cache reads.
    #[serde(default)]
    pub cache_read: f64,
    /// Cache writes.
    #[serde(default)]
    pub cache_write: f64,
}

/// How an OpenAI-compatible server sends reasoning switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThinkingFormat {
    /// `reasoning_effort`.
    #[serde(rename = "openai")]
    OpenAi,
    /// Top-level `enable_thinking` (Z.ai).
    #[serde(rename = "zai")]
    Zai,
    /// Top-level `enable_thinking` (Qwen).
    #[serde(rename = "qwen")]
    Qwen,
    /// `chat_template_kwargs.enable_thinking`.
    #[serde(rename = "qwen-chat-template")]
    QwenChatTemplate,
}

/// Which field carries the output token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI's current name).
    MaxCompletionTokens,
    /// `max_tokens` (older servers).
    MaxTokens,
}

/// OpenRouter routing preferences.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProviderRouting {
    /// Only these upstream providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<String>>,
    /// Try these upstream providers in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Vec<String>>,
}

/// Quirks of OpenAI-compatible servers, as pi's `compat` object. Every field is optional: an
/// absent one is auto-detected from the provider and base URL.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenAiCompat {
    /// The server accepts `store`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_store: Option<bool>,
    /// The server accepts the `developer` role (else `system`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_developer_role: Option<bool>,
    /// The server accepts `reasoning_effort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_reasoning_effort: Option<bool>,
    /// Level name → the server's `reasoning_effort` value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort_map: Option<BTreeMap<String, String>>,
    /// The server honours `stream_options.include_usage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_usage_in_streaming: Option<bool>,
    /// Name of the max-tokens field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<MaxTokensField>,
    /// Tool results need a `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_tool_result_name: Option<bool>,
    /// A user message after tool results needs an assistant message between them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_assistant_after_tool_result: Option<bool>,
    /// Thinking must be replayed as `<thinking>` text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_thinking_as_text: Option<bool>,
    /// How reasoning is switched on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_format: Option<ThinkingFormat>,
    /// Tool definitions may carry `strict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_strict_mode: Option<bool>,
    /// OpenRouter provider routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_router_routing: Option<ProviderRouting>,
}

/// A model: identity, endpoint, abilities, prices and limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// The id sent to the provider.
    pub id: String,
    /// A display name.
    pub name: String,
    /// Wire API.
    pub api: Api,
    /// Provider name (key for API keys and settings).
    pub provider: String,
    /// Endpoint base URL (for the scripted model: the script file, empty for the built-in demo).
    pub base_url: String,
    /// True when the model can reason.
    pub reasoning: bool,
    /// Accepted inputs.
    pub input: Vec<InputKind>,
    /// Prices.
    pub cost: ModelCost,
    /// Context window in tokens.
    pub context_window: u64,
    /// Output limit in tokens.
    pub max_tokens: u64,
    /// Extra HTTP headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// OpenAI-compatible quirks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<OpenAiCompat>,
}

/// True for the Claude models that think adaptively (`thinking: {type: adaptive}` with an
/// effort), by id.
pub(crate) fn has_adaptive_thinking(model_id: &str) -> bool {
    ["opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"]
        .iter()
        .any(|id| model_id.contains(id))
}

impl Model {
    /// True when the model accepts images.
    pub fn accepts_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }

    /// True when the model supports the `xhigh` thinking level (pi: GPT-5.1-codex-max and later
    /// GPT-5.x, Claude Opus 4.6+).
    pub fn supports_xhigh(&self) -> bool {
        let id = self.id.as_str();
        id.contains("gpt-5.1-codex-max")
            || id.contains("gpt-5.2")
            || id.contains("gpt-5.3")
            || id.contains("gpt-5.4")
            || id.contains("gpt-5.5")
            || id.contains("opus-4-6")
            || id.contains("opus-4.6")
            || id.contains("opus-4-7")
            || id.contains("opus-4.7")
    }

    /// True when the model offers the `max` thinking level (pi 1.6: every Claude model with
    /// adaptive thinking, whose `max` effort it is).
    pub fn supports_max(&self) -> bool {
        has_adaptive_thinking(&self.id)
    }

    /// The level actually requested: `off` for models that cannot reason; `max` and `xhigh`
    /// clamped down, as pi 1.6 does, to the highest level the model has.
    pub fn effective_thinking(&self, level: ThinkingLevel) -> ThinkingLevel {
        match level {
            _ if !self.reasoning => ThinkingLevel::Off,
            ThinkingLevel::Max if self.supports_max() => ThinkingLevel::Max,
            ThinkingLevel::Max | ThinkingLevel::Xhigh if self.supports_xhigh() => {
                ThinkingLevel::Xhigh
            }
            ThinkingLevel::Max | ThinkingLevel::Xhigh => ThinkingLevel::High,
            _ => level,
        }
    }
}
