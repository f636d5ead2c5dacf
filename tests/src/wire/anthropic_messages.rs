//! Anthropic Messages: `message_start` (input usage), one `content_block_start` / deltas /
//! `content_block_stop` run per block (a `ping` after the first start, as Anthropic sends it),
//! `message_delta` (stop reason, output usage), `message_stop`.

use serde_json::{json, Value};

use super::{event, pieces, Finish, Turn, MODEL};

/// The body for `t`.
pub(super) fn encode(t: &Turn) -> String {
    let mut out = String::new();
    let u = t.usage;
    event(
        &mut out,
        Some("message_start"),
        &json!({"type": "message_start", "message": {
        "id": format!("msg_01{}", t.tag()), "type": "message", "role": "assistant", "model": MODEL,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": u.input, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": u.cache_read, "output_tokens": 1}}}),
    );
    let mut index = 0;
    let mut block = |out: &mut String, start: Value, deltas: Vec<Value>| {
        event(
            out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
        if index == 0 {
            event(out, Some("ping"), &json!({"type": "ping"}));
        }
        for delta in deltas {
            event(
                out,
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            );
        }
        event(
            out,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    };
    if let Some(text) = t.text_part() {
        let deltas = pieces(text, 8)
            .into_iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    for call in &t.tool_calls {
        let args = call.args.to_string();
        let deltas = std::iter::once("")
            .chain(pieces(&args, 10))
            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
            .collect();
        let start = json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}});
        block(&mut out, start, deltas);
    }
    let stop = match t.effective_finish() {
        Finish::Stop => "end_turn",
        Finish::Length => "max_tokens",
        Finish::ToolUse => "tool_use",
    };
    event(
        &mut out,
        Some("message_delta"),
        &json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": u.output}}),
    );
    event(
        &mut out,
        Some("message_stop"),
        &json!({"type": "message_stop"}),
    );
    out
}
