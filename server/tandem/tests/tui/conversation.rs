//! A conversation: a prompt, tool cards with a diff, the answer; steering while a run goes on;
//! stopping a run; hostile output; leaving.

use serde_json::json;
use tandem_tests::mock_llm::Gate;
use tandem_tests::wire::{self, Turn, WireApi};

use crate::support::{read_jsonl, Sandbox};
use crate::{answers, open, ready, send, wait_text, WAIT};

#[test]
fn a_turn_with_a_read_an_edit_and_a_command_shows_cards_and_the_diff() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write("hello.txt", "hello world\nsecond line\n");
    sandbox.answer(&Turn::text("Let me read it.").with_tool_call(
        "call_1",
        "read",
        json!({"path": "hello.txt"}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_2",
        "edit",
        json!({"path": "hello.txt", "edits": [{"oldText": "hello world", "newText": "hello there"}]}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_3",
        "bash",
        json!({"command": "echo one; echo two"}),
    ));
    sandbox.answer(&Turn::text("Changed **world** to `there`."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "change world to there");
    let screen = wait_text(&tmux, "Changed world to there.");
    let text = screen.text();
    assert!(text.contains("› change world to there"), "{screen}");
    assert!(text.contains("● Read hello.txt"), "{screen}");
    assert!(text.contains("● Edit hello.txt"), "{screen}");
    // The diff with the file's own line numbers.
    assert!(text.contains("1 -hello world"), "{screen}");
    assert!(text.contains("1 +hello there"), "{screen}");
    assert!(text.contains("2  second line"), "{screen}");
    assert!(text.contains("● $ echo one; echo two"), "{screen}");
    assert!(text.contains("  one\n  two"), "{screen}");
    // Markdown rendered: no asterisks or backticks left.
    assert!(!text.contains("**world**"), "{screen}");
    ready(&tmux);
    assert_eq!(sandbox.read("hello.txt"), "hello there\nsecond line\n");
    assert_eq!(
        answers(&sandbox).last().map(String::as_str),
        Some("Changed **world** to `there`.")
    );
    // The footer: model, context and tokens.
    let screen = tmux.capture();
    assert!(screen.contains("mock/mock-model"), "{screen}");
    assert!(screen.contains("context "), "{screen}");
}

#[test]
fn enter_while_running_steers_and_esc_stops() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let gate = Gate::new();
    sandbox.enqueue(
        wire::response(WireApi::OpenAiCompletions, &Turn::text("First answer.")).held_until(&gate),
    );
    sandbox.answer(&Turn::text("Steered answer."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "start");
    wait_text(&tmux, "Working…");
    // Enter while the model is answering: steering, shown as queued.
    send(&tmux, "also mention the tests");
    wait_text(&tmux, "steering: also mention the tests");
    gate.open();
    wait_text(&tmux, "Steered answer.");
    ready(&tmux);
    let requests = sandbox.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].json().expect("JSON request");
    assert!(
        second.to_string().contains("also mention the tests"),
        "the steering message reached the model: {second}"
    );

    // A command that would run for minutes: Esc stops it, and the next prompt works.
    sandbox.answer(&Turn::tool_call(
        "call_9",
        "bash",
        json!({"command": "sleep 300"}),
    ));
    send(&tmux, "run something long");
    wait_text(&tmux, "$ sleep 300");
    tmux.send_keys(&["Escape"]);
    wait_text(&tmux, "Stopped.");
    ready(&tmux);
    sandbox.answer(&Turn::text("Back again."));
    send(&tmux, "are you there");
    wait_text(&tmux, "Back again.");
}

#[test]
fn model_output_cannot_drive_the_terminal() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    // Clear the screen, set the window title, write the clipboard, reorder text.
    let hostile = "safe start \u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7} \u{202e}reversed\u{202c} safe end";
    sandbox.answer(&Turn::text(hostile));
    let tmux = open(&sandbox, &[], 100, 30);
    send(&tmux, "hi");
    let screen = wait_text(&tmux, "safe end");
    assert!(
        screen.contains("safe start"),
        "the screen was not cleared: {screen}"
    );
    assert!(
        screen.contains("␛[2J"),
        "the escape is shown, not obeyed: {screen}"
    );
    let title = tmux.format("#{pane_title}");
    assert!(!title.contains("pwned"), "the title was not set: {title}");
}

#[test]
fn ctrl_d_leaves_and_the_session_is_saved() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Hello back."));
    let tmux = open(&sandbox, &[], 80, 24);
    send(&tmux, "hello");
    wait_text(&tmux, "Hello back.");
    ready(&tmux);
    // Ctrl+C on an empty editor asks for a second one; any other key forgets it.
    tmux.send_keys(&["C-c"]);
    wait_text(&tmux, "Press Ctrl+C again to exit");
    tmux.send_keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(WAIT), Ok(0));
    let entries = read_jsonl(&sandbox.only_session());
    assert!(entries
        .iter()
        .any(|e| e["message"]["role"] == "user" && e["message"]["content"][0]["text"] == "hello"));
}

#[test]
fn confirm_mode_shows_the_diff_and_a_rejected_edit_leaves_the_file() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write("notes.txt", "alpha\n");
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "write",
        json!({"path": "notes.txt", "content": "beta\n"}),
    ));
    sandbox.answer(&Turn::text("I could not write it."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "/confirm on");
    wait_text(&tmux, "wait for your answer");
    send(&tmux, "replace the notes");
    let screen = wait_text(&tmux, "Apply this edit to notes.txt?");
    assert!(screen.contains("-alpha"), "{screen}");
    assert!(screen.contains("+beta"), "{screen}");
    tmux.send_keys(&["Down", "Enter"]);
    wait_text(&tmux, "I could not write it.");
    assert_eq!(sandbox.read("notes.txt"), "alpha\n");
    let entries = read_jsonl(&sandbox.only_session());
    let result = entries
        .iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .expect("a tool result");
    assert_eq!(result["message"]["isError"], true);
}
