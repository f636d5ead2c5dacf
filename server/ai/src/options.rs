//! Per-call options shared by every provider (pi's `SimpleStreamOptions`).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

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

/// What a provider hook returns (a boxed, sendable future).
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Hooks around a model call's HTTP request (pi's `before_provider_request` and
/// `after_provider_response`): extensions see, and may replace, the payload a provider built,
/// and see the response's status and headers before its body is read.
pub trait ProviderHooks: Send + Sync {
    /// The payload the provider is about to send; the value returned is sent instead.
    fn before_request<'a>(&'a self, payload: Value) -> HookFuture<'a, Value>;
    /// The response's status and headers (names lower-cased), before the body is read.
    fn after_response<'a>(
        &'a self,
        status: u16,
        headers: Vec<(String, String)>,
    ) -> HookFuture<'a, ()>;
}

/// [`StreamOptions::provider_hooks`], debug-printed as present or not.
#[derive(Clone, Default)]
pub struct ProviderHookSlot(pub Option<Arc<dyn ProviderHooks>>);

impl std::fmt::Debug for ProviderHookSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Some(ProviderHooks)"
        } else {
            "None"
        })
    }
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
    /// Hooks around the HTTP request (extensions'); none by default.
    pub provider_hooks: ProviderHookSlot,
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
            provider_hooks: ProviderHookSlot::default(),
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
