//! Logging: one subscriber, to stderr or `--log-file`, never stdout; the level from
//! `--log-level` or `TANDEM_LOG`; a bare level covers Tandem's own crates only; the language
//! server also hands its warnings to the editor (`window/logMessage`), and bad configuration
//! is shown (`window/showMessage`) as the spec says.

mod support;

use serde_json::{json, Value};
use tandem_tests::lsp_client::LspClient;
use tandem_tests::wire::Turn;

use support::front_doors::*;
use support::lsp::answers;

#[test]
fn print_mode_logs_to_the_file_asked_for_and_keeps_stdout_clean() {
    let sandbox = sandbox(&json!({"turns": []}));
    sandbox.answer(&Turn::text("hello"));
    let log = sandbox.home.join("tandem.log");
    let log_arg = log.display().to_string();
    let run = cli(
        &sandbox,
        &[
            "--log-level",
            "debug",
            "--log-file",
            &log_arg,
            "--model",
            "lit/m",
            "-p",
            "hi",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "hello\n");
    let text = std::fs::read_to_string(&log).expect("the log file");
    assert!(
        text.contains("DEBUG tandem_ai::http: model request provider=lit"),
        "{text}"
    );
    // A bare level is for Tandem's crates: nothing from the HTTP stack, no key anywhere.
    assert!(
        !text.contains("hyper") && !text.contains("reqwest"),
        "{text}"
    );
    assert_clean("the log file", &text);
    assert!(!run.stderr.contains("DEBUG"), "{}", run.stderr);
}

#[test]
fn a_bad_log_level_is_reported_and_the_run_goes_on() {
    let sandbox = sandbox(&json!({"turns": []}));
    sandbox.answer(&Turn::text("hello"));
    let run = cli(
        &sandbox,
        &["--log-level", "loud", "--model", "lit/m", "-p", "hi"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "hello\n");
    assert!(
        run.stderr
            .starts_with("Warning: invalid log level \"loud\" (not a level)"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_language_server_shows_bad_settings_and_mirrors_its_warnings_to_the_editor_log(
) -> anyhow::Result<()> {
    let sandbox = sandbox(&json!({"turns": [{"text": "ok"}]}));
    let mut lsp = lsp(
        &sandbox,
        json!({"model": "script/t", "editMode": "sometimes"}),
        answers(lsp_deny),
    )?;
    let notes = |c: &LspClient, method: &str| -> Vec<(i64, String)> {
        c.received(method)
            .iter()
            .map(|m| {
                (
                    m.params["type"].as_i64().unwrap_or_default(),
                    m.params["message"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    lsp.wait_until("the warning", |c| {
        !notes(c, "window/showMessage").is_empty() && !notes(c, "window/logMessage").is_empty()
    })?;
    let shown = notes(&lsp, "window/showMessage");
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0].0, 2, "a warning");
    assert!(
        shown[0]
            .1
            .starts_with("Tandem: initializationOptions.editMode"),
        "{shown:?}"
    );
    let logged = notes(&lsp, "window/logMessage");
    assert!(
        logged
            .iter()
            .any(|(t, m)| *t == 2 && m.starts_with("initializationOptions.editMode")),
        "{logged:?}"
    );
    let _: Value = lsp.request("tandem/models/list", json!({}))?;
    lsp.shutdown()?;
    Ok(())
}
