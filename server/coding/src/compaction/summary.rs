//! Asking the model for the summaries.
//!
//! One call per summary, through the injected [`StreamFn`] so tests script the model. The
//! history summary may use up to 80% of `reserveTokens` of output and, unless told otherwise,
//! asks reasoning models to think hard; the turn-prefix summary gets 50% and no reasoning (pi's
//! budgets). Both limits are also capped at the model's own output limit (as newer pi does),
//! since a provider refuses a larger request.

use tandem_agent::{AgentMessage, StreamFn};
use tandem_ai::{
    AssistantBlock, CancellationToken, Context, Message, Model, StopReason, StreamOptions,
    ThinkingLevel, Usage, UserMessage,
};

use super::prompts::{
    summary_request, BRANCH_SUMMARY_PROMPT, FOCUS_INTRO, SUMMARIZATION_SYSTEM_PROMPT,
    SUMMARY_PROMPT, TURN_PREFIX_PROMPT, UPDATE_SUMMARY_PROMPT,
};
use super::serialize::serialize_conversation;
use super::{CompactionError, CompactionOptions, SummaryPart};
use crate::messages::convert_to_llm;

/// A summary and the usage of the model call that wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The summary's text.
    pub text: String,
    /// What the call cost.
    pub usage: Usage,
}

/// Summarizes `messages` into a checkpoint. With a `previous_summary` the model is asked to
/// update it with the new messages, so a chain of compactions keeps what earlier ones recorded.
pub async fn generate_summary(
    messages: &[AgentMessage],
    model: &Model,
    stream_fn: &StreamFn,
    reserve_tokens: u64,
    previous_summary: Option<&str>,
    options: &CompactionOptions,
    cancel: &CancellationToken,
) -> Result<Summary, CompactionError> {
    let mut instructions = if previous_summary.is_some() {
        UPDATE_SUMMARY_PROMPT.to_string()
    } else {
        SUMMARY_PROMPT.to_string()
    };
    if let Some(focus) = options
        .custom_instructions
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        instructions.push_str(&format!("\n\n{FOCUS_INTRO}{focus}"));
    }
    let transcript = serialize_conversation(&convert_to_llm(messages));
    let request = summary_request(&transcript, previous_summary, &instructions);
    let reasoning = reasoning(model, options, ThinkingLevel::High);
    let call = SummaryCall {
        model,
        stream_fn,
        options,
        cancel,
    };
    call.run(
        request,
        output_budget(reserve_tokens, 80, model),
        reasoning,
        SummaryPart::History,
    )
    .await
}

/// Summarizes a branch of the session tree that the user is leaving (see [`super::branch`]).
pub async fn generate_branch_summary(
    messages: &[AgentMessage],
    model: &Model,
    stream_fn: &StreamFn,
    reserve_tokens: u64,
    options: &CompactionOptions,
    cancel: &CancellationToken,
) -> Result<Summary, CompactionError> {
    let mut instructions = BRANCH_SUMMARY_PROMPT.to_string();
    if let Some(focus) = options
        .custom_instructions
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        instructions.push_str(&format!("\n\n{FOCUS_INTRO}{focus}"));
    }
    let transcript = serialize_conversation(&convert_to_llm(messages));
    let request = summary_request(&transcript, None, &instructions);
    let call = SummaryCall {
        model,
        stream_fn,
        options,
        cancel,
    };
    call.run(
        request,
        output_budget(reserve_tokens, 80, model),
        reasoning(model, options, ThinkingLevel::High),
        SummaryPart::Branch,
    )
    .await
}

/// Summarizes the beginning of a turn that the cut split, for the kept end of that turn.
pub async fn generate_turn_prefix_summary(
    messages: &[AgentMessage],
    model: &Model,
    stream_fn: &StreamFn,
    reserve_tokens: u64,
    options: &CompactionOptions,
    cancel: &CancellationToken,
) -> Result<Summary, CompactionError> {
    let transcript = serialize_conversation(&convert_to_llm(messages));
    let request = summary_request(&transcript, None, TURN_PREFIX_PROMPT);
    let call = SummaryCall {
        model,
        stream_fn,
        options,
        cancel,
    };
    call.run(
        request,
        output_budget(reserve_tokens, 50, model),
        reasoning(model, options, ThinkingLevel::Off),
        SummaryPart::TurnPrefix,
    )
    .await
}

/// The reasoning level to request: none for a model that cannot reason; otherwise the level
/// the options ask for, or `default`.
fn reasoning(model: &Model, options: &CompactionOptions, default: ThinkingLevel) -> ThinkingLevel {
    if model.reasoning {
        options.thinking_level.unwrap_or(default)
    } else {
        ThinkingLevel::Off
    }
}

/// `percent`% of `reserve_tokens`, floored, capped at the model's output limit.
fn output_budget(reserve_tokens: u64, percent: u64, model: &Model) -> u64 {
    let budget = reserve_tokens.saturating_mul(percent) / 100;
    if model.max_tokens > 0 {
        budget.min(model.max_tokens)
    } else {
        budget
    }
}

struct SummaryCall<'a> {
    model: &'a Model,
    stream_fn: &'a StreamFn,
    options: &'a CompactionOptions,
    cancel: &'a CancellationToken,
}

impl SummaryCall<'_> {
    /// One model call; the answer's text blocks joined with newlines.
    async fn run(
        &self,
        request: String,
        max_tokens: u64,
        reasoning: ThinkingLevel,
        part: SummaryPart,
    ) -> Result<Summary, CompactionError> {
        if self.cancel.is_cancelled() {
            return Err(CompactionError::Aborted);
        }
        let context = Context {
            system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.to_string()),
            messages: vec![Message::User(UserMessage::text(request))],
            tools: Vec::new(),
        };
        let stream_options = StreamOptions {
            api_key: self.options.api_key.clone(),
            max_tokens: Some(max_tokens),
            reasoning,
            cancel: self.cancel.clone(),
            headers: self.options.headers.clone(),
            session_id: self.options.session_id.clone(),
            proxy: self.options.proxy.clone(),
            idle_timeout: self
                .options
                .idle_timeout
                .unwrap_or(tandem_ai::DEFAULT_IDLE_TIMEOUT),
            ..StreamOptions::default()
        };
        let stream = (self.stream_fn)(self.model, &context, stream_options);
        // A well-behaved stream ends with `aborted` when cancelled; do not wait for one that
        // does not.
        let answer = tokio::select! {
            answer = stream.result() => answer,
            _ = self.cancel.cancelled() => return Err(CompactionError::Aborted),
        };
        let model_name = format!("{}/{}", self.model.provider, self.model.id);
        match answer.stop_reason {
            StopReason::Aborted => return Err(CompactionError::Aborted),
            StopReason::Error => {
                return Err(CompactionError::Summary {
                    part,
                    model: model_name,
                    message: answer
                        .error_message
                        .filter(|m| !m.is_empty())
                        .unwrap_or_else(|| "Unknown error".to_string()),
                })
            }
            StopReason::Stop | StopReason::Length | StopReason::ToolUse => {}
        }
        let text = answer
            .content
            .iter()
            .filter_map(|block| match block {
                AssistantBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        if text.trim().is_empty() {
            return Err(CompactionError::EmptySummary {
                part,
                model: model_name,
            });
        }
        Ok(Summary {
            text,
            usage: answer.usage,
        })
    }
}
