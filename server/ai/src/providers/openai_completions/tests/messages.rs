//! How the conversation is written: images, replayed tool turns, reasoning replay and the
//! per-server message quirks.

use serde_json::json;

use super::support::*;
use crate::model::{Api, InputKind, OpenAiCompat};
use crate::options::StreamOptions;
use crate::types::{
    AssistantBlock, Message, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserBlock,
    UserContent, UserMessage,
};

#[test]
fn images_in_user_messages() {
    let ctx = context(vec![Message::User(UserMessage {
        content: UserContent::Blocks(vec![
            UserBlock::Text(TextContent {
                text: "What is this?".into(),
                text_signature: None,
            }),
            image(),
        ]),
        timestamp: 1,
    })]);
    let b = body(&openai("gpt-4.1", false), &ctx, &StreamOptions::default());
    assert_eq!(
        b["messages"][1]["content"],
        json!([
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ])
    );

    let mut text_only = openai("gpt-3.5-turbo", false);
    text_only.input = vec![InputKind::Text];
    let b = body(&text_only, &ctx, &StreamOptions::default());
    assert_eq!(
        b["messages"][1]["content"],
        json!([{"type": "text", "text": "What is this?"}])
    );

    let only_image = context(vec![Message::User(UserMessage {
        content: UserContent::Blocks(vec![image()]),
        timestamp: 1,
    })]);
    let b = body(&text_only, &only_image, &StreamOptions::default());
    assert_eq!(
        b["messages"][1],
        json!({"role": "user", "content": "(image omitted: model does not support images)"})
    );
}

#[test]
fn replayed_tool_turn_from_the_same_model() {
    let m = openai("gpt-4.1", false);
    let ctx = context(vec![
        user("Read a.txt"),
        assistant(&m, vec![text("Reading."), call("call_abc")]),
        Message::ToolResult(ToolResultMessage::text("call_abc", "read", "hello", false)),
        user("Thanks"),
    ]);
    let b = body(&m, &ctx, &StreamOptions::default());
    assert_eq!(
        b["messages"],
        json!([
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Read a.txt"},
            {"role": "assistant", "content": "Reading.", "tool_calls": [{
                "id": "call_abc",
                "type": "function",
                "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"},
            }]},
            {"role": "tool", "content": "hello", "tool_call_id": "call_abc"},
            {"role": "user", "content": "Thanks"},
        ])
    );
}

#[test]
fn replay_from_another_provider_normalizes_ids_and_thinking() {
    let m = openai("gpt-4.1", false);
    let other = model("anthropic", "https://api.anthropic.com", "claude", true);
    let mut other = assistant(
        &other,
        vec![
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "Plan it.".into(),
                thinking_signature: Some("sig".into()),
                redacted: None,
            }),
            call("call_9|fc_0123+/=abc"),
        ],
    );
    if let Message::Assistant(a) = &mut other {
        a.api = Api::AnthropicMessages;
    }
    let ctx = context(vec![
        user("Go"),
        other,
        Message::ToolResult(ToolResultMessage::text(
            "call_9|fc_0123+/=abc",
            "read",
            "ok",
            false,
        )),
    ]);
    let b = body(&m, &ctx, &StreamOptions::default());
    assert_eq!(b["messages"][2]["content"], json!("Plan it."));
    assert_eq!(b["messages"][2]["tool_calls"][0]["id"], json!("call_9"));
    assert_eq!(b["messages"][3]["tool_call_id"], json!("call_9"));
}

#[test]
fn same_model_reasoning_is_replayed_in_its_field() {
    let m = model("llama.cpp", "http://localhost:8080/v1", "gpt-oss-20b", true);
    let ctx = context(vec![
        user("Hi"),
        assistant(
            &m,
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "Greet back.".into(),
                    thinking_signature: Some("reasoning_content".into()),
                    redacted: None,
                }),
                text("Hello!"),
            ],
        ),
        user("Again"),
    ]);
    let b = body(&m, &ctx, &StreamOptions::default());
    assert_eq!(
        b["messages"][2],
        json!({"role": "assistant", "content": "Hello!", "reasoning_content": "Greet back."})
    );
    // Local server: system role even though the model reasons, max_tokens, no store.
    assert_eq!(b["messages"][0]["role"], json!("system"));
    assert_eq!(b["max_tokens"], json!(16000));
    assert!(b.get("store").is_none() && b.get("max_completion_tokens").is_none());
}

