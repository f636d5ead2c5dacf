//! API keys and auth headers never appear in what a front door outputs: stdout, stderr (where
//! the log goes; the runs set `TANDEM_LOG=trace`, the most Tandem logs), LSP / ACP messages,
//! session files, error messages.
//!
//! Keys come from each source pi knows: models.json `apiKey` (literal, and an environment
//! variable's name), auth.json, `--api-key`, plus a custom auth header from models.json
//! `headers`. The mock provider is the careless kind: its errors echo the request's
//! `Authorization` (and the custom header) back — a 401, an error event inside a 200 stream,
//! and a 500 that is retried once and then reported. Each check also asserts the mock really
//! received the key, so a clean output is not clean because the key was never used.

use serde_json::{json, Value};
use tandem_tests::mock_llm::RecordedRequest;

use crate::harness::*;
use crate::support::front_doors::*;
use crate::support::lsp::{answers, file_uri, stderr_of};

/// The three careless answers for a request made with `key` (and the header).
fn careless_answers(sandbox: &crate::support::Sandbox, key: &str, header: bool, which: usize) {
    match which {
        0 => sandbox.enqueue(echo_401(key, header)),
        1 => sandbox.enqueue(echo_in_stream(key, header)),
        _ => {
            sandbox.enqueue(echo_500(key));
            sandbox.enqueue(echo_500(key));
        }
    }
}

/// What the error the front door reported must contain, so we know the echo reached it.
const ECHO_MARKERS: [&str; 3] = [
    "Incorrect API key provided",
    "request rejected for",
    "internal error handling key",
];

fn check_sent(requests: &[RecordedRequest], key: &str, header: bool) {
    let last = requests.last().expect("the provider was called");
    assert_eq!(
        last.header("authorization"),
        Some(format!("Bearer {key}").as_str()),
        "the key was sent"
    );
    if header {
        assert_eq!(last.header("x-custom-auth"), Some(HEADER_SECRET));
    }
}

#[test]
fn cli_print_and_json_modes_never_output_a_key_or_auth_header() {
    let sandbox = sandbox(&json!({"turns": [{"text": "unused"}]}));
    let cases: [(&str, Option<&str>, &str, bool); 5] = [
        ("lit", None, KEY_MODELS, false),
        ("envp", None, KEY_ENV, false),
        ("authp", None, KEY_AUTH, false),
        ("hdr", None, KEY_MODELS, true),
        ("lit", Some(KEY_FLAG), KEY_FLAG, false),
    ];
    for (provider, flag, key, header) in cases {
        for mode in [&["--mode", "json", "-p"][..], &["-p"][..]] {
            for (which, marker) in ECHO_MARKERS.iter().enumerate() {
                careless_answers(&sandbox, key, header, which);
                let model = format!("{provider}/m");
                let mut args = vec!["--model", model.as_str()];
                if let Some(flag) = flag {
                    args.extend(["--api-key", flag]);
                }
                args.extend_from_slice(mode);
                args.push("hello");
                let run = cli(&sandbox, &args);
                let what = format!("{provider} {mode:?} answer {which}");
                check_sent(&sandbox.requests(), key, header);
                assert_eq!(run.code, Some(1), "{what}: the run fails\n{}", run.stderr);
                assert!(
                    run.stdout.contains(marker) || run.stderr.contains(marker),
                    "{what}: the provider's message is reported\nstdout {}\nstderr {}",
                    run.stdout,
                    run.stderr
                );
                assert_clean(&format!("{what}: stdout"), &run.stdout);
                assert_clean(&format!("{what}: stderr"), &run.stderr);
            }
        }
    }
    // The session files of all 30 runs.
    assert!(assert_files_clean(&sandbox) >= 30);
}

#[test]
fn lsp_messages_stderr_and_session_files_never_hold_a_key_or_auth_header() -> anyhow::Result<()> {
    let sandbox = sandbox(&json!({"turns": [{"text": "unused"}]}));
    let mut lsp = lsp(&sandbox, json!({"model": "lit/m"}), answers(lsp_deny))?;
    let mut sessions = Vec::new();
    for provider in ["lit", "envp", "authp", "hdr"] {
        let header = provider == "hdr";
        for (which, marker) in ECHO_MARKERS.iter().enumerate() {
            careless_answers(&sandbox, key_of(provider), header, which);
            let session = lsp_run(&mut lsp, provider, "m", "hello")?;
            check_sent(&sandbox.requests(), key_of(provider), header);
            let events = lsp.events(&session);
            let reported = events.iter().any(|e| e.to_string().contains(marker));
            assert!(
                reported,
                "{provider} answer {which}: the error reaches the client"
            );
            lsp.request("tandem/state", json!({"session": session}))?;
            sessions.push(session);
        }
    }
    lsp.request("tandem/models/list", json!({}))?;
    lsp.request("tandem/sessions/list", json!({}))?;
    // Every run also reported work-done progress; its `end` carries the error.
    assert!(lsp
        .received("$/progress")
        .iter()
        .any(|m| m.to_string().contains(ECHO_MARKERS[0])));
    lsp.shutdown()?;
    for message in lsp.log() {
        assert_clean("an LSP message", &message.to_string());
    }
    assert_clean("tandem lsp's stderr", &stderr_of(&lsp));

    // A client without events gets a command's error as window/showMessage.
    let mut plain = lsp_with(
        &sandbox,
        json!({"model": "hdr/m"}),
        answers(lsp_deny),
        false,
    )?;
    careless_answers(&sandbox, KEY_MODELS, true, 0);
    let doc = sandbox.cwd.join("a.rs");
    std::fs::write(&doc, "fn main() {}\n").unwrap();
    plain.request(
        "workspace/executeCommand",
        json!({"command": "tandem.explain", "arguments": [{"uri": file_uri(&doc),
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 12}}}]}),
    )?;
    plain.wait_until("the command's window/showMessage", |c| {
        c.received("window/showMessage")
            .iter()
            .any(|m| m.to_string().contains(ECHO_MARKERS[0]))
    })?;
    check_sent(&sandbox.requests(), KEY_MODELS, true);
    plain.shutdown()?;
    for message in plain.log() {
        assert_clean("an LSP message (no events)", &message.to_string());
    }
    assert_clean("tandem lsp's stderr (no events)", &stderr_of(&plain));
    assert!(assert_files_clean(&sandbox) >= 13);
    Ok(())
}

