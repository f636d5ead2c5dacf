//! Extensions (issue 30): the real `tandem` binary loading pi 1.6's own example extensions,
//! unmodified from the pinned package (`scripts/install-pi16`), in Tandem's Node extension host,
//! and extensions written to misbehave, against the mock LLM server. Node 24 comes from the same
//! install (`TANDEM_NODE`); each test writes the host into its own cache directory.

mod support;

#[path = "extensions/any_language.rs"]
mod any_language;
#[path = "extensions/discovery.rs"]
mod discovery;
#[path = "extensions/editor.rs"]
mod editor;
#[path = "extensions/failures.rs"]
mod failures;
#[path = "extensions/packages.rs"]
mod packages;
#[path = "extensions/pi_examples.rs"]
mod pi_examples;
#[path = "extensions/pi_parity.rs"]
mod pi_parity;

use std::path::{Path, PathBuf};

use support::{Run, Sandbox, MODEL};

/// The workspace's root directory.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// Node 24, installed by `scripts/install-pi16`.
fn node() -> PathBuf {
    support::node()
}

/// pi 1.6's example extension `name`.
fn example(name: &str) -> String {
    support::pi_example(name)
}

/// `tandem --model mock/mock-model <args>` with Node 24 as the extension host's Node.
fn run(sandbox: &Sandbox, args: &[&str]) -> Run {
    run_env(sandbox, args, &[])
}

/// [`run`] with more environment variables.
fn run_env(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Run {
    let node = node();
    let cache = sandbox.home.join("cache");
    let node = node.display().to_string();
    let cache = cache.display().to_string();
    let mut all_env: Vec<(&str, &str)> = vec![("TANDEM_NODE", &node), ("XDG_CACHE_HOME", &cache)];
    all_env.extend_from_slice(env);
    let mut all = vec!["--model", MODEL];
    all.extend_from_slice(args);
    sandbox.run_with_env(&all, None, &all_env)
}

/// Writes an extension file into the project and returns its path.
fn extension(sandbox: &Sandbox, name: &str, source: &str) -> String {
    let path = sandbox.cwd.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("extension dir");
    }
    std::fs::write(&path, source).expect("write extension");
    path.display().to_string()
}

/// The text of the tool result for call `id` in a recorded Chat Completions request body.
fn tool_result_text(body: &serde_json::Value, id: &str) -> Option<String> {
    body["messages"].as_array()?.iter().find_map(|m| {
        (m["role"] == "tool" && m["tool_call_id"] == id).then(|| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            other => support::content_text(other, "\n"),
        })
    })
}

/// The system prompt of a recorded Chat Completions request body.
fn system_prompt(body: &serde_json::Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system" || m["role"] == "developer")
        .map(|m| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            other => support::content_text(other, "\n"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
