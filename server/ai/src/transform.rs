//! Cross-provider replay: preparing a conversation recorded with one model for another.
//!
//! A session may switch models mid-way, so history produced by Anthropic may be sent to OpenAI
//! and back. Provider-private data (signatures, redacted reasoning) is only meaningful to the
//! model that made it; tool-call ids must fit the target's id rules; failed turns are left out;
//! and every tool call needs a result before the conversation moves on.

use std::collections::{HashMap, HashSet};

use crate::model::Model;
use crate::types::{
    AssistantBlock, AssistantMessage, Message, StopReason, TextContent, ToolCall, ToolResultMessage,
};

/// The text of the synthetic result given to a tool call that never got one.
pub const NO_RESULT_TEXT: &str = "No result provided";

fn same_model(message: &AssistantMessage, model: &Model) -> bool {
    message.provider == model.provider && message.api == model.api && message.model == model.id
}

/// Prepares `messages` for `model`.
///
/// - For another model: thinking becomes plain text (empty or redacted thinking is dropped),
///   text signatures and tool-call `thoughtSignature`s are removed, tool-call ids are passed
///   through `normalize_id` (and tool results follow their call's new id).
/// - For the same model, signed or redacted thinking is kept for replay; empty unsigned thinking
///   is dropped.
/// - Assistant turns that ended in `error` or `aborted` are never replayed.
/// - A tool call left without a result when the next assistant or user message arrives gets an
///   error result saying [`NO_RESULT_TEXT`].
pub fn transform_messages(
    messages: &[Message],
    model: &Model,
    normalize_id: impl Fn(&str) -> String,
) -> Vec<Message> {
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut pending: Vec<ToolCall> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();

    for message in messages {
        match message {
            Message::Assistant(assistant) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                if matches!(
                    assistant.stop_reason,
                    StopReason::Error | StopReason::Aborted
                ) {
                    continue;
                }
                let converted = convert_assistant(assistant, model, &normalize_id, &mut id_map);
                let calls: Vec<ToolCall> = converted.tool_calls().cloned().collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                out.push(Message::Assistant(converted));
            }
            Message::ToolResult(result) => {
                let mut result = result.clone();
                if let Some(new_id) = id_map.get(&result.tool_call_id) {
                    result.tool_call_id = new_id.clone();
                }
                answered.insert(result.tool_call_id.clone());
                out.push(Message::ToolResult(result));
            }
            Message::User(_) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                out.push(message.clone());
            }
        }
    }
    out
}

fn flush_orphans(
    out: &mut Vec<Message>,
    pending: &mut Vec<ToolCall>,
    answered: &mut HashSet<String>,
) {
    for call in pending.drain(..) {
        if !answered.contains(&call.id) {
            out.push(Message::ToolResult(ToolResultMessage::text(
                call.id,
                call.name,
                NO_RESULT_TEXT,
                true,
            )));
        }
    }
    answered.clear();
}

fn convert_assistant(
    message: &AssistantMessage,
    model: &Model,
    normalize_id: &impl Fn(&str) -> String,
    id_map: &mut HashMap<String, String>,
) -> AssistantMessage {
    let same = same_model(message, model);
    let mut content = Vec::with_capacity(message.content.len());
    for block in &message.content {
        match block {
            AssistantBlock::Thinking(t) => {
                if t.redacted == Some(true) {
                    if same {
                        content.push(block.clone());
                    }
                } else if same && t.thinking_signature.is_some() {
                    content.push(block.clone());
                } else if t.thinking.trim().is_empty() {
                    // Nothing worth replaying.
                } else if same {
                    content.push(block.clone());
                } else {
                    content.push(AssistantBlock::Text(TextContent {
                        text: t.thinking.clone(),
                        text_signature: None,
                    }));
                }
            }
            AssistantBlock::Text(t) => {
                if same {
                    content.push(block.clone());
                } else {
                    content.push(AssistantBlock::Text(TextContent {
                        text: t.text.clone(),
                        text_signature: None,
                    }));
                }
            }
            AssistantBlock::ToolCall(call) => {
                let mut call = call.clone();
                if !same {
                    call.thought_signature = None;
                    let new_id = normalize_id(&call.id);
                    if new_id != call.id {
                        id_map.insert(call.id.clone(), new_id.clone());
                        call.id = new_id;
                    }
                }
                content.push(AssistantBlock::ToolCall(call));
            }
        }
    }
    AssistantMessage {
        content,
        ..message.clone()
    }
}

