//! An extension in another language: an executable that speaks the protocol itself
//! (examples/extensions/python/word_count.py).

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::Sandbox;
use crate::{run, tool_result_text, workspace_root};

fn word_count() -> String {
    workspace_root()
        .join("examples/extensions/python/word_count.py")
        .display()
        .to_string()
}

#[test]
fn a_python_extension_adds_a_tool_and_gates_bash() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write("notes.txt", "one two three\nfour\n");
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "word_count",
        json!({"path": "notes.txt"}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_2",
        "bash",
        json!({"command": "curl http://example.invalid > out"}),
    ));
    sandbox.answer(&Turn::text("counted"));
    let out = run(&sandbox, &["-e", &word_count(), "-p", "count the words"]);
    out.expect_code(0);
    assert_eq!(out.stdout, "counted\n", "{}", out.stderr);
    let requests = sandbox.requests();
    let counted = tool_result_text(&requests[1].json().expect("JSON"), "call_1").expect("result");
    assert!(counted.contains('4'), "{counted}");
    let blocked = tool_result_text(&requests[2].json().expect("JSON"), "call_2").expect("result");
    assert!(blocked.to_lowercase().contains("curl"), "{blocked}");
    assert!(!sandbox.cwd.join("out").exists());
}
