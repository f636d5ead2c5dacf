//! Recording things in a session: one method per entry kind.
//!
//! Every append makes the new entry a child of the current leaf and moves the leaf to it, so
//! appending after [`SessionManager::branch`] grows a new branch. Each returns the new entry's
//! id. When the entry cannot be written (disk full, folder gone) the error is returned and the
//! session is unchanged, so memory never runs ahead of the file.

use serde_json::Value;
use tandem_agent::AgentMessage;
use tandem_ai::{ThinkingLevel, UserContent};

use super::entry::{ContextReplacement, EntryKind};
use super::error::SessionError;
use super::manager::SessionManager;
use super::system::SystemState;
use super::time::{iso_now, parse_iso};

impl SessionManager {
    /// Records a conversation message (user, assistant, tool result or a custom role such as
    /// `bashExecution`). The first assistant message of a new session creates its file.
    /// Compaction and branch summaries are not messages: use [`SessionManager::append_compaction`]
    /// and [`SessionManager::append_branch_summary`].
    pub fn append_message(
        &mut self,
        message: impl Into<AgentMessage>,
    ) -> Result<String, SessionError> {
        self.append_kind(EntryKind::Message {
            message: message.into(),
        })
    }

    /// Records a change of thinking level.
    pub fn append_thinking_level_change(
        &mut self,
        level: ThinkingLevel,
    ) -> Result<String, SessionError> {
        self.append_kind(EntryKind::ThinkingLevelChange {
            thinking_level: level.as_str().to_string(),
        })
    }

    /// Records a change of model.
    pub fn append_model_change(
        &mut self,
        provider: impl Into<String>,
        model_id: impl Into<String>,
    ) -> Result<String, SessionError> {
        self.append_kind(EntryKind::ModelChange {
            provider: provider.into(),
            model_id: model_id.into(),
        })
    }

    /// Records a compaction: `summary` replaces the history before `first_kept_entry_id` in
    /// the context from now on. `details` is kept for the UI and extensions; `from_hook` marks
    /// a summary written by an extension; `usage` is what writing the summary cost (pi 1.6
    /// counts it in the session's totals). As pi 1.6 does, the entry also records the prompt and
    /// tools in force (replayed from the context's `system` messages) as its `systemMessage`,
    /// stamped with the entry's time, when the context has any.
    pub fn append_compaction(
        &mut self,
        summary: impl Into<String>,
        first_kept_entry_id: impl Into<String>,
        tokens_before: u64,
        details: Option<Value>,
        usage: Option<Value>,
        from_hook: Option<bool>,
    ) -> Result<String, SessionError> {
        let timestamp = iso_now();
        let millis = parse_iso(&timestamp).unwrap_or_default().max(0) as u64;
        let system_message = SystemState::replay(&self.build_context().messages).checkpoint(millis);
        let parent = self.leaf().map(str::to_string);
        let kind = EntryKind::Compaction {
            summary: summary.into(),
            first_kept_entry_id: first_kept_entry_id.into(),
            tokens_before,
            details,
            usage,
            from_hook,
            system_message,
        };
        self.append_stamped(kind, parent, timestamp)
    }

    /// Records an edit of what entry `target_id` contributes to the model's context from now on
    /// (pi 1.6's `context_edit`): `None` leaves it out, `Some(content)` replaces its content (a
    /// string or an array of content blocks; a string for an assistant or tool-result message
    /// is written as one text block, as pi writes it). The target must be a user, assistant,
    /// tool-result or custom message on the current branch.
    pub fn append_context_edit(
        &mut self,
        target_id: &str,
        replacement: Option<Value>,
    ) -> Result<String, SessionError> {
        let not_editable = |why: &str| SessionError::NotEditable {
            id: target_id.to_string(),
            why: why.to_string(),
        };
        let target = self
            .entry(target_id)
            .ok_or_else(|| SessionError::EntryNotFound {
                id: target_id.to_string(),
            })?;
        let role = match &target.kind {
            EntryKind::CustomMessage { .. } => "custom",
            EntryKind::Message { message }
                if matches!(message.role(), "user" | "assistant" | "toolResult") =>
            {
                message.role()
            }
            _ => return Err(not_editable("it gives the model no editable message")),
        };
        let on_branch = self.branch_position(target_id).is_some();
        if !on_branch {
            return Err(not_editable("it is not on the current branch"));
        }
        let replacement = match replacement {
            None => None,
            Some(Value::String(text)) if role == "assistant" || role == "toolResult" => {
                Some(ContextReplacement {
                    content: serde_json::json!([{ "type": "text", "text": text }]),
                })
            }
            Some(content @ (Value::String(_) | Value::Array(_))) => {
                Some(ContextReplacement { content })
            }
            Some(_) => {
                return Err(not_editable(
                    "the replacement content must be a string or an array of content blocks",
                ))
            }
        };
        self.append_kind(EntryKind::ContextEdit {
            target_id: target_id.to_string(),
            replacement,
        })
    }

    /// Records a summary of the branch ending at `from_id` under the current leaf (see also
    /// [`SessionManager::branch_with_summary`], which moves the leaf first).
    pub fn append_branch_summary(
        &mut self,
        from_id: impl Into<String>,
        summary: impl Into<String>,
        details: Option<Value>,
        from_hook: Option<bool>,
    ) -> Result<String, SessionError> {
        self.append_kind(EntryKind::BranchSummary {
            from_id: from_id.into(),
            summary: summary.into(),
            details,
            usage: None,
            from_hook,
        })
    }

    /// Records extension data that is not part of the conversation.
    pub fn append_custom(
        &mut self,
        custom_type: impl Into<String>,
        data: Option<Value>,
    ) -> Result<String, SessionError> {
        self.append_kind(EntryKind::Custom {
            custom_type: custom_type.into(),
            data,
        })
    }

    /// Records an extension message that joins the conversation (as a `custom`-role message);
    /// `display` says whether the UI shows it.
    pub fn append_custom_message(
        &mut self,
        custom_type: impl Into<String>,
        content: UserContent,
        display: bool,
        details: Option<Value>,
    ) -> Result<String, SessionError> {
        self.append_kind(EntryKind::CustomMessage {
            custom_type: custom_type.into(),
            content,
            details,
            display,
        })
    }

    /// Sets (`Some`) or clears (`None` or empty) the label of entry `target_id`; the latest
    /// label entry for a target wins. Fails if the target is not in the session.
    pub fn append_label(
        &mut self,
        target_id: &str,
        label: Option<String>,
    ) -> Result<String, SessionError> {
        if !self.index.contains(target_id) {
            return Err(SessionError::EntryNotFound {
                id: target_id.to_string(),
            });
        }
        self.append_kind(EntryKind::Label {
            target_id: target_id.to_string(),
            label,
        })
    }

    /// Names the session (trimmed); the latest non-empty name wins.
    pub fn append_session_info(&mut self, name: &str) -> Result<String, SessionError> {
        self.append_kind(EntryKind::SessionInfo {
            name: Some(name.trim().to_string()),
        })
    }
}
