use serde_json::json;
use tandem_ai::ImageContent;

use super::*;

fn bash(output: &str) -> BashExecutionMessage {
    BashExecutionMessage {
        command: "ls -a".into(),
        output: output.into(),
        exit_code: Some(0),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp: 42,
        exclude_from_context: None,
    }
}

fn only_text(message: &Message) -> (&str, i64) {
    let Message::User(user) = message else {
        panic!("expected a user message, got {message:?}")
    };
    let UserContent::Blocks(blocks) = &user.content else {
        panic!("expected blocks")
    };
    assert_eq!(blocks.len(), 1);
    let UserBlock::Text(t) = &blocks[0] else {
        panic!("expected text")
    };
    (&t.text, user.timestamp)
}

#[test]
fn bash_execution_text_matches_pi_format() {
    assert_eq!(
        bash_execution_to_text(&bash("a\nb")),
        "Ran `ls -a`\n```\na\nb\n```"
    );
    assert_eq!(
        bash_execution_to_text(&bash("")),
        "Ran `ls -a`\n(no output)"
    );

    let mut failed = bash("oops");
    failed.exit_code = Some(2);
    failed.truncated = true;
    failed.full_output_path = Some("/tmp/out.log".into());
    assert_eq!(
        bash_execution_to_text(&failed),
        "Ran `ls -a`\n```\noops\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/out.log]"
    );

    // Cancellation wins over the exit code; truncation without a path says nothing.
    let mut cancelled = bash("");
    cancelled.cancelled = true;
    cancelled.exit_code = Some(130);
    cancelled.truncated = true;
    assert_eq!(
        bash_execution_to_text(&cancelled),
        "Ran `ls -a`\n(no output)\n\n(command cancelled)"
    );
}

#[test]
fn bash_execution_becomes_a_user_message_unless_excluded() {
    let shown = CodingMessage::BashExecution(bash("x")).into_agent_message();
    let mut hidden = bash("secret");
    hidden.exclude_from_context = Some(true);
    let hidden = CodingMessage::BashExecution(hidden).into_agent_message();

    let out = convert_to_llm(&[shown, hidden]);
    assert_eq!(out.len(), 1);
    assert_eq!(only_text(&out[0]), ("Ran `ls -a`\n```\nx\n```", 42));
}

#[test]
fn custom_content_passes_through_as_user_content() {
    let text = custom_message(
        "note",
        UserContent::Text("remember this".into()),
        true,
        None,
        "1970-01-01T00:00:01.500Z",
    );
    let image = UserBlock::Image(ImageContent {
        data: "AAAA".into(),
        mime_type: "image/png".into(),
    });
    let blocks = custom_message(
        "pic",
        UserContent::Blocks(vec![image.clone()]),
        false,
        Some(json!({"k": 1})),
        "1970-01-01T00:00:02Z",
    );
    let out = convert_to_llm(&[text, blocks]);
    assert_eq!(only_text(&out[0]), ("remember this", 1500));
    let Message::User(user) = &out[1] else {
        panic!("user")
    };
    assert_eq!(user.content, UserContent::Blocks(vec![image]));
    assert_eq!(user.timestamp, 2000);
}

#[test]
fn summaries_are_wrapped_for_the_model() {
    let branch = branch_summary_message("explored X", "abcd1234", "1970-01-01T00:00:00.007Z");
    let compaction = compaction_summary_message("did Y", 1234, "1970-01-01T00:00:00.009Z");
    let out = convert_to_llm(&[branch, compaction]);
    assert_eq!(
        only_text(&out[0]),
        (
            "The conversation returned here from another branch of work. What happened on that \
             branch:\n\n<summary>\nexplored X</summary>",
            7
        )
    );
    assert_eq!(
        only_text(&out[1]),
        (
            "Earlier turns of this conversation were condensed to save context. Their \
             summary:\n\n<summary>\ndid Y\n</summary>",
            9
        )
    );
}

#[test]
fn model_roles_pass_and_unknown_roles_drop() {
    let user: AgentMessage = UserMessage::text("hi").into();
    let unknown = AgentMessage::Custom(CustomMessage::new("hookMessage", Default::default()));
    let malformed: AgentMessage =
        serde_json::from_value(json!({"role": "branchSummary", "summary": 5})).expect("parses");
    let out = convert_to_llm(&[user.clone(), unknown, malformed]);
    assert_eq!(out, vec![user.as_llm().expect("llm").clone()]);
}

#[test]
fn constructors_write_pi_field_order() {
    let m = custom_message(
        "t",
        UserContent::Text("c".into()),
        true,
        Some(json!(1)),
        "1970-01-01T00:00:00Z",
    );
    assert_eq!(
        serde_json::to_string(&m).expect("json"),
        r#"{"role":"custom","customType":"t","content":"c","display":true,"details":1,"timestamp":0}"#
    );
    let m = compaction_summary_message("s", 9, "1970-01-01T00:00:00Z");
    assert_eq!(
        serde_json::to_string(&m).expect("json"),
        r#"{"role":"compactionSummary","summary":"s","tokensBefore":9,"timestamp":0}"#
    );
    let m = branch_summary_message("s", "id", "1970-01-01T00:00:00Z");
    assert_eq!(
        serde_json::to_string(&m).expect("json"),
        r#"{"role":"branchSummary","summary":"s","fromId":"id","timestamp":0}"#
    );
    let m = CodingMessage::BashExecution(bash("o")).into_agent_message();
    assert_eq!(
        serde_json::to_string(&m).expect("json"),
        r#"{"role":"bashExecution","command":"ls -a","output":"o","exitCode":0,"cancelled":false,"truncated":false,"timestamp":42}"#
    );
}

#[test]
fn pi_bash_line_round_trips_through_the_typed_view() {
    let line = json!({"role": "bashExecution", "command": "pwd", "output": "/x\n",
        "exitCode": 0, "cancelled": false, "truncated": false, "timestamp": 1_700_000_000_000_i64,
        "excludeFromContext": false});
    let message: AgentMessage = serde_json::from_value(line.clone()).expect("parses");
    let AgentMessage::Custom(custom) = &message else {
        panic!("custom")
    };
    let typed = CodingMessage::parse(custom).expect("typed");
    let back = serde_json::to_value(typed.into_agent_message()).expect("json");
    assert_eq!(back, line);
}

#[test]
fn entries_become_messages() {
    let entry = |kind| SessionEntry {
        kind,
        id: "e1".into(),
        parent_id: None,
        timestamp: "2026-11-30T07:13:25.984Z".into(),
    };
    let compaction = entry(EntryKind::Compaction {
        summary: "S".into(),
        first_kept_entry_id: "e0".into(),
        tokens_before: 5,
        details: None,
        usage: None,
        from_hook: None,
        system_message: None,
    });
    let expected = CompactionSummaryMessage {
        summary: "S".into(),
        tokens_before: 5,
        timestamp: 1_796_022_805_984,
    };
    assert_eq!(
        message_from_entry(&compaction),
        Some(CodingMessage::CompactionSummary(expected).into_agent_message())
    );
    let label = entry(EntryKind::Label {
        target_id: "e0".into(),
        label: None,
    });
    assert_eq!(message_from_entry(&label), None);
}
