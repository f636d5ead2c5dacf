//! The decoder on small inline streams: stop-reason mapping, usage variants, tool-call block
//! boundaries and chunks that are odd but harmless.

use serde_json::json;

use super::decode_support::*;
use crate::error::ProviderError;
use crate::types::StopReason;

fn chunk(choice: serde_json::Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "c1", "object": "chat.completion.chunk", "choices": [choice]})
    )
}

#[tokio::test]
async fn finish_reason_mapping() {
    for (reason, expected) in [
        ("stop", StopReason::Stop),
        ("end", StopReason::Stop),
        ("length", StopReason::Length),
        ("tool_calls", StopReason::ToolUse),
        ("function_call", StopReason::ToolUse),
    ] {
        let body = chunk(json!({"index": 0, "delta": {}, "finish_reason": reason}));
        assert_eq!(run(&body).await.result, Ok(expected), "{reason}");
    }
    let body = chunk(json!({"index": 0, "delta": {}, "finish_reason": "eos_token"}));
    let out = run(&body).await;
    assert!(
        matches!(&out.result, Err(ProviderError::Provider { message, .. }) if message.contains("eos_token")),
        "{:?}",
        out.result
    );
}

#[tokio::test]
async fn usage_inside_the_choice_and_float_counts() {
    let body = chunk(json!({
        "index": 0,
        "delta": {"content": "ok"},
        "finish_reason": "stop",
        "usage": {"prompt_tokens": 10.0, "completion_tokens": 2, "total_tokens": 12},
    }));
    let out = run(&body).await;
    assert_eq!(out.result, Ok(StopReason::Stop));
    assert_eq!((out.message.usage.input, out.message.usage.output), (10, 2));
}

#[tokio::test]
async fn tool_call_ids_decide_blocks() {
    let delta =
        |calls: serde_json::Value| chunk(json!({"index": 0, "delta": {"tool_calls": calls}}));
    let body = [
        // A call that begins without an id gets it later: still one call.
        delta(json!([{"index": 0, "function": {"name": "read", "arguments": "{\"path\""}}])),
        delta(json!([{"index": 0, "id": "a", "function": {"arguments": ":\"x\"}"}}])),
        // The same id again continues the call; a different id starts another.
        delta(json!([{"index": 0, "id": "a", "function": {"arguments": ""}}])),
        delta(json!([{"index": 1, "id": "b", "function": {"name": "ls", "arguments": "{}"}}])),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": "tool_calls"})),
    ]
    .concat();
    let out = run(&body).await;
    assert_eq!(out.result, Ok(StopReason::ToolUse));
    let calls: Vec<_> = out.message.tool_calls().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("a", "read")
    );
    assert_eq!(calls[0].arguments, json!({"path": "x"}));
    assert_eq!((calls[1].id.as_str(), calls[1].name.as_str()), ("b", "ls"));
}

#[tokio::test]
async fn parallel_calls_interleaved_by_index_stay_apart() {
    let delta =
        |calls: serde_json::Value| chunk(json!({"index": 0, "delta": {"tool_calls": calls}}));
    let body = [
        delta(json!([{"index": 0, "id": "a", "function": {"name": "read", "arguments": "{\"path\":"}}])),
        delta(json!([{"index": 1, "id": "b", "function": {"name": "ls", "arguments": "{\"path\":"}}])),
        // Fragments name only their index; a late id or name never renames a call.
        delta(json!([{"index": 0, "function": {"arguments": "\"x\"}"}}])),
        delta(json!([{"index": 1, "id": "z", "function": {"name": "rm", "arguments": "\"y\"}"}}])),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": "tool_calls"})),
    ]
    .concat();
    let out = run(&body).await;
    assert_eq!(out.result, Ok(StopReason::ToolUse));
    let calls: Vec<_> = out.message.tool_calls().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("a", "read")
    );
    assert_eq!(calls[0].arguments, json!({"path": "x"}));
    assert_eq!((calls[1].id.as_str(), calls[1].name.as_str()), ("b", "ls"));
    assert_eq!(calls[1].arguments, json!({"path": "y"}));
}

#[tokio::test]
async fn fragments_with_neither_index_nor_id_continue_the_current_call() {
    let delta =
        |calls: serde_json::Value| chunk(json!({"index": 0, "delta": {"tool_calls": calls}}));
    let body = [
        delta(json!([{"id": "a", "function": {"name": "read", "arguments": "{\"path\""}}])),
        delta(json!([{"function": {"arguments": ":\"x\"}"}}])),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": "tool_calls"})),
    ]
    .concat();
    let out = run(&body).await;
    let calls: Vec<_> = out.message.tool_calls().collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].arguments, json!({"path": "x"}));
}

/// pi 1.6's Chat Completions order: every block stays open until the stream ends, later text
/// joins the one text block, reasoning before text within a chunk, and every tool-call
/// fragment is an event (even an empty one).
#[tokio::test]
async fn blocks_end_together_at_the_end_in_content_order() {
    let body = [
        chunk(json!({"index": 0, "delta": {"reasoning_content": "think", "content": "Hi"}})),
        chunk(json!({"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "ls", "arguments": ""}}]}})),
        chunk(json!({"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}})),
        chunk(json!({"index": 0, "delta": {"content": " there"}})),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": "tool_calls"})),
    ]
    .concat();
    let out = run(&body).await;
    assert_eq!(out.result, Ok(StopReason::ToolUse));
    let events: Vec<String> = out
        .events
        .iter()
        .map(|e| {
            let v = serde_json::to_value(e).expect("event");
            match v.get("contentIndex") {
                Some(i) => format!("{}@{i}", e.kind()),
                None => e.kind().to_string(),
            }
        })
        .collect();
    assert_eq!(
        events,
        [
            "start",
            "thinking_start@0",
            "thinking_delta@0",
            "text_start@1",
            "text_delta@1",
            "toolcall_start@2",
            "toolcall_delta@2",
            "toolcall_delta@2",
            "text_delta@1",
            "thinking_end@0",
            "text_end@1",
            "toolcall_end@2",
            "done",
        ]
    );
    assert_eq!(out.message.text(), "Hi there");
    assert_eq!(out.message.content.len(), 3);
}

#[tokio::test]
async fn odd_but_harmless_chunks_are_ignored() {
    let body = [
        "data: {\"id\":\"c1\",\"choices\":[]}\n\n".to_string(),
        ": keep-alive\n\n".to_string(),
        chunk(json!({"index": 0, "delta": {"content": null, "reasoning": null}})),
        chunk(json!({"index": 0, "delta": {"content": "x"}, "finish_reason": null})),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": "stop"})),
        "data: [DONE]\n\ndata: {\"after\":\"done\"}\n\n".to_string(),
    ]
    .concat();
    let out = run(&body).await;
    assert_eq!(out.result, Ok(StopReason::Stop));
    assert_eq!(out.message.text(), "x");
}

#[tokio::test]
async fn non_object_chunks_are_malformed() {
    let out = run("data: 42\n\n").await;
    assert!(
        matches!(out.result, Err(ProviderError::Malformed { .. })),
        "{:?}",
        out.result
    );
}
