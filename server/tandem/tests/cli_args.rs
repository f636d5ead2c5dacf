//! The real `tandem` binary's command line: help, version, `--list-models`, and usage errors.
//! Each run gets a clean environment (no provider keys) and its own agent directory.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn tandem(agent_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
    cmd.args(args)
        .env_clear()
        .env("PI_CODING_AGENT_DIR", agent_dir)
        .stdin(Stdio::null());
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.output().expect("runs the tandem binary")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tandem(dir.path(), args, &[]);
    text(out)
}

fn text(out: Output) -> (i32, String, String) {
    (
        out.status.code().expect("exited normally"),
        String::from_utf8(out.stdout).expect("utf8 stdout"),
        String::from_utf8(out.stderr).expect("utf8 stderr"),
    )
}

#[test]
fn help_lists_the_options_and_exits_zero() {
    for flag in ["--help", "-h"] {
        let (code, stdout, stderr) = run(&[flag]);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stdout.contains("Usage: tandem [OPTIONS] [MESSAGE]... [COMMAND]"),
            "{stdout}"
        );
        for option in [
            "--print",
            "--mode <MODE>",
            "--model <PATTERN>",
            "--fork <PATH|ID>",
        ] {
            assert!(stdout.contains(option), "{option} missing:\n{stdout}");
        }
        assert_eq!(stderr, "");
    }
    let (code, stdout, _) = run(&["demo", "--help"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("--real"), "{stdout}");
}

#[test]
fn version_prints_name_and_version() {
    for flag in ["--version", "-v", "-V"] {
        let (code, stdout, _) = run(&[flag]);
        assert_eq!(code, 0);
        assert_eq!(stdout, format!("tandem {}\n", env!("CARGO_PKG_VERSION")));
    }
}

#[test]
fn list_models_without_keys_lists_nothing_and_says_what_to_set() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (code, stdout, stderr) = text(tandem(dir.path(), &["--list-models"], &[]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.starts_with("No models available"), "{stderr}");
    assert!(
        stderr.contains(&dir.path().join("models.json").display().to_string()),
        "{stderr}"
    );
}

#[test]
fn list_models_with_a_key_and_a_search() {
    let dir = tempfile::tempdir().expect("temp dir");
    let key = [("DEEPSEEK_API_KEY", "sk-test")];
    let (code, stdout, stderr) = text(tandem(dir.path(), &["--list-models", "reason"], &key));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        "provider  model              context  max-out  thinking  images\n\
         deepseek  deepseek-reasoner  128K     65.5K    yes       no    \n"
    );
    let (code, stdout, _) = text(tandem(dir.path(), &["--list-models", "zzzz"], &key));
    assert_eq!(code, 0);
    assert_eq!(stdout, "No models matching \"zzzz\"\n");
}

#[test]
fn usage_errors_exit_one_with_a_message_on_stderr() {
    let cases: [(&[&str], &str); 5] = [
        (&["--frobnicate"], "unexpected argument '--frobnicate'"),
        (
            &["--thinking", "max"],
            "Invalid thinking level \"max\". Valid values: off, minimal, low, medium, high, xhigh",
        ),
        (
            &["--mode", "yaml"],
            "Invalid mode \"yaml\". Valid values: text, json",
        ),
        (
            &["--fork", "old.jsonl", "--continue", "--no-session"],
            "--fork cannot be combined with --continue, --no-session",
        ),
        (
            &["-p", "--model"],
            "a value is required for '--model <PATTERN>'",
        ),
    ];
    for (args, message) in cases {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn unknown_tools_are_warned_about_not_fatal() {
    let (_, _, stderr) = run(&["--tools", "read,teleport", "--list-models"]);
    assert!(
        stderr.starts_with(
            "Warning: Unknown tool \"teleport\". \
             Valid tools: read, bash, edit, write, grep, find, ls\n"
        ),
        "{stderr}"
    );
}
