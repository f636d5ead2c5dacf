//! Recording a run's changes and taking them back against documents the user edited since.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tandem_ai::UserMessage;

use super::reverse::{reverse_step, CHANGED_SINCE};
use super::*;
use crate::calls::AppliedChange;
use crate::session::SessionManager;
use crate::workspace::{ChangeOutcome, ScriptedWorkspace};

fn temp_root() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(tmp.path()).expect("canonical root");
    (tmp, root)
}

fn applied(path: &Path, old: Option<&str>, new: &str) -> AppliedChange {
    AppliedChange {
        path: path.to_path_buf(),
        real: path.to_path_buf(),
        old_text: old.map(str::to_owned),
        new_text: new.to_owned(),
    }
}

/// The step of a run that changed the existing file `path` from `old` to `new`.
fn modified(path: &str, old: &str, new: &str) -> Step {
    Step {
        path: path.into(),
        created: false,
        hunks: hunks_of(old, new),
    }
}

fn numbered(lines: std::ops::Range<usize>) -> String {
    lines.map(|i| format!("line {i}\n")).collect()
}

/// Appends a prompt and the checkpoint of `changes` for it; returns the prompt's entry id and
/// the checkpoint's.
fn record_turn(
    session: &Mutex<SessionManager>,
    prompt: &str,
    changes: &[AppliedChange],
) -> (String, String) {
    let mut s = session.lock().expect("session");
    let turn = s
        .append_message(UserMessage::text(prompt))
        .expect("prompt entry");
    let checkpoint = checkpoint_of(changes, Some(turn.clone()), prompt).expect("a checkpoint");
    let id = s
        .append_custom(
            CHECKPOINT_TYPE,
            Some(serde_json::to_value(&checkpoint).expect("json")),
        )
        .expect("checkpoint entry");
    (turn, id)
}

#[test]
fn a_changed_line_is_recorded_with_its_context_not_the_whole_file() {
    let old = numbered(0..100);
    let new = old.replace("line 50\n", "LINE FIFTY\n");
    let hunks = hunks_of(&old, &new);
    assert_eq!(
        hunks,
        vec![Hunk {
            line: 50,
            before: "line 50\n".into(),
            after: "LINE FIFTY\n".into(),
            context_before: "line 48\nline 49\n".into(),
            context_after: "line 51\nline 52\n".into(),
        }]
    );
    let checkpoint = checkpoint_of(
        &[applied(Path::new("/w/a.txt"), Some(&old), &new)],
        None,
        "p",
    )
    .expect("a checkpoint");
    let json = serde_json::to_string(&checkpoint).expect("json");
    assert!(json.len() < 300, "{json}");
}

#[test]
fn a_run_that_changed_nothing_has_no_checkpoint() {
    assert_eq!(checkpoint_of(&[], None, "p"), None);
    let same = applied(Path::new("/w/a"), Some("x\n"), "x\n");
    assert_eq!(checkpoint_of(&[same], None, "p"), None);
}

#[test]
fn a_long_prompt_is_shortened_to_its_first_line() {
    let change = applied(Path::new("/w/a"), Some("a\n"), "b\n");
    let long = format!("\n  {}\nsecond line", "word ".repeat(40));
    let checkpoint = checkpoint_of(&[change], None, &long).expect("a checkpoint");
    assert_eq!(checkpoint.prompt.chars().count(), 80);
    assert!(checkpoint.prompt.starts_with("word word"));
    assert!(checkpoint.prompt.ends_with('…'));
}

#[test]
fn undo_after_user_edits_elsewhere_in_the_file_still_applies() {
    let old = numbered(0..40);
    let new = old
        .replace("line 10\n", "ten\n")
        .replace("line 30\n", "thirty\nthirty-one\n");
    let step = modified("/w/a.txt", &old, &new);
    // The user added lines at the top and edited line 20 after the turn.
    let now = format!(
        "// header\n// more\n{}",
        new.replace("line 20\n", "twenty\n")
    );
    let (text, refused) = reverse_step(&now, &step);
    assert_eq!(refused, vec![]);
    assert_eq!(
        text,
        format!(
            "// header\n// more\n{}",
            old.replace("line 20\n", "twenty\n")
        )
    );
}

#[test]
fn a_hunk_the_user_changed_is_refused_and_the_others_reversed() {
    let old = numbered(0..40);
    let new = old
        .replace("line 10\n", "ten\n")
        .replace("line 30\n", "thirty\n");
    let step = modified("/w/a.txt", &old, &new);
    let now = new.replace("thirty\n", "thirty, edited by the user\n");
    let (text, refused) = reverse_step(&now, &step);
    assert_eq!(
        refused,
        vec![reverse::RefusedHunk {
            path: "/w/a.txt".into(),
            line: 31,
            reason: CHANGED_SINCE.into(),
        }]
    );
    assert_eq!(text, now.replace("ten\n", "line 10\n"));
}

