use serde_json::json;

use super::super::test_support::{
    assistant, bash_run, calls, read_call, texts, tool_result, user, Path,
};
use super::*;

fn sized(tokens: usize) -> String {
    "x".repeat(tokens * 4)
}

fn keep(tokens: u64) -> CompactionSettings {
    CompactionSettings {
        keep_recent_tokens: tokens,
        ..CompactionSettings::default()
    }
}

/// Turn 1 answered; turn 2 reads and edits files, then answers.
fn split_turn_session() -> Path {
    let mut path = Path::default();
    path.msg(user("first task"));
    path.msg(assistant(&sized(10), Some((1_000, 100))));
    path.msg(user("second task"));
    path.msg(read_call("src/lib.rs"));
    path.msg(tool_result(&sized(40)));
    path.msg(calls(&[(
        "edit",
        json!({"path": "src/main.rs", "edits": []}),
    )]));
    path.msg(tool_result(&sized(40)));
    path.msg(assistant(&sized(10), Some((5_000, 500))));
    path
}

#[test]
fn nothing_to_do_gives_none() {
    assert_eq!(
        prepare_compaction(&[], &CompactionSettings::default()),
        None
    );

    let mut small = Path::default();
    small.msg(user("hello"));
    small.msg(assistant("hi there", Some((5_000, 1_000))));
    assert_eq!(
        prepare_compaction(&small.entries, &CompactionSettings::default()),
        None,
        "everything fits the keep-recent budget"
    );

    small.compaction("S", "e0", None);
    assert_eq!(
        prepare_compaction(&small.entries, &keep(1)),
        None,
        "already compacted"
    );
}

#[test]
fn split_turn_summarizes_history_and_turn_prefix_separately() {
    let path = split_turn_session();
    // The budget runs out in the last tool result; the cut moves to the final answer, inside
    // turn 2.
    let prep = prepare_compaction(&path.entries, &keep(50)).expect("something to compact");
    assert_eq!(prep.first_kept_entry_id, "e7");
    assert!(prep.is_split_turn);
    assert_eq!(
        texts(&prep.messages_to_summarize),
        ["first task", sized(10).as_str()]
    );
    assert_eq!(
        prep.turn_prefix_messages
            .iter()
            .map(|m| m.role())
            .collect::<Vec<_>>(),
        ["user", "assistant", "toolResult", "assistant", "toolResult"]
    );
    assert_eq!(prep.tokens_before, 5_500);
    assert_eq!(prep.previous_summary, None);
    let lists = prep.file_ops.file_lists();
    assert_eq!(lists.read_files, ["src/lib.rs"]);
    assert_eq!(lists.modified_files, ["src/main.rs"]);
}

#[test]
fn whole_turns_are_summarized_without_a_prefix() {
    let path = split_turn_session();
    // Turn 2 estimates at 110 tokens (3 + 7 + 40 + 10 + 40 + 10): a budget of 110 is reached
    // exactly at its user message, so the cut falls between the turns.
    let prep = prepare_compaction(&path.entries, &keep(110)).expect("something to compact");
    assert_eq!(prep.first_kept_entry_id, "e2");
    assert!(!prep.is_split_turn);
    assert!(prep.turn_prefix_messages.is_empty());
    assert_eq!(prep.messages_to_summarize.len(), 2);
}

#[test]
fn chained_compaction_resummarizes_kept_messages_and_carries_the_previous_summary() {
    let mut path = Path::default();
    path.msg(user("old question"));
    path.msg(assistant("old answer", None));
    path.msg(user("kept question"));
    path.msg(assistant("kept answer", Some((3_000, 300))));
    path.compaction(
        "First summary",
        "e2",
        Some(json!({"readFiles": ["old.rs"], "modifiedFiles": ["changed.rs"]})),
    );
    path.msg(user(&sized(10)));
    path.msg(read_call("new.rs"));
    path.msg(tool_result(&sized(10)));
    path.msg(assistant(&sized(10), Some((8_000, 2_000))));
    path.msg(user("latest"));
    path.msg(user(&sized(10)));

    let prep = prepare_compaction(&path.entries, &keep(12)).expect("something to compact");
    assert_eq!(prep.first_kept_entry_id, "e9");
    assert!(!prep.is_split_turn);
    assert_eq!(prep.previous_summary.as_deref(), Some("First summary"));
    // The messages the first compaction kept are summarized now; its summary is not a message.
    let summarized = texts(&prep.messages_to_summarize);
    assert_eq!(summarized[..2], ["kept question", "kept answer"]);
    assert_eq!(summarized.len(), 6);
    assert!(!summarized.iter().any(|t| t.contains("First summary")));
    assert!(!summarized.iter().any(|t| t.contains("old")));
    // Context: summary, kept, newer: the last usage (10000) plus "latest" (2) and 10.
    assert_eq!(prep.tokens_before, 10_012);
    let lists = prep.file_ops.file_lists();
    assert_eq!(lists.read_files, ["new.rs", "old.rs"]);
    assert_eq!(lists.modified_files, ["changed.rs"]);
}

#[test]
fn file_lists_of_an_extension_compaction_are_not_carried_over() {
    let mut path = Path::default();
    path.msg(user("q"));
    path.push(EntryKind::Compaction {
        summary: "from an extension".into(),
        first_kept_entry_id: "e0".into(),
        tokens_before: 1,
        details: Some(json!({"readFiles": ["ext.rs"], "modifiedFiles": []})),
        usage: None,
        from_hook: Some(true),
        system_message: None,
    });
    path.msg(user(&sized(10)));
    path.msg(assistant(&sized(10), None));
    path.msg(user(&sized(10)));
    let prep = prepare_compaction(&path.entries, &keep(10)).expect("something to compact");
    assert_eq!(prep.file_ops.file_lists().read_files, Vec::<String>::new());
    assert_eq!(prep.previous_summary.as_deref(), Some("from an extension"));
}

#[test]
fn tokens_before_are_estimated_without_any_usage() {
    // (Every assistant message has a usage, zero or not, so none may appear here.)
    let mut path = Path::default();
    path.msg(user(&sized(30)));
    path.msg(bash_run("", &sized(30)));
    path.msg(user(&sized(30)));
    let prep = prepare_compaction(&path.entries, &keep(30)).expect("something to compact");
    assert_eq!(prep.tokens_before, 90);
    assert_eq!(prep.first_kept_entry_id, "e2");
}
