//! The decoder on every fixture transcript and on edge cases of the wire format.

use serde_json::json;

use super::*;
use crate::event::AssistantMessageEvent;
use crate::http::VecSource;
use crate::providers::anthropic::test_support::model;
use crate::stream::AssistantStream;
use crate::types::{AssistantBlock, AssistantMessage, ThinkingContent};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/providers/anthropic-messages"
);

/// The body of a fixture: everything after the header block's first empty line.
fn fixture(name: &str) -> String {
    let path = format!("{FIXTURES}/{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    match text.split_once("\n\n") {
        Some((_, body)) => body.to_string(),
        None => String::new(),
    }
}

struct Run {
    result: Result<StopReason, ProviderError>,
    /// The message of the terminal event, as the runner would deliver it.
    message: AssistantMessage,
    events: Vec<AssistantMessageEvent>,
}

impl Run {
    fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.kind()).collect()
    }
}

async fn run_source(source: VecSource) -> Run {
    let m = model("claude-sonnet-4-5");
    let (mut writer, mut stream) = AssistantStream::channel(&m);
    let collector = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    });
    let result = decode(source, &mut writer, &m).await;
    match &result {
        Ok(reason) => writer.finish(*reason).await,
        Err(e) => writer.fail(StopReason::Error, e.to_string()).await,
    }
    let events = collector.await.expect("collector runs");
    let message = match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => message.clone(),
        Some(AssistantMessageEvent::Error { error, .. }) => error.clone(),
        other => panic!("no terminal event: {other:?}"),
    };
    Run {
        result,
        message,
        events,
    }
}

async fn run(body: &str) -> Run {
    run_source(VecSource::from_body(body)).await
}

async fn run_fixture(name: &str) -> Run {
    run(&fixture(name)).await
}

fn thinking_blocks(message: &AssistantMessage) -> Vec<&ThinkingContent> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Thinking(t) => Some(t),
            _ => None,
        })
        .collect()
}

fn provider_message(result: &Result<StopReason, ProviderError>) -> &str {
    match result {
        Err(ProviderError::Provider { message, .. }) => message,
        other => panic!("expected a provider error, got {other:?}"),
    }
}

#[tokio::test]
async fn text_with_usage_cost_and_response_id() {
    let run = run_fixture("text.sse").await;
    assert_eq!(run.result, Ok(StopReason::Stop));
    assert_eq!(
        run.kinds(),
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    let m = &run.message;
    assert_eq!(m.text(), "Hello! How can I help you today?");
    assert_eq!(
        m.response_id.as_deref(),
        Some("msg_01XFDUDYJgAACzvnptvVoYEL")
    );
    let u = m.usage;
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (472, 12, 2048, 1024)
    );
    assert_eq!(u.total_tokens, 472 + 12 + 2048 + 1024);
    let expected = (472.0 * 3.0 + 12.0 * 15.0 + 2048.0 * 0.3 + 1024.0 * 3.75) / 1e6;
    assert!((u.cost.total - expected).abs() < 1e-12, "{:?}", u.cost);
}

#[tokio::test]
async fn chunked_multibyte_text() {
    let run = run_fixture("text-chunked.sse").await;
    assert_eq!(run.result, Ok(StopReason::Stop));
    assert_eq!(run.message.text(), "Héllo wörld ✓ — naïve café 🦀");
}

#[tokio::test]
async fn thinking_with_streamed_signature_then_text() {
    let run = run_fixture("thinking.sse").await;
    assert_eq!(run.result, Ok(StopReason::Stop));
    let thinking = thinking_blocks(&run.message);
    assert_eq!(thinking.len(), 1);
    assert_eq!(
        thinking[0].thinking,
        "The user asks for 27 * 453. 27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231."
    );
    assert_eq!(
        thinking[0].thinking_signature.as_deref(),
        Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+KK3bhm6NzdNYUJ3zVFp3kRxuFk0W7tvZm03Q==")
    );
    assert_eq!(run.message.text(), "27 × 453 = **12,231**");
    assert_eq!(
        (run.message.usage.input, run.message.usage.output),
        (85, 96)
    );
    assert_eq!(
        run.kinds()[1..4],
        ["thinking_start", "thinking_delta", "thinking_delta"]
    );
}

