//! The decoder on every fixture transcript in `fixtures/providers/google-generative-ai`.

use serde_json::json;

use super::*;
use crate::event::AssistantMessageEvent;
use crate::http::VecSource;
use crate::model::{Api, InputKind, ModelCost};
use crate::stream::AssistantStream;
use crate::types::{AssistantBlock, AssistantMessage};

const SIG_TEXT: &str = "CpYC6vLBJ0LLjBYby9hLAyubuYmZojKCVCZyygHMbt0mj33OmYetayvHkwVjT4nZC5AQK81ZpX5xNbjjzrk8BZcRey1xFkK3JrBEAWI=";
const SIG_CALL: &str = "Cs4BOd7MQmOTBQ6/z+AZE1uYd1kEMaZfkrqiH6ktuxLhfayd5j4YTTe4jNJG4g6QQqpd2HM=";

fn model() -> Model {
    Model {
        id: "gemini-2.5-flash".into(),
        name: "Gemini 2.5 Flash".into(),
        api: Api::GoogleGenerativeAi,
        provider: "google".into(),
        base_url: "https://generativelanguage.googleapis.com/v1beta".into(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 0.3,
            output: 2.5,
            cache_read: 0.075,
            cache_write: 0.0,
        },
        context_window: 1_048_576,
        max_tokens: 65_536,
        headers: None,
        compat: None,
    }
}

/// The body of a fixture: everything after the header block's empty line.
fn fixture_body(name: &str) -> String {
    let path = format!(
        "{}/../../fixtures/providers/google-generative-ai/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end_matches(['\r', '\n']).is_empty() {
            return text[offset..].to_string();
        }
    }
    panic!("{path} has no empty line after its header block")
}

struct Outcome {
    result: Result<StopReason, ProviderError>,
    message: AssistantMessage,
    events: Vec<AssistantMessageEvent>,
}

async fn run_source(source: VecSource) -> Outcome {
    let model = model();
    let (mut writer, mut stream) = AssistantStream::channel(&model);
    let collector = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    });
    let result = decode(source, &mut writer, &model).await;
    let message = writer.message().clone();
    match &result {
        Ok(reason) => writer.finish(*reason).await,
        Err(e) => writer.fail(StopReason::Error, e.to_string()).await,
    }
    let events = collector.await.expect("collector task");
    Outcome {
        result,
        message,
        events,
    }
}

async fn run(name: &str) -> Outcome {
    run_source(VecSource::from_body(&fixture_body(name))).await
}

fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind()).collect()
}

fn error_text(result: &Result<StopReason, ProviderError>) -> String {
    match result {
        Err(e) => e.to_string(),
        Ok(reason) => panic!("expected an error, got {reason:?}"),
    }
}

fn assert_generated_id(id: &str, name: &str) {
    let rest = id
        .strip_prefix(&format!("{name}_"))
        .unwrap_or_else(|| panic!("{id} does not start with {name}_"));
    let (millis, n) = rest.split_once('_').unwrap_or_else(|| panic!("{id}"));
    assert!(
        millis.parse::<u64>().is_ok() && n.parse::<u64>().is_ok(),
        "{id}"
    );
}

#[tokio::test]
async fn text_with_usage_and_cost() {
    let out = run("text.sse").await;
    assert_eq!(out.result, Ok(StopReason::Stop));
    let m = &out.message;
    assert_eq!(
        m.text(),
        "The capital of France is Paris. It is known for the Eiffel Tower, the Louvre and its cafés.\n"
    );
    assert_eq!(m.response_id.as_deref(), Some("mPo0aOa9MuKNz7IP2ZS_0Ag"));
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (8, 21, 29)
    );
    assert!((m.usage.cost.output - 2.5 * 21.0 / 1e6).abs() < 1e-12);
    assert!((m.usage.cost.total - (0.3 * 8.0 + 2.5 * 21.0) / 1e6).abs() < 1e-12);
    assert_eq!(
        kinds(&out.events),
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
}

