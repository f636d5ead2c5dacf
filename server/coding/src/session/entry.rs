//! The lines of a session file: pi's JSONL format, version 3.
//!
//! The first line is a [`SessionHeader`]; every other line is a [`SessionEntry`] with an 8-hex
//! `id`, the `parentId` it was appended under (`null` for the first), an ISO-8601 `timestamp`,
//! and a `type`. Field names and order follow pi so files interoperate both ways. Entry types
//! Tandem does not know are kept verbatim ([`EntryKind::Unknown`]) rather than dropped.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tandem_agent::AgentMessage;
use tandem_ai::UserContent;

/// The session format version Tandem writes.
pub const CURRENT_VERSION: u32 = 3;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub timestamp: String,
    /// The working directory the session belongs to.
    pub cwd: String,
    /// The session file this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

/// One entry: its place in the tree plus what it records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntry {
    /// What it records (serialized as `type` plus the type's fields).
    #[serde(flatten)]
    pub kind: EntryKind,
    /// 8 hex characters, unique within the file.
    pub id: String,
    /// The entry this one was appended under; `None` for a root.
    pub parent_id: Option<String>,
    /// When it was written, ISO 8601 with milliseconds (`2026-11-30T07:13:25.984Z`).
    pub timestamp: String,
}

/// The kinds of entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Written by an extension hook rather than the built-in compaction.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// A summary of the branch left when moving elsewhere in the tree.
    BranchSummary {
        /// The leaf of the branch that was left.
        from_id: String,
        /// The summary.
        summary: String,
        /// Extra data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Written by an extension hook.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// Extension data that is not part of the conversation.
    Custom {
        /// Extension-defined type.
        custom_type: String,
        /// Its data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// An extension message that is part of the conversation.
    CustomMessage {
        /// Extension-defined type.
        custom_type: String,
        /// Content for the model.
        content: UserContent,
        /// Extra data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Shown in the UI.
        display: bool,
    },
    /// A user label on an entry (`None` removes it).
    Label {
        /// The labelled entry.
        target_id: String,
        /// The label.
        label: Option<String>,
    },
    /// Session metadata.
    SessionInfo {
        /// The session's name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

/// A line that is an entry of a type Tandem does not know: kept whole.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownEntry {
    /// The entry's JSON object.
    pub fields: Map<String, Value>,
}
