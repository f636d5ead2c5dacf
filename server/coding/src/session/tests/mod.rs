//! Tests of the session layer against real files in temp dirs: pi's reference file, the write
//! rules, damaged files, migrations, branches, forks, labels and listings.

mod context;
mod damage;
mod format;
mod index;
mod list;
mod migration;
mod pi16;
mod tree;
mod writers;
mod writes;

use std::path::{Path, PathBuf};

use serde_json::Value;
use tandem_ai::{
    Api, AssistantBlock, AssistantMessage, TextContent, ToolResultMessage, UserMessage,
};

/// pi 0.73.1's session file for the reference task.
pub(super) fn reference_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/reference/pi-0.73.1-session.jsonl")
}

/// The reference file's text.
pub(super) fn reference_text() -> String {
    std::fs::read_to_string(reference_path()).expect("reference session file")
}

/// A user message with fixed timestamp `ts`.
pub(super) fn user(text: &str, ts: i64) -> UserMessage {
    let mut m = UserMessage::text(text);
    m.timestamp = ts;
    m
}

/// An assistant text answer from `mock/mock-model` stamped `ts`.
pub(super) fn assistant(text: &str, ts: i64) -> AssistantMessage {
    let mut m = AssistantMessage::empty(Api::OpenAiCompletions, "mock", "mock-model");
    m.content.push(AssistantBlock::Text(TextContent {
        text: text.to_string(),
        text_signature: None,
    }));
    m.timestamp = ts;
    m
}

/// A tool result stamped `ts`.
pub(super) fn tool_result(text: &str, ts: i64) -> ToolResultMessage {
    let mut m = ToolResultMessage::text("call_1", "read", text, false);
    m.timestamp = ts;
    m
}

/// The file's non-empty lines.
pub(super) fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("session file")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The `role` and first text of each message, e.g. `user:hi`.
pub(super) fn roles_and_texts(messages: &[tandem_agent::AgentMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            let v = serde_json::to_value(m).expect("serializes");
            let text = match &v["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks
                    .first()
                    .and_then(|b| b["text"].as_str())
                    .unwrap_or("")
                    .to_string(),
                _ => v["summary"].as_str().unwrap_or("").to_string(),
            };
            format!("{}:{}", m.role(), text)
        })
        .collect()
}
