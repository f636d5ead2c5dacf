//! Bash deny mode holds in every front door. What "deny" is in each:
//!
//! - LSP: `bashPermission: "deny"` (initializationOptions or didChangeConfiguration, effective
//!   at once): every command is a tool error, and the editor is not even asked. With `"ask"`
//!   (the default) a Deny answer to the question is the same refusal.
//! - ACP: there is no deny setting; every command asks with `session/request_permission`, in
//!   every mode (read-only included), and a rejection is the refusal.
//! - CLI: no one to ask, commands run (pi's behaviour); the deny equivalent is leaving bash out
//!   of `--tools` (or `--no-tools`): the model's bash call then fails as an unknown tool.
//!
//! Each time the model calls `bash` with a command that would create `marker.txt`; refused, the
//! file does not exist.

use serde_json::{json, Value};

use crate::support::front_doors::*;
use crate::support::lsp::answers;
use crate::support::Sandbox;

fn script() -> Value {
    json!({"turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo pwned > marker.txt"}}]},
        {"text": "done"}
    ]})
}

fn marker(sandbox: &Sandbox) -> bool {
    sandbox.cwd.join("marker.txt").exists()
}

/// The `tool_end` event among a session's events (`tandem/event` params).
fn the_bash_result(events: &[Value]) -> Value {
    events
        .iter()
        .map(|e| &e["event"])
        .find(|e| e["type"] == "tool_end")
        .cloned()
        .expect("the bash call ended")
}

#[test]
fn lsp_bash_permission_deny_refuses_without_asking() -> anyhow::Result<()> {
    let sandbox = sandbox(&script());
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "bashPermission": "deny"}),
        answers(|_, _| json!({"title": "Allow"})),
    )?;
    let session = lsp_run(&mut lsp, "script", "t", "run it")?;
    let end = the_bash_result(&lsp.events(&session));
    assert_eq!(end["isError"], true, "{end}");
    assert!(
        end["text"]
            .as_str()
            .unwrap()
            .contains("bash is disabled (bashPermission: deny)"),
        "{end}"
    );
    assert!(lsp.received("window/showMessageRequest").is_empty());
    lsp.shutdown()?;
    assert!(!marker(&sandbox));
    Ok(())
}

#[test]
fn lsp_deny_set_by_did_change_configuration_holds_at_once() -> anyhow::Result<()> {
    let sandbox = sandbox(&script());
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "bashPermission": "allow"}),
        answers(|_, _| json!({"title": "Allow"})),
    )?;
    lsp.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"tandem": {"model": "script/t", "bashPermission": "deny",
            "agentDir": sandbox.agent_dir}}}),
    )?;
    let session = lsp_run(&mut lsp, "script", "t", "run it")?;
    let end = the_bash_result(&lsp.events(&session));
    assert_eq!(end["isError"], true, "{end}");
    assert!(lsp.received("window/showMessageRequest").is_empty());
    lsp.shutdown()?;
    assert!(!marker(&sandbox));
    Ok(())
}

#[test]
fn lsp_bash_permission_ask_and_a_deny_answer_refuses() -> anyhow::Result<()> {
    let sandbox = sandbox(&script());
    let mut lsp = lsp(&sandbox, json!({"model": "script/t"}), answers(lsp_deny))?;
    let session = lsp_run(&mut lsp, "script", "t", "run it")?;
    let end = the_bash_result(&lsp.events(&session));
    assert_eq!(end["isError"], true, "{end}");
    let asked = lsp.received("window/showMessageRequest");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].params["message"]
        .as_str()
        .unwrap()
        .contains("echo pwned > marker.txt"));
    lsp.shutdown()?;
    assert!(!marker(&sandbox));
    Ok(())
}

#[test]
fn acp_every_command_asks_in_every_mode_and_a_rejection_refuses() {
    let sandbox = sandbox(&script());
    sandbox.write_settings(json!({"defaultProvider": "script", "defaultModel": "t"}));
    let mut acp = Acp::start(&sandbox, Box::new(acp_reject));
    for mode in ["ask", "accept-edits", "read-only"] {
        let session = acp.new_session(&sandbox.cwd);
        let set = acp.call(
            "session/set_mode",
            json!({"sessionId": session, "modeId": mode}),
        );
        assert!(set.get("error").is_none(), "{set}");
        let before = acp.permission_requests().len();
        let answer = acp.prompt(&session, "run it");
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        let asked = acp.permission_requests();
        assert_eq!(asked.len(), before + 1, "{mode}: one request");
        assert_eq!(asked[before]["toolCall"]["kind"], "execute", "{mode}");
        assert!(!marker(&sandbox), "{mode}: the command ran");
    }
    let failed = acp
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed")
        .count();
    assert_eq!(failed, 3);
    acp.close();
    assert!(!marker(&sandbox));
}

#[test]
fn cli_without_bash_in_tools_cannot_run_commands() {
    let sandbox = sandbox(&script());
    for tools in [&["--tools", "read,edit,write"][..], &["--no-tools"][..]] {
        let mut args = vec!["--model", "script/t"];
        args.extend_from_slice(tools);
        args.extend(["--mode", "json", "-p", "run it"]);
        let run = cli(&sandbox, &args);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let end: Value = run
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|l| l["type"] == "tool_execution_end")
            .expect("the bash call ended");
        assert_eq!(end["isError"], true, "{tools:?}: {end}");
        assert!(!marker(&sandbox), "{tools:?}");
    }
}

/// The CLI's default: commands run without asking, like pi (pinned down; documented).
#[test]
fn cli_print_mode_runs_commands_like_pi() {
    let sandbox = sandbox(&script());
    let run = cli(&sandbox, &["--model", "script/t", "-p", "run it"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(marker(&sandbox));
}
