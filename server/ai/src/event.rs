//! The one streaming event protocol every provider speaks.
//!
//! pi's events each carry the whole partial message; re-sending it per token makes a long answer
//! quadratic in bytes and work. Tandem's events carry only what changed (a delta, a finished
//! block) and [`PartialMessage`] rebuilds the partial message from them in linear time, with tool
//! arguments parsed incrementally as they stream.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::partial_json::PartialJson;
use crate::types::{
    AssistantBlock, AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall,
};

/// One event of an assistant message stream.
///
/// Order: `start`, then for each content block `*_start`, any number of `*_delta`, `*_end`,
/// then exactly one terminal event: `done` or `error`. Nothing follows the terminal event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AssistantMessageEvent {
    /// The call started; `partial` is the empty message (api, provider, model, timestamp).
    Start {
        /// The message so far (empty content).
        partial: AssistantMessage,
    },
    /// A text block opened at `content_index`.
    TextStart {
        /// Index of the block in the message content.
        content_index: usize,
    },
    /// More text.
    TextDelta {
        /// Index of the block.
        content_index: usize,
        /// The new text.
        delta: String,
    },
    /// The text block is complete.
    TextEnd {
        /// Index of the block.
        content_index: usize,
        /// The whole text of the block.
        content: String,
        /// Provider signature of the block, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A thinking block opened.
    ThinkingStart {
        /// Index of the block.
        content_index: usize,
    },
    /// More reasoning text.
    ThinkingDelta {
        /// Index of the block.
        content_index: usize,
        /// The new text.
        delta: String,
    },
    /// The thinking block is complete.
    ThinkingEnd {
        /// Index of the block.
        content_index: usize,
        /// The whole reasoning text.
        content: String,
        /// Provider signature / encrypted reasoning, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// True when the reasoning was redacted.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
    },
    /// A tool call opened; its id and name are known, its arguments stream next.
    ToolcallStart {
        /// Index of the block.
        content_index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More raw argument JSON.
    ToolcallDelta {
        /// Index of the block.
        content_index: usize,
        /// The new JSON text.
        delta: String,
    },
    /// The tool call is complete, with its fully parsed arguments.
    ToolcallEnd {
        /// Index of the block.
        content_index: usize,
        /// The finished call (written with `"type": "toolCall"`, as pi does).
        #[serde(serialize_with = "as_tool_call_block")]
        tool_call: ToolCall,
    },
    /// Terminal: the call succeeded.
    Done {
        /// `stop`, `length` or `toolUse`.
        reason: StopReason,
        /// The final message.
        message: AssistantMessage,
    },
    /// Terminal: the call failed or was aborted.
    Error {
        /// `error` or `aborted`.
        reason: StopReason,
        /// The final message, with `errorMessage` set.
        error: AssistantMessage,
    },
}

fn as_tool_call_block<S: serde::Serializer>(call: &ToolCall, s: S) -> Result<S::Ok, S::Error> {
    AssistantBlock::ToolCall(call.clone()).serialize(s)
}

impl AssistantMessageEvent {
    /// True for `done` and `error`.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. }
        )
    }

    /// The event's type name as pi writes it (`text_delta`, `done`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            AssistantMessageEvent::Start { .. } => "start",
            AssistantMessageEvent::TextStart { .. } => "text_start",
            AssistantMessageEvent::TextDelta { .. } => "text_delta",
            AssistantMessageEvent::TextEnd { .. } => "text_end",
            AssistantMessageEvent::ThinkingStart { .. } => "thinking_start",
            AssistantMessageEvent::ThinkingDelta { .. } => "thinking_delta",
            AssistantMessageEvent::ThinkingEnd { .. } => "thinking_end",
            AssistantMessageEvent::ToolcallStart { .. } => "toolcall_start",
            AssistantMessageEvent::ToolcallDelta { .. } => "toolcall_delta",
            AssistantMessageEvent::ToolcallEnd { .. } => "toolcall_end",
            AssistantMessageEvent::Done { .. } => "done",
            AssistantMessageEvent::Error { .. } => "error",
        }
    }
}

/// Rebuilds the partial assistant message from events, in time linear in the streamed bytes.
///
/// Tool-call arguments are parsed incrementally: after each `toolcall_delta` the block's
/// `arguments` hold every complete key and the prefix of a string being streamed, so a UI can
/// show a file path or the start of a file's content before the call ends.
#[derive(Debug, Clone)]
pub struct PartialMessage {
    message: AssistantMessage,
    /// Raw argument text and its incremental parser, per open tool-call block.
    tool_args: Vec<Option<ToolArgs>>,
}

#[derive(Debug, Clone, Default)]
struct ToolArgs {
    raw: String,
    parser: PartialJson,
}

impl PartialMessage {
    /// Starts from the `start` event's message.
    pub fn new(message: AssistantMessage) -> Self {
        PartialMessage {
            message,
            tool_args: Vec::new(),
        }
    }

    /// The message so far.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    /// Consumes the builder, returning the message so far.
    pub fn into_message(self) -> AssistantMessage {
        self.message
    }

