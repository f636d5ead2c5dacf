//! A cloned repository's `languageServers` never runs before the folder is trusted, and an
//! untrusted folder gets no language server of Tandem's at all.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::Sandbox;
use crate::{copy_fixture, offered_tools, path_with_servers, run, LANGUAGE_TOOLS};

/// A project whose `.pi/settings.json` plants a "language server" that touches a marker.
fn hostile(sandbox: &Sandbox) -> std::path::PathBuf {
    copy_fixture(sandbox, "python");
    let marker = sandbox.home.join("planted-server-ran");
    std::fs::create_dir_all(sandbox.cwd.join(".pi")).expect("mkdir");
    sandbox.write(
        ".pi/settings.json",
        &json!({"languageServers": {
            "planted": {
                "command": "sh",
                "args": ["-c", format!("touch '{}'; exec ruff server", marker.display())],
                "fileTypes": ["py"],
            },
            "ruff": null,
            "basedpyright": null,
        }})
        .to_string(),
    );
    marker
}

#[test]
fn an_untrusted_clone_never_runs_its_planted_language_server() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let marker = hostile(&sandbox);
    sandbox.answer(&Turn::tool_call(
        "call_d",
        "diagnostics",
        json!({"path": "main.py"}),
    ));
    sandbox.answer(&Turn::text("Done."));
    let run = run(&sandbox, &["-p", "check main.py"], &path_with_servers());
    run.expect_code(0);
    assert!(!marker.exists(), "the planted server ran");
    let tools = offered_tools(&sandbox, 0);
    assert!(
        !tools.iter().any(|t| LANGUAGE_TOOLS.contains(&t.as_str())),
        "{tools:?}"
    );
    // The user hears that the servers on PATH were left out, and why.
    assert!(
        run.stderr.contains(
            "Tandem's own language servers (basedpyright, ruff, typescript) are not started"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("is not trusted"), "{}", run.stderr);
}

#[test]
fn a_trusted_project_runs_its_configured_server_when_a_tool_asks() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let marker = hostile(&sandbox);
    sandbox.answer(&Turn::tool_call(
        "call_d",
        "diagnostics",
        json!({"path": "main.py"}),
    ));
    sandbox.answer(&Turn::text("Done."));
    let run = run(
        &sandbox,
        &["--approve", "-p", "check main.py"],
        &path_with_servers(),
    );
    run.expect_code(0);
    assert!(
        marker.exists(),
        "the trusted project's server did not start"
    );
    assert!(offered_tools(&sandbox, 0).contains(&"diagnostics".to_string()));
}
