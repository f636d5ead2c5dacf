//! The history as plain text for the summarizing model.
//!
//! Sending the history as real messages would invite the model to continue the conversation;
//! as a labelled transcript it reads as material to summarize. Each message becomes a
//! `[User]:`, `[Assistant thinking]:`, `[Assistant]:`, `[Assistant tool calls]:` or
//! `[Tool result]:` paragraph (pi's labels), and long tool results are cut to their first
//! 2000 characters since the summary does not need whole file dumps.

use serde_json::Value;
use tandem_ai::{AssistantBlock, Message, UserBlock, UserContent};

/// Characters of a tool result kept in the transcript.
const TOOL_RESULT_MAX_CHARS: usize = 2_000;

/// The transcript of model messages (convert coding roles with
/// [`crate::messages::convert_to_llm`] first). Paragraphs are separated by blank lines; images
/// are left out.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match message {
            Message::User(user) => {
                let text = match &user.content {
                    UserContent::Text(text) => text.clone(),
                    UserContent::Blocks(blocks) => concat_text(blocks),
                };
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(assistant) => {
                let (mut texts, mut thinking, mut calls) = (Vec::new(), Vec::new(), Vec::new());
                for block in &assistant.content {
                    match block {
                        AssistantBlock::Text(t) => texts.push(t.text.as_str()),
                        AssistantBlock::Thinking(t) => thinking.push(t.thinking.as_str()),
                        AssistantBlock::ToolCall(call) => calls.push(format!(
                            "{}({})",
                            call.name,
                            format_arguments(&call.arguments)
                        )),
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !texts.is_empty() {
                    parts.push(format!("[Assistant]: {}", texts.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(result) => {
                let text = concat_text(&result.content);
                if !text.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate_for_summary(&text)));
                }
            }
        }
    }
    parts.join("\n\n")
}

/// Text blocks concatenated without a separator (as pi does for the transcript).
fn concat_text(blocks: &[UserBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect()
}

/// `key=<json>` pairs joined with `, `; arguments that are not an object are shown as JSON.
fn format_arguments(arguments: &Value) -> String {
    match arguments {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The first 2000 characters (UTF-16 units, as pi counts) and a note of how many were cut.
fn truncate_for_summary(text: &str) -> String {
    let total = text.encode_utf16().count();
    if total <= TOOL_RESULT_MAX_CHARS {
        return text.to_string();
    }
    let mut units = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        if units + c.len_utf16() > TOOL_RESULT_MAX_CHARS {
            break;
        }
        units += c.len_utf16();
        end = i + c.len_utf8();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        total - units
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tandem_ai::{
        Api, AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
        UserMessage,
    };

    #[test]
    fn transcript_labels_each_part() {
        let mut assistant = AssistantMessage::empty(Api::Scripted, "p", "m");
        assistant.content = vec![
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                ..Default::default()
            }),
            AssistantBlock::Text(TextContent {
                text: "Reading.".into(),
                text_signature: None,
            }),
            AssistantBlock::ToolCall(ToolCall {
                id: "1".into(),
                name: "read".into(),
                arguments: json!({"path": "a.rs", "limit": 5}),
                thought_signature: None,
            }),
            AssistantBlock::ToolCall(ToolCall {
                id: "2".into(),
                name: "ls".into(),
                arguments: json!({}),
                thought_signature: None,
            }),
        ];
        let text = serialize_conversation(&[
            Message::User(UserMessage::text("Fix it")),
            Message::Assistant(assistant),
            Message::ToolResult(ToolResultMessage::text("1", "read", "fn main() {}", false)),
            Message::ToolResult(ToolResultMessage::text("2", "ls", "", false)),
        ]);
        assert_eq!(
            text,
            "[User]: Fix it\n\n[Assistant thinking]: hmm\n\n[Assistant]: Reading.\n\n\
             [Assistant tool calls]: read(path=\"a.rs\", limit=5); ls()\n\n\
             [Tool result]: fn main() {}"
        );
    }

    #[test]
    fn long_tool_results_keep_their_head() {
        let long = "x".repeat(5_000);
        let text = serialize_conversation(&[Message::ToolResult(ToolResultMessage::text(
            "1", "read", long, false,
        ))]);
        assert_eq!(
            text,
            format!(
                "[Tool result]: {}\n\n[... 3000 more characters truncated]",
                "x".repeat(2_000)
            )
        );
        let short = "y".repeat(1_500);
        let text = serialize_conversation(&[Message::ToolResult(ToolResultMessage::text(
            "1",
            "read",
            short.clone(),
            false,
        ))]);
        assert_eq!(text, format!("[Tool result]: {short}"));
    }
}
