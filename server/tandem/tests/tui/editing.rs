//! The input editor and what a run shows besides text: new lines, paste, history, `@file`
//! completion, follow-ups while running, thinking (shown and collapsed), retries and errors.

use serde_json::json;
use tandem_tests::mock_llm::{Gate, MockResponse};
use tandem_tests::wire::{self, Turn, WireApi};

use crate::support::Sandbox;
use crate::{open, ready, send, wait_text};

/// The text of the user message of the mock's `index`th request (the last user message).
fn last_prompt(sandbox: &Sandbox, index: usize) -> String {
    let body = sandbox.requests()[index].json().expect("JSON request");
    let messages = body["messages"].as_array().expect("messages");
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    match &user["content"] {
        serde_json::Value::String(s) => s.clone(),
        content => crate::support::content_text(content, ""),
    }
}

#[test]
fn shift_enter_alt_enter_and_paste_make_several_lines_and_up_recalls_them() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Got three lines."));
    sandbox.answer(&Turn::text("Got the paste."));
    let tmux = open(&sandbox, &[], 100, 40);
    tmux.send_text("line one");
    tmux.send_keys(&["S-Enter"]);
    tmux.send_text("line two");
    tmux.send_keys(&["M-Enter"]);
    tmux.send_text("line three");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "Got three lines.");
    ready(&tmux);
    assert_eq!(last_prompt(&sandbox, 0), "line one\nline two\nline three");
    tmux.paste("pasted alpha\npasted beta");
    wait_text(&tmux, "pasted beta");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "Got the paste.");
    ready(&tmux);
    assert_eq!(last_prompt(&sandbox, 1), "pasted alpha\npasted beta");
    // Up at the first line brings the last prompt back.
    tmux.send_keys(&["Up"]);
    let screen = wait_text(&tmux, "pasted alpha");
    assert!(screen.contains("pasted beta"), "{screen}");
}

#[test]
fn at_completes_file_paths_and_slash_completes_commands() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.cwd.join("src")).expect("src");
    sandbox.write("src/library.rs", "");
    let tmux = open(&sandbox, &[], 100, 40);
    tmux.send_text("look at @libr");
    wait_text(&tmux, "@src/library.rs");
    tmux.send_keys(&["Tab"]);
    tmux.wait_for("the completed path", crate::WAIT, |s| {
        s.contains("look at @src/library.rs") && !s.contains(" @src/library.rs ")
    })
    .unwrap_or_else(|e| panic!("{e}"));
    tmux.send_keys(&["C-c"]);
    tmux.send_text("/comp");
    wait_text(&tmux, "Summarize the conversation");
}

#[test]
fn alt_enter_while_running_queues_a_follow_up() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let gate = Gate::new();
    sandbox.enqueue(
        wire::response(WireApi::OpenAiCompletions, &Turn::text("First.")).held_until(&gate),
    );
    sandbox.answer(&Turn::text("Followed up."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "begin");
    wait_text(&tmux, "Working…");
    tmux.send_text("and then this");
    tmux.send_keys(&["M-Enter"]);
    wait_text(&tmux, "follow-up: and then this");
    gate.open();
    wait_text(&tmux, "Followed up.");
    ready(&tmux);
    assert_eq!(sandbox.requests().len(), 2);
    assert_eq!(last_prompt(&sandbox, 1), "and then this");
}

/// A Chat Completions answer that reasons, then answers.
pub(crate) fn reasoned(thinking: &str, text: &str) -> MockResponse {
    let event = |delta: serde_json::Value, finish: serde_json::Value| {
        let chunk = json!({
            "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "mock-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            "usage": null,
        });
        format!("data: {chunk}\n\n")
    };
    let mut body = String::new();
    for line in thinking.split_inclusive('\n') {
        body.push_str(&event(json!({"reasoning_content": line}), json!(null)));
    }
    body.push_str(&event(json!({"content": text}), json!(null)));
    body.push_str(&event(json!({}), json!("stop")));
    body.push_str("data: [DONE]\n\n");
    MockResponse::sse(body)
}

#[test]
fn thinking_is_shown_dimmed_and_ctrl_t_collapses_it() {
    let sandbox = Sandbox::with_model(
        WireApi::OpenAiCompletions,
        json!({"id": "mock-model", "reasoning": true}),
    );
    sandbox.enqueue(reasoned(
        "Let me consider.\nThe user wants a greeting.\n",
        "Hello!",
    ));
    sandbox.enqueue(reasoned(
        "Another thought.\nAnd one more.\n",
        "Hello again!",
    ));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "greet me");
    let screen = wait_text(&tmux, "Hello!");
    assert!(screen.contains("The user wants a greeting."), "{screen}");
    // Dimmed: the thinking line carries a colour the answer does not.
    let styled = tmux.capture_styled().text();
    let line = styled
        .lines()
        .find(|l| l.contains("Let me consider."))
        .expect("the thinking line");
    assert!(line.contains("\u{1b}["), "thinking is styled: {line:?}");
    ready(&tmux);
    // Ctrl+T collapses every thinking block, the one already printed too.
    tmux.send_keys(&["C-t"]);
    let screen = tmux
        .wait_for("thinking collapsed", crate::WAIT, |s| {
            s.contains("Thought for 2 lines") && !s.contains("Let me consider.")
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(screen.contains("Hello!"), "{screen}");
    send(&tmux, "again");
    let screen = wait_text(&tmux, "Hello again!");
    assert!(!screen.contains("Another thought."), "{screen}");
    // And shows them all again.
    tmux.send_keys(&["C-t"]);
    tmux.wait_for("thinking shown", crate::WAIT, |s| {
        s.contains("Let me consider.") && s.contains("Another thought.")
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn retries_and_errors_are_visible() {
    let sandbox = Sandbox::with_quick_retries();
    sandbox.enqueue(wire::rate_limited(WireApi::OpenAiCompletions));
    sandbox.answer(&Turn::text("After one retry."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "try");
    let screen = wait_text(&tmux, "After one retry.");
    assert!(screen.contains("Retrying in"), "{screen}");
    assert!(screen.contains("Rate limit"), "{screen}");
    assert!(
        !screen.contains("Error:"),
        "a failure that is retried is not shown as an error: {screen}"
    );
    ready(&tmux);
    // A failure that is not retried ends the run with the provider's words.
    sandbox.enqueue(MockResponse::json(
        400,
        json!({"error": {"message": "Invalid value for temperature", "type": "invalid_request_error"}}),
    ));
    send(&tmux, "again");
    let screen = wait_text(&tmux, "Error:");
    assert!(screen.contains("Invalid value for"), "{screen}");
    ready(&tmux);
}