/// Keeps `[A-Za-z0-9_-]`, replacing anything else with `_`, and cuts to `max` characters
/// (Anthropic: 64; OpenAI completions: 40 after taking the part before `|`).
pub fn sanitize_tool_call_id(id: &str, max: usize) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Api, InputKind, ModelCost};
    use crate::types::{ThinkingContent, UserMessage};
    use serde_json::json;

    fn model(api: Api, provider: &str, id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api,
            provider: provider.into(),
            base_url: String::new(),
            reasoning: true,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 100_000,
            max_tokens: 8_000,
            headers: None,
            compat: None,
        }
    }

    fn assistant(blocks: Vec<AssistantBlock>, stop: StopReason) -> Message {
        let mut m = AssistantMessage::empty(Api::AnthropicMessages, "anthropic", "claude");
        m.content = blocks;
        m.stop_reason = stop;
        Message::Assistant(m)
    }

    fn thinking(text: &str, sig: Option<&str>) -> AssistantBlock {
        AssistantBlock::Thinking(ThinkingContent {
            thinking: text.into(),
            thinking_signature: sig.map(String::from),
            redacted: None,
        })
    }

    fn call(id: &str) -> AssistantBlock {
        AssistantBlock::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({"path": "a"}),
            thought_signature: Some("sig".into()),
        })
    }

    #[test]
    fn thinking_becomes_text_for_another_model_and_stays_for_the_same() {
        let history = vec![assistant(
            vec![thinking("plan", Some("s1")), thinking("  ", None)],
            StopReason::Stop,
        )];
        let other = transform_messages(
            &history,
            &model(Api::OpenAiCompletions, "openai", "gpt"),
            |s| s.into(),
        );
        let Message::Assistant(a) = &other[0] else {
            panic!()
        };
        assert_eq!(
            a.content,
            vec![AssistantBlock::Text(TextContent {
                text: "plan".into(),
                text_signature: None
            })]
        );

        let same = transform_messages(
            &history,
            &model(Api::AnthropicMessages, "anthropic", "claude"),
            |s| s.into(),
        );
        let Message::Assistant(a) = &same[0] else {
            panic!()
        };
        assert_eq!(a.content, vec![thinking("plan", Some("s1"))]);
    }

    #[test]
    fn ids_are_normalized_and_results_follow() {
        let history = vec![
            assistant(vec![call("call|item/1")], StopReason::ToolUse),
            Message::ToolResult(ToolResultMessage::text("call|item/1", "read", "ok", false)),
        ];
        let out = transform_messages(&history, &model(Api::AnthropicMessages, "x", "y"), |id| {
            sanitize_tool_call_id(id, 64)
        });
        let Message::Assistant(a) = &out[0] else {
            panic!()
        };
        let c = a.tool_calls().next().expect("call");
        assert_eq!(c.id, "call_item_1");
        assert_eq!(c.thought_signature, None);
        let Message::ToolResult(r) = &out[1] else {
            panic!()
        };
        assert_eq!(r.tool_call_id, "call_item_1");
    }

    #[test]
    fn failed_turns_are_dropped_and_orphans_get_error_results() {
        let history = vec![
            assistant(vec![call("a")], StopReason::ToolUse),
            Message::User(UserMessage::text("never mind")),
            assistant(
                vec![AssistantBlock::Text(TextContent::default())],
                StopReason::Error,
            ),
            assistant(
                vec![AssistantBlock::Text(TextContent::default())],
                StopReason::Aborted,
            ),
        ];
        let out = transform_messages(
            &history,
            &model(Api::AnthropicMessages, "anthropic", "claude"),
            |s| s.into(),
        );
        assert_eq!(out.len(), 3, "{out:?}");
        let Message::ToolResult(r) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!(r.tool_call_id, "a");
        assert!(r.is_error);
        assert_eq!(crate::types::join_text(&r.content), NO_RESULT_TEXT);
        assert!(matches!(out[2], Message::User(_)));
    }

    #[test]
    fn sanitize_replaces_and_truncates() {
        assert_eq!(sanitize_tool_call_id("a.b|c", 64), "a_b_c");
        assert_eq!(sanitize_tool_call_id(&"x".repeat(100), 40).len(), 40);
    }
}
