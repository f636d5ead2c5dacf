//! The Neovim plugin (`editors/neovim`) in a real headless Neovim 0.11, against `tandem lsp` and
//! the mock LLM server. Each test starts `nvim --headless --clean -u <scenario>.lua`, whose
//! scenario (in `editors/neovim/tests/`) sets the plugin up the way a user's init.lua does
//! (`require("tandem").setup{...}`), opens a file, uses the plugin's commands or Neovim's code
//! action menu, and writes what it saw (chat buffer, file buffer, vim.ui.select calls, progress)
//! to a JSON file that the test asserts on. The model is provider `mock` of a models.json in a
//! temp agent dir (`setup{agent_dir=...}`), served by `tandem_tests::mock_llm` from the SSE
//! fixtures in `tests/neovim_plugin/`.
//!
//! Neovim comes from `scripts/install-neovim` (target/nvim-venv), or `TANDEM_NVIM`; without it
//! the tests fail saying so, never skip. Timeouts are hang guards only.

mod support;

#[path = "neovim_plugin/agent_language.rs"]
mod agent_language;
#[path = "neovim_plugin/language.rs"]
mod language;
#[path = "neovim_plugin/tui.rs"]
mod tui;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tandem_tests::mock_llm::{MockLlm, MockResponse};

/// How long one Neovim scenario may take before it is killed (a hang guard).
const TIMEOUT: Duration = Duration::from_secs(150);

const BUGGY: &str = "def average(values):\n    return sum(values) / len(valus)\n";
const FIXED_LINE: &str = "    return sum(values) / len(values)";
const MODEL: &str = "mock/mock-model";

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The nvim that scripts/install-neovim installs, or `TANDEM_NVIM` when set.
fn nvim() -> PathBuf {
    if let Some(path) = std::env::var_os("TANDEM_NVIM") {
        return PathBuf::from(path);
    }
    let path = manifest_dir().join("../../target/nvim-venv/bin/nvim");
    assert!(
        path.is_file(),
        "Neovim is not installed at {}: run scripts/install-neovim (scripts/test does)",
        path.display()
    );
    path
}

fn plugin_dir() -> PathBuf {
    manifest_dir()
        .join("../../editors/neovim")
        .canonicalize()
        .expect("editors/neovim exists")
}

fn fixture(name: &str) -> PathBuf {
    manifest_dir().join("tests/neovim_plugin").join(name)
}

/// A finished scenario: its sandbox, what the Lua side reported, and the text to print when an
/// assertion fails.
struct Outcome {
    _temp: tempfile::TempDir,
    project: PathBuf,
    result: Value,
    context: String,
}

impl Outcome {
    fn chat(&self) -> Vec<String> {
        strings(&self.result["chat"])
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Everything that explains a failure: the result file, nvim's output, the LSP log and the
/// requests the mock model received.
fn diagnostics(root: &Path, result: Option<&Value>, mock: &MockLlm) -> String {
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| format!("({e})"));
    let log = result
        .and_then(|r| r["log"].as_str())
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("state/nvim/lsp.log"));
    let requests: Vec<String> = mock
        .requests()
        .iter()
        .map(|r| format!("{}\n{}", r.summary(), r.body_text()))
        .collect();
    format!(
        "result: {}\n--- nvim stdout\n{}\n--- nvim stderr\n{}\n--- LSP log {}\n{}\n--- mock requests\n{}",
        result
            .map(|r| serde_json::to_string_pretty(r).unwrap_or_default())
            .unwrap_or_else(|| "(none)".into()),
        read(&root.join("nvim.stdout")),
        read(&root.join("nvim.stderr")),
        log.display(),
        read(&log),
        requests.join("\n\n")
    )
}

/// Runs `editors/neovim/tests/<scenario>.lua` in a sandbox whose project holds main.py, with
/// the mock model configured in a temp agent dir. Panics (with everything useful) unless the
/// scenario reported success.
async fn run_scenario(scenario: &str, mock: &MockLlm) -> Outcome {
    run_scenario_with(scenario, mock, MODEL, &[]).await
}

/// Provider key variables removed from nvim's environment, so that no key of the machine
/// running the tests leaks in.
const KEY_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_OAUTH_TOKEN",
    "GEMINI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GROQ_API_KEY",
    "CEREBRAS_API_KEY",
    "XAI_API_KEY",
    "OPENROUTER_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "ZAI_API_KEY",
    "HF_TOKEN",
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
];

/// [`run_scenario`] with `model` as the plugin's `model` option and more environment for the
/// scenario.
async fn run_scenario_with(
    scenario: &str,
    mock: &MockLlm,
    model: &str,
    env: &[(&str, &str)],
) -> Outcome {
    run_scenario_in(scenario, mock, model, env, |project| {
        std::fs::write(project.join("main.py"), BUGGY).unwrap();
    })
    .await
}

