//! OpenAI Chat Completions: `chat.completion.chunk` deltas, tool-call arguments as pieces of a
//! JSON string keyed by call index, `finish_reason` on the last content chunk, usage in a chunk
//! with empty `choices`, then `[DONE]`.

use serde_json::{json, Value};

use super::{event, pieces, Finish, Turn, CREATED, MODEL};

/// The body for `t`.
pub(super) fn encode(t: &Turn) -> String {
    let id = format!("chatcmpl-{}", t.tag());
    let mut out = String::new();
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": CREATED, "model": MODEL,
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
               "usage": null})
    };
    event(
        &mut out,
        None,
        &chunk(json!({"role": "assistant", "content": ""}), Value::Null),
    );
    for piece in t.text_part().map(|s| pieces(s, 8)).unwrap_or_default() {
        event(
            &mut out,
            None,
            &chunk(json!({"content": piece}), Value::Null),
        );
    }
    for (index, call) in t.tool_calls.iter().enumerate() {
        let head = json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                           "function": {"name": call.name, "arguments": ""}}]});
        event(&mut out, None, &chunk(head, Value::Null));
        for piece in pieces(&call.args.to_string(), 10) {
            let delta = json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
            event(&mut out, None, &chunk(delta, Value::Null));
        }
    }
    let finish = match t.effective_finish() {
        Finish::Stop => "stop",
        Finish::Length => "length",
        Finish::ToolUse => "tool_calls",
    };
    event(&mut out, None, &chunk(json!({}), json!(finish)));
    let u = t.usage;
    let usage = json!({"id": id, "object": "chat.completion.chunk", "created": CREATED,
        "model": MODEL, "choices": [], "usage": {
            "prompt_tokens": u.input + u.cache_read, "completion_tokens": u.output,
            "total_tokens": u.input + u.cache_read + u.output,
            "prompt_tokens_details": {"cached_tokens": u.cache_read, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}});
    event(&mut out, None, &usage);
    out.push_str("data: [DONE]\n\n");
    out
}
