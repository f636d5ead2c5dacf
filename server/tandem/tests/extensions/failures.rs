//! Extensions that misbehave — throw, hang, exit, flood their output, answer with more than a
//! line may hold, fail to load — never end the turn or Tandem, never hide the error, and never
//! let a gate that cannot decide wave a call through.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::Sandbox;
use crate::{extension, run, tool_result_text};

/// A tool `echo` that answers its text.
const ECHO: &str = r#"
import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({
    name: "echo", label: "Echo", description: "Echo text",
    parameters: Type.Object({ text: Type.String() }),
    async execute(_id, params) {
      return { content: [{ type: "text", text: `echo: ${params.text}` }], details: {} };
    },
  });
}
"#;

#[test]
fn a_throwing_tool_call_handler_blocks_the_call_and_names_the_extension() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(
        &sandbox,
        "thrower.ts",
        r#"export default function (pi: any) {
  pi.on("tool_call", () => { throw new Error("gate exploded"); });
}"#,
    );
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "bash",
        json!({"command": "touch ran"}),
    ));
    sandbox.answer(&Turn::text("ok"));
    let out = run(&sandbox, &["-e", &path, "-p", "go"]);
    out.expect_code(0);
    assert!(!sandbox.cwd.join("ran").exists(), "the call ran");
    let second = sandbox.requests()[1].json().expect("JSON");
    let result = tool_result_text(&second, "call_1").expect("result");
    assert!(result.contains("gate exploded"), "{result}");
}

#[test]
fn a_hanging_handler_is_passed_over_after_the_time_limit_and_its_gate_blocks() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"extensionEventTimeoutMs": 300}));
    let path = extension(
        &sandbox,
        "hang.ts",
        r#"export default function (pi: any) {
  pi.on("tool_call", () => new Promise(() => {}));
}"#,
    );
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "bash",
        json!({"command": "touch ran"}),
    ));
    sandbox.answer(&Turn::text("ok"));
    let out = run(&sandbox, &["-e", &path, "-p", "go"]);
    out.expect_code(0);
    assert!(!sandbox.cwd.join("ran").exists(), "the call ran");
    assert!(
        out.stderr
            .contains("did not answer tool_call within 300 ms"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_host_that_exits_fails_its_tool_with_how_it_exited_and_is_started_again() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(
        &sandbox,
        "crash.ts",
        r#"import { Type } from "typebox";
export default function (pi: any) {
  pi.registerTool({
    name: "crash", label: "Crash", description: "Exits",
    parameters: Type.Object({}),
    async execute() { console.error("about to exit"); process.exit(3); },
  });
  pi.registerTool({
    name: "fine", label: "Fine", description: "Works",
    parameters: Type.Object({}),
    async execute() { return { content: [{ type: "text", text: "still here" }], details: {} }; },
  });
}"#,
    );
    sandbox.answer(&Turn::tool_call("call_1", "crash", json!({})));
    sandbox.answer(&Turn::tool_call("call_2", "fine", json!({})));
    sandbox.answer(&Turn::text("done"));
    let out = run(&sandbox, &["-e", &path, "-p", "go"]);
    out.expect_code(0);
    assert_eq!(out.stdout, "done\n");
    let requests = sandbox.requests();
    let crashed = tool_result_text(&requests[1].json().expect("JSON"), "call_1").expect("result");
    assert!(crashed.contains("exit status 3"), "{crashed}");
    assert!(crashed.contains("about to exit"), "{crashed}");
    let fine = tool_result_text(&requests[2].json().expect("JSON"), "call_2").expect("result");
    assert_eq!(fine, "still here");
}

#[test]
fn console_output_never_reaches_the_protocol_even_a_flood() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(
        &sandbox,
        "noisy.ts",
        &format!(
            r#"{ECHO}
console.log("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}}");
for (let i = 0; i < 20000; i++) console.log("noise line " + i + " ".repeat(200));
process.stdout.write("not json\n");"#
        ),
    );
    sandbox.answer(&Turn::tool_call("call_1", "echo", json!({"text": "hi"})));
    sandbox.answer(&Turn::text("ok"));
    let out = run(&sandbox, &["-e", &path, "-p", "go"]);
    out.expect_code(0);
    let second = sandbox.requests()[1].json().expect("JSON");
    assert_eq!(
        tool_result_text(&second, "call_1").as_deref(),
        Some("echo: hi")
    );
}

#[test]
fn an_answer_longer_than_a_line_may_be_stops_the_host_not_tandem() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(
        &sandbox,
        "huge.ts",
        r#"import { Type } from "typebox";
export default function (pi: any) {
  pi.registerTool({
    name: "huge", label: "Huge", description: "Too much",
    parameters: Type.Object({}),
    async execute() {
      return { content: [{ type: "text", text: "x".repeat(17 * 1024 * 1024) }], details: {} };
    },
  });
}"#,
    );
    sandbox.answer(&Turn::tool_call("call_1", "huge", json!({})));
    sandbox.answer(&Turn::text("ok"));
    let out = run(&sandbox, &["-e", &path, "-p", "go"]);
    out.expect_code(0);
    let second = sandbox.requests()[1].json().expect("JSON");
    let result = tool_result_text(&second, "call_1").expect("result");
    assert!(result.contains("longer than 16 MiB"), "{result}");
}

