//! Which files the summarized history read and changed.
//!
//! A summary loses the exact tool calls, so the files they touched are listed after it: paths
//! given to `read` are read files, paths given to `write` or `edit` are modified files, and a
//! file both read and modified counts as modified. Lists carry over from the previous compaction
//! (its `details`), so a chain of compactions keeps every file the session touched.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tandem_agent::AgentMessage;

/// Paths seen in tool calls, by operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOperations {
    /// Paths given to `read`.
    pub read: BTreeSet<String>,
    /// Paths given to `write`.
    pub written: BTreeSet<String>,
    /// Paths given to `edit` (and modified files carried over from a previous compaction).
    pub edited: BTreeSet<String>,
}

/// The file lists a compaction stores in its entry's `details`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionDetails {
    /// Files only read, sorted.
    pub read_files: Vec<String>,
    /// Files written or edited, sorted.
    pub modified_files: Vec<String>,
}

impl CompactionDetails {
    /// The `details` value for the compaction entry.
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "readFiles": self.read_files,
            "modifiedFiles": self.modified_files,
        })
    }
}

impl FileOperations {
    /// Adds the paths of the `read`, `write` and `edit` calls of an assistant message; other
    /// messages, other tools and calls without a string `path` add nothing.
    pub fn add_message(&mut self, message: &AgentMessage) {
        let Some(assistant) = message.as_assistant() else {
            return;
        };
        for call in assistant.tool_calls() {
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_string());
        }
    }

    /// Carries over a previous compaction's `details`: its read files as read, its modified files
    /// as edited. Anything not shaped like [`CompactionDetails`] is ignored piece by piece.
    pub fn add_previous_details(&mut self, details: &Value) {
        let strings = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }

    /// The final lists: modified = written ∪ edited; read = read minus modified; both sorted.
    pub fn file_lists(&self) -> CompactionDetails {
        let modified: BTreeSet<&String> = self.edited.iter().chain(&self.written).collect();
        CompactionDetails {
            read_files: self
                .read
                .iter()
                .filter(|f| !modified.contains(f))
                .cloned()
                .collect(),
            modified_files: modified.into_iter().cloned().collect(),
        }
    }
}

/// The lists as they are appended to a summary (pi's format): a blank line, then
/// `<read-files>` and `<modified-files>` sections with one path per line, each only when
/// non-empty; nothing at all when both are empty.
pub fn format_file_operations(details: &CompactionDetails) -> String {
    let mut sections = Vec::new();
    if !details.read_files.is_empty() {
        sections.push(format!(
            "<read-files>\n{}\n</read-files>",
            details.read_files.join("\n")
        ));
    }
    if !details.modified_files.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            details.modified_files.join("\n")
        ));
    }
    if sections.is_empty() {
        String::new()
    } else {
        format!("\n\n{}", sections.join("\n\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tandem_ai::{Api, AssistantBlock, AssistantMessage, ToolCall};

    fn calls(calls: &[(&str, Value)]) -> AgentMessage {
        let mut m = AssistantMessage::empty(Api::Scripted, "p", "m");
        for (i, (name, args)) in calls.iter().enumerate() {
            m.content.push(AssistantBlock::ToolCall(ToolCall {
                id: format!("c{i}"),
                name: name.to_string(),
                arguments: args.clone(),
                thought_signature: None,
            }));
        }
        m.into()
    }

    #[test]
    fn tool_calls_sort_into_read_and_modified() {
        let mut ops = FileOperations::default();
        ops.add_message(&calls(&[
            ("read", json!({"path": "b.rs"})),
            ("read", json!({"path": "a.rs"})),
            ("read", json!({"path": "w.rs"})),
            ("write", json!({"path": "w.rs", "content": ""})),
            ("edit", json!({"path": "e.rs", "edits": []})),
            ("bash", json!({"command": "cat x.rs"})),
            ("grep", json!({"pattern": "x", "path": "src"})),
            ("read", json!({"path": 3})),
        ]));
        let lists = ops.file_lists();
        assert_eq!(lists.read_files, ["a.rs", "b.rs"]);
        assert_eq!(lists.modified_files, ["e.rs", "w.rs"]);
        assert_eq!(
            format_file_operations(&lists),
            "\n\n<read-files>\na.rs\nb.rs\n</read-files>\n\n<modified-files>\ne.rs\nw.rs\n</modified-files>"
        );
    }

    #[test]
    fn previous_details_merge_and_reads_become_modified() {
        let mut ops = FileOperations::default();
        ops.add_previous_details(&json!({"readFiles": ["old.rs", "later-edited.rs", 7],
            "modifiedFiles": ["changed.rs"]}));
        ops.add_message(&calls(&[("edit", json!({"path": "later-edited.rs"}))]));
        assert_eq!(
            ops.file_lists(),
            CompactionDetails {
                read_files: vec!["old.rs".into()],
                modified_files: vec!["changed.rs".into(), "later-edited.rs".into()],
            }
        );
        assert_eq!(
            ops.file_lists().to_value(),
            json!({"readFiles": ["old.rs"], "modifiedFiles": ["changed.rs", "later-edited.rs"]})
        );
    }

    #[test]
    fn empty_lists_format_to_nothing() {
        assert_eq!(format_file_operations(&CompactionDetails::default()), "");
        let only_modified = CompactionDetails {
            read_files: vec![],
            modified_files: vec!["x".into()],
        };
        assert_eq!(
            format_file_operations(&only_modified),
            "\n\n<modified-files>\nx\n</modified-files>"
        );
    }
}
