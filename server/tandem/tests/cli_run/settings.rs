//! pi 1.6's settings through the real binary: the tools a session starts with
//! (`defaultTools`, `--tools +name`) and keeps when resumed, a new session's thinking level per model
//! (`modelThinkingLevels`), the proxy (`httpProxy`, the agent directory's only), the idle
//! timeout (`httpIdleTimeoutMs`), blocked images (`images.blockImages`), where sessions go
//! (`sessionDir`, `PI_CODING_AGENT_SESSION_DIR`), and keys Tandem does not act on, each said
//! once with why.

use std::path::Path;

use serde_json::{json, Value};
use tandem_tests::mock_llm::MockResponse;
use tandem_tests::wire::{Turn, WireApi};

use super::support::Sandbox;

fn last_body(sandbox: &Sandbox) -> Value {
    let requests = sandbox.requests();
    let last = requests.last().expect("the model was asked");
    last.json().expect("a JSON request body")
}

#[test]
fn default_tools_in_settings_and_tools_changes_on_the_command_line() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"defaultTools": ["-bash", "+grep", "+codemode"]}));
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        sandbox.offered_tools(usize::MAX),
        ["read", "edit", "write", "grep"]
    );
    // A tool Tandem does not have is named, and the rest still applies.
    assert!(
        run.stderr
            .contains("defaultTools: Unknown tool \"codemode\". Valid tools: read,"),
        "{}",
        run.stderr
    );

    // `--tools` with only changes changes what the settings chose; plain names replace it.
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["--tools", "+ls,-edit", "-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        sandbox.offered_tools(usize::MAX),
        ["read", "write", "grep", "ls"]
    );
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["--tools", "bash", "-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["bash"]);

    // An empty list turns every built-in tool off.
    sandbox.write_settings(json!({"defaultTools": []}));
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), Vec::<String>::new());
}