#[test]
fn a_hunk_whose_neighbour_the_user_edited_is_found_by_its_own_lines() {
    let old = numbered(0..10);
    let new = old.replace("line 5\n", "five\n");
    let step = modified("/w/a", &old, &new);
    let now = new.replace("line 4\n", "four (user)\n");
    let (text, refused) = reverse_step(&now, &step);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(text, now.replace("five\n", "line 5\n"));
}

#[test]
fn of_repeated_lines_the_one_where_the_hunk_was_is_reversed() {
    let old = "a\nx\nb\nc\nd\ne\nf\nx\ng\n";
    let new = "a\nx\nb\nc\nd\ne\nf\nY\ng\n";
    let step = modified("/w/a", old, new);
    // Its context is gone, and "Y" now occurs twice: the one near line 7 wins.
    let now = "Y\na\nx\nb\nc\nd\ne\nF\nY\nG\n";
    let (text, refused) = reverse_step(now, &step);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(text, "Y\na\nx\nb\nc\nd\ne\nF\nx\nG\n");
}

#[tokio::test]
async fn undo_restores_a_file_the_user_edited_elsewhere_and_lists_the_refused_hunk() {
    let (_tmp, root) = temp_root();
    let file = root.join("a.txt");
    let old = numbered(0..30);
    let new = old
        .replace("line 5\n", "five\n")
        .replace("line 25\n", "twenty-five\n");
    // The buffer is open with the user's later edits: one elsewhere, one inside a hunk.
    let now = format!(
        "// added by the user\n{}",
        new.replace("twenty-five\n", "25 (user)\n")
    );
    std::fs::write(&file, &new).expect("write");
    let workspace = ScriptedWorkspace::new(&root);
    workspace.open_buffer(&file, now.clone());
    let session = Mutex::new(SessionManager::in_memory(&root));
    record_turn(&session, "rename", &[applied(&file, Some(&old), &new)]);

    let report = undo(&workspace, &session, None).await.expect("undo");
    assert_eq!(report.outcome, UndoOutcome::Applied);
    assert_eq!(report.changed, vec![file.clone()]);
    assert_eq!(report.refused.len(), 1);
    assert_eq!(report.refused[0].line, 26);
    assert_eq!(
        workspace.buffer(&file).expect("buffer"),
        now.replace("five\n", "line 5\n")
    );
    // One proposal, computed against the buffer (not the disk).
    let proposals = workspace.proposals();
    assert_eq!(proposals.len(), 1);
    assert_eq!(proposals[0].old_text.as_deref(), Some(now.as_str()));
}

#[tokio::test]
async fn undo_deletes_a_created_file_only_while_it_is_unchanged() {
    let (_tmp, root) = temp_root();
    let kept = root.join("kept.txt");
    let gone = root.join("gone.txt");
    std::fs::write(&kept, "new\nand changed by the user\n").expect("write");
    std::fs::write(&gone, "new\n").expect("write");
    let workspace = ScriptedWorkspace::new(&root);
    let session = Mutex::new(SessionManager::in_memory(&root));
    record_turn(
        &session,
        "create two files",
        &[applied(&kept, None, "new\n"), applied(&gone, None, "new\n")],
    );
    let report = undo(&workspace, &session, None).await.expect("undo");
    assert_eq!(report.outcome, UndoOutcome::Applied);
    assert_eq!(report.deleted, vec![gone.clone()]);
    assert!(!gone.exists());
    assert_eq!(
        std::fs::read_to_string(&kept).expect("kept"),
        "new\nand changed by the user\n"
    );
    assert_eq!(report.refused.len(), 1);
    assert_eq!(report.refused[0].path, kept.to_string_lossy());
}

#[tokio::test]
async fn two_turns_undo_newest_first_and_never_twice() {
    let (_tmp, root) = temp_root();
    let file = root.join("a.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").expect("write");
    let workspace = ScriptedWorkspace::new(&root);
    let session = Mutex::new(SessionManager::in_memory(&root));
    let (first, _) = record_turn(
        &session,
        "first",
        &[applied(&file, Some("one\ntwo\n"), "one\ntwo\nthree\n")],
    );
    std::fs::write(&file, "ONE\ntwo\nthree\n").expect("write");
    record_turn(
        &session,
        "second",
        &[applied(
            &file,
            Some("one\ntwo\nthree\n"),
            "ONE\ntwo\nthree\n",
        )],
    );

    let report = undo(&workspace, &session, None).await.expect("first undo");
    assert_eq!(report.turns.len(), 1);
    assert_eq!(report.turns[0].prompt, "second");
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "one\ntwo\nthree\n"
    );

    let report = undo(&workspace, &session, None).await.expect("second undo");
    assert_eq!(report.turns[0].prompt, "first");
    assert_eq!(report.turns[0].turn.as_deref(), Some(first.as_str()));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "one\ntwo\n");

    let third = undo(&workspace, &session, None).await;
    assert_eq!(third, Err(UndoError::NothingToUndo));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "one\ntwo\n");
}

