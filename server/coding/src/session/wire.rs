//! Reading entry lines: the fast typed path and the verbatim fallback.
//!
//! A resumed session may hold a hundred thousand lines, so loading must not build a
//! `serde_json::Value` per line and then convert it (serde's `flatten` and internally tagged
//! enums both buffer like that). Instead each line is read once into `WireEntry`, a private
//! struct with every field of every kind optional, and the `type` decides which fields must be
//! there. Messages are read by `WireMessage`, which relies on pi writing `role` first: it reads
//! that key and hands the rest of the object straight to the role's struct.
//!
//! Anything the typed path cannot take — an unknown `type`, a known type with missing or oddly
//! typed fields — is read again as a plain JSON object and kept whole as
//! [`EntryKind::Unknown`], so it is carried along rather than lost.

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use tandem_agent::{AgentMessage, CustomMessage};
use tandem_ai::{AssistantMessage, Message, ToolResultMessage, UserContent, UserMessage};

use super::entry::{ContextReplacement, EntryKind, SessionEntry, UnknownEntry};

/// Why a line is not an entry at all (it is then skipped).
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// Not JSON: a torn write or garbage.
    #[error("not valid JSON ({0})")]
    Json(#[from] serde_json::Error),
    /// JSON, but not an object.
    #[error("not a JSON object")]
    NotAnObject,
    /// An object without a string `id`, so it cannot sit in the tree.
    #[error("entry has no string \"id\"")]
    NoId,
}

/// The `type`s pi defines; anything else is an extension's or a newer pi's.
pub fn is_known_type(name: &str) -> bool {
    matches!(
        name,
        "message"
            | "thinking_level_change"
            | "model_change"
            | "compaction"
            | "branch_summary"
            | "custom"
            | "custom_message"
            | "label"
            | "session_info"
            | "context_edit"
            | "usage"
    )
}

/// Parses one entry line (no newline). Unknown or unreadable entries come back as
/// [`EntryKind::Unknown`]; only lines that are not JSON objects with an `id` are errors.
pub fn parse_entry_line(line: &str) -> Result<SessionEntry, LineError> {
    if let Ok(wire) = serde_json::from_str::<WireEntry>(line) {
        if let Some(entry) = wire.into_known() {
            return Ok(entry);
        }
    }
    let value: Value = serde_json::from_str(line)?;
    match value {
        Value::Object(fields) => unknown_entry(fields),
        _ => Err(LineError::NotAnObject),
    }
}

/// An entry from a JSON object (used for migrated lines and by `Deserialize`).
pub fn entry_from_map(fields: Map<String, Value>) -> Result<SessionEntry, LineError> {
    let known = fields
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(is_known_type);
    if known {
        let as_value = Value::Object(fields);
        if let Some(entry) = WireEntry::deserialize(&as_value)
            .ok()
            .and_then(WireEntry::into_known)
        {
            return Ok(entry);
        }
        let Value::Object(fields) = as_value else {
            return Err(LineError::NotAnObject);
        };
        return unknown_entry(fields);
    }
    unknown_entry(fields)
}

fn unknown_entry(fields: Map<String, Value>) -> Result<SessionEntry, LineError> {
    let id = fields
        .get("id")
        .and_then(Value::as_str)
        .ok_or(LineError::NoId)?
        .to_string();
    let parent_id = fields
        .get("parentId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let timestamp = fields
        .get("timestamp")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok(SessionEntry {
        kind: EntryKind::Unknown(UnknownEntry { fields }),
        id,
        parent_id,
        timestamp,
    })
}

impl<'de> Deserialize<'de> for SessionEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = Map::<String, Value>::deserialize(d)?;
        entry_from_map(fields).map_err(de::Error::custom)
    }
}

/// Keeps an explicit `null` as `Some(Value::Null)` (absent stays `None` via `default`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Every field of every entry kind, all optional.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireEntry {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    #[serde(default)]
    parent_id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    message: Option<WireMessage>,
    thinking_level: Option<String>,
    provider: Option<String>,
    model_id: Option<String>,
    summary: Option<String>,
    first_kept_entry_id: Option<String>,
    tokens_before: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    details: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    usage: Option<Value>,
    from_hook: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    system_message: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    replacement: Option<Value>,
    #[serde(rename = "kind")]
    usage_kind: Option<String>,
    model: Option<String>,
    #[serde(default, deserialize_with = "present")]
    note: Option<Value>,
    from_id: Option<String>,
    custom_type: Option<String>,
    #[serde(default, deserialize_with = "present")]
    data: Option<Value>,
    content: Option<UserContent>,
    display: Option<bool>,
    target_id: Option<String>,
    label: Option<String>,
    name: Option<String>,
}