/// [`run_scenario_with`] in a project whose files `fill` writes.
async fn run_scenario_in(
    scenario: &str,
    mock: &MockLlm,
    model: &str,
    env: &[(&str, &str)],
    fill: impl FnOnce(&Path),
) -> Outcome {
    let nvim = nvim();
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().to_path_buf();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    fill(&project);
    // Another project (a git root) for the one-client-many-folders check.
    let other = root.join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    std::fs::write(other.join("lib.py"), "def f():\n    return 1\n").unwrap();
    let agent = root.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let models = json!({"providers": {"mock": {
        "api": "openai-completions",
        "baseUrl": format!("{}/v1", mock.base_url()),
        "apiKey": "sk-mock",
        "models": [{"id": "mock-model", "name": "Mock model"}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    // Quick retries: a retried 429 waits 5 ms, not pi's default 2 s.
    let settings = json!({"retry": {"baseDelayMs": 5}});
    std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
    let result_path = root.join("result.json");
    let plugin = plugin_dir();
    let script = plugin.join("tests").join(format!("{scenario}.lua"));

    let mut command = tokio::process::Command::new(&nvim);
    for var in KEY_VARS {
        command.env_remove(var);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command
        .args(["--headless", "--clean", "-u"])
        .arg(&script)
        .current_dir(&project)
        // A home of its own: no user config, pi config or state leaks in or out.
        .env("HOME", &root)
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_STATE_HOME", root.join("state"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env("TANDEM_PLUGIN", &plugin)
        .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
        .env("TANDEM_PROJECT", &project)
        .env("TANDEM_OTHER", &other)
        .env("TANDEM_AGENT_DIR", &agent)
        .env("TANDEM_MODEL", model)
        .env("TANDEM_RESULT", &result_path)
        .stdin(Stdio::null())
        .stdout(File::create(root.join("nvim.stdout")).unwrap())
        .stderr(File::create(root.join("nvim.stderr")).unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", nvim.display()));

    let status = match tokio::time::timeout(TIMEOUT, child.wait()).await {
        Ok(status) => Some(status.expect("wait for nvim")),
        Err(_) => {
            let _ = child.kill().await;
            None
        }
    };
    let result: Option<Value> = std::fs::read_to_string(&result_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    let Some(status) = status else {
        panic!(
            "{scenario}: nvim did not finish within {TIMEOUT:?}; killed\n{}",
            diagnostics(&root, result.as_ref(), mock)
        );
    };
    let Some(result) = result else {
        panic!(
            "{scenario}: nvim exited ({status}) without a result file\n{}",
            diagnostics(&root, None, mock)
        );
    };
    let context = diagnostics(&root, Some(&result), mock);
    // Shown with --nocapture: what the user saw.
    println!(
        "--- {scenario}: the chat buffer\n{}",
        strings(&result["chat"]).join("\n")
    );
    assert!(
        status.success() && result["ok"] == true,
        "{scenario}: nvim exited ({status}) at step {}: {}\n{context}",
        result["step"],
        result["error"].as_str().unwrap_or("")
    );
    Outcome {
        _temp: temp,
        project,
        result,
        context,
    }
}

/// The state line the chat shows for session `id` once its run ended.
fn settled_line(id: &str, outcome: Option<&str>) -> String {
    let state = match outcome {
        Some(o) => format!("settled ({o})"),
        None => "settled".to_string(),
    };
    format!("Tandem: {state} · {MODEL} · session {}", short(id))
}

/// How the chat names session `id` (a UUIDv7): its last 8 hex digits, which are random; the
/// first ones are a timestamp that sessions made together share.
fn short(id: &str) -> String {
    let hex: String = id.chars().filter(|c| *c != '-').collect();
    assert_eq!(hex.len(), 32, "a session id is a UUID: {id}");
    hex[24..].to_lowercase()
}

/// The text of the last user message the model received.
/// The text of each user message of a chat-completions request body, in order.
fn user_texts(body: &Value) -> Vec<String> {
    let messages = body["messages"].as_array().expect("messages");
    messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|user| support::content_text(&user["content"], ""))
        .collect()
}

/// `:1,2TandemAsk` (editors/neovim/tests/ask.lua): the selection goes as editor context, the
/// chat shows the whole answer streamed in many pieces and settles, progress runs begin to end,
/// and one client serves every file buffer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_ask_streams_the_whole_answer_into_the_chat() {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue_file(fixture("ask.sse")).unwrap();
    let out = run_scenario("ask", &mock).await;
    let r = &out.result;
    let ctx = &out.context;

    let session = r["current"]
        .as_str()
        .unwrap_or_else(|| panic!("no current session\n{ctx}"));
    let chat = out.chat();
    assert_eq!(
        chat,
        vec![
            settled_line(session, None),
            String::new(),
            "## You".into(),
            String::new(),
            "_Context: main.py (Python) · Selection: 1:1 to 2:36_".into(),
            String::new(),
            "Explain these lines".into(),
            String::new(),
            "## Tandem".into(),
            String::new(),
            "Hello from the mock model.".into(),
            String::new(),
            "It streams “héllo” in pieces 👋.".into(),
        ],
        "the chat buffer\n{ctx}"
    );
    println!(
        "the answer arrived in {} text_delta notification(s) (information)",
        r["text_deltas"]
    );
    assert!(r["text_deltas"].as_u64().unwrap_or(0) >= 1, "{ctx}");
    assert_eq!(r["chat_open"], true, "the chat split opened\n{ctx}");
    assert_eq!(
        r["current_buf_is_file"], true,
        "the chat did not take the focus\n{ctx}"
    );
    assert_eq!(r["status_after"], "", "no status once settled\n{ctx}");
    assert_eq!(
        r["client_capabilities"]["tandem"],
        json!({"events": true, "saveDocuments": true, "diagnostics": true, "languageRequests": true}),
        "the client opted in to tandem/event and declared what it answers\n{ctx}"
    );
    assert_eq!(r["offset_encoding"], "utf-8", "{ctx}");
    // One client for every file buffer (not the chat); another project is a workspace folder.
    assert_eq!(r["tandem_clients"], 1, "{ctx}");
    assert_eq!(r["chat_attached"], false, "{ctx}");
    let folders = strings(&r["workspace_folders"]);
    assert_eq!(folders.len(), 2, "{folders:?}\n{ctx}");
    assert!(folders[0].ends_with("/project"), "{folders:?}");
    assert!(folders[1].ends_with("/other"), "{folders:?}");
    // :checkhealth tandem runs its checks without an error.
    let health = strings(&r["health"]);
    let has = |text: &str| health.iter().any(|l| l.contains(text));
    assert!(has("OK Neovim 0.11"), "{health:#?}");
    assert!(has("OK client 1 running"), "{health:#?}");
    assert!(has("OK models.json is valid JSON"), "{health:#?}");
    assert!(has("models have a key"), "{health:#?}");
    assert!(!has("ERROR"), "{health:#?}");
    let commands = strings(&r["commands"]);
    for name in [
        "TandemAsk",
        "TandemSteer",
        "TandemFollowUp",
        "TandemAbort",
        "TandemSessions",
        "TandemModel",
        "TandemThinking",
        "TandemChat",
    ] {
        assert!(commands.iter().any(|c| c == name), "no :{name}\n{ctx}");
    }
    // The run reported work-done progress through Neovim (LspProgress), begin to end.
    let kinds: Vec<&str> = r["progress"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["kind"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(kinds.first(), Some(&"begin"), "progress {kinds:?}\n{ctx}");
    assert_eq!(kinds.last(), Some(&"end"), "progress {kinds:?}\n{ctx}");

    // One model call: the selected lines went as editor context just before the prompt,
    // which is the user's own text.
    let requests = mock.requests();
    assert_eq!(requests.len(), 1, "{ctx}");
    let body = requests[0].json().expect("JSON body");
    assert_eq!(body["model"], "mock-model");
    let users = user_texts(&body);
    let [.., context, prompt] = users.as_slice() else {
        panic!("no context before the prompt: {users:?}");
    };
    assert_eq!(prompt, "Explain these lines");
    assert!(context.starts_with("<editor-context>"), "{context}");
    assert!(context.contains("Selection: 1:1 to 2:36"), "{context}");
    assert!(
        context.contains("return sum(values) / len(valus)"),
        "{context}"
    );
}

/// The fix code action (editors/neovim/tests/fix.lua) on a diagnostic from another source,
/// chosen in `vim.lsp.buf.code_action()`'s menu: the model's edit is confirmed through
/// vim.ui.select (stubbed to pick Apply) and Neovim applies it to the buffer. When the question
/// is asked the chat already shows the edit's diff, with the file's line numbers, and the
/// question under it; at the end the diff is there once (the server's, in the same place).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_code_action_edits_the_buffer_after_confirmation_through_vim_ui_select() {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue_file(fixture("fix-edit.sse")).unwrap();
    mock.enqueue_file(fixture("fix-done.sse")).unwrap();
    let out = run_scenario("fix", &mock).await;
    let r = &out.result;
    let ctx = &out.context;

    // Neovim applied the server's edit to the buffer: the typo is fixed, nothing else changed.
    assert_eq!(
        r["lines"],
        json!(["def average(values):", FIXED_LINE]),
        "the file buffer\n{ctx}"
    );
    assert_eq!(r["modified"], true, "{ctx}");
    // Through the editor only: the file on disk is as it was (the buffer is unsaved).
    assert_eq!(
        std::fs::read_to_string(out.project.join("main.py")).unwrap(),
        BUGGY
    );

    // vim.ui.select was asked twice: the code action menu, then the server's confirmation.
    let selects = r["selects"].as_array().cloned().unwrap_or_default();
    assert_eq!(selects.len(), 2, "{ctx}");
    assert_eq!(
        selects[0]["chose"], "Ask Tandem to fix: \"valus\" is not defined",
        "the code action menu\n{ctx}"
    );
    assert_eq!(selects[1]["kind"], "tandem.confirm", "{ctx}");
    assert_eq!(
        selects[1]["items"],
        json!(["Apply", "Reject", "Apply all"]),
        "{ctx}"
    );
    assert_eq!(selects[1]["chose"], "Apply", "{ctx}");
    assert_eq!(
        selects[1]["prompt"], "Tandem wants to edit main.py (+1/-1 lines)",
        "the server's question\n{ctx}"
    );

    // The chat when the question was asked: the edit, what it changes, then the question
    // (wrapped at a word for the chat's 40 columns in an 80-column Neovim).
    let asked = strings(&selects[1]["chat"]);
    let tail = asked[asked.len().saturating_sub(10)..].to_vec();
    assert_eq!(
        tail,
        [
            "- ▶ Edit main.py",
            "  main.py: +1 -1 (proposed)",
            "  ```diff",
            "   1 │ def average(values):",
            "  -2 │     return sum(values) / len(valus)",
            "  +2 │     return sum(values) / len(values)",
            "  ```",
            "",
            "**Tandem asks:** Tandem wants to edit",
            "main.py (+1/-1 lines)",
        ],
        "the chat when the question was asked:\n{}\n{ctx}",
        asked.join("\n")
    );

    // The chat followed the command's session: the tool, its diff (the server's, where the
    // proposal was: once), the question and the answer, then the model's answer.
    let chat = out.chat();
    let session = r["current"]
        .as_str()
        .unwrap_or_else(|| panic!("no current session\n{ctx}"));
    assert_eq!(chat[0], settled_line(session, None), "{ctx}");
    assert_change_then_question(
        &chat,
        &[
            "- ✓ Edit main.py",
            "  main.py: +1 -1",
            "  ```diff",
            "   1 │ def average(values):",
            "  -2 │     return sum(values) / len(valus)",
            "  +2 │     return sum(values) / len(values)",
            "  ```",
            "",
            "**Tandem asks:** Tandem wants to edit",
            "main.py (+1/-1 lines)",
            "→ Apply",
        ],
        ctx,
    );
    assert!(
        chat.iter()
            .any(|l| l == "Fixed the typo: `valus` is now `values`."),
        "the chat lacks the answer:\n{}\n{ctx}",
        chat.join("\n")
    );

    // The diagnostic came from another source (not the tandem client): the plugin sent it with
    // the code action request, so the fix prompt names it.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{ctx}");
    let first = user_texts(&requests[0].json().expect("JSON body")).join("\n");
    assert!(first.contains("\"valus\" is not defined"), "{first}");
}

/// The user types into main.py (a timer calling nvim_buf_set_text every 20 ms) while the
/// agent's edit is pending — in flight in auto mode, during the question too in confirm mode —
/// and the agent then runs `cat main.py`: every keystroke is in the buffer, the fix landed on
/// its line, and the command saw the fixed file (the plugin saved it on
/// `tandem/saveDocuments`).
#[tokio::test(flavor = "multi_thread")]
async fn typing_while_an_edit_is_pending_loses_nothing_and_the_command_sees_the_saved_file() {
    for mode in ["auto", "confirm"] {
        let mock = MockLlm::start().await.expect("mock LLM");
        let api = tandem_tests::wire::WireApi::OpenAiCompletions;
        let edit = json!({"path": "main.py", "edits": [{"oldText": "len(valus)", "newText": "len(values)"}]});
        mock.enqueue(tandem_tests::wire::response(
            api,
            &tandem_tests::wire::Turn::tool_call("call_fix", "edit", edit),
        ));
        mock.enqueue(tandem_tests::wire::response(
            api,
            &tandem_tests::wire::Turn::tool_call(
                "call_cat",
                "bash",
                json!({"command": "cat main.py"}),
            ),
        ));
        mock.enqueue(tandem_tests::wire::response(
            api,
            &tandem_tests::wire::Turn::text("Fixed and checked."),
        ));
        let out = run_scenario_with(
            "type_while_editing",
            &mock,
            MODEL,
            &[("TANDEM_EDIT_MODE", mode)],
        )
        .await;
        let r = &out.result;
        let ctx = &out.context;
        let typed = r["typed"].as_u64().unwrap_or_default() as usize;
        assert_eq!(typed, 40, "{mode}: {ctx}");
        let lines = strings(&r["lines"]);
        assert_eq!(
            lines,
            [
                format!("{}def average(values):", "#".repeat(typed)),
                FIXED_LINE.to_owned()
            ],
            "{mode}: every keystroke kept and the fix on its line\n{ctx}"
        );
        // The command ran after the editor saved the fixed buffer.
        let requests = mock.requests();
        assert_eq!(requests.len(), 3, "{mode}: {ctx}");
        let body = requests[2].json().expect("JSON body");
        let output = body["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["tool_call_id"] == "call_cat"))
            .map(|m| m["content"].to_string())
            .unwrap_or_default();
        assert!(
            output.contains("len(values)") && !output.contains("len(valus)"),
            "{mode}: the command saw the saved fix: {output}\n{ctx}"
        );
        // The typing overlapped the proposal: keystrokes came before and after the fix landed
        // (and, in confirm mode, while the question was open).
        let fixed_at = r["typed_when_fixed"].as_u64().unwrap_or_default();
        assert!(
            fixed_at > 0 && fixed_at < typed as u64,
            "{mode}: the fix landed after {fixed_at} of {typed} keystrokes\n{ctx}"
        );
        if mode == "confirm" {
            let selects = r["selects"].as_array().cloned().unwrap_or_default();
            assert_eq!(selects.len(), 1, "{mode}: one question\n{ctx}");
            let asked_at = selects[0]["typed"].as_u64().unwrap_or_default();
            assert!(
                asked_at < fixed_at,
                "{mode}: typed while the question was open\n{ctx}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_undo_after_user_edits_elsewhere_in_the_file() {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue_file(fixture("fix-edit.sse")).unwrap();
    mock.enqueue_file(fixture("fix-done.sse")).unwrap();
    let out = run_scenario("undo", &mock).await;
    let r = &out.result;
    let ctx = &out.context;
    assert_eq!(
        r["fixed"],
        json!(["def average(values):", FIXED_LINE]),
        "the fix was applied first\n{ctx}"
    );
    // The fix is taken back around the user's new first line.
    assert_eq!(
        r["lines"],
        json!([
            "# checked by the user",
            "def average(values):",
            "    return sum(values) / len(valus)"
        ]),
        "the file buffer after :TandemUndo\n{ctx}"
    );
    // Asked like any edit: the code action, the fix's confirmation, the undo's confirmation.
    let selects = r["selects"].as_array().cloned().unwrap_or_default();
    assert_eq!(selects.len(), 3, "{ctx}");
    assert_eq!(selects[2]["kind"], "tandem.confirm", "{ctx}");
    assert_eq!(
        selects[2]["prompt"], "Tandem wants to undo its changes to 1 file(s) (+1/-1 lines)",
        "{ctx}"
    );
    let chat = out.chat();
    assert!(
        chat.iter()
            .any(|l| l == "Undid 1 turn: 1 file changed back."),
        "{}\n{ctx}",
        chat.join("\n")
    );
    assert!(
        chat.iter().any(|l| l.contains("Nothing to undo")),
        "{}\n{ctx}",
        chat.join("\n")
    );
    assert_eq!(r["quickfix"], json!([]), "nothing was refused\n{ctx}");
}

/// The chat holds `block` once, its lines in a row, and each of its diff lines only there.
fn assert_change_then_question(chat: &[String], block: &[&str], ctx: &str) {
    let at = chat
        .windows(block.len())
        .position(|w| w.iter().zip(block).all(|(a, b)| a == b))
        .unwrap_or_else(|| {
            panic!(
                "the chat lacks, in a row:\n{}\n--- the chat:\n{}\n{ctx}",
                block.join("\n"),
                chat.join("\n")
            )
        });
    for line in block.iter().filter(|l| l.contains(" │ ")) {
        let count = chat.iter().filter(|l| l == line).count();
        assert_eq!(
            count,
            1,
            "{line:?} is in the chat {count} times (at {at}):\n{}\n{ctx}",
            chat.join("\n")
        );
    }
}

/// The same fix, rejected (editors/neovim/tests/fix.lua with Reject): the buffer is untouched,
/// and the chat marks the edit rejected, its diff (once, where the proposal was) saying it was
/// not applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_fix_leaves_the_buffer_and_the_chat_marks_the_edit_not_applied() {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue_file(fixture("fix-edit.sse")).unwrap();
    mock.enqueue_file(fixture("fix-rejected.sse")).unwrap();
    let out = run_scenario_with("fix", &mock, MODEL, &[("TANDEM_ANSWER", "Reject")]).await;
    let r = &out.result;
    let ctx = &out.context;

    assert_eq!(
        r["lines"],
        json!(BUGGY.lines().collect::<Vec<_>>()),
        "the file buffer\n{ctx}"
    );
    assert_eq!(r["modified"], false, "{ctx}");
    let selects = r["selects"].as_array().cloned().unwrap_or_default();
    assert_eq!(selects.len(), 2, "{ctx}");
    assert_eq!(selects[1]["chose"], "Reject", "{ctx}");

    let chat = out.chat();
    assert_change_then_question(
        &chat,
        &[
            "- ✗ Edit main.py — rejected: the file is unchanged",
            "  main.py: +1 -1 (rejected, not applied)",
            "  ```diff",
            "   1 │ def average(values):",
            "  -2 │     return sum(values) / len(valus)",
            "  +2 │     return sum(values) / len(values)",
            "  ```",
            "",
            "**Tandem asks:** Tandem wants to edit",
            "main.py (+1/-1 lines)",
            "→ Reject",
        ],
        ctx,
    );
    assert!(
        chat.iter()
            .any(|l| l == "Understood: main.py is unchanged."),
        "{}\n{ctx}",
        chat.join("\n")
    );
    // The model was told.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{ctx}");
    let body = requests[1].body_text();
    assert!(body.contains("rejected"), "{body}");
}

/// `:TandemAbort` while the provider's stream hangs (editors/neovim/tests/abort.lua).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_abort_stops_a_stalled_stream_and_the_chat_settles() {
    abort_scenario(false).await;
}

/// `:TandemAbort!` cancels the run's work-done progress (window/workDoneProgress/cancel), which
/// the server treats as an abort.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_abort_bang_cancels_the_runs_progress() {
    abort_scenario(true).await;
}

async fn abort_scenario(bang: bool) {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue_file(fixture("stall.sse")).unwrap();
    let env: &[(&str, &str)] = if bang { &[("TANDEM_BANG", "!")] } else { &[] };
    let out = run_scenario_with("abort", &mock, MODEL, env).await;
    let r = &out.result;
    let ctx = &out.context;

    assert_eq!(r["running_before_abort"], true, "{ctx}");
    let chat = out.chat();
    let session = r["current"]
        .as_str()
        .unwrap_or_else(|| panic!("no current session\n{ctx}"));
    assert_eq!(chat[0], settled_line(session, Some("aborted")), "{ctx}");
    let answer = chat
        .iter()
        .position(|l| l == "Once upon a time there was")
        .unwrap_or_else(|| panic!("no partial answer in the chat:\n{}\n{ctx}", chat.join("\n")));
    assert_eq!(
        chat[answer + 1..],
        [String::new(), "_Aborted._".to_string()],
        "the chat ends with the abort\n{ctx}"
    );
    assert_eq!(mock.requests().len(), 1, "no retry after an abort\n{ctx}");
    // Which way the plugin aborted, from Neovim's LSP log (debug level: every message sent).
    let log = std::fs::read_to_string(r["log"].as_str().unwrap_or_default()).unwrap_or_default();
    let sent = |method: &str| log.contains(&format!("method = \"{method}\""));
    assert_eq!(sent("window/workDoneProgress/cancel"), bang, "{ctx}");
    assert_eq!(sent("tandem/abort"), !bang, "{ctx}");
}

/// Runs a scenario that needs no model (the mock stays empty).
async fn run_offline(scenario: &str) -> Outcome {
    let mock = MockLlm::start().await.expect("mock LLM");
    let out = run_scenario(scenario, &mock).await;
    assert!(mock.requests().is_empty(), "{}", out.context);
    out
}

/// The chat renderer fed a synthetic stream (editors/neovim/tests/render.lua): two prompts in a
/// row (each labelled), 20 000 text deltas appended into 20 long lines, quoted thinking, a failed
/// command updated in place (its title without backticks, how it ended) and its output shown
/// sanitized, a second session's events interleaved
/// (dividers that tell two UUIDv7s with one time prefix apart), a stale notification ignored, a
/// sequence gap repaired from message_end, an edit whose numbered diff is shown before the
/// question and then marked rejected in the same place (once), a 429 retried (a neutral line,
/// no error), a call that fails for good (its error once), and the state line throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_renders_a_synthetic_event_stream() {
    let out = run_offline("render").await;
    let r = &out.result;
    let ctx = &out.context;
    println!(
        "20 000 deltas rendered in {} s of CPU (information, not asserted)",
        r["deltas_cpu_seconds"]
    );
    let mut expected: Vec<String> = [
        "Tandem: settled (error) · session aaaaaaaa · queued: 1 steering, 0 follow-up",
        "",
        "## You",
        "",
        "Count",
        "",
        "## You",
        "",
        "Faster, please",
        "",
        "## Tandem",
        "",
        "> Let me think.",
        "> Second thought.",
        "",
    ]
    .map(String::from)
    .to_vec();
    for line in 0..20 {
        let words: Vec<String> = (1..=1000)
            .map(|w| format!("w{}", line * 1000 + w))
            .collect();
        expected.push(words.join(" "));
    }
    let edit_diff = |note: &str| {
        [
            format!("  main.py: +1 -1 ({note})"),
            "  ```diff".into(),
            "   1 │ def average(values):".into(),
            "  -2 │     return sum(values) / len(valus)".into(),
            "  +2 │     return sum(values) / len(values)".into(),
            "  ```".into(),
        ]
    };
    let before_the_edit: Vec<String> = [
        "",
        "- ✗ Run ls — Command exited with code 2",
        "",
        "── session bbbbbbbb ──",
        "",
        "## Tandem",
        "",
        "From B.",
        "",
        "── session aaaaaaaa: Count ──",
        "",
        // The failed command's output (its escapes and \r removed), once it ended: under the
        // divider, as the session's events came after B's.
        "  ```text",
        "  ls: cannot access nope",
        "",
        "",
        "  Command exited with code 2",
        "  ```",
        "",
        "## Tandem",
        "",
        "ly.",
        "",
        "_(some of the stream was missed; the whole message:)_",
        "Finally.",
        "",
    ]
    .map(String::from)
    .to_vec();
    let question = [
        String::new(),
        "**Tandem asks:** Tandem wants to edit".into(),
        "main.py (+1/-1 lines)".into(),
    ];

    // When the question is asked, the chat already shows what the edit changes, above it.
    let mut at_question = expected.clone();
    at_question[0] = "Tandem: running: Edit main.py · session aaaaaaaa".into();
    at_question.extend(before_the_edit.iter().cloned());
    at_question.push("- ▶ Edit main.py".into());
    at_question.extend(edit_diff("proposed"));
    at_question.extend(question.iter().cloned());
    assert_eq!(
        strings(&r["chat_at_question"]),
        at_question,
        "the chat when the question was asked\n{ctx}"
    );

    expected.extend(before_the_edit);
    expected.push("- ✗ Edit main.py — rejected: the file is unchanged".into());
    expected.extend(edit_diff("rejected, not applied"));
    expected.extend(question);
    expected.extend(
        [
            "→ Reject",
            "",
            "_Rate limited (429): retry 1 succeeded._",
            "",
            "## Tandem",
            "",
            "Recovered.",
            "",
            "**Error:** HTTP 400: bad request",
            "details",
        ]
        .map(String::from),
    );
    let chat = out.chat();
    if chat != expected {
        let first = chat
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(chat.len().min(expected.len()));
        panic!(
            "the chat differs at line {first}: {:?} != {:?} ({} vs {} lines)\n{ctx}",
            chat.get(first),
            expected.get(first),
            chat.len(),
            expected.len()
        );
    }
    assert_eq!(
        r["retry_while_waiting"], "_Rate limited (429), retrying in 2 s… (attempt 1 of 3)_",
        "a retried 429 is a note, not an error\n{ctx}"
    );
    assert_eq!(
        r["state_while_tool"], "Tandem: running: Run ls · session aaaaaaaa",
        "{ctx}"
    );
    assert_eq!(
        r["state_queued"], "Tandem: running · session aaaaaaaa · queued: 1 steering, 0 follow-up",
        "{ctx}"
    );
    assert_eq!(r["sessions"], json!({"A": false, "B": true}), "{ctx}");
}

/// The chat's pure modules without the editor (editors/neovim/tests/chat_render.lua): a session
/// taken through `chat/state.lua` by events, and the lines `chat/render.lua`, `chat/diff.lua`
/// and `chat/proposal.lua` make for it (state line, session labels that differ for UUIDv7s made
/// together, tool lines without backticks, the proposed change of an edit as a numbered diff
/// before the question, the question, diffs with the file's line numbers, a rejected edit,
/// retries as neutral lines, a failed call's error kept to be shown once, a repaired message, a
/// prompt's context), with vim.api, vim.fn, vim.bo and vim.wo raising on any use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_state_and_render_modules_make_lines_without_the_editor_api() {
    let out = run_offline("chat_render").await;
    let ctx = &out.context;
    let cases = &out.result["cases"];
    let expected = json!({
        "editor_api_blocked": true,
        "no_session": "Tandem: no session yet (:TandemAsk {question})",
        // The random end of each UUIDv7, not its time prefix (the same for both); another id whole.
        "short_labels": ["8e2f1c00", "33445566", "opaque-id"],
        "idle": "Tandem: idle · session 8e2f1c00",
        "title": "Fix the typo",
        "divider": ["", "── new session 8e2f1c00: Fix the typo ──"],
        "pending": "- … edit",
        "running": "- ▶ Edit main.py",
        "state_running": "Tandem: running: Edit main.py · mock/mock-model · session 8e2f1c00",
        "change_asked_about": true,
        "proposed": [
            "  main.py: +1 -1 (proposed)",
            "  ```diff",
            "   1 │ def average(values):",
            "  -2 │     return sum(values) / len(valus)",
            "  +2 │     return sum(values) / len(values)",
            "  ```",
        ],
        "proposal_not_found": true,
        "proposal_twice": true,
        "preview": ["-len(valus)", "+len(values)"],
        "proposal_forms": "def mean(values):\n    return sum(values) / len(values)\n",
        "proposal_new_file": "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n",
        "question": ["", "**Tandem asks:** Tandem wants to edit main.py (+1/-1 lines)"],
        "question_with_list": [
            "",
            "**Tandem asks:** Trust this folder?",
            "```",
            "- .pi/mcp.json: node server.mjs",
            "… 1 more line",
            "```",
        ],
        "answer": ["→ dismissed"],
    });
    // In two parts: one json! of them all is deeper than the macro's recursion limit.
    let after_the_question = json!({
        "change_after_tool_end": true,
        "done": "- ✓ Edit main.py",
        "applied_note": true,
        "diff_cut": [
            "  main.py: +1 -1",
            "  ```diff",
            "   1 │ def average(values):",
            "  -2 │     return sum(values) / len(valus)",
            "  … 1 more line",
            "  ```",
        ],
        "diff_summary": ["  main.py: +1 -1"],
        "rejected": ["  main.py: +1 -1 (rejected, not applied)"],
        "not_applied": "not applied",
        "failed": "- ✗ bash — Command exited with code 2",
        "plain_title": "- ✓ Search for valus in src",
        "numbered": [
            "   8 │ local a = 1",
            "-  9 │ -- old comment",
            "+  9 │ -- new comment",
            "  10 │ local b = 2",
            "@@ … @@",
            "  98 │ return M",
            "  99 │ -- end",
            "+100 │ -- really",
        ],
        "state_queued":
            "Tandem: running · mock/mock-model · session 8e2f1c00 · queued: 1 steering, 0 follow-up",
        "sequence": ["next", "next", "gap", "stale"],
        "repaired": true,
        "message_end": [
            ["", "_(some of the stream was missed; the whole message:)_"],
            ["Partial answer."],
        ],
        "retrying": "_Rate limited (429), retrying in 2 s… (attempt 1 of 3)_",
        "retried": "_Rate limited (429): retry 1 succeeded._",
        "failure_after_retry": true,
        "failure_pending": "HTTP 400: bad request",
        "unsaid_after_error": {"failure": false, "retry": false},
        "state_settled":
            "Tandem: settled (error) · mock/mock-model · session 8e2f1c00 · queued: 1 steering, 0 follow-up",
        "gave_up": "_Overloaded (529): gave up after 3 retries._",
        "unsaid_failure": "529 Overloaded",
        "prompt": [
            "",
            "_Context: main.py (Python) · Selection: 1:1 to 2:36 · with diagnostics_",
            "",
            "Explain these lines",
        ],
        "prompt_inline": [
            "",
            "_Context: main.py (Python) · Cursor: line 2, column 3_",
            "",
            "Explain this",
        ],
        "stream": ["one", "> two", "> three"],
    });
    let mut expected = expected.as_object().cloned().expect("an object");
    expected.extend(after_the_question.as_object().cloned().expect("an object"));
    for (case, want) in &expected {
        assert_eq!(&cases[case], want, "case {case}\n{ctx}");
    }
    assert_eq!(
        cases.as_object().map(|c| c.len()),
        Some(expected.len()),
        "cases reported but not checked: {cases}\n{ctx}"
    );
}

/// :TandemModel, :TandemThinking, :TandemSessions, :TandemNew and :TandemFollowUp
/// (editors/neovim/tests/sessions.lua), answered through a stubbed vim.ui.select.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_models_and_thinking_through_the_commands() {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue_file(fixture("first.sse")).unwrap();
    mock.enqueue_file(fixture("second.sse")).unwrap();
    let out = run_scenario("sessions", &mock).await;
    let r = &out.result;
    let ctx = &out.context;

    let first = r["first"]
        .as_str()
        .unwrap_or_else(|| panic!("no first session\n{ctx}"));
    let second = r["current"]
        .as_str()
        .unwrap_or_else(|| panic!("no current session\n{ctx}"));
    assert_ne!(first, second, "{ctx}");
    assert_eq!(
        r["current_after_open"], first,
        "reopening a live session keeps it\n{ctx}"
    );

    let selects = r["selects"].as_array().cloned().unwrap_or_default();
    assert_eq!(selects.len(), 2, "{ctx}");
    // :TandemModel: models with a key first.
    assert_eq!(selects[0]["kind"], "tandem.models", "{ctx}");
    assert_eq!(
        selects[0]["items"][0], "mock/mock-model  Mock model",
        "{ctx}"
    );
    assert_eq!(selects[0]["chose"], "mock/mock-model  Mock model", "{ctx}");
    // :TandemSessions: "new" first, then the stored session, titled by its prompt.
    assert_eq!(selects[1]["kind"], "tandem.sessions", "{ctx}");
    let items = strings(&selects[1]["items"]);
    assert_eq!(items.len(), 2, "{ctx}");
    assert_eq!(items[0], "+ New session", "{ctx}");
    assert!(
        items[1].ends_with("  First question  [3 messages] (current)"),
        "{:?}\n{ctx}",
        items[1]
    );

    let notes = strings(&r["notes"]);
    assert!(
        notes.iter().any(|n| n == "Tandem: model mock/mock-model"),
        "{notes:?}\n{ctx}"
    );
    // The level the server answered (the spec says `off` for a model without reasoning; the
    // server currently answers `high`, so only the round trip is checked here).
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("Tandem: thinking level ")),
        "{notes:?}\n{ctx}"
    );

    let chat = out.chat();
    assert_eq!(chat[0], settled_line(second, None), "{ctx}");
    for line in [
        "First answer.".to_string(),
        "_First question (3 messages)_".to_string(),
        format!("── new session {} ──", short(second)),
        "Second question".to_string(),
        "Second answer.".to_string(),
    ] {
        assert!(
            chat.contains(&line),
            "the chat lacks {line:?}:\n{}\n{ctx}",
            chat.join("\n")
        );
    }

    // The second prompt went to the new session: its request holds no earlier message.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{ctx}");
    let body = requests[1].json().expect("JSON body");
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .filter(|r| *r != "system" && *r != "developer")
        .collect();
    // The new session's first call: its editor context, then the prompt.
    assert_eq!(roles, ["user", "user"], "{ctx}");
    let users = user_texts(&body);
    assert_eq!(users[1], "Second question", "{ctx}");
    // The visual selection ("return sum", characterwise) was the context.
    assert!(
        users[0].contains("Selection: 2:5 to 2:15\n```python\nreturn sum\n```"),
        "{users:?}\n{ctx}"
    );
}

/// A model whose provider has no key: the prompt is refused, and the chat says which variable
/// or file to set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neovims_own_trust_database_decides_the_projects_trust() {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue_file(fixture("ask.sse")).unwrap();
    let fixture_mcp = manifest_dir()
        .join("../../fixtures/mcp/server.mjs")
        .canonicalize()
        .expect("fixtures/mcp/server.mjs");
    let fixture_mcp = fixture_mcp.display().to_string();
    let out = run_scenario_with(
        "trust",
        &mock,
        MODEL,
        &[("TANDEM_FIXTURE_MCP", fixture_mcp.as_str())],
    )
    .await;
    let r = &out.result;
    let ctx = &out.context;
    assert_eq!(r["none"], "absent", "{ctx}");
    assert_eq!(r["denied"], false, "{ctx}");
    assert_eq!(r["allowed"], true, "{ctx}");
    assert_eq!(r["ask"], true, "{ctx}");
    assert_eq!(r["init_trusted"], true, "{ctx}");
    // Trusted by the editor: no question, and the project's MCP server ran.
    assert_eq!(r["questions"], json!([]), "{ctx}");
    let marker = out.project.parent().unwrap().join("mcp-ran.txt");
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap_or_default(),
        "ran\n",
        "{ctx}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_is_reported_in_the_chat() {
    let mock = MockLlm::start().await.expect("mock LLM");
    let out = run_scenario_with("nokey", &mock, "openai/gpt-4o-mini", &[]).await;
    let ctx = &out.context;
    let chat = out.chat();
    let error = chat
        .iter()
        .find(|l| l.starts_with("**Error:** "))
        .unwrap_or_else(|| panic!("no error in the chat:\n{}\n{ctx}", chat.join("\n")));
    assert!(error.contains("OPENAI_API_KEY"), "{error}\n{ctx}");
    let notes = strings(&out.result["notes"]);
    assert!(
        notes.iter().any(|n| n.contains("OPENAI_API_KEY")),
        "{notes:?}\n{ctx}"
    );
    assert!(mock.requests().is_empty(), "{ctx}");
}

/// The fix code action as a user runs it, in a real TUI (editors/neovim/tests/hit_enter.lua runs
/// the user's Neovim in a terminal and answers Neovim's own vim.ui.select, inputlist(), by
/// typing): Neovim never stops at "Press ENTER or type command to continue", and when the Apply
/// question is asked the chat on the screen already shows the edit's diff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_action_run_in_a_real_tui_never_asks_to_press_enter() {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue_file(fixture("fix-edit.sse")).unwrap();
    mock.enqueue_file(fixture("fix-done.sse")).unwrap();
    let out = run_scenario("hit_enter", &mock).await;
    let r = &out.result;
    let ctx = &out.context;
    let screen = |value: &Value| strings(value).join("\n");
    let prompts: Vec<String> = r["hit_enter"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| format!("at {}:\n{}", p["step"], screen(&p["screen"])))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        prompts.is_empty(),
        "Neovim asked to press ENTER {} time(s):\n{}\n{ctx}",
        prompts.len(),
        prompts.join("\n\n")
    );
    let at_question = strings(&r["screen_at_question"]);
    let at_end = strings(&r["screen_at_end"]);
    println!("the screen at the question:\n{}", at_question.join("\n"));
    println!("the screen at the end:\n{}", at_end.join("\n"));
    // While Neovim's own picker asks, the chat on the screen shows the edit's diff, with the
    // file's line numbers, above the picker's question.
    let row = |screen: &[String], text: &str| screen.iter().position(|l| l.contains(text));
    let asked = row(&at_question, "Tandem wants to edit main.py (+1/-1 lines)");
    for line in [
        "main.py: +1 -1 (proposed)",
        "-2 │     return sum(values) / len(valus)",
        "+2 │     return sum(values) / len(values)",
    ] {
        let at = row(&at_question, line);
        assert!(
            at.is_some() && at < asked,
            "{line:?} is not above the question on the screen:\n{}\n{ctx}",
            at_question.join("\n")
        );
    }
    // At the end the server's diff is in the proposal's place, once.
    for line in ["+2 │     return sum(values) / len(values)", "→ Apply"] {
        let count = at_end.iter().filter(|l| l.contains(line)).count();
        assert_eq!(count, 1, "{line:?}:\n{}\n{ctx}", at_end.join("\n"));
    }
    assert_eq!(
        r["lines"],
        json!(["def average(values):", FIXED_LINE]),
        "the file buffer\n{ctx}"
    );
}