    /// Mutable access for providers that update usage, ids or stop reasons.
    pub fn message_mut(&mut self) -> &mut AssistantMessage {
        &mut self.message
    }

    /// The raw argument JSON received so far for the tool call at `index`.
    pub fn raw_tool_arguments(&self, index: usize) -> Option<&str> {
        self.tool_args
            .get(index)
            .and_then(|a| a.as_ref())
            .map(|a| a.raw.as_str())
    }

    /// Applies one event. Events for an index that does not exist are ignored (a provider
    /// bug must not panic a consumer).
    pub fn apply(&mut self, event: &AssistantMessageEvent) {
        use AssistantMessageEvent as E;
        match event {
            E::Start { partial } => {
                self.message = partial.clone();
                self.tool_args.clear();
            }
            E::TextStart { content_index } => {
                self.open(*content_index, AssistantBlock::Text(TextContent::default()))
            }
            E::ThinkingStart { content_index } => self.open(
                *content_index,
                AssistantBlock::Thinking(ThinkingContent::default()),
            ),
            E::ToolcallStart {
                content_index,
                id,
                name,
            } => {
                self.open(
                    *content_index,
                    AssistantBlock::ToolCall(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: Value::Object(Default::default()),
                        thought_signature: None,
                    }),
                );
                if self.tool_args.len() <= *content_index {
                    self.tool_args.resize(*content_index + 1, None);
                }
                self.tool_args[*content_index] = Some(ToolArgs::default());
            }
            E::TextDelta {
                content_index,
                delta,
            } => {
                if let Some(AssistantBlock::Text(t)) = self.message.content.get_mut(*content_index)
                {
                    t.text.push_str(delta);
                }
            }
            E::ThinkingDelta {
                content_index,
                delta,
            } => {
                if let Some(AssistantBlock::Thinking(t)) =
                    self.message.content.get_mut(*content_index)
                {
                    t.thinking.push_str(delta);
                }
            }
            E::ToolcallDelta {
                content_index,
                delta,
            } => {
                let block = self.message.content.get_mut(*content_index);
                let args = self
                    .tool_args
                    .get_mut(*content_index)
                    .and_then(|a| a.as_mut());
                if let (Some(AssistantBlock::ToolCall(call)), Some(args)) = (block, args) {
                    args.raw.push_str(delta);
                    args.parser.feed(&mut call.arguments, delta);
                }
            }
            E::TextEnd {
                content_index,
                content,
                signature,
            } => {
                if let Some(AssistantBlock::Text(t)) = self.message.content.get_mut(*content_index)
                {
                    if t.text.len() != content.len() {
                        t.text = content.clone();
                    }
                    t.text_signature = signature.clone();
                }
            }
            E::ThinkingEnd {
                content_index,
                content,
                signature,
                redacted,
            } => {
                if let Some(AssistantBlock::Thinking(t)) =
                    self.message.content.get_mut(*content_index)
                {
                    if t.thinking.len() != content.len() {
                        t.thinking = content.clone();
                    }
                    t.thinking_signature = signature.clone();
                    t.redacted = redacted.then_some(true);
                }
            }
            E::ToolcallEnd {
                content_index,
                tool_call,
            } => {
                if let Some(block) = self.message.content.get_mut(*content_index) {
                    *block = AssistantBlock::ToolCall(tool_call.clone());
                }
                if let Some(slot) = self.tool_args.get_mut(*content_index) {
                    *slot = None;
                }
            }
            E::Done { message, .. } => self.message = message.clone(),
            E::Error { error, .. } => self.message = error.clone(),
        }
    }

    fn open(&mut self, index: usize, block: AssistantBlock) {
        let content = &mut self.message.content;
        if index < content.len() {
            content[index] = block;
        } else {
            // Fill gaps defensively so indices stay meaningful even if a provider skips one.
            while content.len() < index {
                content.push(AssistantBlock::Text(TextContent::default()));
            }
            content.push(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Api;
    use serde_json::json;

    #[test]
    fn events_serialize_with_pi_names() {
        let ev = AssistantMessageEvent::ToolcallDelta {
            content_index: 2,
            delta: "{\"pa".into(),
        };
        let v = serde_json::to_value(&ev).expect("serializes");
        assert_eq!(
            v,
            json!({"type":"toolcall_delta","contentIndex":2,"delta":"{\"pa"})
        );
    }

    #[test]
    fn partial_message_tracks_streamed_tool_arguments() {
        let mut p = PartialMessage::new(AssistantMessage::empty(Api::OpenAiCompletions, "p", "m"));
        p.apply(&AssistantMessageEvent::ToolcallStart {
            content_index: 0,
            id: "c1".into(),
            name: "write".into(),
        });
        for piece in ["{\"path\": \"a.t", "xt\", \"content\": \"hel", "lo"] {
            p.apply(&AssistantMessageEvent::ToolcallDelta {
                content_index: 0,
                delta: piece.into(),
            });
        }
        let call = p.message().tool_calls().next().expect("a call");
        assert_eq!(call.arguments, json!({"path":"a.txt","content":"hello"}));
        assert_eq!(
            p.raw_tool_arguments(0),
            Some("{\"path\": \"a.txt\", \"content\": \"hello")
        );
    }
}
