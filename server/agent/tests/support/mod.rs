//! Test support for the agent loop: a scripted model (`script`), closure tools and hooks
//! (`fixtures`), and the message and event helpers (here).
//!
//! The scripted model replays queued `Turn`s through a real `StreamWriter`, so the loop sees
//! exactly the events a provider would send, and it records what every call was given (model,
//! context, thinking level) so a test can assert what the model saw. Ordering and overlap are
//! proven with barriers, oneshots and notifications, never with sleeps; every wait is bounded by
//! [`within`] so a bug fails a test instead of hanging it.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

mod fixtures;
mod script;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tandem_agent::ai::{
    join_text, Api, AssistantBlock, AssistantMessage, InputKind, Message, Model, ModelCost,
    ToolResultMessage, UserBlock, UserContent, UserMessage,
};
use tandem_agent::{Agent, AgentEvent, AgentMessage, AgentOptions, AgentTool, ToolOutput};
use tokio::sync::mpsc;

pub use fixtures::{recording_tool, FnTool, TestHooks};
pub use script::{call, ScriptedModel, Turn};

/// How long any run or wait may take before the test fails.
pub const LIMIT: Duration = Duration::from_secs(10);

/// Awaits `f`, failing the test after [`LIMIT`] (a deadlock or a missed wake-up is a failure,
/// not a hang).
pub async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(out) => out,
        Err(_) => panic!("timed out after {LIMIT:?} (deadlock, or an event that never came)"),
    }
}

// ---------------------------------------------------------------------------------------------
// Models and messages

/// A model with `id` (provider "test", a made-up API).
pub fn model(id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: Api::Other("test-api".into()),
        provider: "test".into(),
        base_url: String::new(),
        reasoning: true,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 100_000,
        max_tokens: 4_096,
        headers: None,
        compat: None,
    }
}

/// A user text message.
pub fn user(text: &str) -> AgentMessage {
    UserMessage::text(text).into()
}

/// All text of a user, assistant or tool-result message (custom messages: empty).
pub fn text_of(message: &AgentMessage) -> String {
    match message {
        AgentMessage::Llm(Message::User(u)) => u.content.text(),
        AgentMessage::Llm(Message::Assistant(a)) => a.text(),
        AgentMessage::Llm(Message::ToolResult(r)) => join_text(&r.content),
        AgentMessage::Custom(_) => String::new(),
    }
}

/// The text of a tool result.
pub fn result_text(result: &ToolResultMessage) -> String {
    join_text(&result.content)
}

/// The text of a tool output.
pub fn output_text(output: &ToolOutput) -> String {
    join_text(&output.content)
}

/// One line per model message, for exact assertions on what a model call saw:
/// `user: hi`, `assistant: <text> [call c1 echo {"x":1}]`, `toolResult c1 ok: <text>`.
pub fn describe_messages(messages: &[Message]) -> Vec<String> {
    messages.iter().map(describe_message).collect()
}

/// One line for a model message (see [`describe_messages`]).
pub fn describe_message(message: &Message) -> String {
    match message {
        Message::User(u) => match &u.content {
            UserContent::Text(t) => format!("user: {t}"),
            UserContent::Blocks(_) => format!("user: {}", u.content.text()),
        },
        Message::Assistant(a) => {
            let mut line = format!("assistant({}): {}", a.stop_reason.as_str(), a.text());
            for call in a.tool_calls() {
                line.push_str(&format!(
                    " [call {} {} {}]",
                    call.id, call.name, call.arguments
                ));
            }
            line
        }
        Message::ToolResult(r) => format!(
            "toolResult {} {}: {}",
            r.tool_call_id,
            if r.is_error { "error" } else { "ok" },
            result_text(r)
        ),
    }
}

/// [`describe_messages`] for agent messages (custom messages show their role).
pub fn describe_history(messages: &[AgentMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            AgentMessage::Llm(m) => describe_message(m),
            AgentMessage::Custom(c) => format!("custom {}", c.role()),
        })
        .collect()
}

/// The assistant messages of a history.
pub fn assistants(messages: &[AgentMessage]) -> Vec<AssistantMessage> {
    messages
        .iter()
        .filter_map(|m| m.as_assistant().cloned())
        .collect()
}

/// The last message of the agent's history.
pub fn last_message(agent: &Agent) -> AgentMessage {
    agent
        .messages()
        .last()
        .cloned()
        .expect("the history is not empty")
}

// ---------------------------------------------------------------------------------------------
// Agents

/// Options for model "model-a" driven by `script`, with `tools`.
pub fn options(script: &Arc<ScriptedModel>, tools: Vec<Arc<dyn AgentTool>>) -> AgentOptions {
    let mut options = AgentOptions::new(model("model-a"));
    options.stream_fn = script.stream_fn();
    options.tools = tools;
    options
}

/// An agent for model "model-a" driven by `script`, with `tools`.
pub fn agent(script: &Arc<ScriptedModel>, tools: Vec<Arc<dyn AgentTool>>) -> Agent {
    Agent::new(options(script, tools))
}

/// Adds a tool to an existing agent (for tools that need the agent itself, e.g. to steer).
pub fn add_tool(agent: &Agent, tool: Arc<dyn AgentTool>) {
    agent.update_state(|s| s.tools.push(tool));
}

/// Prompts `text` and waits (bounded) for the run to end.
pub async fn prompt(agent: &Agent, text: &str) {
    within(agent.prompt(vec![user(text)]))
        .await
        .expect("the agent accepts the prompt");
}

