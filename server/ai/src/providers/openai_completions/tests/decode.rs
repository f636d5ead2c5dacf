//! The decoder on every fixture transcript.

use serde_json::json;

use super::decode_support::*;
use crate::error::ProviderError;
use crate::http::VecSource;
use crate::types::{AssistantBlock, StopReason};

#[tokio::test]
async fn text_with_usage_and_cost() {
    let out = run(&fixture("text.sse")).await;
    assert_eq!(out.result, Ok(StopReason::Stop));
    let m = &out.message;
    assert_eq!(
        m.text(),
        "Hello! The file `hello.txt` contains one line: “héllo wörld” 👋."
    );
    assert_eq!(m.content.len(), 1);
    assert_eq!(
        m.response_id.as_deref(),
        Some("chatcmpl-C3kq9ZrF1uXw2pLmN8vB4tYh7sDe")
    );
    assert_eq!(
        (
            m.usage.input,
            m.usage.output,
            m.usage.cache_read,
            m.usage.total_tokens
        ),
        (226, 18, 1024, 1268)
    );
    let expected = 226.0 * 0.4e-6 + 18.0 * 1.6e-6 + 1024.0 * 0.1e-6;
    assert!(
        (m.usage.cost.total - expected).abs() < 1e-12,
        "{:?}",
        m.usage.cost
    );
    assert_eq!(out.kinds("text_delta"), 11);
}

#[tokio::test]
async fn chunked_delivery_decodes_the_same() {
    let whole = run(&fixture("text.sse")).await;
    let body = fixture("text-chunked.sse");
    assert!(fixture_file("text-chunked.sse").contains("chunk: 7"));
    let chunked = run_source(Chunked::new(&body, 7)).await;
    assert_eq!(chunked.result, Ok(StopReason::Stop));
    assert_eq!(chunked.message.content, whole.message.content);
    assert_eq!(chunked.message.usage, whole.message.usage);
}

#[tokio::test]
async fn reasoning_content_then_text() {
    let out = run(&fixture("thinking.sse")).await;
    assert_eq!(out.result, Ok(StopReason::Stop));
    assert_eq!(
        thinking(&out.message),
        vec![(
            "The user asks for 17 × 23. 17 × 20 = 340, 17 × 3 = 51, so 391.".to_string(),
            Some("reasoning_content".to_string())
        )]
    );
    assert_eq!(out.message.text(), "17 × 23 = **391**.");
    assert!(matches!(
        out.message.content[0],
        AssistantBlock::Thinking(_)
    ));
    // pi adds reasoning tokens to completion tokens.
    let u = out.message.usage;
    assert_eq!(
        (u.input, u.output, u.cache_read, u.total_tokens),
        (21, 116, 0, 137)
    );
}

#[tokio::test]
async fn reasoning_field_is_the_signature() {
    let out = run(&fixture("thinking-reasoning-field.sse")).await;
    assert_eq!(out.result, Ok(StopReason::Stop));
    assert_eq!(
        thinking(&out.message),
        vec![(
            "User says hi. Respond briefly.".to_string(),
            Some("reasoning".to_string())
        )]
    );
    assert_eq!(out.message.text(), "Hi there!");
    assert_eq!(out.message.usage.total_tokens, 91);
}

#[tokio::test]
async fn one_tool_call_streamed_in_pieces() {
    let out = run(&fixture("tool-call.sse")).await;
    assert_eq!(out.result, Ok(StopReason::ToolUse));
    let calls: Vec<_> = out.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_RZ4xk2mQbEAqDvWh0sT7yL9c");
    assert_eq!(calls[0].name, "read");
    assert_eq!(
        calls[0].arguments,
        json!({"path": "src/main.rs", "offset": 10, "limit": 40})
    );
    assert!(out.kinds("toolcall_delta") > 10);
    assert_eq!(out.kinds("toolcall_start"), 1);
    assert_eq!(out.kinds("toolcall_end"), 1);
}

#[tokio::test]
async fn text_then_parallel_tool_calls() {
    let out = run(&fixture("tool-calls.sse")).await;
    assert_eq!(out.result, Ok(StopReason::ToolUse));
    assert_eq!(out.message.text(), "I'll read both files.");
    let calls: Vec<_> = out.message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].arguments, json!({"path": "a.txt"}));
    assert_eq!(calls[1].id, "call_Fj2sD8kL0pQ6wE4rT1yU9iO3");
    assert_eq!(calls[1].name, "bash");
    assert_eq!(
        calls[1].arguments,
        json!({"command": "ls -la \"my dir\"", "timeout": 30})
    );
    assert_eq!(out.message.content.len(), 3);
}

