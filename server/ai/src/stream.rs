//! The stream a model call returns, and the writer providers use to fill it.
//!
//! The contract (pi's StreamFn): once a call is made, every failure is encoded in the stream, never
//! thrown; the stream ends with exactly one terminal event (`done` or `error`) carrying the final
//! message; nothing is delivered after it. [`StreamWriter`] enforces that on the producer side and
//! [`AssistantStream`] on the consumer side (a producer that vanishes without a terminal event
//! yields a synthetic `error`).
//!
//! The channel is bounded: a consumer slower than the network applies back-pressure to the
//! provider instead of letting events pile up in memory.

use tokio::sync::mpsc;

use crate::event::{AssistantMessageEvent, PartialMessage};
use crate::model::Model;
use crate::types::{AssistantBlock, AssistantMessage, StopReason, ToolCall};

/// Events buffered between a provider and its consumer.
const CHANNEL_CAPACITY: usize = 256;

/// The error text of a cancelled call, as pi words it.
pub const ABORTED_MESSAGE: &str = "Request was aborted";

/// The consumer side of a model call.
#[derive(Debug)]
pub struct AssistantStream {
    rx: mpsc::Receiver<AssistantMessageEvent>,
    /// The message as known so far, for a synthetic error if the producer vanishes.
    last_known: Option<AssistantMessage>,
    final_message: Option<AssistantMessage>,
}

impl AssistantStream {
    /// A connected writer and stream for a call to `model`.
    pub fn channel(model: &Model) -> (StreamWriter, AssistantStream) {
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        let message = AssistantMessage::empty(model.api.clone(), &model.provider, &model.id);
        let writer = StreamWriter {
            tx,
            partial: PartialMessage::new(message.clone()),
            open: Vec::new(),
            current: None,
            ends: BlockEnds::OnNextBlock,
            started: false,
            finished: false,
            receiver_gone: false,
            malformed: None,
        };
        let stream = AssistantStream {
            rx,
            last_known: Some(message),
            final_message: None,
        };
        (writer, stream)
    }

    /// A stream that already failed (for errors found before any request is made).
    pub fn failed(model: &Model, message: impl Into<String>) -> AssistantStream {
        let (writer, stream) = AssistantStream::channel(model);
        writer.fail_now(StopReason::Error, message.into());
        stream
    }

    /// The next event; `None` after the terminal event.
    pub async fn next(&mut self) -> Option<AssistantMessageEvent> {
        if self.final_message.is_some() {
            return None;
        }
        match self.rx.recv().await {
            Some(event) => {
                match &event {
                    AssistantMessageEvent::Done { message, .. } => {
                        self.final_message = Some(message.clone())
                    }
                    AssistantMessageEvent::Error { error, .. } => {
                        self.final_message = Some(error.clone())
                    }
                    AssistantMessageEvent::Start { partial } => {
                        self.last_known = Some(partial.clone())
                    }
                    _ => {}
                }
                Some(event)
            }
            None => {
                // The producer ended without a terminal event: report it as a failure.
                let mut message = self.last_known.take().unwrap_or_else(|| {
                    AssistantMessage::empty(crate::model::Api::Other(String::new()), "", "")
                });
                message.stop_reason = StopReason::Error;
                message.error_message = Some(
                    "The model stream ended without a final event (provider task stopped)".into(),
                );
                self.final_message = Some(message.clone());
                Some(AssistantMessageEvent::Error {
                    reason: StopReason::Error,
                    error: message,
                })
            }
        }
    }

    /// The final message, once the terminal event has been received.
    pub fn final_message(&self) -> Option<&AssistantMessage> {
        self.final_message.as_ref()
    }