#[tokio::test]
async fn back_to_a_turn_undoes_every_later_turn_as_one_proposal() {
    let (_tmp, root) = temp_root();
    let a = root.join("a.txt");
    let b = root.join("b.txt");
    std::fs::write(&a, "a2\n").expect("write");
    std::fs::write(&b, "b1\n").expect("write");
    let workspace = ScriptedWorkspace::new(&root);
    let session = Mutex::new(SessionManager::in_memory(&root));
    let (kept, _) = record_turn(&session, "kept", &[applied(&a, Some("a0\n"), "a1\n")]);
    record_turn(&session, "two", &[applied(&a, Some("a1\n"), "a2\n")]);
    record_turn(&session, "three", &[applied(&b, None, "b1\n")]);

    let report = undo(&workspace, &session, Some(&kept)).await.expect("undo");
    let prompts: Vec<_> = report.turns.iter().map(|t| t.prompt.as_str()).collect();
    assert_eq!(prompts, ["three", "two"]);
    assert_eq!(std::fs::read_to_string(&a).expect("read"), "a1\n");
    assert!(!b.exists());
    assert_eq!(
        undo(&workspace, &session, Some(&kept)).await,
        Err(UndoError::NothingToUndo)
    );
    assert_eq!(
        undo(&workspace, &session, Some("nope")).await,
        Err(UndoError::UnknownTurn("nope".into()))
    );
}

#[tokio::test]
async fn a_rejected_undo_changes_nothing_and_can_be_asked_again() {
    let (_tmp, root) = temp_root();
    let file = root.join("a.txt");
    std::fs::write(&file, "after\n").expect("write");
    let workspace = ScriptedWorkspace::new(&root);
    workspace.answer_changes([ChangeOutcome::Rejected {
        reason: Some("no".into()),
    }]);
    let session = Mutex::new(SessionManager::in_memory(&root));
    record_turn(
        &session,
        "p",
        &[applied(&file, Some("before\n"), "after\n")],
    );
    let report = undo(&workspace, &session, None).await.expect("undo");
    assert_eq!(
        report.outcome,
        UndoOutcome::Rejected {
            reason: Some("no".into())
        }
    );
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "after\n");
    let report = undo(&workspace, &session, None).await.expect("again");
    assert_eq!(report.outcome, UndoOutcome::Applied);
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "before\n");
}

#[tokio::test]
async fn a_recorded_path_outside_the_workspace_is_refused_not_written() {
    let (_tmp, root) = temp_root();
    let (_other, outside) = temp_root();
    let file = outside.join("x.txt");
    std::fs::write(&file, "after\n").expect("write");
    let workspace = ScriptedWorkspace::new(&root);
    let session = Mutex::new(SessionManager::in_memory(&root));
    record_turn(
        &session,
        "p",
        &[applied(&file, Some("before\n"), "after\n")],
    );
    let report = undo(&workspace, &session, None).await.expect("undo");
    assert_eq!(report.outcome, UndoOutcome::NothingToApply);
    assert!(report.refused[0].reason.contains("outside the workspace"));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "after\n");
}

#[test]
fn checkpoint_and_undo_entries_stay_out_of_the_model_context() {
    let (_tmp, root) = temp_root();
    let session = Mutex::new(SessionManager::in_memory(&root));
    let file = root.join("a");
    record_turn(&session, "p", &[applied(&file, Some("a\n"), "b\n")]);
    let mut s = session.lock().expect("session");
    s.append_custom(
        UNDO_TYPE,
        Some(serde_json::json!({"version": 1, "checkpoints": []})),
    )
    .expect("undo entry");
    let context = s.build_context();
    assert_eq!(context.messages.len(), 1);
    assert_eq!(context.messages[0].role(), "user");
}

#[tokio::test]
async fn an_applied_undo_is_told_to_the_model_out_of_sight() {
    let (_tmp, root) = temp_root();
    let file = root.join("a.txt");
    std::fs::write(&file, "after\n").expect("write");
    let workspace = ScriptedWorkspace::new(&root);
    let session = Mutex::new(SessionManager::in_memory(&root));
    record_turn(
        &session,
        "rewrite a",
        &[applied(&file, Some("before\n"), "after\n")],
    );
    undo(&workspace, &session, None).await.expect("undo");
    let s = session.lock().expect("session");
    let messages = s.build_context().messages;
    assert_eq!(messages.len(), 2, "the prompt, then the note");
    let note = serde_json::to_value(&messages[1]).expect("json");
    assert_eq!(note["role"], "custom");
    assert_eq!(note["customType"], UNDO_NOTE_TYPE);
    assert_eq!(note["display"], false);
    let text = note["content"].as_str().expect("text");
    assert!(
        text.contains("undid the file changes made for 1 prompt (\"rewrite a\")"),
        "{text}"
    );
}
