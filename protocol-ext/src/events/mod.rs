//! The `tandem/event` notification: everything a session does, streamed as small deltas.
//!
//! Why one notification with a tagged payload rather than a method per event: a client registers
//! one handler, unknown event types degrade to [`Event::Unknown`] instead of "method not found"
//! noise, and a single per-session sequence number orders everything.
//!
//! Why deltas: pi's JSON and RPC modes resend the whole partial message on every token, which is
//! quadratic (a 100 KB answer in 20k chunks became gigabytes on the wire). Here text, thinking
//! and tool-argument streaming carry only the new text, and the complete message goes once, in
//! `message_end`. The server may coalesce several provider chunks into one delta (it flushes on
//! a short timer or a size threshold), so bytes and client work stay proportional to the text.
//! Concatenating the deltas of one block in order always gives that block's text.

mod parts;
mod seq;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{SessionId, ToolCallId};
use crate::methods::{self, Notification};

pub use parts::{CompactionReason, Role, ToolKind, ToolLocation};
pub use seq::{SeqCheck, SeqTracker, Sequencer};

/// The params of a `tandem/event` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventNotification {
    /// The session the event belongs to.
    pub session: SessionId,
    /// Per-session sequence number: 1 for the session's first notification, then +1 for each.
    /// A jump means notifications were missed; see [`SeqTracker`].
    pub seq: u64,
    /// What happened.
    pub event: Event,
}

impl Notification for EventNotification {
    const METHOD: &'static str = methods::EVENT;
}

