//! The coding layer's own message roles and how they reach the model.
//!
//! Besides the model's three roles, pi's coding agent keeps four roles in its history:
//! `bashExecution` (a command the user ran with `!`), `custom` (a message an extension injected),
//! `branchSummary` (what happened on a branch the user left) and `compactionSummary` (what the
//! compacted history said). The agent loop carries them as opaque [`CustomMessage`]s; this module
//! gives them typed views, builds them with pi's field order (so a session line reads like pi's),
//! and turns them into user messages for a model call ([`convert_to_llm`], pi's `convertToLlm`).
//!
//! The summary wrappers are prompt text the model reads; they are written here in our own words
//! with pi's structure (an intro line, then the summary inside `<summary>` tags). They are never
//! stored, so their wording has no effect on session files.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use tandem_agent::{AgentMessage, CustomMessage};
use tandem_ai::{Message, TextContent, UserBlock, UserContent, UserMessage};

use crate::session::entry::{EntryKind, SessionEntry};
use crate::session::time::parse_iso;

/// Opens the text a compaction summary becomes for the model.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "Earlier turns of this conversation were condensed to save context. Their summary:\n\n<summary>\n";
/// Closes the text a compaction summary becomes for the model.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Opens the text a branch summary becomes for the model.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The conversation returned here from another branch of work. What happened on that branch:\n\n<summary>\n";
/// Closes the text a branch summary becomes for the model.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// A shell command the user ran directly (`!cmd`, or `!!cmd` to keep it from the model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command line.
    pub command: String,
    /// Combined stdout and stderr (possibly truncated).
    #[serde(default)]
    pub output: String,
    /// The exit code; `None` when the command did not exit normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The user cancelled the command.
    #[serde(default)]
    pub cancelled: bool,
    /// The output was truncated.
    #[serde(default)]
    pub truncated: bool,
    /// Where the full output was saved when truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Milliseconds since the epoch.
    #[serde(default, deserialize_with = "millis")]
    pub timestamp: i64,
    /// `Some(true)` keeps the command out of the model's context (`!!`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_from_context: Option<bool>,
}

/// A message an extension injected into the conversation (role `custom`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionMessage {
    /// Extension-defined type.
    pub custom_type: String,
    /// What the model sees.
    pub content: UserContent,
    /// Whether the UI shows it.
    #[serde(default)]
    pub display: bool,
    /// Extension data, never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Milliseconds since the epoch.
    #[serde(default, deserialize_with = "millis")]
    pub timestamp: i64,
}

/// The summary of a branch the conversation came back from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// The summary.
    pub summary: String,
    /// The leaf entry of the branch that was left.
    pub from_id: String,
    /// Milliseconds since the epoch.
    #[serde(default, deserialize_with = "millis")]
    pub timestamp: i64,
}

/// The summary that replaces compacted history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// The summary.
    pub summary: String,
    /// Context tokens before compacting.
    #[serde(default)]
    pub tokens_before: u64,
    /// Milliseconds since the epoch.
    #[serde(default, deserialize_with = "millis")]
    pub timestamp: i64,
}

/// One of the coding layer's roles, typed. Serializes with `role` first, then the fields in pi's
/// order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role")]
pub enum CodingMessage {
    /// `bashExecution`.
    #[serde(rename = "bashExecution")]
    BashExecution(BashExecutionMessage),
    /// `custom`.
    #[serde(rename = "custom")]
    Custom(ExtensionMessage),
    /// `branchSummary`.
    #[serde(rename = "branchSummary")]
    BranchSummary(BranchSummaryMessage),
    /// `compactionSummary`.
    #[serde(rename = "compactionSummary")]
    CompactionSummary(CompactionSummaryMessage),
}

