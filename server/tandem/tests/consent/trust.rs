//! Project trust in every front door: nothing a cloned repository configures runs until the
//! folder is trusted, and every run still answers.

use serde_json::{json, Value};
use tandem_tests::lsp_client::{ClientError, Handler, LspClient};

use crate::common::*;
use crate::support::front_doors::{self, *};
use crate::support::lsp::{answers, assistant_texts, file_uri, new_session};
use crate::support::Sandbox;

/// The scripted model for every front door, fast retries.
fn use_script_model(sandbox: &Sandbox, extra: Value) {
    let mut settings = json!({"retry": {"baseDelayMs": 1, "maxRetries": 1},
        "defaultProvider": "script", "defaultModel": "t"});
    if let (Some(s), Some(e)) = (settings.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    sandbox.write_settings(settings);
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The `add` tool's result text in JSON-mode events.
fn add_result(events: &[Value]) -> (bool, String) {
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap_or_else(|| panic!("no tool call ended: {events:#?}"));
    (
        end["isError"] == true,
        end["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[test]
fn print_and_json_modes_run_nothing_from_an_untrusted_repository_and_still_answer() {
    let sandbox = planted();
    use_script_model(&sandbox, json!({}));
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "done\n");
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    let note = run
        .stderr
        .lines()
        .find(|l| l.starts_with("Note: "))
        .unwrap_or_else(|| panic!("no note: {}", run.stderr));
    assert!(
        note.contains(&format!(
            "{} is not trusted, so its project configuration was not loaded",
            sandbox.cwd.display()
        )),
        "{note}"
    );
    assert!(
        note.contains("MCP server \"fromsettings\" would start: sh -c")
            && note.contains("MCP server \"frommcpjson\" would start: sh -c"),
        "{note}"
    );
    assert!(note.contains("--approve"), "{note}");

    let run = cli(&sandbox, &["--mode", "json", "-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    let (failed, text) = add_result(&json_lines(&run.stdout));
    assert!(failed && text.contains("mcp__fromsettings__add"), "{text}");
}

#[test]
fn approve_trust_json_and_default_project_trust_run_the_projects_servers() {
    let sandbox = planted();
    use_script_model(&sandbox, json!({}));
    let run = cli(&sandbox, &["--approve", "--mode", "json", "-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(both_ran(&sandbox), "{:?}", servers_that_ran(&sandbox));
    assert_eq!(add_result(&json_lines(&run.stdout)), (false, "42".into()));
    assert!(!run.stderr.contains("not trusted"), "{}", run.stderr);
    // One run only: nothing was saved.
    assert_eq!(read_trust(&sandbox), json!({}));

    // Saved in trust.json (an ancestor's decision covers the folder) …
    std::fs::remove_file(marker_file(&sandbox)).unwrap();
    write_trust(&sandbox, &[(&sandbox.home, true)]);
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(both_ran(&sandbox), "{:?}", servers_that_ran(&sandbox));

    // … but --no-approve wins for one run, and the folder's own decision beats the ancestor's.
    std::fs::remove_file(marker_file(&sandbox)).unwrap();
    let run = cli(&sandbox, &["-na", "-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    write_trust(&sandbox, &[(&sandbox.home, true), (&sandbox.cwd, false)]);
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    assert!(run.stderr.contains("saved in trust.json"), "{}", run.stderr);

    // defaultProjectTrust "always" in the agent directory's settings.
    std::fs::remove_file(sandbox.agent_dir.join("trust.json")).unwrap();
    use_script_model(&sandbox, json!({"defaultProjectTrust": "always"}));
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(both_ran(&sandbox), "{:?}", servers_that_ran(&sandbox));
}

#[test]
fn a_repository_cannot_vouch_for_itself() {
    let sandbox = planted();
    use_script_model(&sandbox, json!({}));
    let settings = sandbox.cwd.join(".pi/settings.json");
    let mut planted: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    planted["defaultProjectTrust"] = json!("always");
    std::fs::write(&settings, planted.to_string()).unwrap();
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    // Trusted, the project's key is reported and ignored.
    let run = cli(&sandbox, &["--approve", "-p", "go"]);
    assert!(
        run.stderr
            .contains("defaultProjectTrust can only be set in the agent directory's settings.json"),
        "{}",
        run.stderr
    );
}

#[test]
fn tandem_trust_saves_the_decision_where_pi_reads_it() {
    let sandbox = planted();
    use_script_model(&sandbox, json!({}));
    let status = cli(&sandbox, &["trust", "--status"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert!(
        status.stdout.contains("no decision saved"),
        "{}",
        status.stdout
    );
    let saved = cli(&sandbox, &["trust"]);
    assert_eq!(saved.code, Some(0), "{}", saved.stderr);
    assert!(
        saved
            .stdout
            .starts_with(&format!("Trusted: {}", sandbox.cwd.display())),
        "{}",
        saved.stdout
    );
    assert_eq!(
        read_trust(&sandbox),
        json!({sandbox.cwd.display().to_string(): true})
    );
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(both_ran(&sandbox));
}

/// The editor's answer to the trust question (`title`, or `None` to dismiss it); edits applied.
fn lsp_trust_answer(title: Option<&'static str>) -> Handler {
    answers(move |method: &str, params: &Value| match method {
        "window/showMessageRequest" => {
            let message = params["message"].as_str().unwrap_or_default();
            if message.starts_with("Tandem: trust the folder") {
                title.map_or(Value::Null, |t| json!({"title": t}))
            } else {
                Value::Null
            }
        }
        "workspace/applyEdit" => json!({"applied": true}),
        _ => Value::Null,
    })
}

fn trust_questions(lsp: &LspClient) -> Vec<String> {
    lsp.received("window/showMessageRequest")
        .iter()
        .filter_map(|m| m.params["message"].as_str())
        .filter(|m| m.starts_with("Tandem: trust the folder"))
        .map(str::to_string)
        .collect()
}

/// A new session that ran `text` to `settled`, and its events (`tandem/event` params).
fn lsp_session(lsp: &mut LspClient, text: &str) -> Result<(String, Vec<Value>), ClientError> {
    let session = new_session(lsp)?;
    lsp.request("tandem/prompt", json!({"session": session, "text": text}))?;
    let events = lsp.wait_settled(&session, 1)?;
    Ok((session, events))
}

fn lsp_add_result(events: &[Value]) -> (bool, String) {
    let end = &events
        .iter()
        .find(|e| e["event"]["type"] == "tool_end")
        .unwrap_or_else(|| panic!("no tool_end: {events:#?}"))["event"];
    (
        end["isError"] == true,
        end["text"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn lsp_asks_once_says_what_would_run_and_a_dismissal_is_no() -> anyhow::Result<()> {
    let sandbox = planted();
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        lsp_trust_answer(None),
    )?;
    let (session, events) = lsp_session(&mut lsp, "go")?;
    let questions = trust_questions(&lsp);
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        questions[0].contains(&sandbox.cwd.display().to_string())
            && questions[0].contains("MCP server \"fromsettings\" would start: sh -c")
            && questions[0].contains("MCP server \"frommcpjson\" would start: sh -c"),
        "{}",
        questions[0]
    );
    let actions = &lsp.received("window/showMessageRequest")[0].params["actions"];
    assert_eq!(
        actions,
        &json!([{"title": "Trust"}, {"title": "Trust always"}, {"title": "Don't trust"}])
    );
    // Dismissed: not trusted, and the run still answered.
    let (failed, _) = lsp_add_result(&events);
    assert!(failed);
    assert_eq!(
        assistant_texts(&events).last().map(String::as_str),
        Some("done")
    );
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(state["trust"], "untrusted", "{state}");
    // Asked once per folder: a second session is not asked again.
    lsp_session(&mut lsp, "again")?;
    assert_eq!(trust_questions(&lsp).len(), 1);
    lsp.shutdown()?;
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    assert_eq!(read_trust(&sandbox), json!({}));
    Ok(())
}

#[test]
fn lsp_trust_runs_the_servers_for_this_server_only_and_trust_always_saves_it() -> anyhow::Result<()>
{
    let sandbox = planted();
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        lsp_trust_answer(Some("Trust")),
    )?;
    let (session, events) = lsp_session(&mut lsp, "go")?;
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(state["trust"], "trusted", "{state}");
    assert_eq!(lsp_add_result(&events), (false, "42".into()));
    assert!(both_ran(&sandbox), "{:?}", servers_that_ran(&sandbox));
    lsp.shutdown()?;
    assert_eq!(read_trust(&sandbox), json!({}), "\"Trust\" is not saved");

    std::fs::remove_file(marker_file(&sandbox)).unwrap();
    let mut lsp = front_doors::lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        lsp_trust_answer(Some("Trust always")),
    )?;
    let (_, events) = lsp_session(&mut lsp, "go")?;
    assert_eq!(lsp_add_result(&events), (false, "42".into()));
    lsp.shutdown()?;
    assert_eq!(
        read_trust(&sandbox),
        json!({sandbox.cwd.display().to_string(): true})
    );
    // Saved: a new server runs them without asking.
    std::fs::remove_file(marker_file(&sandbox)).unwrap();
    let mut lsp = front_doors::lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        lsp_trust_answer(None),
    )?;
    let (session, _) = lsp_session(&mut lsp, "go")?;
    assert!(trust_questions(&lsp).is_empty());
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(state["trust"], "trusted", "{state}");
    lsp.shutdown()?;
    assert!(both_ran(&sandbox), "{:?}", servers_that_ran(&sandbox));
    Ok(())
}

#[test]
fn lsp_the_editors_own_trust_decides_without_a_question() -> anyhow::Result<()> {
    for (trusted, runs) in [(true, true), (false, false)] {
        let sandbox = planted();
        let mut lsp = lsp(
            &sandbox,
            json!({"model": "script/t", "editMode": "auto", "workspaceTrusted": trusted}),
            lsp_trust_answer(Some("Trust")),
        )?;
        let (session, events) = lsp_session(&mut lsp, "go")?;
        assert!(trust_questions(&lsp).is_empty(), "{trusted}");
        assert_eq!(lsp_add_result(&events).0, !runs, "{trusted}");
        let state = lsp.request("tandem/state", json!({"session": session}))?;
        assert_eq!(
            state["trust"],
            if trusted { "trusted" } else { "untrusted" },
            "{state}"
        );
        lsp.shutdown()?;
        assert_eq!(both_ran(&sandbox), runs, "{trusted}");
    }
    Ok(())
}

#[test]
fn lsp_workspace_trusted_in_the_settings_section_is_not_the_editors_word() -> anyhow::Result<()> {
    let sandbox = planted();
    // A repository's .vscode/settings.json could put this under `tandem`: it must not count.
    let mut lsp = lsp(
        &sandbox,
        json!({"tandem": {"model": "script/t", "editMode": "auto", "workspaceTrusted": true}}),
        lsp_trust_answer(None),
    )?;
    lsp.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"tandem": {"workspaceTrusted": true}}}),
    )?;
    lsp_session(&mut lsp, "go")?;
    assert_eq!(trust_questions(&lsp).len(), 1);
    lsp.shutdown()?;
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    Ok(())
}

/// The ACP client's answer to the trust question (`option`); every other question rejected.
fn acp_trust_answer(option: &'static str) -> AcpAnswer {
    Box::new(move |method: &str, params: &Value| match method {
        "session/request_permission" => {
            let title = params["toolCall"]["title"].as_str().unwrap_or_default();
            let id = if title.starts_with("Trust ") {
                option
            } else {
                "reject_once"
            };
            json!({"outcome": {"outcome": "selected", "optionId": id}})
        }
        _ => Value::Null,
    })
}

fn acp_trust_questions(acp: &Acp) -> Vec<Value> {
    acp.permission_requests()
        .into_iter()
        .filter(|p| {
            p["toolCall"]["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("Trust "))
        })
        .collect()
}

fn acp_add_failed(acp: &Acp) -> bool {
    let update = acp
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update")
        .find(|u| u["status"] == "completed" || u["status"] == "failed")
        .expect("the tool call ended");
    update["status"] == "failed"
}

#[test]
fn acp_asks_before_the_first_turn_and_dont_trust_runs_nothing() {
    let sandbox = planted();
    use_script_model(&sandbox, json!({}));
    let mut acp = Acp::start(&sandbox, acp_trust_answer("dont_trust"));
    let session = acp.new_session(&sandbox.cwd);
    assert!(
        acp_trust_questions(&acp).is_empty(),
        "asked before any turn"
    );
    let answer = acp.prompt(&session, "go");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let questions = acp_trust_questions(&acp);
    assert_eq!(questions.len(), 1);
    let text = questions[0]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("MCP server \"fromsettings\" would start: sh -c")
            && text.contains("MCP server \"frommcpjson\" would start: sh -c"),
        "{text}"
    );
    let options: Vec<&str> = questions[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["Trust", "Trust always", "Don't trust"]);
    assert!(acp_add_failed(&acp));
    // Asked once: the next turn does not ask again.
    acp.prompt(&session, "again");
    assert_eq!(acp_trust_questions(&acp).len(), 1);
    acp.close();
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    assert_eq!(read_trust(&sandbox), json!({}));
}

#[test]
fn acp_trust_always_runs_the_servers_and_saves_the_decision() {
    let sandbox = planted();
    use_script_model(&sandbox, json!({}));
    let mut acp = Acp::start(&sandbox, acp_trust_answer("trust_always"));
    let session = acp.new_session(&sandbox.cwd);
    let answer = acp.prompt(&session, "go");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(!acp_add_failed(&acp));
    acp.close();
    assert!(both_ran(&sandbox), "{:?}", servers_that_ran(&sandbox));
    assert_eq!(
        read_trust(&sandbox),
        json!({sandbox.cwd.display().to_string(): true})
    );
    // A new agent decides from trust.json, without a question.
    let mut acp = Acp::start(&sandbox, acp_trust_answer("dont_trust"));
    let session = acp.new_session(&sandbox.cwd);
    acp.prompt(&session, "go");
    assert!(acp_trust_questions(&acp).is_empty());
    assert!(!acp_add_failed(&acp));
    acp.close();
}

#[test]
fn lsp_an_editor_without_dialogs_is_told_how_to_trust_the_folder() -> anyhow::Result<()> {
    let sandbox = planted();
    // Helix: no tandem events, and window/showMessageRequest is not implemented.
    let answer: Handler = Box::new(|request, out| match request.method.as_str() {
        "window/showMessageRequest" => out.reply_error(request, -32601, "Method not found"),
        "workspace/applyEdit" => out.reply(request, json!({"applied": true})),
        _ => out.reply(request, Value::Null),
    });
    let mut lsp = lsp_with(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        answer,
        false,
    )?;
    sandbox.write("x.rs", "fn main() {}\n");
    lsp.request(
        "workspace/executeCommand",
        json!({"command": "tandem.explain", "arguments": [{
            "uri": file_uri(&sandbox.cwd.join("x.rs")),
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}]}),
    )?;
    lsp.wait_until("the explanation", |c| {
        c.received("window/showMessage").iter().any(|m| {
            m.params["message"]
                .as_str()
                .is_some_and(|t| t.contains("tandem trust"))
        })
    })?;
    let told: Vec<String> = lsp
        .received("window/showMessage")
        .iter()
        .filter_map(|m| m.params["message"].as_str().map(str::to_string))
        .collect();
    let how = told.iter().find(|t| t.contains("tandem trust")).unwrap();
    assert!(
        how.contains(&format!("tandem trust {}", sandbox.cwd.display())),
        "{how}"
    );
    lsp.shutdown()?;
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    Ok(())
}

/// Issue 29: a cloned repository names its MCP server with escape sequences (a new window
/// title, a cleared screen). Whatever prints it for a person — the untrusted-folder note on
/// stderr, `tandem trust --status` (the command a user runs to see what a repository would
/// run) — shows stand-ins, so the repository cannot rewrite the line the user reads.
#[test]
fn a_repositorys_escape_sequences_reach_the_terminal_only_as_stand_ins() {
    let sandbox = sandbox(&json!({"turns": [{"text": "done"}]}));
    use_script_model(&sandbox, json!({}));
    let pi = sandbox.cwd.join(".pi");
    std::fs::create_dir_all(&pi).unwrap();
    let evil = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}1m\u{202e}";
    std::fs::write(
        pi.join("mcp.json"),
        json!({"mcpServers": {evil: {"command": "echo\u{1b}[8m", "args": ["hidden\u{7}"]}}})
            .to_string(),
    )
    .unwrap();
    let raw = |text: &str| {
        text.chars()
            .any(|c| matches!(c, '\u{1b}' | '\u{7}' | '\u{9b}' | '\u{202e}'))
    };
    let status = cli(&sandbox, &["trust", "--status"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert!(
        status
            .stdout
            .contains("evil\u{241b}]0;pwned\u{2407}\u{241b}[2J"),
        "{}",
        status.stdout
    );
    assert!(
        !raw(&status.stdout) && !raw(&status.stderr),
        "{:?}\n{:?}",
        status.stdout,
        status.stderr
    );
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("evil\u{241b}]0;pwned"),
        "{}",
        run.stderr
    );
    assert!(!raw(&run.stderr), "{:?}", run.stderr);
}
