//! Parity with pi 1.6 itself: each test runs one of pi 1.6's shipped examples (unmodified, from
//! the pinned package) through one scenario against both pi 1.6 and Tandem — a fresh sandbox for
//! each program, the same scripted model turns — and asserts that both show the same observable
//! outcome (the answer printed, the exit code, files written or left alone, what the model was
//! sent next, session entries, the extension UI requests of RPC mode), and that this outcome is
//! what the example is for.
//!
//! Print mode (`-p`) where the example needs no UI; RPC mode (`--mode rpc`, pi's
//! `extension_ui_request`s answered by script, see pi's docs/rpc-extension-ui.md) where it does.
//! A test of an example Tandem runs differently is `#[ignore]`d with what differs; run them with
//! `cargo test -p tandem --test extensions pi_parity -- --ignored`.
//!
//! Not here: the examples that draw pi-tui components (`ctx.ui.custom`, custom editors, footers,
//! headers, overlays, games), and those with nothing to observe offline: jev-router (OpenAI Codex
//! and TypeSafe logins), project-trust (outside pi's terminal its handler cannot ask and returns
//! "undecided", which changes nothing), gondolin (a micro-VM) and the custom providers (their
//! vendors' services).

use std::collections::VecDeque;
use std::fmt::Debug;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;

use serde_json::{json, Value};
use tandem_tests::wire::{Turn, WireApi};

use crate::support::process::{wait_or_fail, HANG_GUARD};
use crate::support::{self, Run, Sandbox, MODEL};
use crate::{example, node, run_env, system_prompt, tool_result_text, workspace_root};

// --- Running one scenario against both programs ---------------------------------------------

/// Which program runs a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Program {
    /// pi 1.6 (`scripts/install-pi16`), on its own Node 24.
    Pi,
    /// The `tandem` binary of this crate.
    Tandem,
}

/// pi 1.6's launcher.
fn pi16() -> PathBuf {
    let bin = workspace_root().join("target/pi16/bin/pi");
    assert!(
        bin.is_file(),
        "pi 1.6 is not installed at {}: run scripts/install-pi16",
        bin.display()
    );
    bin
}

/// `text` with `{home}` and `{cwd}` replaced by the sandbox's directories.
fn fill(sandbox: &Sandbox, text: &str) -> String {
    text.replace("{home}", &sandbox.home.display().to_string())
        .replace("{cwd}", &sandbox.cwd.display().to_string())
}

/// `text` with the sandbox's directories written back as `{cwd}` and `{home}`, so outcomes of
/// two sandboxes compare.
fn unfill(sandbox: &Sandbox, text: &str) -> String {
    text.replace(&sandbox.cwd.display().to_string(), "{cwd}")
        .replace(&sandbox.home.display().to_string(), "{home}")
}

/// pi 1.6 with `--model mock/mock-model <args>` in the sandbox: its home, agent dir and project,
/// offline, and nothing else from the environment but `PATH` (and `env`).
fn pi_command(sandbox: &Sandbox, args: &[String], env: &[(String, String)]) -> Command {
    let mut cmd = Command::new(pi16());
    cmd.arg("--model")
        .arg(MODEL)
        .args(args)
        .current_dir(&sandbox.cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir)
        .env("PI_OFFLINE", "1")
        .env("PI_TELEMETRY", "0")
        .envs(env.iter().map(|(k, v)| (k, v)));
    cmd
}

/// Runs pi 1.6 in print or JSON mode; stdout and stderr go through files (no pipe to fill).
fn run_pi(sandbox: &Sandbox, args: &[String], env: &[(String, String)]) -> Run {
    let (out, err) = (
        sandbox.home.join("pi.stdout"),
        sandbox.home.join("pi.stderr"),
    );
    let mut child = pi_command(sandbox, args, env)
        .stdin(Stdio::null())
        .stdout(File::create(&out).expect("stdout file"))
        .stderr(File::create(&err).expect("stderr file"))
        .spawn()
        .expect("runs pi 1.6");
    let status = wait_or_fail(&mut child, HANG_GUARD, "pi 1.6");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(out).expect("pi's stdout"),
        stderr: std::fs::read_to_string(err).expect("pi's stderr"),
    }
}

/// Runs `program` with `--model mock/mock-model <args>` (after `{home}`/`{cwd}` are filled in)
/// in the sandbox.
fn run_program(program: Program, sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Run {
    let args: Vec<String> = args.iter().map(|a| fill(sandbox, a)).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), fill(sandbox, v)))
        .collect();
    match program {
        Program::Pi => run_pi(sandbox, &args, &env),
        Program::Tandem => {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            run_env(sandbox, &args, &env)
        }
    }
}

/// Runs one print- or JSON-mode scenario against pi 1.6, then Tandem, each in a fresh sandbox
/// prepared by `setup` (files, scripted model turns), and asserts that `observe` sees the same
/// outcome in both. Returns the outcome, for the test to check it is the example's behaviour.
fn parity<T: PartialEq + Debug>(
    setup: impl Fn(&Sandbox),
    args: &[&str],
    observe: impl Fn(&Sandbox, &Run) -> T,
) -> T {
    parity_env(setup, args, &[], observe)
}

/// [`parity`] with extra environment variables (`{home}` and `{cwd}` filled in).
fn parity_env<T: PartialEq + Debug>(
    setup: impl Fn(&Sandbox),
    args: &[&str],
    env: &[(&str, &str)],
    observe: impl Fn(&Sandbox, &Run) -> T,
) -> T {
    let outcome = |program: Program| {
        let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
        setup(&sandbox);
        let run = run_program(program, &sandbox, args, env);
        (observe(&sandbox, &run), run)
    };
    let (pi, pi_run) = outcome(Program::Pi);
    let (tandem, tandem_run) = outcome(Program::Tandem);
    assert_eq!(
        tandem, pi,
        "Tandem (left) and pi 1.6 (right) differ.\npi 1.6's run: {pi_run:?}\nTandem's run: {tandem_run:?}"
    );
    pi
}

/// A program running in RPC mode: JSON commands in, responses and events out. Dialog requests
/// (`select`, `confirm`, `input`, `editor`) are answered from a script, in order (a dialog the
/// script has no answer for is cancelled); every line is kept.
struct Rpc {
    program: Program,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<Value>,
    answers: VecDeque<Value>,
}

impl Rpc {
    /// Starts `program --mode rpc --model mock/mock-model <args>` in the sandbox.
    fn start(program: Program, sandbox: &Sandbox, args: &[&str], answers: &[Value]) -> Rpc {
        let mut all = vec!["--mode".to_string(), "rpc".to_string()];
        all.extend(args.iter().map(|a| fill(sandbox, a)));
        let mut cmd = match program {
            Program::Pi => pi_command(sandbox, &all, &[]),
            Program::Tandem => {
                // What `run_env` sets, for a child we talk to.
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
                cmd.arg("--model")
                    .arg(MODEL)
                    .args(&all)
                    .current_dir(&sandbox.cwd)
                    .env_clear()
                    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                    .env("HOME", &sandbox.home)
                    .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir)
                    .env("TANDEM_NODE", node())
                    .env("XDG_CACHE_HOME", sandbox.home.join("cache"));
                cmd
            }
        };
        let stderr = File::create(sandbox.home.join("rpc.stderr")).expect("stderr file");
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program:?} in RPC mode: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Rpc {
            program,
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
            answers: answers.iter().cloned().collect(),
        }
    }

    /// Writes one command line.
    fn send(&mut self, command: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{command}").expect("write a command");
        stdin.flush().expect("flush stdin");
    }

    /// The next output line (answering it when it is a dialog); `None` once stdout closed.
    fn next(&mut self, waiting_for: &str) -> Option<Value> {
        let line = match self.lines.recv_timeout(HANG_GUARD) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "{:?} sent no {waiting_for} within {HANG_GUARD:?}; the last lines: {:#?}",
                self.program,
                &self.seen[self.seen.len().saturating_sub(8)..]
            ),
        };
        let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
            panic!(
                "{:?} printed a line that is not JSON ({e}): {line}",
                self.program
            )
        });
        let dialog = ["select", "confirm", "input", "editor"];
        if value["type"] == "extension_ui_request"
            && dialog.contains(&value["method"].as_str().unwrap_or_default())
            && self.stdin.is_some()
        {
            let mut answer = self
                .answers
                .pop_front()
                .unwrap_or_else(|| json!({"cancelled": true}));
            answer["type"] = json!("extension_ui_response");
            answer["id"] = value["id"].clone();
            self.send(answer);
        }
        self.seen.push(value.clone());
        Some(value)
    }

    /// Reads lines until one satisfies `done`, and returns it.
    fn until(&mut self, waiting_for: &str, done: impl Fn(&Value) -> bool) -> Value {
        loop {
            match self.next(waiting_for) {
                Some(value) if done(&value) => return value,
                Some(_) => {}
                None => panic!(
                    "{:?} exited before sending {waiting_for}; the last lines: {:#?}",
                    self.program,
                    &self.seen[self.seen.len().saturating_sub(8)..]
                ),
            }
        }
    }

    /// Sends `command` and returns its response.
    fn command(&mut self, command: Value) -> Value {
        let kind = command["type"].as_str().unwrap_or_default().to_string();
        self.send(command);
        self.until(&format!("the response to {kind}"), |v| {
            v["type"] == "response" && v["command"] == kind.as_str()
        })
    }

    /// Sends a prompt and, when it started a run, waits until the run settled. Returns the
    /// prompt's response.
    fn prompt(&mut self, text: &str) -> Value {
        let response = self.command(json!({"type": "prompt", "message": text}));
        if response["data"]["disposition"] != "handled" && response["success"] == true {
            self.until("agent_settled", |v| v["type"] == "agent_settled");
        }
        response
    }

    /// Closes stdin, reads the rest of the output and waits for the exit. Every line it printed.
    fn finish(mut self) -> Vec<Value> {
        self.stdin = None;
        while self.next("the end of its output").is_some() {}
        let status = wait_or_fail(&mut self.child, HANG_GUARD, "an RPC session");
        assert!(
            status.success(),
            "{:?} in RPC mode exited with {status}",
            self.program
        );
        self.seen
    }
}

