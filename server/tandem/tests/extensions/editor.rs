//! Extensions in the language server: an editor answers their dialogs (`select` and `confirm`
//! as `window/showMessageRequest`, `input` as `tandem/input`), sees their notices
//! (`window/showMessage`), runs their commands with `tandem/prompt`, and `tandem/state` lists
//! them.

use serde_json::{json, Value};
use tandem_tests::lsp_client::{ClientError, LspClient};
use tandem_tests::wire::{Turn, WireApi};

use crate::support::lsp::{initialize, prompt, state};
use crate::support::process::in_sandbox;
use crate::support::{Sandbox, MODEL};
use crate::{example, extension};

/// `tandem lsp <args>` in `sandbox`, initialized by a client with dialogs, the event stream
/// and, when `input`, `tandem/input`.
fn editor(sandbox: &Sandbox, args: &[&str], input: bool) -> Result<LspClient, ClientError> {
    let mut all = vec!["lsp"];
    all.extend_from_slice(args);
    let mut cmd = in_sandbox(sandbox, &all);
    cmd.env("XDG_CACHE_HOME", sandbox.home.join("cache"));
    cmd.stderr(std::process::Stdio::piped());
    let mut lsp = LspClient::spawn(cmd)?.with_timeout(std::time::Duration::from_secs(60));
    initialize(
        &mut lsp,
        &sandbox.cwd,
        json!({"workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
            "window": {"showMessage": {"messageActionItem": {}}},
            "experimental": {"tandem": {"events": true, "input": input}}}),
        json!({"model": MODEL, "agentDir": sandbox.agent_dir.display().to_string()}),
    )?;
    Ok(lsp)
}

