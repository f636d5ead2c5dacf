//! Compaction: replacing old history with a model-written summary when the context fills up.
//!
//! pi's scheme, in three steps the session layer drives:
//! 1. [`should_compact`]: the context (last usage plus estimates, [`estimate_context_tokens`])
//!    exceeds the window minus `reserveTokens`;
//! 2. [`prepare_compaction`] (pure): cut the session path so about `keepRecentTokens` of recent
//!    history stays verbatim ([`find_cut_point`]; never at a tool result; a cut inside a turn
//!    splits it), and collect what to summarize, the previous summary and the files touched;
//! 3. [`compact`] (one or two model calls through the injected stream function): the summary,
//!    with the file lists appended, ready for the session's compaction entry.
//!
//! Nothing here touches files or the session: the caller appends the result and rebuilds the
//! context, which then starts with the summary (see [`crate::messages`]).

pub mod branch;
pub mod cut;
pub mod files;
pub mod prepare;
pub mod prompts;
pub mod serialize;
pub mod summary;
pub mod tokens;

#[cfg(test)]
mod test_support;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use tandem_agent::StreamFn;
use tandem_ai::{CancellationToken, Model, ThinkingLevel, Usage};

pub use branch::{
    entries_left, prepare_branch, summarize_branch, BranchPreparation, BranchSummary,
};
pub use cut::{find_cut_point, find_turn_start_index, CutPoint};
pub use files::{format_file_operations, CompactionDetails, FileOperations};
pub use prepare::{prepare_compaction, CompactionPreparation};
pub use summary::{
    generate_branch_summary, generate_summary, generate_turn_prefix_summary, Summary,
};
pub use tokens::{
    calculate_context_tokens, estimate_context_tokens, estimate_tokens, last_assistant_usage,
    should_compact, ContextUsageEstimate,
};

/// The `compaction` block of settings.json; missing fields take pi's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionSettings {
    /// Compact automatically (default true).
    pub enabled: bool,
    /// Tokens kept free for the answer and the summary (default 16384).
    pub reserve_tokens: u64,
    /// Recent history kept verbatim, in estimated tokens (default 20000).
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
        }
    }
}

/// How to reach the model for the summaries, and what to focus on.
#[derive(Debug, Clone, Default)]
pub struct CompactionOptions {
    /// API key for the model's provider (`None`: the provider's environment variable).
    pub api_key: Option<String>,
    /// Extra HTTP headers.
    pub headers: BTreeMap<String, String>,
    /// The session's id, for providers that use it for caching or routing.
    pub session_id: Option<String>,
    /// What the summary should pay particular attention to (`/compact <instructions>`).
    pub custom_instructions: Option<String>,
    /// Reasoning effort for reasoning models (newer pi passes the session's level). `None`
    /// keeps pi 0.58's choice: `high` for the history summary, none for a turn prefix.
    pub thinking_level: Option<ThinkingLevel>,
    /// The longest silence tolerated from the model (`None`: the default).
    pub idle_timeout: Option<std::time::Duration>,
    /// The proxy the request goes through (settings' `httpProxy`).
    pub proxy: Option<String>,
}

/// A finished compaction, ready for the session's compaction entry.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionResult {
    /// The summary, file lists included.
    pub summary: String,
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Context tokens before compacting.
    pub tokens_before: u64,
    /// The file lists (store with [`CompactionDetails::to_value`]).
    pub details: CompactionDetails,
    /// What the summaries' model calls cost (recorded on the compaction entry, counted in the
    /// session's totals).
    pub usage: Usage,
}

/// Which summary a model call was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryPart {
    /// The summary of the history before the cut.
    History,
    /// The summary of the beginning of a split turn.
    TurnPrefix,
    /// The summary of a branch left in the session tree.
    Branch,
}

impl fmt::Display for SummaryPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SummaryPart::History => "Summarization",
            SummaryPart::TurnPrefix => "Turn prefix summarization",
            SummaryPart::Branch => "Branch summarization",
        })
    }
}

/// Why a compaction produced no summary. The session is unchanged in every case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    /// The model call failed.
    #[error(
        "{part} failed: {message} (model {model}; check its API key and connection, then try again)"
    )]
    Summary {
        /// Which summary.
        part: SummaryPart,
        /// `provider/id`.
        model: String,
        /// The provider's error text.
        message: String,
    },
    /// The model answered without any text.
    #[error(
        "{part} failed: model {model} returned no text; compact again or choose another model"
    )]
    EmptySummary {
        /// Which summary.
        part: SummaryPart,
        /// `provider/id`.
        model: String,
    },
    /// The cancellation token fired.
    #[error("Compaction cancelled")]
    Aborted,
}

/// Writes the summary for a prepared compaction (pi's `compact`).
///
/// A split turn gets two summaries, requested one after the other (as newer pi does) and
/// joined: the history before the turn (updating the previous summary if there is one) and the
/// beginning of the turn. The file lists are appended to the summary and returned as details.
/// Cancelling `cancel` ends the calls and returns [`CompactionError::Aborted`].
pub async fn compact(
    preparation: &CompactionPreparation,
    model: &Model,
    stream_fn: &StreamFn,
    options: &CompactionOptions,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let reserve = preparation.settings.reserve_tokens;
    let previous = preparation.previous_summary.as_deref();
    let history = || {
        generate_summary(
            &preparation.messages_to_summarize,
            model,
            stream_fn,
            reserve,
            previous,
            options,
            cancel,
        )
    };

    let mut usage = Usage::default();
    let mut summary = if preparation.is_split_turn && !preparation.turn_prefix_messages.is_empty() {
        let history = if preparation.messages_to_summarize.is_empty() {
            prompts::NO_PRIOR_HISTORY.to_string()
        } else {
            let history = history().await?;
            usage.add(&history.usage);
            history.text
        };
        let prefix = generate_turn_prefix_summary(
            &preparation.turn_prefix_messages,
            model,
            stream_fn,
            reserve,
            options,
            cancel,
        )
        .await?;
        usage.add(&prefix.usage);
        format!(
            "{history}{}{}",
            prompts::TURN_CONTEXT_SEPARATOR,
            prefix.text
        )
    } else {
        let history = history().await?;
        usage = history.usage;
        history.text
    };
    if cancel.is_cancelled() {
        return Err(CompactionError::Aborted);
    }

    let details = preparation.file_ops.file_lists();
    summary.push_str(&format_file_operations(&details));
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: preparation.first_kept_entry_id.clone(),
        tokens_before: preparation.tokens_before,
        details,
        usage,
    })
}

#[cfg(test)]
mod tests;
