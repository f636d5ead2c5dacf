//! OpenAI chat-completions streaming answers for the mock, built as JSON so every text is
//! escaped correctly. The shapes follow `fixtures/providers/openai-completions/*.sse`: chunks
//! with `choices[0].delta`, a last chunk with `finish_reason` and usage, then `[DONE]`.

use serde_json::{json, Value};
use tandem_tests::mock_llm::MockResponse;

/// One streamed answer, built piece by piece in the order the provider would send them.
pub struct Answer {
    id: String,
    deltas: Vec<Value>,
    calls: usize,
}

impl Answer {
    /// An answer whose chunks carry `id` (it becomes the message's `responseId`).
    pub fn new(id: &str) -> Answer {
        Answer {
            id: id.to_string(),
            deltas: Vec::new(),
            calls: 0,
        }
    }

    /// Reasoning text in `delta.reasoning_content` (a thinking block).
    pub fn reasoning(mut self, text: &str) -> Answer {
        self.deltas
            .push(json!({ "role": "assistant", "content": "", "reasoning_content": text }));
        self
    }

    /// Visible text in `delta.content`.
    pub fn text(mut self, text: &str) -> Answer {
        self.deltas
            .push(json!({ "role": "assistant", "content": text }));
        self
    }

    /// One whole tool call in a single delta.
    pub fn tool_call(mut self, call_id: &str, name: &str, arguments: &Value) -> Answer {
        self.deltas.push(json!({ "tool_calls": [{
            "index": self.calls,
            "id": call_id,
            "type": "function",
            "function": { "name": name, "arguments": arguments.to_string() }
        }] }));
        self.calls += 1;
        self
    }

    /// One tool call streamed as a provider sends it: a delta naming the call with empty
    /// arguments, then the arguments' JSON in pieces of `piece` bytes (ASCII arguments).
    pub fn streamed_tool_call(
        mut self,
        call_id: &str,
        name: &str,
        arguments: &Value,
        piece: usize,
    ) -> Answer {
        let index = self.calls;
        self.deltas.push(json!({ "tool_calls": [{
            "index": index,
            "id": call_id,
            "type": "function",
            "function": { "name": name, "arguments": "" }
        }] }));
        let text = arguments.to_string();
        for chunk in text.as_bytes().chunks(piece.max(1)) {
            let chunk = String::from_utf8_lossy(chunk);
            self.deltas.push(json!({ "tool_calls": [{
                "index": index,
                "function": { "arguments": chunk }
            }] }));
        }
        self.calls += 1;
        self
    }

    /// The SSE body: the deltas, a finish chunk with usage (`tool_calls` when the answer has
    /// calls, else `stop`) and `[DONE]`.
    pub fn body(&self) -> String {
        let finish = if self.calls > 0 { "tool_calls" } else { "stop" };
        let mut chunks: Vec<Value> = self
            .deltas
            .iter()
            .map(|delta| self.chunk(delta.clone(), None))
            .collect();
        let mut last = self.chunk(json!({}), Some(finish));
        last["usage"] =
            json!({ "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120 });
        chunks.push(last);
        let mut out = String::new();
        for c in chunks {
            out.push_str("data: ");
            out.push_str(&c.to_string());
            out.push_str("\n\n");
        }
        out.push_str("data: [DONE]\n\n");
        out
    }

    /// The answer as a mock response.
    pub fn response(&self) -> MockResponse {
        MockResponse::sse(self.body())
    }

    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1_754_300_000,
            "model": "mock-model",
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }]
        })
    }
}

/// A plain text answer.
pub fn text(id: &str, text: &str) -> MockResponse {
    Answer::new(id).text(text).response()
}