impl CodingMessage {
    /// The typed view of a custom message; `None` for a role this layer does not define or for a
    /// message whose fields do not fit its role (logged, then treated like an unknown role).
    pub fn parse(message: &CustomMessage) -> Option<CodingMessage> {
        if !matches!(
            message.role(),
            "bashExecution" | "custom" | "branchSummary" | "compactionSummary"
        ) {
            return None;
        }
        match serde_json::from_value(Value::Object(message.fields().clone())) {
            Ok(parsed) => Some(parsed),
            Err(e) => {
                tracing::warn!(role = message.role(), "ignoring a malformed message: {e}");
                None
            }
        }
    }

    /// The history entry: an [`AgentMessage::Custom`] with `role` first and pi's field order.
    pub fn into_agent_message(self) -> AgentMessage {
        let role = match &self {
            CodingMessage::BashExecution(_) => "bashExecution",
            CodingMessage::Custom(_) => "custom",
            CodingMessage::BranchSummary(_) => "branchSummary",
            CodingMessage::CompactionSummary(_) => "compactionSummary",
        };
        // These structs hold only strings, numbers, booleans and JSON values: serializing them
        // cannot fail, but an empty object is a safe answer if it ever did.
        let fields = match serde_json::to_value(&self) {
            Ok(Value::Object(fields)) => fields,
            _ => serde_json::Map::new(),
        };
        AgentMessage::Custom(CustomMessage::new(role, fields))
    }

    /// What the model sees: a user message, or `None` when the message stays out of the
    /// context (a `!!` command).
    pub fn to_llm(&self) -> Option<Message> {
        let (content, timestamp) = match self {
            CodingMessage::BashExecution(m) => {
                if m.exclude_from_context == Some(true) {
                    return None;
                }
                (text_blocks(bash_execution_to_text(m)), m.timestamp)
            }
            CodingMessage::Custom(m) => (m.content.blocks(), m.timestamp),
            CodingMessage::BranchSummary(m) => (
                text_blocks(format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                    m.summary
                )),
                m.timestamp,
            ),
            CodingMessage::CompactionSummary(m) => (
                text_blocks(format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    m.summary
                )),
                m.timestamp,
            ),
        };
        Some(Message::User(UserMessage {
            content: UserContent::Blocks(content),
            timestamp,
        }))
    }
}

impl From<CodingMessage> for AgentMessage {
    fn from(m: CodingMessage) -> Self {
        m.into_agent_message()
    }
}

/// The history converted for a model call (pi's `convertToLlm`): model roles pass unchanged,
/// the coding roles become user messages, `!!` commands and unknown roles are dropped.
///
/// Its signature is [`tandem_agent::AgentHooks::convert_to_llm`]'s, so a hooks implementation can
/// forward to it directly.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages
        .iter()
        .filter_map(|m| match m {
            AgentMessage::Llm(m) => Some(m.clone()),
            AgentMessage::Custom(c) => CodingMessage::parse(c)?.to_llm(),
        })
        .collect()
}

