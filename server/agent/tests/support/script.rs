//! The scripted model: queued turns played through a real `StreamWriter`, every call recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tandem_agent::ai::{
    AssistantStream, CancellationToken, Context, StopReason, StreamWriter, ThinkingLevel,
};
use tandem_agent::StreamFn;
use tokio::sync::oneshot;

use super::describe_messages;

/// A tool call a scripted turn makes.
#[derive(Debug, Clone)]
pub struct CallSpec {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub args: Value,
}

/// A tool call for a scripted turn.
pub fn call(id: &str, name: &str, args: Value) -> CallSpec {
    CallSpec {
        id: id.into(),
        name: name.into(),
        args,
    }
}

/// How a scripted turn ends.
#[derive(Debug)]
enum End {
    /// `done` with this reason.
    Finish(StopReason),
    /// `error` with this reason and message.
    Fail(StopReason, String),
    /// Waits for the call's cancellation, then fails `aborted` with "Request was aborted".
    Hang,
}

/// One scripted model answer.
#[derive(Debug)]
pub struct Turn {
    thinking: Option<String>,
    text: Vec<String>,
    calls: Vec<CallSpec>,
    /// Waited on after the first text delta (to act while the answer streams).
    gate: Option<oneshot::Receiver<()>>,
    end: End,
}

impl Turn {
    fn new(end: End) -> Self {
        Turn {
            thinking: None,
            text: Vec::new(),
            calls: Vec::new(),
            gate: None,
            end,
        }
    }

    /// Answers `text` in one delta and stops.
    pub fn text(text: &str) -> Self {
        Turn::new(End::Finish(StopReason::Stop)).with_text(text)
    }

    /// Answers `deltas` one delta each and stops.
    pub fn deltas(deltas: &[&str]) -> Self {
        let mut turn = Turn::new(End::Finish(StopReason::Stop));
        turn.text = deltas.iter().map(|d| d.to_string()).collect();
        turn
    }

    /// Calls tools and stops with `toolUse`.
    pub fn tools(calls: Vec<CallSpec>) -> Self {
        let mut turn = Turn::new(End::Finish(StopReason::ToolUse));
        turn.calls = calls;
        turn
    }

    /// Fails with `stopReason: error` and `message`.
    pub fn error(message: &str) -> Self {
        Turn::new(End::Fail(StopReason::Error, message.into()))
    }

    /// Streams "Working on it" and then waits until the call is cancelled; ends `aborted` with
    /// "Request was aborted" (what a provider does on abort).
    pub fn hang() -> Self {
        Turn::new(End::Hang).with_text("Working on it")
    }

    /// Adds a text delta before the tool calls.
    pub fn with_text(mut self, text: &str) -> Self {
        self.text.push(text.into());
        self
    }

    /// Adds reasoning before the text.
    pub fn with_thinking(mut self, thinking: &str) -> Self {
        self.thinking = Some(thinking.into());
        self
    }

    /// Ends with `done` and `reason` instead (e.g. `length`).
    pub fn stop(mut self, reason: StopReason) -> Self {
        self.end = End::Finish(reason);
        self
    }

    /// Ends with `error` and `reason` (`error` or `aborted`) instead, keeping the streamed
    /// content (tool calls included).
    pub fn fail(mut self, reason: StopReason, message: &str) -> Self {
        self.end = End::Fail(reason, message.into());
        self
    }

    /// Waits for `gate` after the first text delta (a turn without text gets one, "…").
    pub fn gated(mut self, gate: oneshot::Receiver<()>) -> Self {
        if self.text.is_empty() {
            self.text.push("…".into());
        }
        self.gate = Some(gate);
        self
    }
}

/// What one model call was given.
#[derive(Debug, Clone)]
pub struct RecordedCall {
    /// The model id.
    pub model: String,
    /// The context.
    pub context: Context,
    /// The requested reasoning level.
    pub thinking: ThinkingLevel,
    /// The API key passed in the options.
    pub api_key: Option<String>,
}

impl RecordedCall {
    /// The context's messages, one line each.
    pub fn lines(&self) -> Vec<String> {
        describe_messages(&self.context.messages)
    }
}

/// A model that replays queued turns and records every call.
#[derive(Default)]
pub struct ScriptedModel {
    turns: Mutex<VecDeque<Turn>>,
    calls: Mutex<Vec<RecordedCall>>,
}

impl ScriptedModel {
    /// A model that answers with `turns`, in order.
    pub fn new(turns: Vec<Turn>) -> Arc<Self> {
        Arc::new(ScriptedModel {
            turns: Mutex::new(turns.into()),
            calls: Mutex::new(Vec::new()),
        })
    }

    /// Queues one more turn.
    pub fn push(&self, turn: Turn) {
        self.turns.lock().expect("turns").push_back(turn);
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<RecordedCall> {
        self.calls.lock().expect("calls").clone()
    }

    /// Call `n` (0-based); fails the test when there were fewer.
    pub fn call(&self, n: usize) -> RecordedCall {
        let calls = self.calls();
        calls
            .get(n)
            .cloned()
            .unwrap_or_else(|| panic!("expected model call #{n}, there were {}", calls.len()))
    }

    /// How many calls were made.
    pub fn call_count(&self) -> usize {
        self.calls.lock().expect("calls").len()
    }

    /// Turns not used.
    pub fn turns_left(&self) -> usize {
        self.turns.lock().expect("turns").len()
    }

    /// The stream function to inject.
    pub fn stream_fn(self: &Arc<Self>) -> StreamFn {
        let script = self.clone();
        Arc::new(move |model, context, options| {
            let number = {
                let mut calls = script.calls.lock().expect("calls");
                calls.push(RecordedCall {
                    model: model.id.clone(),
                    context: context.clone(),
                    thinking: options.reasoning,
                    api_key: options.api_key.clone(),
                });
                calls.len()
            };
            let (writer, stream) = AssistantStream::channel(model);
            let cancel = options.cancel.clone();
            if cancel.is_cancelled() {
                // A provider called after an abort answers `aborted` at once.
                tokio::spawn(async move {
                    writer
                        .fail(StopReason::Aborted, tandem_agent::ai::ABORTED_MESSAGE)
                        .await;
                });
                return stream;
            }
            let turn = script.turns.lock().expect("turns").pop_front();
            tokio::spawn(async move {
                match turn {
                    Some(turn) => play(writer, turn, cancel).await,
                    None => {
                        writer
                            .fail(
                                StopReason::Error,
                                format!("scripted model: no turn left for call #{number}"),
                            )
                            .await
                    }
                }
            });
            stream
        })
    }
}

async fn play(mut writer: StreamWriter, mut turn: Turn, cancel: CancellationToken) {
    if let Some(thinking) = &turn.thinking {
        writer.thinking_delta(thinking).await;
    }
    for (i, delta) in turn.text.iter().enumerate() {
        writer.text_delta(delta).await;
        if i == 0 {
            if let Some(gate) = turn.gate.take() {
                // A dropped sender releases the gate too.
                let _ = gate.await;
            }
        }
    }
    for c in &turn.calls {
        writer.start_tool_call(c.id.clone(), c.name.clone()).await;
        writer.tool_call_delta(&c.args.to_string()).await;
        writer.end_block().await;
    }
    match turn.end {
        End::Finish(reason) => writer.finish(reason).await,
        End::Fail(reason, message) => writer.fail(reason, message).await,
        End::Hang => {
            cancel.cancelled().await;
            writer
                .fail(StopReason::Aborted, tandem_agent::ai::ABORTED_MESSAGE)
                .await
        }
    }
}
