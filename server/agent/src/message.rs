//! The messages an agent keeps: the model's three roles plus any custom role a product layer adds.
//!
//! pi lets the coding layer add roles (`bashExecution`, `custom`, `branchSummary`,
//! `compactionSummary`) that live in the history but are converted (or dropped) before a model
//! call. Here those are [`CustomMessage`]s: their JSON object is kept whole, so the loop can carry
//! them without knowing their shape and they serialize back byte for byte.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use tandem_ai::{AssistantMessage, Message, ToolResultMessage, UserMessage};

/// A message of a role the model does not know; the whole JSON object, `role` included.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomMessage {
    fields: Map<String, Value>,
}

impl CustomMessage {
    /// A custom message of `role` with `fields` (any `role` key in `fields` is replaced).
    pub fn new(role: impl Into<String>, mut fields: Map<String, Value>) -> Self {
        fields.insert("role".into(), Value::String(role.into()));
        CustomMessage { fields }
    }

    /// The role.
    pub fn role(&self) -> &str {
        self.fields
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// All fields, `role` included.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }
}

/// One entry of the agent's history.
// The large variant is the common one: boxing it would cost an allocation per message.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    /// A user, assistant or tool-result message.
    Llm(Message),
    /// A product-specific message.
    Custom(CustomMessage),
}

impl AgentMessage {
    /// The role as written in JSON.
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::Llm(Message::User(_)) => "user",
            AgentMessage::Llm(Message::Assistant(_)) => "assistant",
            AgentMessage::Llm(Message::ToolResult(_)) => "toolResult",
            AgentMessage::Custom(c) => c.role(),
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            AgentMessage::Llm(Message::Assistant(a)) => Some(a),
            _ => None,
        }
    }

    /// The message as the model sees it, if it has a model role.
    pub fn as_llm(&self) -> Option<&Message> {
        match self {
            AgentMessage::Llm(m) => Some(m),
            AgentMessage::Custom(_) => None,
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        AgentMessage::Llm(m)
    }
}

impl From<UserMessage> for AgentMessage {
    fn from(m: UserMessage) -> Self {
        AgentMessage::Llm(Message::User(m))
    }
}

impl From<AssistantMessage> for AgentMessage {
    fn from(m: AssistantMessage) -> Self {
        AgentMessage::Llm(Message::Assistant(m))
    }
}

impl From<ToolResultMessage> for AgentMessage {
    fn from(m: ToolResultMessage) -> Self {
        AgentMessage::Llm(Message::ToolResult(m))
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentMessage::Llm(m) => m.serialize(s),
            AgentMessage::Custom(c) => c.fields.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = Map::<String, Value>::deserialize(d)?;
        match fields.get("role").and_then(Value::as_str) {
            Some("user" | "assistant" | "toolResult") => {
                let message = serde_json::from_value(Value::Object(fields))
                    .map_err(serde::de::Error::custom)?;
                Ok(AgentMessage::Llm(message))
            }
            Some(_) => Ok(AgentMessage::Custom(CustomMessage { fields })),
            None => Err(serde::de::Error::custom("message has no \"role\"")),
        }
    }
}

/// pi's default conversion for a model call: keep the model's roles, drop custom ones.
pub fn default_convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages
        .iter()
        .filter_map(|m| m.as_llm().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn custom_roles_round_trip_and_model_roles_parse() {
        let custom =
            json!({"role": "bashExecution", "command": "ls", "output": "a\n", "timestamp": 5});
        let m: AgentMessage = serde_json::from_value(custom.clone()).expect("parses");
        assert_eq!(m.role(), "bashExecution");
        assert_eq!(serde_json::to_value(&m).expect("serializes"), custom);

        let user: AgentMessage =
            serde_json::from_value(json!({"role": "user", "content": "hi", "timestamp": 1}))
                .expect("parses");
        assert!(matches!(user, AgentMessage::Llm(Message::User(_))));
        assert_eq!(default_convert_to_llm(&[m, user]).len(), 1);
    }
}