// ---------------------------------------------------------------------------------------------
// Events

/// Everything received so far (use after the run ended; the channel holds 1024 events).
pub fn drain(rx: &mut mpsc::Receiver<Arc<AgentEvent>>) -> Vec<Arc<AgentEvent>> {
    let mut out = Vec::new();
    while let Ok(event) = rx.try_recv() {
        out.push(event);
    }
    out
}

/// Waits (bounded) for the next event satisfying `pred`, returning it and everything before it.
pub async fn wait_for(
    rx: &mut mpsc::Receiver<Arc<AgentEvent>>,
    pred: impl Fn(&AgentEvent) -> bool,
) -> Vec<Arc<AgentEvent>> {
    within(async {
        let mut seen = Vec::new();
        loop {
            let event = rx.recv().await.expect("the agent is alive");
            let done = pred(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    })
    .await
}

/// Reads events until `agent_end` (inclusive), bounded.
pub async fn until_agent_end(rx: &mut mpsc::Receiver<Arc<AgentEvent>>) -> Vec<Arc<AgentEvent>> {
    wait_for(rx, |e| matches!(e, AgentEvent::AgentEnd { .. })).await
}

/// The events' kinds (`agent_start`, `message_update`, …).
pub fn kinds(events: &[Arc<AgentEvent>]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind()).collect()
}

/// The events, one annotated line each: message events name the role (and the call id of tool
/// results), updates name the provider event, tool events name the call and whether it failed,
/// `turn_end` names its stop reason and result ids, `agent_end` its message count.
pub fn trace(events: &[Arc<AgentEvent>]) -> Vec<String> {
    events.iter().map(|e| trace_line(e)).collect()
}

fn message_label(message: &AgentMessage) -> String {
    match message {
        AgentMessage::Llm(Message::ToolResult(r)) => format!("toolResult {}", r.tool_call_id),
        other => other.role().to_string(),
    }
}

fn trace_line(event: &AgentEvent) -> String {
    match event {
        AgentEvent::AgentStart => "agent_start".into(),
        AgentEvent::AgentEnd { messages } => format!("agent_end ({})", messages.len()),
        AgentEvent::TurnStart => "turn_start".into(),
        AgentEvent::TurnEnd {
            message,
            tool_results,
        } => {
            let ids: Vec<&str> = tool_results
                .iter()
                .map(|r| r.tool_call_id.as_str())
                .collect();
            format!(
                "turn_end {} [{}]",
                message.stop_reason.as_str(),
                ids.join(",")
            )
        }
        AgentEvent::MessageStart { message } => format!("message_start {}", message_label(message)),
        AgentEvent::MessageUpdate {
            assistant_message_event,
        } => format!("message_update {}", assistant_message_event.kind()),
        AgentEvent::MessageEnd { message } => format!("message_end {}", message_label(message)),
        AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
            format!("tool_execution_start {tool_call_id}")
        }
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => {
            format!("tool_execution_update {tool_call_id}")
        }
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            is_error,
            ..
        } => format!(
            "tool_execution_end {tool_call_id}{}",
            if *is_error { " error" } else { "" }
        ),
    }
}

/// The trace of a streamed assistant message with one text delta:
/// start, text_start/delta/end, end.
pub fn text_message_trace() -> Vec<String> {
    strings(&[
        "message_start assistant",
        "message_update text_start",
        "message_update text_delta",
        "message_update text_end",
        "message_end assistant",
    ])
}

/// The trace lines of `n` streamed tool calls (after any text).
pub fn tool_call_updates(n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.extend(strings(&[
            "message_update toolcall_start",
            "message_update toolcall_delta",
            "message_update toolcall_end",
        ]));
    }
    out
}

/// `&[&str]` → `Vec<String>`.
pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Concatenates trace pieces.
pub fn concat(parts: Vec<Vec<String>>) -> Vec<String> {
    parts.into_iter().flatten().collect()
}

/// The `tool_execution_end` result of call `id`.
pub fn tool_end_of(events: &[Arc<AgentEvent>], id: &str) -> (ToolOutput, bool) {
    events
        .iter()
        .find_map(|e| match e.as_ref() {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } if tool_call_id == id => Some((result.clone(), *is_error)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no tool_execution_end for {id}"))
}

/// The tool results of the last `turn_end` whose assistant message called tools.
pub fn turn_results(events: &[Arc<AgentEvent>]) -> Vec<Vec<ToolResultMessage>> {
    events
        .iter()
        .filter_map(|e| match e.as_ref() {
            AgentEvent::TurnEnd { tool_results, .. } => Some(tool_results.clone()),
            _ => None,
        })
        .collect()
}

/// The tool result message for call `id` in the agent's history.
pub fn history_result(agent: &Agent, id: &str) -> ToolResultMessage {
    agent
        .messages()
        .iter()
        .find_map(|m| match m {
            AgentMessage::Llm(Message::ToolResult(r)) if r.tool_call_id == id => Some(r.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no tool result for {id} in the history"))
}

/// A text block.
pub fn text_block(text: &str) -> UserBlock {
    UserBlock::Text(tandem_agent::ai::TextContent {
        text: text.into(),
        text_signature: None,
    })
}

/// The text blocks of an assistant message's content (for exact content checks).
pub fn assistant_texts(message: &AssistantMessage) -> Vec<String> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}
