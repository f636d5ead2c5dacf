//! The diagnostics report after edits, and the position tools, answered by Tandem's own real
//! servers (ruff, basedpyright) through `tandem -p` in a trusted folder: the model's next
//! request carries what the edit broke or fixed, definitions and references point into the
//! real project, and a rename changes every file. A server that is missing or crashes makes
//! the tool say so and the run goes on.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::{strings, Sandbox};
use crate::{copy_fixture, path_with_servers, run};

/// The text of the tool results in the mock's request `index` (each tool message's strings).
fn tool_results(sandbox: &Sandbox, index: usize) -> String {
    let body = sandbox.requests()[index].json().expect("a JSON request");
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .flat_map(|m| strings(&m["content"]).into_iter().map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n")
}

fn python_project() -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    copy_fixture(&sandbox, "python");
    sandbox
}

#[test]
fn an_edit_that_breaks_a_type_gets_the_new_error_in_its_result() {
    let sandbox = python_project();
    sandbox.answer(&Turn::tool_call(
        "call_e",
        "edit",
        json!({"path": "shapes.py",
               "oldText": "return sum(c.area() for c in circles)",
               "newText": "return \"no area\""}),
    ));
    sandbox.answer(&Turn::text("Done."));
    let run = run(
        &sandbox,
        &["--approve", "-p", "make total_area return a text"],
        &path_with_servers(),
    );
    run.expect_code(0);
    let result = tool_results(&sandbox, 1);
    assert!(
        result.contains("Successfully replaced"),
        "the edit was not applied: {result}"
    );
    // basedpyright's error, new with this edit, at the line and column the read tool shows.
    assert!(
        result.contains("New diagnostics in shapes.py"),
        "no report of the new error: {result}"
    );
    assert!(
        result.contains("shapes.py:14:12: error [basedpyright reportReturnType]"),
        "basedpyright's return-type error is not reported: {result}"
    );
    // The unused import was there before: it is not news.
    assert!(
        !result.contains("F401"),
        "an old warning reported as new: {result}"
    );
    assert_eq!(
        sandbox.read("shapes.py").lines().nth(13),
        Some("    return \"no area\"")
    );
}

#[test]
fn an_edit_that_fixes_an_error_reports_it_gone() {
    let sandbox = python_project();
    sandbox.answer(&Turn::tool_call(
        "call_e",
        "edit",
        json!({"path": "main.py", "oldText": "count: int = \"two\"", "newText": "count: int = 2"}),
    ));
    sandbox.answer(&Turn::text("Done."));
    let run = run(
        &sandbox,
        &["--approve", "-p", "fix the type error in main.py"],
        &path_with_servers(),
    );
    run.expect_code(0);
    let result = tool_results(&sandbox, 1);
    assert!(
        result.contains("Fixed by this change (1):"),
        "the fixed error is not reported: {result}"
    );
    assert!(
        result.contains("reportAssignmentType"),
        "the fixed error is not named: {result}"
    );
    assert!(
        !result.contains("New diagnostics"),
        "a fix reported new diagnostics: {result}"
    );
}

#[test]
fn definition_references_and_rename_work_on_the_real_project() {
    let sandbox = python_project();
    // main.py line 5: `print(total_area(circles), count)`; total_area starts at column 7.
    sandbox.answer(&Turn::tool_call(
        "call_d",
        "definition",
        json!({"path": "main.py", "line": 5, "column": 8}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_r",
        "references",
        json!({"path": "shapes.py", "line": 4, "column": 7}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_n",
        "rename",
        json!({"path": "shapes.py", "line": 4, "column": 7, "newName": "Disk"}),
    ));
    sandbox.answer(&Turn::text("Done."));
    let run = run(
        &sandbox,
        &["--approve", "-p", "rename Circle to Disk"],
        &path_with_servers(),
    );
    run.expect_code(0);

    let definition = tool_results(&sandbox, 1);
    assert!(
        definition.contains("shapes.py:12:5"),
        "total_area's definition is not at shapes.py:12:5: {definition}"
    );
    let references = tool_results(&sandbox, 2);
    for at in [
        "main.py:1:20",
        "main.py:3:12",
        "main.py:3:25",
        "shapes.py:12:30",
    ] {
        assert!(
            references.contains(at),
            "{at} missing from Circle's references: {references}"
        );
    }
    let renamed = tool_results(&sandbox, 3);
    assert!(
        !renamed.to_lowercase().contains("error"),
        "the rename failed: {renamed}"
    );
    let main = sandbox.read("main.py");
    let shapes = sandbox.read("shapes.py");
    assert!(
        main.starts_with("from shapes import Disk, total_area\n")
            && main.contains("[Disk(1.0), Disk(2.0)]"),
        "main.py not renamed: {main}"
    );
    assert!(
        shapes.contains("class Disk:")
            && shapes.contains("list[Disk]")
            && !shapes.contains("Circle"),
        "shapes.py not renamed: {shapes}"
    );
}

#[test]
fn a_missing_or_crashing_server_is_reported_and_the_run_goes_on() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write("notes.zz", "one\ntwo\n");
    let misbehaving = crate::repo().join("fixtures/langservers/misbehaving-server.py");
    sandbox.write_settings(json!({"languageServers": {
        "ghost": {"command": "no-such-language-server-anywhere", "fileTypes": ["zz"]},
        "crashy": {"command": "python3", "args": [misbehaving], "fileTypes": ["zz"]},
        "ruff": null, "basedpyright": null, "pyright": null, "typescript": null,
    }}));
    sandbox.answer(&Turn::tool_call(
        "call_d",
        "definition",
        json!({"path": "notes.zz", "line": 1, "column": 1}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_e",
        "edit",
        json!({"path": "notes.zz", "oldText": "two", "newText": "three"}),
    ));
    sandbox.answer(&Turn::text("Done."));
    let run = run(
        &sandbox,
        &["--approve", "-p", "where is one defined?"],
        &path_with_servers(),
    );
    run.expect_code(0);
    let definition = tool_results(&sandbox, 1);
    assert!(
        definition.contains("ghost") && definition.contains("no-such-language-server-anywhere"),
        "the missing server is not named: {definition}"
    );
    assert!(
        definition.contains("crashy"),
        "the crashed server is not named: {definition}"
    );
    // The run went on: the edit after the failed tool was applied and reported.
    let edited = tool_results(&sandbox, 2);
    assert!(edited.contains("Successfully replaced"), "{edited}");
    assert_eq!(sandbox.read("notes.zz"), "one\nthree\n");
    assert_eq!(sandbox.requests().len(), 3);
}
