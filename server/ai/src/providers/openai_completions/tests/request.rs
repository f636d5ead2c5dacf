//! What is sent: URL, headers and the body fields that depend on options, thinking level and
//! the server's dialect.

use std::collections::BTreeMap;

use serde_json::json;

use super::super::build_request;
use super::support::*;
use crate::model::{Model, OpenAiCompat, ProviderRouting, ThinkingFormat};
use crate::options::StreamOptions;
use crate::types::{Message, Tool, ToolResultMessage};

#[test]
fn plain_request_url_headers_and_body() {
    let mut m = openai("gpt-4.1-mini", false);
    m.headers = Some(BTreeMap::from([
        ("X-Model".to_string(), "m".to_string()),
        ("X-Both".to_string(), "model".to_string()),
    ]));
    let options = StreamOptions {
        headers: BTreeMap::from([("X-Both".to_string(), "options".to_string())]),
        ..StreamOptions::default()
    };
    let request = build_request(&m, &context(vec![user("Hi")]), &options, "sk-test").expect("ok");
    assert_eq!(request.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(request.secrets, vec!["sk-test".to_string()]);
    assert_eq!(
        request.headers,
        vec![
            ("Authorization".to_string(), "Bearer sk-test".to_string()),
            ("X-Both".to_string(), "model".to_string()),
            ("X-Model".to_string(), "m".to_string()),
            ("X-Both".to_string(), "options".to_string()),
        ]
    );
    assert_eq!(
        request.body,
        json!({
            "model": "gpt-4.1-mini",
            "messages": [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": "Hi"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "store": false,
            "max_completion_tokens": 16000,
        })
    );
}

#[test]
fn missing_base_url_is_a_clear_error() {
    let m = model("custom", "", "x", false);
    let err = build_request(&m, &context(vec![]), &StreamOptions::default(), "k").unwrap_err();
    assert!(err.to_string().contains("custom/x has no baseUrl"), "{err}");
}

#[test]
fn temperature_and_explicit_max_tokens() {
    let options = StreamOptions {
        temperature: Some(0.2),
        max_tokens: Some(500),
        ..StreamOptions::default()
    };
    let b = body(
        &openai("gpt-4.1", false),
        &context(vec![user("Hi")]),
        &options,
    );
    assert_eq!(b["temperature"], json!(0.2));
    assert_eq!(b["max_completion_tokens"], json!(500));
}

#[test]
fn tools_are_functions_with_strict_false_when_supported() {
    let mut ctx = context(vec![user("Hi")]);
    ctx.tools = vec![Tool {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }];
    let b = body(&openai("gpt-4.1", false), &ctx, &StreamOptions::default());
    assert_eq!(
        b["tools"],
        json!([{
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                "strict": false,
            },
        }])
    );

    let mut m = openai("gpt-4.1", false);
    m.compat = Some(OpenAiCompat {
        supports_strict_mode: Some(false),
        ..OpenAiCompat::default()
    });
    let b = body(&m, &ctx, &StreamOptions::default());
    assert!(b["tools"][0]["function"].get("strict").is_none());
}

#[test]
fn tool_history_without_tools_sends_an_empty_tools_list() {
    let m = openai("gpt-4.1", false);
    let ctx = context(vec![
        user("Hi"),
        assistant(&m, vec![call("call_1")]),
        Message::ToolResult(ToolResultMessage::text("call_1", "read", "ok", false)),
    ]);
    assert_eq!(
        body(&m, &ctx, &StreamOptions::default())["tools"],
        json!([])
    );
    let plain = body(&m, &context(vec![user("Hi")]), &StreamOptions::default());
    assert!(plain.get("tools").is_none());
}

#[test]
fn reasoning_effort_per_thinking_level() {
    use crate::model::ThinkingLevel::*;
    let ctx = context(vec![user("Hi")]);
    let o4 = openai("o4-mini", true);
    let effort = |m: &Model, level| {
        body(m, &ctx, &with_level(level))
            .get("reasoning_effort")
            .cloned()
    };
    assert_eq!(effort(&o4, Off), None);
    assert_eq!(effort(&o4, Minimal), Some(json!("minimal")));
    assert_eq!(effort(&o4, Low), Some(json!("low")));
    assert_eq!(effort(&o4, Medium), Some(json!("medium")));
    assert_eq!(effort(&o4, High), Some(json!("high")));
    assert_eq!(
        effort(&o4, Xhigh),
        Some(json!("high")),
        "clamped without xhigh support"
    );
    assert_eq!(
        effort(&openai("gpt-5.2", true), Xhigh),
        Some(json!("xhigh"))
    );
    assert_eq!(
        effort(&openai("gpt-4.1", false), High),
        None,
        "model cannot reason"
    );
    let grok = model("xai", "https://api.x.ai/v1", "grok-4", true);
    assert_eq!(effort(&grok, High), None, "xAI takes no reasoning_effort");
    let qwen = model(
        "groq",
        "https://api.groq.com/openai/v1",
        "qwen/qwen3-32b",
        true,
    );
    assert_eq!(effort(&qwen, Low), Some(json!("default")), "effort map");

    // A reasoning model gets its system prompt as a developer message.
    let b = body(&o4, &ctx, &with_level(Off));
    assert_eq!(
        b["messages"][0],
        json!({"role": "developer", "content": "You are helpful."})
    );
}

#[test]
fn boolean_thinking_formats() {
    use crate::model::ThinkingLevel::*;
    let ctx = context(vec![user("Hi")]);
    let zai = model(
        "zai",
        "https://api.z.ai/api/coding/paas/v4",
        "glm-4.6",
        true,
    );
    assert_eq!(
        body(&zai, &ctx, &with_level(High))["enable_thinking"],
        json!(true)
    );
    assert_eq!(
        body(&zai, &ctx, &with_level(Off))["enable_thinking"],
        json!(false)
    );
    assert!(body(&zai, &ctx, &with_level(High))
        .get("reasoning_effort")
        .is_none());

    let mut qwen = model(
        "dashscope",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "qwen3",
        true,
    );
    qwen.compat = Some(OpenAiCompat {
        thinking_format: Some(ThinkingFormat::Qwen),
        ..OpenAiCompat::default()
    });
    assert_eq!(
        body(&qwen, &ctx, &with_level(Low))["enable_thinking"],
        json!(true)
    );

    let mut template = model("vllm", "http://gpu:8000/v1", "Qwen/Qwen3-32B", true);
    template.compat = Some(OpenAiCompat {
        thinking_format: Some(ThinkingFormat::QwenChatTemplate),
        ..OpenAiCompat::default()
    });
    assert_eq!(
        body(&template, &ctx, &with_level(Medium))["chat_template_kwargs"],
        json!({"enable_thinking": true})
    );
    assert_eq!(
        body(&template, &ctx, &with_level(Off))["chat_template_kwargs"],
        json!({"enable_thinking": false})
    );
}

#[test]
fn open_router_reasoning_routing_and_cache_breakpoint() {
    use crate::model::ThinkingLevel::*;
    let mut m = model(
        "openrouter",
        "https://openrouter.ai/api/v1",
        "anthropic/claude-sonnet-4",
        true,
    );
    m.compat = Some(OpenAiCompat {
        open_router_routing: Some(ProviderRouting {
            only: Some(vec!["anthropic".into()]),
            order: None,
        }),
        ..OpenAiCompat::default()
    });
    let ctx = context(vec![user("Hi")]);
    let b = body(&m, &ctx, &with_level(Medium));
    assert_eq!(b["reasoning"], json!({"effort": "medium"}));
    assert!(b.get("reasoning_effort").is_none());
    assert_eq!(b["provider"], json!({"only": ["anthropic"]}));
    assert_eq!(
        b["messages"][1],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}
        ]})
    );
    assert!(body(&m, &ctx, &with_level(Off)).get("reasoning").is_none());
}

