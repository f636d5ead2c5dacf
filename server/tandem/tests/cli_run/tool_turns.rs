//! pi's reference task ("change world to there in hello.txt": read, edit, answer) in print
//! mode over each wire API: the answer printed, the file changed, the session written, and the
//! tool results sent back to the model.

use serde_json::json;
use tandem_tests::wire::WireApi;

use crate::support::{body_mentions, entry_kinds, read_jsonl, Sandbox};
use crate::{queue_edit_task, FINAL, HELLO};

fn edit_task_in_print_mode(api: WireApi) {
    let sandbox = Sandbox::new(api);
    queue_edit_task(&sandbox);
    let run = sandbox.run(&["-p", "change world to there in hello.txt"]);
    run.expect_code(0);
    assert_eq!(run.stdout, format!("{FINAL}\n"));
    assert_eq!(sandbox.read("hello.txt"), "hello there\nsecond line\n");

    let entries = read_jsonl(&sandbox.only_session());
    assert_eq!(
        entry_kinds(&entries),
        [
            "session",
            "model_change",
            "thinking_level_change",
            "message:system",
            "message:user",
            "message:assistant",
            "message:toolResult",
            "message:assistant",
            "message:toolResult",
            "message:assistant",
            "custom",
        ],
        "{api:?}"
    );
    // The run's checkpoint comes last, out of the conversation (see tests/cli_run/undo.rs).
    assert_eq!(entries[10]["customType"], "tandem.checkpoint");
    assert_eq!(entries[0]["cwd"], json!(sandbox.cwd.to_string_lossy()));
    assert_eq!(entries[1]["provider"], "mock");
    assert_eq!(entries[1]["modelId"], "mock-model");
    assert_eq!(entries[2]["thinkingLevel"], "off");
    // The prompt and tools the run used, recorded first (pi 1.6's `system` message).
    assert_eq!(entries[3]["message"]["role"], "system");
    assert!(entries[3]["message"]["sections"]["preamble"].is_string());
    assert_eq!(
        entries[4]["message"]["content"][0]["text"],
        "change world to there in hello.txt"
    );
    assert_eq!(entries[6]["message"]["content"][0]["text"], HELLO);
    assert_eq!(
        entries[8]["message"]["content"][0]["text"],
        "Successfully replaced 1 block(s) in hello.txt."
    );
    assert_eq!(entries[9]["message"]["content"][0]["text"], FINAL);
    assert_eq!(entries[9]["message"]["stopReason"], "stop");
    assert_eq!(entries[9]["message"]["api"], api.name());
    assert_eq!(entries[9]["message"]["usage"]["totalTokens"], 120);
    // Each entry is the child of the one before it.
    for pair in entries[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"], "{api:?}");
    }

    let requests = sandbox.requests();
    assert_eq!(requests.len(), 3, "{api:?}");
    for request in &requests {
        assert_eq!(request.path, api.request_path("mock-model"));
        let (header, value) = match api {
            WireApi::OpenAiCompletions | WireApi::OpenAiResponses => {
                ("authorization", "Bearer test-key")
            }
            WireApi::AnthropicMessages => ("x-api-key", "test-key"),
            WireApi::GoogleGenerativeAi => ("x-goog-api-key", "test-key"),
        };
        assert_eq!(request.header(header), Some(value), "{api:?}");
    }
    assert!(body_mentions(
        &requests[0],
        "change world to there in hello.txt"
    ));
    assert!(!body_mentions(&requests[0], HELLO));
    assert!(
        body_mentions(&requests[1], HELLO),
        "{api:?}: read result not sent"
    );
    assert!(body_mentions(
        &requests[2],
        "Successfully replaced 1 block(s) in hello.txt."
    ));
}

#[test]
fn edit_task_over_openai_completions() {
    edit_task_in_print_mode(WireApi::OpenAiCompletions);
}

#[test]
fn edit_task_over_openai_responses() {
    edit_task_in_print_mode(WireApi::OpenAiResponses);
}

#[test]
fn edit_task_over_anthropic_messages() {
    edit_task_in_print_mode(WireApi::AnthropicMessages);
}

#[test]
fn edit_task_over_google_generative_ai() {
    edit_task_in_print_mode(WireApi::GoogleGenerativeAi);
}
