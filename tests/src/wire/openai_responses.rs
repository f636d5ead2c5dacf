//! OpenAI Responses: typed events describing output items one at a time (`output_item.added`,
//! deltas, `output_item.done`), numbered by `sequence_number`, closed by `response.completed`
//! (or `response.incomplete` when the output limit was hit) carrying status and usage.

use serde_json::{json, Value};

use super::{event, pieces, Finish, Turn, CREATED, MODEL};

/// The body for `t`.
pub(super) fn encode(t: &Turn) -> String {
    let tag = t.tag();
    let response_id = format!("resp_{tag}");
    let mut out = String::new();
    let mut seq = 0u64;
    let mut emit = |out: &mut String, kind: &str, mut data: Value| {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(seq);
        seq += 1;
        event(out, Some(kind), &data);
    };
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id": response_id, "object": "response", "created_at": CREATED, "status": status,
               "error": null, "incomplete_details": null, "model": MODEL, "output": output,
               "parallel_tool_calls": true, "store": false, "usage": usage})
    };
    emit(
        &mut out,
        "response.created",
        json!({"response": response("in_progress", json!([]), Value::Null)}),
    );
    emit(
        &mut out,
        "response.in_progress",
        json!({"response": response("in_progress", json!([]), Value::Null)}),
    );
    let mut output = Vec::new();
    if let Some(text) = t.text_part() {
        let (index, item_id) = (output.len(), format!("msg_{tag}"));
        let part = |text: &str| json!({"type": "output_text", "annotations": [], "text": text});
        let item = |status: &str, content: Value| {
            json!({"id": item_id, "type": "message", "status": status, "content": content,
                   "role": "assistant"})
        };
        let at = json!({"item_id": item_id, "output_index": index, "content_index": 0});
        let with = |extra: Value| merge(&at, extra);
        emit(
            &mut out,
            "response.output_item.added",
            json!({"output_index": index, "item": item("in_progress", json!([]))}),
        );
        emit(
            &mut out,
            "response.content_part.added",
            with(json!({"part": part("")})),
        );
        for piece in pieces(text, 8) {
            emit(
                &mut out,
                "response.output_text.delta",
                with(json!({"delta": piece, "logprobs": []})),
            );
        }
        emit(
            &mut out,
            "response.output_text.done",
            with(json!({"text": text, "logprobs": []})),
        );
        emit(
            &mut out,
            "response.content_part.done",
            with(json!({"part": part(text)})),
        );
        let done = item("completed", json!([part(text)]));
        emit(
            &mut out,
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        );
        output.push(done);
    }
    for (n, call) in t.tool_calls.iter().enumerate() {
        let (call_id, item_id) = match call.id.split_once('|') {
            Some((c, i)) => (c.to_string(), i.to_string()),
            None => (call.id.clone(), format!("fc_{tag}{n}")),
        };
        let (index, args) = (output.len(), call.args.to_string());
        let item = |status: &str, args: &str| {
            json!({"id": item_id, "type": "function_call", "status": status, "arguments": args,
                   "call_id": call_id, "name": call.name})
        };
        emit(
            &mut out,
            "response.output_item.added",
            json!({"output_index": index, "item": item("in_progress", "")}),
        );
        for piece in pieces(&args, 10) {
            emit(
                &mut out,
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": index, "delta": piece}),
            );
        }
        emit(
            &mut out,
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": index, "arguments": args}),
        );
        let done = item("completed", &args);
        emit(
            &mut out,
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        );
        output.push(done);
    }
    let u = t.usage;
    let usage = json!({"input_tokens": u.input + u.cache_read,
        "input_tokens_details": {"cached_tokens": u.cache_read}, "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input + u.cache_read + u.output});
    let (kind, mut done) = match t.effective_finish() {
        Finish::Length => (
            "response.incomplete",
            response("incomplete", json!(output), usage),
        ),
        _ => (
            "response.completed",
            response("completed", json!(output), usage),
        ),
    };
    if kind == "response.incomplete" {
        done["incomplete_details"] = json!({"reason": "max_output_tokens"});
    }
    emit(&mut out, kind, json!({"response": done}));
    out
}

/// `base` with the fields of `extra` added.
fn merge(base: &Value, extra: Value) -> Value {
    let mut merged = base.clone();
    if let (Some(target), Value::Object(fields)) = (merged.as_object_mut(), extra) {
        target.extend(fields);
    }
    merged
}