/// `:help tandem` with the plugin on the runtimepath as a plain install puts it, which runs no
/// :helptags (editors/neovim/tests/help.lua): the shipped doc/tags finds the plugin's help, and
/// it is what :helptags makes of doc/tandem.txt as it is now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_tandem_works_from_a_runtimepath_install_with_up_to_date_tags() {
    let out = run_offline("help").await;
    let r = &out.result;
    let ctx = &out.context;
    for subject in [
        "tandem",
        "tandem.txt",
        ":TandemAsk",
        "tandem-chat",
        "tandem-confirmations",
        "tandem.status()",
    ] {
        let help = &r["help"][subject];
        assert_eq!(help["ok"], true, ":help {subject}: {help}\n{ctx}");
        assert_eq!(help["file"], "tandem.txt", ":help {subject}: {help}\n{ctx}");
        let line = help["line"].as_str().unwrap_or_default();
        assert!(
            line.contains(&format!("*{subject}*")),
            ":help {subject} landed on {line:?}\n{ctx}"
        );
    }
    assert!(r["tags_made"].is_string(), ":helptags made no tags\n{ctx}");
    assert_eq!(
        r["tags_shipped"], r["tags_made"],
        "editors/neovim/doc/tags is not what :helptags makes of doc/tandem.txt: run \
         nvim --headless --clean -c 'helptags editors/neovim/doc' -c q\n{ctx}"
    );
}

