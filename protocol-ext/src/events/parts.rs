//! The small closed sets and records that events are made of: message roles, tool kinds, tool
//! locations, compaction reasons.
//!
//! Each closed set has a catch-all variant that unknown strings deserialize to, so a client built
//! against this version keeps parsing events from a newer server that adds a role or a kind.

use serde::{Deserialize, Serialize};

/// Who a message is from (pi's roles, including the coding agent's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    /// A prompt, steering or follow-up message from the user.
    User,
    /// The model's answer (text, thinking, tool calls).
    Assistant,
    /// A tool's result, as the model will see it.
    ToolResult,
    /// A shell command the user ran (`!cmd`), with its output.
    BashExecution,
    /// A message an extension injected.
    Custom,
    /// A summary of an abandoned branch of the session tree.
    BranchSummary,
    /// The summary that replaced compacted history.
    CompactionSummary,
    /// A role this version of the protocol does not know (never sent by this version).
    #[serde(other)]
    Other,
}

/// What a tool call does, for an icon or a grouping (ACP's set of kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// Reads files or lists folders (`read`, `ls`).
    Read,
    /// Changes files (`edit`, `write`).
    Edit,
    /// Deletes files.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches (`grep`, `find`).
    Search,
    /// Runs a command (`bash`).
    Execute,
    /// Thinks or plans without side effects.
    Think,
    /// Fetches from the network.
    Fetch,
    /// Anything else, including kinds a newer server adds.
    #[serde(other)]
    Other,
}

/// A place a tool call touches, for "jump to" links and highlighting.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolLocation {
    /// The file's URI (`file:///...`).
    pub uri: String,
    /// Zero-based line, like LSP's `Position.line`, when the call targets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionReason {
    /// The context passed the configured threshold after a successful turn.
    Threshold,
    /// The provider refused the request for its size; the run retries after compacting.
    Overflow,
    /// Requested with `tandem/compact`.
    Manual,
    /// A reason this version of the protocol does not know.
    #[serde(other)]
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roles_use_pi_names() {
        for (role, name) in [
            (Role::User, "user"),
            (Role::Assistant, "assistant"),
            (Role::ToolResult, "toolResult"),
            (Role::BashExecution, "bashExecution"),
            (Role::Custom, "custom"),
            (Role::BranchSummary, "branchSummary"),
            (Role::CompactionSummary, "compactionSummary"),
        ] {
            assert_eq!(serde_json::to_value(role).unwrap(), json!(name));
            assert_eq!(serde_json::from_value::<Role>(json!(name)).unwrap(), role);
        }
        assert_eq!(
            serde_json::from_value::<Role>(json!("system")).unwrap(),
            Role::Other
        );
    }

    #[test]
    fn kinds_are_lowercase_and_unknown_is_other() {
        for (kind, name) in [
            (ToolKind::Read, "read"),
            (ToolKind::Edit, "edit"),
            (ToolKind::Delete, "delete"),
            (ToolKind::Move, "move"),
            (ToolKind::Search, "search"),
            (ToolKind::Execute, "execute"),
            (ToolKind::Think, "think"),
            (ToolKind::Fetch, "fetch"),
            (ToolKind::Other, "other"),
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(name));
            assert_eq!(
                serde_json::from_value::<ToolKind>(json!(name)).unwrap(),
                kind
            );
        }
        assert_eq!(
            serde_json::from_value::<ToolKind>(json!("switch_mode")).unwrap(),
            ToolKind::Other
        );
    }

    #[test]
    fn location_line_is_optional() {
        let l = ToolLocation {
            uri: "file:///p/a.rs".into(),
            line: None,
        };
        assert_eq!(
            serde_json::to_value(&l).unwrap(),
            json!({"uri": "file:///p/a.rs"})
        );
        let l: ToolLocation =
            serde_json::from_value(json!({"uri": "file:///p/a.rs", "line": 9})).unwrap();
        assert_eq!(l.line, Some(9));
        let err = serde_json::from_value::<ToolLocation>(json!({"line": 9})).unwrap_err();
        assert_eq!(err.to_string(), "missing field `uri`");
    }

    #[test]
    fn compaction_reasons() {
        assert_eq!(
            serde_json::to_value(CompactionReason::Overflow).unwrap(),
            json!("overflow")
        );
        assert_eq!(
            serde_json::from_value::<CompactionReason>(json!("manual")).unwrap(),
            CompactionReason::Manual
        );
    }
}