#[test]
fn acp_messages_stderr_and_session_files_never_hold_a_key_or_auth_header() {
    let sandbox = sandbox(&json!({"turns": [{"text": "unused"}]}));
    let mut acp = Acp::start(&sandbox, Box::new(acp_reject));
    for provider in ["lit", "envp", "authp", "hdr"] {
        let header = provider == "hdr";
        // The session's model comes from settings.json, read when the session starts.
        sandbox.write_settings(json!({"defaultProvider": provider, "defaultModel": "m",
            "retry": {"baseDelayMs": 1, "maxRetries": 1}}));
        for (which, marker) in ECHO_MARKERS.iter().enumerate() {
            let session = acp.new_session(&sandbox.cwd);
            careless_answers(&sandbox, key_of(provider), header, which);
            let answer = acp.prompt(&session, "hello");
            check_sent(&sandbox.requests(), key_of(provider), header);
            let reported = answer.to_string().contains(marker)
                || acp.updates().iter().any(|u| u.to_string().contains(marker));
            assert!(
                reported,
                "{provider} answer {which}: the error reaches the client: {answer}"
            );
        }
    }
    acp.close();
    for line in &acp.wire {
        assert_clean("an ACP message", line);
    }
    assert_clean("tandem acp's stderr", &acp.stderr());
    assert!(assert_files_clean(&sandbox) >= 12);
}

/// The helper itself: a leak is found (so the clean checks above mean something).
#[test]
fn the_leak_check_finds_a_key() {
    let leaked =
        std::panic::catch_unwind(|| assert_clean("sample", &format!("error: Bearer {KEY_AUTH}")));
    assert!(leaked.is_err());
    let partial = std::panic::catch_unwind(|| assert_clean("sample", "sk-authjson-SECRET-11"));
    assert!(partial.is_err());
    let _: Value = json!(null);
}

/// Issue 29: an HTTP MCP server's header values (from mcp.json, `${ENV}` expanded) echoed back
/// in its 401 body never reach stderr or the editor (`window/logMessage`, `showMessage`), in
/// print mode or the language server.
#[test]
fn mcp_header_values_echoed_by_a_server_are_redacted_everywhere() -> anyhow::Result<()> {
    const TOKEN: &str = "mcpTok-SECRET-31337";
    const API_KEY: &str = "xk-Literal-SECRET-4242";
    let server = crate::support::mcp::HttpFixture::start(&[
        ("FIXTURE_TOKEN", "the-right-one"),
        ("FIXTURE_ECHO_AUTH", "1"),
    ]);
    let sandbox = sandbox(&json!({"turns": [{"text": "done"}]}));
    sandbox.write_agent_file(
        "mcp.json",
        &json!({"mcpServers": {"careless": {"url": server.url, "headers": {
            "Authorization": "Bearer ${TANDEM_TEST_MCP_TOKEN}", "X-Api-Key": API_KEY}}}})
        .to_string(),
    );
    let clean = |what: &str, text: &str| {
        for secret in [TOKEN, API_KEY] {
            assert!(!text.contains(secret), "{what} holds {secret}: {text}");
        }
    };
    let mut run = command(&sandbox, &["--model", "script/t", "-p", "hi"]);
    let output = run
        .env("TANDEM_TEST_MCP_TOKEN", TOKEN)
        .stdin(std::process::Stdio::null())
        .output()?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    // The server's refusal is reported, with what it echoed blanked out.
    assert!(
        stderr.contains("`careless`") && stderr.contains("401") && stderr.contains("***"),
        "{stderr}"
    );
    clean("print mode's stderr", &stderr);
    clean("print mode's stdout", &stdout);

    // The language server with the token written literally (its environment is the test's).
    sandbox.write_agent_file(
        "mcp.json",
        &json!({"mcpServers": {"careless": {"url": server.url, "headers": {
            "Authorization": format!("Bearer {TOKEN}"), "X-Api-Key": API_KEY}}}})
        .to_string(),
    );
    let mut lsp = lsp(&sandbox, json!({"model": "script/t"}), answers(lsp_deny))?;
    let session = lsp_run(&mut lsp, "script", "t", "hello")?;
    lsp.request("tandem/state", json!({"session": session}))?;
    lsp.shutdown()?;
    let told: Vec<String> = lsp
        .log()
        .iter()
        .filter(|m| m["method"] == "window/logMessage" || m["method"] == "window/showMessage")
        .map(|m| m["params"]["message"].to_string())
        .collect();
    assert!(
        told.iter()
            .any(|m| m.contains("`careless`") && m.contains("401")),
        "{told:#?}"
    );
    for message in lsp.log() {
        clean("an LSP message", &message.to_string());
    }
    clean("tandem lsp's stderr", &stderr_of(&lsp));
    Ok(())
}