/// The text a user-run command becomes for the model. The format is pi's: the command in
/// backticks, the output fenced (or `(no output)`), then a cancellation or non-zero exit note,
/// then where the full output is when it was truncated.
pub fn bash_execution_to_text(m: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", m.command);
    if m.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{}\n```", m.output));
    }
    if m.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.exit_code.filter(|&c| c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if let (true, Some(path)) = (m.truncated, &m.full_output_path) {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

/// A `branchSummary` message stamped with an entry's ISO timestamp (pi's
/// `createBranchSummaryMessage`).
pub fn branch_summary_message(summary: &str, from_id: &str, timestamp: &str) -> AgentMessage {
    CodingMessage::BranchSummary(BranchSummaryMessage {
        summary: summary.to_string(),
        from_id: from_id.to_string(),
        timestamp: entry_millis(timestamp),
    })
    .into_agent_message()
}

/// A `compactionSummary` message stamped with an entry's ISO timestamp (pi's
/// `createCompactionSummaryMessage`).
pub fn compaction_summary_message(
    summary: &str,
    tokens_before: u64,
    timestamp: &str,
) -> AgentMessage {
    CodingMessage::CompactionSummary(CompactionSummaryMessage {
        summary: summary.to_string(),
        tokens_before,
        timestamp: entry_millis(timestamp),
    })
    .into_agent_message()
}

/// The custom type of the context a front door sends with a prompt (an editor's file,
/// selection and diagnostics): the model reads it just before the prompt, the user's message
/// stays the user's own text, and a UI does not show it (`display: false`).
pub const PROMPT_CONTEXT_TYPE: &str = "tandem.promptContext";

/// Whether `message` is for the model only: an extension message with `display: false` (such
/// as a prompt's context), or a `system` message (the recorded prompt and tools). A UI leaves it
/// out.
pub fn is_hidden(message: &AgentMessage) -> bool {
    match message {
        AgentMessage::Custom(custom) if custom.role() == crate::session::system::SYSTEM_ROLE => {
            true
        }
        AgentMessage::Custom(custom) => matches!(
            CodingMessage::parse(custom),
            Some(CodingMessage::Custom(ExtensionMessage {
                display: false,
                ..
            }))
        ),
        AgentMessage::Llm(_) => false,
    }
}

/// The text of a prompt's context message ([`prompt_context_message`]); `None` for any other.
pub fn prompt_context(message: &AgentMessage) -> Option<String> {
    let AgentMessage::Custom(custom) = message else {
        return None;
    };
    match CodingMessage::parse(custom)? {
        CodingMessage::Custom(m) if m.custom_type == PROMPT_CONTEXT_TYPE => Some(m.content.text()),
        _ => None,
    }
}

/// The hidden message carrying a prompt's `context` ([`PROMPT_CONTEXT_TYPE`]), stamped now.
pub fn prompt_context_message(context: &str) -> AgentMessage {
    CodingMessage::Custom(ExtensionMessage {
        custom_type: PROMPT_CONTEXT_TYPE.to_string(),
        content: UserContent::Text(context.to_string()),
        display: false,
        details: None,
        timestamp: tandem_ai::now_millis(),
    })
    .into_agent_message()
}

/// A `custom` message stamped with an entry's ISO timestamp (pi's `createCustomMessage`).
pub fn custom_message(
    custom_type: &str,
    content: UserContent,
    display: bool,
    details: Option<Value>,
    timestamp: &str,
) -> AgentMessage {
    CodingMessage::Custom(ExtensionMessage {
        custom_type: custom_type.to_string(),
        content,
        display,
        details,
        timestamp: entry_millis(timestamp),
    })
    .into_agent_message()
}

/// The message a session entry contributes to the conversation, if any (pi's
/// `getMessageFromEntry`): a message entry's message, or a custom-message, branch-summary or
/// compaction entry as its role.
pub fn message_from_entry(entry: &SessionEntry) -> Option<AgentMessage> {
    match &entry.kind {
        EntryKind::Message { message } => Some(message.clone()),
        EntryKind::CustomMessage {
            custom_type,
            content,
            details,
            display,
        } => Some(custom_message(
            custom_type,
            content.clone(),
            *display,
            details.clone(),
            &entry.timestamp,
        )),
        EntryKind::BranchSummary {
            from_id, summary, ..
        } => Some(branch_summary_message(summary, from_id, &entry.timestamp)),
        EntryKind::Compaction {
            summary,
            tokens_before,
            ..
        } => Some(compaction_summary_message(
            summary,
            *tokens_before,
            &entry.timestamp,
        )),
        _ => None,
    }
}

/// An entry timestamp as milliseconds; 0 when it cannot be read (pi gets `NaN` there).
fn entry_millis(timestamp: &str) -> i64 {
    parse_iso(timestamp).unwrap_or(0)
}

fn text_blocks(text: String) -> Vec<UserBlock> {
    vec![UserBlock::Text(TextContent {
        text,
        text_signature: None,
    })]
}

/// Reads a JSON timestamp leniently: integer or float milliseconds; anything else is 0.
fn millis<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or(0),
        _ => 0,
    })
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
