//! From a session's [`AgentSessionEvent`]s to `tandem/event` notifications.
//!
//! [`LspEvents`] is this front door's translator for the host's event pump
//! ([`crate::host::pump`]), which batches the deltas (text, thinking, tool arguments: merged
//! with [`Event::try_coalesce`]) and keeps the session's order; [`EventTransport`] numbers each
//! session's stream with a [`Sequencer`] and sends it.
//!
//! The mapping itself ([`Mapper::map`]) is a pure function of the events so far, tested without
//! a client. It also remembers how the run is going: when the last assistant message ended in
//! an error (after retries), an `error` event goes out just before `settled`, so a client learns
//! that the run failed for good without inspecting every `message_end`. Failures the core does
//! not report as events (a prompt that could not start) come from the host's turn runner and
//! become `error` (and `settled`) the same way ([`Translate::failed`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use serde_json::Value;
use tandem_agent::{AgentEvent, AgentMessage, BoxFuture};
use tandem_ai::{AssistantMessageEvent, Message, UserBlock};
use tandem_coding::agent_session::{
    AgentSessionEvent, CompactionReason as CoreCompactionReason, SessionEvent,
};
use tandem_coding::calls::CallRecords;
use tandem_coding::messages::{is_hidden, prompt_context};
use tandem_coding::{describe_tool_call, ToolKind as CoreKind};
use tandem_protocol::events::{
    CompactionReason, Event, EventNotification, Role, Sequencer, ToolKind, ToolLocation,
};
use tandem_protocol::requests::QueueState;
use tandem_protocol::{SessionId, ToolCallId};

use crate::host::pump::{Failure, Translate, Transport};

