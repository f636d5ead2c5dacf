//! Write guards, in the front doors that can ask (the language server and ACP), and the CLI's
//! print mode pinned where it differs (it asks nobody and allows everything, like pi):
//!
//! - a write through a symlink whose target does not exist yet asks the outside-the-workspace
//!   question, and a refusal creates nothing outside;
//! - a folder swapped for a symlink while a question is open is not written through after
//!   "Allow": the path is checked again and the write is a tool error;
//! - files that make tools run code (`.git/`, `.pi/`, `.vscode/`) ask in auto / accept-edits
//!   mode too, naming the risk;
//! - a path with a NUL byte is refused with a clear error, never cut short.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tandem_tests::lsp_client::{ClientError, LspClient};

use crate::support::front_doors::{self, *};
use crate::support::lsp::answers;
use crate::support::Sandbox;

fn outside(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.home.join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_call(path: &str, content: &str) -> Value {
    json!({"toolCalls": [{"name": "write", "arguments": {"path": path, "content": content}}]})
}

fn script_of(calls: Vec<Value>) -> Value {
    let mut turns = calls;
    turns.push(json!({"text": "done"}));
    json!({"turns": turns})
}

/// The events (`tandem/event` params) of a new session that ran one prompt.
fn lsp_events_of(lsp: &mut LspClient) -> Result<Vec<Value>, ClientError> {
    let session = lsp_run(lsp, "script", "t", "go")?;
    Ok(lsp.events(&session))
}

fn tool_ends(events: &[Value]) -> Vec<(bool, String)> {
    events
        .iter()
        .map(|e| &e["event"])
        .filter(|e| e["type"] == "tool_end")
        .map(|e| {
            (
                e["isError"] == true,
                e["text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn questions(lsp: &LspClient) -> Vec<String> {
    lsp.received("window/showMessageRequest")
        .iter()
        .map(|m| m.params["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn acp_session(sandbox: &Sandbox, answer: AcpAnswer, mode: &str) -> (Acp, String) {
    sandbox.write_settings(json!({"defaultProvider": "script", "defaultModel": "t"}));
    let mut acp = Acp::start(sandbox, answer);
    let session = acp.new_session(&sandbox.cwd);
    let set = acp.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": mode}),
    );
    assert!(set.get("error").is_none(), "{set}");
    (acp, session)
}

/// The raw output text of each ACP tool call that ended, with whether it failed.
fn acp_ends(acp: &Acp) -> Vec<(bool, String)> {
    acp.updates()
        .into_iter()
        .filter(|u| {
            u["sessionUpdate"] == "tool_call_update"
                && (u["status"] == "failed" || u["status"] == "completed")
        })
        .map(|u| (u["status"] == "failed", u.to_string()))
        .collect()
}

#[test]
fn a_dangling_symlink_write_asks_the_outside_question_and_a_refusal_creates_nothing(
) -> anyhow::Result<()> {
    let sandbox = sandbox(&script_of(vec![write_call("innocent.txt", "pwned\n")]));
    let target = outside(&sandbox).join("planted.txt");
    std::os::unix::fs::symlink(&target, sandbox.cwd.join("innocent.txt")).unwrap();

    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        answers(lsp_deny),
    )?;
    let events = lsp_events_of(&mut lsp)?;
    let asked = questions(&lsp);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        asked[0],
        format!(
            "Tandem wants to write {} (outside the workspace)",
            target.display()
        )
    );
    let ends = tool_ends(&events);
    assert!(
        ends[0].0 && ends[0].1.contains("outside the workspace"),
        "{ends:?}"
    );
    assert!(lsp.received("workspace/applyEdit").is_empty());
    lsp.shutdown()?;
    assert!(!target.exists());

    let (mut acp, session) = acp_session(&sandbox, Box::new(acp_reject), "accept-edits");
    acp.prompt(&session, "go");
    let asked = acp.permission_requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        asked[0]["toolCall"]["title"],
        format!("Write {} (outside the workspace)", target.display())
    );
    assert!(acp_ends(&acp)[0].0);
    acp.close();
    assert!(!target.exists());
    assert!(std::fs::symlink_metadata(sandbox.cwd.join("innocent.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    Ok(())
}

/// Swaps `dir` (an empty directory) for a symlink to `to`.
fn swap(dir: &Path, to: &Path) {
    std::fs::remove_dir(dir).unwrap();
    std::os::unix::fs::symlink(to, dir).unwrap();
}

#[test]
fn acp_a_folder_swapped_while_the_edit_question_is_open_is_not_written_through() {
    let sandbox = sandbox(&script_of(vec![write_call("sub/file.txt", "pwned\n")]));
    let out = outside(&sandbox);
    let sub = sandbox.cwd.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (swap_dir, swap_to) = (sub.clone(), out.clone());
    let answer: AcpAnswer = Box::new(move |method: &str, _params: &Value| match method {
        "session/request_permission" => {
            swap(&swap_dir, &swap_to);
            json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
        }
        _ => Value::Null,
    });
    let (mut acp, session) = acp_session(&sandbox, answer, "ask");
    acp.prompt(&session, "go");
    assert_eq!(acp.permission_requests().len(), 1);
    let ends = acp_ends(&acp);
    assert!(ends[0].0, "{ends:?}");
    assert!(
        ends[0]
            .1
            .contains("changed while the change was being confirmed"),
        "{ends:?}"
    );
    acp.close();
    assert!(
        !out.join("file.txt").exists(),
        "written through the swapped folder"
    );
}

#[test]
fn lsp_a_folder_swapped_while_a_question_is_open_is_not_written_through() -> anyhow::Result<()> {
    // The edit question (confirm mode, a client without change annotations).
    let sandbox = sandbox(&script_of(vec![
        write_call("sub/file.txt", "pwned\n"),
        write_call("link/new.txt", "pwned\n"),
    ]));
    let out = outside(&sandbox);
    let other = sandbox.home.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let sub = sandbox.cwd.join("sub");
    std::fs::create_dir(&sub).unwrap();
    // And the outside question: `link` points outside; it is retargeted while asked.
    std::os::unix::fs::symlink(&out, sandbox.cwd.join("link")).unwrap();
    let (sub_dir, out_dir, link, other_dir) = (
        sub.clone(),
        out.clone(),
        sandbox.cwd.join("link"),
        other.clone(),
    );
    let answer = answers(move |method: &str, params: &Value| {
        let message = params["message"].as_str().unwrap_or_default();
        match method {
            "window/showMessageRequest" if message.starts_with("Tandem wants to create") => {
                swap(&sub_dir, &out_dir);
                json!({"title": "Apply"})
            }
            "window/showMessageRequest" if message.contains("outside the workspace") => {
                std::fs::remove_file(&link).unwrap();
                std::os::unix::fs::symlink(&other_dir, &link).unwrap();
                json!({"title": "Allow"})
            }
            "workspace/applyEdit" => json!({"applied": true}),
            _ => Value::Null,
        }
    });
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "confirm"}),
        answer,
    )?;
    let events = lsp_events_of(&mut lsp)?;
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 2, "{ends:?}");
    for (failed, text) in &ends {
        assert!(*failed, "{text}");
        assert!(
            text.contains("changed while the change was being confirmed"),
            "{text}"
        );
    }
    assert!(
        lsp.received("workspace/applyEdit").is_empty(),
        "an edit was sent"
    );
    lsp.shutdown()?;
    assert!(!out.join("file.txt").exists());
    assert!(!out.join("new.txt").exists() && !other.join("new.txt").exists());
    Ok(())
}

fn protected_script() -> Value {
    script_of(vec![
        write_call(".git/config", "[core]\n\tfsmonitor = touch pwned\n"),
        write_call(
            ".pi/settings.json",
            "{\"mcpServers\": {\"x\": {\"command\": \"touch\", \"args\": [\"pwned\"]}}}\n",
        ),
        write_call(".vscode/tasks.json", "{\"version\": \"2.0.0\"}\n"),
    ])
}

#[test]
fn lsp_protected_paths_ask_in_auto_mode_and_name_the_risk() -> anyhow::Result<()> {
    let sandbox = sandbox(&protected_script());
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto", "bashPermission": "allow"}),
        answers(lsp_deny),
    )?;
    let events = lsp_events_of(&mut lsp)?;
    let asked = questions(&lsp);
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(
        asked[0].starts_with("Tandem wants to write .git/config. Careful: files under .git/")
            && asked[0].contains("core.fsmonitor"),
        "{}",
        asked[0]
    );
    assert!(asked[1].contains(".pi/settings.json") && asked[1].contains("MCP servers"));
    assert!(asked[2].contains(".vscode/tasks.json") && asked[2].contains("tasks"));
    for (failed, text) in tool_ends(&events) {
        assert!(failed && text.starts_with("Writing "), "{text}");
    }
    assert!(lsp.received("workspace/applyEdit").is_empty());
    lsp.shutdown()?;

    // Allowed, the edits go to the editor.
    let mut lsp = front_doors::lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        answers(|method: &str, _: &Value| match method {
            "window/showMessageRequest" => json!({"title": "Allow"}),
            "workspace/applyEdit" => json!({"applied": true}),
            _ => Value::Null,
        }),
    )?;
    let events = lsp_events_of(&mut lsp)?;
    assert_eq!(questions(&lsp).len(), 3);
    assert_eq!(lsp.received("workspace/applyEdit").len(), 3);
    assert!(tool_ends(&events).iter().all(|(failed, _)| !failed));
    lsp.shutdown()?;
    Ok(())
}

