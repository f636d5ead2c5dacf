//! The ten agent events, with pi's names and fields.
//!
//! One difference from pi, on purpose: `message_update` carries only the provider event (a delta
//! or a finished block), not the whole partial message again. Subscribers that want the partial
//! rebuild it with [`tandem_ai::PartialMessage`] in linear time; the [`crate::Agent`] keeps it in
//! its state.

use serde::Serialize;
use serde_json::Value;
use tandem_ai::{AssistantMessage, AssistantMessageEvent, ToolResultMessage};

use crate::message::AgentMessage;
use crate::tool::ToolOutput;

/// One event of an agent run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AgentEvent {
    /// A run began.
    AgentStart,
    /// The run ended; `messages` are the ones it added.
    AgentEnd {
        /// Messages added by this run, in order.
        messages: Vec<AgentMessage>,
    },
    /// A turn (one model call and its tool calls) began.
    TurnStart,
    /// The turn ended.
    TurnEnd {
        /// The assistant message of the turn.
        #[serde(serialize_with = "as_assistant_message")]
        message: AssistantMessage,
        /// Results of its tool calls, in source order.
        #[serde(serialize_with = "as_tool_result_messages")]
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message began (prompts, steering, tool results, and each assistant message as it starts
    /// streaming).
    MessageStart {
        /// The message (for an assistant message: its empty start).
        message: AgentMessage,
    },
    /// The streaming assistant message changed.
    MessageUpdate {
        /// What changed.
        assistant_message_event: AssistantMessageEvent,
    },
    /// A message is complete.
    MessageEnd {
        /// The complete message.
        message: AgentMessage,
    },
    /// A tool call began.
    ToolExecutionStart {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// Arguments as the model sent them.
        args: Value,
    },
    /// A tool reported a partial result.
    ToolExecutionUpdate {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// Arguments as the model sent them.
        args: Value,
        /// The partial result.
        partial_result: ToolOutput,
    },
    /// A tool call finished.
    ToolExecutionEnd {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The result.
        result: ToolOutput,
        /// True when it failed.
        is_error: bool,
        /// How long the tool's `execute` took, in milliseconds (pi 1.6's `durationMs`); absent
        /// when the tool did not run (unknown tool, invalid arguments, blocked, skipped).
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
}

/// Writes the message with its `role`, as pi does.
fn as_assistant_message<S: serde::Serializer>(
    m: &AssistantMessage,
    s: S,
) -> Result<S::Ok, S::Error> {
    tandem_ai::Message::Assistant(m.clone()).serialize(s)
}

/// Writes each result with its `role`, as pi does.
fn as_tool_result_messages<S: serde::Serializer>(
    results: &[ToolResultMessage],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(results.len()))?;
    for r in results {
        seq.serialize_element(&tandem_ai::Message::ToolResult(r.clone()))?;
    }
    seq.end()
}

impl AgentEvent {
    /// The event's type name as pi writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }
}

/// Where the loop sends its events. Events are awaited one at a time, so a sink sees them in
/// order and a slow sink slows the loop (back-pressure) rather than reordering or dropping.
pub trait EventSink: Send + Sync {
    /// Delivers one event.
    fn emit(&self, event: AgentEvent) -> crate::tool::BoxFuture<'_, ()>;
}

impl EventSink for tokio::sync::mpsc::Sender<AgentEvent> {
    fn emit(&self, event: AgentEvent) -> crate::tool::BoxFuture<'_, ()> {
        Box::pin(async move {
            let _ = self.send(event).await;
        })
    }
}

impl EventSink for tokio::sync::mpsc::UnboundedSender<AgentEvent> {
    fn emit(&self, event: AgentEvent) -> crate::tool::BoxFuture<'_, ()> {
        let _ = self.send(event);
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_use_pi_names() {
        let e = AgentEvent::ToolExecutionEnd {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            result: ToolOutput::text("hello"),
            is_error: false,
            duration_ms: Some(3),
        };
        assert_eq!(
            serde_json::to_value(&e).expect("serializes"),
            json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "read",
                   "result": {"content": [{"type": "text", "text": "hello"}]}, "isError": false,
                   "durationMs": 3})
        );
        assert_eq!(
            serde_json::to_value(AgentEvent::TurnStart).expect("ok"),
            json!({"type": "turn_start"})
        );
    }
}
