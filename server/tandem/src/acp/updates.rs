//! The agent's events as ACP `session/update`s, and a stored history replayed as the same.
//!
//! A [`Translator`] follows one session's events:
//! - text and thinking deltas become `agent_message_chunk` / `agent_thought_chunk`;
//! - a tool call appears as `tool_call` (`pending`) when the model starts writing it, gets its
//!   title, kind, locations and raw input when the call is complete, `in_progress` when it
//!   runs (with streamed output for a local command), and `completed` / `failed` with its
//!   result: the text, the diff of an edit or write (old and new text of the call's record,
//!   [`tandem_coding::calls`], the same the language server renders), the client terminal a
//!   command ran in. A call the run never executed (the model's
//!   turn failed or was aborted) ends `failed`;
//! - an answer that keeps a markdown task list (`- [ ] …`, `- [x] …`) becomes a `plan`;
//! - every model call (an answer, a compaction's summary) ends with a `usage_update`: the
//!   context the last answer reported (`used`, the provider's token count; a compaction's
//!   estimate after it) of the model's window (`size`), and the session's total `cost` in USD
//!   (the sum pi's session stats make: every answer and summary recorded, the ones of a
//!   loaded session's file included).
//!
//! Chunks carry a `messageId`: a model answer's reply is one message and its thinking another
//! (a client that groups chunks by id must not show the reasoning inside the reply); a stored
//! message replayed is the same. Tool calls carry the tool's `name`.
//!
//! [`replay`] turns stored messages into the updates a client needs to show them again
//! (`session/load`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    Content, ContentBlock, ContentChunk, Cost, Diff, ImageContent, MessageId, Plan, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, SessionUpdate, Terminal, TextContent,
    ToolCall as AcpToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind as AcpKind, UsageUpdate,
};
use serde_json::{json, Value};
use tandem_agent::{AgentEvent, AgentMessage, ToolOutput};
use tandem_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, Message, StopReason, UserBlock,
};
use tandem_coding::agent_session::{AgentSessionEvent, SessionEvent};
use tandem_coding::calls::CallRecords;
use tandem_coding::compaction::tokens::calculate_context_tokens;
use tandem_coding::session::ids::new_session_id;
use tandem_coding::{describe_tool_call, ToolKind};

/// The tools whose calls may ask the user before they run (edits, writes and renames in the
/// `ask` mode, commands by the bash policy): their calls stay `pending` until the workspace
/// reports them `in_progress` ([`super::workspace`]).
const MAY_ASK: [&str; 4] = ["edit", "write", "bash", "rename"];

/// What the workspace knows about a call that the events do not carry.
pub trait CallExtras {
    /// The client terminal the call's command ran in, if any.
    fn terminal(&self, call_id: &str) -> Option<String>;
}

/// No extras.
#[cfg(test)]
pub struct NoExtras;

#[cfg(test)]
impl CallExtras for NoExtras {
    fn terminal(&self, _: &str) -> Option<String> {
        None
    }
}

/// The model window of an answer's model (0 when unknown).
pub type WindowOf = Box<dyn Fn(&AssistantMessage) -> u64 + Send>;

/// A session's running usage figures, for `usage_update`s.
pub struct Meter {
    /// The session's cost so far, in USD.
    pub cost: f64,
    /// The context's tokens, as last reported.
    pub used: u64,
    /// The window of the model last used.
    pub size: u64,
    /// Finds an answer's model window.
    pub window_of: WindowOf,
}

impl Meter {
    /// After an answer: its cost added (a failed one's too, as the session's totals count it);
    /// its context size taken when it completed (a failed or aborted call reports none).
    fn answered(&mut self, message: &AssistantMessage) -> SessionUpdate {
        self.cost += message.usage.cost.total;
        if !matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
            self.used = calculate_context_tokens(&message.usage);
            let window = (self.window_of)(message);
            if window > 0 {
                self.size = window;
            }
        }
        self.update()
    }

    fn update(&self) -> SessionUpdate {
        SessionUpdate::UsageUpdate(
            UsageUpdate::new(self.used, self.size).cost(Cost::new(self.cost, "USD")),
        )
    }
}

