//! trust.json is shared with pi 1.6 both ways: a folder Tandem trusted runs its `.pi/mcp.json`
//! servers in pi without a question, and a decision pi's own trust store saved (pi's module,
//! run on pi's Node) holds in Tandem. pi 1.6 and its Node 24 are installed by
//! `scripts/install-pi16` (these tests fail, saying so, when they are missing).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use tandem_tests::wire::Turn;

use crate::common::*;
use crate::support::front_doors::*;
use crate::support::Sandbox;

fn pi16() -> (PathBuf, PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pi16");
    let (pi, node, package) = (
        root.join("bin/pi"),
        root.join("bin/node"),
        root.join("package"),
    );
    assert!(
        pi.is_file() && node.exists() && package.is_dir(),
        "pi 1.6 is missing from {}: run scripts/install-pi16",
        root.display()
    );
    (pi, node, package)
}

/// Runs pi 1.6 in print mode in the sandbox's project, on the `lit/m` mock model.
fn run_pi(sandbox: &Sandbox) -> std::process::Output {
    let (pi, _, _) = pi16();
    sandbox.answer(&Turn::text("pi answered"));
    Command::new(pi)
        .args(["--model", "lit/m", "-p", "hello"])
        .current_dir(&sandbox.cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir)
        .env("PI_OFFLINE", "1")
        .output()
        .expect("runs pi 1.6")
}

/// Saves a decision with pi's own trust store module.
fn pi_saves(sandbox: &Sandbox, dir: &Path, trusted: bool) {
    let (_, node, package) = pi16();
    let module = package.join("dist/core/trust-manager.js");
    let script = format!(
        "const m = await import({module}); new m.ProjectTrustStore({agent}).set({dir}, {trusted});",
        module = json!(format!("file://{}", module.display())),
        agent = json!(sandbox.agent_dir),
        dir = json!(dir),
    );
    let out = Command::new(node)
        .args(["--input-type=module", "-e", &script])
        .output()
        .expect("runs node");
    assert!(
        out.status.success(),
        "pi's trust store failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn pi_16_runs_the_servers_of_a_folder_tandem_trusted() {
    let sandbox = planted();
    // Untrusted, pi runs nothing either.
    let out = run_pi(&sandbox);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "pi answered");
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());

    let saved = cli(&sandbox, &["trust"]);
    assert_eq!(saved.code, Some(0), "{}", saved.stderr);
    let out = run_pi(&sandbox);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // pi reads servers from mcp.json only (settings.json's mcpServers is Tandem's key).
    assert_eq!(servers_that_ran(&sandbox), ["frommcpjson"]);
}

#[test]
fn tandem_follows_the_decisions_pi_16_saved() {
    let sandbox = planted();
    sandbox.write_settings(json!({"defaultProvider": "script", "defaultModel": "t"}));
    pi_saves(&sandbox, &sandbox.cwd, true);
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(both_ran(&sandbox), "{:?}", servers_that_ran(&sandbox));

    // pi's "do not trust" for the folder beats a trusted parent, in Tandem too.
    std::fs::remove_file(marker_file(&sandbox)).unwrap();
    pi_saves(&sandbox, &sandbox.home, true);
    pi_saves(&sandbox, &sandbox.cwd, false);
    let run = cli(&sandbox, &["-p", "go"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(servers_that_ran(&sandbox), Vec::<String>::new());
    assert_eq!(
        read_trust(&sandbox),
        json!({sandbox.home.display().to_string(): true,
               sandbox.cwd.display().to_string(): false})
    );
}