#[test]
fn an_extension_that_fails_to_load_is_reported_and_the_others_load() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let broken = extension(
        &sandbox,
        "broken.ts",
        "export default function ( {{{ syntax",
    );
    let thrower = extension(
        &sandbox,
        "factory-throws.ts",
        "export default function () { throw new Error('factory failed'); }",
    );
    let echo = extension(&sandbox, "echo.ts", ECHO);
    sandbox.answer(&Turn::tool_call("call_1", "echo", json!({"text": "hi"})));
    sandbox.answer(&Turn::text("ok"));
    let out = run(
        &sandbox,
        &["-e", &broken, "-e", &thrower, "-e", &echo, "-p", "go"],
    );
    out.expect_code(0);
    assert!(
        out.stderr.contains("broken.ts failed to load"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("factory failed"), "{}", out.stderr);
    let second = sandbox.requests()[1].json().expect("JSON");
    assert_eq!(
        tool_result_text(&second, "call_1").as_deref(),
        Some("echo: hi")
    );
}

#[test]
fn a_result_of_the_wrong_shape_is_reported_and_ignored() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(
        &sandbox,
        "garbage.ts",
        r#"export default function (pi: any) {
  pi.on("tool_result", () => ({ content: 42 }));
}"#,
    );
    sandbox.write("a.txt", "alpha\n");
    sandbox.answer(&Turn::tool_call("call_1", "read", json!({"path": "a.txt"})));
    sandbox.answer(&Turn::text("ok"));
    let out = run(&sandbox, &["-e", &path, "-p", "go"]);
    out.expect_code(0);
    let second = sandbox.requests()[1].json().expect("JSON");
    let result = tool_result_text(&second, "call_1").expect("result");
    assert!(result.contains("alpha"), "{result}");
    assert!(out.stderr.contains("tool_result"), "{}", out.stderr);
}

/// `tandem --mode rpc <args>` in `sandbox`: sends `commands` (one JSON object per line, each
/// with an `id`), reads what it writes until every command is answered, then closes stdin (the
/// end of input stops Tandem) and returns every line it wrote.
fn rpc(sandbox: &Sandbox, args: &[&str], commands: &[serde_json::Value]) -> Vec<serde_json::Value> {
    use std::io::{BufRead, Write};
    let mut all = vec!["--mode", "rpc", "--model", crate::support::MODEL];
    all.extend_from_slice(args);
    let mut cmd = crate::support::process::in_sandbox(sandbox, &all);
    cmd.env("XDG_CACHE_HOME", sandbox.home.join("cache"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("tandem --mode rpc");
    let mut stdin = child.stdin.take().expect("stdin");
    for command in commands {
        writeln!(stdin, "{command}").expect("write");
    }
    stdin.flush().expect("flush");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let mut unanswered: Vec<serde_json::Value> = commands.iter().map(|c| c["id"].clone()).collect();
    while !unanswered.is_empty() {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no answer to {unanswered:?}; lines: {lines:?}"));
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if value["type"] == "response" {
            unanswered.retain(|id| *id != value["id"]);
        }
        lines.push(value);
    }
    drop(stdin);
    let _ = child.wait();
    lines
}

#[test]
fn a_user_bash_handler_answers_for_a_command_the_user_typed() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(
        &sandbox,
        "remote.ts",
        r#"export default function (pi: any) {
  pi.on("user_bash", (e: any) => ({
    result: { output: `remote: ${e.command}`, exitCode: 0, cancelled: false, truncated: false },
  }));
}"#,
    );
    let lines = rpc(
        &sandbox,
        &["-e", &path],
        &[json!({"id": "1", "type": "bash", "command": "touch ran"})],
    );
    let response = lines
        .iter()
        .find(|l| l["type"] == "response" && l["id"] == "1")
        .unwrap_or_else(|| panic!("no response: {lines:?}"));
    assert_eq!(response["success"], true, "{response}");
    assert_eq!(
        response["data"]["output"], "remote: touch ran",
        "{response}"
    );
    assert!(!sandbox.cwd.join("ran").exists(), "the command ran here");
}

#[test]
fn a_tool_that_never_returns_is_stopped_by_ctrl_c_and_its_host_with_it() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(
        &sandbox,
        "forever.ts",
        r#"import { writeFileSync } from "node:fs";
import { Type } from "typebox";
export default function (pi: any) {
  pi.registerTool({
    name: "forever", label: "Forever", description: "Never returns",
    parameters: Type.Object({}),
    async execute() {
      writeFileSync("tool-started", String(process.pid));
      return new Promise(() => {});
    },
  });
}"#,
    );
    sandbox.answer(&Turn::tool_call("call_1", "forever", json!({})));
    let all = ["--model", crate::support::MODEL, "-e", &path, "-p", "go"];
    let mut cmd = crate::support::process::in_sandbox(&sandbox, &all);
    cmd.env("XDG_CACHE_HOME", sandbox.home.join("cache"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("tandem");
    let started = sandbox.cwd.join("tool-started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the tool never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let host_pid: i32 = std::fs::read_to_string(&started)
        .expect("pid")
        .trim()
        .parse()
        .expect("a pid");
    // SAFETY: kill only sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("tandem exits");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The host is gone too (no orphan keeps running).
    let gone = (0..100).any(|_| {
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(host_pid, 0) } == 0;
        if alive {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        !alive
    });
    assert!(gone, "the extension host {host_pid} outlived Tandem");
}
