use serde_json::json;
use tandem_agent::CustomMessage;
use tandem_ai::{ImageContent, TextContent, ToolResultMessage, UserMessage};

use super::super::test_support::{assistant, bash_run, calls, user, Path};
use super::*;
use crate::messages::{branch_summary_message, compaction_summary_message, custom_message};

fn image() -> UserBlock {
    UserBlock::Image(ImageContent {
        data: "AAAA".into(),
        mime_type: "image/png".into(),
    })
}

fn text(t: &str) -> UserBlock {
    UserBlock::Text(TextContent {
        text: t.into(),
        text_signature: None,
    })
}

#[test]
fn user_messages_count_text_only() {
    assert_eq!(estimate_tokens(&user("abcde")), 2);
    let string_content = UserMessage {
        content: UserContent::Text("12345678".into()),
        timestamp: 0,
    };
    assert_eq!(estimate_tokens(&string_content.into()), 2);
    let with_image = UserMessage {
        content: UserContent::Blocks(vec![text("abc"), image()]),
        timestamp: 0,
    };
    assert_eq!(estimate_tokens(&with_image.into()), 1);
    // JavaScript counts UTF-16 units: an emoji is two.
    assert_eq!(estimate_tokens(&user("😀😀😀")), 2);
    assert_eq!(estimate_tokens(&user("")), 0);
}

#[test]
fn assistant_messages_count_text_thinking_and_tool_calls() {
    // "read" (4) + {"path":"a.rs"} (15) = 19 → 5.
    assert_eq!(
        estimate_tokens(&calls(&[("read", json!({"path": "a.rs"}))])),
        5
    );
    assert_eq!(estimate_tokens(&assistant("123456789", None)), 3);
    let mut thinking = assistant("1234", None);
    if let AgentMessage::Llm(Message::Assistant(a)) = &mut thinking {
        a.content
            .push(AssistantBlock::Thinking(tandem_ai::ThinkingContent {
                thinking: "5678".into(),
                ..Default::default()
            }));
    }
    assert_eq!(estimate_tokens(&thinking), 2);
}

#[test]
fn tool_results_and_custom_messages_count_images() {
    let mut result = ToolResultMessage::text("1", "read", "abcd", false);
    result.content.push(image());
    assert_eq!(estimate_tokens(&result.into()), (4 + 4800_u64).div_ceil(4));

    let custom_text = custom_message("t", UserContent::Text("abcdef".into()), true, None, "");
    assert_eq!(estimate_tokens(&custom_text), 2);
    let custom_blocks = custom_message(
        "t",
        UserContent::Blocks(vec![text("ab"), image()]),
        true,
        None,
        "",
    );
    assert_eq!(estimate_tokens(&custom_blocks), 1201);
}

#[test]
fn coding_roles_count_their_text() {
    assert_eq!(estimate_tokens(&bash_run("ls", "a\nb\n")), 2);
    assert_eq!(
        estimate_tokens(&branch_summary_message("123456789", "x", "")),
        3
    );
    assert_eq!(
        estimate_tokens(&compaction_summary_message("1234", 5, "")),
        1
    );
    let unknown = AgentMessage::Custom(CustomMessage::new("mystery", Default::default()));
    assert_eq!(estimate_tokens(&unknown), 0);
}

#[test]
fn usage_gives_context_tokens() {
    let usage = Usage {
        input: 1000,
        output: 500,
        cache_read: 200,
        cache_write: 100,
        reasoning: None,
        total_tokens: 0,
        ..Usage::default()
    };
    assert_eq!(calculate_context_tokens(&usage), 1800);
    let reported = Usage {
        reasoning: None,
        total_tokens: 42,
        ..usage
    };
    assert_eq!(calculate_context_tokens(&reported), 42);
}

#[test]
fn context_estimate_uses_last_completed_usage_plus_trailing_estimates() {
    let mut aborted = assistant("cut off", Some((9_000, 9_000)));
    if let AgentMessage::Llm(Message::Assistant(a)) = &mut aborted {
        a.stop_reason = StopReason::Aborted;
    }
    let messages = vec![
        user("hello"),
        assistant("hi", Some((100, 50))),
        user("12345678"),
        aborted,
    ];
    let estimate = estimate_context_tokens(&messages);
    // 150 from usage; then "12345678" (2) and "cut off" (2).
    assert_eq!(
        estimate,
        ContextUsageEstimate {
            tokens: 154,
            usage_tokens: 150,
            trailing_tokens: 4,
            last_usage_index: Some(1),
        }
    );

    let none = estimate_context_tokens(&[user("12345678"), user("1234")]);
    assert_eq!(none.tokens, 3);
    assert_eq!(none.last_usage_index, None);
}

#[test]
fn last_usage_skips_failed_answers() {
    let mut path = Path::default();
    path.msg(user("a"));
    path.msg(assistant("b", Some((100, 50))));
    let mut failed = assistant("c", Some((300, 0)));
    if let AgentMessage::Llm(Message::Assistant(a)) = &mut failed {
        a.stop_reason = StopReason::Error;
    }
    path.msg(failed);
    assert_eq!(
        last_assistant_usage(&path.entries).map(|u| u.input),
        Some(100)
    );
    assert_eq!(last_assistant_usage(&path.entries[..1]), None);
}

#[test]
fn compaction_triggers_past_window_minus_reserve() {
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 10_000,
        keep_recent_tokens: 20_000,
    };
    assert!(should_compact(95_000, 100_000, &settings));
    assert!(!should_compact(90_000, 100_000, &settings));
    assert!(should_compact(90_001, 100_000, &settings));
    assert!(!should_compact(89_000, 100_000, &settings));
    // A window smaller than the reserve always triggers.
    assert!(should_compact(1, 8_000, &settings));
    let disabled = CompactionSettings {
        enabled: false,
        ..settings
    };
    assert!(!should_compact(95_000, 100_000, &disabled));
}

#[test]
fn settings_default_and_read_camel_case() {
    let defaults = CompactionSettings::default();
    assert_eq!(
        (
            defaults.enabled,
            defaults.reserve_tokens,
            defaults.keep_recent_tokens
        ),
        (true, 16_384, 20_000)
    );
    let partial: CompactionSettings =
        serde_json::from_value(json!({"reserveTokens": 1000})).expect("parses");
    assert_eq!(
        partial,
        CompactionSettings {
            reserve_tokens: 1000,
            ..defaults
        }
    );
    assert_eq!(
        serde_json::to_value(defaults).expect("json"),
        json!({"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000})
    );
}