#[test]
fn acp_protected_paths_ask_in_accept_edits_mode() {
    let sandbox = sandbox(&protected_script());
    let (mut acp, session) = acp_session(&sandbox, Box::new(acp_reject), "accept-edits");
    acp.prompt(&session, "go");
    let asked = acp.permission_requests();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert_eq!(
        asked[0]["toolCall"]["title"],
        format!(
            "Write {} (it can make tools run code)",
            sandbox.cwd.join(".git/config").display()
        )
    );
    assert!(asked[0]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .contains("core.fsmonitor"));
    assert!(acp_ends(&acp).iter().all(|(failed, _)| *failed));
    acp.close();
    for file in [".git/config", ".pi/settings.json", ".vscode/tasks.json"] {
        assert!(!sandbox.cwd.join(file).exists(), "{file} was written");
    }

    let allow: AcpAnswer = Box::new(|method: &str, _: &Value| match method {
        "session/request_permission" => {
            json!({"outcome": {"outcome": "selected", "optionId": "allow_always"}})
        }
        _ => Value::Null,
    });
    let (mut acp, session) = acp_session(&sandbox, allow, "accept-edits");
    acp.prompt(&session, "go");
    // "Always" does not last for protected paths: each write asked.
    assert_eq!(acp.permission_requests().len(), 3);
    acp.close();
    assert!(std::fs::read_to_string(sandbox.cwd.join(".git/config"))
        .unwrap()
        .contains("fsmonitor"));
}

