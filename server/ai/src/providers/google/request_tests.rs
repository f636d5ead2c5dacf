//! What `build_request` sends, case by case.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::*;
use crate::model::{Api, InputKind, ModelCost, ThinkingLevel};
use crate::types::{
    AssistantBlock, AssistantMessage, ImageContent, Message, StopReason, TextContent,
    ThinkingContent, Tool, ToolCall, ToolResultMessage, UserBlock, UserContent, UserMessage,
};

const SIG: &str = "CiQBdGhvdWdodC1zaWduYXR1cmU=";

fn model(id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: Api::GoogleGenerativeAi,
        provider: "google".into(),
        base_url: "https://generativelanguage.googleapis.com/v1beta/".into(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost::default(),
        context_window: 1_048_576,
        max_tokens: 65_536,
        headers: None,
        compat: None,
    }
}

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
    })
}

fn image() -> ImageContent {
    ImageContent {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    }
}

fn assistant(model_id: &str, content: Vec<AssistantBlock>) -> Message {
    let mut m = AssistantMessage::empty(Api::GoogleGenerativeAi, "google", model_id);
    m.content = content;
    m.stop_reason = StopReason::ToolUse;
    Message::Assistant(m)
}

fn call(id: &str, path: &str, signature: Option<&str>) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({ "path": path }),
        thought_signature: signature.map(String::from),
    })
}

fn result(id: &str, text: &str, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage::text(id, "read", text, is_error))
}

fn body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    build_request(model, context, options, "AIzaSy-test-key")
        .expect("request builds")
        .body
}

fn context(messages: Vec<Message>) -> Context {
    Context {
        system_prompt: None,
        messages,
        tools: Vec::new(),
    }
}

fn thinking(id: &str, level: ThinkingLevel) -> Value {
    let options = StreamOptions {
        reasoning: level,
        ..StreamOptions::default()
    };
    body(&model(id), &context(vec![user("hi")]), &options)["generationConfig"].clone()
}

#[test]
fn plain_request_url_headers_and_body() {
    let mut m = model("gemini-2.5-flash");
    m.reasoning = false;
    m.headers = Some(BTreeMap::from([
        ("x-team".to_string(), "a".to_string()),
        ("x-trace".to_string(), "model".to_string()),
    ]));
    let options = StreamOptions {
        temperature: Some(0.5),
        headers: BTreeMap::from([("x-trace".to_string(), "call".to_string())]),
        ..StreamOptions::default()
    };
    let mut ctx = context(vec![user("Hello")]);
    ctx.system_prompt = Some("You are terse.".into());
    let req = build_request(&m, &ctx, &options, "AIzaSy-test-key").expect("builds");
    assert_eq!(
        req.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert!(!req.url.contains("AIzaSy"), "the key stays out of the URL");
    assert_eq!(req.secrets, vec!["AIzaSy-test-key".to_string()]);
    let headers: Vec<(&str, &str)> = req
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        headers,
        [
            ("content-type", "application/json"),
            ("x-goog-api-key", "AIzaSy-test-key"),
            ("x-team", "a"),
            ("x-trace", "model"),
            ("x-trace", "call"),
        ],
        "options' headers come last so they win"
    );
    assert_eq!(
        req.body,
        json!({
            "contents": [{ "role": "user", "parts": [{ "text": "Hello" }] }],
            "systemInstruction": { "role": "user", "parts": [{ "text": "You are terse." }] },
            "generationConfig": { "temperature": 0.5, "maxOutputTokens": 32000 }
        })
    );
}

#[test]
fn url_defaults_and_prefixed_ids() {
    let mut m = model("models/gemini-2.0-flash");
    m.base_url = String::new();
    let req = build_request(&m, &Context::default(), &StreamOptions::default(), "k").expect("ok");
    assert_eq!(
        req.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
    );
    let bad = model("gemini 2?x");
    let err = build_request(&bad, &Context::default(), &StreamOptions::default(), "k")
        .expect_err("an id with spaces cannot be a URL path");
    assert!(err.to_string().contains("models.json"), "{err}");
}

