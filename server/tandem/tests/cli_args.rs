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
        (&["--frobnicate"], "unknown option --frobnicate"),
        (
            &["--thinking", "maxi"],
            "Invalid thinking level \"maxi\". Valid values: off, minimal, low, medium, high, \
             xhigh, max",
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
             Valid tools: read, bash, edit, write, grep, find, ls, diagnostics, definition, \
             references, symbols, hover, rename\n"
        ),
        "{stderr}"
    );
}

/// The words `--help` of `tandem <sub>` prints.
fn help_of(sub: &str) -> String {
    let (code, stdout, stderr) = run(&[sub, "--help"]);
    assert_eq!(code, 0, "tandem {sub} --help: {stderr}");
    stdout
}

#[test]
fn each_subcommand_help_lists_only_its_own_flags() {
    let run_only = [
        "--print",
        "--mode",
        "--continue",
        "--session",
        "--fork",
        "--no-session",
    ];
    // A flag as a whole word of the help ("--model" is not "--mode").
    let lists = |help: &str, flag: &str| {
        help.split_whitespace()
            .any(|w| w.trim_end_matches(',') == flag)
    };
    for sub in ["lsp", "acp", "trust"] {
        let help = help_of(sub);
        assert!(
            help.contains(&format!("Usage: tandem {sub}")),
            "tandem {sub} --help:\n{help}"
        );
        for flag in run_only {
            assert!(
                !lists(&help, flag),
                "tandem {sub} --help lists {flag}, which it cannot use:\n{help}"
            );
        }
    }
    // The servers keep the options that shape their sessions; trust has none of them.
    for sub in ["lsp", "acp"] {
        let help = help_of(sub);
        for flag in [
            "--model",
            "--provider",
            "--thinking",
            "--tools",
            "--log-level",
        ] {
            assert!(
                lists(&help, flag),
                "tandem {sub} --help lacks {flag}:\n{help}"
            );
        }
    }
    let trust = help_of("trust");
    for flag in ["--model", "--tools", "--thinking"] {
        assert!(
            !lists(&trust, flag),
            "tandem trust --help lists {flag}:\n{trust}"
        );
    }
    assert!(
        trust.contains("--deny") && trust.contains("--status"),
        "{trust}"
    );
    assert!(help_of("lsp").contains("--stdio"));
}

#[test]
fn the_demo_removes_its_temp_folder() {
    let home = tempfile::tempdir().expect("temp dir");
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("demo")
        .env("HOME", home.path())
        .env("TMPDIR", tmp.path())
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("runs tandem demo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("removed when the demo ends"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("lists TMPDIR")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "the demo left {left:?} in TMPDIR");
}

/// `tandem lsp` and `tandem acp` started by hand in a terminal say what they are, on stderr.
/// The terminal is a pseudo-terminal from util-linux's `script`.
#[test]
fn servers_started_in_a_terminal_print_a_hint() {
    use std::io::Read;
    if Command::new("script").arg("--version").output().is_err() {
        panic!("util-linux `script` is missing: install util-linux (bsdutils) to run this test");
    }
    for (sub, says) in [
        ("lsp", "tandem lsp: a language server"),
        ("acp", "tandem acp: an Agent Client Protocol agent"),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let command = format!("{} {sub}", env!("CARGO_BIN_EXE_tandem"));
        let mut child = Command::new("script")
            .args(["-q", "-e", "-c", &command, "/dev/null"])
            .env("PI_CODING_AGENT_DIR", dir.path())
            .env("HOME", dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("runs script");
        let mut stdout = child.stdout.take().expect("stdout");
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains(says) {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        let seen = String::from_utf8_lossy(&seen);
        assert!(
            seen.contains(says),
            "tandem {sub} in a terminal printed: {seen:?}"
        );
        // Started by an editor (stdin a pipe), it prints nothing of the kind.
        let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .arg(sub)
            .env("PI_CODING_AGENT_DIR", dir.path())
            .env("HOME", dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("runs tandem");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains(says),
            "tandem {sub} with stdin from /dev/null printed the terminal hint"
        );
    }
}