impl WireEntry {
    /// The typed entry, when the type is known and its required fields are there.
    fn into_known(self) -> Option<SessionEntry> {
        let kind = match self.kind.as_str() {
            "message" => EntryKind::Message {
                message: self.message?.0,
            },
            "thinking_level_change" => EntryKind::ThinkingLevelChange {
                thinking_level: self.thinking_level?,
            },
            "model_change" => EntryKind::ModelChange {
                provider: self.provider?,
                model_id: self.model_id?,
            },
            "compaction" => EntryKind::Compaction {
                summary: self.summary?,
                // pi's v1 migration can leave it unset; nothing then matches it.
                first_kept_entry_id: self.first_kept_entry_id.unwrap_or_default(),
                tokens_before: self.tokens_before?,
                details: self.details,
                usage: self.usage,
                from_hook: self.from_hook,
                system_message: self.system_message,
            },
            "branch_summary" => EntryKind::BranchSummary {
                from_id: self.from_id?,
                summary: self.summary?,
                details: self.details,
                usage: self.usage,
                from_hook: self.from_hook,
            },
            "context_edit" => EntryKind::ContextEdit {
                target_id: self.target_id?,
                replacement: replacement(self.replacement?)?,
            },
            "usage" => EntryKind::Usage {
                kind: self.usage_kind?,
                provider: self.provider?,
                model: self.model?,
                usage: self.usage?,
                note: self.note,
            },
            "custom" => EntryKind::Custom {
                custom_type: self.custom_type?,
                data: self.data,
            },
            "custom_message" => EntryKind::CustomMessage {
                custom_type: self.custom_type?,
                content: self.content?,
                details: self.details,
                display: self.display.unwrap_or(false),
            },
            "label" => EntryKind::Label {
                target_id: self.target_id?,
                label: self.label,
            },
            "session_info" => EntryKind::SessionInfo { name: self.name },
            _ => return None,
        };
        Some(SessionEntry {
            kind,
            id: self.id?,
            parent_id: self.parent_id,
            timestamp: self.timestamp.unwrap_or_default(),
        })
    }
}

/// A `context_edit`'s `replacement`: `null`, or an object whose `content` is a string or an
/// array. Anything else is not a replacement pi would write: the entry is then kept verbatim and
/// edits nothing.
fn replacement(value: Value) -> Option<Option<ContextReplacement>> {
    match value {
        Value::Null => Some(None),
        Value::Object(mut fields) => match fields.shift_remove("content") {
            Some(content @ (Value::String(_) | Value::Array(_))) => {
                Some(Some(ContextReplacement { content }))
            }
            _ => None,
        },
        _ => None,
    }
}

/// An [`AgentMessage`] read in one pass when `role` is the first key (as pi writes it).
struct WireMessage(AgentMessage);

impl<'de> Deserialize<'de> for WireMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = WireMessage;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireMessage, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Err(de::Error::custom("message has no \"role\""));
        };
        if first != "role" {
            // Unusual order: gather the object and let AgentMessage sort it out.
            let mut fields = Map::new();
            fields.insert(first, map.next_value()?);
            while let Some((k, v)) = map.next_entry::<String, Value>()? {
                fields.insert(k, v);
            }
            return AgentMessage::deserialize(Value::Object(fields))
                .map(WireMessage)
                .map_err(de::Error::custom);
        }
        let role: String = map.next_value()?;
        let rest = MapAccessDeserializer::new(map);
        let message = match role.as_str() {
            "user" => Message::User(UserMessage::deserialize(rest)?).into(),
            "assistant" => Message::Assistant(AssistantMessage::deserialize(rest)?).into(),
            "toolResult" => Message::ToolResult(ToolResultMessage::deserialize(rest)?).into(),
            _ => {
                let mut fields = Map::new();
                fields.insert("role".to_string(), Value::String(role.clone()));
                let rest = Map::<String, Value>::deserialize(rest)?;
                fields.extend(rest);
                AgentMessage::Custom(CustomMessage::new(role, fields))
            }
        };
        Ok(WireMessage(message))
    }
}
