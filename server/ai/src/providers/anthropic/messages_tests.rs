//! Exact `messages` and `tools` JSON for conversation shapes: images, replayed tool turns with
//! signed and redacted thinking, turns from other providers, empty turns.

use serde_json::json;

use crate::model::{Api, InputKind};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::anthropic::test_support::*;
use crate::types::{
    AssistantBlock, Message, TextContent, Tool, ToolResultMessage, UserContent, UserMessage,
};

#[test]
fn tools_keep_only_properties_and_required() {
    let mut ctx = context(vec![user("List files")]);
    ctx.system_prompt = None;
    ctx.tools = vec![
        Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
                "additionalProperties": false,
            }),
        },
        Tool {
            name: "ls".into(),
            description: "List".into(),
            parameters: json!({"type": "object"}),
        },
    ];
    let request = build(&model("claude-sonnet-4-5"), &ctx, &StreamOptions::default());
    assert!(request.body.get("system").is_none());
    assert_eq!(
        request.body["tools"],
        json!([
            {"name": "read", "description": "Read a file", "input_schema": {
                "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
            {"name": "ls", "description": "List", "input_schema": {
                "type": "object", "properties": {}, "required": []}},
        ])
    );
}

#[test]
fn images_are_base64_blocks_and_dropped_for_text_only_models() {
    let message = Message::User(UserMessage {
        content: UserContent::Blocks(vec![text_block("What is this?"), text_block("  "), image()]),
        timestamp: 0,
    });
    let mut ctx = context(vec![message]);
    ctx.system_prompt = None;
    let options = StreamOptions {
        cache_retention: CacheRetention::None,
        ..StreamOptions::default()
    };
    let body = build(&model("claude-sonnet-4-5"), &ctx, &options).body;
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        ]}])
    );
    let mut text_only = model("some-text-model");
    text_only.input = vec![InputKind::Text];
    let body = build(&text_only, &ctx, &options).body;
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "What is this?"}]}])
    );
}

#[test]
fn replayed_tool_turn_keeps_signed_thinking_and_merges_results() {
    let m = model("claude-sonnet-4-5");
    let assistant = assistant_from(
        "claude-sonnet-4-5",
        "anthropic",
        Api::AnthropicMessages,
        vec![
            thinking("", Some("EmwKAhgB"), true),
            thinking("Read both files.", Some("sig-1"), false),
            thinking("unsigned thought", None, false),
            AssistantBlock::Text(TextContent {
                text: "Reading.".into(),
                text_signature: None,
            }),
            call("toolu_01", "read", json!({"path": "a.rs"})),
            call("toolu_02", "read", json!({"path": "b.rs"})),
        ],
    );
    let mut shot = ToolResultMessage::text("toolu_02", "read", "", false);
    shot.content = vec![image()];
    let ctx = context(vec![
        user("Compare a.rs and b.rs"),
        assistant,
        Message::ToolResult(ToolResultMessage::text(
            "toolu_01",
            "read",
            "fn a() {}",
            false,
        )),
        Message::ToolResult(shot),
    ]);
    let body = build(&m, &ctx, &StreamOptions::default()).body;
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "Compare a.rs and b.rs"},
            {"role": "assistant", "content": [
                {"type": "redacted_thinking", "data": "EmwKAhgB"},
                {"type": "thinking", "thinking": "Read both files.", "signature": "sig-1"},
                {"type": "text", "text": "unsigned thought"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a.rs"}},
                {"type": "tool_use", "id": "toolu_02", "name": "read", "input": {"path": "b.rs"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "fn a() {}", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_02", "content": [
                    {"type": "text", "text": "(see attached image)"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                ], "is_error": false, "cache_control": {"type": "ephemeral"}},
            ]},
        ])
    );
}

#[test]
fn turns_from_another_provider_get_anthropic_safe_ids_and_no_thinking() {
    let assistant = assistant_from(
        "gpt-5",
        "openai",
        Api::OpenAiResponses,
        vec![
            thinking("I should list.", Some("enc"), false),
            call("call_1|fc_2/x", "ls", json!({})),
        ],
    );
    let ctx = context(vec![
        user("ls"),
        assistant,
        Message::ToolResult(ToolResultMessage::text("call_1|fc_2/x", "ls", "a b", true)),
        user("thanks"),
    ]);
    let options = StreamOptions {
        cache_retention: CacheRetention::None,
        ..StreamOptions::default()
    };
    let body = build(&model("claude-sonnet-4-5"), &ctx, &options).body;
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "ls"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "I should list."},
                {"type": "tool_use", "id": "call_1_fc_2_x", "name": "ls", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1_fc_2_x", "content": "a b", "is_error": true},
            ]},
            {"role": "user", "content": "thanks"},
        ])
    );
    assert!(body["system"][0].get("cache_control").is_none());
}

#[test]
fn empty_user_turns_and_assistant_turns_without_content_are_skipped() {
    let empty_assistant = assistant_from(
        "claude-sonnet-4-5",
        "anthropic",
        Api::AnthropicMessages,
        vec![AssistantBlock::Text(TextContent::default())],
    );
    let ctx = context(vec![user("   "), empty_assistant, user("Hello")]);
    let body = build(&model("claude-sonnet-4-5"), &ctx, &StreamOptions::default()).body;
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
}
