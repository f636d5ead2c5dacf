//! Exact request bodies and headers for the transport-level cases: auth flavours, betas, URL,
//! header merging, thinking modes and cache retention.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::model::Api;
use crate::providers::anthropic::test_support::*;
use crate::types::{ToolResultMessage, UserMessage};

fn with_reasoning(level: ThinkingLevel) -> StreamOptions {
    StreamOptions {
        reasoning: level,
        temperature: Some(0.5),
        ..StreamOptions::default()
    }
}

#[test]
fn plain_request_body_url_and_headers() {
    let mut m = model("claude-sonnet-4-5-20250929");
    m.base_url = "https://api.anthropic.com/".into();
    let options = StreamOptions {
        temperature: Some(0.2),
        ..StreamOptions::default()
    };
    let request = build(&m, &context(vec![user("Hi")]), &options);
    assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(
        request.body,
        json!({
            "model": "claude-sonnet-4-5-20250929",
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}
            ]}],
            "max_tokens": 32000,
            "stream": true,
            "system": [{"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}}],
            "temperature": 0.2,
        })
    );
    assert_eq!(header(&request, "x-api-key"), Some("sk-ant-api03-key"));
    assert_eq!(header(&request, "authorization"), None);
    assert_eq!(header(&request, "anthropic-version"), Some("2023-06-01"));
    assert_eq!(header(&request, "content-type"), Some("application/json"));
    assert_eq!(header(&request, "accept"), Some("text/event-stream"));
    assert_eq!(
        header(&request, "anthropic-beta"),
        Some("fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14")
    );
    assert_eq!(request.secrets, vec!["sk-ant-api03-key".to_string()]);
}

#[test]
fn empty_base_url_uses_the_public_api_and_headers_merge_options_last() {
    let mut m = model("claude-haiku-4-5");
    m.base_url = String::new();
    m.headers = Some(BTreeMap::from([
        ("X-Team".to_string(), "model".to_string()),
        ("anthropic-beta".to_string(), "custom-beta".to_string()),
    ]));
    let options = StreamOptions {
        headers: BTreeMap::from([("x-team".to_string(), "options".to_string())]),
        ..StreamOptions::default()
    };
    let request = build(&m, &context(vec![user("Hi")]), &options);
    assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(header(&request, "x-team"), Some("options"));
    assert_eq!(header(&request, "anthropic-beta"), Some("custom-beta"));
}

#[test]
fn budget_thinking_per_level_drops_temperature_and_raises_max_tokens() {
    let m = model("claude-sonnet-4-5-20250929");
    let ctx = context(vec![user("Think")]);
    for (level, budget) in [
        (ThinkingLevel::Minimal, 1024),
        (ThinkingLevel::Low, 2048),
        (ThinkingLevel::Medium, 8192),
        (ThinkingLevel::High, 16384),
        // Sonnet 4.5 has no xhigh: clamped to high.
        (ThinkingLevel::Xhigh, 16384),
    ] {
        let body = build(&m, &ctx, &with_reasoning(level)).body;
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": budget}),
            "{level}"
        );
        assert_eq!(body["max_tokens"], json!(32000 + budget), "{level}");
        assert!(body.get("temperature").is_none(), "{level}");
        assert!(body.get("output_config").is_none(), "{level}");
    }
}

#[test]
fn budget_thinking_respects_custom_budgets_and_the_model_limit() {
    let mut m = model("claude-3-7-sonnet-20250219");
    m.max_tokens = 8192;
    let ctx = context(vec![user("Think")]);
    // Limit 8192 leaves no room for 16384: the budget shrinks to keep 1024 for the answer.
    let body = build(&m, &ctx, &with_reasoning(ThinkingLevel::High)).body;
    assert_eq!(body["max_tokens"], json!(8192));
    assert_eq!(body["thinking"]["budget_tokens"], json!(7168));

    let mut options = with_reasoning(ThinkingLevel::Low);
    options.thinking_budgets.low = Some(3000);
    options.max_tokens = Some(4000);
    let body = build(&m, &ctx, &options).body;
    assert_eq!(body["max_tokens"], json!(7000));
    assert_eq!(body["thinking"]["budget_tokens"], json!(3000));

    // A limit below the minimum output: pi falls back to a 1024 budget.
    m.max_tokens = 1000;
    let body = build(&m, &ctx, &with_reasoning(ThinkingLevel::Minimal)).body;
    assert_eq!(body["max_tokens"], json!(1000));
    assert_eq!(body["thinking"]["budget_tokens"], json!(1024));
}