    /// Drains the stream and returns the final message.
    pub async fn result(mut self) -> AssistantMessage {
        while self.next().await.is_some() {}
        // `next` always records a final message before returning `None`.
        self.final_message.unwrap_or_else(|| {
            AssistantMessage::empty(crate::model::Api::Other(String::new()), "", "")
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenKind {
    Text,
    Thinking,
    ToolCall,
}

/// When the writer ends a content block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockEnds {
    /// A block ends when a block of another kind starts, so one block is open at a time (the
    /// providers whose wire format ends blocks, and pi's for them).
    OnNextBlock,
    /// Every block stays open until the stream finishes, then all end in content order; a
    /// message has at most one text and one thinking block (later text joins the text block,
    /// even after a tool call), and every tool-call fragment is reported, even an empty one.
    /// pi's Chat Completions provider streams so, and JSON mode prints what pi prints.
    AtFinish,
}

/// The producer side: providers report what the model sends; the writer numbers the content
/// blocks, emits start/delta/end events, keeps the partial message and guarantees a single
/// terminal event.
#[derive(Debug)]
pub struct StreamWriter {
    tx: mpsc::Sender<AssistantMessageEvent>,
    partial: PartialMessage,
    /// The open blocks, in content order (at most one with [`BlockEnds::OnNextBlock`]).
    open: Vec<(usize, OpenKind)>,
    /// The open block written last: signatures, late ids and tool-call fragments go to it.
    current: Option<(usize, OpenKind)>,
    ends: BlockEnds,
    started: bool,
    finished: bool,
    receiver_gone: bool,
    /// The first tool call whose arguments did not parse; the stream ends in `error` with it.
    malformed: Option<String>,
}

impl StreamWriter {
    /// The message built so far.
    pub fn message(&self) -> &AssistantMessage {
        self.partial.message()
    }

    /// Mutable access to usage, response id and similar metadata of the message being built.
    /// Content must go through the block methods so events stay consistent.
    pub fn message_mut(&mut self) -> &mut AssistantMessage {
        self.partial.message_mut()
    }

    /// Sets when blocks end (before the first block opens).
    pub fn set_block_ends(&mut self, ends: BlockEnds) {
        self.ends = ends;
    }

    /// True once the consumer dropped the stream; providers may stop early.
    pub fn is_closed(&self) -> bool {
        self.receiver_gone || self.tx.is_closed()
    }

    /// True once a terminal event was sent.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// True when any content block was started.
    pub fn has_content(&self) -> bool {
        !self.partial.message().content.is_empty()
    }

    async fn emit(&mut self, event: AssistantMessageEvent) {
        if self.finished {
            return;
        }
        self.partial.apply(&event);
        if self.receiver_gone {
            return;
        }
        if self.tx.send(event).await.is_err() {
            self.receiver_gone = true;
        }
    }

    /// Emits `start` (once). Called implicitly by every other method.
    pub async fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        let partial = self.partial.message().clone();
        self.emit(AssistantMessageEvent::Start { partial }).await;
    }

    async fn ensure_open(&mut self, kind: OpenKind) -> usize {
        self.start().await;
        let reusable = match self.ends {
            BlockEnds::OnNextBlock => self.current.filter(|(_, open)| *open == kind),
            BlockEnds::AtFinish => self.open.iter().copied().find(|(_, open)| *open == kind),
        };
        if let Some((index, open)) = reusable {
            self.current = Some((index, open));
            return index;
        }
        self.open_block(kind).await
    }

    /// Opens a new block of `kind` (ending the open one first unless blocks end at the finish).
    async fn open_block(&mut self, kind: OpenKind) -> usize {
        if self.ends == BlockEnds::OnNextBlock {
            self.end_block().await;
        }
        let index = self.partial.message().content.len();
        self.open.push((index, kind));
        self.current = Some((index, kind));
        if kind == OpenKind::ToolCall {
            return index;
        }
        let event = match kind {
            OpenKind::Text => AssistantMessageEvent::TextStart {
                content_index: index,
            },
            OpenKind::Thinking => AssistantMessageEvent::ThinkingStart {
                content_index: index,
            },
            OpenKind::ToolCall => return index,
        };
        self.emit(event).await;
        index
    }

    /// Appends text, opening a text block if the current block is not text.
    pub async fn text_delta(&mut self, delta: &str) {
        if delta.is_empty() {
            // An empty delta still opens the block (some providers start blocks empty).
            self.ensure_open(OpenKind::Text).await;
            return;
        }
        let content_index = self.ensure_open(OpenKind::Text).await;
        self.emit(AssistantMessageEvent::TextDelta {
            content_index,
            delta: delta.to_string(),
        })
        .await;
    }

    /// Appends reasoning text, opening a thinking block if needed.
    pub async fn thinking_delta(&mut self, delta: &str) {
        let content_index = self.ensure_open(OpenKind::Thinking).await;
        if delta.is_empty() {
            return;
        }
        self.emit(AssistantMessageEvent::ThinkingDelta {
            content_index,
            delta: delta.to_string(),
        })
        .await;
    }

    /// Opens a thinking block even when no text comes (redacted reasoning).
    pub async fn open_thinking(&mut self) {
        self.ensure_open(OpenKind::Thinking).await;
    }

    /// Sets the signature of the open text or thinking block (sent with its end event).
    pub fn set_signature(&mut self, signature: impl Into<String>) {
        let Some((index, _)) = self.current else {
            return;
        };
        let signature = signature.into();
        match self.partial.message_mut().content.get_mut(index) {
            Some(AssistantBlock::Text(t)) => t.text_signature = Some(signature),
            Some(AssistantBlock::Thinking(t)) => t.thinking_signature = Some(signature),
            Some(AssistantBlock::ToolCall(c)) => c.thought_signature = Some(signature),
            None => {}
        }
    }

    /// Appends to the signature of the open thinking block (Anthropic streams it in pieces).
    pub fn append_signature(&mut self, piece: &str) {
        let Some((index, _)) = self.current else {
            return;
        };
        if let Some(AssistantBlock::Thinking(t)) = self.partial.message_mut().content.get_mut(index)
        {
            t.thinking_signature
                .get_or_insert_with(String::new)
                .push_str(piece);
        }
    }

    /// Marks the open thinking block as redacted.
    pub fn set_redacted(&mut self) {
        let Some((index, _)) = self.current else {
            return;
        };
        if let Some(AssistantBlock::Thinking(t)) = self.partial.message_mut().content.get_mut(index)
        {
            t.redacted = Some(true);
        }
    }

    /// Opens a tool-call block (closing whatever block was open, unless blocks end at the
    /// finish); its content index.
    pub async fn start_tool_call(
        &mut self,
        id: impl Into<String>,
        name: impl Into<String>,
    ) -> usize {
        self.start().await;
        let index = self.open_block(OpenKind::ToolCall).await;
        self.emit(AssistantMessageEvent::ToolcallStart {
            content_index: index,
            id: id.into(),
            name: name.into(),
        })
        .await;
        index
    }

    /// Makes the open tool call at `index` the current block again (with
    /// [`BlockEnds::AtFinish`], where several calls may be open); false when no open tool call
    /// has that index.
    pub fn resume_tool_call(&mut self, index: usize) -> bool {
        let found = self.open.contains(&(index, OpenKind::ToolCall));
        if found {
            self.current = Some((index, OpenKind::ToolCall));
        }
        found
    }

    /// True when the current block is a tool call.
    pub fn in_tool_call(&self) -> bool {
        matches!(self.current, Some((_, OpenKind::ToolCall)))
    }

    /// Appends raw argument JSON to the current tool call (an empty fragment is reported only
    /// with [`BlockEnds::AtFinish`]).
    pub async fn tool_call_delta(&mut self, delta: &str) {
        let Some((content_index, OpenKind::ToolCall)) = self.current else {
            return;
        };
        if delta.is_empty() && self.ends == BlockEnds::OnNextBlock {
            return;
        }
        self.emit(AssistantMessageEvent::ToolcallDelta {
            content_index,
            delta: delta.to_string(),
        })
        .await;
    }

    /// Updates the id or name of the open tool call (some providers send them late).
    pub fn patch_tool_call(&mut self, id: Option<&str>, name: Option<&str>) {
        let Some((index, OpenKind::ToolCall)) = self.current else {
            return;
        };
        if let Some(AssistantBlock::ToolCall(c)) = self.partial.message_mut().content.get_mut(index)
        {
            if let Some(id) = id {
                c.id = id.to_string();
            }
            if let Some(name) = name {
                c.name = name.to_string();
            }
        }
    }

    /// Gives the current tool call the id or name it lacks (a later fragment never renames it).
    pub fn fill_tool_call(&mut self, id: Option<&str>, name: Option<&str>) {
        let Some((index, OpenKind::ToolCall)) = self.current else {
            return;
        };
        if let Some(AssistantBlock::ToolCall(c)) = self.partial.message_mut().content.get_mut(index)
        {
            if let Some(id) = id.filter(|_| c.id.is_empty()) {
                c.id = id.to_string();
            }
            if let Some(name) = name.filter(|_| c.name.is_empty()) {
                c.name = name.to_string();
            }
        }
    }

    /// Emits a complete tool call at once (providers that send whole calls, like Google).
    pub async fn whole_tool_call(&mut self, call: ToolCall) {
        let args = serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into());
        self.start_tool_call(call.id.clone(), call.name.clone())
            .await;
        self.tool_call_delta(&args).await;
        if let Some(sig) = call.thought_signature {
            self.set_signature(sig);
        }
        self.end_block().await;
    }

    /// The error text of the first tool call whose arguments were malformed, if any.
    pub fn malformed_tool_call(&self) -> Option<&str> {
        self.malformed.as_deref()
    }

    /// Closes the open blocks in content order, emitting their end events. A tool call whose
    /// argument JSON does not parse emits no end event; it is remembered and
    /// [`StreamWriter::finish`] fails with it.
    pub async fn end_block(&mut self) {
        self.current = None;
        for (index, kind) in std::mem::take(&mut self.open) {
            self.end_one(index, kind).await;
        }
    }

    async fn end_one(&mut self, index: usize, kind: OpenKind) {
        let block = self.partial.message().content.get(index).cloned();
        let event = match (kind, block) {
            (OpenKind::Text, Some(AssistantBlock::Text(t))) => AssistantMessageEvent::TextEnd {
                content_index: index,
                content: t.text,
                signature: t.text_signature,
            },
            (OpenKind::Thinking, Some(AssistantBlock::Thinking(t))) => {
                AssistantMessageEvent::ThinkingEnd {
                    content_index: index,
                    content: t.thinking,
                    signature: t.thinking_signature,
                    redacted: t.redacted.unwrap_or(false),
                }
            }
            (OpenKind::ToolCall, Some(AssistantBlock::ToolCall(mut call))) => {
                let raw = self.partial.raw_tool_arguments(index).unwrap_or("");
                match parse_arguments(raw) {
                    Ok(args) => call.arguments = args,
                    Err(err) => {
                        if self.malformed.is_none() {
                            self.malformed = Some(format!(
                                "Tool call {} ({}) has malformed arguments JSON: {err}",
                                call.name, call.id
                            ));
                        }
                        return;
                    }
                }
                AssistantMessageEvent::ToolcallEnd {
                    content_index: index,
                    tool_call: call,
                }
            }
            _ => return,
        };
        self.emit(event).await;
    }

    /// Ends the stream successfully: closes the open block, then emits `done`. A tool call with
    /// malformed arguments turns this into an `error`.
    pub async fn finish(mut self, reason: StopReason) {
        self.start().await;
        self.end_block().await;
        if let Some(message) = self.malformed.take() {
            self.fail(StopReason::Error, message).await;
            return;
        }
        let mut message = self.partial.message().clone();
        message.stop_reason = reason;
        message.error_message = None;
        self.emit(AssistantMessageEvent::Done { reason, message })
            .await;
        self.finished = true;
    }

    /// Ends the stream with an error (or `aborted`). Blocks already received stay in the
    /// message; a block still open is kept as it was.
    pub async fn fail(self, reason: StopReason, error_message: impl Into<String>) {
        self.fail_as(reason, error_message, None).await
    }

    /// Like [`StreamWriter::fail`], recording what kind of failure it was (for the retry
    /// decision).
    pub async fn fail_as(
        mut self,
        reason: StopReason,
        error_message: impl Into<String>,
        kind: Option<crate::error::FailureKind>,
    ) {
        self.start().await;
        let reason = if reason == StopReason::Aborted {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        self.open.clear();
        self.current = None;
        let mut message = self.partial.message().clone();
        message.stop_reason = reason;
        message.error_message = Some(error_message.into());
        message.failure = kind;
        self.emit(AssistantMessageEvent::Error {
            reason,
            error: message,
        })
        .await;
        self.finished = true;
    }

    /// Fails without awaiting (the channel is empty, so `try_send` cannot be refused for space).
    fn fail_now(mut self, reason: StopReason, error_message: String) {
        let start = AssistantMessageEvent::Start {
            partial: self.partial.message().clone(),
        };
        let mut message = self.partial.message().clone();
        message.stop_reason = reason;
        message.error_message = Some(error_message);
        let _ = self.tx.try_send(start);
        let _ = self.tx.try_send(AssistantMessageEvent::Error {
            reason,
            error: message,
        });
        self.finished = true;
    }
}

/// Strictly parses a finished tool call's arguments; empty text means no arguments.
fn parse_arguments(raw: &str) -> Result<serde_json::Value, String> {
    if raw.trim().is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    serde_json::from_str(raw).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Api, ModelCost};
    use serde_json::json;

    pub(crate) fn test_model() -> Model {
        Model {
            id: "m".into(),
            name: "M".into(),
            api: Api::OpenAiCompletions,
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec![crate::model::InputKind::Text],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            headers: None,
            compat: None,
        }
    }

    async fn collect(mut stream: AssistantStream) -> Vec<AssistantMessageEvent> {
        let mut out = Vec::new();
        while let Some(e) = stream.next().await {
            out.push(e);
        }
        out
    }

    #[tokio::test]
    async fn writer_numbers_blocks_and_ends_with_done() {
        let model = test_model();
        let (mut w, s) = AssistantStream::channel(&model);
        tokio::spawn(async move {
            w.thinking_delta("hm").await;
            w.text_delta("Hel").await;
            w.text_delta("lo").await;
            w.start_tool_call("c1", "read").await;
            w.tool_call_delta("{\"path\":").await;
            w.tool_call_delta("\"a\"}").await;
            w.finish(StopReason::ToolUse).await;
        });
        let events = collect(s).await;
        let kinds: Vec<&str> = events.iter().map(|e| e.kind()).collect();
        assert_eq!(
            kinds,
            [
                "start",
                "thinking_start",
                "thinking_delta",
                "thinking_end",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end",
                "toolcall_start",
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_end",
                "done"
            ]
        );
        let AssistantMessageEvent::Done { message, .. } = events.last().expect("done") else {
            panic!("no done")
        };
        assert_eq!(message.text(), "Hello");
        assert_eq!(
            message.tool_calls().next().map(|c| &c.arguments),
            Some(&json!({"path":"a"}))
        );
    }

    #[tokio::test]
    async fn malformed_arguments_end_in_error() {
        let model = test_model();
        let (mut w, s) = AssistantStream::channel(&model);
        tokio::spawn(async move {
            w.start_tool_call("c1", "read").await;
            w.tool_call_delta("{\"path\": nope}").await;
            w.finish(StopReason::ToolUse).await;
        });
        let msg = s.result().await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        let err = msg.error_message.unwrap_or_default();
        assert!(err.contains("malformed arguments JSON"), "{err}");
    }

    #[tokio::test]
    async fn a_vanished_producer_yields_a_synthetic_error() {
        let model = test_model();
        let (mut w, mut s) = AssistantStream::channel(&model);
        tokio::spawn(async move {
            w.text_delta("partial").await;
            drop(w);
        });
        let mut last = None;
        while let Some(e) = s.next().await {
            last = Some(e);
        }
        assert!(matches!(last, Some(AssistantMessageEvent::Error { .. })));
        assert!(s.next().await.is_none(), "nothing after the terminal event");
    }

    #[tokio::test]
    async fn nothing_is_delivered_after_the_terminal_event() {
        let model = test_model();
        let s = AssistantStream::failed(&model, "No API key");
        let events = collect(s).await;
        assert_eq!(events.len(), 2);
        assert!(events[1].is_terminal());
    }
}