/// Where numbered notifications go (the LSP client in the server, a channel in tests).
pub trait EventSink: Send + Sync + 'static {
    /// Sends one notification.
    fn send(&self, notification: EventNotification) -> BoxFuture<'_, ()>;

    /// Whether the client receives the events (it opted in): such a client shows request
    /// errors itself, so the server need not repeat them with `window/showMessage`.
    fn delivers(&self) -> bool {
        true
    }

    /// Waits until the notifications sent so far are ahead of any answer in the output (see
    /// [`Transport::written`]).
    fn written(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// Translates core events into protocol events; keeps what the translation needs to remember
/// (which tool call a `toolcall_delta`'s content index belongs to, message numbers).
#[derive(Debug, Default)]
pub struct Mapper {
    cwd: PathBuf,
    tool_ids: HashMap<usize, String>,
    messages: u64,
    /// What each call did (the session's records): an edit's or write's change.
    records: Arc<CallRecords>,
    /// Why the run failed, when its last assistant message (or its retries) ended in an error.
    failure: Option<String>,
    /// The hidden context just sent to the model, for the user message it goes with.
    context: Option<String>,
}

impl Mapper {
    /// A mapper resolving tool paths against `cwd`, reading what calls did from `records`.
    pub fn new(cwd: PathBuf, records: Arc<CallRecords>) -> Self {
        Mapper {
            cwd,
            records,
            ..Mapper::default()
        }
    }

    /// The protocol events for one core event (zero, one or more). Messages for the model only
    /// (a prompt's editor context) are not shown, so they get no events.
    pub fn map(&mut self, event: &AgentSessionEvent) -> Vec<Event> {
        match event {
            AgentSessionEvent::Agent(e) => {
                if let AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } =
                    e.as_ref()
                {
                    if is_hidden(message) {
                        // Shown with the user message it goes with, as its `context`.
                        if let Some(context) = prompt_context(message) {
                            self.context = Some(context);
                        }
                        return Vec::new();
                    }
                }
                let mut out = map_agent(e, &self.cwd);
                // Edits and writes carry the unified diff of what they proposed, applied or not.
                if let AgentEvent::ToolExecutionEnd { tool_call_id, .. } = e.as_ref() {
                    let change = self.records.take(tool_call_id).and_then(|r| r.change);
                    if let Some(change) = change {
                        for ev in &mut out {
                            if let Event::ToolEnd { diff: slot, .. } = ev {
                                *slot = Some(change.diff.clone());
                            }
                        }
                    }
                }
                for ev in &mut out {
                    match ev {
                        Event::MessageStart {
                            index,
                            role,
                            context,
                            ..
                        } => {
                            self.messages += 1;
                            *index = self.messages - 1;
                            if *role == Role::User {
                                *context = self.context.take();
                            }
                        }
                        Event::MessageEnd { index, .. } => *index = self.messages.saturating_sub(1),
                        _ => {}
                    }
                }
                if let AgentEvent::MessageUpdate {
                    assistant_message_event: update,
                } = e.as_ref()
                {
                    match update {
                        AssistantMessageEvent::ToolcallStart {
                            content_index, id, ..
                        } => {
                            self.tool_ids.insert(*content_index, id.clone());
                        }
                        AssistantMessageEvent::ToolcallDelta {
                            content_index,
                            delta,
                        } => {
                            if let Some(id) = self.tool_ids.get(content_index) {
                                out.push(Event::ToolcallDelta {
                                    tool_call_id: ToolCallId::from(id.as_str()),
                                    delta: delta.clone(),
                                });
                            }
                        }
                        AssistantMessageEvent::Start { .. } => self.tool_ids.clear(),
                        _ => {}
                    }
                }
                for ev in &out {
                    if let Event::MessageEnd { message, .. } = ev {
                        self.note_message(message);
                    }
                }
                out
            }
            AgentSessionEvent::Session(e) => {
                match e {
                    SessionEvent::AutoRetryEnd {
                        success: false,
                        final_error: Some(m),
                        ..
                    } => self.failure = Some(m.clone()),
                    SessionEvent::AgentSettled { .. } => {
                        if let Some(message) = self.failure.take() {
                            return vec![Event::Error { message }, Event::Settled];
                        }
                    }
                    _ => {}
                }
                map_session(e)
            }
        }
    }

    /// Records whether a finished assistant message failed (`stopReason: "error"`).
    fn note_message(&mut self, message: &Value) {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            return;
        }
        self.failure =
            (message.get("stopReason").and_then(Value::as_str) == Some("error")).then(|| {
                message
                    .get("errorMessage")
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .unwrap_or("the model call failed")
                    .to_string()
            });
    }
}

fn map_agent(event: &AgentEvent, cwd: &Path) -> Vec<Event> {
    let one = |e| vec![e];
    match event {
        AgentEvent::AgentStart => one(Event::AgentStart),
        AgentEvent::AgentEnd { .. } => one(Event::AgentEnd),
        AgentEvent::TurnStart => one(Event::TurnStart),
        AgentEvent::TurnEnd { .. } => one(Event::TurnEnd),
        AgentEvent::MessageStart { message } => {
            let value = serde_json::to_value(message).unwrap_or(Value::Null);
            let role = role(message);
            let text = (role != Role::Assistant).then(|| message_text(&value));
            one(Event::MessageStart {
                role,
                index: 0,
                text: text.filter(|t| !t.is_empty()),
                context: None,
            })
        }
        AgentEvent::MessageUpdate {
            assistant_message_event,
        } => map_update(assistant_message_event),
        AgentEvent::MessageEnd { message } => one(Event::MessageEnd {
            index: 0,
            message: serde_json::to_value(message).unwrap_or(Value::Null),
        }),
        AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        } => {
            let info = describe_tool_call(tool_name, args, cwd);
            one(Event::ToolStart {
                tool_call_id: ToolCallId::from(tool_call_id.as_str()),
                name: tool_name.clone(),
                title: info.title,
                kind: kind(info.kind),
                locations: info
                    .locations
                    .iter()
                    .map(|l| ToolLocation {
                        uri: crate::uri::string_from_path(&l.path),
                        line: l.line.and_then(|n| u32::try_from(n).ok()),
                    })
                    .collect(),
            })
        }
        AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            partial_result,
            ..
        } => one(Event::ToolUpdate {
            tool_call_id: ToolCallId::from(tool_call_id.as_str()),
            text: blocks_text(&partial_result.content),
        }),
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            result,
            is_error,
            ..
        } => {
            let details = result.details.clone();
            let diff = details
                .as_ref()
                .and_then(|d| d.get("diff"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let truncated = details
                .as_ref()
                .and_then(|d| d.get("truncation"))
                .is_some_and(|t| !t.is_null());
            one(Event::ToolEnd {
                tool_call_id: ToolCallId::from(tool_call_id.as_str()),
                is_error: *is_error,
                text: blocks_text(&result.content),
                truncated,
                diff,
                details,
            })
        }
    }
}

