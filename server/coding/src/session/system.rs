//! `system` messages: how pi 1.6 keeps the system prompt and the tool declarations in a session.
//!
//! A session's first request records a `system`-role message holding every prompt section
//! (`sections`, by name) and every tool declaration (`toolsAdded`: name, description, parameter
//! schema). When the prompt or the tools change, a later `system` message records only the
//! change: the sections that differ (`null` removes one), `toolsAdded` for new or changed tools
//! and `toolsRemoved` (`{"name"}` only) for tools that went away or changed. Any `content` a
//! system message has is added to the base prompt. Replaying the messages in order
//! ([`SystemState::replay`]) gives the prompt and tools in force; the model is sent that prompt
//! as one leading system prompt ([`SystemState::text`]), since the providers Tandem speaks to
//! are given no mid-conversation system messages.
//!
//! Replaying is forgiving, because the messages come from files: a field of the wrong type is
//! skipped (the message's other fields still count), as is a tool without a string `name`, and
//! a section whose value is neither a string nor `null`. The message itself stays in the
//! session as it was written.

use serde_json::{Map, Value};
use tandem_agent::{AgentMessage, CustomMessage};
use tandem_ai::Tool;

use crate::resources::system_prompt::join_parts;
use crate::resources::SystemPrompt;

/// The role of a system message.
pub const SYSTEM_ROLE: &str = "system";

/// The prompt and tools in force after replaying a conversation's system messages.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SystemState {
    /// The non-empty `content` texts, in order.
    content: Vec<String>,
    /// Sections by name, in the order a JavaScript `Map` would hold them (a name keeps its place
    /// when set again, and goes to the end when removed and set again).
    sections: Vec<(String, String)>,
    /// Tool declarations by name, ordered the same way.
    tools: Vec<(String, Value)>,
    /// Every tool name a replayed message added or removed, in first-seen order.
    mentioned: Vec<String>,
    /// The first system message's `timestamp`, once one was seen.
    timestamp: Option<Value>,
}

/// True for a `system`-role message.
pub fn is_system_message(message: &AgentMessage) -> bool {
    message.role() == SYSTEM_ROLE
}