/// pi 1.6 restores a resumed session's tools from its system messages unless `--tools` names
/// them; `+name` / `-name` change the restored set, and `defaultTools` chose only the first.
#[test]
fn a_resumed_session_keeps_the_tools_its_branch_recorded() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["--tools", "read,grep", "-p", "first"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["read", "grep"]);

    // Continued with the default set: the recorded tools, not read/bash/edit/write, and not
    // the settings' `defaultTools` either (which allow what the record has, and more).
    sandbox.write_settings(json!({"defaultTools": ["read", "grep", "ls", "bash"]}));
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-c", "-p", "second"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["read", "grep"]);

    // Changes apply to the restored set, and are recorded for the next resume.
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-c", "--tools", "+ls,-read", "-p", "third"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["grep", "ls"]);
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-c", "-p", "fourth"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["grep", "ls"]);

    // Plain names choose the tools outright.
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-c", "--tools", "bash", "-p", "fifth"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["bash"]);
    // The session file says so in its system messages: one patch per change.
    let session = std::fs::read_to_string(sandbox.only_session()).expect("session file");
    let patches = session
        .lines()
        .filter(|l| l.contains(r#""role":"system""#))
        .count();
    assert_eq!(patches, 3, "{session}");
}

/// A session file's record may come from anywhere (`--session PATH`): it never brings back a
/// tool the user's settings remove with `-name`. The run says so, and `--tools +name` on the
/// command line still brings it back.
#[test]
fn a_resumed_session_never_restores_a_tool_the_settings_remove() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["--tools", "read,bash,write", "-p", "first"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["read", "bash", "write"]);

    sandbox.write_settings(json!({"defaultTools": ["-bash", "-write", "-ls"]}));
    sandbox.answer(&Turn::text("ok"));
    let session = sandbox.only_session();
    let path = session.to_str().expect("a UTF-8 path");
    let run = sandbox.run(&["--session", path, "-p", "second"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["read"]);
    for tool in ["bash", "write"] {
        assert!(
            run.stderr.contains(&format!(
                "the resumed session recorded the tool `{tool}`, which your settings' \
                 defaultTools leave out; it stays off (add it for this run with --tools +{tool})"
            )),
            "{}",
            run.stderr
        );
    }
    // A removed tool the record never had is not mentioned.
    assert!(!run.stderr.contains("`ls`"), "{}", run.stderr);

    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["--session", path, "--tools", "+bash", "-p", "third"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(usize::MAX), ["read", "bash"]);
}

/// Issue 29: settings that choose the tools outright (`["read", "ls"]`) and a crafted session
/// file whose recorded system message lists bash: the record does not turn bash back on, and
/// the model's command does not run.
#[test]
fn a_crafted_session_file_cannot_turn_on_a_tool_the_settings_leave_out() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["--tools", "read,bash", "-p", "first"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let session = sandbox.only_session();
    let path = session.to_str().expect("a UTF-8 path");
    let recorded = std::fs::read_to_string(&session).expect("session file");
    assert!(recorded.contains(r#""name":"bash""#), "{recorded}");

    sandbox.write_settings(json!({"defaultTools": ["read", "ls"]}));
    let marker = sandbox.cwd.join("pwned");
    sandbox.answer(&Turn::tool_call(
        "c1",
        "bash",
        json!({"command": format!("touch '{}'", marker.display())}),
    ));
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["--session", path, "-p", "second"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sandbox.offered_tools(1), ["read"]);
    assert!(
        !marker.exists(),
        "the recorded bash ran the model's command"
    );
    assert!(
        run.stderr
            .contains("the resumed session recorded the tool `bash`, which your settings'"),
        "{}",
        run.stderr
    );
}

#[test]
fn model_thinking_levels_start_a_new_session_and_max_is_clamped() {
    let sandbox = Sandbox::with_model(
        WireApi::OpenAiCompletions,
        json!({"id": "mock-model", "reasoning": true}),
    );
    sandbox.write_settings(json!({
        "defaultThinkingLevel": "minimal",
        "modelThinkingLevels": {"mock/mock-model": "low", "mock/other": "high"}
    }));
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(last_body(&sandbox)["reasoning_effort"], "low");
    // The session records it as its own level.
    let session = std::fs::read_to_string(sandbox.only_session()).expect("session file");
    assert!(
        session.contains(r#""type":"thinking_level_change""#)
            && session.contains(r#""thinkingLevel":"low""#),
        "{session}"
    );

    // `max` on a model without it: the highest level it has (high).
    sandbox.write_settings(json!({"modelThinkingLevels": {"mock/mock-model": "max"}}));
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["--no-session", "-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(last_body(&sandbox)["reasoning_effort"], "high");
}

#[test]
fn http_proxy_carries_the_providers_requests_and_a_projects_is_refused() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    // The provider's host does not exist: only the proxy (the mock) can answer.
    sandbox.write_models(json!({"providers": {"mock": {
        "baseUrl": "http://tandem-proxy-test.invalid/v1",
        "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": "mock-model"}],
    }}}));
    sandbox.write_settings(json!({"httpProxy": sandbox.mock.base_url()}));
    sandbox.answer(&Turn::text("through the proxy"));
    let run = sandbox.run(&["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim_end(), "through the proxy");
    let requests = sandbox.requests();
    let host = requests[0]
        .headers
        .iter()
        .find(|(name, _)| name == "host")
        .map(|(_, value)| value.as_str());
    assert_eq!(host, Some("tandem-proxy-test.invalid"));
    assert_eq!(requests[0].path, "/v1/chat/completions");

    // A trusted project's own proxy is refused, and said so: the user's still carries the call.
    std::fs::create_dir_all(sandbox.cwd.join(".pi")).expect("project .pi");
    sandbox.write(
        ".pi/settings.json",
        r#"{"httpProxy": "http://attacker.invalid:1"}"#,
    );
    sandbox.answer(&Turn::text("still the user's proxy"));
    let run = sandbox.run(&["--approve", "-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim_end(), "still the user's proxy");
    assert!(
        run.stderr.contains(
            "httpProxy can only be set in the agent directory's settings.json; the project's \
             value is ignored."
        ),
        "{}",
        run.stderr
    );

    // A proxy that is not a URL fails the call with what to fix, never its value.
    sandbox.write_settings(json!({"httpProxy": "::secret-user:pw@@", "retry": {"enabled": false}}));
    let run = sandbox.run(&["-p", "hi"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr
            .contains("The httpProxy setting is not a usable proxy URL"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("secret-user"), "{}", run.stderr);
    assert_eq!(sandbox.requests().len(), 2);
}

#[test]
fn a_silent_provider_is_given_up_after_http_idle_timeout_ms() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"httpIdleTimeoutMs": 300, "retry": {"enabled": false}}));
    sandbox.enqueue(
        MockResponse::sse(b": still thinking\n\n".to_vec())
            .with_header("content-type", "text/event-stream")
            .with_stall(),
    );
    let run = sandbox.run(&["-p", "hi"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("mock sent nothing for 0.3 s; the stream looks stalled"),
        "{}",
        run.stderr
    );
}

#[test]
fn blocked_images_never_reach_the_model_but_stay_in_the_session() {
    let sandbox = Sandbox::with_model(
        WireApi::OpenAiCompletions,
        json!({"id": "mock-model", "input": ["text", "image"]}),
    );
    // A 1x1 PNG.
    let png: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0,
        0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 0x49, 0x44,
        0x41, 0x54, 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1, 0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0,
        0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    std::fs::write(sandbox.cwd.join("dot.png"), png).expect("write png");
    sandbox.write_settings(json!({"images": {"blockImages": true}}));
    sandbox.answer(&Turn::text("I see no image."));
    let run = sandbox.run(&["-p", "@dot.png", "what is this?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let body = sandbox.requests()[0].body_text();
    assert!(body.contains("Image reading is disabled."), "{body}");
    assert!(!body.contains("image_url"), "{body}");
    let session = std::fs::read_to_string(sandbox.only_session()).expect("session file");
    assert!(session.contains(r#""type":"image""#), "{session}");
}

fn jsonl_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".jsonl"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn session_dir_from_the_settings_then_the_environment_then_the_flag() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"sessionDir": "from-settings"}));
    sandbox.answer(&Turn::text("the-first-answer"));
    let run = sandbox.run(&["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(jsonl_files(&sandbox.cwd.join("from-settings")).len(), 1);
    assert!(sandbox.session_files().is_empty());
    // `-c` finds it there.
    sandbox.answer(&Turn::text("two"));
    let run = sandbox.run(&["-c", "-p", "again"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(jsonl_files(&sandbox.cwd.join("from-settings")).len(), 1);
    assert!(sandbox.requests()[1]
        .body_text()
        .contains("the-first-answer"));

    let env_dir = sandbox.home.join("from-env");
    let env_dir_text = env_dir.to_string_lossy().into_owned();
    sandbox.answer(&Turn::text("three"));
    let run = sandbox.run_with_env(
        &["--model", "mock/mock-model", "-p", "hi"],
        None,
        &[("PI_CODING_AGENT_SESSION_DIR", &env_dir_text)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(jsonl_files(&env_dir).len(), 1);

    let flag_dir = sandbox.home.join("from-flag");
    sandbox.answer(&Turn::text("four"));
    let run = sandbox.run_with_env(
        &[
            "--model",
            "mock/mock-model",
            "--session-dir",
            &flag_dir.to_string_lossy(),
            "-p",
            "hi",
        ],
        None,
        &[("PI_CODING_AGENT_SESSION_DIR", &env_dir_text)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(jsonl_files(&flag_dir).len(), 1);
    assert_eq!(jsonl_files(&env_dir).len(), 1);
}

#[test]
fn settings_tandem_does_not_act_on_are_each_said_once_with_why() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({
        "cacheWarming": "idle",
        "transport": "websocket",
        "images": {"autoResize": true},
        "retry": {"provider": {"maxRetries": 2}},
        "theme": "dark",
    }));
    sandbox.answer(&Turn::text("ok"));
    let run = sandbox.run(&["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for (key, why) in [
        (
            "cacheWarming",
            "prompt-cache warming, which Tandem does not do",
        ),
        ("transport", "Tandem streams over SSE only"),
        ("images.autoResize", "Tandem sends images at their own size"),
        (
            "retry.provider.maxRetries",
            "Tandem does not retry inside a provider call",
        ),
        ("theme", "pi's terminal interface"),
    ] {
        let lines: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains(&format!(": {key} ")))
            .collect();
        assert_eq!(lines.len(), 1, "{key}: {}", run.stderr);
        assert!(lines[0].contains(why), "{key}: {}", lines[0]);
    }
}