#[tokio::test]
async fn redacted_thinking_keeps_its_payload_as_the_signature() {
    let run = run_fixture("redacted-thinking.sse").await;
    assert_eq!(run.result, Ok(StopReason::Stop));
    let thinking = thinking_blocks(&run.message);
    assert_eq!(thinking.len(), 2);
    assert_eq!(thinking[0].redacted, Some(true));
    assert_eq!(thinking[0].thinking, "");
    assert!(thinking[0]
        .thinking_signature
        .as_deref()
        .is_some_and(|s| s.starts_with("EmwKAhgBEgy3va3pzix")));
    assert_eq!(thinking[1].redacted, None);
    assert_eq!(
        thinking[1].thinking_signature.as_deref(),
        Some("ErUBCkYIBRgCIkB0c2lnbmF0dXJl")
    );
    assert!(run.events.iter().any(|e| matches!(
        e,
        AssistantMessageEvent::ThinkingEnd {
            content_index: 0,
            redacted: true,
            ..
        }
    )));
    assert_eq!(run.message.text(), "Here is what I can share.");
}

#[tokio::test]
async fn one_tool_call_with_arguments_in_small_pieces() {
    let run = run_fixture("tool-call.sse").await;
    assert_eq!(run.result, Ok(StopReason::ToolUse));
    assert_eq!(run.message.text(), "Let me read the file.");
    let calls: Vec<_> = run.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    assert_eq!(calls[0].name, "read");
    assert_eq!(
        calls[0].arguments,
        json!({"path": "src/main.rs", "offset": 10, "limit": 40})
    );
    let deltas = run
        .kinds()
        .iter()
        .filter(|k| **k == "toolcall_delta")
        .count();
    assert_eq!(deltas, 11, "the empty first piece sends no delta");
}

#[tokio::test]
async fn several_tool_calls() {
    let run = run_fixture("tool-calls.sse").await;
    assert_eq!(run.result, Ok(StopReason::ToolUse));
    let calls: Vec<_> = run
        .message
        .tool_calls()
        .map(|c| (c.name.as_str(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("read", json!({"path": "Cargo.toml"})),
            ("bash", json!({"command": "ls -la"})),
            ("ls", json!({})),
        ]
    );
    assert_eq!(run.message.usage.cache_read, 3000);
}

#[tokio::test]
async fn stop_reasons_map_like_pi() {
    for (name, reason) in [
        ("max-tokens.sse", StopReason::Length),
        ("pause-turn.sse", StopReason::Stop),
        ("stop-sequence.sse", StopReason::Stop),
    ] {
        let run = run_fixture(name).await;
        assert_eq!(run.result, Ok(reason), "{name}");
        assert!(!run.message.text().is_empty(), "{name}");
    }
}

#[tokio::test]
async fn refusals_become_errors_that_keep_the_text() {
    let run = run_fixture("refusal.sse").await;
    assert!(provider_message(&run.result).contains("refusal"));
    assert_eq!(run.message.stop_reason, StopReason::Error);
    assert_eq!(run.message.text(), "I can't help with that.");
    let run = run_fixture("sensitive.sse").await;
    assert!(provider_message(&run.result).contains("safety filter"));
}

#[tokio::test]
async fn in_stream_overload_is_a_provider_error() {
    let run = run_fixture("in-stream-error.sse").await;
    assert_eq!(
        provider_message(&run.result),
        "overloaded_error: Overloaded"
    );
    let error = run.message.error_message.as_deref().unwrap_or_default();
    assert_eq!(error, "anthropic error: overloaded_error: Overloaded");
    assert_eq!(run.message.text(), "Let me think about");
}

#[tokio::test]
async fn a_cut_stream_is_incomplete_and_keeps_the_partial_text() {
    let run = run_fixture("cut.sse").await;
    assert!(
        matches!(&run.result, Err(ProviderError::Incomplete { detail, .. }) if detail.contains("cut off")),
        "{:?}",
        run.result
    );
    assert_eq!(run.message.text(), "The partial");

    let run = run_fixture("missing-message-stop.sse").await;
    assert!(
        matches!(run.result, Err(ProviderError::Incomplete { .. })),
        "{:?}",
        run.result
    );
    assert_eq!(run.message.text(), "Almost done");

    let run = run_fixture("empty.sse").await;
    assert!(
        matches!(&run.result, Err(ProviderError::Incomplete { detail, .. }) if detail.contains("empty")),
        "{:?}",
        run.result
    );
}

#[tokio::test]
async fn garbage_data_is_malformed() {
    let run = run_fixture("garbage.sse").await;
    assert!(
        matches!(run.result, Err(ProviderError::Malformed { .. })),
        "{:?}",
        run.result
    );
}

#[tokio::test]
async fn a_dropped_connection_is_reported_as_such() {
    let body = fixture("missing-message-stop.sse");
    let dropped = ProviderError::Dropped {
        provider: "anthropic".into(),
        detail: "connection reset".into(),
    };
    let run = run_source(VecSource::from_body(&body).then_fail(dropped.clone())).await;
    assert_eq!(run.result, Err(dropped));
}

#[tokio::test]
async fn no_fixture_body_panics() {
    let entries = std::fs::read_dir(FIXTURES).expect("fixture directory");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let run = run_fixture(&name).await;
        assert!(run.events.last().is_some_and(|e| e.is_terminal()), "{name}");
    }
}