impl SystemState {
    /// Replays every system message of `messages`, in order; other messages are passed over.
    pub fn replay<'a>(messages: impl IntoIterator<Item = &'a AgentMessage>) -> SystemState {
        let mut state = SystemState::default();
        for message in messages {
            if let AgentMessage::Custom(custom) = message {
                if custom.role() == SYSTEM_ROLE {
                    state.apply(custom.fields());
                }
            }
        }
        state
    }

    /// Applies one system message's fields.
    pub fn apply(&mut self, fields: &Map<String, Value>) {
        if self.timestamp.is_none() {
            self.timestamp = Some(fields.get("timestamp").cloned().unwrap_or(Value::from(0)));
        }
        let text = content_text(fields.get("content"));
        if !text.is_empty() {
            self.content.push(text);
        }
        if let Some(Value::Object(sections)) = fields.get("sections") {
            for (name, value) in sections {
                match value {
                    Value::Null => remove(&mut self.sections, name),
                    Value::String(text) => set(&mut self.sections, name, text.clone()),
                    _ => {}
                }
            }
        }
        for name in tool_names(fields.get("toolsRemoved")) {
            remove(&mut self.tools, &name);
            self.mention(&name);
        }
        if let Some(Value::Array(added)) = fields.get("toolsAdded") {
            for tool in added {
                if let Some(name) = tool.get("name").and_then(Value::as_str) {
                    set(&mut self.tools, name, tool.clone());
                    self.mention(name);
                }
            }
        }
    }

    fn mention(&mut self, name: &str) {
        if !self.mentioned.iter().any(|n| n == name) {
            self.mentioned.push(name.to_string());
        }
    }

    /// Every tool a replayed message added or removed: tools not among them were registered
    /// after the branch recorded its tools.
    pub fn mentioned_tools(&self) -> &[String] {
        &self.mentioned
    }

    /// True when no system message was replayed and no tool is declared (pi's test for "no
    /// recorded prompt").
    pub fn is_empty(&self) -> bool {
        self.timestamp.is_none() && self.tools.is_empty()
    }

    /// The prompt's text: the contents joined by blank lines, then the sections, empty parts
    /// left out (pi's `getSystemMessageText` of the replayed message).
    pub fn text(&self) -> String {
        let content = self.content.join("\n\n");
        join_parts(
            std::iter::once(content.as_str()).chain(self.sections.iter().map(|(_, t)| t.as_str())),
        )
    }

    /// The sections in force, in order.
    pub fn sections(&self) -> &[(String, String)] {
        &self.sections
    }

    /// The declared tools' names, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The whole state as one system message (pi's `getCurrentSystemMessage`), stamped
    /// `timestamp`: what a compaction records as its checkpoint. `None` when [`Self::is_empty`].
    pub fn checkpoint(&self, timestamp: u64) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        let mut fields = Map::new();
        fields.insert("role".into(), Value::from(SYSTEM_ROLE));
        fields.insert("content".into(), Value::from(self.content.join("\n\n")));
        if !self.sections.is_empty() {
            fields.insert("sections".into(), sections_object(&self.sections));
        }
        if !self.tools.is_empty() {
            let tools = self.tools.iter().map(|(_, t)| t.clone()).collect();
            fields.insert("toolsAdded".into(), Value::Array(tools));
        }
        fields.insert("timestamp".into(), Value::from(timestamp));
        Some(Value::Object(fields))
    }

    /// The system message that brings this state to `prompt` and `tools`, stamped `timestamp`
    /// (milliseconds), or `None` when nothing differs. Its fields are in pi 1.6's order: `role`,
    /// `content` (empty), `sections` (only the changed ones; `null` for a removed one),
    /// `timestamp`, `toolsAdded`, `toolsRemoved` (each only when not empty). A tool whose
    /// declaration changed is both removed and added, as pi records it.
    pub fn update_to(
        &self,
        prompt: &SystemPrompt,
        tools: &[Tool],
        timestamp: u64,
    ) -> Option<AgentMessage> {
        let mut patch = Map::new();
        for (name, text) in prompt.sections() {
            if get(&self.sections, name).map(|t| t.as_str()) != Some(text.as_str()) {
                patch.insert(name.clone(), Value::from(text.as_str()));
            }
        }
        for (name, _) in &self.sections {
            if !prompt.sections().iter().any(|(n, _)| n == name) {
                patch.insert(name.clone(), Value::Null);
            }
        }
        let declared: Vec<(String, Value)> = tools
            .iter()
            .map(|t| (t.name.clone(), declaration(t)))
            .collect();
        let added: Vec<Value> = declared
            .iter()
            .filter(|(name, tool)| get(&self.tools, name).is_none_or(|old| !same(old, tool)))
            .map(|(_, tool)| tool.clone())
            .collect();
        let removed: Vec<Value> = self
            .tools
            .iter()
            .filter(|(name, old)| get(&declared, name).is_none_or(|new| !same(old, new)))
            .map(|(name, _)| {
                let mut reference = Map::new();
                reference.insert("name".into(), Value::from(name.as_str()));
                Value::Object(reference)
            })
            .collect();
        if patch.is_empty() && added.is_empty() && removed.is_empty() {
            return None;
        }
        let mut fields = Map::new();
        fields.insert("role".into(), Value::from(SYSTEM_ROLE));
        fields.insert("content".into(), Value::from(""));
        if !patch.is_empty() {
            fields.insert("sections".into(), Value::Object(patch));
        }
        fields.insert("timestamp".into(), Value::from(timestamp));
        if !added.is_empty() {
            fields.insert("toolsAdded".into(), Value::Array(added));
        }
        if !removed.is_empty() {
            fields.insert("toolsRemoved".into(), Value::Array(removed));
        }
        Some(AgentMessage::Custom(CustomMessage::new(
            SYSTEM_ROLE,
            fields,
        )))
    }
}

/// A tool as a system message declares it: `name`, `description`, `parameters`.
fn declaration(tool: &Tool) -> Value {
    let mut fields = Map::new();
    fields.insert("name".into(), Value::from(tool.name.as_str()));
    fields.insert("description".into(), Value::from(tool.description.as_str()));
    fields.insert("parameters".into(), tool.parameters.clone());
    Value::Object(fields)
}

/// Whether two declarations say the same to the model: compared as serialized, key order
/// included, as pi compares them. Fields other than the three declared ones are ignored.
fn same(old: &Value, new: &Value) -> bool {
    let view = |v: &Value| {
        ["name", "description", "parameters"]
            .iter()
            .map(|k| v.get(*k).map(Value::to_string).unwrap_or_default())
            .collect::<Vec<_>>()
    };
    view(old) == view(new)
}

/// A message's `content` as text: a string, or the text blocks of an array joined by newlines;
/// anything else (absent, `null`, a number) is no text.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The names of an array of `{"name": …}` references; items without a string name are skipped.
fn tool_names(list: Option<&Value>) -> Vec<String> {
    match list {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn sections_object(sections: &[(String, String)]) -> Value {
    Value::Object(
        sections
            .iter()
            .map(|(n, t)| (n.clone(), Value::from(t.as_str())))
            .collect(),
    )
}

fn get<'a, T>(list: &'a [(String, T)], name: &str) -> Option<&'a T> {
    list.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn set<T>(list: &mut Vec<(String, T)>, name: &str, value: T) {
    match list.iter_mut().find(|(n, _)| n == name) {
        Some(slot) => slot.1 = value,
        None => list.push((name.to_string(), value)),
    }
}

fn remove<T>(list: &mut Vec<(String, T)>, name: &str) {
    list.retain(|(n, _)| n != name);
}
