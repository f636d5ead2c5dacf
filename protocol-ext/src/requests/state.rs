//! `tandem/state`: what a session is doing and with which model.
//!
//! A plugin calls it when it attaches to a session, and after a sequence gap, to resynchronize;
//! events keep it current afterwards.

use serde::{Deserialize, Serialize};

use crate::ids::SessionId;
use crate::methods::{self, Request};
use crate::requests::models::{ModelInfo, ThinkingLevel};

/// `tandem/state` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateParams {
    /// The session.
    pub session: SessionId,
}

/// Messages waiting for the running session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueState {
    /// Steering messages, oldest first.
    pub steering: Vec<String>,
    /// Follow-up messages, oldest first.
    pub follow_up: Vec<String>,
}

/// Token use of the session so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenStats {
    /// Input tokens billed, all calls.
    pub input: u64,
    /// Output tokens billed, all calls.
    pub output: u64,
    /// Tokens read from the provider's cache.
    pub cache_read: u64,
    /// Tokens written to the provider's cache.
    pub cache_write: u64,
    /// Estimated tokens of the current context (what the next call sends), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// Cost in US dollars, from the model's prices.
    pub cost: f64,
}

/// `tandem/state` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateResult {
    /// The session.
    pub session: SessionId,
    /// The model; `null` when none is configured (prompts then fail with -32003).
    pub model: Option<ModelInfo>,
    /// The thinking level in effect.
    pub thinking_level: ThinkingLevel,
    /// True from `agent_start` until `settled`.
    pub running: bool,
    /// Messages waiting.
    pub queued: QueueState,
    /// Messages in the current context.
    pub message_count: u64,
    /// The session file, once it exists (pi writes it lazily, at the first answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// Token use, when any call has been made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenStats>,
    /// Project trust of the session's folder.
    #[serde(default)]
    pub trust: TrustState,
    /// Configuration problems found when the session was set up (a broken settings.json,
    /// models.json, auth.json or trust.json), one line each; the server also showed each once
    /// with `window/showMessage`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_problems: Vec<String>,
    /// The extensions the session loaded (their entry files), in load order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

/// Whether the session uses its folder's project configuration (`.pi/settings.json`,
/// `mcp.json`, skills, prompts, system-prompt files).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TrustState {
    /// It does (trusted, or there is nothing that needs trust).
    Trusted,
    /// It does not.
    #[default]
    Untrusted,
    /// Not yet decided: the question is asked before the session's first run.
    Pending,
}

impl Request for StateParams {
    const METHOD: &'static str = methods::STATE;
    type Result = StateResult;
}
