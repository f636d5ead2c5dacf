//! `tandem undo`: the last turn's changes taken back on disk, around the user's own edits.

use serde_json::Value;
use tandem_tests::wire::WireApi;

use crate::queue_edit_task;
use crate::support::{read_jsonl, Sandbox};

fn custom_types(entries: &[Value]) -> Vec<&str> {
    entries
        .iter()
        .filter(|e| e["type"] == "custom")
        .filter_map(|e| e["customType"].as_str())
        .collect()
}

#[test]
fn undo_after_user_edits_elsewhere_in_the_file_restores_the_turn_and_keeps_them() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    queue_edit_task(&sandbox);
    sandbox
        .run(&["-p", "change world to there in hello.txt"])
        .expect_code(0);
    assert_eq!(sandbox.read("hello.txt"), "hello there\nsecond line\n");
    let entries = read_jsonl(&sandbox.only_session());
    let checkpoint = entries.last().expect("entries");
    assert_eq!(checkpoint["customType"], "tandem.checkpoint");
    assert_eq!(
        checkpoint["data"]["prompt"],
        "change world to there in hello.txt"
    );
    assert_eq!(
        checkpoint["data"]["changes"][0]["hunks"][0]["before"],
        "hello world\n"
    );
    assert_eq!(
        checkpoint["data"]["changes"][0]["hunks"][0]["after"],
        "hello there\n"
    );

    // The user writes above and below the changed line.
    sandbox.write(
        "hello.txt",
        "# greeting\nhello there\nsecond line\nthird line\n",
    );
    let run = sandbox.run_raw(&["undo"], None);
    run.expect_code(0);
    assert_eq!(run.stdout, "Undid 1 turn: 1 file changed back.\n");
    assert_eq!(
        sandbox.read("hello.txt"),
        "# greeting\nhello world\nsecond line\nthird line\n"
    );
    let entries = read_jsonl(&sandbox.only_session());
    assert_eq!(custom_types(&entries), ["tandem.checkpoint", "tandem.undo"]);

    // Undone once: a second undo has nothing left and says so.
    let again = sandbox.run_raw(&["undo", "-c"], None);
    again.expect_code(1);
    assert!(again.stderr.contains("Nothing to undo"), "{}", again.stderr);
    assert_eq!(
        sandbox.read("hello.txt"),
        "# greeting\nhello world\nsecond line\nthird line\n"
    );
}

#[test]
fn a_hunk_changed_since_is_listed_and_left() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    queue_edit_task(&sandbox);
    sandbox
        .run(&["-p", "change world to there in hello.txt"])
        .expect_code(0);
    sandbox.write("hello.txt", "hello there, friend\nsecond line\n");
    let file = sandbox.only_session();
    let run = sandbox.run_raw(&["undo", "--session", &file.to_string_lossy()], None);
    run.expect_code(0);
    assert_eq!(
        run.stdout,
        "Nothing to put back for 1 turn: every change was edited since, so all were left as they are.\n  hello.txt:1: changed since the turn; left as it is\n"
    );
    assert_eq!(
        sandbox.read("hello.txt"),
        "hello there, friend\nsecond line\n"
    );
}

#[test]
fn undo_refuses_run_flags() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let run = sandbox.run(&["--model", "mock/mock-model", "undo"]);
    run.expect_code(1);
    assert!(run.stderr.contains("tandem undo"), "{}", run.stderr);
}
