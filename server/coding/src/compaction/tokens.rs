//! How big the context is: the provider's count from the last answer, plus estimates.
//!
//! The provider's usage of the last successful assistant message is the best measure of the
//! context it saw; messages added since are estimated at four characters per token, rounded up,
//! which overestimates on purpose (pi's heuristic). Characters are counted as JavaScript does
//! (UTF-16 code units) so the numbers, and hence the cut points, match pi's.

use serde_json::Value;
use tandem_agent::AgentMessage;
use tandem_ai::{AssistantBlock, Message, StopReason, Usage, UserBlock, UserContent};

use super::CompactionSettings;
use crate::session::entry::{EntryKind, SessionEntry};

/// Characters an image counts for (1200 tokens).
const IMAGE_CHARS: u64 = 4_800;

/// Context size: the provider's count up to the last usage plus estimates for what followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextUsageEstimate {
    /// The total.
    pub tokens: u64,
    /// From the last assistant usage (0 without one).
    pub usage_tokens: u64,
    /// Estimated for the messages after it (all messages without one).
    pub trailing_tokens: u64,
    /// Index of the message whose usage was used.
    pub last_usage_index: Option<usize>,
}

/// The context size a usage reports: `totalTokens`, or the sum of its parts when the provider
/// left the total at 0.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens != 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

/// The usage of an assistant message that completed (aborted and failed calls report none).
fn assistant_usage(message: &AgentMessage) -> Option<&Usage> {
    let assistant = message.as_assistant()?;
    (!matches!(
        assistant.stop_reason,
        StopReason::Aborted | StopReason::Error
    ))
    .then_some(&assistant.usage)
}

/// The usage of the last completed assistant message among session entries.
pub fn last_assistant_usage(entries: &[SessionEntry]) -> Option<Usage> {
    entries.iter().rev().find_map(|entry| match &entry.kind {
        EntryKind::Message { message } => assistant_usage(message).copied(),
        _ => None,
    })
}

/// The context size of `messages`: the last completed assistant usage plus estimates for the
/// messages after it, or estimates for all of them when none has usage.
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> ContextUsageEstimate {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| assistant_usage(m).map(|u| (i, u)));
    match last {
        None => {
            let estimated = messages.iter().map(estimate_tokens).sum();
            ContextUsageEstimate {
                tokens: estimated,
                usage_tokens: 0,
                trailing_tokens: estimated,
                last_usage_index: None,
            }
        }
        Some((index, usage)) => {
            let usage_tokens = calculate_context_tokens(usage);
            let trailing_tokens = messages[index + 1..].iter().map(estimate_tokens).sum();
            ContextUsageEstimate {
                tokens: usage_tokens + trailing_tokens,
                usage_tokens,
                trailing_tokens,
                last_usage_index: Some(index),
            }
        }
    }
}

/// True when compaction is enabled and the context exceeds the window minus the reserve.
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    settings: &CompactionSettings,
) -> bool {
    settings.enabled
        && i128::from(context_tokens)
            > i128::from(context_window) - i128::from(settings.reserve_tokens)
}

/// Estimated tokens of one message: `ceil(chars / 4)` over what pi counts for its role.
///
/// - user: text (images are not counted for user messages, as in pi);
/// - assistant: text, thinking, and each tool call's name plus its JSON arguments;
/// - tool result and `custom`: text plus 4800 characters per image;
/// - `bashExecution`: command plus output;
/// - `branchSummary` / `compactionSummary`: the summary;
/// - any other role: 0.
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    let chars = match message {
        AgentMessage::Llm(Message::User(user)) => match &user.content {
            UserContent::Text(text) => js_len(text),
            UserContent::Blocks(blocks) => blocks_chars(blocks, false),
        },
        AgentMessage::Llm(Message::Assistant(assistant)) => assistant
            .content
            .iter()
            .map(|block| match block {
                AssistantBlock::Text(t) => js_len(&t.text),
                AssistantBlock::Thinking(t) => js_len(&t.thinking),
                AssistantBlock::ToolCall(call) => {
                    js_len(&call.name) + js_len(&call.arguments.to_string())
                }
            })
            .sum(),
        AgentMessage::Llm(Message::ToolResult(result)) => blocks_chars(&result.content, true),
        AgentMessage::Custom(custom) => {
            let fields = custom.fields();
            let str_len = |key: &str| fields.get(key).and_then(Value::as_str).map_or(0, js_len);
            match custom.role() {
                "custom" => match fields.get("content") {
                    Some(Value::String(text)) => js_len(text),
                    Some(Value::Array(blocks)) => blocks.iter().map(json_block_chars).sum(),
                    _ => 0,
                },
                "bashExecution" => str_len("command") + str_len("output"),
                "branchSummary" | "compactionSummary" => str_len("summary"),
                _ => 0,
            }
        }
    };
    chars.div_ceil(4)
}

fn blocks_chars(blocks: &[UserBlock], count_images: bool) -> u64 {
    blocks
        .iter()
        .map(|block| match block {
            UserBlock::Text(t) => js_len(&t.text),
            UserBlock::Image(_) if count_images => IMAGE_CHARS,
            UserBlock::Image(_) => 0,
        })
        .sum()
}

fn json_block_chars(block: &Value) -> u64 {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => block.get("text").and_then(Value::as_str).map_or(0, js_len),
        Some("image") => IMAGE_CHARS,
        _ => 0,
    }
}

/// A string's length as JavaScript counts it (UTF-16 code units).
pub(crate) fn js_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