fn message_text(lsp: &mut LspClient, needle: &str) -> Result<String, ClientError> {
    let shown = lsp.wait_for(&format!("window/showMessage with {needle:?}"), |m| {
        m.method == "window/showMessage"
            && m.params["message"]
                .as_str()
                .is_some_and(|t| t.contains(needle))
    })?;
    Ok(shown.params["message"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

#[test]
fn the_editor_answers_permission_gates_select_and_the_command_is_blocked() -> anyhow::Result<()> {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.cwd.join("build"))?;
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "bash",
        json!({"command": "rm -rf build"}),
    ));
    sandbox.answer(&Turn::text("Left it."));
    let gate = example("permission-gate.ts");
    let mut lsp = editor(&sandbox, &["-e", &gate], false)?;
    let session = prompt(&mut lsp, json!({"text": "clean up"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    let text = ask.params["message"].as_str().unwrap_or_default();
    assert!(text.contains("rm -rf build"), "{text}");
    let titles: Vec<&str> = ask.params["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert_eq!(titles, ["Yes", "No"]);
    lsp.reply(&ask, json!({"title": "No"}))?;
    let events = lsp.next_run(&session)?;
    let end = events
        .iter()
        .find(|e| e["event"]["type"] == "tool_end")
        .expect("the call ended");
    assert_eq!(end["event"]["isError"], true, "{end}");
    assert!(
        end["event"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Blocked by user")),
        "{end}"
    );
    assert!(sandbox.cwd.join("build").is_dir());
    let state = state(&mut lsp, &session)?;
    let loaded: Vec<&str> = state["extensions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(loaded.len(), 1, "{state}");
    assert!(loaded[0].ends_with("permission-gate.ts"), "{state}");
    Ok(())
}

#[test]
fn an_extension_command_runs_from_a_prompt_and_its_notice_reaches_the_editor() -> anyhow::Result<()>
{
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let pirate = example("pirate.ts");
    let mut lsp = editor(&sandbox, &["-e", &pirate], false)?;
    let session = prompt(&mut lsp, json!({"text": "/pirate"}))?;
    // The prompt ran no model, and still ends as a run does.
    lsp.next_run(&session)?;
    let shown = message_text(&mut lsp, "Pirate mode enabled")?;
    assert!(shown.contains("Arrr!"), "{shown}");
    assert!(sandbox.requests().is_empty());
    assert_eq!(state(&mut lsp, &session)?["running"], false);
    Ok(())
}

#[test]
fn input_is_asked_with_tandem_input_and_cancelled_without_it() -> anyhow::Result<()> {
    let asker = r#"export default function (pi: any) {
  pi.registerCommand("ask", {
    description: "Ask for a name",
    handler: async (_args: string, ctx: any) => {
      const name = await ctx.ui.input("Your name?", "someone");
      ctx.ui.notify(`hello ${name ?? "(cancelled)"}`, "info");
    },
  });
}"#;
    for (input, expected) in [(true, "hello Ada"), (false, "hello (cancelled)")] {
        let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
        let path = extension(&sandbox, "ask.ts", asker);
        let mut lsp = editor(&sandbox, &["-e", &path], input)?;
        let session = prompt(&mut lsp, json!({"text": "/ask"}))?;
        if input {
            let asked = lsp.server_request("tandem/input")?;
            assert_eq!(asked.params["title"], "Your name?");
            assert_eq!(asked.params["placeholder"], "someone");
            assert_eq!(asked.params["multiline"], false);
            lsp.reply(&asked, json!({"value": "Ada"}))?;
        }
        lsp.next_run(&session)?;
        message_text(&mut lsp, expected)?;
        assert!(lsp.received("tandem/input").len() == usize::from(input));
    }
    Ok(())
}

#[test]
fn a_repositorys_extensions_load_once_the_editors_user_trusts_the_folder() -> anyhow::Result<()> {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let dir = sandbox.cwd.join(".pi/extensions");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("repo-tool.ts"),
        r#"import { writeFileSync } from "node:fs";
import { Type } from "typebox";
export default function (pi: any) {
  writeFileSync("extension-ran", "yes");
  pi.registerTool({
    name: "repo_tool", label: "Repo tool", description: "The repository's tool",
    parameters: Type.Object({}),
    async execute() { return { content: [{ type: "text", text: "from the repo" }], details: {} }; },
  });
}"#,
    )?;
    sandbox.answer(&Turn::tool_call("call_1", "repo_tool", json!({})));
    sandbox.answer(&Turn::text("used it"));
    let mut lsp = editor(&sandbox, &[], false)?;
    let session = prompt(&mut lsp, json!({"text": "use the repo's tool"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    let question = ask.params["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        question.contains("extensions would run") && question.contains("repo-tool.ts"),
        "{question}"
    );
    assert!(
        !sandbox.cwd.join("extension-ran").exists(),
        "ran before the answer"
    );
    lsp.reply(&ask, json!({"title": "Trust"}))?;
    lsp.next_run(&session)?;
    assert!(sandbox.cwd.join("extension-ran").exists());
    let offered = sandbox.offered_tools(0);
    assert!(offered.contains(&"repo_tool".to_string()), "{offered:?}");
    let second = sandbox.requests()[1].json()?;
    assert_eq!(
        crate::tool_result_text(&second, "call_1").as_deref(),
        Some("from the repo")
    );
    let loaded = state(&mut lsp, &session)?["extensions"].clone();
    assert!(loaded.to_string().contains("repo-tool.ts"), "{loaded}");
    Ok(())
}

#[test]
fn a_repositorys_extensions_never_run_when_the_user_does_not_trust_the_folder() -> anyhow::Result<()>
{
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let dir = sandbox.cwd.join(".pi/extensions");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("evil.ts"),
        r#"import { writeFileSync } from "node:fs";
export default function () { writeFileSync("extension-ran", "yes"); }"#,
    )?;
    sandbox.answer(&Turn::text("fine"));
    let mut lsp = editor(&sandbox, &[], false)?;
    let session = prompt(&mut lsp, json!({"text": "hello"}))?;
    let ask = lsp.server_request("window/showMessageRequest")?;
    lsp.reply(&ask, json!({"title": "Don't trust"}))?;
    lsp.next_run(&session)?;
    assert!(!sandbox.cwd.join("extension-ran").exists());
    assert_eq!(state(&mut lsp, &session)?.get("extensions"), None);
    Ok(())
}