/// One thing a session did. Serialized with a snake_case `type` tag and camelCase fields.
///
/// A run looks like: `agent_start`, then per turn `turn_start`, the assistant message
/// (`message_start`, deltas, `toolcall_*`, `message_end`), each tool call (`tool_start`,
/// `tool_update`*, `tool_end`, then its result message's `message_start` / `message_end`),
/// `turn_end`; then `agent_end`, any retries or compactions, and finally `settled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// A run began (a prompt was accepted while the session was idle).
    AgentStart,
    /// The run's loop ended (retries and compactions may still follow; `settled` is last).
    AgentEnd,
    /// A turn began: one model call and the tool calls it makes.
    TurnStart,
    /// The turn ended (its tool results have been delivered).
    TurnEnd,
    /// A message began: a prompt, a steering or follow-up message, the assistant's answer as it
    /// starts streaming, or a tool result.
    MessageStart {
        /// Who it is from.
        role: Role,
        /// Its zero-based number among the messages this server has streamed for the session;
        /// the matching `message_end` repeats it.
        index: u64,
        /// For user messages, their text (the other roles' content arrives as deltas or in
        /// `message_end`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// For a user message sent with editor context: the context the model read just before
        /// it (not part of `text`, nor of `message_end`'s message).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
    /// More text of the streaming assistant message.
    TextDelta {
        /// The content block the text belongs to (a message can hold several text blocks,
        /// separated by tool calls).
        content_index: u32,
        /// The new text, possibly several provider chunks coalesced.
        delta: String,
    },
    /// More reasoning text of the streaming assistant message.
    ThinkingDelta {
        /// The content block the reasoning belongs to.
        content_index: u32,
        /// The new text, possibly several provider chunks coalesced.
        delta: String,
    },
    /// The message is complete; sent exactly once per message.
    MessageEnd {
        /// The `index` of its `message_start`.
        index: u64,
        /// The complete message in pi's JSON shape (`role`, `content`, and per role `usage`,
        /// `stopReason`, `toolCallId`, ...).
        message: Value,
    },
    /// The model started writing a tool call.
    ToolcallStart {
        /// The call's id.
        tool_call_id: ToolCallId,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's raw argument JSON (concatenate to get the arguments text).
    ToolcallDelta {
        /// The call's id.
        tool_call_id: ToolCallId,
        /// The new JSON text, possibly several provider chunks coalesced.
        delta: String,
    },
    /// The model finished writing a tool call.
    ToolcallEnd {
        /// The call's id.
        tool_call_id: ToolCallId,
        /// The parsed arguments.
        arguments: Value,
    },
    /// A tool call started running.
    ToolStart {
        /// The call's id.
        tool_call_id: ToolCallId,
        /// The tool's name (`read`, `edit`, `bash`, ...).
        name: String,
        /// A human title: "Read src/main.rs", "Run `cargo test`".
        title: String,
        /// What it does.
        kind: ToolKind,
        /// Files it touches.
        #[serde(default)]
        locations: Vec<ToolLocation>,
    },
    /// A running tool's partial output (e.g. a command's output so far).
    ToolUpdate {
        /// The call's id.
        tool_call_id: ToolCallId,
        /// The partial output so far; it replaces the previous update's text. It is a bounded
        /// tail (the tools' truncation limits), not a growing log.
        text: String,
    },
    /// A tool call finished.
    ToolEnd {
        /// The call's id.
        tool_call_id: ToolCallId,
        /// True when it failed, including a rejected edit; `text` says why.
        is_error: bool,
        /// The result's text as the model sees it, possibly shortened for display.
        text: String,
        /// True when `text` was shortened for display (the model saw the whole result).
        #[serde(default, skip_serializing_if = "is_false")]
        truncated: bool,
        /// For `edit` and `write`: the proposed change as a unified diff.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        /// The tool's structured details (pi's `details`), when it has any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// A transient failure; the request will be retried after a delay.
    RetryStart {
        /// 1-based attempt about to run.
        attempt: u32,
        /// Attempts allowed.
        max_attempts: u32,
        /// Wait before the attempt, in milliseconds.
        delay_ms: u64,
        /// The failure being retried.
        error_message: String,
    },
    /// Retrying ended.
    RetryEnd {
        /// True when an attempt succeeded.
        success: bool,
        /// The last attempt made.
        attempt: u32,
        /// The final failure, when none succeeded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
    /// A compaction started.
    CompactionStart {
        /// Why.
        reason: CompactionReason,
    },
    /// A compaction ended.
    CompactionEnd {
        /// True when it was cancelled.
        aborted: bool,
        /// True when the interrupted run continues afterwards (overflow recovery).
        will_retry: bool,
        /// The new summary, when it succeeded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// Context tokens before compacting, when it succeeded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens_before: Option<u64>,
        /// Why it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    /// The steering or follow-up queue changed; both lists are sent whole (they are short).
    QueueUpdate {
        /// Steering messages waiting, oldest first.
        steering: Vec<String>,
        /// Follow-up messages waiting, oldest first.
        follow_up: Vec<String>,
    },
    /// Everything finished: the run, its retries and compactions. The session is idle.
    Settled,
    /// A run failed (after any retries); the session stays usable.
    Error {
        /// What failed and what to do, e.g. naming the missing API key's variable.
        message: String,
    },
    /// An event type this version of the protocol does not know (never sent by this version).
    #[serde(other)]
    Unknown,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Event {
    /// The `type` tag as written on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::AgentStart => "agent_start",
            Event::AgentEnd => "agent_end",
            Event::TurnStart => "turn_start",
            Event::TurnEnd => "turn_end",
            Event::MessageStart { .. } => "message_start",
            Event::TextDelta { .. } => "text_delta",
            Event::ThinkingDelta { .. } => "thinking_delta",
            Event::MessageEnd { .. } => "message_end",
            Event::ToolcallStart { .. } => "toolcall_start",
            Event::ToolcallDelta { .. } => "toolcall_delta",
            Event::ToolcallEnd { .. } => "toolcall_end",
            Event::ToolStart { .. } => "tool_start",
            Event::ToolUpdate { .. } => "tool_update",
            Event::ToolEnd { .. } => "tool_end",
            Event::RetryStart { .. } => "retry_start",
            Event::RetryEnd { .. } => "retry_end",
            Event::CompactionStart { .. } => "compaction_start",
            Event::CompactionEnd { .. } => "compaction_end",
            Event::QueueUpdate { .. } => "queue_update",
            Event::Settled => "settled",
            Event::Error { .. } => "error",
            Event::Unknown => "unknown",
        }
    }

    /// True for the delta events a server may coalesce (`text_delta`, `thinking_delta`,
    /// `toolcall_delta`).
    pub fn is_delta(&self) -> bool {
        matches!(
            self,
            Event::TextDelta { .. } | Event::ThinkingDelta { .. } | Event::ToolcallDelta { .. }
        )
    }

    /// Appends `next` to this delta when the two may be coalesced: both the same delta type for
    /// the same block (`contentIndex`) or call (`toolCallId`). Returns `next` unchanged
    /// otherwise, for the caller to send after this one.
    ///
    /// This is the only merging the protocol allows, so that concatenating the deltas of one
    /// block in order gives its text whether or not the server coalesced.
    pub fn try_coalesce(&mut self, next: Event) -> Option<Event> {
        match (self, next) {
            (
                Event::TextDelta {
                    content_index: a,
                    delta,
                },
                Event::TextDelta {
                    content_index: b,
                    delta: more,
                },
            )
            | (
                Event::ThinkingDelta {
                    content_index: a,
                    delta,
                },
                Event::ThinkingDelta {
                    content_index: b,
                    delta: more,
                },
            ) if *a == b => {
                delta.push_str(&more);
                None
            }
            (
                Event::ToolcallDelta {
                    tool_call_id: a,
                    delta,
                },
                Event::ToolcallDelta {
                    tool_call_id: b,
                    delta: more,
                },
            ) if *a == b => {
                delta.push_str(&more);
                None
            }
            (_, next) => Some(next),
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