#[test]
fn tools_are_function_declarations_with_json_schema() {
    let schema = json!({
        "type": "object",
        "properties": { "path": { "type": "string" }, "mode": { "anyOf": [{ "const": "a" }, { "const": "b" }] } },
        "required": ["path"]
    });
    let mut ctx = context(vec![user("read it")]);
    ctx.tools = vec![Tool {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: schema.clone(),
    }];
    let mut m = model("gemini-2.5-flash");
    m.reasoning = false;
    let b = body(&m, &ctx, &StreamOptions::default());
    assert_eq!(
        b["tools"],
        json!([{ "functionDeclarations": [
            { "name": "read", "description": "Read a file", "parametersJsonSchema": schema }
        ] }])
    );
    assert!(b.get("toolConfig").is_none());
}

#[test]
fn thinking_on_gemini_25_sends_budgets() {
    assert_eq!(
        thinking("gemini-2.5-flash", ThinkingLevel::High),
        json!({ "maxOutputTokens": 32000, "thinkingConfig": { "includeThoughts": true, "thinkingBudget": 24576 } })
    );
    assert_eq!(
        thinking("gemini-2.5-pro", ThinkingLevel::Xhigh)["thinkingConfig"],
        json!({ "includeThoughts": true, "thinkingBudget": 32768 })
    );
    assert_eq!(
        thinking("gemini-2.5-flash", ThinkingLevel::Minimal)["thinkingConfig"],
        json!({ "includeThoughts": true, "thinkingBudget": 128 })
    );
}

#[test]
fn thinking_on_gemini_3_sends_levels() {
    assert_eq!(
        thinking("gemini-3-pro-preview", ThinkingLevel::Minimal)["thinkingConfig"],
        json!({ "includeThoughts": true, "thinkingLevel": "LOW" })
    );
    assert_eq!(
        thinking("gemini-3-pro-preview", ThinkingLevel::Medium)["thinkingConfig"],
        json!({ "includeThoughts": true, "thinkingLevel": "HIGH" })
    );
    assert_eq!(
        thinking("gemini-3-flash-preview", ThinkingLevel::Minimal)["thinkingConfig"],
        json!({ "includeThoughts": true, "thinkingLevel": "MINIMAL" })
    );
    assert_eq!(
        thinking("gemini-3-flash-preview", ThinkingLevel::Medium)["thinkingConfig"],
        json!({ "includeThoughts": true, "thinkingLevel": "MEDIUM" })
    );
}

#[test]
fn thinking_off_sends_the_least_thinking_allowed() {
    assert_eq!(
        thinking("gemini-2.5-flash", ThinkingLevel::Off)["thinkingConfig"],
        json!({ "thinkingBudget": 0 })
    );
    assert!(thinking("gemini-2.5-pro", ThinkingLevel::Off)
        .get("thinkingConfig")
        .is_none());
    assert_eq!(
        thinking("gemini-3-pro-preview", ThinkingLevel::Off)["thinkingConfig"],
        json!({ "thinkingLevel": "LOW" })
    );
    assert_eq!(
        thinking("gemini-3-flash-preview", ThinkingLevel::Off)["thinkingConfig"],
        json!({ "thinkingLevel": "MINIMAL" })
    );
}

