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