const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n";
const STOP: &str = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

#[tokio::test]
async fn message_delta_overwrites_only_the_usage_it_carries() {
    let body = format!(
        "{START}event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"input_tokens\":null,\"output_tokens\":7,\"cache_read_input_tokens\":5}}}}\n\n{STOP}"
    );
    let run = run(&body).await;
    assert_eq!(run.result, Ok(StopReason::Stop));
    let u = run.message.usage;
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.total_tokens
        ),
        (100, 7, 5, 0, 112)
    );
}

#[tokio::test]
async fn unknown_stop_reasons_are_errors_naming_the_reason() {
    let body = format!(
        "{START}data: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"model_context_window_exceeded\"}},\"usage\":{{}}}}\n\n{STOP}"
    );
    let run = run(&body).await;
    assert!(provider_message(&run.result).contains("model_context_window_exceeded"));
}

#[tokio::test]
async fn whole_tool_input_in_block_start_is_kept() {
    let body = format!(
        "{START}data: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"read\",\"input\":{{\"path\":\"x\"}}}}}}\n\n\
         data: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
         data: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"tool_use\"}},\"usage\":{{\"output_tokens\":3}}}}\n\n{STOP}"
    );
    let run = run(&body).await;
    assert_eq!(run.result, Ok(StopReason::ToolUse));
    let call = run.message.tool_calls().next().expect("a call");
    assert_eq!(call.arguments, json!({"path": "x"}));
}

#[tokio::test]
async fn server_tool_blocks_stray_deltas_and_unknown_events_are_ignored() {
    let body = format!(
        "{START}data: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{{}}}}}}\n\n\
         data: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{}}\"}}}}\n\n\
         data: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
         event: content_block_start\ndata: {{\"index\":1,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n\
         data: {{\"type\":\"content_block_delta\",\"index\":7,\"delta\":{{\"type\":\"text_delta\",\"text\":\"stray\"}}}}\n\n\
         data: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"citations_delta\",\"citation\":{{}}}}}}\n\n\
         data: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"text_delta\",\"text\":\"ok\"}}}}\n\n\
         data: {{\"type\":\"some_future_event\"}}\n\n\
         data: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"output_tokens\":3}}}}\n\n{STOP}"
    );
    let run = run(&body).await;
    assert_eq!(run.result, Ok(StopReason::Stop));
    assert_eq!(run.message.content.len(), 1, "{:?}", run.message.content);
    assert_eq!(run.message.text(), "ok");
}

#[tokio::test]
async fn an_error_event_without_details_quotes_the_data() {
    let run = run("event: error\ndata: {\"type\":\"error\"}\n\n").await;
    assert!(provider_message(&run.result).contains("unrecognized error event"));
}