/// Follows one session's events; see the module docs.
pub struct Translator {
    cwd: PathBuf,
    /// Calls announced to the client, by id: whether they ran.
    calls: HashMap<String, bool>,
    /// Calls that may ask the user first and have not been reported `in_progress` yet.
    waiting: HashSet<String>,
    /// The last plan sent.
    plan: Vec<(String, bool)>,
    /// What each call did (the session's records).
    records: Arc<CallRecords>,
    /// The ids of the answer being streamed: its reply's and its thinking's (two messages).
    message_id: Option<String>,
    thought_id: Option<String>,
    /// Usage figures, when the session reports them.
    meter: Option<Meter>,
}

impl Translator {
    /// A translator for a session working in `cwd`, whose calls record what they did in
    /// `records`.
    pub fn new(cwd: &Path, records: Arc<CallRecords>) -> Self {
        Translator {
            cwd: cwd.to_path_buf(),
            calls: HashMap::new(),
            waiting: HashSet::new(),
            plan: Vec::new(),
            records,
            message_id: None,
            thought_id: None,
            meter: None,
        }
    }

    /// Reports usage after every model call, starting from `meter`.
    pub fn with_meter(mut self, meter: Meter) -> Self {
        self.meter = Some(meter);
        self
    }

    /// The updates for `event`.
    pub fn translate(
        &mut self,
        event: &AgentSessionEvent,
        extras: &dyn CallExtras,
    ) -> Vec<SessionUpdate> {
        let event = match event {
            AgentSessionEvent::Agent(event) => event,
            AgentSessionEvent::Session(SessionEvent::CompactionEnd {
                result: Some(result),
                ..
            }) => {
                let Some(meter) = self.meter.as_mut() else {
                    return Vec::new();
                };
                meter.cost += result.usage.cost.total;
                meter.used = result.estimated_tokens_after;
                return vec![meter.update()];
            }
            AgentSessionEvent::Session(_) => return Vec::new(),
        };
        match event.as_ref() {
            // Ids are unique within a turn; some servers reuse them in later turns.
            AgentEvent::TurnStart => {
                self.calls.clear();
                self.waiting.clear();
                Vec::new()
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
            } => self.streamed(assistant_message_event),
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                let info = describe_tool_call(tool_name, args, &self.cwd);
                let mut fields = ToolCallUpdateFields::new()
                    .title(info.title.clone())
                    .kind(kind(info.kind))
                    .locations(locations(&info))
                    .raw_input(args.clone());
                // A call that may ask the user first stays `pending` (awaiting approval, as
                // ACP defines it) until the workspace says it runs, or its output shows it.
                let may_ask = MAY_ASK.contains(&tool_name.as_str());
                if may_ask {
                    self.waiting.insert(tool_call_id.clone());
                } else {
                    fields = fields.status(ToolCallStatus::InProgress);
                }
                let first = self.announce(tool_call_id);
                self.calls.insert(tool_call_id.clone(), true);
                if first {
                    let mut call = AcpToolCall::new(tool_call_id.clone(), info.title)
                        .name(tool_name.clone())
                        .status(ToolCallStatus::Pending);
                    call.update(fields);
                    vec![SessionUpdate::ToolCall(call)]
                } else {
                    vec![update(tool_call_id, fields)]
                }
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => {
                if extras.terminal(tool_call_id).is_some() {
                    return Vec::new();
                }
                let mut fields = ToolCallUpdateFields::new().content(text_content(partial_result));
                if self.waiting.remove(tool_call_id) {
                    fields = fields.status(ToolCallStatus::InProgress);
                }
                vec![update(tool_call_id, fields)]
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
                ..
            } => {
                self.waiting.remove(tool_call_id);
                let first = self.announce(tool_call_id);
                let change = self
                    .records
                    .take(tool_call_id)
                    .and_then(|record| record.change);
                let mut content = Vec::new();
                if let Some(change) = change.as_ref().filter(|_| !is_error) {
                    content.push(ToolCallContent::Diff(
                        Diff::new(change.path.clone(), change.new_text.clone())
                            .old_text(change.old_text.clone()),
                    ));
                }
                if let Some(terminal) = extras.terminal(tool_call_id) {
                    content.push(ToolCallContent::Terminal(Terminal::new(terminal)));
                    if *is_error {
                        content.extend(text_content(result));
                    }
                } else {
                    content.extend(text_content(result));
                }
                let status = if *is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                let mut fields = ToolCallUpdateFields::new()
                    .status(status)
                    .content(content)
                    .raw_output(raw_output(result));
                // An edit knows its first changed line only once it is done.
                if let (Some(change), Some(line)) = (
                    &change,
                    result
                        .details
                        .as_ref()
                        .and_then(|d| d.get("firstChangedLine"))
                        .and_then(Value::as_u64)
                        .and_then(|l| u32::try_from(l).ok()),
                ) {
                    fields = fields
                        .locations(vec![ToolCallLocation::new(change.path.clone()).line(line)]);
                }
                if first {
                    let info = describe_tool_call(tool_name, &Value::Null, &self.cwd);
                    let mut call = AcpToolCall::new(tool_call_id.clone(), info.title)
                        .name(tool_name.clone())
                        .kind(kind(info.kind));
                    call.update(fields);
                    vec![SessionUpdate::ToolCall(call)]
                } else {
                    vec![update(tool_call_id, fields)]
                }
            }
            AgentEvent::MessageEnd {
                message: AgentMessage::Llm(Message::Assistant(message)),
            } => {
                self.message_id = None;
                self.thought_id = None;
                let mut out: Vec<SessionUpdate> = self.plan_update(message).into_iter().collect();
                if let Some(meter) = self.meter.as_mut() {
                    out.push(meter.answered(message));
                }
                out
            }
            AgentEvent::TurnEnd { message, .. } => {
                // Calls the run never executed: the turn failed or was aborted mid-call.
                let mut out = Vec::new();
                for block in &message.content {
                    let AssistantBlock::ToolCall(tc) = block else {
                        continue;
                    };
                    if self.calls.get(&tc.id) == Some(&false) {
                        self.calls.insert(tc.id.clone(), true);
                        let reason = message
                            .error_message
                            .clone()
                            .unwrap_or_else(|| "The call was not run".to_string());
                        out.push(update(
                            &tc.id,
                            ToolCallUpdateFields::new()
                                .status(ToolCallStatus::Failed)
                                .content(vec![text_block(reason)]),
                        ));
                    }
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// Records the call; true when it was not announced before.
    fn announce(&mut self, id: &str) -> bool {
        if self.calls.contains_key(id) {
            return false;
        }
        self.calls.insert(id.to_string(), false);
        true
    }

    fn streamed(&mut self, event: &AssistantMessageEvent) -> Vec<SessionUpdate> {
        match event {
            AssistantMessageEvent::TextDelta { delta, .. } if !delta.is_empty() => {
                let id = self.message_id();
                vec![SessionUpdate::AgentMessageChunk(chunk(delta, id))]
            }
            AssistantMessageEvent::ThinkingDelta { delta, .. } if !delta.is_empty() => {
                let id = self.thought_id.get_or_insert_with(new_message_id).clone();
                vec![SessionUpdate::AgentThoughtChunk(chunk(delta, id))]
            }
            AssistantMessageEvent::ToolcallStart { id, name, .. } => {
                if !self.announce(id) {
                    return Vec::new();
                }
                let info = describe_tool_call(name, &Value::Null, &self.cwd);
                vec![SessionUpdate::ToolCall(
                    AcpToolCall::new(id.clone(), info.title)
                        .name(name.clone())
                        .kind(kind(info.kind))
                        .status(ToolCallStatus::Pending),
                )]
            }
            AssistantMessageEvent::ToolcallEnd { tool_call, .. } => {
                let info = describe_tool_call(&tool_call.name, &tool_call.arguments, &self.cwd);
                let fields = ToolCallUpdateFields::new()
                    .title(info.title.clone())
                    .kind(kind(info.kind))
                    .locations(locations(&info))
                    .raw_input(tool_call.arguments.clone());
                if self.announce(&tool_call.id) {
                    let mut call = AcpToolCall::new(tool_call.id.clone(), info.title)
                        .name(tool_call.name.clone())
                        .status(ToolCallStatus::Pending);
                    call.update(fields);
                    vec![SessionUpdate::ToolCall(call)]
                } else {
                    vec![update(&tool_call.id, fields)]
                }
            }
            _ => Vec::new(),
        }
    }

    /// The id of the reply being streamed (a new one for a new answer).
    fn message_id(&mut self) -> String {
        self.message_id.get_or_insert_with(new_message_id).clone()
    }

    fn plan_update(&mut self, message: &AssistantMessage) -> Option<SessionUpdate> {
        let text: String = message
            .content
            .iter()
            .filter_map(|b| match b {
                AssistantBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let tasks = task_list(&text);
        if tasks.is_empty() || tasks == self.plan {
            return None;
        }
        self.plan = tasks.clone();
        Some(SessionUpdate::Plan(plan(&tasks)))
    }
}

/// A markdown task list's items: `(text, done)`.
pub fn task_list(text: &str) -> Vec<(String, bool)> {
    let mut tasks = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let Some(rest) = line
            .strip_prefix("- ")
            .or_else(|| line.strip_prefix("* "))
            .or_else(|| line.strip_prefix("+ "))
        else {
            continue;
        };
        let (done, item) = if let Some(item) = rest.strip_prefix("[ ] ") {
            (false, item)
        } else if let Some(item) = rest
            .strip_prefix("[x] ")
            .or_else(|| rest.strip_prefix("[X] "))
        {
            (true, item)
        } else {
            continue;
        };
        let item = item.trim();
        if !item.is_empty() {
            tasks.push((item.to_string(), done));
        }
    }
    tasks
}

/// The plan for `tasks`: done items completed, the first open one in progress, the rest
/// pending.
fn plan(tasks: &[(String, bool)]) -> Plan {
    let mut current_given = false;
    let entries = tasks
        .iter()
        .map(|(text, done)| {
            let status = if *done {
                PlanEntryStatus::Completed
            } else if !current_given {
                current_given = true;
                PlanEntryStatus::InProgress
            } else {
                PlanEntryStatus::Pending
            };
            PlanEntry::new(text.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    Plan::new(entries)
}

/// A new message id: a time-ordered UUID, unique in the session across runs.
fn new_message_id() -> String {
    new_session_id()
}

/// A message of Tandem's own (an `/undo` report, a notice) as one agent message chunk with a
/// message id of its own.
pub fn own_message(text: String) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(chunk(&text, new_message_id()))
}

fn chunk(text: &str, message_id: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
        .message_id(MessageId::from(message_id))
}

fn update(id: &str, fields: ToolCallUpdateFields) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), fields))
}

fn text_block(text: String) -> ToolCallContent {
    ToolCallContent::Content(Content::new(ContentBlock::Text(TextContent::new(text))))
}

/// A tool result's text and images as call content.
fn text_content(output: &ToolOutput) -> Vec<ToolCallContent> {
    user_blocks(&output.content)
        .into_iter()
        .map(|b| ToolCallContent::Content(Content::new(b)))
        .collect()
}

fn user_blocks(blocks: &[UserBlock]) -> Vec<ContentBlock> {
    blocks
        .iter()
        .map(|b| match b {
            UserBlock::Text(t) => ContentBlock::Text(TextContent::new(t.text.clone())),
            UserBlock::Image(i) => {
                ContentBlock::Image(ImageContent::new(i.data.clone(), i.mime_type.clone()))
            }
        })
        .collect()
}

fn raw_output(output: &ToolOutput) -> Value {
    let text: String = output
        .content
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect();
    match &output.details {
        Some(details) => json!({"output": text, "details": details}),
        None => json!({"output": text}),
    }
}

fn kind(kind: ToolKind) -> AcpKind {
    match kind {
        ToolKind::Read => AcpKind::Read,
        ToolKind::Edit => AcpKind::Edit,
        ToolKind::Delete => AcpKind::Delete,
        ToolKind::Move => AcpKind::Move,
        ToolKind::Search => AcpKind::Search,
        ToolKind::Execute => AcpKind::Execute,
        ToolKind::Think => AcpKind::Think,
        ToolKind::Fetch => AcpKind::Fetch,
        ToolKind::Other => AcpKind::Other,
    }
}

fn locations(info: &tandem_coding::ToolCallInfo) -> Vec<ToolCallLocation> {
    info.locations
        .iter()
        .map(|l| {
            ToolCallLocation::new(l.path.clone()).line(l.line.and_then(|n| u32::try_from(n).ok()))
        })
        .collect()
}

/// The updates that show `messages` again: user text and images, answers and thinking, each
/// tool call with its final status and result. Custom messages (e.g. `!command` output) are
/// left out; they have no ACP form.
pub fn replay(messages: &[AgentMessage], cwd: &Path) -> Vec<SessionUpdate> {
    let results: HashMap<&str, (&[UserBlock], bool)> = messages
        .iter()
        .filter_map(|m| match m {
            AgentMessage::Llm(Message::ToolResult(r)) => {
                Some((r.tool_call_id.as_str(), (r.content.as_slice(), r.is_error)))
            }
            _ => None,
        })
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for message in messages {
        match message {
            AgentMessage::Llm(Message::User(user)) => {
                let id = new_message_id();
                for block in user_blocks(&user.content.blocks()) {
                    out.push(SessionUpdate::UserMessageChunk(
                        ContentChunk::new(block).message_id(MessageId::from(id.clone())),
                    ));
                }
            }
            AgentMessage::Llm(Message::Assistant(a)) => {
                let (reply, thought) = (new_message_id(), new_message_id());
                for block in &a.content {
                    match block {
                        AssistantBlock::Text(t) if !t.text.is_empty() => {
                            out.push(SessionUpdate::AgentMessageChunk(chunk(
                                &t.text,
                                reply.clone(),
                            )));
                        }
                        AssistantBlock::Thinking(t) if !t.thinking.is_empty() => {
                            out.push(SessionUpdate::AgentThoughtChunk(chunk(
                                &t.thinking,
                                thought.clone(),
                            )));
                        }
                        AssistantBlock::ToolCall(tc) if seen.insert(tc.id.clone()) => {
                            let info = describe_tool_call(&tc.name, &tc.arguments, cwd);
                            let (content, status) = match results.get(tc.id.as_str()) {
                                Some((blocks, is_error)) => (
                                    user_blocks(blocks)
                                        .into_iter()
                                        .map(|b| ToolCallContent::Content(Content::new(b)))
                                        .collect(),
                                    if *is_error {
                                        ToolCallStatus::Failed
                                    } else {
                                        ToolCallStatus::Completed
                                    },
                                ),
                                None => (Vec::new(), ToolCallStatus::Failed),
                            };
                            out.push(SessionUpdate::ToolCall(
                                AcpToolCall::new(tc.id.clone(), info.title.clone())
                                    .name(tc.name.clone())
                                    .kind(kind(info.kind))
                                    .status(status)
                                    .locations(locations(&info))
                                    .raw_input(tc.arguments.clone())
                                    .content(content),
                            ));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;