#[test]
fn tool_result_images_follow_in_a_user_message() {
    let m = openai("gpt-4.1", false);
    let result = |id: &str| ToolResultMessage {
        content: vec![image()],
        ..ToolResultMessage::text(id, "read", "", false)
    };
    let ctx = context(vec![
        user("Show"),
        assistant(&m, vec![call("c1"), call("c2")]),
        Message::ToolResult(result("c1")),
        Message::ToolResult(ToolResultMessage::text("c2", "read", "text only", false)),
    ]);
    let b = body(&m, &ctx, &StreamOptions::default());
    let messages = b["messages"].as_array().expect("array");
    assert_eq!(
        messages[3],
        json!({"role": "tool", "content": "(see attached image)", "tool_call_id": "c1"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "content": "text only", "tool_call_id": "c2"})
    );
    assert_eq!(
        messages[5],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Attached image(s) from tool result:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ]})
    );
    assert_eq!(messages.len(), 6);

    let mut bridged = m.clone();
    bridged.compat = Some(OpenAiCompat {
        requires_assistant_after_tool_result: Some(true),
        ..OpenAiCompat::default()
    });
    let b = body(&bridged, &ctx, &StreamOptions::default());
    assert_eq!(
        b["messages"][5],
        json!({"role": "assistant", "content": "I have processed the tool results."})
    );
    assert_eq!(b["messages"][6]["role"], json!("user"));
}

#[test]
fn assistant_bridge_between_tool_results_and_user() {
    let mut m = openai("gpt-4.1", false);
    m.compat = Some(OpenAiCompat {
        requires_assistant_after_tool_result: Some(true),
        ..OpenAiCompat::default()
    });
    let ctx = context(vec![
        user("Go"),
        assistant(&m, vec![call("c1")]),
        Message::ToolResult(ToolResultMessage::text("c1", "read", "ok", false)),
        user("Next"),
    ]);
    let b = body(&m, &ctx, &StreamOptions::default());
    assert_eq!(
        b["messages"][2]["content"],
        json!(""),
        "empty string, not null"
    );
    assert_eq!(
        b["messages"][4],
        json!({"role": "assistant", "content": "I have processed the tool results."})
    );
    assert_eq!(b["messages"][5]["content"], json!("Next"));
}

#[test]
fn mistral_dialect() {
    let m = model(
        "mistral",
        "https://api.mistral.ai/v1",
        "devstral-medium-latest",
        true,
    );
    let foreign = model("openai", "https://api.openai.com/v1", "gpt-5", true);
    let ctx = context(vec![
        user("Go"),
        assistant(
            &foreign,
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "Think.".into(),
                    thinking_signature: None,
                    redacted: None,
                }),
                call("call_Abc123XyZ_long_id"),
            ],
        ),
        Message::ToolResult(ToolResultMessage::text(
            "call_Abc123XyZ_long_id",
            "read",
            "ok",
            false,
        )),
        assistant(
            &m,
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "Own thoughts.".into(),
                    thinking_signature: Some("reasoning_content".into()),
                    redacted: None,
                }),
                text("Done."),
            ],
        ),
    ]);
    let b = body(&m, &ctx, &with_level(crate::model::ThinkingLevel::High));
    assert_eq!(b["messages"][0]["role"], json!("system"));
    assert!(b.get("store").is_none() && b.get("reasoning_effort").is_none());
    assert_eq!(b["max_tokens"], json!(16000));
    let id = b["messages"][2]["tool_calls"][0]["id"]
        .as_str()
        .expect("id");
    assert_eq!(id.len(), 9);
    assert!(id.chars().all(|c| c.is_ascii_alphanumeric()), "{id}");
    assert_eq!(
        b["messages"][3],
        json!({"role": "tool", "content": "ok", "tool_call_id": id, "name": "read"})
    );
    assert_eq!(
        b["messages"][4]["content"],
        json!([{"type": "text", "text": "Own thoughts."}, {"type": "text", "text": "Done."}])
    );
}

#[test]
fn empty_assistant_turns_are_left_out() {
    let m = openai("gpt-4.1", false);
    let ctx = context(vec![
        user("Hi"),
        assistant(&m, vec![text("  ")]),
        user("Hello?"),
    ]);
    let b = body(&m, &ctx, &StreamOptions::default());
    let roles: Vec<&str> = b["messages"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, ["system", "user", "user"]);
}

#[test]
fn encrypted_reasoning_details_go_back_with_their_calls() {
    let m = model(
        "openrouter",
        "https://openrouter.ai/api/v1",
        "google/gemini-2.5-flash",
        true,
    );
    let detail = json!({"type": "reasoning.encrypted", "data": "abc", "id": "tool_0", "index": 0});
    let ctx = context(vec![
        user("Go"),
        assistant(
            &m,
            vec![AssistantBlock::ToolCall(ToolCall {
                id: "tool_0".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
                thought_signature: Some(detail.to_string()),
            })],
        ),
        Message::ToolResult(ToolResultMessage::text("tool_0", "bash", "a b", false)),
    ]);
    let b = body(&m, &ctx, &StreamOptions::default());
    assert_eq!(b["messages"][2]["reasoning_details"], json!([detail]));
}