fn map_update(event: &AssistantMessageEvent) -> Vec<Event> {
    let index = |i: &usize| u32::try_from(*i).unwrap_or(u32::MAX);
    match event {
        AssistantMessageEvent::TextDelta {
            content_index,
            delta,
        } => vec![Event::TextDelta {
            content_index: index(content_index),
            delta: delta.clone(),
        }],
        AssistantMessageEvent::ThinkingDelta {
            content_index,
            delta,
        } => vec![Event::ThinkingDelta {
            content_index: index(content_index),
            delta: delta.clone(),
        }],
        AssistantMessageEvent::ToolcallStart { id, name, .. } => vec![Event::ToolcallStart {
            tool_call_id: ToolCallId::from(id.as_str()),
            name: name.clone(),
        }],
        AssistantMessageEvent::ToolcallDelta { .. } => Vec::new(),
        AssistantMessageEvent::ToolcallEnd { tool_call, .. } => vec![Event::ToolcallEnd {
            tool_call_id: ToolCallId::from(tool_call.id.as_str()),
            arguments: serde_json::to_value(&tool_call.arguments).unwrap_or(Value::Null),
        }],
        _ => Vec::new(),
    }
}

fn map_session(event: &SessionEvent) -> Vec<Event> {
    vec![match event {
        // The editor's own commands change these; it hears their answers.
        SessionEvent::SessionInfoChanged { .. } | SessionEvent::ThinkingLevelChanged { .. } => {
            return Vec::new()
        }
        SessionEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            error_message,
        } => Event::RetryStart {
            attempt: *attempt,
            max_attempts: *max_attempts,
            delay_ms: *delay_ms,
            error_message: error_message.clone(),
        },
        SessionEvent::AutoRetryEnd {
            success,
            attempt,
            final_error,
        } => Event::RetryEnd {
            success: *success,
            attempt: *attempt,
            final_error: final_error.clone(),
        },
        SessionEvent::CompactionStart { reason } => Event::CompactionStart {
            reason: compaction_reason(*reason),
        },
        SessionEvent::CompactionEnd {
            reason: _,
            result,
            aborted,
            will_retry,
            error_message,
        } => Event::CompactionEnd {
            aborted: *aborted,
            will_retry: *will_retry,
            summary: result.as_ref().map(|r| r.summary.clone()),
            tokens_before: result.as_ref().map(|r| r.tokens_before),
            error_message: error_message.clone(),
        },
        SessionEvent::QueueUpdate {
            steering,
            follow_up,
        } => Event::QueueUpdate {
            steering: steering.clone(),
            follow_up: follow_up.clone(),
        },
        // A prompt an extension handled ends as a run does: the client stops waiting.
        SessionEvent::AgentSettled { .. } | SessionEvent::PromptHandled => Event::Settled,
    }]
}

/// The protocol's tool kind for the core's (exhaustive: a new core kind must be mapped here).
fn kind(kind: CoreKind) -> ToolKind {
    match kind {
        CoreKind::Read => ToolKind::Read,
        CoreKind::Edit => ToolKind::Edit,
        CoreKind::Delete => ToolKind::Delete,
        CoreKind::Move => ToolKind::Move,
        CoreKind::Search => ToolKind::Search,
        CoreKind::Execute => ToolKind::Execute,
        CoreKind::Think => ToolKind::Think,
        CoreKind::Fetch => ToolKind::Fetch,
        CoreKind::Other => ToolKind::Other,
    }
}

