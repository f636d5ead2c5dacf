//! Per-call options shared by every provider (pi's `SimpleStreamOptions`).

use std::collections::BTreeMap;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::model::{ThinkingBudgets, ThinkingLevel};

/// How long a stream may stay silent before it is treated as stalled, unless overridden.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Prompt-cache retention preference (providers map it to what they offer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheRetention {
    /// No caching hints.
    None,
    /// The provider's default, short-lived cache.
    #[default]
    Short,
    /// Longer retention where offered.
    Long,
}

/// Options for one model call.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// The API key; when `None`, the provider's environment variable is consulted.
    pub api_key: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Output limit; default `min(model.maxTokens, 32000)` as pi does.
    pub max_tokens: Option<u64>,
    /// Requested reasoning effort (clamped per model).
    pub reasoning: ThinkingLevel,
    /// Token budgets for budget-based providers.
    pub thinking_budgets: ThinkingBudgets,
    /// Cancels the call; the stream then ends with `error{aborted}`.
    pub cancel: CancellationToken,
    /// Extra HTTP headers (override model and provider headers).
    pub headers: BTreeMap<String, String>,
    /// A session id for providers that use it for caching or routing.
    pub session_id: Option<String>,
    /// Prompt-cache retention.
    pub cache_retention: CacheRetention,
    /// Longest silence tolerated while waiting for the response or the next chunk.
    pub idle_timeout: Duration,
    /// The proxy every request goes through (settings' `httpProxy`); without one, the
    /// `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY` environment applies.
    pub proxy: Option<String>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            api_key: None,
            temperature: None,
            max_tokens: None,
            reasoning: ThinkingLevel::Off,
            thinking_budgets: ThinkingBudgets::default(),
            cancel: CancellationToken::new(),
            headers: BTreeMap::new(),
            session_id: None,
            cache_retention: CacheRetention::Short,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            proxy: None,
        }
    }
}

impl StreamOptions {
    /// The output limit to request for `model_max_tokens` (pi: `min(model.maxTokens, 32000)`).
    pub fn max_tokens_for(&self, model_max_tokens: u64) -> u64 {
        self.max_tokens
            .unwrap_or_else(|| model_max_tokens.min(32_000))
    }
}
