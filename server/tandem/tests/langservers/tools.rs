//! The language tools answered by Tandem's own servers in a trusted folder: the model's
//! `diagnostics` call sees basedpyright's type error and ruff's unused import.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::{body_mentions, Sandbox};
use crate::{copy_fixture, offered_tools, path_with_servers, run, LANGUAGE_TOOLS};

#[test]
fn the_model_reads_real_diagnostics_of_a_trusted_python_project() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    copy_fixture(&sandbox, "python");
    sandbox.answer(&Turn::tool_call(
        "call_d",
        "diagnostics",
        json!({"path": "main.py"}),
    ));
    sandbox.answer(&Turn::text("Done."));
    let run = run(
        &sandbox,
        &["--approve", "-p", "what is wrong in main.py?"],
        &path_with_servers(),
    );
    run.expect_code(0);
    let tools = offered_tools(&sandbox, 0);
    for tool in LANGUAGE_TOOLS {
        assert!(tools.iter().any(|t| t == tool), "{tool} not in {tools:?}");
    }
    let requests = sandbox.requests();
    assert!(
        body_mentions(&requests[1], "reportAssignmentType"),
        "the tool result did not carry basedpyright's error"
    );
}
