//! pi 1.6's own `RpcClient` (from its package, run on its Node 24) drives `tandem --mode rpc`
//! through a small node script, and the same script drives the real pi 1.6: the answers have
//! the same shapes (up to ids, timestamps and paths).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use tandem_tests::wire::{Turn, WireApi};

use crate::support::Sandbox;

pub(crate) fn root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// `target/pi16` (scripts/install-pi16); fails with the instruction when it is missing.
pub(crate) fn pi16() -> PathBuf {
    let dir = root().join("target/pi16");
    assert!(
        dir.join("bin/node").exists() && dir.join("package/dist/cli.js").exists(),
        "pi 1.6 is not installed at {}: run scripts/install-pi16",
        dir.display()
    );
    dir
}

/// `node tests/rpc/<script>` (pi 1.6's Node) in `sandbox` only, with pi's package, the agent
/// RpcClient starts (`cli`) and Tandem's binary in its environment.
pub(crate) fn node_script(script: &str, sandbox: &Sandbox, cli: &Path) -> Command {
    let pi16 = pi16();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rpc");
    let path = format!(
        "{}:{}",
        pi16.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new(pi16.join("bin/node"));
    command
        .arg(here.join(script))
        .current_dir(&sandbox.cwd)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &sandbox.home)
        .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir)
        .env("PI_OFFLINE", "1")
        .env("PI_TELEMETRY", "0")
        .env("PI16_PACKAGE", pi16.join("package"))
        .env("RPC_CLI", cli)
        .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"));
    command
}

/// Runs tests/rpc/pi_client.mjs in a fresh sandbox with `cli` as the agent RpcClient starts.
fn drive(cli: &Path) -> Value {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Hello there"));
    let output = node_script("pi_client.mjs", &sandbox, cli)
        .output()
        .expect("runs node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the script printed no result ({e}): {stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(result.get("failure").is_none(), "{}", result["failure"]);
    result
}

fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn pis_rpc_client_drives_tandem_as_it_drives_pi() {
    let tandem = drive(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rpc/tandem-cli.cjs"));
    assert_eq!(tandem["lastText"], "Hello there");
    assert_eq!(
        tandem["events"].as_array().and_then(|e| e.last()),
        Some(&json!("agent_settled"))
    );
    assert_eq!(tandem["state"]["isStreaming"], false);
    assert_eq!(tandem["setModel"]["id"], "mock-model");
    assert_eq!(tandem["levels"], json!(["off"]));
    assert_eq!(
        tandem["bash"],
        json!({"output": "hi\n", "exitCode": 0, "cancelled": false, "truncated": false})
    );
    assert_eq!(
        tandem["afterBash"],
        json!(["system", "user", "assistant", "bashExecution"])
    );
    assert_eq!(tandem["newSession"], json!({"cancelled": false}));
    assert_eq!(tandem["fresh"]["messageCount"], 0);
    assert_ne!(tandem["fresh"]["sessionId"], tandem["state"]["sessionId"]);
    assert_eq!(tandem["unknownModel"], "Model not found: mock/nope");

    // The same script against the real pi 1.6.
    let pi = drive(&pi16().join("package/dist/cli.js"));
    let events = |r: &Value| -> Vec<Value> {
        r["events"]
            .as_array()
            .map(|e| {
                e.iter()
                    .filter(|t| {
                        let t = t.as_str().unwrap_or_default();
                        t != "message_update"
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(events(&tandem), events(&pi));
    for field in ["lastText", "levels", "bash", "newSession", "unknownModel"] {
        assert_eq!(tandem[field], pi[field], "{field}");
    }
    assert_eq!(tandem["afterBash"], pi["afterBash"]);
    assert_eq!(keys(&tandem["state"]), keys(&pi["state"]));
    assert_eq!(keys(&tandem["setModel"]), keys(&pi["setModel"]));
    // The system messages hold each program's own prompt: the rest is compared.
    let conversation = |r: &Value| -> Vec<Value> {
        r["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter(|m| m["role"] != "system")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let (ours, theirs) = (conversation(&tandem), conversation(&pi));
    let roles = |m: &[Value]| -> Vec<Value> { m.iter().map(|m| m["role"].clone()).collect() };
    assert_eq!(roles(&ours), roles(&theirs));
    assert_eq!(keys(&ours[0]), keys(&theirs[0]), "the user message");
    assert_eq!(ours[0]["content"], theirs[0]["content"]);
    assert_eq!(tandem["state"]["messageCount"], pi["state"]["messageCount"]);
}