/// Issue 29: configuration that makes the next build, install, shell or CI run code is
/// protected too, so accept-edits asks before writing it.
#[test]
fn acp_accept_edits_asks_before_writing_build_package_and_ci_configuration() {
    let files = [
        ".cargo/config.toml",
        "mise.toml",
        ".yarnrc.yml",
        ".npmrc",
        ".gemini/settings.json",
        ".github/workflows/ci.yml",
    ];
    let sandbox = sandbox(&script_of(
        files
            .iter()
            .map(|f| write_call(f, "pwned = true\n"))
            .collect(),
    ));
    let (mut acp, session) = acp_session(&sandbox, Box::new(acp_reject), "accept-edits");
    acp.prompt(&session, "go");
    let asked: Vec<String> = acp
        .permission_requests()
        .iter()
        .map(|r| {
            r["toolCall"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(asked.len(), files.len(), "{asked:?}");
    for (file, title) in files.iter().zip(&asked) {
        assert!(
            title.ends_with(&format!("{file} (it can make tools run code)")),
            "{title}"
        );
    }
    acp.close();
    for file in files {
        assert!(!sandbox.cwd.join(file).exists(), "{file} was written");
    }
}

#[test]
fn print_mode_asks_nobody_and_writes_protected_paths_like_pi() {
    let sandbox = sandbox(&protected_script());
    let run = cli(&sandbox, &["--model", "script/t", "-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(sandbox.cwd.join(".git/config").exists());
}

#[test]
fn nul_bytes_in_paths_are_refused_in_every_front_door() -> anyhow::Result<()> {
    let message = "The path \"evil.txt\\0.sh\" contains a NUL byte at character 9";
    let sandbox = sandbox(&script_of(vec![write_call("evil.txt\u{0}.sh", "x\n")]));
    let run = cli(
        &sandbox,
        &["--mode", "json", "--model", "script/t", "-p", "go"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let end: Value = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true, "{end}");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with(message), "{text}");

    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        answers(lsp_deny),
    )?;
    let ends = tool_ends(&lsp_events_of(&mut lsp)?);
    assert!(ends[0].0 && ends[0].1.starts_with(message), "{ends:?}");
    assert!(lsp.received("workspace/applyEdit").is_empty());
    lsp.shutdown()?;

    let (mut acp, session) = acp_session(&sandbox, Box::new(acp_reject), "accept-edits");
    acp.prompt(&session, "go");
    let ends = acp_ends(&acp);
    assert!(
        ends[0].0 && ends[0].1.contains("contains a NUL byte"),
        "{ends:?}"
    );
    assert!(acp.permission_requests().is_empty());
    acp.close();

    let names: Vec<String> = std::fs::read_dir(&sandbox.cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with("evil")), "{names:?}");
    Ok(())
}
