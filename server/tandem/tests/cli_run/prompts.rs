//! Where prompts come from: message arguments (each its own prompt, in order), `@file`
//! arguments and piped stdin (joined into the first prompt).

use serde_json::Value;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::{entry_kinds, read_jsonl, Sandbox, MODEL};
use crate::HELLO;

#[test]
fn several_message_arguments_are_sent_as_prompts_in_order() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("One."));
    sandbox.answer(&Turn::text("Two."));
    let run = sandbox.run(&["-p", "first", "second"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Two.\n", "only the last answer is printed");
    let requests = sandbox.requests();
    assert_eq!(requests.len(), 2);
    let roles_and_texts = |i: usize| -> Vec<(String, String)> {
        let body = requests[i].json().expect("JSON body");
        body["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter(|m| m["role"] != "system")
            .map(|m| {
                let text = match &m["content"] {
                    Value::String(s) => s.clone(),
                    blocks => blocks[0]["text"].as_str().unwrap_or_default().to_string(),
                };
                (m["role"].as_str().unwrap_or_default().to_string(), text)
            })
            .collect()
    };
    let pair = |r: &str, t: &str| (r.to_string(), t.to_string());
    assert_eq!(roles_and_texts(0), [pair("user", "first")]);
    assert_eq!(
        roles_and_texts(1),
        [
            pair("user", "first"),
            pair("assistant", "One."),
            pair("user", "second")
        ]
    );
    let entries = read_jsonl(&sandbox.only_session());
    assert_eq!(
        entry_kinds(&entries)[3..],
        [
            "message:system",
            "message:user",
            "message:assistant",
            "message:user",
            "message:assistant"
        ]
    );
}

#[test]
fn a_file_argument_is_sent_in_the_first_message() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write("hello.txt", HELLO);
    sandbox.answer(&Turn::text("It says hello."));
    let run = sandbox.run(&["-p", "@hello.txt", "summarize"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "It says hello.\n");
    let body = sandbox.requests()[0].json().expect("JSON body");
    let user = &body["messages"][1];
    assert_eq!(user["role"], "user");
    let file = sandbox.cwd.join("hello.txt");
    let expected = format!(
        "<file name=\"{}\">\n{HELLO}\n</file>\nsummarize",
        file.display()
    );
    assert_eq!(user["content"][0]["text"], expected, "{user}");
}

#[test]
fn piped_stdin_is_sent_in_the_first_message() {
    let sandbox = Sandbox::new(WireApi::AnthropicMessages);
    sandbox.answer(&Turn::text("A diff."));
    let run = sandbox.run_raw(
        &["--model", MODEL, "-p", "Review this change"],
        Some("diff --git a/x b/x\n+new line\n\n"),
    );
    run.expect_code(0);
    assert_eq!(run.stdout, "A diff.\n");
    let body = sandbox.requests()[0].json().expect("JSON body");
    let text = &body["messages"][0]["content"][0]["text"];
    // A blank line between stdin and the message (pi 1.6 joins them with nothing).
    assert_eq!(text, "diff --git a/x b/x\n+new line\n\nReview this change");

    // Stdin alone is a prompt too.
    sandbox.answer(&Turn::text("Alone."));
    let run = sandbox.run_raw(&["--model", MODEL, "-p"], Some("just stdin\n"));
    run.expect_code(0);
    let body = sandbox.requests()[1].json().expect("JSON body");
    assert_eq!(body["messages"][0]["content"][0]["text"], "just stdin");
}

#[test]
fn a_missing_file_argument_is_an_error_naming_its_path() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let run = sandbox.run(&["-p", "@missing.txt", "summarize"]);
    run.expect_code(1);
    let path = sandbox.cwd.join("missing.txt");
    assert_eq!(
        run.stderr,
        format!("Error: File not found: {}\n", path.display())
    );
    assert!(sandbox.requests().is_empty());
}

#[test]
fn blank_stdin_and_no_message_is_an_error() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let run = sandbox.run_raw(&["--model", MODEL, "-p"], Some("  \n"));
    run.expect_code(1);
    assert!(
        run.stderr.starts_with("Error: No prompt given"),
        "{}",
        run.stderr
    );
    assert!(sandbox.requests().is_empty());
}