#[test]
fn compat_variants_for_known_servers() {
    let ctx = context(vec![user("Hi")]);
    let options = StreamOptions::default();
    let chutes = body(
        &model("chutes", "https://llm.chutes.ai/v1", "x", false),
        &ctx,
        &options,
    );
    assert_eq!(chutes["max_tokens"], json!(16000));
    let cerebras = body(
        &model(
            "cerebras",
            "https://api.cerebras.ai/v1",
            "gpt-oss-120b",
            true,
        ),
        &ctx,
        &options,
    );
    assert_eq!(cerebras["messages"][0]["role"], json!("system"));
    assert!(cerebras.get("store").is_none());
    let ollama = body(
        &model("local", "http://localhost:11434/v1", "llama3.2", false),
        &ctx,
        &options,
    );
    assert_eq!(ollama["max_tokens"], json!(16000));
    assert_eq!(ollama["stream_options"], json!({"include_usage": true}));

    let mut quiet = openai("gpt-4.1", false);
    quiet.compat = Some(OpenAiCompat {
        supports_usage_in_streaming: Some(false),
        max_tokens_field: Some(crate::model::MaxTokensField::MaxTokens),
        ..OpenAiCompat::default()
    });
    let b = body(&quiet, &ctx, &options);
    assert!(b.get("stream_options").is_none());
    assert_eq!(b["max_tokens"], json!(16000));
}
