//! Honest failures in every front door: no usable model is an error saying what to set (never
//! the scripted demo model), a broken configuration file is reported once and never hidden
//! behind "no key", and only transient HTTP failures are retried.

use serde_json::{json, Value};
use tandem_tests::lsp_client::LspClient;
use tandem_tests::mock_llm::MockResponse;
use tandem_tests::wire::{Turn, WireApi};

use crate::common::user_stderr;
use crate::support::front_doors::*;
use crate::support::lsp::answers;
use crate::support::Sandbox;

/// A sandbox whose agent directory configures no provider at all.
fn no_models() -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::remove_file(sandbox.agent_dir.join("models.json")).unwrap();
    sandbox
}

fn no_models_text(sandbox: &Sandbox) -> String {
    format!(
        "No models available: no provider has a usable API key. Set a provider's key in the \
         environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY), store one in \
         {} (pi's /login writes it), or add a provider with its \"apiKey\" to {}; then \
         `tandem --list-models` shows what can be used.",
        sandbox.agent_dir.join("auth.json").display(),
        sandbox.agent_dir.join("models.json").display()
    )
}

/// `window/showMessage` notifications: (type, message).
fn shown(lsp: &LspClient) -> Vec<(i64, String)> {
    lsp.received("window/showMessage")
        .iter()
        .map(|m| {
            (
                m.params["type"].as_i64().unwrap_or_default(),
                m.params["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn no_usable_model_is_an_error_naming_what_to_set_in_every_front_door() -> anyhow::Result<()> {
    let sandbox = no_models();
    let expected = no_models_text(&sandbox);
    for args in [&["-p", "hi"][..], &["--mode", "json", "-p", "hi"]] {
        let run = cli(&sandbox, args);
        assert_eq!(run.code, Some(1), "{args:?}");
        assert_eq!(run.stdout, "", "{args:?}");
        assert_eq!(
            user_stderr(&run.stderr),
            format!("Error: {expected}\n"),
            "{args:?}"
        );
    }
    assert!(sandbox.requests().is_empty());

    let demo = cli(&sandbox, &["demo", "--real"]);
    assert_eq!(demo.code, Some(1), "{}", demo.stdout);
    assert!(demo.stderr.contains(&expected), "{}", demo.stderr);

    // A plugin with the event stream gets the request's error and shows it itself …
    let mut lsp = lsp(&sandbox, json!({}), answers(lsp_deny))?;
    let r = lsp.request_response("tandem/prompt", json!({"text": "hi"}))?;
    assert_eq!(r["error"]["code"], -32003, "{r}");
    assert_eq!(r["error"]["message"], expected.as_str());
    lsp.shutdown()?;
    assert!(shown(&lsp).is_empty(), "{:?}", shown(&lsp));
    // … an editor without it (a code action in Helix) is shown the error.
    let mut lsp = lsp_with(&sandbox, json!({}), answers(lsp_deny), false)?;
    let r = lsp.request_response("tandem/prompt", json!({"text": "hi"}))?;
    assert_eq!(r["error"]["code"], -32003, "{r}");
    lsp.wait_until("the error shown", |c| !shown(c).is_empty())?;
    assert_eq!(shown(&lsp), [(1, format!("Tandem: {expected}"))]);
    lsp.shutdown()?;

    let mut acp = Acp::start(&sandbox, Box::new(acp_reject));
    let r = acp.call("session/new", json!({"cwd": sandbox.cwd, "mcpServers": []}));
    assert_eq!(r["error"]["code"], -32000, "auth_required: {r}");
    assert_eq!(r["error"]["data"], expected.as_str());
    acp.close();
    Ok(())
}

fn broken_settings(sandbox: &Sandbox) -> String {
    sandbox.write_agent_file(
        "settings.json",
        "{\n  \"retry\": {\"baseDelayMs\": 1}\n  \"defaultProvider\": \"script\"\n}\n",
    );
    format!(
        "{}: invalid JSON at line 3, column 3: expected `,` or `}}`. The file's settings are \
         ignored until it is fixed.",
        sandbox.agent_dir.join("settings.json").display()
    )
}

#[test]
fn lsp_a_broken_settings_file_is_shown_once_and_kept_in_the_state() -> anyhow::Result<()> {
    let sandbox = sandbox(&json!({"turns": [{"text": "ok"}], "loop": true}));
    let problem = broken_settings(&sandbox);
    let mut lsp = lsp(&sandbox, json!({"model": "script/t"}), answers(lsp_deny))?;
    let first = lsp_run(&mut lsp, "script", "t", "one")?;
    let second = lsp_run(&mut lsp, "script", "t", "two")?;
    lsp.wait_until("the warning", |c| !shown(c).is_empty())?;
    assert_eq!(shown(&lsp), [(2, format!("Tandem: {problem}"))]);
    for session in [first, second] {
        let state = lsp.request("tandem/state", json!({"session": session}))?;
        assert_eq!(state["configProblems"], json!([problem]), "{state}");
    }
    lsp.shutdown()?;
    Ok(())
}

#[test]
fn acp_a_broken_auth_json_is_said_on_the_first_prompt() {
    let sandbox = sandbox(&json!({"turns": [{"text": "ok"}], "loop": true}));
    sandbox.write_settings(json!({"defaultProvider": "script", "defaultModel": "t"}));
    sandbox.write_agent_file(
        "auth.json",
        "{\"authp\": {\"type\": \"api_key\" \"key\": 1}}",
    );
    let path = sandbox.agent_dir.join("auth.json");
    let mut acp = Acp::start(&sandbox, Box::new(acp_reject));
    let session = acp.new_session(&sandbox.cwd);
    acp.prompt(&session, "one");
    acp.prompt(&session, "two");
    let chunks: Vec<String> = acp
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| {
            u["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let notes: Vec<&String> = chunks
        .iter()
        .filter(|c| c.starts_with("Tandem: configuration problem:"))
        .collect();
    assert_eq!(notes.len(), 1, "{chunks:?}");
    assert!(
        notes[0].starts_with(&format!(
            "Tandem: configuration problem: {}: is not valid JSON",
            path.display()
        )),
        "{}",
        notes[0]
    );
    assert_eq!(chunks.first(), Some(notes[0]), "said before the answer");
    acp.close();
}

#[test]
fn a_broken_models_json_is_named_where_the_model_is_missing() -> anyhow::Result<()> {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_agent_file(
        "models.json",
        "{\"providers\": {\"mock\": {\"baseUrl\": \"http://x\" \"api\": 1}}}",
    );
    let problem = format!(
        "Configuration problem: {}: is not valid JSON",
        sandbox.agent_dir.join("models.json").display()
    );
    let mut lsp = lsp(&sandbox, json!({}), answers(lsp_deny))?;
    let r = lsp.request_response("tandem/prompt", json!({"text": "hi"}))?;
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("No models available") && message.contains(&problem),
        "{r}"
    );
    lsp.shutdown()?;
    let mut acp = Acp::start(&sandbox, Box::new(acp_reject));
    let r = acp.call("session/new", json!({"cwd": sandbox.cwd, "mcpServers": []}));
    let data = r["error"]["data"].as_str().unwrap_or_default();
    assert!(data.contains(&problem), "{r}");
    acp.close();
    Ok(())
}

/// A JSON error body with `status`.
fn status(code: u16, message: &str, kind: &str) -> MockResponse {
    MockResponse::json(code, json!({"error": {"message": message, "type": kind}}))
}

struct Case {
    name: &'static str,
    responses: Vec<MockResponse>,
    /// Requests the provider gets (1: not retried).
    requests: usize,
    /// The error the user sees; `None` when the retry answered.
    error: Option<&'static str>,
}

fn cases() -> Vec<Case> {
    let ok = || tandem_tests::wire::response(WireApi::OpenAiCompletions, &Turn::text("recovered"));
    vec![
        Case {
            name: "400",
            // The body's words say "server error"; the status says it is the request's fault.
            responses: vec![status(400, "invalid model parameter", "server_error")],
            requests: 1,
            error: Some(
                "lit returned HTTP 400 Bad Request: {\"error\":{\"message\":\"invalid model \
                 parameter\",\"type\":\"server_error\"}}",
            ),
        },
        Case {
            name: "401",
            responses: vec![status(
                401,
                "Incorrect API key provided",
                "invalid_request_error",
            )],
            requests: 1,
            error: Some(
                "lit returned HTTP 401 Unauthorized: {\"error\":{\"message\":\"Incorrect API key \
                 provided\",\"type\":\"invalid_request_error\"}}",
            ),
        },
        Case {
            name: "429",
            responses: vec![
                status(429, "slow down", "rate_limit").with_header("retry-after", "0"),
                ok(),
            ],
            requests: 2,
            error: None,
        },
        Case {
            name: "503",
            responses: vec![status(503, "overloaded", "server_error"), ok()],
            requests: 2,
            error: None,
        },
        Case {
            name: "503 twice",
            responses: vec![
                status(503, "overloaded", "server_error"),
                status(503, "overloaded", "server_error"),
            ],
            requests: 2,
            error: Some(
                "lit returned HTTP 503 Service Unavailable: {\"error\":{\"message\":\
                 \"overloaded\",\"type\":\"server_error\"}}",
            ),
        },
    ]
}

fn enqueue(sandbox: &Sandbox, case: &Case) {
    for r in &case.responses {
        sandbox.enqueue(r.clone());
    }
}

#[test]
fn print_and_json_modes_retry_only_transient_statuses() {
    for case in cases() {
        let sandbox = sandbox(&json!({"turns": []}));
        enqueue(&sandbox, &case);
        let run = cli(&sandbox, &["--model", "lit/m", "-p", "hi"]);
        assert_eq!(sandbox.requests().len(), case.requests, "{}", case.name);
        match case.error {
            Some(error) => {
                assert_eq!(run.code, Some(1), "{}", case.name);
                assert_eq!(run.stdout, "", "{}", case.name);
                assert_eq!(
                    user_stderr(&run.stderr),
                    format!("{error}\n"),
                    "{}",
                    case.name
                );
            }
            None => {
                assert_eq!(run.code, Some(0), "{}: {}", case.name, run.stderr);
                assert_eq!(run.stdout, "recovered\n", "{}", case.name);
            }
        }
        let sandbox = sandbox_again(&case);
        let run = cli(
            &sandbox,
            &["--mode", "json", "--model", "lit/m", "-p", "hi"],
        );
        assert_eq!(sandbox.requests().len(), case.requests, "{}", case.name);
        assert_eq!(
            run.code,
            Some(if case.error.is_some() { 1 } else { 0 }),
            "{}",
            case.name
        );
        let events: Vec<Value> = run
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let retries = events
            .iter()
            .filter(|e| e["type"] == "auto_retry_start")
            .count();
        assert_eq!(retries, case.requests - 1, "{}", case.name);
        if let Some(error) = case.error {
            let last = events
                .iter()
                .rev()
                .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
                .unwrap();
            assert_eq!(last["message"]["errorMessage"], error, "{}", case.name);
        }
    }
}

fn sandbox_again(case: &Case) -> Sandbox {
    let sandbox = sandbox(&json!({"turns": []}));
    enqueue(&sandbox, case);
    sandbox
}

#[test]
fn the_language_server_and_acp_retry_only_transient_statuses() -> anyhow::Result<()> {
    for case in cases() {
        let sandbox = sandbox_again(&case);
        let mut lsp = lsp(&sandbox, json!({"model": "lit/m"}), answers(lsp_deny))?;
        let session = lsp_run(&mut lsp, "lit", "m", "hi")?;
        let events = lsp.events(&session);
        lsp.shutdown()?;
        assert_eq!(sandbox.requests().len(), case.requests, "lsp {}", case.name);
        let error = events
            .iter()
            .map(|e| &e["event"])
            .find(|e| e["type"] == "error")
            .map(|e| e["message"].as_str().unwrap_or_default().to_string());
        assert_eq!(error.as_deref(), case.error, "lsp {}", case.name);

        let sandbox = sandbox_again(&case);
        sandbox.write_settings(json!({"retry": {"baseDelayMs": 1, "maxRetries": 1},
            "defaultProvider": "lit", "defaultModel": "m"}));
        let mut acp = Acp::start(&sandbox, Box::new(acp_reject));
        let session = acp.new_session(&sandbox.cwd);
        let answer = acp.prompt(&session, "hi");
        acp.close();
        assert_eq!(sandbox.requests().len(), case.requests, "acp {}", case.name);
        match case.error {
            Some(error) => {
                assert_eq!(answer["error"]["code"], -32603, "{answer}");
                assert_eq!(answer["error"]["data"], error, "acp {}", case.name);
            }
            None => assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}"),
        }
    }
    Ok(())
}

#[test]
fn a_key_that_is_a_word_does_not_mask_the_providers_name() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let base = WireApi::OpenAiCompletions.base_url(&sandbox.mock.base_url());
    sandbox.write_models(json!({"providers": {"ollama": {"baseUrl": base,
        "api": "openai-completions", "apiKey": "ollama", "models": [{"id": "qwen"}]}}}));
    sandbox.enqueue(status(
        404,
        "model qwen not found, try pulling it with ollama pull",
        "not_found",
    ));
    let run = cli(&sandbox, &["--model", "ollama/qwen", "-p", "hi"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        user_stderr(&run.stderr),
        "ollama returned HTTP 404 Not Found: {\"error\":{\"message\":\"model qwen not found, try \
         pulling it with ollama pull\",\"type\":\"not_found\"}}\n"
    );
}

#[test]
fn a_failing_key_command_makes_its_provider_unavailable_and_says_why() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let base = WireApi::OpenAiCompletions.base_url(&sandbox.mock.base_url());
    let count = sandbox.home.join("command-runs");
    let command = format!(
        "!echo run >> '{}'; echo 'vault is locked' >&2; exit 3",
        count.display()
    );
    sandbox.write_models(json!({"providers": {"vault": {"baseUrl": base,
        "api": "openai-completions", "apiKey": command, "models": [{"id": "m"}]}}}));
    let list = cli(&sandbox, &["--list-models"]);
    assert_eq!(list.code, Some(0));
    assert_eq!(list.stdout, "", "the model is not listed as available");
    assert!(
        list.stderr
            .contains("Unusable key: Could not get the API key for provider vault")
            && list.stderr.contains("exit code 3; stderr: vault is locked"),
        "{}",
        list.stderr
    );
    let run = cli(&sandbox, &["--model", "vault/m", "-p", "hi"]);
    assert_eq!(run.code, Some(1));
    let said = user_stderr(&run.stderr);
    assert!(
        said.starts_with(&format!(
            "Error: Could not get the API key for provider vault from \"apiKey\" in {}: the \
             command `",
            sandbox.agent_dir.join("models.json").display()
        )) && said.contains("vault is locked"),
        "{said}"
    );
    assert!(sandbox.requests().is_empty());
    // Once per process: each run tried it once, however often the key was needed.
    let runs = std::fs::read_to_string(&count).unwrap();
    assert_eq!(runs.lines().count(), 2, "{runs}");
}