async fn check_thinking(name: &str) {
    let out = run(name).await;
    assert_eq!(out.result, Ok(StopReason::Stop), "{name}");
    let m = &out.message;
    let [AssistantBlock::Thinking(thinking), AssistantBlock::Text(text)] = m.content.as_slice()
    else {
        panic!("{name}: {:?}", m.content)
    };
    assert!(thinking
        .thinking
        .starts_with("**Counting the letters**\n\nThe user wants"));
    assert!(thinking.thinking.ends_with("Naïve counting agrees. 🍓"));
    assert_eq!(thinking.thinking_signature, None);
    assert_eq!(text.text, "There are **three** r's in \"strawberry\".");
    assert_eq!(text.text_signature.as_deref(), Some(SIG_TEXT));
    // 2058 prompt tokens of which 2048 cached; 12 answer + 187 thought tokens.
    assert_eq!(
        (
            m.usage.input,
            m.usage.cache_read,
            m.usage.output,
            m.usage.total_tokens
        ),
        (10, 2048, 199, 2257)
    );
    assert!((m.usage.cost.cache_read - 0.075 * 2048.0 / 1e6).abs() < 1e-12);
}

#[tokio::test]
async fn thinking_then_signed_text() {
    check_thinking("thinking.sse").await;
}

#[tokio::test]
async fn chunked_crlf_transcript_decodes_the_same() {
    check_thinking("thinking-chunked.sse").await;
}

#[tokio::test]
async fn one_whole_tool_call_forces_tool_use() {
    let out = run("tool-call.sse").await;
    assert_eq!(
        out.result,
        Ok(StopReason::ToolUse),
        "finishReason STOP with a call"
    );
    let calls: Vec<_> = out.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "read");
    assert_eq!(
        calls[0].arguments,
        json!({"path": "src/main.rs", "offset": 1, "limit": 80})
    );
    assert_eq!(calls[0].thought_signature.as_deref(), Some(SIG_CALL));
    assert_generated_id(&calls[0].id, "read");
    assert_eq!(
        kinds(&out.events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    let Some(AssistantMessageEvent::Done { message, .. }) = out.events.last() else {
        panic!("no done event")
    };
    assert_eq!(message.tool_calls().next(), Some(calls[0]));
}

#[tokio::test]
async fn parallel_calls_get_unique_ids_and_default_args() {
    let out = run("tool-calls.sse").await;
    assert_eq!(out.result, Ok(StopReason::ToolUse));
    let calls: Vec<_> = out.message.tool_calls().collect();
    let summary: Vec<_> = calls
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.arguments.clone(),
                c.thought_signature.is_some(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("read", json!({"path": "a.txt"}), true),
            ("read", json!({"path": "b.txt"}), false),
            ("bash", json!({"command": "ls -la", "timeout": 30}), false),
            ("list_todos", json!({}), false),
        ]
    );
    for call in &calls {
        assert_generated_id(&call.id, &call.name);
    }
    let mut ids: Vec<_> = calls.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "ids are unique: {ids:?}");
}

#[tokio::test]
async fn provided_ids_are_kept_unless_repeated_or_empty() {
    let out = run("duplicate-ids.sse").await;
    assert_eq!(out.result, Ok(StopReason::ToolUse));
    let calls: Vec<_> = out.message.tool_calls().collect();
    assert_eq!(calls[0].id, "k7f0w2ab");
    assert_generated_id(&calls[1].id, "read");
    assert_generated_id(&calls[2].id, "read");
    assert_ne!(calls[1].id, calls[2].id);
    assert_eq!(out.message.usage.output, 45 + 85);
}

#[tokio::test]
async fn max_tokens_is_length() {
    let out = run("length.sse").await;
    assert_eq!(out.result, Ok(StopReason::Length));
    assert!(out
        .message
        .text()
        .ends_with("starting with the founding of"));
    assert_eq!(out.message.usage.output, 16 + 1008);
}

