//! Reads and writes outside the workspace need the user's permission, in every front door.
//!
//! The project is `<home>/project`; next to it, `<home>/outside` holds `secret.txt` and
//! `existing.txt`. Inside the project, `link` is a symlink to `../outside` and `link-file.txt`
//! one to `../outside/existing.txt`. The scripted model tries, one call per turn: read with
//! `..`, an absolute path and the escaping symlink; write with `..`, an absolute path and
//! through the symlink; edit and overwrite the symlinked file. (`ls`, `grep` and `find`, which
//! the editor front doors offer too, check their path the same way, `ToolEnv::resolve`; they
//! are not called here.)
//!
//! - LSP (`editMode: "auto"`, so the permission is the only guard): each call asks with
//!   `window/showMessageRequest`; the editor answers Deny → a tool error, no
//!   `workspace/applyEdit`, nothing read or written.
//! - ACP (mode `accept-edits`, the same reason): each call sends `session/request_permission`;
//!   the client rejects → the same.
//! - CLI print / JSON mode: no one to ask, and it allows everything, like pi (`DiskWorkspace`
//!   with `PermissionPolicy::AllowAll`): the calls succeed. That is pinned down here, with the
//!   CLI's only restriction, `--tools`: without write and edit, nothing can be written.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tandem_tests::lsp_client::LspClient;

use crate::support::front_doors::*;
use crate::support::lsp::answers;
use crate::support::Sandbox;

const SECRET: &str = "TOP SECRET CONTENT outside the workspace\n";
const ORIGINAL: &str = "original\n";
const CALLS: usize = 8;

fn outside(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.join("outside")
}

/// The script, one outside access per turn, then an answer.
fn script(sandbox_home: &Path) -> Value {
    let abs = sandbox_home.join("outside");
    let calls = [
        json!({"name": "read", "arguments": {"path": "../outside/secret.txt"}}),
        json!({"name": "read", "arguments": {"path": abs.join("secret.txt")}}),
        json!({"name": "read", "arguments": {"path": "link/secret.txt"}}),
        json!({"name": "write", "arguments": {"path": "../outside/new1.txt", "content": "pwned\n"}}),
        json!({"name": "write", "arguments": {"path": abs.join("new2.txt"), "content": "pwned\n"}}),
        json!({"name": "write", "arguments": {"path": "link/new3.txt", "content": "pwned\n"}}),
        json!({"name": "edit", "arguments": {"path": "link-file.txt",
            "edits": [{"oldText": "original", "newText": "hacked"}]}}),
        json!({"name": "write", "arguments": {"path": "link-file.txt", "content": "overwritten\n"}}),
    ];
    assert_eq!(calls.len(), CALLS);
    let mut turns: Vec<Value> = calls.iter().map(|c| json!({"toolCalls": [c]})).collect();
    turns.push(json!({"text": "done"}));
    json!({"turns": turns})
}

/// Rewrites the script's placeholder home with the real one.
fn fix_script(sandbox: &Sandbox) {
    let path = sandbox.agent_dir.join("script.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("/__home__", &sandbox.home.display().to_string()),
    )
    .unwrap();
}

fn assert_untouched(sandbox: &Sandbox, front: &str) {
    let out = outside(sandbox);
    for new in ["new1.txt", "new2.txt", "new3.txt"] {
        assert!(
            !out.join(new).exists(),
            "{front}: {new} was written outside"
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("existing.txt")).unwrap(),
        ORIGINAL,
        "{front}: the symlinked file changed"
    );
    assert!(
        std::fs::symlink_metadata(sandbox.cwd.join("link-file.txt"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "{front}: the symlink itself was replaced"
    );
}

fn lsp_and_deny() -> anyhow::Result<(Sandbox, LspClient, String)> {
    let sandbox = setup_fixed();
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto", "bashPermission": "allow"}),
        answers(lsp_deny),
    )?;
    let session = lsp_run(&mut lsp, "script", "t", "look around")?;
    Ok((sandbox, lsp, session))
}

fn setup_fixed() -> Sandbox {
    let sandbox = setup_raw();
    fix_script(&sandbox);
    sandbox
}

fn setup_raw() -> Sandbox {
    let sandbox = sandbox(&script(Path::new("/__home__")));
    let out = outside(&sandbox);
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("secret.txt"), SECRET).unwrap();
    std::fs::write(out.join("existing.txt"), ORIGINAL).unwrap();
    std::os::unix::fs::symlink(&out, sandbox.cwd.join("link")).unwrap();
    std::os::unix::fs::symlink(out.join("existing.txt"), sandbox.cwd.join("link-file.txt"))
        .unwrap();
    sandbox
}

