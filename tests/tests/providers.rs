//! Every provider transcript in `fixtures/providers/<api>/*.sse`, replayed through a real HTTP
//! server into the real provider, must produce exactly the events and final message recorded
//! next to it in `<name>.expected.json`.
//!
//! Regenerate the expectations after an intended change with `UPDATE_EXPECT=1 cargo test -p
//! tandem-tests --test providers`, then review the diff. Besides the snapshot, every transcript
//! is checked for the stream contract: one terminal event, last; the final message equals the
//! terminal event's; the partial message rebuilt from the deltas matches it; the key travels in a
//! header, never in the URL.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use tandem_ai::{
    Api, AssistantMessageEvent, Context, InputKind, Message, Model, ModelCost, PartialMessage,
    StopReason, StreamOptions, ThinkingLevel, Tool, UserMessage,
};
use tandem_tests::mock_llm::{MockLlm, MockResponse};

const API_KEY: &str = "sk-test-0123456789";

fn fixtures_dir(api: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/providers")
        .join(api)
}

/// A model of `api` pointed at the mock server, with prices so costs are exercised.
fn model_for(api: &str, base: &str) -> Model {
    let (api_kind, provider, id, base_url) = match api {
        "openai-completions" => (
            Api::OpenAiCompletions,
            "openai",
            "gpt-4.1-mini",
            format!("{base}/v1"),
        ),
        "openai-responses" => (
            Api::OpenAiResponses,
            "openai",
            "gpt-5-mini",
            format!("{base}/v1"),
        ),
        "anthropic-messages" => (
            Api::AnthropicMessages,
            "anthropic",
            "claude-sonnet-4-5",
            base.to_string(),
        ),
        "google-generative-ai" => (
            Api::GoogleGenerativeAi,
            "google",
            "gemini-2.5-flash",
            format!("{base}/v1beta"),
        ),
        other => panic!("no model template for {other}"),
    };
    Model {
        id: id.into(),
        name: id.into(),
        api: api_kind,
        provider: provider.into(),
        base_url,
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: None,
        compat: None,
    }
}

fn context() -> Context {
    Context {
        system_prompt: Some("You are a helpful coding assistant.".into()),
        messages: vec![Message::User(UserMessage::text(
            "Read hello.txt and tell me what it says.",
        ))],
        tools: vec![Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(API_KEY.into()),
        reasoning: ThinkingLevel::Medium,
        idle_timeout: Duration::from_secs(2),
        ..StreamOptions::default()
    }
}

/// Zeroes what changes from run to run: timestamps, and the milliseconds inside generated ids.
fn normalize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "timestamp" && v.is_number() {
                    *v = json!(0);
                } else {
                    normalize(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        Value::String(s) => {
            if let Some(re) = millis_in_id() {
                if re.is_match(s) {
                    *s = re.replace_all(s, "_<millis>_").into_owned();
                }
            }
        }
        _ => {}
    }
}

fn millis_in_id() -> Option<&'static regex::Regex> {
    static RE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"_1[0-9]{12}_").ok())
        .as_ref()
}

struct Outcome {
    events: Vec<AssistantMessageEvent>,
    final_message: tandem_ai::AssistantMessage,
}

async fn replay(mock: &MockLlm, api: &str, fixture: &Path) -> Outcome {
    mock.enqueue_file(fixture)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", fixture.display()));
    let model = model_for(api, &mock.base_url());
    let mut stream = tandem_ai::stream(&model, &context(), options());
    let mut events = Vec::new();
    let run = async {
        while let Some(event) = stream.next().await {
            events.push(event);
        }
    };
    tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .unwrap_or_else(|_| panic!("{}: the stream did not end", fixture.display()));
    assert!(
        stream.next().await.is_none(),
        "nothing may follow the terminal event"
    );
    let final_message = stream
        .final_message()
        .cloned()
        .unwrap_or_else(|| panic!("{}: no final message", fixture.display()));
    Outcome {
        events,
        final_message,
    }
}