#[tokio::test]
async fn abnormal_finish_reasons_are_errors_that_keep_the_text() {
    for (name, words) in [
        ("safety.sse", "finishReason SAFETY"),
        ("recitation.sse", "finishReason RECITATION"),
        (
            "malformed-function-call.sse",
            "finishReason MALFORMED_FUNCTION_CALL): the model produced a tool call Gemini could not parse. Malformed function call: print(",
        ),
    ] {
        let out = run(name).await;
        let err = error_text(&out.result);
        assert!(err.starts_with("google error: Gemini stopped the response"), "{name}: {err}");
        assert!(err.contains(words), "{name}: {err}");
        let Some(AssistantMessageEvent::Error { error, .. }) = out.events.last() else {
            panic!("{name}: no error event")
        };
        assert_eq!(error.stop_reason, StopReason::Error);
        assert!(error.usage.input > 0, "{name}: usage is kept");
    }
    let out = run("safety.sse").await;
    assert_eq!(out.message.text(), "To make that compound you would");
}

#[tokio::test]
async fn blocked_prompt_is_an_error() {
    let out = run("prompt-blocked.sse").await;
    let err = error_text(&out.result);
    assert!(err.contains("blockReason PROHIBITED_CONTENT"), "{err}");
    assert_eq!(out.message.usage.input, 12);
    assert_eq!(
        out.message.response_id.as_deref(),
        Some("f4U7aPu2LOeVz7IPnq7DyAs")
    );
}

#[tokio::test]
async fn error_object_in_the_stream_is_a_provider_error() {
    let out = run("in-stream-error.sse").await;
    assert_eq!(
        out.result,
        Err(ProviderError::Provider {
            provider: "google".into(),
            message: "The model is overloaded. Please try again later. (UNAVAILABLE, HTTP 503)"
                .into(),
        })
    );
    assert_eq!(out.message.text(), "Sure, here is the plan:");
}

#[tokio::test]
async fn a_stream_without_finish_reason_is_incomplete() {
    let out = run("no-finish.sse").await;
    let Err(ProviderError::Incomplete { detail, .. }) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(detail.contains("finishReason"), "{detail}");
    assert_eq!(out.message.text(), "The first step is to");

    let out = run("empty.sse").await;
    let Err(ProviderError::Incomplete { detail, .. }) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(detail.contains("empty"), "{detail}");
}

#[tokio::test]
async fn cut_and_garbage_bodies_are_malformed() {
    for name in ["cut.sse", "garbage.sse"] {
        let out = run(name).await;
        let Err(ProviderError::Malformed { provider, detail }) = &out.result else {
            panic!("{name}: {:?}", out.result)
        };
        assert_eq!(provider, "google");
        assert!(detail.contains("not JSON"), "{name}: {detail}");
    }
}

#[tokio::test]
async fn a_dropped_connection_passes_through() {
    let dropped = ProviderError::Dropped {
        provider: "google".into(),
        detail: "connection reset".into(),
    };
    let body = fixture_body("no-finish.sse");
    let out = run_source(VecSource::from_body(&body).then_fail(dropped.clone())).await;
    assert_eq!(out.result, Err(dropped));
    assert_eq!(out.message.text(), "The first step is to");
}

#[tokio::test]
async fn json_that_is_not_a_response_object_is_malformed() {
    let out = run_source(VecSource::from_body("data: [1,2]\n\n")).await;
    assert!(
        matches!(out.result, Err(ProviderError::Malformed { .. })),
        "{:?}",
        out.result
    );
    let out = run_source(VecSource::from_body("data: {\"candidates\": 5}\n\n")).await;
    assert!(
        matches!(out.result, Err(ProviderError::Malformed { .. })),
        "{:?}",
        out.result
    );
}

#[test]
fn error_objects_of_any_shape_read_well() {
    assert_eq!(
        error_message(&json!({"code": 429, "message": "slow down"})),
        "slow down (HTTP 429)"
    );
    assert_eq!(error_message(&json!("quota")), "quota");
    assert_eq!(error_message(&json!({})), "unknown error");
}
