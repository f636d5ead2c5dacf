//! Session files across runs: `--continue`, `--session` (path or id prefix), `--fork`,
//! `--session-id` and `--name`, `--no-session`, a damaged file that still loads and is only appended to, the thinking
//! level a session records, and one writer per file (two `tandem -c` at once; pi appending
//! mid-run).

use serde_json::{json, Value};
use tandem_tests::wire::{Turn, WireApi};

use crate::support::{body_mentions, entry_kinds, read_jsonl, Sandbox};

/// Runs one exchange ("first" → "One.") and returns the session file and its bytes.
fn first_session(sandbox: &Sandbox) -> (std::path::PathBuf, Vec<u8>) {
    sandbox.answer(&Turn::text("One."));
    sandbox.run(&["-p", "first"]).expect_code(0);
    let path = sandbox.only_session();
    let bytes = std::fs::read(&path).expect("session bytes");
    (path, bytes)
}

#[test]
fn continue_resumes_the_latest_session_of_the_directory() {
    let sandbox = Sandbox::new(WireApi::GoogleGenerativeAi);
    let (path, before) = first_session(&sandbox);
    sandbox.answer(&Turn::text("Two."));
    // The model comes from the session; no --model needed.
    let run = sandbox.run_raw(&["--continue", "-p", "second"], None);
    run.expect_code(0);
    assert_eq!(run.stdout, "Two.\n");
    let second = &sandbox.requests()[1];
    assert!(body_mentions(second, "first") && body_mentions(second, "One."));
    assert!(body_mentions(second, "second"));
    assert_eq!(
        sandbox.session_files(),
        std::slice::from_ref(&path),
        "no new file"
    );
    let after = std::fs::read(&path).expect("session bytes");
    assert!(after.starts_with(&before), "appended, not rewritten");
    assert_eq!(
        entry_kinds(&read_jsonl(&path))[3..],
        [
            "message:system",
            "message:user",
            "message:assistant",
            "message:user",
            "message:assistant"
        ]
    );
}