/// Runs one RPC scenario against pi 1.6, then Tandem, each in a fresh sandbox prepared by
/// `setup`: `drive` talks to the program (dialogs answered from `answers`), then stdin closes and
/// `observe` looks at the sandbox and every line printed. Asserts both outcomes are the same and
/// returns it.
fn rpc_parity<T: PartialEq + Debug>(
    setup: impl Fn(&Sandbox),
    args: &[&str],
    answers: &[Value],
    drive: impl Fn(&mut Rpc),
    observe: impl Fn(&Sandbox, &[Value]) -> T,
) -> T {
    let outcome = |program: Program| {
        let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
        setup(&sandbox);
        let mut rpc = Rpc::start(program, &sandbox, args, answers);
        drive(&mut rpc);
        let lines = rpc.finish();
        let stderr = std::fs::read_to_string(sandbox.home.join("rpc.stderr")).unwrap_or_default();
        (observe(&sandbox, &lines), stderr)
    };
    let (pi, pi_stderr) = outcome(Program::Pi);
    let (tandem, tandem_stderr) = outcome(Program::Tandem);
    assert_eq!(
        tandem, pi,
        "Tandem (left) and pi 1.6 (right) differ.\npi 1.6's stderr: {pi_stderr}\nTandem's stderr: {tandem_stderr}"
    );
    pi
}

// --- What the tests look at ------------------------------------------------------------------

/// The extension UI requests among RPC output lines, in order, without their ids (each program
/// makes its own) and with `notifyType`'s documented default (`"info"` when omitted) filled in.
fn ui_requests(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "extension_ui_request")
        .map(|l| {
            let mut request = l.clone();
            let fields = request.as_object_mut().expect("an object");
            fields.remove("id");
            if fields.get("method").and_then(Value::as_str) == Some("notify") {
                fields.entry("notifyType").or_insert_with(|| json!("info"));
            }
            request
        })
        .collect()
}

/// The UI requests of one method.
fn ui_of(lines: &[Value], method: &str) -> Vec<Value> {
    ui_requests(lines)
        .into_iter()
        .filter(|r| r["method"] == method)
        .collect()
}

/// The messages of the notifications among RPC output lines.
fn notifications(lines: &[Value]) -> Vec<String> {
    ui_of(lines, "notify")
        .iter()
        .map(|n| n["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `value` with ANSI escape sequences (`ESC [ ... letter`) taken out of every string: the text
/// a user reads.
fn visible(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(strip_ansi(s)),
        Value::Array(items) => Value::Array(items.iter().map(visible).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), visible(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The JSON body of the mock's `index`th request (`None` when there were fewer).
fn request(sandbox: &Sandbox, index: usize) -> Option<Value> {
    sandbox.requests().get(index).and_then(|r| r.json().ok())
}

/// How many times the model was asked.
fn asked(sandbox: &Sandbox) -> usize {
    sandbox.requests().len()
}

/// The text of tool result `id` in the mock's `index`th request.
fn tool_result(sandbox: &Sandbox, index: usize, id: &str) -> Option<String> {
    request(sandbox, index).and_then(|body| tool_result_text(&body, id))
}

/// The conversation of the mock's `index`th request: `(role, text)` of each message but the
/// system prompt.
fn conversation(sandbox: &Sandbox, index: usize) -> Vec<(String, String)> {
    let Some(body) = request(sandbox, index) else {
        return Vec::new();
    };
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] != "system" && m["role"] != "developer")
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                support::content_text(&m["content"], "\n"),
            )
        })
        .collect()
}

/// The system prompt of the mock's `index`th request.
fn system_prompt_of(sandbox: &Sandbox, index: usize) -> String {
    request(sandbox, index)
        .map(|body| system_prompt(&body))
        .unwrap_or_default()
}

/// The tool names offered in the mock's `index`th request.
fn offered(sandbox: &Sandbox, index: usize) -> Vec<String> {
    if sandbox.requests().len() <= index {
        return Vec::new();
    }
    sandbox.offered_tools(index)
}

/// The entries of the sandbox's only session file (none when there is no file).
fn session(sandbox: &Sandbox) -> Vec<Value> {
    match sandbox.session_files().as_slice() {
        [file] => support::read_jsonl(file),
        [] => Vec::new(),
        files => panic!("more than one session file: {files:?}"),
    }
}

/// The session's entries of `type`, without their `id`, `parentId` and `timestamp`.
fn entries_of(sandbox: &Sandbox, kind: &str) -> Vec<Value> {
    session(sandbox)
        .into_iter()
        .filter(|e| e["type"] == kind)
        .map(|mut e| {
            let fields = e.as_object_mut().expect("an object");
            for key in ["id", "parentId", "timestamp"] {
                fields.remove(key);
            }
            e
        })
        .collect()
}

/// The session's entry kinds (`message:user`, `custom`, ...), in order.
fn entry_kinds(sandbox: &Sandbox) -> Vec<String> {
    support::entry_kinds(&session(sandbox))
}

/// Runs git in `dir` with a fixed identity and no user or system configuration.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("runs git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A git repository in the project with one commit of `a.txt`, and an identity for commits the
/// programs make.
fn git_repo(sandbox: &Sandbox) {
    git(&sandbox.cwd, &["init", "-q"]);
    git(&sandbox.cwd, &["config", "user.name", "Test"]);
    git(&sandbox.cwd, &["config", "user.email", "test@example.com"]);
    sandbox.write("a.txt", "one\n");
    git(&sandbox.cwd, &["add", "a.txt"]);
    git(&sandbox.cwd, &["commit", "-qm", "init"]);
}

