//! Builders for compaction tests: messages and session paths with predictable ids.

use serde_json::{json, Value};
use tandem_agent::AgentMessage;
use tandem_ai::{
    Api, AssistantBlock, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserMessage,
};

use crate::messages::{BashExecutionMessage, CodingMessage};
use crate::session::entry::{EntryKind, SessionEntry};

pub fn user(text: &str) -> AgentMessage {
    UserMessage::text(text).into()
}

/// An assistant answer with `text`; `usage` is (input, output) with the total filled in.
pub fn assistant(text: &str, usage: Option<(u64, u64)>) -> AgentMessage {
    let mut m = AssistantMessage::empty(Api::Scripted, "scripted", "test");
    m.content.push(AssistantBlock::Text(TextContent {
        text: text.into(),
        text_signature: None,
    }));
    if let Some((input, output)) = usage {
        m.usage = Usage {
            input,
            output,
            reasoning: None,
            total_tokens: input + output,
            ..Usage::default()
        };
    }
    m.into()
}

/// An assistant message calling tools `(name, arguments)`.
pub fn calls(calls: &[(&str, Value)]) -> AgentMessage {
    let mut m = AssistantMessage::empty(Api::Scripted, "scripted", "test");
    m.stop_reason = StopReason::ToolUse;
    for (i, (name, arguments)) in calls.iter().enumerate() {
        m.content.push(AssistantBlock::ToolCall(ToolCall {
            id: format!("call{i}"),
            name: name.to_string(),
            arguments: arguments.clone(),
            thought_signature: None,
        }));
    }
    m.into()
}

pub fn read_call(path: &str) -> AgentMessage {
    calls(&[("read", json!({ "path": path }))])
}

pub fn tool_result(text: &str) -> AgentMessage {
    ToolResultMessage::text("call0", "read", text, false).into()
}

pub fn bash_run(command: &str, output: &str) -> AgentMessage {
    CodingMessage::BashExecution(BashExecutionMessage {
        command: command.into(),
        output: output.into(),
        exit_code: Some(0),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp: 0,
        exclude_from_context: None,
    })
    .into_agent_message()
}

/// A session path under construction; entry ids are `e0`, `e1`, …
#[derive(Default)]
pub struct Path {
    pub entries: Vec<SessionEntry>,
}

impl Path {
    pub fn push(&mut self, kind: EntryKind) -> String {
        let id = format!("e{}", self.entries.len());
        let parent_id = self.entries.last().map(|e| e.id.clone());
        self.entries.push(SessionEntry {
            kind,
            id: id.clone(),
            parent_id,
            timestamp: "2026-01-01T00:00:00.000Z".into(),
        });
        id
    }

    pub fn msg(&mut self, message: AgentMessage) -> String {
        self.push(EntryKind::Message { message })
    }

    pub fn compaction(
        &mut self,
        summary: &str,
        first_kept: &str,
        details: Option<Value>,
    ) -> String {
        self.push(EntryKind::Compaction {
            summary: summary.into(),
            first_kept_entry_id: first_kept.into(),
            tokens_before: 10_000,
            details,
            usage: None,
            from_hook: None,
            system_message: None,
        })
    }

    pub fn model_change(&mut self) -> String {
        self.push(EntryKind::ModelChange {
            provider: "scripted".into(),
            model_id: "other".into(),
        })
    }
}

/// The text of user and assistant messages, for asserting which messages were picked.
pub fn texts(messages: &[AgentMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            AgentMessage::Llm(tandem_ai::Message::User(u)) => u.content.text(),
            AgentMessage::Llm(tandem_ai::Message::Assistant(a)) => a.text(),
            other => format!("<{}>", other.role()),
        })
        .collect()
}
