use serde_json::Value;
use tandem_ai::UserContent;

use super::super::test_support::{assistant, bash_run, read_call, tool_result, user, Path};
use super::*;

/// A message of `tokens` estimated tokens (4 characters each).
fn sized(tokens: usize) -> String {
    "x".repeat(tokens * 4)
}

fn role_at(path: &Path, index: usize) -> String {
    match &path.entries[index].kind {
        EntryKind::Message { message } => message.role().to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn budget_decides_how_much_recent_history_is_kept() {
    // Ten turns of a 10-token question and a 10-token answer: u_k at 2k, a_k at 2k + 1.
    let mut path = Path::default();
    for _ in 0..10 {
        path.msg(user(&sized(10)));
        path.msg(assistant(&sized(10), None));
    }
    let entries = &path.entries;

    // 40 tokens are reached at u8: keep from there; a whole turn, nothing split.
    let cut = find_cut_point(entries, 0, entries.len(), 40);
    assert_eq!(
        cut,
        CutPoint {
            first_kept_entry_index: 16,
            turn_start_index: None,
            is_split_turn: false,
        }
    );

    // 45 tokens are reached at a7: the cut splits turn 7, which began at u7.
    let cut = find_cut_point(entries, 0, entries.len(), 45);
    assert_eq!(
        cut,
        CutPoint {
            first_kept_entry_index: 15,
            turn_start_index: Some(14),
            is_split_turn: true,
        }
    );

    // Everything fits: keep from the first message.
    let cut = find_cut_point(entries, 0, entries.len(), 1_000);
    assert_eq!(cut.first_kept_entry_index, 0);
    assert!(!cut.is_split_turn);
}

#[test]
fn never_cuts_at_a_tool_result() {
    let mut path = Path::default();
    path.msg(user("please look"));
    for file in ["a", "b", "c"] {
        path.msg(read_call(file));
        path.msg(tool_result(&sized(50)));
        path.msg(tool_result(&sized(30)));
    }
    path.msg(assistant("done", None));
    path.msg(user("thanks"));
    path.msg(assistant("ok", None));
    let entries = &path.entries;
    for budget in 1..=400 {
        let cut = find_cut_point(entries, 0, entries.len(), budget);
        let role = role_at(&path, cut.first_kept_entry_index);
        assert_ne!(role, "toolResult", "budget {budget}");
    }
    // Crossing the budget inside the results of the third call keeps from the next assistant
    // message, splitting the turn begun by the user.
    let cut = find_cut_point(entries, 0, entries.len(), 50);
    assert_eq!(cut.first_kept_entry_index, 10);
    assert_eq!(role_at(&path, 10), "assistant");
    // Crossing it at the third call keeps the call with its results.
    assert_eq!(
        find_cut_point(entries, 0, entries.len(), 85).first_kept_entry_index,
        7
    );
    assert_eq!(cut.turn_start_index, Some(0));
    assert!(cut.is_split_turn);
}

#[test]
fn budget_spent_in_trailing_tool_results_keeps_the_last_call() {
    let mut path = Path::default();
    path.msg(user("Turn 1"));
    path.msg(assistant("A1", None));
    path.msg(user("Turn 2"));
    path.msg(read_call("big"));
    path.msg(tool_result(&sized(2_000)));
    path.msg(tool_result(&sized(2_000)));
    let cut = find_cut_point(&path.entries, 0, path.entries.len(), 1_000);
    assert_eq!(cut.first_kept_entry_index, 3);
    assert_eq!(cut.turn_start_index, Some(2));
}

#[test]
fn without_cut_points_the_range_is_kept() {
    let mut path = Path::default();
    path.msg(tool_result("orphan"));
    let cut = find_cut_point(&path.entries, 0, 1, 1);
    assert_eq!(cut.first_kept_entry_index, 0);
    assert!(!cut.is_split_turn);
}

#[test]
fn settings_entries_before_the_cut_stay_with_it() {
    let mut path = Path::default();
    path.msg(user(&sized(10)));
    path.msg(assistant(&sized(10), None));
    path.model_change();
    path.msg(user(&sized(10)));
    path.msg(assistant(&sized(10), None));
    // 20 tokens are reached at the second user message; the model change before it is kept,
    // and the first turn, which was complete, is not treated as split.
    let cut = find_cut_point(&path.entries, 0, path.entries.len(), 20);
    assert_eq!(
        cut,
        CutPoint {
            first_kept_entry_index: 2,
            turn_start_index: None,
            is_split_turn: false,
        }
    );
}

#[test]
fn user_run_commands_and_extension_messages_start_turns() {
    let mut path = Path::default();
    path.msg(user("q"));
    path.msg(assistant("a", None));
    path.msg(bash_run("make", &sized(5)));
    path.msg(assistant(&sized(30), None));
    assert_eq!(find_turn_start_index(&path.entries, 3, 0), Some(2));

    path.push(EntryKind::CustomMessage {
        custom_type: "note".into(),
        content: UserContent::Text("n".into()),
        details: None::<Value>,
        display: true,
    });
    path.msg(assistant(&sized(30), None));
    assert_eq!(find_turn_start_index(&path.entries, 5, 0), Some(4));
    // Not before `start`.
    assert_eq!(find_turn_start_index(&path.entries, 1, 1), None);

    // A cut on the assistant message after the command splits the command's turn.
    let cut = find_cut_point(&path.entries, 0, 4, 30);
    assert_eq!(cut.first_kept_entry_index, 3);
    assert_eq!(cut.turn_start_index, Some(2));
    // A cut on the command itself is a clean turn boundary.
    let cut = find_cut_point(&path.entries, 0, 4, 31);
    assert_eq!(cut.first_kept_entry_index, 2);
    assert!(!cut.is_split_turn);
}
