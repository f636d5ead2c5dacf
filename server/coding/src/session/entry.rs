//! The lines of a session file: pi's JSONL format, version 3.
//!
//! The first line is a [`SessionHeader`]; every other line is a [`SessionEntry`] with an 8-hex
//! `id`, the `parentId` it was appended under (`null` for the first), an ISO-8601 `timestamp`,
//! and a `type`. Field names and order follow pi so files interoperate both ways: pi builds each
//! entry as an object literal and `JSON.stringify` keeps that order, which is `type, id,
//! parentId, timestamp, <fields>` for most kinds but `type, <fields>, id, parentId, timestamp`
//! for `custom` and `custom_message`; [`SessionEntry`]'s `Serialize` reproduces both, and omits
//! absent optional fields as `JSON.stringify` omits `undefined`. Reading is in `wire.rs`.
//! Entry types Tandem does not know are kept verbatim ([`EntryKind::Unknown`]) rather than
//! dropped.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde::Deserialize;
use serde_json::{Map, Value};
use tandem_agent::AgentMessage;
use tandem_ai::{Usage, UserContent};

/// The session format version Tandem writes.
pub const CURRENT_VERSION: u32 = 3;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// Always `"session"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Format version (absent in v1 files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// Session id (a UUID).
    pub id: String,
    /// Creation time, ISO 8601.
    #[serde(default)]
    pub timestamp: String,
    /// The working directory the session belongs to (empty in some old files).
    #[serde(default)]
    pub cwd: String,
    /// The session file this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

impl SessionHeader {
    /// A current-version header.
    pub fn new(
        id: impl Into<String>,
        timestamp: impl Into<String>,
        cwd: impl Into<String>,
        parent_session: Option<String>,
    ) -> SessionHeader {
        SessionHeader {
            kind: "session".to_string(),
            version: Some(CURRENT_VERSION),
            id: id.into(),
            timestamp: timestamp.into(),
            cwd: cwd.into(),
            parent_session,
        }
    }

    /// The format version, 1 when the field is absent (pi's rule).
    pub fn format_version(&self) -> u32 {
        self.version.unwrap_or(1)
    }
}

/// One entry: its place in the tree plus what it records.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntry {
    /// What it records (serialized as `type` plus the type's fields).
    pub kind: EntryKind,
    /// 8 hex characters, unique within the file.
    pub id: String,
    /// The entry this one was appended under; `None` for a root.
    pub parent_id: Option<String>,
    /// When it was written, ISO 8601 with milliseconds (`2026-11-30T07:13:25.984Z`).
    pub timestamp: String,
}

