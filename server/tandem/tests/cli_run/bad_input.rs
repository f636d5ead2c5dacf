//! Bad input stops the run before the model is called, with exit code 1 and a message that
//! names the problem (and the file and line, for configuration files); a broken settings.json
//! only costs its settings, as in pi.

use tandem_tests::wire::{Turn, WireApi};

use crate::support::{Run, Sandbox};

/// Asserts a run failed before calling the model: exit 1, nothing on stdout, no request, no
/// session file; returns stderr.
fn fails_early(sandbox: &Sandbox, run: Run) -> String {
    run.expect_code(1);
    assert_eq!(run.stdout, "");
    assert!(sandbox.requests().is_empty(), "the model was called");
    assert!(
        sandbox.session_files().is_empty(),
        "a session file was written"
    );
    run.stderr
}

#[test]
fn an_unknown_model_is_an_error_suggesting_close_matches() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let stderr = fails_early(
        &sandbox,
        sandbox.run_raw(&["--model", "mock-modle", "-p", "hi"], None),
    );
    assert_eq!(
        stderr,
        "Error: Model \"mock-modle\" not found. Did you mean mock/mock-model? \
         Use --list-models to see available models.\n"
    );
}

#[test]
fn an_unknown_provider_is_an_error_naming_the_known_ones() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let args = ["--provider", "mokc", "--model", "mock-model", "-p", "hi"];
    let stderr = fails_early(&sandbox, sandbox.run_raw(&args, None));
    assert!(
        stderr.starts_with("Error: Unknown provider \"mokc\". Did you mean \"mock\"?"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Known providers: ") && stderr.contains(", mock"),
        "{stderr}"
    );
}

#[test]
fn a_missing_key_names_the_environment_variable_and_models_json() {
    let sandbox = Sandbox::new(WireApi::AnthropicMessages);
    let args = ["--model", "anthropic/claude-sonnet-4-5", "-p", "hi"];
    let stderr = fails_early(&sandbox, sandbox.run_raw(&args, None));
    assert!(
        stderr.starts_with("Error: No API key for provider: anthropic."),
        "{stderr}"
    );
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
    let models_json = sandbox.agent_dir.join("models.json");
    assert!(
        stderr.contains(&models_json.display().to_string()),
        "{stderr}"
    );
}

#[test]
fn an_invalid_models_json_is_reported_with_its_path_and_line() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    // A missing comma (comments and trailing commas are fine: see the next test).
    let broken =
        "{\n  \"providers\": {\n    \"mock\": {\n      \"baseUrl\": \"http://x\"\n      \"api\": \"x\"\n    }\n  }\n}\n";
    sandbox.write_agent_file("models.json", broken);
    let stderr = fails_early(&sandbox, sandbox.run(&["-p", "hi"]));
    let path = sandbox.agent_dir.join("models.json");
    // Built-in models still load; the mock provider's model is what is gone, and the error
    // says why.
    let mut lines = stderr.lines();
    assert_eq!(
        lines.next(),
        Some("Error: Model \"mock/mock-model\" not found. Use --list-models to see available models."),
        "{stderr}"
    );
    let problem = lines.next().unwrap_or_default();
    assert!(
        problem.starts_with(&format!("Configuration problem: {}: ", path.display())),
        "{stderr}"
    );
    assert!(problem.contains("line 5"), "{stderr}");
}

#[test]
fn comments_and_trailing_commas_in_models_and_settings_json_are_accepted() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let base = WireApi::OpenAiCompletions.base_url(&sandbox.mock.base_url());
    let models = format!(
        "{{\n  // pi accepts comments here\n  \"providers\": {{\"mock\": {{\n    \
         \"baseUrl\": \"{base}\", \"api\": \"openai-completions\",\n    \
         \"apiKey\": \"test-key\", \"models\": [{{\"id\": \"mock-model\",}},],\n  }},}},\n}}\n"
    );
    sandbox.write_agent_file("models.json", &models);
    sandbox.write_agent_file(
        "settings.json",
        "{\n  /* no retries */\n  \"retry\": {\"maxRetries\": 0,},\n}\n",
    );
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-p", "hi"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "ok\n");
    assert_eq!(run.stderr, "");
}

#[test]
fn an_invalid_settings_json_is_reported_and_ignored() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_agent_file(
        "settings.json",
        "{\n  \"retry\": {\n    \"maxRetries\": 0\n  }\n  \"theme\": \"x\"\n}\n",
    );
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-p", "hi"]);
    // As in pi, a broken settings file costs its settings, not the run.
    run.expect_code(0);
    assert_eq!(run.stdout, "ok\n");
    let path = sandbox.agent_dir.join("settings.json");
    assert_eq!(
        run.stderr,
        format!(
            "Warning: {}: invalid JSON at line 5, column 3: expected `,` or `}}`. \
             The file's settings are ignored until it is fixed.\n",
            path.display()
        )
    );
}

#[test]
fn a_session_path_that_does_not_exist_is_an_error() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let stderr = fails_early(
        &sandbox,
        sandbox.run(&["--session", "nope.jsonl", "-p", "hi"]),
    );
    assert!(
        stderr.starts_with("Error: Session not found: nope.jsonl"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&sandbox.session_dir().display().to_string()),
        "{stderr}"
    );
}

#[test]
fn fork_together_with_session_is_a_usage_error() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let args = ["--session", "a.jsonl", "--fork", "b.jsonl", "-p", "hi"];
    let stderr = fails_early(&sandbox, sandbox.run(&args));
    assert!(
        stderr.starts_with("error: --fork cannot be combined with --session\n"),
        "{stderr}"
    );
}

#[test]
fn an_invalid_thinking_level_lists_the_valid_ones() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let stderr = fails_early(
        &sandbox,
        sandbox.run(&["--thinking", "extreme", "-p", "hi"]),
    );
    assert!(
        stderr.contains(
            "Invalid thinking level \"extreme\". Valid values: off, minimal, low, medium, high, \
             xhigh, max"
        ),
        "{stderr}"
    );
}