#[tokio::test]
async fn length_stop() {
    let out = run(&fixture("length.sse")).await;
    assert_eq!(out.result, Ok(StopReason::Length));
    assert_eq!(out.message.text(), "Once upon a time, in a");
}

#[tokio::test]
async fn content_filter_is_an_error_that_keeps_text_and_usage() {
    let out = run(&fixture("content-filter.sse")).await;
    let Err(ProviderError::Provider { message, .. }) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(message.contains("content filter"), "{message}");
    assert_eq!(out.message.stop_reason, StopReason::Error);
    assert_eq!(out.message.text(), "Here is how");
    assert_eq!(out.message.usage.input, 44);
}

#[tokio::test]
async fn error_object_inside_the_stream() {
    let out = run(&fixture("in-stream-error.sse")).await;
    let Err(ProviderError::Provider { provider, message }) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert_eq!(provider, "openai");
    assert!(
        message.starts_with("Provider returned error (502)"),
        "{message}"
    );
    assert!(message.contains("Overloaded"), "{message}");
    assert_eq!(out.message.text(), "Let me check");
}

#[tokio::test]
async fn open_router_encrypted_reasoning_signs_the_tool_call() {
    let out = run(&fixture("openrouter-reasoning-details.sse")).await;
    assert_eq!(out.result, Ok(StopReason::ToolUse));
    assert_eq!(thinking(&out.message)[0].1.as_deref(), Some("reasoning"));
    let call = out.message.tool_calls().next().expect("call");
    assert_eq!(call.arguments, json!({"command": "ls"}));
    let signature: serde_json::Value =
        serde_json::from_str(call.thought_signature.as_deref().expect("signature")).expect("json");
    assert_eq!(signature["data"], json!("CiQB0e2Kb3ZxR2Y5c1pQ=="));
    assert_eq!(out.message.usage.output, 58);
}

#[tokio::test]
async fn done_without_finish_reason_is_incomplete() {
    let out = run(&fixture("no-finish.sse")).await;
    let Err(ProviderError::Incomplete { detail, .. }) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(
        detail.contains("[DONE]") && detail.contains("finish_reason"),
        "{detail}"
    );
    assert_eq!(out.message.text(), "Partial answer");
}

#[tokio::test]
async fn cut_stream_fails() {
    assert!(fixture_file("cut.sse").contains("cut: true"));
    let out = run(&fixture("cut.sse")).await;
    assert!(
        matches!(
            out.result,
            Err(ProviderError::Malformed { .. } | ProviderError::Incomplete { .. })
        ),
        "{:?}",
        out.result
    );
    assert!(out.message.text().starts_with("Hello! The file"));

    // A connection that breaks between events keeps the transport's error.
    let body = fixture("text.sse");
    let first = &body[..body.find("\n\n").expect("event") + 2];
    let dropped = ProviderError::Dropped {
        provider: "openai".into(),
        detail: "connection reset".into(),
    };
    let out = run_source(VecSource::from_body(first).then_fail(dropped.clone())).await;
    assert_eq!(out.result, Err(dropped));
}

#[tokio::test]
async fn garbage_data_is_malformed() {
    let out = run(&fixture("garbage.sse")).await;
    let Err(ProviderError::Malformed { detail, .. }) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(detail.contains("502 Bad Gateway"), "{detail}");
    assert_eq!(out.message.text(), "Hi");
}

#[tokio::test]
async fn empty_body_is_incomplete() {
    let out = run(&fixture("empty.sse")).await;
    let Err(ProviderError::Incomplete { detail, .. }) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(detail.contains("no chunks"), "{detail}");
}

#[test]
fn http_error_fixtures_carry_status_and_json_bodies() {
    for (name, status) in [
        ("http-429.sse", "status: 429"),
        ("http-500.sse", "status: 500"),
    ] {
        let file = fixture_file(name);
        assert!(file.lines().any(|l| l == status), "{name}");
        let body: serde_json::Value = serde_json::from_str(&fixture(name)).expect("json body");
        assert!(body["error"]["message"].is_string(), "{name}");
    }
    assert!(fixture_file("http-429.sse").contains("header: retry-after: 7"));
}
