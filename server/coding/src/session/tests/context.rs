//! What the model sees: compactions, branch summaries, custom messages, level and model.

use serde_json::json;
use tandem_ai::{ThinkingLevel, UserContent};

use super::{assistant, roles_and_texts, tool_result, user};
use crate::session::{ModelRef, SessionManager};

#[test]
fn a_compaction_puts_its_summary_first_then_the_kept_entries() {
    let mut s = SessionManager::in_memory("/p");
    s.append_message(user("u1", 1)).expect("u1");
    s.append_message(assistant("a1", 2)).expect("a1");
    let u2 = s.append_message(user("u2", 3)).expect("u2");
    s.append_message(assistant("a2", 4)).expect("a2");
    let c = s
        .append_compaction("what happened", u2.as_str(), 4321, None, None, None)
        .expect("compaction");
    s.append_message(user("u3", 5)).expect("u3");
    s.append_message(tool_result("r3", 6)).expect("r3");

    let context = s.build_context();
    assert_eq!(
        roles_and_texts(&context.messages),
        [
            "compactionSummary:what happened",
            "user:u2",
            "assistant:a2",
            "user:u3",
            "toolResult:r3"
        ]
    );
    let stamp = s.entry(&c).expect("entry").timestamp.clone();
    let millis = crate::session::time::parse_iso(&stamp).expect("iso");
    assert_eq!(
        serde_json::to_value(&context.messages[0]).expect("json"),
        json!({"role": "compactionSummary", "summary": "what happened", "tokensBefore": 4321, "timestamp": millis})
    );
    let summary_line = crate::session::json::to_js_line(&context.messages[0]).expect("line");
    assert!(summary_line.starts_with(
        r#"{"role":"compactionSummary","summary":"what happened","tokensBefore":4321,"timestamp":"#
    ));

    // A later compaction wins; an unknown first-kept id keeps nothing from before it.
    s.append_compaction("again", "not-an-id", 10, None, None, None)
        .expect("compaction");
    s.append_message(user("u4", 7)).expect("u4");
    assert_eq!(
        roles_and_texts(&s.build_context().messages),
        ["compactionSummary:again", "user:u4"]
    );
}

#[test]
fn branch_summaries_and_custom_messages_join_the_conversation() {
    let mut s = SessionManager::in_memory("/p");
    let u1 = s.append_message(user("u1", 1)).expect("u1");
    s.append_message(assistant("a1", 2)).expect("a1");
    s.append_message(user("abandoned", 3)).expect("u2");
    let b = s
        .branch_with_summary(Some(&u1), "tried something else", None, None, None)
        .expect("summary");
    s.append_custom("state", Some(json!({"n": 1})))
        .expect("custom");
    let cm = s
        .append_custom_message(
            "note",
            UserContent::Text("remember this".into()),
            true,
            Some(json!({"k": 2})),
        )
        .expect("custom message");
    s.branch_with_summary(Some(&cm), "", None, None, None)
        .expect("empty summary");

    let context = s.build_context();
    assert_eq!(
        roles_and_texts(&context.messages),
        [
            "user:u1",
            "branchSummary:tried something else",
            "custom:remember this"
        ]
    );
    let b_millis =
        crate::session::time::parse_iso(&s.entry(&b).expect("b").timestamp).expect("iso");
    assert_eq!(
        crate::session::json::to_js_line(&context.messages[1]).expect("line"),
        format!(
            r#"{{"role":"branchSummary","summary":"tried something else","fromId":"{u1}","timestamp":{b_millis}}}"#
        )
    );
    let cm_millis =
        crate::session::time::parse_iso(&s.entry(&cm).expect("cm").timestamp).expect("iso");
    assert_eq!(
        crate::session::json::to_js_line(&context.messages[2]).expect("line"),
        format!(
            r#"{{"role":"custom","customType":"note","content":"remember this","display":true,"details":{{"k":2}},"timestamp":{cm_millis}}}"#
        )
    );
}

#[test]
fn the_latest_level_and_model_on_the_path_win() {
    let mut s = SessionManager::in_memory("/p");
    let empty = s.build_context();
    assert_eq!(empty.thinking_level, ThinkingLevel::Off);
    assert_eq!(empty.model, None);

    s.append_model_change("openai", "gpt-a").expect("model");
    let low = s
        .append_thinking_level_change(ThinkingLevel::Low)
        .expect("level");
    s.append_thinking_level_change(ThinkingLevel::High)
        .expect("level");
    let context = s.build_context();
    assert_eq!(context.thinking_level, ThinkingLevel::High);
    assert_eq!(
        context.model,
        Some(ModelRef {
            provider: "openai".into(),
            model_id: "gpt-a".into()
        })
    );
    // An assistant message also says which model is in use.
    s.append_message(assistant("a", 1)).expect("assistant");
    assert_eq!(
        s.build_context().model.map(|m| m.model_id),
        Some("mock-model".to_string())
    );
    // Off the path, later changes do not count.
    s.branch(&low).expect("branch");
    let context = s.build_context();
    assert_eq!(context.thinking_level, ThinkingLevel::Low);
    assert_eq!(context.model.map(|m| m.model_id), Some("gpt-a".to_string()));
}
