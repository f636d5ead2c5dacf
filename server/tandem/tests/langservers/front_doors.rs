//! Tandem's own servers behind the editor front doors, for clients that do not answer for
//! their editor's servers: `tandem acp` and a plain LSP client (Helix's shape) in a trusted
//! folder get the language tools and real diagnostics. The servers are named by full path in
//! the settings, as a user whose PATH lacks them would.

use serde_json::{json, Value};
use tandem_tests::wire::{Turn, WireApi};

use crate::support::front_doors::Acp;
use crate::support::lsp::{prompt, sandbox_lsp};
use crate::support::{body_mentions, Sandbox, MODEL};
use crate::{copy_fixture, langservers_bin, offered_tools};

/// The Python project, ruff and basedpyright configured by full path, and a model that asks
/// for main.py's diagnostics.
fn project() -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    copy_fixture(&sandbox, "python");
    let bin = langservers_bin();
    sandbox.write_settings(json!({"languageServers": {
        "basedpyright": {"command": bin.join("basedpyright-langserver")},
        "ruff": {"command": bin.join("ruff")},
    }}));
    sandbox.answer(&Turn::tool_call(
        "call_d",
        "diagnostics",
        json!({"path": "main.py"}),
    ));
    sandbox.answer(&Turn::text("Done."));
    sandbox
}

fn saw_the_type_error(sandbox: &Sandbox) {
    assert!(
        offered_tools(sandbox, 0).contains(&"diagnostics".to_string()),
        "{:?}",
        offered_tools(sandbox, 0)
    );
    assert!(
        body_mentions(&sandbox.requests()[1], "reportAssignmentType"),
        "the tool result lacks basedpyright's error"
    );
}

#[test]
fn acp_in_a_trusted_folder_answers_from_tandems_own_servers() {
    let sandbox = project();
    let mut acp = Acp::start_with(
        &sandbox,
        &["--model", MODEL, "--approve"],
        Box::new(|_, _| Value::Null),
    );
    let session = acp.new_session(&sandbox.cwd);
    let answered = acp.prompt(&session, "what is wrong in main.py?");
    assert_eq!(answered["result"]["stopReason"], "end_turn", "{answered}");
    saw_the_type_error(&sandbox);
}

#[test]
fn a_plain_lsp_client_in_a_trusted_folder_gets_tandems_own_servers() -> anyhow::Result<()> {
    let sandbox = project();
    // No experimental.tandem.diagnostics: the editor does not answer for its servers.
    let mut lsp = sandbox_lsp(&sandbox, json!({"workspaceTrusted": true}))?;
    let session = prompt(&mut lsp, json!({"text": "what is wrong in main.py?"}))?;
    let events = lsp.next_run(&session)?;
    let end = events
        .iter()
        .find(|e| e["event"]["type"] == "tool_end")
        .expect("tool_end");
    let text = end["event"]["text"].as_str().unwrap_or_default();
    assert!(text.contains("(from Tandem's language servers)"), "{text}");
    assert!(
        text.contains("main.py:4:14: error [basedpyright reportAssignmentType]"),
        "{text}"
    );
    assert!(lsp.received("tandem/diagnostics").is_empty());
    saw_the_type_error(&sandbox);
    Ok(())
}