/// The kinds of entries.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    /// A message of the conversation (any role, custom roles included).
    Message {
        /// The message.
        message: AgentMessage,
    },
    /// The thinking level changed.
    ThinkingLevelChange {
        /// The new level (`off`, `minimal`, …).
        thinking_level: String,
    },
    /// The model changed.
    ModelChange {
        /// Provider name.
        provider: String,
        /// Model id.
        model_id: String,
    },
    /// Older history was summarized.
    Compaction {
        /// The summary.
        summary: String,
        /// The first entry kept verbatim after the summary.
        first_kept_entry_id: String,
        /// Context tokens before compacting.
        tokens_before: u64,
        /// Extra data (e.g. read and modified files).
        details: Option<Value>,
        /// Usage of the model call that wrote the summary (counted in the session's totals).
        usage: Option<Value>,
        /// Written by an extension hook rather than the built-in compaction.
        from_hook: Option<bool>,
        /// pi 1.6: the prompt and tools in force at the compaction, as one `system` message
        /// (kept as written); it leads the compacted context.
        system_message: Option<Value>,
    },
    /// A summary of the branch left when moving elsewhere in the tree.
    BranchSummary {
        /// The leaf of the branch that was left (`"root"` when branching before the first entry).
        from_id: String,
        /// The summary.
        summary: String,
        /// Extra data.
        details: Option<Value>,
        /// Usage of the model call that wrote the summary.
        usage: Option<Value>,
        /// Written by an extension hook.
        from_hook: Option<bool>,
    },
    /// pi 1.6: an edit of what an earlier entry contributes to the model's context (the entry
    /// itself stays as it was). The latest edit of a target on the path wins.
    ContextEdit {
        /// The edited entry (a user, assistant, tool-result or custom message).
        target_id: String,
        /// `None` (`null`): the target is left out of the context; otherwise the target's
        /// new content.
        replacement: Option<ContextReplacement>,
    },
    /// pi 1.6: model usage outside the conversation (e.g. cache warming); not in the context.
    Usage {
        /// What the usage was for (any string; `cache_warm` for cache warming).
        kind: String,
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// The usage object, as written.
        usage: Value,
        /// A note, when one was written.
        note: Option<Value>,
    },
    /// Extension data that is not part of the conversation.
    Custom {
        /// Extension-defined type.
        custom_type: String,
        /// Its data.
        data: Option<Value>,
    },
    /// An extension message that is part of the conversation.
    CustomMessage {
        /// Extension-defined type.
        custom_type: String,
        /// Content for the model.
        content: UserContent,
        /// Extra data.
        details: Option<Value>,
        /// Shown in the UI.
        display: bool,
    },
    /// A user label on an entry (`None` or an empty label removes it).
    Label {
        /// The labelled entry.
        target_id: String,
        /// The label.
        label: Option<String>,
    },
    /// Session metadata.
    SessionInfo {
        /// The session's name.
        name: Option<String>,
    },
    /// A line of a type Tandem does not know (or a known type in a shape it cannot read): kept
    /// whole, and written back exactly as read.
    Unknown(UnknownEntry),
}

/// The new content a `context_edit` gives its target: a string, or an array of content blocks
/// (kept as written and read for the target's role when the context is built).
#[derive(Debug, Clone, PartialEq)]
pub struct ContextReplacement {
    /// The `content` value: a JSON string or array.
    pub content: Value,
}

/// A line that is an entry of a type Tandem does not know: kept whole.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownEntry {
    /// The entry's JSON object, every field included (`type`, `id`, `parentId`, `timestamp`
    /// too); this, not the [`SessionEntry`] fields, is what gets serialized.
    pub fields: Map<String, Value>,
}

impl EntryKind {
    /// The `type` written for this kind.
    pub fn type_name(&self) -> &str {
        match self {
            EntryKind::Message { .. } => "message",
            EntryKind::ThinkingLevelChange { .. } => "thinking_level_change",
            EntryKind::ModelChange { .. } => "model_change",
            EntryKind::Compaction { .. } => "compaction",
            EntryKind::BranchSummary { .. } => "branch_summary",
            EntryKind::ContextEdit { .. } => "context_edit",
            EntryKind::Usage { .. } => "usage",
            EntryKind::Custom { .. } => "custom",
            EntryKind::CustomMessage { .. } => "custom_message",
            EntryKind::Label { .. } => "label",
            EntryKind::SessionInfo { .. } => "session_info",
            EntryKind::Unknown(u) => u.fields.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

impl SessionEntry {
    /// The message, for a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            EntryKind::Message { message } => Some(message),
            _ => None,
        }
    }

    /// True for a `message` entry holding an assistant message: the entry whose arrival makes a
    /// new session file worth writing.
    pub fn is_assistant_message(&self) -> bool {
        self.message().is_some_and(|m| m.role() == "assistant")
    }

    /// The model usage this entry adds to the session's token and cost totals (pi 1.6): an
    /// assistant message's, the summary call of a compaction or branch summary, a `usage`
    /// entry's (whatever its `kind`). A usage object that does not read as one counts nothing.
    pub fn recorded_usage(&self) -> Option<Usage> {
        let written = match &self.kind {
            EntryKind::Message { message } => return message.as_assistant().map(|a| a.usage),
            EntryKind::Compaction { usage, .. } | EntryKind::BranchSummary { usage, .. } => {
                usage.as_ref()?
            }
            EntryKind::Usage { usage, .. } => usage,
            _ => return None,
        };
        Usage::deserialize(written).ok()
    }
}

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let EntryKind::Unknown(unknown) = &self.kind {
            return unknown.fields.serialize(s);
        }
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", self.kind.type_name())?;
        let fields_first = matches!(
            self.kind,
            EntryKind::Custom { .. } | EntryKind::CustomMessage { .. }
        );
        if fields_first {
            write_kind_fields(&mut map, &self.kind)?;
        }
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("parentId", &self.parent_id)?;
        map.serialize_entry("timestamp", &self.timestamp)?;
        if !fields_first {
            write_kind_fields(&mut map, &self.kind)?;
        }
        map.end()
    }
}

