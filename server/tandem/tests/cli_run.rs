//! The real `tandem` binary in print and JSON mode, over real stdio, against the mock LLM server
//! speaking each provider's wire format (`tandem_tests::wire` writes the answers): tool runs and
//! the session file, JSON events, retry, overflow compaction, resuming and forking, where
//! prompts come from, and bad input.
//!
//! Every test has its own home, agent directory (models.json with a `mock` provider pointing at
//! its own mock server) and working directory; see `support`. Tests wait on the process, never
//! on sleeps; retry delays are set to a few milliseconds.

mod support;

#[path = "cli_run/bad_input.rs"]
mod bad_input;
#[path = "cli_run/compaction.rs"]
mod compaction;
#[path = "cli_run/json_mode.rs"]
mod json_mode;
#[path = "cli_run/prompts.rs"]
mod prompts;
#[path = "cli_run/retry.rs"]
mod retry;
#[path = "cli_run/sessions.rs"]
mod sessions;
#[path = "cli_run/settings.rs"]
mod settings;
#[path = "cli_run/tool_turns.rs"]
mod tool_turns;
#[path = "cli_run/undo.rs"]
mod undo;

use serde_json::{json, Value};
use support::{type_of, Sandbox};
use tandem_tests::wire::Turn;

/// hello.txt of pi's reference task.
const HELLO: &str = "hello world\nsecond line\n";
/// The last answer of pi's reference task.
const FINAL: &str = "Done: I changed world to there.";

/// pi's reference task: read hello.txt, edit it, say done.
fn queue_edit_task(sandbox: &Sandbox) {
    sandbox.write("hello.txt", HELLO);
    sandbox.answer(&Turn::text("Let me read the file.").with_tool_call(
        "call_0_57c7c3",
        "read",
        json!({"path": "hello.txt"}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_0_81fbed",
        "edit",
        json!({"path": "hello.txt", "edits": [{"oldText": "hello world", "newText": "hello there"}]}),
    ));
    sandbox.answer(&Turn::text(FINAL));
}

/// Types of a JSON-mode run with each run of `message_update` lines folded into one.
fn folded_types(types: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in types {
        if t == "message_update" && out.last().is_some_and(|l| l == "message_update") {
            continue;
        }
        out.push(t);
    }
    out
}

/// The first JSON line of type `kind`.
fn find<'v>(lines: &'v [Value], kind: &str) -> &'v Value {
    lines
        .iter()
        .find(|l| type_of(l) == kind)
        .unwrap_or_else(|| panic!("no {kind} line"))
}