#[test]
fn lsp_outside_reads_and_writes_ask_and_a_denial_leaves_everything_untouched() -> anyhow::Result<()>
{
    let (sandbox, mut lsp, session) = lsp_and_deny()?;
    let events = lsp.events(&session);
    let ends: Vec<&Value> = events
        .iter()
        .map(|e| &e["event"])
        .filter(|e| e["type"] == "tool_end")
        .collect();
    assert_eq!(ends.len(), CALLS);
    for end in &ends {
        assert_eq!(end["isError"], true, "{end}");
        let text = end["text"].as_str().unwrap();
        assert!(text.contains("denied"), "{end}");
        assert!(!text.contains("TOP SECRET CONTENT"), "{end}");
    }
    let questions = lsp.received("window/showMessageRequest");
    assert_eq!(
        questions.len(),
        CALLS,
        "one question per access: {questions:?}"
    );
    for q in &questions {
        let message = q.params["message"].as_str().unwrap();
        assert!(message.contains("outside the workspace"), "{message}");
        assert!(
            message.contains("/outside"),
            "names the real path: {message}"
        );
    }
    assert!(lsp.received("workspace/applyEdit").is_empty());
    for message in lsp.log() {
        assert!(
            !message.to_string().contains("TOP SECRET CONTENT"),
            "the secret reached the client: {message}"
        );
    }
    lsp.shutdown()?;
    assert_untouched(&sandbox, "lsp");
    Ok(())
}

#[test]
fn lsp_allowing_an_outside_read_works_so_the_guard_is_what_refused() -> anyhow::Result<()> {
    let sandbox = setup_fixed();
    let allow = |method: &str, params: &Value| match method {
        "window/showMessageRequest" => params["actions"][0].clone(),
        _ => Value::Null,
    };
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "auto"}),
        answers(allow),
    )?;
    let session = lsp_run(&mut lsp, "script", "t", "look around")?;
    let events = lsp.events(&session);
    let first = &events
        .iter()
        .find(|e| e["event"]["type"] == "tool_end")
        .unwrap()["event"];
    assert_eq!(first["isError"], false, "{first}");
    assert_eq!(first["text"], SECRET);
    lsp.shutdown()?;
    Ok(())
}

#[test]
fn acp_outside_reads_and_writes_ask_and_a_rejection_leaves_everything_untouched() {
    let sandbox = setup_fixed();
    sandbox.write_settings(json!({"defaultProvider": "script", "defaultModel": "t"}));
    let mut acp = Acp::start(&sandbox, Box::new(acp_reject));
    let session = acp.new_session(&sandbox.cwd);
    let mode = acp.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "accept-edits"}),
    );
    assert!(mode.get("error").is_none(), "{mode}");
    let answer = acp.prompt(&session, "look around");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let asked = acp.permission_requests();
    assert_eq!(asked.len(), CALLS, "one request per access: {asked:?}");
    let updates = acp.updates();
    let failed = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed")
        .count();
    assert_eq!(failed, CALLS);
    let completed = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .count();
    assert_eq!(completed, 0);
    for line in &acp.wire {
        assert!(
            !line.contains("TOP SECRET CONTENT"),
            "the secret reached the client: {line}"
        );
    }
    acp.close();
    assert_untouched(&sandbox, "acp");
}

/// The CLI has no one to ask: print and JSON modes allow everything, like pi. Pinned down so a
/// change is deliberate; RELIABILITY.md says so.
#[test]
fn cli_print_mode_allows_outside_access_like_pi() {
    let sandbox = setup_fixed();
    let run = cli(&sandbox, &["--model", "script/t", "-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = outside(&sandbox);
    assert_eq!(
        std::fs::read_to_string(out.join("new1.txt")).unwrap(),
        "pwned\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("new2.txt")).unwrap(),
        "pwned\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("new3.txt")).unwrap(),
        "pwned\n"
    );
}

/// The CLI's restriction: without the write and edit tools nothing can be written anywhere
/// (reads outside stay allowed).
#[test]
fn cli_without_write_tools_writes_nothing_outside() {
    let sandbox = setup_fixed();
    let run = cli(
        &sandbox,
        &[
            "--model",
            "script/t",
            "--tools",
            "read,ls,grep,find",
            "--mode",
            "json",
            "-p",
            "go",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let ends: Vec<Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), CALLS, "{}", run.stdout);
    for end in &ends[3..] {
        assert_eq!(end["isError"], true, "{end}");
    }
    assert_untouched(&sandbox, "cli --tools read,ls,grep,find");
}
