//! What an [`super::AgentSession`] reports: the agent's events plus the session layer's own
//! (auto-retry, compaction, queue changes, settled), in pi 1.6's JSON shapes.

use std::sync::Arc;

use serde::Serialize;
use tandem_agent::AgentEvent;
use tandem_ai::Usage;

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionReason {
    /// The context passed the threshold after a successful turn.
    Threshold,
    /// The model refused the request for its size; the run continues afterwards.
    Overflow,
    /// Asked for (`/compact`).
    Manual,
}

/// The outcome of a compaction, as reported in `compaction_end`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryInfo {
    /// The summary.
    pub summary: String,
    /// First entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Context tokens before.
    pub tokens_before: u64,
    /// The compacted context's size, estimated (pi 1.6).
    pub estimated_tokens_after: u64,
    /// What the summary's model calls cost (pi 1.6).
    pub usage: Usage,
    /// The read and modified files (`{readFiles, modifiedFiles}`).
    pub details: serde_json::Value,
}

/// A session-layer event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum SessionEvent {
    /// A retry is scheduled after a transient failure.
    AutoRetryStart {
        /// 1-based attempt number.
        attempt: u32,
        /// Retries allowed.
        max_attempts: u32,
        /// Wait before it.
        delay_ms: u64,
        /// The failure being retried.
        error_message: String,
    },
    /// Retrying ended.
    AutoRetryEnd {
        /// True when a retry succeeded.
        success: bool,
        /// The last attempt.
        attempt: u32,
        /// The final error when it did not.
        #[serde(skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
    /// A compaction started.
    CompactionStart {
        /// Why.
        reason: CompactionReason,
    },
    /// A compaction ended.
    CompactionEnd {
        /// Why it ran.
        reason: CompactionReason,
        /// The new summary, when it succeeded (absent otherwise, as pi writes it).
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Box<CompactionSummaryInfo>>,
        /// True when it was cancelled.
        aborted: bool,
        /// True when the run continues afterwards (overflow recovery).
        will_retry: bool,
        /// Why it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    /// The steering or follow-up queue changed.
    QueueUpdate {
        /// Queued steering texts.
        steering: Vec<String>,
        /// Queued follow-up texts.
        follow_up: Vec<String>,
    },
    /// The session's display name changed (`None`: cleared).
    SessionInfoChanged {
        /// The new name.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// The thinking level changed.
    ThinkingLevelChanged {
        /// The new level.
        level: tandem_ai::ThinkingLevel,
    },
    /// Everything finished: the run, its retries and compactions.
    AgentSettled {
        /// True when the work ended because it was aborted.
        aborted: bool,
    },
    /// A prompt ran no model: it was an extension command, or an extension's `input` handler
    /// handled it. It ends the prompt as `agent_settled` ends a run (pi sends no event for it;
    /// front doors whose clients wait for an end use this one).
    PromptHandled,
}

/// One event of a session: the agent's or the session layer's.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentSessionEvent {
    /// From the agent loop.
    Agent(Arc<AgentEvent>),
    /// From the session layer.
    Session(SessionEvent),
}

impl AgentSessionEvent {
    /// The event's type name as pi writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentSessionEvent::Agent(e) => e.kind(),
            AgentSessionEvent::Session(e) => match e {
                SessionEvent::AutoRetryStart { .. } => "auto_retry_start",
                SessionEvent::AutoRetryEnd { .. } => "auto_retry_end",
                SessionEvent::CompactionStart { .. } => "compaction_start",
                SessionEvent::CompactionEnd { .. } => "compaction_end",
                SessionEvent::QueueUpdate { .. } => "queue_update",
                SessionEvent::SessionInfoChanged { .. } => "session_info_changed",
                SessionEvent::ThinkingLevelChanged { .. } => "thinking_level_changed",
                SessionEvent::AgentSettled { .. } => "agent_settled",
                SessionEvent::PromptHandled => "prompt_handled",
            },
        }
    }
}