#[test]
fn session_path_resumes_that_file() {
    let sandbox = Sandbox::new(WireApi::OpenAiResponses);
    let (path, before) = first_session(&sandbox);
    // A later, unrelated session: --session must not pick the latest one.
    sandbox.answer(&Turn::text("Other."));
    sandbox.run(&["-p", "other"]).expect_code(0);
    sandbox.answer(&Turn::text("Two."));
    let run = sandbox.run(&["--session", &path.to_string_lossy(), "-p", "second"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Two.\n");
    let third = &sandbox.requests()[2];
    assert!(body_mentions(third, "One."));
    assert!(!body_mentions(third, "Other."));
    let after = std::fs::read(&path).expect("session bytes");
    assert!(after.starts_with(&before) && after.len() > before.len());
}

#[test]
fn fork_copies_the_session_into_a_new_file_and_leaves_the_old_one_alone() {
    let sandbox = Sandbox::new(WireApi::AnthropicMessages);
    let (path, before) = first_session(&sandbox);
    sandbox.answer(&Turn::text("Two."));
    let run = sandbox.run(&["--fork", &path.to_string_lossy(), "-p", "second"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Two.\n");
    assert!(
        body_mentions(&sandbox.requests()[1], "One."),
        "the fork has the history"
    );
    assert_eq!(
        std::fs::read(&path).expect("old bytes"),
        before,
        "old file changed"
    );
    let files = sandbox.session_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let fork = files.iter().find(|f| **f != path).expect("the fork");
    let old = read_jsonl(&path);
    let new = read_jsonl(fork);
    assert_eq!(new[0]["parentSession"], json!(path.to_string_lossy()));
    assert_ne!(new[0]["id"], old[0]["id"]);
    assert_eq!(
        entry_kinds(&new)[3..],
        [
            "message:system",
            "message:user",
            "message:assistant",
            "message:user",
            "message:assistant"
        ]
    );
    assert_eq!(
        new[4]["message"], old[4]["message"],
        "history copied as it was"
    );
}

#[test]
fn a_session_file_with_torn_and_garbage_lines_still_loads_and_is_only_appended_to() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let (path, clean) = first_session(&sandbox);
    // A garbage line after the user message, and a last line torn by a crash mid-write.
    let mut damaged = Vec::new();
    for (n, line) in clean.split_inclusive(|b| *b == b'\n').enumerate() {
        damaged.extend_from_slice(line);
        if n == 4 {
            damaged.extend_from_slice(b"this is not json\n");
        }
    }
    damaged.extend_from_slice(br#"{"type":"message","id":"deadbeef","parentId":"#);
    std::fs::write(&path, &damaged).expect("damage the session");

    sandbox.answer(&Turn::text("Two."));
    let run = sandbox.run(&["--session", &path.to_string_lossy(), "-p", "second"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Two.\n");
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 2, "{}", run.stderr);
    for (warning, line) in warnings.iter().zip([6, 8]) {
        let prefix = format!("Warning: {}: line {line} was skipped (", path.display());
        assert!(warning.starts_with(&prefix), "{warning}");
    }
    let second = &sandbox.requests()[1];
    assert!(body_mentions(second, "first") && body_mentions(second, "One."));

    let after = std::fs::read(&path).expect("session bytes");
    assert!(
        after.starts_with(&damaged),
        "the damaged lines were rewritten"
    );
    let appended = String::from_utf8_lossy(&after[damaged.len()..]).to_string();
    // The torn line is ended before the first new entry, which then parses on its own line.
    let new_lines: Vec<Value> = appended
        .trim_start_matches('\n')
        .lines()
        .map(|l| serde_json::from_str(l).expect("appended line"))
        .collect();
    assert_eq!(
        entry_kinds(&new_lines),
        ["message:user", "message:assistant"]
    );
    let old_assistant: Value =
        serde_json::from_slice(clean.split(|b| *b == b'\n').nth(5).expect("line 6"))
            .expect("old assistant entry");
    assert_eq!(new_lines[0]["parentId"], old_assistant["id"]);
}

#[test]
fn session_accepts_a_session_id_prefix() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let (path, before) = first_session(&sandbox);
    let id = read_jsonl(&path)[0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    sandbox.answer(&Turn::text("Two."));
    let run = sandbox.run(&["--session", &id[..8], "-p", "second"]);
    run.expect_code(0);
    assert!(body_mentions(&sandbox.requests()[1], "One."));
    assert!(std::fs::read(&path)
        .expect("session bytes")
        .starts_with(&before));
    assert_eq!(sandbox.session_files(), [path]);
}

#[test]
fn continue_without_a_session_starts_a_new_one() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Fresh."));
    let run = sandbox.run(&["--continue", "-p", "hi"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Fresh.\n");
    let entries = read_jsonl(&sandbox.only_session());
    assert_eq!(
        entry_kinds(&entries)[3..],
        ["message:system", "message:user", "message:assistant"]
    );
}

#[test]
fn no_session_writes_no_file() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Fresh."));
    let run = sandbox.run(&["--no-session", "-p", "hi"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Fresh.\n");
    assert!(!sandbox.agent_dir.join("sessions").exists());
}

#[test]
fn the_session_records_the_thinking_level_the_model_supports() {
    // A model without reasoning: a requested level is recorded as off and nothing is sent.
    let sandbox = Sandbox::new(WireApi::AnthropicMessages);
    sandbox.answer(&Turn::text("ok"));
    sandbox
        .run(&["--thinking", "high", "-p", "hi"])
        .expect_code(0);
    assert_eq!(
        read_jsonl(&sandbox.only_session())[2]["thinkingLevel"],
        "off"
    );
    let body = sandbox.requests()[0].json().expect("JSON body");
    assert_eq!(body.get("thinking"), None, "{body}");

    // A reasoning model with a `:high` suffix on --model.
    let model = json!({"id": "mock-model", "reasoning": true});
    let sandbox = Sandbox::with_model(WireApi::AnthropicMessages, model);
    sandbox.answer(&Turn::text("ok"));
    let args = ["--model", "mock/mock-model:high", "-p", "hi"];
    sandbox.run_raw(&args, None).expect_code(0);
    assert_eq!(
        read_jsonl(&sandbox.only_session())[2]["thinkingLevel"],
        "high"
    );
    let body = sandbox.requests()[0].json().expect("JSON body");
    assert_eq!(body["thinking"]["type"], "enabled", "{body}");
    let budget: Value = body["thinking"]["budget_tokens"].clone();
    assert!(budget.as_u64().is_some_and(|b| b > 0), "{body}");
}

/// Each entry's `parentId` is the entry before it: one branch, nothing forked silently.
fn assert_one_branch(path: &std::path::Path) {
    let lines = read_jsonl(path);
    for pair in lines[1..].windows(2) {
        assert_eq!(
            pair[1]["parentId"],
            pair[0]["id"],
            "{}: {} does not follow {}",
            path.display(),
            pair[1],
            pair[0]
        );
    }
}

/// The user texts of a session file, in order.
fn user_texts(path: &std::path::Path) -> Vec<String> {
    read_jsonl(path)
        .iter()
        .filter(|e| e["message"]["role"] == "user")
        .map(|e| match &e["message"]["content"] {
            Value::String(s) => s.clone(),
            blocks => blocks[0]["text"].as_str().unwrap_or_default().to_string(),
        })
        .collect()
}

/// Starts `tandem -c -p PROMPT` (its stderr in `stderr_file`) with its answer, "Alpha.", held
/// back until the gate opens, and waits until it has asked its model: from then on it holds the
/// session, waiting.
fn continue_held(
    sandbox: &Sandbox,
    prompt: &str,
    stderr_file: &str,
) -> (std::process::Child, tandem_tests::mock_llm::Gate) {
    let gate = tandem_tests::mock_llm::Gate::new();
    sandbox.enqueue(
        tandem_tests::wire::response(sandbox.api, &Turn::text("Alpha.")).held_until(&gate),
    );
    let mut child = crate::support::process::command(
        sandbox,
        &["--model", crate::support::MODEL, "-c", "-p", prompt],
        stderr_file,
    )
    .spawn()
    .expect("spawns tandem");
    // No piped prompt: the message is the whole prompt.
    drop(child.stdin.take());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime
        .block_on(sandbox.mock.wait_for_requests(2))
        .expect("the held run asks its model");
    (child, gate)
}

#[test]
fn two_processes_continuing_one_session_never_branch_it_silently() {
    use crate::support::process::{wait_or_fail, HANG_GUARD};

    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let (original, _) = first_session(&sandbox);
    // The first process's answer is held back until the second has run, so the two overlap
    // for certain: the first holds the session while it waits on its model.
    let (mut first, gate) = continue_held(&sandbox, "from the first", "first.stderr");
    sandbox.answer(&Turn::text("Beta."));
    let second = sandbox.run(&["-c", "-p", "from the second"]);
    second.expect_code(0);
    assert_eq!(second.stdout, "Beta.\n");
    let files = sandbox.session_files();
    assert_eq!(
        files.len(),
        2,
        "the second process wrote a new file: {files:?}"
    );
    let copy = files
        .iter()
        .find(|f| **f != original)
        .expect("the new file")
        .clone();
    assert!(
        second.stderr.contains("in use by another process")
            && second.stderr.contains(&*original.to_string_lossy())
            && second.stderr.contains(&*copy.to_string_lossy()),
        "stderr names both files and why: {}",
        second.stderr
    );

    gate.open();
    let status = wait_or_fail(&mut first, HANG_GUARD, "the first tandem -c");
    assert!(status.success(), "the first process failed");
    let first_stderr = std::fs::read_to_string(sandbox.home.join("first.stderr")).expect("stderr");
    assert!(!first_stderr.contains("Warning"), "{first_stderr}");

    // Each file holds one whole conversation; the copy names the original as its parent.
    assert_one_branch(&original);
    assert_one_branch(&copy);
    assert_eq!(user_texts(&original), ["first", "from the first"]);
    // The copy is the original as the second process found it (with the first process's
    // prompt when that was already written), then the second's own exchange.
    let (copied, kept) = (read_jsonl(&copy), read_jsonl(&original));
    let found = copied.len() - 3;
    assert_eq!(copied[1..=found], kept[1..=found]);
    assert_eq!(
        user_texts(&copy).last().map(String::as_str),
        Some("from the second")
    );
    assert!(!copied.iter().any(|e| e.to_string().contains("Alpha.")));
    assert_eq!(
        read_jsonl(&copy)[0]["parentSession"],
        json!(original.to_string_lossy())
    );

    // The next --continue takes the latest file (the first process wrote last) and sees one
    // consistent history.
    sandbox.answer(&Turn::text("Gamma."));
    let third = sandbox.run(&["-c", "-p", "third"]);
    third.expect_code(0);
    assert!(!third.stderr.contains("Warning"), "{}", third.stderr);
    let request = sandbox.requests().last().cloned().expect("a request");
    assert!(body_mentions(&request, "from the first") && body_mentions(&request, "Alpha."));
    assert!(!body_mentions(&request, "from the second"));
    assert_one_branch(&original);
    assert_eq!(user_texts(&original), ["first", "from the first", "third"]);
}

#[test]
fn a_session_file_another_program_appends_to_mid_run_is_left_alone_and_the_run_moves() {
    use crate::support::process::{wait_or_fail, HANG_GUARD};
    use std::io::Write;

    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let (original, _) = first_session(&sandbox);
    let (mut run, gate) = continue_held(&sandbox, "from tandem", "run.stderr");

    // pi (which takes no lock) appends to the session while tandem waits on its model.
    let last = read_jsonl(&original).last().cloned().expect("an entry");
    let foreign = json!({"type": "message", "id": "0000beef", "parentId": last["id"],
        "timestamp": "2026-12-02T00:00:00.000Z",
        "message": {"role": "user", "content": "from pi", "timestamp": 5}});
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&original)
        .expect("opens");
    writeln!(file, "{foreign}").expect("appends");
    drop(file);
    gate.open();
    let status = wait_or_fail(&mut run, HANG_GUARD, "tandem -c");
    assert!(status.success(), "the run failed");
    let stderr = std::fs::read_to_string(sandbox.home.join("run.stderr")).expect("stderr");

    let files = sandbox.session_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let moved = files.iter().find(|f| **f != original).expect("a new file");
    assert!(
        stderr.contains("changed by another program") && stderr.contains(&*moved.to_string_lossy()),
        "{stderr}"
    );
    // The original ends with pi's line: tandem wrote nothing after it.
    assert_eq!(read_jsonl(&original).last(), Some(&foreign));
    // The new file holds tandem's branch, whole, and names the original.
    assert_one_branch(moved);
    assert_eq!(user_texts(moved), ["first", "from tandem"]);
    assert!(read_jsonl(moved)
        .iter()
        .any(|e| e.to_string().contains("Alpha.")));
    assert_eq!(
        read_jsonl(moved)[0]["parentSession"],
        json!(original.to_string_lossy())
    );
}

#[test]
fn a_session_id_creates_then_continues_its_session_and_a_name_is_recorded() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("One."));
    sandbox
        .run(&[
            "--session-id",
            "release-notes.1",
            "-n",
            "Release notes",
            "-p",
            "first",
        ])
        .expect_code(0);
    let path = sandbox.only_session();
    let entries = read_jsonl(&path);
    assert_eq!(entries[0]["type"], "session");
    assert_eq!(entries[0]["id"], "release-notes.1");
    let info: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "session_info")
        .collect();
    assert_eq!(info.len(), 1, "{entries:?}");
    assert_eq!(info[0]["name"], "Release notes");
    // The same id again: that session, continued in place.
    sandbox.answer(&Turn::text("Two."));
    let run = sandbox.run(&["--session-id", "release-notes.1", "-p", "second"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Two.\n");
    assert_eq!(sandbox.session_files(), std::slice::from_ref(&path));
    assert!(body_mentions(&sandbox.requests()[1], "One."));
    // An id another session does not have: a new file.
    sandbox.answer(&Turn::text("Three."));
    sandbox
        .run(&["--session-id", "other", "-p", "third"])
        .expect_code(0);
    assert_eq!(sandbox.session_files().len(), 2);
    assert!(!body_mentions(&sandbox.requests()[2], "One."));
}

#[test]
fn a_model_scope_picks_the_model_of_a_new_session_and_its_thinking_level() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Scoped."));
    let run = sandbox.run_raw(
        &["--models", "nothing-like-this,MOCK/mock-*:off", "-p", "hi"],
        None,
    );
    run.expect_code(0);
    assert_eq!(run.stdout, "Scoped.\n");
    assert!(
        run.stderr
            .contains("No models match pattern \"nothing-like-this\""),
        "{}",
        run.stderr
    );
    let entries = read_jsonl(&sandbox.only_session());
    let change = entries
        .iter()
        .find(|e| e["type"] == "model_change")
        .expect("a model_change entry");
    assert_eq!(change["modelId"], "mock-model");
}

#[test]
fn export_writes_the_session_as_one_html_page_with_every_text_escaped() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write("notes.txt", "<script>alert('from a file')</script>\n");
    sandbox.answer(&Turn::tool_call(
        "call_r",
        "read",
        json!({"path": "notes.txt"}),
    ));
    sandbox.answer(&Turn::text("It holds <b>a script</b> & more."));
    sandbox
        .run(&["-n", "Export me", "-p", "what is in notes.txt?"])
        .expect_code(0);
    let session = sandbox.only_session();
    let run = sandbox.run_raw(&["--export", &session.to_string_lossy(), "page.html"], None);
    run.expect_code(0);
    let page_path = sandbox.cwd.join("page.html");
    assert_eq!(
        run.stdout,
        format!("Exported to: {}\n", page_path.display())
    );
    let page = std::fs::read_to_string(&page_path).expect("the page");
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.contains("<title>Export me</title>"), "{page}");
    assert!(page.contains("what is in notes.txt?"), "{page}");
    assert!(page.contains("Tool call: read"), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert(&#39;from a file&#39;)&lt;/script&gt;"),
        "{page}"
    );
    assert!(page.contains("It holds &lt;b&gt;a script&lt;/b&gt; &amp; more."));
    assert!(!page.contains("<script"), "a script got through: {page}");
    // Without an output: tandem-session-<file name>.html here.
    let run = sandbox.run_raw(&["--export", &session.to_string_lossy()], None);
    run.expect_code(0);
    let stem = session.file_stem().expect("a name").to_string_lossy();
    assert!(sandbox
        .cwd
        .join(format!("tandem-session-{stem}.html"))
        .is_file());
    // A missing file is an error saying so.
    let run = sandbox.run_raw(&["--export", "nope.jsonl"], None);
    run.expect_code(1);
    assert!(run.stderr.contains("File not found"), "{}", run.stderr);
}