fn check_contract(name: &str, outcome: &Outcome) {
    let events = &outcome.events;
    assert!(
        matches!(events.first(), Some(AssistantMessageEvent::Start { .. })),
        "{name}: first event is start"
    );
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "{name}: exactly one terminal event");
    let last = events.last().expect("events");
    let terminal_message = match last {
        AssistantMessageEvent::Done { reason, message } => {
            assert!(!reason.is_failure(), "{name}: done with a failure reason");
            assert_eq!(*reason, message.stop_reason, "{name}: done reason");
            message
        }
        AssistantMessageEvent::Error { reason, error } => {
            assert!(reason.is_failure(), "{name}: error with a success reason");
            assert!(
                error
                    .error_message
                    .as_deref()
                    .is_some_and(|m| !m.is_empty()),
                "{name}: error without a message"
            );
            assert!(
                !error
                    .error_message
                    .as_deref()
                    .unwrap_or("")
                    .contains(API_KEY),
                "{name}: key leaked into the error"
            );
            error
        }
        other => panic!("{name}: last event is {}", other.kind()),
    };
    assert_eq!(
        terminal_message, &outcome.final_message,
        "{name}: final message"
    );
    // The partial message rebuilt from the deltas agrees with the final content on success.
    if let AssistantMessageEvent::Done { message, .. } = last {
        let mut partial: Option<PartialMessage> = None;
        for event in &events[..events.len() - 1] {
            match (&mut partial, event) {
                (None, AssistantMessageEvent::Start { partial: p }) => {
                    partial = Some(PartialMessage::new(p.clone()))
                }
                (Some(p), e) => p.apply(e),
                _ => {}
            }
        }
        let rebuilt = partial.expect("start").into_message();
        assert_eq!(
            rebuilt.content, message.content,
            "{name}: deltas rebuild the final content"
        );
    }
    // Usage cost follows the model's prices.
    let u = &outcome.final_message.usage;
    let expected_total = (u.input as f64 * 3.0
        + u.output as f64 * 15.0
        + u.cache_read as f64 * 0.3
        + u.cache_write as f64 * 3.75)
        / 1e6;
    assert!(
        (u.cost.total - expected_total).abs() < 1e-9,
        "{name}: cost {} vs {expected_total}",
        u.cost.total
    );
}

fn snapshot(outcome: &Outcome) -> Value {
    let mut value = json!({
        "events": outcome.events,
        "final": outcome.final_message,
    });
    normalize(&mut value);
    value
}

/// The JSON pointer of the first difference, with both values, or `None` when equal.
fn first_difference(expected: &Value, actual: &Value, path: String) -> Option<String> {
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys()) {
                let (x, y) = (
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                );
                if let Some(d) = first_difference(x, y, format!("{path}/{key}")) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, format!("{path}/{i}"))),
        // Costs are floats: compare them as numbers, allowing for the last digit of a decimal
        // rendering (serde_json's float parsing is not always round-trip exact).
        (Value::Number(a), Value::Number(b))
            if (a.as_f64().unwrap_or(f64::NAN) - b.as_f64().unwrap_or(f64::NAN)).abs()
                <= 1e-12 * a.as_f64().unwrap_or(0.0).abs().max(1.0) =>
        {
            None
        }
        _ if expected == actual => None,
        _ => Some(format!("{path}: expected {expected}, got {actual}")),
    }
}