#[test]
fn adaptive_thinking_sends_effort_on_the_newest_models() {
    let ctx = context(vec![user("Think")]);
    let opus = model("claude-opus-4-6");
    for (level, effort) in [
        (ThinkingLevel::Minimal, "low"),
        (ThinkingLevel::Low, "low"),
        (ThinkingLevel::Medium, "medium"),
        (ThinkingLevel::High, "high"),
        (ThinkingLevel::Xhigh, "max"),
    ] {
        let request = build(&opus, &ctx, &with_reasoning(level));
        let body = &request.body;
        assert_eq!(body["thinking"], json!({"type": "adaptive"}), "{level}");
        assert_eq!(body["output_config"], json!({"effort": effort}), "{level}");
        assert_eq!(body["max_tokens"], json!(32000), "{level}");
        assert!(body.get("temperature").is_none());
        // Interleaved thinking is built in; its beta header is deprecated there.
        assert_eq!(
            header(&request, "anthropic-beta"),
            Some("fine-grained-tool-streaming-2025-05-14")
        );
    }
    let sonnet = model("claude-sonnet-4-6");
    let body = build(&sonnet, &ctx, &with_reasoning(ThinkingLevel::Xhigh)).body;
    assert_eq!(body["output_config"], json!({"effort": "high"}));
}

#[test]
fn no_thinking_for_off_or_models_that_cannot_reason() {
    let ctx = context(vec![user("Hi")]);
    let mut m = model("claude-3-5-haiku-20241022");
    let body = build(&m, &ctx, &with_reasoning(ThinkingLevel::Off)).body;
    assert!(body.get("thinking").is_none());
    assert_eq!(body["temperature"], json!(0.5));
    m.reasoning = false;
    let body = build(&m, &ctx, &with_reasoning(ThinkingLevel::High)).body;
    assert!(body.get("thinking").is_none());
    assert_eq!(body["max_tokens"], json!(32000));
    assert_eq!(body["temperature"], json!(0.5));
}

#[test]
fn long_retention_uses_a_one_hour_ttl_only_on_anthropic() {
    let options = StreamOptions {
        cache_retention: CacheRetention::Long,
        ..StreamOptions::default()
    };
    let ctx = context(vec![user("Hi")]);
    let body = build(&model("claude-sonnet-4-5"), &ctx, &options).body;
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    let mut proxy = model("claude-sonnet-4-5");
    proxy.base_url = "https://proxy.example.com/anthropic".into();
    let request = build(&proxy, &ctx, &options);
    assert_eq!(
        request.url,
        "https://proxy.example.com/anthropic/v1/messages"
    );
    assert_eq!(
        request.body["messages"][0]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
}

#[test]
fn oauth_tokens_use_bearer_auth_and_the_claude_code_identity() {
    let m = model("claude-sonnet-4-5");
    let request = build_request(
        &m,
        &context(vec![user("Hi")]),
        &StreamOptions::default(),
        "sk-ant-oat01-token",
    )
    .expect("request builds");
    assert_eq!(
        header(&request, "authorization"),
        Some("Bearer sk-ant-oat01-token")
    );
    assert_eq!(header(&request, "x-api-key"), None);
    assert_eq!(
        header(&request, "anthropic-beta"),
        Some("oauth-2025-04-20,fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14")
    );
    // Tandem presents itself as Tandem: no borrowed client identity or system prompt.
    assert_eq!(header(&request, "user-agent"), None);
    assert_eq!(header(&request, "x-app"), None);
    assert_eq!(
        request.body["system"],
        json!([
            {"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}},
        ])
    );
}

#[test]
fn copilot_uses_bearer_auth_and_its_intent_headers() {
    let mut m = model("claude-sonnet-4.6");
    m.provider = "github-copilot".into();
    let ctx = context(vec![
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![image()]),
            timestamp: 0,
        }),
        assistant_from(
            "x",
            "y",
            Api::AnthropicMessages,
            vec![call("t1", "ls", json!({}))],
        ),
        Message::ToolResult(ToolResultMessage::text("t1", "ls", "ok", false)),
    ]);
    let request = build_request(&m, &ctx, &StreamOptions::default(), "ghu_token").expect("builds");
    assert_eq!(header(&request, "authorization"), Some("Bearer ghu_token"));
    assert_eq!(header(&request, "anthropic-beta"), None);
    assert_eq!(header(&request, "x-initiator"), Some("agent"));
    assert_eq!(
        header(&request, "openai-intent"),
        Some("conversation-edits")
    );
    assert_eq!(header(&request, "copilot-vision-request"), Some("true"));
}