/// Writes `key` only when the value is present, as `JSON.stringify` skips `undefined`.
fn optional<M: SerializeMap, T: Serialize>(
    map: &mut M,
    key: &str,
    value: &Option<T>,
) -> Result<(), M::Error> {
    match value {
        Some(v) => map.serialize_entry(key, v),
        None => Ok(()),
    }
}

/// The kind's own fields, in the order pi builds them.
fn write_kind_fields<M: SerializeMap>(map: &mut M, kind: &EntryKind) -> Result<(), M::Error> {
    match kind {
        EntryKind::Message { message } => map.serialize_entry("message", message),
        EntryKind::ThinkingLevelChange { thinking_level } => {
            map.serialize_entry("thinkingLevel", thinking_level)
        }
        EntryKind::ModelChange { provider, model_id } => {
            map.serialize_entry("provider", provider)?;
            map.serialize_entry("modelId", model_id)
        }
        EntryKind::Compaction {
            summary,
            first_kept_entry_id,
            tokens_before,
            details,
            usage,
            from_hook,
            system_message,
        } => {
            map.serialize_entry("summary", summary)?;
            map.serialize_entry("firstKeptEntryId", first_kept_entry_id)?;
            map.serialize_entry("tokensBefore", tokens_before)?;
            optional(map, "details", details)?;
            optional(map, "usage", usage)?;
            optional(map, "fromHook", from_hook)?;
            optional(map, "systemMessage", system_message)
        }
        EntryKind::BranchSummary {
            from_id,
            summary,
            details,
            usage,
            from_hook,
        } => {
            map.serialize_entry("fromId", from_id)?;
            map.serialize_entry("summary", summary)?;
            optional(map, "details", details)?;
            optional(map, "usage", usage)?;
            optional(map, "fromHook", from_hook)
        }
        EntryKind::ContextEdit {
            target_id,
            replacement,
        } => {
            map.serialize_entry("targetId", target_id)?;
            match replacement {
                None => map.serialize_entry("replacement", &Value::Null),
                Some(r) => {
                    let mut object = Map::new();
                    object.insert("content".into(), r.content.clone());
                    map.serialize_entry("replacement", &object)
                }
            }
        }
        EntryKind::Usage {
            kind,
            provider,
            model,
            usage,
            note,
        } => {
            map.serialize_entry("kind", kind)?;
            map.serialize_entry("provider", provider)?;
            map.serialize_entry("model", model)?;
            map.serialize_entry("usage", usage)?;
            optional(map, "note", note)
        }
        EntryKind::Custom { custom_type, data } => {
            map.serialize_entry("customType", custom_type)?;
            optional(map, "data", data)
        }
        EntryKind::CustomMessage {
            custom_type,
            content,
            details,
            display,
        } => {
            map.serialize_entry("customType", custom_type)?;
            map.serialize_entry("content", content)?;
            map.serialize_entry("display", display)?;
            optional(map, "details", details)
        }
        EntryKind::Label { target_id, label } => {
            map.serialize_entry("targetId", target_id)?;
            optional(map, "label", label)
        }
        EntryKind::SessionInfo { name } => optional(map, "name", name),
        EntryKind::Unknown(_) => Ok(()),
    }
}