async fn run_api(api: &str) {
    let dir = fixtures_dir(api);
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sse"))
        .collect();
    fixtures.sort();
    assert!(
        fixtures.len() >= 10,
        "{api}: expected a full set of transcripts"
    );
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mock = MockLlm::start().await.expect("mock server");
    let mut mismatches = Vec::new();
    for (n, fixture) in fixtures.iter().enumerate() {
        let name = format!(
            "{api}/{}",
            fixture
                .file_name()
                .map(|f| f.to_string_lossy())
                .unwrap_or_default()
        );
        let outcome = replay(&mock, api, fixture).await;
        check_contract(&name, &outcome);
        let requests = mock
            .wait_for_requests(n + 1)
            .await
            .expect("request recorded");
        let request = &requests[n];
        assert!(!request.path.contains(API_KEY), "{name}: key in the URL");
        let carried = request.headers.iter().any(|(_, v)| v.contains(API_KEY));
        assert!(carried, "{name}: the key is sent in a header");

        let actual = snapshot(&outcome);
        let expected_path = fixture.with_extension("expected.json");
        let rendered = serde_json::to_string_pretty(&actual).expect("serializes") + "\n";
        if update {
            std::fs::write(&expected_path, &rendered).expect("write expectation");
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(text) => {
                let expected: Value = serde_json::from_str(&text).expect("expectation is JSON");
                if let Some(diff) = first_difference(&expected, &actual, String::new()) {
                    mismatches.push(format!(
                        "{name}: differs from {} at {diff}",
                        expected_path.display()
                    ));
                }
            }
            Err(_) => mismatches.push(format!(
                "{name}: no {} (run with UPDATE_EXPECT=1)",
                expected_path.display()
            )),
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[tokio::test]
async fn openai_completions_transcripts() {
    run_api("openai-completions").await;
}

#[tokio::test]
async fn openai_responses_transcripts() {
    run_api("openai-responses").await;
}

#[tokio::test]
async fn anthropic_messages_transcripts() {
    run_api("anthropic-messages").await;
}

#[tokio::test]
async fn google_generative_ai_transcripts() {
    run_api("google-generative-ai").await;
}

// ---- failures on the transport, the same for every API ----

async fn one_call(
    model: &Model,
    options: StreamOptions,
) -> (Vec<AssistantMessageEvent>, tandem_ai::AssistantMessage) {
    let mut stream = tandem_ai::stream(model, &context(), options);
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(e);
    }
    let last = stream.final_message().cloned().expect("final");
    (events, last)
}

#[tokio::test]
async fn rate_limits_name_status_and_retry_after() {
    let mock = MockLlm::start().await.expect("mock");
    mock.enqueue(
        MockResponse::json(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}),
        )
        .with_header("retry-after", "7"),
    );
    let (_, msg) = one_call(
        &model_for("openai-completions", &mock.base_url()),
        options(),
    )
    .await;
    assert_eq!(msg.stop_reason, StopReason::Error);
    let err = msg.error_message.unwrap_or_default();
    assert!(err.contains("HTTP 429"), "{err}");
    assert!(err.contains("retry after 7s"), "{err}");
    assert!(err.contains("Rate limit reached"), "{err}");
}

#[tokio::test]
async fn cancellation_mid_stream_ends_in_aborted() {
    let mock = MockLlm::start().await.expect("mock");
    mock.enqueue(
        MockResponse::sse(
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
        )
        .with_stall(),
    );
    let model = model_for("openai-completions", &mock.base_url());
    let opts = StreamOptions {
        idle_timeout: Duration::from_secs(30),
        ..options()
    };
    let cancel = opts.cancel.clone();
    let mut stream = tandem_ai::stream(&model, &context(), opts);
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        if matches!(e, AssistantMessageEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        events.push(e);
    }
    let msg = stream.final_message().cloned().expect("final");
    assert_eq!(msg.stop_reason, StopReason::Aborted);
    assert_eq!(msg.error_message.as_deref(), Some("Request was aborted"));
    assert_eq!(msg.text(), "Hel", "text received before the abort is kept");
    assert!(matches!(
        events.last(),
        Some(AssistantMessageEvent::Error {
            reason: StopReason::Aborted,
            ..
        })
    ));
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let mock = MockLlm::start().await.expect("mock");
    mock.enqueue(MockResponse::sse("data: {\"id\":\"c1\",\"choices\":[]}\n\n").with_stall());
    let opts = StreamOptions {
        idle_timeout: Duration::from_millis(300),
        ..options()
    };
    let (_, msg) = one_call(&model_for("openai-completions", &mock.base_url()), opts).await;
    assert_eq!(msg.stop_reason, StopReason::Error);
    let err = msg.error_message.unwrap_or_default();
    assert!(err.contains("stalled"), "{err}");
}

#[tokio::test]
async fn a_refused_connection_is_a_clear_error() {
    // Bind then drop a listener so the port is (almost certainly) closed.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let model = model_for("anthropic-messages", &format!("http://127.0.0.1:{port}"));
    let (events, msg) = one_call(&model, options()).await;
    assert_eq!(events.len(), 2, "start and error");
    let err = msg.error_message.unwrap_or_default();
    assert!(err.contains("Could not connect to anthropic"), "{err}");
}

#[tokio::test]
async fn a_missing_key_names_the_variable_and_models_json() {
    let mock = MockLlm::start().await.expect("mock");
    let mut model = model_for("openai-completions", &mock.base_url());
    model.provider = "tandem-test-provider-without-key".into();
    let opts = StreamOptions {
        api_key: None,
        ..options()
    };
    let (_, msg) = one_call(&model, opts).await;
    let err = msg.error_message.unwrap_or_default();
    assert!(
        err.contains("No API key for provider: tandem-test-provider-without-key"),
        "{err}"
    );
    assert!(err.contains("models.json"), "{err}");
    assert!(mock.requests().is_empty(), "nothing is sent without a key");
}