#[test]
fn images_are_inline_data_and_dropped_for_text_only_models() {
    let msg = Message::User(UserMessage {
        content: UserContent::Blocks(vec![
            UserBlock::Text(TextContent {
                text: "What is this?".into(),
                text_signature: None,
            }),
            UserBlock::Image(image()),
        ]),
        timestamp: 1,
    });
    let only_image = Message::User(UserMessage {
        content: UserContent::Blocks(vec![UserBlock::Image(image())]),
        timestamp: 2,
    });
    let ctx = context(vec![msg, only_image]);
    let b = body(&model("gemini-2.5-flash"), &ctx, &StreamOptions::default());
    let image_part = json!({ "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } });
    assert_eq!(
        b["contents"],
        json!([
            { "role": "user", "parts": [{ "text": "What is this?" }, image_part] },
            { "role": "user", "parts": [image_part] }
        ])
    );
    let mut text_only = model("gemini-2.5-flash");
    text_only.input = vec![InputKind::Text];
    let b = body(&text_only, &ctx, &StreamOptions::default());
    assert_eq!(
        b["contents"],
        json!([{ "role": "user", "parts": [{ "text": "What is this?" }] }]),
        "images are dropped and an image-only turn disappears"
    );
}

#[test]
fn replayed_turn_keeps_signatures_for_the_same_model_and_groups_results() {
    let history = vec![
        user("Read a and b"),
        assistant(
            "gemini-2.5-flash",
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "Both files are needed.".into(),
                    thinking_signature: Some(SIG.into()),
                    redacted: None,
                }),
                AssistantBlock::Text(TextContent {
                    text: "Reading both.".into(),
                    text_signature: None,
                }),
                call("read_1", "a", Some(SIG)),
                call("read_2", "b", Some("not base64!")),
            ],
        ),
        result("read_1", "alpha", false),
        result("read_2", "ENOENT", true),
    ];
    let b = body(
        &model("gemini-2.5-flash"),
        &context(history),
        &StreamOptions::default(),
    );
    assert_eq!(
        b["contents"],
        json!([
            { "role": "user", "parts": [{ "text": "Read a and b" }] },
            { "role": "model", "parts": [
                { "thought": true, "text": "Both files are needed.", "thoughtSignature": SIG },
                { "text": "Reading both." },
                { "functionCall": { "name": "read", "args": { "path": "a" } }, "thoughtSignature": SIG },
                { "functionCall": { "name": "read", "args": { "path": "b" } } }
            ] },
            { "role": "user", "parts": [
                { "functionResponse": { "name": "read", "response": { "output": "alpha" } } },
                { "functionResponse": { "name": "read", "response": { "error": "ENOENT" } } }
            ] }
        ])
    );
}

#[test]
fn another_models_turn_loses_signatures_and_gemini_3_gets_the_skip_sentinel() {
    let history = vec![
        user("Read a"),
        assistant(
            "gemini-2.5-flash",
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "Plan.".into(),
                    thinking_signature: Some(SIG.into()),
                    redacted: None,
                }),
                call("read_1", "a", Some(SIG)),
            ],
        ),
        result("read_1", "alpha", false),
    ];
    let b = body(
        &model("gemini-3-pro-preview"),
        &context(history),
        &StreamOptions::default(),
    );
    assert_eq!(
        b["contents"][1],
        json!({ "role": "model", "parts": [
            { "text": "Plan." },
            { "functionCall": { "name": "read", "args": { "path": "a" } },
              "thoughtSignature": "skip_thought_signature_validator" }
        ] })
    );
}

#[test]
fn tool_result_images_nest_on_gemini_3_and_follow_as_a_turn_before() {
    let with_image = |id: &str| {
        Message::ToolResult(ToolResultMessage {
            content: vec![UserBlock::Image(image())],
            ..ToolResultMessage::text(id, "screenshot", "", false)
        })
    };
    let history = |model_id: &str| {
        vec![
            user("Look"),
            assistant(model_id, vec![call("c1", "x", None)]),
            with_image("c1"),
        ]
    };
    let image_part = json!({ "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } });
    let b3 = body(
        &model("gemini-3-flash-preview"),
        &context(history("gemini-3-flash-preview")),
        &StreamOptions::default(),
    );
    assert_eq!(
        b3["contents"][2],
        json!({ "role": "user", "parts": [{ "functionResponse": {
            "name": "screenshot",
            "response": { "output": "(see attached image)" },
            "parts": [image_part]
        } }] })
    );
    let b25 = body(
        &model("gemini-2.5-flash"),
        &context(history("gemini-2.5-flash")),
        &StreamOptions::default(),
    );
    assert_eq!(
        b25["contents"].as_array().expect("contents")[2..],
        [
            json!({ "role": "user", "parts": [{ "functionResponse": {
                "name": "screenshot", "response": { "output": "(see attached image)" }
            } }] }),
            json!({ "role": "user", "parts": [{ "text": "Tool result image:" }, image_part] })
        ]
    );
}

#[test]
fn ids_are_sent_only_to_models_that_need_them() {
    let history = vec![
        user("go"),
        assistant("claude-sonnet-4-5", vec![call("toolu|01/x", "a", None)]),
        result("toolu|01/x", "ok", false),
    ];
    let mut m = model("claude-sonnet-4-5");
    m.provider = "other".into();
    let b = body(&m, &context(history), &StreamOptions::default());
    assert_eq!(
        b["contents"][1]["parts"][0]["functionCall"]["id"],
        "toolu_01_x"
    );
    assert_eq!(
        b["contents"][2]["parts"][0]["functionResponse"]["id"],
        "toolu_01_x"
    );
}