/// The protocol's compaction reason for the core's (exhaustive).
fn compaction_reason(reason: CoreCompactionReason) -> CompactionReason {
    match reason {
        CoreCompactionReason::Threshold => CompactionReason::Threshold,
        CoreCompactionReason::Overflow => CompactionReason::Overflow,
        CoreCompactionReason::Manual => CompactionReason::Manual,
    }
}

/// The protocol's role of a message (exhaustive over the core's messages and the coding roles).
fn role(message: &AgentMessage) -> Role {
    match message {
        AgentMessage::Llm(Message::User(_)) => Role::User,
        AgentMessage::Llm(Message::Assistant(_)) => Role::Assistant,
        AgentMessage::Llm(Message::ToolResult(_)) => Role::ToolResult,
        AgentMessage::Custom(custom) => match custom.role() {
            "bashExecution" => Role::BashExecution,
            "custom" => Role::Custom,
            "branchSummary" => Role::BranchSummary,
            "compactionSummary" => Role::CompactionSummary,
            _ => Role::Other,
        },
    }
}

fn blocks_text(blocks: &[UserBlock]) -> String {
    let value = serde_json::to_value(blocks).unwrap_or(Value::Null);
    message_text(&serde_json::json!({ "content": value }))
}

/// The text blocks of a serialized message (`content` a string or a list of blocks).
fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The language server's translator: protocol events for a session's events, recording each
/// queue update for `tandem/state`.
pub struct LspEvents {
    mapper: Mapper,
    queue: Arc<Mutex<QueueState>>,
}

impl LspEvents {
    /// A translator for a session working in `cwd` whose calls record what they did in
    /// `records`, its queue state going to `queue`.
    pub fn new(cwd: PathBuf, records: Arc<CallRecords>, queue: Arc<Mutex<QueueState>>) -> Self {
        LspEvents {
            mapper: Mapper::new(cwd, records),
            queue,
        }
    }
}

impl Translate for LspEvents {
    type Out = Event;

    fn translate(&mut self, event: &AgentSessionEvent) -> Vec<Event> {
        let out = self.mapper.map(event);
        for e in &out {
            if let Event::QueueUpdate {
                steering,
                follow_up,
            } = e
            {
                let mut q = lock(&self.queue);
                q.steering = steering.clone();
                q.follow_up = follow_up.clone();
            }
        }
        out
    }

    fn failed(&mut self, failure: &Failure) -> Vec<Event> {
        let mut out = vec![Event::Error {
            message: failure.message.clone(),
        }];
        if failure.settles {
            out.push(Event::Settled);
        }
        out
    }

    fn delta_len(event: &Event) -> Option<usize> {
        match event {
            Event::TextDelta { delta, .. }
            | Event::ThinkingDelta { delta, .. }
            | Event::ToolcallDelta { delta, .. } => Some(delta.len()),
            _ => None,
        }
    }

    fn merge(held: &mut Event, next: Event) -> Option<Event> {
        held.try_coalesce(next)
    }
}

/// Sends a session's events to the client as numbered `tandem/event` notifications.
pub struct EventTransport {
    session: SessionId,
    seq: Sequencer,
    sink: Arc<dyn EventSink>,
}

impl EventTransport {
    /// Numbers session `session`'s events from 1 and sends them to `sink`.
    pub fn new(session: SessionId, sink: Arc<dyn EventSink>) -> Self {
        EventTransport {
            session,
            seq: Sequencer::new(),
            sink,
        }
    }
}

impl Transport<Event> for EventTransport {
    async fn send(&mut self, event: Event) {
        let notification = self.seq.wrap(&self.session, event);
        self.sink.send(notification).await;
    }

    async fn written(&mut self) {
        self.sink.written().await;
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