/// Writes an executable script at `<home>/bin/<name>` (the tests put that folder first on PATH).
fn stand_in(sandbox: &Sandbox, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = sandbox.home.join("bin");
    std::fs::create_dir_all(&dir).expect("bin dir");
    let path = dir.join(name);
    std::fs::write(&path, script).expect("write the stand-in");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `PATH` with `<home>/bin` first.
fn path_with_stand_ins() -> String {
    format!("{{home}}/bin:{}", std::env::var("PATH").unwrap_or_default())
}

// --- Print mode ------------------------------------------------------------------------------

#[test]
fn hello_tool_answers_the_model() {
    let outcome = parity(
        |s| {
            s.answer(&Turn::tool_call(
                "call_1",
                "hello",
                json!({"name": "world"}),
            ));
            s.answer(&Turn::text("Greeted."));
        },
        &["-e", &example("hello.ts"), "-p", "greet the world"],
        |s, run| {
            let details: Vec<Value> = entries_of(s, "message")
                .iter()
                .filter(|e| e["message"]["role"] == "toolResult")
                .map(|e| e["message"]["details"].clone())
                .collect();
            (
                run.code,
                run.stdout.clone(),
                tool_result(s, 1, "call_1"),
                details,
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            "Greeted.\n".to_string(),
            Some("Hello, world!".to_string()),
            vec![json!({"greeted": "world"})]
        )
    );
}

#[test]
fn permission_gate_blocks_rm_rf_without_a_ui() {
    let outcome = parity(
        |s| {
            std::fs::create_dir_all(s.cwd.join("build")).expect("build dir");
            s.answer(&Turn::tool_call(
                "call_1",
                "bash",
                json!({"command": "rm -rf build"}),
            ));
            s.answer(&Turn::text("Could not."));
        },
        &["-e", &example("permission-gate.ts"), "-p", "clean up"],
        |s, run| {
            (
                run.code,
                s.cwd.join("build").is_dir(),
                tool_result(s, 1, "call_1"),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            true,
            Some("Dangerous command blocked (no UI for confirmation)".to_string())
        )
    );
}

#[test]
fn protected_paths_blocks_writing_env() {
    let outcome = parity(
        |s| {
            s.answer(&Turn::tool_call(
                "call_1",
                "write",
                json!({"path": ".env", "content": "TOKEN=stolen\n"}),
            ));
            s.answer(&Turn::text("Blocked."));
        },
        &["-e", &example("protected-paths.ts"), "-p", "write it"],
        |s, run| {
            (
                run.code,
                s.cwd.join(".env").exists(),
                tool_result(s, 1, "call_1"),
            )
        },
    );
    assert_eq!(
        outcome,
        (0, false, Some(r#"Path ".env" is protected"#.to_string()))
    );
}

#[test]
fn pirate_command_appends_to_the_system_prompt() {
    const PIRATE: &str = "\n\nIMPORTANT: You are now in PIRATE MODE. You must:\n- Speak like a stereotypical pirate in all responses\n";
    let outcome = parity(
        |s| s.answer(&Turn::text("Arrr.")),
        &["-e", &example("pirate.ts"), "-p", "/pirate", "say hello"],
        |s, run| {
            let session = std::fs::read_to_string(s.only_session()).unwrap_or_default();
            (
                run.stdout.clone(),
                asked(s),
                system_prompt_of(s, 0).contains(PIRATE),
                session.contains("PIRATE MODE"),
            )
        },
    );
    assert_eq!(outcome, ("Arrr.\n".to_string(), 1, true, false));
}

#[test]
fn input_transform_rewrites_quick_questions() {
    let outcome = parity(
        |s| s.answer(&Turn::text("Briefly.")),
        &[
            "-e",
            &example("input-transform.ts"),
            "-p",
            "?quick What is Rust?",
        ],
        |s, run| (run.code, conversation(s, 0)),
    );
    assert_eq!(
        outcome,
        (
            0,
            vec![(
                "user".to_string(),
                "Respond briefly in 1-2 sentences: What is Rust?".to_string()
            )]
        )
    );
}

#[test]
fn input_transform_handles_ping_without_the_model() {
    let outcome = parity(
        |_| {},
        &["-e", &example("input-transform.ts"), "-p", "ping"],
        |s, run| (run.code, run.stdout.clone(), asked(s)),
    );
    assert_eq!(outcome, (0, String::new(), 0));
}

#[test]
fn provider_payload_logs_each_request_and_response() {
    let outcome = parity(
        |s| {
            std::fs::create_dir_all(s.cwd.join(".pi")).expect(".pi");
            s.answer(&Turn::text("Logged."));
        },
        &["-e", &example("provider-payload.ts"), "-p", "hi"],
        |s, run| {
            let log =
                std::fs::read_to_string(s.cwd.join(".pi/provider-payload.log")).unwrap_or_default();
            let blocks: Vec<&str> = log.split("\n\n").filter(|b| !b.is_empty()).collect();
            // The logged payload is the body the provider received.
            let payload = blocks
                .first()
                .and_then(|b| serde_json::from_str::<Value>(b).ok());
            let statuses: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.split_once(' ').map(|(status, _)| status))
                .filter(|s| s.starts_with('['))
                .collect::<Vec<_>>();
            (
                run.code,
                blocks.len(),
                payload.is_some() && payload == request(s, 0),
                statuses.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        },
    );
    assert_eq!(outcome, (0, 2, true, vec!["[200]".to_string()]));
}

#[test]
fn tool_override_gates_and_logs_read() {
    let outcome = parity(
        |s| {
            s.write(".env", "SECRET=1\n");
            s.write("notes.txt", "plain notes\n");
            s.answer(
                &Turn::tool_call("call_1", "read", json!({"path": ".env"})).with_tool_call(
                    "call_2",
                    "read",
                    json!({"path": "notes.txt"}),
                ),
            );
            s.answer(&Turn::text("Done."));
        },
        &["-e", &example("tool-override.ts"), "-p", "read both"],
        |s, run| {
            let log =
                std::fs::read_to_string(s.agent_dir.join("read-access.log")).unwrap_or_default();
            // Each line without its timestamp.
            let log: Vec<String> = log
                .lines()
                .map(|l| unfill(s, l.split_once("] ").map_or(l, |(_, rest)| rest)))
                .collect();
            let reads = request(s, 0)
                .and_then(|b| b["tools"].as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter(|t| t["function"]["name"] == "read")
                .filter(|t| {
                    t["function"]["description"]
                        .as_str()
                        .is_some_and(|d| d.contains("access logging"))
                })
                .count();
            (
                run.code,
                reads,
                tool_result(s, 1, "call_1").map(|t| t.starts_with("Access denied")),
                tool_result(s, 1, "call_2"),
                log,
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            1,
            Some(true),
            Some("plain notes\n".to_string()),
            vec![
                "BLOCKED: {cwd}/.env (matches blocked pattern)".to_string(),
                "ALLOWED: {cwd}/notes.txt".to_string()
            ]
        )
    );
}

#[test]
fn auto_commit_on_exit_commits_with_the_last_answer() {
    let outcome = parity(
        |s| {
            git_repo(s);
            s.answer(&Turn::tool_call(
                "call_1",
                "write",
                json!({"path": "notes.md", "content": "notes\n"}),
            ));
            s.answer(&Turn::text("Added the notes file\nwith details"));
        },
        &[
            "-e",
            &example("auto-commit-on-exit.ts"),
            "-p",
            "write notes",
        ],
        |s, run| {
            (
                run.code,
                git(&s.cwd, &["log", "--format=%s"]),
                git(&s.cwd, &["status", "--porcelain"]),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            "[pi] Added the notes file\ninit\n".to_string(),
            String::new()
        )
    );
}

#[test]
fn bash_spawn_hook_sources_the_profile_and_sets_env() {
    let outcome = parity(
        |s| {
            std::fs::write(s.home.join(".profile"), "export GREETING=hi\n").expect(".profile");
            s.answer(&Turn::tool_call(
                "call_1",
                "bash",
                json!({"command": "echo hook=$PI_SPAWN_HOOK greeting=$GREETING"}),
            ));
            s.answer(&Turn::text("Done."));
        },
        &["-e", &example("bash-spawn-hook.ts"), "-p", "run it"],
        |s, run| (run.code, tool_result(s, 1, "call_1")),
    );
    assert_eq!(outcome, (0, Some("hook=1 greeting=hi\n".to_string())));
}

#[test]
fn bookmark_labels_the_last_answer() {
    let outcome = parity(
        |s| s.answer(&Turn::text("The answer.")),
        &["-e", &example("bookmark.ts"), "-p", "hi", "/bookmark best"],
        |s, run| {
            let entries = session(s);
            let answer = entries
                .iter()
                .rfind(|e| e["message"]["role"] == "assistant")
                .map(|e| e["id"].clone());
            let labels: Vec<(bool, Value)> = entries
                .iter()
                .filter(|e| e["type"] == "label")
                .map(|e| (Some(e["targetId"].clone()) == answer, e["label"].clone()))
                .collect();
            (run.code, labels)
        },
    );
    assert_eq!(outcome, (0, vec![(true, json!("best"))]));
}

#[test]
fn built_in_tool_renderer_keeps_the_tools_behaviour() {
    let outcome = parity(
        |s| {
            s.write("a.txt", "one\ntwo\n");
            s.answer(&Turn::tool_call(
                "call_1",
                "edit",
                json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "three"}]}),
            ));
            s.answer(
                &Turn::tool_call("call_2", "read", json!({"path": "a.txt"})).with_tool_call(
                    "call_3",
                    "bash",
                    json!({"command": "wc -l < a.txt"}),
                ),
            );
            s.answer(&Turn::text("Done."));
        },
        &["-e", &example("built-in-tool-renderer.ts"), "-p", "edit it"],
        |s, run| {
            (
                run.code,
                run.stdout.clone(),
                tool_result(s, 1, "call_1"),
                tool_result(s, 2, "call_2"),
                tool_result(s, 2, "call_3"),
                s.read("a.txt"),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            "Done.\n".to_string(),
            Some("Successfully replaced 1 block(s) in a.txt.".to_string()),
            Some("one\nthree\n".to_string()),
            Some("2\n".to_string()),
            "one\nthree\n".to_string()
        )
    );
}

#[test]
fn claude_rules_lists_rule_files_in_the_system_prompt() {
    let outcome = parity(
        |s| {
            std::fs::create_dir_all(s.cwd.join(".claude/rules")).expect("rules dir");
            s.write(".claude/rules/testing.md", "Write tests first.\n");
            s.answer(&Turn::text("Done."));
        },
        &["-e", &example("claude-rules.ts"), "-p", "hi"],
        |s, run| {
            let prompt = system_prompt_of(s, 0);
            let section = prompt
                .find("## Project Rules")
                .map(|at| prompt[at..].to_string());
            (run.code, section)
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            Some(
                "## Project Rules\n\nThe following project rules are available in .claude/rules/:\n\n\
                 - .claude/rules/testing.md\n\nWhen working on tasks related to these rules, use the \
                 read tool to load the relevant rule files for guidance.\n"
                    .to_string()
            )
        )
    );
}

/// dynamic-tools: `echo_session` registered in `session_start`, `shout` by `/add-echo-tool`.
fn dynamic_tools_scenario(s: &Sandbox) {
    s.answer(&Turn::tool_call(
        "call_1",
        "echo_session",
        json!({"message": "hi"}),
    ));
    s.answer(&Turn::tool_call(
        "call_2",
        "shout",
        json!({"message": "yo"}),
    ));
    s.answer(&Turn::text("Done."));
}

#[test]
fn dynamic_tools_registers_tools_at_start_and_by_command() {
    let outcome = parity(
        dynamic_tools_scenario,
        &[
            "-e",
            &example("dynamic-tools.ts"),
            "-p",
            "/add-echo-tool shout",
            "echo it",
        ],
        |s, run| {
            (
                run.code,
                offered(s, 0),
                tool_result(s, 1, "call_1"),
                tool_result(s, 2, "call_2"),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            ["read", "bash", "edit", "write", "echo_session", "shout"]
                .map(String::from)
                .to_vec(),
            Some("[session] hi".to_string()),
            Some("[shout] yo".to_string())
        )
    );
}

#[test]
#[ignore = "Tandem's system prompt leaves out registered tools' promptSnippet and promptGuidelines \
            (the host sends them in `registered`; server/coding's system prompt never uses them)"]
fn dynamic_tools_puts_snippets_and_guidelines_in_the_system_prompt() {
    let outcome = parity(
        dynamic_tools_scenario,
        &[
            "-e",
            &example("dynamic-tools.ts"),
            "-p",
            "/add-echo-tool shout",
            "echo it",
        ],
        |s, _| {
            let prompt = system_prompt_of(s, 0);
            [
                "echo_session: Echo back user-provided text with [session] prefix",
                "shout: Echo back user-provided text with [shout] prefix",
                "Use echo_session when the user asks for exact echo output.",
            ]
            .map(|line| prompt.contains(line))
        },
    );
    assert_eq!(outcome, [true, true, true]);
}

#[test]
fn entry_renderer_appends_a_status_card_entry() {
    let outcome = parity(
        |s| s.answer(&Turn::text("Noted.")),
        &[
            "-e",
            &example("entry-renderer.ts"),
            "-p",
            "/status-card Deploy ok",
            "hi",
        ],
        |s, run| {
            let cards: Vec<Value> = entries_of(s, "custom")
                .into_iter()
                .map(|e| json!([e["customType"], e["data"]["message"]]))
                .collect();
            // Durable, but not sent to the model.
            let sent = request(s, 0).is_some_and(|b| b.to_string().contains("Deploy ok"));
            (run.code, entry_kinds(s), cards, sent)
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            [
                "session",
                "model_change",
                "thinking_level_change",
                "custom",
                "message:system",
                "message:user",
                "message:assistant"
            ]
            .map(String::from)
            .to_vec(),
            vec![json!(["status-card", "Deploy ok"])],
            false
        )
    );
}

#[test]
#[ignore = "Tandem's print mode does not wait for the agent_end handler (the host is stopped \
            \"in agent_end\" at exit), and a sendUserMessage(…, {deliverAs: \"followUp\"}) from an \
            idle session is kept for a next prompt instead of starting a turn \
            (server/coding/src/agent_session/handle.rs `queue`)"]
fn git_merge_and_resolve_asks_the_model_to_resolve_conflicts() {
    let outcome = parity(
        |s| {
            // An upstream that moved on, and a local commit that conflicts with it.
            let origin = s.home.join("origin");
            let other = s.home.join("other");
            std::fs::create_dir_all(&origin).expect("origin");
            git(&origin, &["init", "-q", "--bare"]);
            git_repo(s);
            git(
                &s.cwd,
                &["remote", "add", "origin", &origin.display().to_string()],
            );
            git(&s.cwd, &["push", "-q", "-u", "origin", "main"]);
            git(
                &s.home,
                &["clone", "-q", &origin.display().to_string(), "other"],
            );
            std::fs::write(other.join("a.txt"), "theirs\n").expect("theirs");
            git(&other, &["commit", "-qam", "theirs"]);
            git(&other, &["push", "-q", "origin", "main"]);
            s.write("a.txt", "ours\n");
            git(&s.cwd, &["commit", "-qam", "ours"]);
            s.answer(&Turn::text("Done."));
            s.answer(&Turn::tool_call(
                "call_1",
                "bash",
                json!({"command": "echo resolved > a.txt && git add a.txt && git commit -q --no-edit"}),
            ));
            s.answer(&Turn::text("Resolved."));
        },
        &["-e", &example("git-merge-and-resolve.ts"), "-p", "work"],
        |s, run| {
            let follow_up = conversation(s, 1).get(2).cloned();
            (
                run.code,
                run.stdout.clone(),
                asked(s),
                follow_up,
                s.read("a.txt"),
                git(&s.cwd, &["log", "--format=%s", "-1"]),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            "Resolved.\n".to_string(),
            3,
            Some((
                "user".to_string(),
                "Merged origin/main with conflicts:\n\n  a.txt:1-5 (ours 2, theirs 4)\n\nResolve these conflicts."
                    .to_string()
            )),
            "resolved\n".to_string(),
            "Merge remote-tracking branch 'origin/main'\n".to_string()
        )
    );
}

#[test]
fn inline_bash_expands_commands_in_the_prompt() {
    let outcome = parity(
        |s| s.answer(&Turn::text("ok")),
        &[
            "-e",
            &example("inline-bash.ts"),
            "-p",
            "Count: !{echo 42} in !{basename $PWD}",
        ],
        |s, run| (run.code, conversation(s, 0)),
    );
    assert_eq!(
        outcome,
        (
            0,
            vec![("user".to_string(), "Count: 42 in project".to_string())]
        )
    );
}

#[test]
fn input_transform_streaming_appends_the_diff_stat() {
    let outcome = parity(
        |s| {
            git_repo(s);
            s.write("a.txt", "one\ntwo\n");
            s.answer(&Turn::text("ok"));
        },
        &[
            "-e",
            &example("input-transform-streaming.ts"),
            "-p",
            "what changes did I make?",
        ],
        |s, run| (run.code, conversation(s, 0)),
    );
    assert_eq!(
        outcome,
        (
            0,
            vec![(
                "user".to_string(),
                "what changes did I make?\n\nCurrent uncommitted changes:\n```\na.txt | 1 +\n 1 file changed, 1 insertion(+)\n```"
                    .to_string()
            )]
        )
    );
}

#[test]
fn mac_system_theme_loads_and_lets_the_run_finish() {
    // Off macOS `osascript` fails, the theme stays light and the interval it starts is cleared
    // at shutdown: the run answers and exits as without it.
    let outcome = parity(
        |s| s.answer(&Turn::text("Done.")),
        &["-e", &example("mac-system-theme.ts"), "-p", "hi"],
        |s, run| (run.code, run.stdout.clone(), asked(s)),
    );
    assert_eq!(outcome, (0, "Done.\n".to_string(), 1));
}

#[test]
fn message_renderer_status_message_reaches_the_model() {
    let outcome = parity(
        |s| s.answer(&Turn::text("ok")),
        &[
            "-e",
            &example("message-renderer.ts"),
            "-p",
            "/status warn Disk low",
            "hi",
        ],
        |s, run| {
            let messages: Vec<Value> = entries_of(s, "custom_message")
                .into_iter()
                .map(|e| {
                    json!([
                        e["customType"],
                        e["content"],
                        e["display"],
                        e["details"]["level"]
                    ])
                })
                .collect();
            (run.code, entry_kinds(s), messages, conversation(s, 0))
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            [
                "session",
                "model_change",
                "thinking_level_change",
                "custom_message",
                "message:system",
                "message:user",
                "message:assistant"
            ]
            .map(String::from)
            .to_vec(),
            vec![json!(["status-update", "Disk low", true, "warn"])],
            vec![
                ("user".to_string(), "Disk low".to_string()),
                ("user".to_string(), "hi".to_string())
            ]
        )
    );
}

#[test]
fn minimal_mode_activates_find_grep_and_ls() {
    let outcome = parity(
        |s| {
            s.write("a.txt", "one\n");
            s.answer(&Turn::tool_call("call_1", "ls", json!({})));
            s.answer(&Turn::text("Listed."));
        },
        &["-e", &example("minimal-mode.ts"), "-p", "list"],
        |s, run| (run.code, offered(s, 0), tool_result(s, 1, "call_1")),
    );
    assert_eq!(
        outcome,
        (
            0,
            ["read", "bash", "edit", "write", "find", "grep", "ls"]
                .map(String::from)
                .to_vec(),
            Some("a.txt".to_string())
        )
    );
}

#[test]
#[ignore = "an extension's process.stdout.write goes to the extension host's log in Tandem (its \
            stdout is never the protocol nor Tandem's own output), so the OSC 777 notification pi \
            writes is not shown"]
fn notify_writes_an_osc_777_notification() {
    let outcome = parity(
        |s| s.answer(&Turn::text("Done.")),
        &["-e", &example("notify.ts"), "-p", "hi"],
        |_, run| {
            (
                run.code,
                run.stdout.clone(),
                run.stderr
                    .contains("\u{1b}]777;notify;Pi;Ready for input\u{7}"),
            )
        },
    );
    assert_eq!(outcome, (0, "Done.\n".to_string(), true));
}

#[test]
fn plan_mode_restricts_tools_and_blocks_destructive_bash() {
    let outcome = parity(
        |s| {
            std::fs::create_dir_all(s.cwd.join("build")).expect("build");
            s.answer(&Turn::tool_call(
                "call_1",
                "bash",
                json!({"command": "rm -rf build"}),
            ));
            s.answer(&Turn::text("Plan:\n1. Read the code\n2. Fix the bug"));
        },
        &[
            "-e",
            &example("plan-mode/index.ts"),
            "-p",
            "/plan",
            "look around",
        ],
        |s, run| {
            let state: Vec<Value> = entries_of(s, "custom")
                .into_iter()
                .map(|e| json!([e["customType"], e["data"]["enabled"]]))
                .collect();
            let context = conversation(s, 0)
                .get(1)
                .map(|(role, text)| (role.clone(), text.starts_with("[PLAN MODE ACTIVE]")));
            (
                run.code,
                offered(s, 0),
                context,
                tool_result(s, 1, "call_1"),
                s.cwd.join("build").is_dir(),
                state,
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            ["read", "bash", "grep", "find", "ls"].map(String::from).to_vec(),
            Some(("user".to_string(), true)),
            Some(
                "Plan mode: command blocked (not allowlisted). Use /plan to disable plan mode first.\nCommand: rm -rf build"
                    .to_string()
            ),
            true,
            vec![json!(["plan-mode", true])]
        )
    );
}

#[test]
#[ignore = "before_agent_start's event.systemPromptOptions is an empty object in Tandem \
            (server/tandem/src/extensions/mod.rs sends `\"systemPromptOptions\": {}`) and Tandem's \
            prompt has no sections to change, so the tool guidance never reaches the model"]
fn prompt_customizer_adds_tool_guidance() {
    let outcome = parity(
        |s| s.answer(&Turn::text("ok")),
        &["-e", &example("prompt-customizer.ts"), "-p", "hi"],
        |s, run| {
            let prompt = system_prompt_of(s, 0);
            (
                run.code,
                [
                    "- Use `read` for file contents; it supports text and images.",
                    "- For large files, use `offset` and `limit` to read in chunks.",
                    "- Use `bash` for file operations such as `ls`, `find`, and `grep`.",
                    "- Use `edit` for precise text replacements that match existing content exactly.",
                    "- Use `write` to create new files or replace existing files completely.",
                ]
                .map(|line| prompt.contains(line)),
            )
        },
    );
    assert_eq!(outcome, (0, [true; 5]));
}

#[test]
fn reload_runtime_tool_ends_the_run() {
    let outcome = parity(
        |s| {
            s.answer(&Turn::tool_call("call_1", "reload_runtime", json!({})));
            s.answer(&Turn::text("not asked"));
        },
        &["-e", &example("reload-runtime.ts"), "-p", "reload"],
        |s, run| {
            let results: Vec<Value> = entries_of(s, "message")
                .iter()
                .filter(|e| e["message"]["role"] == "toolResult")
                .map(|e| e["message"]["content"][0]["text"].clone())
                .collect();
            (run.code, run.stdout.clone(), asked(s), results)
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            String::new(),
            1,
            vec![json!("Reload requested. Pi reloads after this response.")]
        )
    );
}

#[test]
fn session_name_names_the_session() {
    let outcome = parity(
        |s| s.answer(&Turn::text("ok")),
        &[
            "-e",
            &example("session-name.ts"),
            "-p",
            "/session-name Refactor auth",
            "hi",
        ],
        |s, run| (run.code, entries_of(s, "session_info")),
    );
    assert_eq!(
        outcome,
        (
            0,
            vec![json!({"type": "session_info", "name": "Refactor auth"})]
        )
    );
}

#[test]
#[ignore = "Tandem does not take extension CLI flags (pi.registerFlag): `--ssh box:/remote` is not \
            read as the flag (its value becomes a prompt) and pi.getFlag(\"ssh\") is not the string, \
            so session_start fails and the tools stay local"]
fn ssh_runs_tools_on_the_remote() {
    let outcome = parity_env(
        |s| {
            // `ssh HOST COMMAND` runs COMMAND here: the "remote" is another folder.
            stand_in(s, "ssh", "#!/bin/sh\nshift\nexec bash -c \"$1\"\n");
            std::fs::create_dir_all(s.home.join("remote")).expect("remote");
            std::fs::write(s.home.join("remote/notes.txt"), "remote notes\n").expect("notes");
            s.write("notes.txt", "local notes\n");
            s.answer(&Turn::tool_call(
                "call_1",
                "read",
                json!({"path": "notes.txt"}),
            ));
            s.answer(&Turn::text("Read."));
        },
        &[
            "-e",
            &example("ssh.ts"),
            "--ssh",
            "box:{home}/remote",
            "-p",
            "read notes",
        ],
        &[("PATH", &path_with_stand_ins())],
        |s, run| {
            (
                run.code,
                conversation(s, 0).first().cloned(),
                tool_result(s, 1, "call_1"),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            Some(("user".to_string(), "read notes".to_string())),
            Some("remote notes\n".to_string())
        )
    );
}

#[test]
fn structured_output_ends_the_run_on_its_tool() {
    let outcome = parity(
        |s| {
            s.answer(&Turn::tool_call(
                "call_1",
                "structured_output",
                json!({"headline": "Release", "summary": "All good.", "actionItems": ["tag", "ship"]}),
            ));
            s.answer(&Turn::text("not asked"));
        },
        &["-e", &example("structured-output.ts"), "-p", "summarize"],
        |s, run| {
            let results: Vec<Value> = entries_of(s, "message")
                .iter()
                .filter(|e| e["message"]["role"] == "toolResult")
                .map(|e| json!([e["message"]["content"][0]["text"], e["message"]["details"]]))
                .collect();
            (run.code, run.stdout.clone(), asked(s), results)
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            String::new(),
            1,
            vec![json!([
                "Saved structured output: Release",
                {"headline": "Release", "summary": "All good.", "actionItems": ["tag", "ship"]}
            ])]
        )
    );
}

#[test]
fn truncated_tool_truncates_rg_output() {
    // ripgrep is not installed everywhere: a stand-in that answers like `rg --line-number`.
    const RG: &str = "#!/bin/sh\n# rg --line-number --color=never [--glob G] PATTERN PATH\n\
                      shift 2\n[ \"$1\" = --glob ] && shift 2\nexec grep -rn -- \"$1\" \"$2\"\n";
    let outcome = parity_env(
        |s| {
            stand_in(s, "rg", RG);
            std::fs::create_dir_all(s.cwd.join("src")).expect("src");
            s.write("src/a.txt", "alpha\nneedle one\nbeta\n");
            let big: String = (1..=3000).map(|n| format!("needle {n}\n")).collect();
            s.write("src/big.txt", &big);
            s.answer(
                &Turn::tool_call(
                    "call_1",
                    "rg",
                    json!({"pattern": "needle", "path": "src/a.txt"}),
                )
                .with_tool_call(
                    "call_2",
                    "rg",
                    json!({"pattern": "needle", "path": "src/big.txt"}),
                )
                .with_tool_call(
                    "call_3",
                    "rg",
                    json!({"pattern": "nothing", "path": "src"}),
                ),
            );
            s.answer(&Turn::text("Found."));
        },
        &["-e", &example("truncated-tool.ts"), "-p", "search"],
        &[("PATH", &path_with_stand_ins()), ("TMPDIR", "{home}")],
        |s, run| {
            let big = tool_result(s, 1, "call_2").unwrap_or_default();
            let (shown, notice) = big
                .split_once("\n\n[Output truncated: ")
                .unwrap_or((&big, ""));
            // The full output's file, in TMPDIR.
            let saved = notice
                .split_once("Full output saved to: ")
                .map(|(_, path)| path.trim_end_matches(']'))
                .and_then(|path| std::fs::read_to_string(path).ok())
                .map(|text| text.lines().count());
            (
                run.code,
                tool_result(s, 1, "call_1"),
                shown.lines().count(),
                unfill(s, notice)
                    .split(" Full output")
                    .next()
                    .map(str::to_string),
                saved,
                tool_result(s, 1, "call_3"),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            Some("2:needle one\n".to_string()),
            2000,
            Some(
                "showing 2000 of 3000 lines (31.0KB of 47.6KB). 1000 lines (16.6KB) omitted."
                    .to_string()
            ),
            Some(3000),
            Some("No matches found".to_string())
        )
    );
}

#[test]
#[ignore = "Tandem sends extensions no provider_stream_event, so debug-provider captures nothing and \
            appends no debug-provider-events entry"]
fn debug_provider_records_raw_stream_events() {
    let outcome = parity(
        |s| s.answer(&Turn::text("Hello there.")),
        &[
            "-e",
            &example("debug-provider.ts"),
            "-p",
            "/debug-provider on",
            "hi",
        ],
        |s, run| {
            let captured: Vec<Value> = entries_of(s, "custom")
                .into_iter()
                .map(|e| {
                    let data = &e["data"];
                    let chunks = data["events"].as_array().map_or(0, Vec::len);
                    json!([
                        e["customType"],
                        data["provider"],
                        data["api"],
                        data["model"],
                        chunks > 0
                    ])
                })
                .collect();
            (run.code, captured)
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            vec![json!([
                "debug-provider-events",
                "mock",
                "openai-completions",
                "mock-model",
                true
            ])]
        )
    );
}

#[test]
#[ignore = "subagent re-runs the program its host runs in (process.argv[1]): in pi that is pi's CLI, \
            in Tandem the extension host's own main.mjs, so the subagent never asks a model and \
            the tool answers \"(no output)\""]
fn subagent_delegates_to_a_pi_process() {
    let outcome = parity(
        |s| {
            std::fs::create_dir_all(s.agent_dir.join("agents")).expect("agents");
            s.write_agent_file(
                "agents/helper.md",
                "---\nname: helper\ndescription: Answers small questions\ntools: read\n---\nYou are a helper.\n",
            );
            s.answer(&Turn::tool_call(
                "call_1",
                "subagent",
                json!({"agent": "helper", "task": "say hi"}),
            ));
            s.answer(&Turn::text("Hi from the helper."));
            s.answer(&Turn::text("The helper said hi."));
        },
        &["-e", &example("subagent/index.ts"), "-p", "delegate"],
        |s, run| {
            (
                run.code,
                run.stdout.clone(),
                conversation(s, 1),
                offered(s, 1),
                tool_result(s, 2, "call_1"),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            "The helper said hi.\n".to_string(),
            vec![("user".to_string(), "Task: say hi".to_string())],
            vec!["read".to_string()],
            Some("Hi from the helper.".to_string())
        )
    );
}

#[test]
fn with_deps_resolves_its_own_dependency() {
    let outcome = parity(
        |s| {
            s.answer(&Turn::tool_call(
                "call_1",
                "parse_duration",
                json!({"duration": "2 days"}),
            ));
            s.answer(&Turn::text("ok"));
        },
        &["-e", &example("with-deps"), "-p", "parse"],
        |s, run| (run.code, tool_result(s, 1, "call_1")),
    );
    assert_eq!(
        outcome,
        (0, Some("2 days = 172800000 milliseconds".to_string()))
    );
}

#[test]
#[ignore = "Tandem does not send resources_discover (protocol-ext/EXTENSIONS.md: composed by the host, \
            not sent yet), so the example's prompt template and skill never load"]
fn dynamic_resources_adds_a_skill_and_a_prompt_template() {
    let outcome = parity(
        |s| s.answer(&Turn::text("ok")),
        &["-e", &example("dynamic-resources"), "-p", "/dynamic"],
        |s, run| {
            (
                run.code,
                conversation(s, 0),
                system_prompt_of(s, 0).contains("<name>dynamic-resources</name>"),
            )
        },
    );
    assert_eq!(
        outcome,
        (
            0,
            vec![(
                "user".to_string(),
                "Summarize the current repository structure and mention any build or test commands."
                    .to_string()
            )],
            true
        )
    );
}

// --- RPC mode --------------------------------------------------------------------------------

#[test]
#[ignore = "pi.getCommands() in Tandem lists extension commands only, not prompt templates or skills \
            (Tandem's state mirror has no `commands`), and the source path of an -e extension is its \
            canonical path (server/tandem/src/extensions/discover.rs canonicalizes; pi keeps the \
            path as given, here through target/pi16/package's symlink)"]
fn commands_lists_extension_prompt_and_skill_commands() {
    let commands = example("commands.ts");
    let outcome = rpc_parity(
        |s| {
            std::fs::create_dir_all(s.agent_dir.join("prompts")).expect("prompts");
            std::fs::create_dir_all(s.agent_dir.join("skills/deploy")).expect("skills");
            s.write_agent_file(
                "prompts/review.md",
                "---\ndescription: Review the diff\n---\nReview it.\n",
            );
            s.write_agent_file(
                "skills/deploy/SKILL.md",
                "---\nname: deploy\ndescription: Deploy the app\n---\nSteps.\n",
            );
        },
        // Without pi's own bundled extensions (`/llama`, `/mcp`), which Tandem does not have.
        &["--no-extensions", "-e", &commands],
        &[
            json!({"value": "/commands - List available slash commands"}),
            json!({"confirmed": true}),
        ],
        |rpc| {
            rpc.prompt("/commands");
        },
        |_, lines| ui_requests(lines),
    );
    assert_eq!(
        outcome,
        vec![
            json!({"type": "extension_ui_request", "method": "select", "title": "Available Commands",
                "options": ["--- Extensions ---", "/commands - List available slash commands",
                    "--- Prompts ---", "/review - Review the diff",
                    "--- Skills ---", "/skill:deploy - Deploy the app"]}),
            json!({"type": "extension_ui_request", "method": "confirm", "title": "commands",
                "message": format!("View source path?\n{commands}")}),
            json!({"type": "extension_ui_request", "method": "notify", "message": commands,
                "notifyType": "info"}),
        ]
    );
}

#[test]
fn confirm_destructive_asks_before_a_new_session() {
    let outcome = rpc_parity(
        |s| s.answer(&Turn::text("ok")),
        &["-e", &example("confirm-destructive.ts")],
        &[json!({"confirmed": false}), json!({"confirmed": true})],
        |rpc| {
            rpc.prompt("hi");
            rpc.command(json!({"type": "new_session"}));
            rpc.command(json!({"type": "new_session"}));
        },
        |_, lines| {
            let answers: Vec<Value> = lines
                .iter()
                .filter(|l| l["type"] == "response" && l["command"] == "new_session")
                .map(|l| l["data"].clone())
                .collect();
            (ui_requests(lines), answers)
        },
    );
    let confirm = json!({"type": "extension_ui_request", "method": "confirm",
        "title": "Clear session?", "message": "This will delete all messages in the current session."});
    assert_eq!(
        outcome,
        (
            vec![
                confirm.clone(),
                json!({"type": "extension_ui_request", "method": "notify",
                    "message": "Clear cancelled", "notifyType": "info"}),
                confirm
            ],
            vec![json!({"cancelled": true}), json!({"cancelled": false})]
        )
    );
}

#[test]
#[ignore = "Tandem never sends session_before_compact (only its timeout is configured, in \
            server/tandem/src/extensions/mod.rs), so the handler does not run and Tandem compacts \
            its own way; the handler's ctx.modelRegistry.complete() is not offered to extensions \
            either"]
fn custom_compaction_summarizes_with_its_own_model() {
    let outcome = rpc_parity(
        |s| {
            // The example summarizes with google/gemini-2.5-flash: that name, served by the mock.
            let base = s.api.base_url(&s.mock.base_url());
            s.write_models(json!({"providers": {
                "mock": {"baseUrl": base, "api": "openai-completions", "apiKey": "test-key",
                    "models": [{"id": "mock-model"}]},
                "google": {"baseUrl": base, "api": "openai-completions", "apiKey": "test-key",
                    "models": [{"id": "gemini-2.5-flash"}]},
            }}));
            s.write_settings(json!({"compaction": {"keepRecentTokens": 1}}));
            s.answer(&Turn::text("First answer."));
            s.answer(&Turn::text("Second answer."));
            s.answer(&Turn::text("## Custom summary\nEverything so far."));
        },
        &["-e", &example("custom-compaction.ts")],
        &[],
        |rpc| {
            rpc.prompt("one");
            rpc.prompt("two");
            rpc.command(json!({"type": "compact"}));
        },
        |s, lines| {
            let summary_request = conversation(s, 2).first().map(|(role, text)| {
                (
                    role.clone(),
                    text.starts_with("You are a conversation summarizer."),
                )
            });
            let summaries: Vec<Value> = entries_of(s, "compaction")
                .into_iter()
                .map(|e| e["summary"].clone())
                .collect();
            (
                notifications(lines).first().cloned(),
                summary_request,
                summaries,
            )
        },
    );
    assert_eq!(
        outcome,
        (
            Some("Custom compaction extension triggered".to_string()),
            Some(("user".to_string(), true)),
            vec![json!("## Custom summary\nEverything so far.")]
        )
    );
}

#[test]
fn dirty_repo_guard_stops_a_new_session_in_a_dirty_repo() {
    let outcome = rpc_parity(
        |s| {
            git_repo(s);
            s.write("dirty.txt", "x\n");
        },
        &["-e", &example("dirty-repo-guard.ts")],
        &[
            json!({"value": "No, let me commit first"}),
            json!({"value": "Yes, proceed anyway"}),
        ],
        |rpc| {
            rpc.command(json!({"type": "new_session"}));
            rpc.command(json!({"type": "new_session"}));
        },
        |_, lines| {
            let answers: Vec<Value> = lines
                .iter()
                .filter(|l| l["type"] == "response" && l["command"] == "new_session")
                .map(|l| l["data"].clone())
                .collect();
            (ui_requests(lines), answers)
        },
    );
    let select = json!({"type": "extension_ui_request", "method": "select",
        "title": "You have 1 uncommitted file(s). new session anyway?",
        "options": ["Yes, proceed anyway", "No, let me commit first"]});
    assert_eq!(
        outcome,
        (
            vec![
                select.clone(),
                json!({"type": "extension_ui_request", "method": "notify",
                    "message": "Commit your changes first", "notifyType": "warning"}),
                select
            ],
            vec![json!({"cancelled": true}), json!({"cancelled": false})]
        )
    );
}

#[test]
fn event_bus_delivers_events_between_handlers() {
    let outcome = rpc_parity(
        |_| {},
        &["-e", &example("event-bus.ts")],
        &[],
        |rpc| {
            rpc.prompt("/emit build done");
        },
        |_, lines| notifications(lines),
    );
    assert_eq!(
        outcome,
        vec![
            "Event from event-bus-example: Session started".to_string(),
            "Event from /emit command: build done".to_string()
        ]
    );
}

/// The trigger file file-trigger.ts watches (a fixed path of the example's).
const TRIGGER_FILE: &str = "/tmp/agent-trigger.txt";

#[test]
#[ignore = "a pi.sendMessage(…, {triggerTurn: true}) from an idle session is kept for the next prompt \
            in Tandem instead of starting a turn (server/coding/src/agent_session/handle.rs `queue`)"]
fn file_trigger_turns_a_file_into_a_message() {
    let outcome = rpc_parity(
        |s| {
            std::fs::write(TRIGGER_FILE, "").expect("trigger file");
            s.answer(&Turn::text("Running them."));
        },
        &["-e", &example("file-trigger.ts")],
        &[],
        |rpc| {
            // Its session_start watches the file, then says so.
            rpc.until("the watching notice", |v| v["method"] == "notify");
            std::fs::write(TRIGGER_FILE, "Run the tests\n").expect("trigger");
            rpc.until("agent_settled", |v| v["type"] == "agent_settled");
        },
        |s, lines| {
            let custom: Vec<Value> = entries_of(s, "custom_message")
                .into_iter()
                .map(|e| json!([e["customType"], e["content"]]))
                .collect();
            let cleared = std::fs::read_to_string(TRIGGER_FILE).unwrap_or_default();
            (notifications(lines), conversation(s, 0), custom, cleared)
        },
    );
    assert_eq!(
        outcome,
        (
            vec![format!("Watching {TRIGGER_FILE}")],
            vec![(
                "user".to_string(),
                "External trigger: Run the tests".to_string()
            )],
            vec![json!(["file-trigger", "External trigger: Run the tests"])],
            String::new()
        )
    );
}

#[test]
#[ignore = "racy in Tandem, which now and then offers to restore a checkpoint pi never offers: \
            ctx.sessionManager.getLeafEntry() in tool_result is still the user message (pi: the \
            assistant message that called the tool), the entry /fork forks from, and since Tandem \
            does not wait for turn_start handlers, agent_settled's clear() can run before \
            turn_start's `git stash create` stores the checkpoint"]
fn git_checkpoint_forks_without_offering_a_restore() {
    let outcome = rpc_parity(
        |s| {
            git_repo(s);
            s.answer(&Turn::tool_call(
                "call_1",
                "write",
                json!({"path": "a.txt", "content": "changed\n"}),
            ));
            s.answer(&Turn::text("ok"));
        },
        &["-e", &example("git-checkpoint.ts")],
        &[json!({"value": "Yes, restore code to that point"})],
        |rpc| {
            rpc.prompt("change a");
            let forks = rpc.command(json!({"type": "get_fork_messages"}));
            let entry = forks["data"]["messages"][0]["entryId"].clone();
            rpc.command(json!({"type": "fork", "entryId": entry}));
        },
        |s, lines| {
            let fork: Vec<Value> = lines
                .iter()
                .filter(|l| l["type"] == "response" && l["command"] == "fork")
                .map(|l| l["data"].clone())
                .collect();
            (ui_requests(lines), fork, s.read("a.txt"))
        },
    );
    assert_eq!(
        outcome,
        (
            Vec::new(),
            vec![json!({"text": "change a", "cancelled": false})],
            "changed\n".to_string()
        )
    );
}

#[test]
fn github_issue_autocomplete_reports_a_non_github_checkout() {
    // The completions themselves belong to pi's editor; what RPC shows is the repository check.
    let outcome = rpc_parity(
        |s| {
            git_repo(s);
            git(
                &s.cwd,
                &["remote", "add", "origin", "https://gitlab.com/acme/app.git"],
            );
        },
        &["-e", &example("github-issue-autocomplete.ts")],
        &[],
        |rpc| {
            rpc.command(json!({"type": "get_state"}));
        },
        |_, lines| ui_requests(lines),
    );
    assert_eq!(
        outcome,
        vec![json!({"type": "extension_ui_request", "method": "notify",
            "message": "github-issue-autocomplete: cwd is not a GitHub repository",
            "notifyType": "error"})]
    );
}

#[test]
fn hidden_thinking_label_command_confirms_the_label() {
    let outcome = rpc_parity(
        |_| {},
        &["-e", &example("hidden-thinking-label.ts")],
        &[],
        |rpc| {
            rpc.prompt("/thinking-label Mulling");
            rpc.prompt("/thinking-label");
        },
        |_, lines| ui_requests(lines),
    );
    assert_eq!(
        outcome,
        vec![
            json!({"type": "extension_ui_request", "method": "notify",
                "message": "Hidden thinking label set to: Mulling", "notifyType": "info"}),
            json!({"type": "extension_ui_request", "method": "notify",
                "message": "Hidden thinking label reset to: Pondering...", "notifyType": "info"}),
        ]
    );
}

#[test]
#[ignore = "Tandem never sends extensions model_select (RPC set_model changes the model silently)"]
fn model_status_reports_a_model_change() {
    let outcome = rpc_parity(
        |s| {
            let base = s.api.base_url(&s.mock.base_url());
            s.write_models(json!({"providers": {"mock": {"baseUrl": base,
                "api": "openai-completions", "apiKey": "test-key",
                "models": [{"id": "mock-model"}, {"id": "mock-large"}]}}}));
        },
        &["-e", &example("model-status.ts")],
        &[],
        |rpc| {
            rpc.command(json!({"type": "set_model", "provider": "mock", "modelId": "mock-large"}));
        },
        |_, lines| ui_requests(lines),
    );
    assert_eq!(
        outcome,
        vec![
            json!({"type": "extension_ui_request", "method": "notify",
                "message": "Model: mock/mock-large", "notifyType": "info"}),
            json!({"type": "extension_ui_request", "method": "setStatus",
                "statusKey": "model", "statusText": "\u{1f916} mock-large"}),
        ]
    );
}

#[test]
#[ignore = "ctx.reload() is not available in Tandem's extension host (the command fails), so the \
            extensions do not reload and session_start does not run again"]
fn reload_runtime_command_reloads_extensions() {
    // event-bus.ts notifies in every session_start: the witness of the reload.
    let outcome = rpc_parity(
        |_| {},
        &[
            "-e",
            &example("reload-runtime.ts"),
            "-e",
            &example("event-bus.ts"),
        ],
        &[],
        |rpc| {
            rpc.prompt("/reload-runtime");
        },
        |_, lines| notifications(lines),
    );
    assert_eq!(
        outcome,
        vec!["Event from event-bus-example: Session started".to_string(); 2]
    );
}

#[test]
#[ignore = "racy in Tandem: Tandem forwards agent events to extensions from a task of their own without waiting \
            for the handlers (server/tandem/src/extensions/mod.rs `bind_as`), so the last turn_end's \
            setStatus can come after agent_settled and is lost when the session shuts down right \
            after: intermittently no `Turn 2 done` (pi awaits each event's handlers)"]
fn rpc_demo_asks_before_a_dangerous_command() {
    let outcome = rpc_parity(
        |s| {
            std::fs::create_dir_all(s.cwd.join("build")).expect("build");
            s.answer(&Turn::tool_call(
                "call_1",
                "bash",
                json!({"command": "rm -rf build"}),
            ));
            s.answer(&Turn::text("Left it."));
        },
        &["-e", &example("rpc-demo.ts")],
        &[json!({"value": "Block"})],
        |rpc| {
            rpc.prompt("clean up");
        },
        |s, lines| {
            (
                ui_requests(lines),
                tool_result(s, 1, "call_1"),
                s.cwd.join("build").is_dir(),
            )
        },
    );
    let status = |text: &str| {
        json!({"type": "extension_ui_request", "method": "setStatus", "statusKey": "rpc-demo",
            "statusText": text})
    };
    assert_eq!(
        outcome,
        (
            vec![
                json!({"type": "extension_ui_request", "method": "setTitle", "title": "pi RPC Demo"}),
                json!({"type": "extension_ui_request", "method": "setWidget", "widgetKey": "rpc-demo",
                    "widgetLines": ["--- RPC Extension UI Demo ---", "Loaded and ready."]}),
                status("Turns: 0"),
                status("Turn 1 running..."),
                json!({"type": "extension_ui_request", "method": "select",
                    "title": "Dangerous command: rm -rf build", "options": ["Allow", "Block"]}),
                json!({"type": "extension_ui_request", "method": "notify",
                    "message": "Command blocked by user", "notifyType": "warning"}),
                status("Turn 1 done"),
                status("Turn 2 running..."),
                status("Turn 2 done"),
            ],
            Some("Blocked by user".to_string()),
            true
        )
    );
}

#[test]
fn send_user_message_ask_starts_a_turn() {
    let outcome = rpc_parity(
        |s| s.answer(&Turn::text("Four.")),
        &["-e", &example("send-user-message.ts")],
        &[],
        |rpc| {
            let response = rpc.prompt("/ask What is 2+2?");
            assert_eq!(response["data"]["disposition"], "handled");
            rpc.until("agent_settled", |v| v["type"] == "agent_settled");
        },
        |s, _| (conversation(s, 0), entry_kinds(s)),
    );
    assert_eq!(
        outcome,
        (
            vec![("user".to_string(), "What is 2+2?".to_string())],
            [
                "session",
                "model_change",
                "thinking_level_change",
                "message:system",
                "message:user",
                "message:assistant"
            ]
            .map(String::from)
            .to_vec()
        )
    );
}

#[test]
#[ignore = "ctx.shutdown() is ignored in Tandem (the host's `agent/shutdown` notification has no \
            handler in server/tandem/src/extensions/mod.rs), so /quit leaves the RPC session running"]
fn shutdown_command_quit_exits() {
    let outcome = rpc_parity(
        |_| {},
        &["-e", &example("shutdown-command.ts")],
        &[],
        |rpc| {
            rpc.prompt("/quit");
            // pi exits by itself: its output ends with stdin still open.
            while rpc.next("the end of its output").is_some() {}
        },
        |_, lines| {
            lines
                .iter()
                .filter(|l| l["type"] == "response")
                .map(|l| l["data"].clone())
                .collect::<Vec<_>>()
        },
    );
    assert_eq!(outcome, vec![json!({"disposition": "handled"})]);
}

/// status-line's status texts after one turn.
fn status_line_statuses(strip: bool) -> Vec<Value> {
    rpc_parity(
        |s| s.answer(&Turn::text("ok")),
        &["-e", &example("status-line.ts")],
        &[],
        |rpc| {
            rpc.prompt("hi");
        },
        |_, lines| {
            ui_of(lines, "setStatus")
                .iter()
                .map(|r| {
                    if strip {
                        visible(&r["statusText"])
                    } else {
                        r["statusText"].clone()
                    }
                })
                .collect::<Vec<_>>()
        },
    )
}

#[test]
#[ignore = "racy in Tandem: Tandem forwards agent events to extensions from a task of their own without waiting \
            for the handlers (server/tandem/src/extensions/mod.rs `bind_as`), so the last turn_end's \
            setStatus can come after agent_settled and is lost when the session shuts down right \
            after: intermittently no `Turn 1 complete` (pi awaits each event's handlers)"]
fn status_line_shows_turn_progress() {
    assert_eq!(
        status_line_statuses(true),
        vec![
            json!("Ready"),
            json!("● Turn 1..."),
            json!("✓ Turn 1 complete")
        ]
    );
}

#[test]
#[ignore = "Tandem's ctx.ui.theme styles nothing by design (extension-host/src/theme.mjs), so status \
            texts reach an RPC client plain; pi's carry the theme's ANSI colours (and the race of \
            status_line_shows_turn_progress)"]
fn status_line_status_is_themed_like_pi() {
    assert_eq!(
        status_line_statuses(false),
        vec![
            json!("\u{1b}[39m\u{1b}[2mReady\u{1b}[22;39m"),
            json!("\u{1b}[38;5;5m●\u{1b}[39m\u{1b}[39m\u{1b}[2m Turn 1...\u{1b}[22;39m"),
            json!("\u{1b}[38;5;2m✓\u{1b}[39m\u{1b}[39m\u{1b}[2m Turn 1 complete\u{1b}[22;39m"),
        ]
    );
}

#[test]
fn system_prompt_header_reports_the_prompt_length() {
    let outcome = rpc_parity(
        |s| s.answer(&Turn::text("ok")),
        &["-e", &example("system-prompt-header.ts")],
        &[],
        |rpc| {
            rpc.prompt("hi");
        },
        |s, lines| {
            // Each program's own prompt: the length shown is that of the prompt the model got.
            let length = system_prompt_of(s, 0).chars().count();
            ui_of(lines, "setStatus")
                .iter()
                .map(|r| {
                    let text = r["statusText"].as_str().map(str::to_string);
                    (
                        r["statusKey"].clone(),
                        text.map(|t| t == format!("System: {length} chars")),
                    )
                })
                .collect::<Vec<_>>()
        },
    );
    assert_eq!(
        outcome,
        vec![
            (json!("system-prompt"), Some(true)),
            (json!("system-prompt"), None)
        ]
    );
}

#[test]
fn timed_confirm_passes_its_timeout_and_answer() {
    let outcome = rpc_parity(
        |_| {},
        &["-e", &example("timed-confirm.ts")],
        &[json!({"confirmed": true}), json!({"value": "Option B"})],
        |rpc| {
            rpc.prompt("/timed");
            rpc.prompt("/timed-select");
        },
        |_, lines| ui_requests(lines),
    );
    assert_eq!(
        outcome,
        vec![
            json!({"type": "extension_ui_request", "method": "confirm", "title": "Timed Confirmation",
                "message": "This dialog will auto-cancel in 5 seconds. Confirm?", "timeout": 5000}),
            json!({"type": "extension_ui_request", "method": "notify",
                "message": "Confirmed by user!", "notifyType": "info"}),
            json!({"type": "extension_ui_request", "method": "select", "title": "Pick an option",
                "options": ["Option A", "Option B", "Option C"], "timeout": 10000}),
            json!({"type": "extension_ui_request", "method": "notify",
                "message": "Selected: Option B", "notifyType": "info"}),
        ]
    );
}

#[test]
fn titlebar_spinner_restores_the_title() {
    const FRAMES: &str = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
    let outcome = rpc_parity(
        |s| {
            // A tool call long enough for the spinner to turn (how often is not asserted).
            s.answer(&Turn::tool_call(
                "call_1",
                "bash",
                json!({"command": "sleep 0.3"}),
            ));
            s.answer(&Turn::text("ok"));
        },
        &["-e", &example("titlebar-spinner.ts")],
        &[],
        |rpc| {
            rpc.prompt("wait a bit");
        },
        |_, lines| {
            let titles: Vec<String> = ui_of(lines, "setTitle")
                .iter()
                .map(|r| r["title"].as_str().unwrap_or_default().to_string())
                .collect();
            let base = "π - project";
            let well_formed = titles.iter().all(|t| {
                t == base
                    || t.strip_suffix(&format!(" {base}"))
                        .is_some_and(|frame| frame.chars().count() == 1 && FRAMES.contains(frame))
            });
            (well_formed, titles.first().cloned(), titles.last().cloned())
        },
    );
    let base = Some("π - project".to_string());
    assert_eq!(outcome, (true, base.clone(), base));
}

#[test]
#[ignore = "ctx.compact() is not available to extensions in Tandem (`session/compact` has no handler \
            in server/tandem/src/extensions/mod.rs: \"Compaction failed: `session/compact` is not \
            available to extensions\"); Tandem's summary of a split turn is also headed \
            \"Beginning of the current turn (split at compaction)\" where pi's says \"Turn Context \
            (split turn)\""]
fn trigger_compact_compacts_on_command() {
    let outcome = rpc_parity(
        |s| {
            s.write_settings(json!({"compaction": {"keepRecentTokens": 1}}));
            s.answer(&Turn::text("First answer."));
            s.answer(&Turn::text("Second answer."));
            // Summaries of the history and of the split last turn's beginning: pi may ask for
            // both at once, so they are the same text.
            s.answer(&Turn::text("## Goal\nSummary of the work."));
            s.answer(&Turn::text("## Goal\nSummary of the work."));
        },
        &["-e", &example("trigger-compact.ts")],
        &[],
        |rpc| {
            rpc.prompt("one");
            rpc.prompt("two");
            rpc.prompt("/trigger-compact");
            rpc.until("compaction_end", |v| v["type"] == "compaction_end");
        },
        |s, lines| {
            let summaries: Vec<Value> = entries_of(s, "compaction")
                .into_iter()
                .map(|e| e["summary"].clone())
                .collect();
            (notifications(lines), summaries)
        },
    );
    assert_eq!(
        outcome,
        (
            vec![
                "Compaction started".to_string(),
                "Compaction completed".to_string()
            ],
            vec![json!(
                "## Goal\nSummary of the work.\n\n---\n\n**Turn Context (split turn):**\n\n\
                 ## Goal\nSummary of the work."
            )]
        )
    );
}

#[test]
fn widget_placement_places_widgets() {
    let outcome = rpc_parity(
        |_| {},
        &["-e", &example("widget-placement.ts")],
        &[],
        |rpc| {
            rpc.command(json!({"type": "get_state"}));
        },
        |_, lines| ui_requests(lines),
    );
    assert_eq!(
        outcome,
        vec![
            json!({"type": "extension_ui_request", "method": "setWidget", "widgetKey": "widget-above",
                "widgetLines": ["Above editor widget"]}),
            json!({"type": "extension_ui_request", "method": "setWidget", "widgetKey": "widget-below",
                "widgetLines": ["Below editor widget"], "widgetPlacement": "belowEditor"}),
        ]
    );
}

#[test]
fn working_indicator_reports_the_mode() {
    // The indicator itself is drawn by pi's TUI only (a no-op in RPC); the status and
    // notifications report the mode. Status colours compare as text (see status_line).
    let outcome = rpc_parity(
        |_| {},
        &["-e", &example("working-indicator.ts")],
        &[],
        |rpc| {
            rpc.prompt("/working-indicator dot");
            rpc.prompt("/working-indicator bogus");
            rpc.prompt("/working-indicator");
        },
        |_, lines| visible(&Value::Array(ui_requests(lines))),
    );
    let status = |text: &str| {
        json!({"type": "extension_ui_request", "method": "setStatus",
            "statusKey": "working-indicator", "statusText": text})
    };
    let notify = |text: &str, kind: &str| {
        json!({"type": "extension_ui_request", "method": "notify", "message": text,
            "notifyType": kind})
    };
    assert_eq!(
        outcome,
        json!([
            status("Indicator: custom spinner"),
            status("Indicator: static dot"),
            notify("Working indicator set to: static dot", "info"),
            notify(
                "Usage: /working-indicator [dot|pulse|none|spinner|reset]",
                "error"
            ),
            notify("Working indicator: static dot", "info"),
        ])
    );
}

#[test]
fn working_message_test_changes_nothing_outside_the_tui() {
    // setWorkingMessage and setWorkingIndicator are TUI-only (no-ops in RPC): a turn runs as
    // without the extension and no UI request goes out.
    let outcome = rpc_parity(
        |s| s.answer(&Turn::text("ok")),
        &["-e", &example("working-message-test.ts")],
        &[],
        |rpc| {
            rpc.prompt("hi");
        },
        |s, lines| (ui_requests(lines), asked(s)),
    );
    assert_eq!(outcome, (Vec::new(), 1));
}