/// The chat through whole runs (editors/neovim/tests/chat_polish.lua): a 429 that is retried
/// shows as a neutral line, rewritten to "retry 1 succeeded", never as an error; a call that
/// fails for good shows its error once; each prompt has its label; and two sessions made a
/// moment apart (UUIDv7s with the same time prefix) have different labels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_shows_retries_errors_labels_and_sessions_as_a_user_reads_them() {
    let mock = MockLlm::start().await.expect("mock LLM");
    mock.enqueue(MockResponse::json(
        429,
        json!({"error": {"message": "Rate limit reached for requests", "type": "rate_limit_error"}}),
    ));
    mock.enqueue_file(fixture("first.sse")).unwrap();
    mock.enqueue(MockResponse::json(
        400,
        json!({"error": {"message": "Unsupported parameter: 'frobnicate'", "type": "invalid_request_error"}}),
    ));
    mock.enqueue_file(fixture("second.sse")).unwrap();
    let out = run_scenario("chat_polish", &mock).await;
    let r = &out.result;
    let ctx = &out.context;
    let chat = out.chat();
    let shown = chat.join("\n");
    let first = r["first"]
        .as_str()
        .unwrap_or_else(|| panic!("no first session\n{ctx}"));
    let second = r["second"]
        .as_str()
        .unwrap_or_else(|| panic!("no second session\n{ctx}"));
    let position = |line: &str| {
        chat.iter()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("the chat lacks {line:?}:\n{shown}\n{ctx}"))
    };

    // The retry: a neutral note while it waits, then what came of it, above the answer.
    let retrying = strings(&r["retrying"]);
    assert_eq!(retrying.len(), 1, "{retrying:?}\n{ctx}");
    assert!(
        retrying[0].starts_with("_Rate limited (429), retrying in ")
            && retrying[0].ends_with(" (attempt 1 of 3)_"),
        "{retrying:?}\n{ctx}"
    );
    let retried = position("_Rate limited (429): retry 1 succeeded._");
    assert!(retried < position("First answer."), "{shown}\n{ctx}");

    // The failure: one error, and its text nowhere else.
    let errors: Vec<&String> = chat
        .iter()
        .filter(|l| l.starts_with("**Error:**"))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}\n{shown}\n{ctx}");
    assert!(errors[0].contains("frobnicate"), "{errors:?}\n{ctx}");
    assert_eq!(
        chat.iter().filter(|l| l.contains("frobnicate")).count(),
        1,
        "the error is shown more than once:\n{shown}\n{ctx}"
    );
    assert!(position("Break") < errors_at(&chat), "{shown}\n{ctx}");

    // Each prompt has its label.
    assert_eq!(
        chat.iter().filter(|l| *l == "## You").count(),
        3,
        "{shown}\n{ctx}"
    );
    for prompt in ["First question", "Break", "Second question"] {
        // "## You", its editor context (the cursor), the prompt.
        let at = position(prompt);
        assert_eq!(chat[at - 4], "## You", "{prompt}:\n{shown}\n{ctx}");
        assert!(chat[at - 2].starts_with("_Context: "), "{shown}\n{ctx}");
    }
    // No label without words under it: the failed calls wrote nothing, so their retry and
    // their error follow the prompt.
    assert_eq!(
        chat.iter().filter(|l| *l == "## Tandem").count(),
        2,
        "{shown}\n{ctx}"
    );
    assert_eq!(chat[position("Break") + 2], *errors[0], "{shown}\n{ctx}");
    assert_eq!(
        chat[position("First question") + 2],
        "_Rate limited (429): retry 1 succeeded._",
        "{shown}\n{ctx}"
    );

    // Two sessions, two labels, whatever their ids' time prefixes.
    assert_ne!(first, second, "{ctx}");
    println!(
        "session ids {first} and {second} (the first 8 digits {} the same)",
        if first[..8] == second[..8] {
            "are"
        } else {
            "are not"
        }
    );
    assert_ne!(short(first), short(second), "{ctx}");
    position(&format!("── new session {} ──", short(second)));
    assert_eq!(chat[0], settled_line(second, None), "{ctx}");
    assert!(
        position("Second answer.") > position("Break"),
        "{shown}\n{ctx}"
    );
    assert_eq!(mock.requests().len(), 4, "{ctx}");
}

/// Where the chat's first error is.
fn errors_at(chat: &[String]) -> usize {
    chat.iter()
        .position(|l| l.starts_with("**Error:**"))
        .unwrap_or(usize::MAX)
}
