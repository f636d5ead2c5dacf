//! Which extensions load: the agent directory's, `-e`'s, a cloned repository's only once the
//! folder is trusted, none with `--no-extensions`; no Node process when there are none; a
//! missing or old Node said once while the session goes on.

use std::os::unix::fs::PermissionsExt;

use tandem_tests::wire::{Turn, WireApi};

use crate::support::Sandbox;
use crate::{example, extension, run, run_env};

/// A factory that leaves a marker file in the working directory: proof the code ran.
const MARKER: &str = r#"import { writeFileSync } from "node:fs";
export default function (pi: any) {
  writeFileSync("extension-ran", "yes");
}"#;

#[test]
fn the_agent_directorys_extensions_load_without_flags_and_no_extensions_turns_them_off() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let dir = sandbox.agent_dir.join("extensions");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::copy(example("hello.ts"), dir.join("hello.ts")).expect("copy");
    sandbox.answer(&Turn::text("one"));
    run(&sandbox, &["-p", "hi"]).expect_code(0);
    assert!(sandbox.offered_tools(0).contains(&"hello".to_string()));

    sandbox.answer(&Turn::text("two"));
    let marker = extension(&sandbox, "marker.ts", MARKER);
    run(&sandbox, &["-ne", "-e", &marker, "-p", "hi"]).expect_code(0);
    assert!(!sandbox.offered_tools(1).contains(&"hello".to_string()));
    assert!(sandbox.cwd.join("extension-ran").exists(), "-e still loads");
}

#[test]
fn a_cloned_repositorys_extensions_run_nothing_until_the_folder_is_trusted() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let dir = sandbox.cwd.join(".pi/extensions");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("evil.ts"), MARKER).expect("write");
    sandbox.answer(&Turn::text("untrusted"));
    let out = run(&sandbox, &["-p", "hi"]);
    out.expect_code(0);
    assert!(
        !sandbox.cwd.join("extension-ran").exists(),
        "an untrusted repo's code ran"
    );

    sandbox.answer(&Turn::text("trusted"));
    run(&sandbox, &["--approve", "-p", "hi"]).expect_code(0);
    assert!(
        sandbox.cwd.join("extension-ran").exists(),
        "the trusted repo's extension did not load"
    );
}

/// A `node` that only leaves a trace that it was started.
fn tracing_node(sandbox: &Sandbox) -> String {
    let path = sandbox.home.join("fake-node");
    let trace = sandbox.home.join("node-started");
    std::fs::write(
        &path,
        format!("#!/bin/sh\ntouch {}\nexit 1\n", trace.display()),
    )
    .expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

#[test]
fn without_extensions_no_node_process_starts() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let node = tracing_node(&sandbox);
    sandbox.answer(&Turn::text("plain"));
    let out = run_env(&sandbox, &["-p", "hi"], &[("TANDEM_NODE", &node)]);
    out.expect_code(0);
    assert!(!sandbox.home.join("node-started").exists());
}

#[test]
fn a_missing_node_is_said_once_and_the_session_goes_on() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("still answered"));
    let out = run_env(
        &sandbox,
        &["-e", &example("hello.ts"), "-p", "hi"],
        &[("TANDEM_NODE", "/nonexistent/node")],
    );
    out.expect_code(0);
    assert_eq!(out.stdout, "still answered\n");
    assert!(out.stderr.contains("not started"), "{}", out.stderr);
    assert!(out.stderr.contains("hello.ts"), "{}", out.stderr);
    assert_eq!(out.stderr.matches("hello.ts").count(), 1, "{}", out.stderr);
}

#[test]
fn a_node_too_old_for_extensions_is_named_with_its_version() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    // A Node that says it is 20 (the version Debian ships).
    let old = sandbox.home.join("old-node");
    let real = crate::node();
    std::fs::write(
        &old,
        format!(
            "#!/bin/sh\nexec {} --no-warnings --import 'data:text/javascript,Object.defineProperty(process.versions, \"node\", {{value: \"20.20.2\"}})' \"$@\"\n",
            real.display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    sandbox.answer(&Turn::text("still answered"));
    let out = run_env(
        &sandbox,
        &["-e", &example("hello.ts"), "-p", "hi"],
        &[("TANDEM_NODE", &old.display().to_string())],
    );
    out.expect_code(0);
    assert_eq!(out.stdout, "still answered\n");
    assert!(out.stderr.contains("20.20.2"), "{}", out.stderr);
    assert!(out.stderr.contains("22"), "{}", out.stderr);
}

/// An extension registering `--shout` (boolean) and `--greeting` (string), whose
/// `before_agent_start` puts their values in the system prompt.
const FLAGS: &str = r#"export default function (pi: any) {
  pi.registerFlag("shout", { type: "boolean", default: false, description: "Shout" });
  pi.registerFlag("greeting", { type: "string", default: "hello", description: "Greeting" });
  pi.on("before_agent_start", (e: any) => ({
    systemPrompt: `${e.systemPrompt}\nFLAGS shout=${pi.getFlag("shout")} greeting=${pi.getFlag("greeting")}`,
  }));
}"#;

#[test]
fn flags_an_extension_registers_are_read_from_the_command_line() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(&sandbox, "flags.ts", FLAGS);
    sandbox.answer(&Turn::text("ok"));
    let out = run(
        &sandbox,
        &["-e", &path, "--shout", "--greeting=ahoy", "-p", "hi"],
    );
    out.expect_code(0);
    assert!(crate::support::body_mentions(
        &sandbox.requests()[0],
        "FLAGS shout=true greeting=ahoy"
    ));
    sandbox.answer(&Turn::text("ok"));
    run(&sandbox, &["-e", &path, "-p", "hi"]).expect_code(0);
    assert!(crate::support::body_mentions(
        &sandbox.requests()[1],
        "FLAGS shout=false greeting=hello"
    ));
}

#[test]
fn a_flag_no_extension_registered_is_an_error_before_anything_runs() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(&sandbox, "flags.ts", FLAGS);
    let out = run(&sandbox, &["-e", &path, "--shuot", "-p", "hi"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("unknown option --shuot (did you mean --shout?)"),
        "{}",
        out.stderr
    );
    assert!(sandbox.requests().is_empty());
    let out = run(&sandbox, &["--shout", "-p", "hi"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("unknown option --shout"),
        "{}",
        out.stderr
    );
}
