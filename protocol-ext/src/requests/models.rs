//! Models and reasoning: `tandem/models/list`, `tandem/models/set`, `tandem/thinking/set`.

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};

use crate::ids::SessionId;
use crate::methods::{self, Request};

/// How much the model reasons before answering (pi's levels).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning.
    #[default]
    Off,
    /// The least the provider offers.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high (a few models only; others use high).
    Xhigh,
    /// The most a model offers (pi 1.6; Claude's adaptive `max` effort, else the highest level).
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

    /// The level's name on the wire.
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
}

/// The model a session uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// Provider (`anthropic`, `openai`, a models.json provider, ...).
    pub provider: String,
    /// Model id as the provider knows it.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Context window in tokens.
    pub context_window: u64,
}

/// `tandem/models/list` params: none (`{}` or absent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ModelsListParams {}

impl<'de> Deserialize<'de> for ModelsListParams {
    /// Accepts `{}` (with any fields, for forward compatibility) and `null`.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<serde::de::IgnoredAny>::deserialize(d).map(|_| ModelsListParams {})
    }
}

/// One model of `tandem/models/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelEntry {
    /// Provider.
    pub provider: String,
    /// Model id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// True when it supports a thinking level above `off`.
    pub reasoning: bool,
    /// Context window in tokens.
    pub context_window: u64,
    /// True when its provider has an API key (it can be used now).
    pub available: bool,
    /// The environment variables the server reads its provider's key from, in priority order
    /// (empty for a provider keyed only in models.json or auth.json). An editor that stores a
    /// key for the user hands it to the server in one of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_env: Vec<String>,
}

impl Request for ModelsListParams {
    const METHOD: &'static str = methods::MODELS_LIST;
    type Result = Vec<ModelEntry>;
}

/// `tandem/models/set` params; the result is the [`ModelInfo`] now in use. Takes effect from
/// the session's next model call (a running turn finishes with the old model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelsSetParams {
    /// The session.
    pub session: SessionId,
    /// Provider of the new model.
    pub provider: String,
    /// Its id.
    pub id: String,
}

impl Request for ModelsSetParams {
    const METHOD: &'static str = methods::MODELS_SET;
    type Result = ModelInfo;
}

/// `tandem/thinking/set` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkingSetParams {
    /// The session.
    pub session: SessionId,
    /// The requested level.
    pub level: ThinkingLevel,
}

/// `tandem/thinking/set` result: the level in effect, which is lower than the one requested
/// when the model cannot do it (`off` for a model without reasoning, `high` for `xhigh` on most, `max`
/// down to the highest level the model has).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkingSetResult {
    /// The level in effect.
    pub level: ThinkingLevel,
}

impl Request for ThinkingSetParams {
    const METHOD: &'static str = methods::THINKING_SET;
    type Result = ThinkingSetResult;
}
