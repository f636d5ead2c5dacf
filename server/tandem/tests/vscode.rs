//! The VS Code extension's own test suites (`editors/vscode`), run from the workspace tests so
//! that their results count in the summary:
//!
//! - `npm test`: builds the extension, type-checks the extension host and webview code
//!   (`tsc --noEmit`), and runs the node unit tests (the event reducer on the recorded streams of
//!   `fixtures/editor-events/`, the markdown renderer, settings and binary lookup);
//! - `npm run test:webview`: the chat webview's real page in headless Chromium, fed recorded
//!   streams; it saves a screenshot to target/vscode-webview.png;
//! - the reducer tests again, on streams recorded just now from this build of `tandem lsp` by
//!   `scripts/record-editor-events`, so the fixtures cannot drift from the server;
//! - `npm run test:host`: the built extension activated in node against a stand-in `vscode`
//!   module, starting this build of `tandem lsp` through vscode-languageclient, with a prompt
//!   sent from the chat view and its events forwarded to the (stand-in) webview.
//!
//! The npm packages come from `scripts/install-node-deps` and Chromium from
//! `scripts/install-chromium` (`scripts/test` runs both). Without them these tests fail, saying
//! which script to run: they never pass silently.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use tandem_ai::sync::lock;

/// The suites share editors/vscode/dist (each builds it): one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn extension_dir() -> PathBuf {
    let dir = repo().join("editors/vscode");
    assert!(
        dir.join("node_modules/.bin/tsc").is_file() && dir.join("node_modules/vscode-languageclient").is_dir(),
        "the VS Code extension's npm packages are not installed in {}: run scripts/install-node-deps (scripts/test does)",
        dir.display()
    );
    dir
}

fn run(mut command: Command, what: &str) -> Output {
    let output = command
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("could not run {what}: {e} (is Node.js 20 with npm on PATH?)"));
    if !output.status.success() {
        panic!(
            "{what} failed ({})\n--- stdout\n{}\n--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    output
}

fn npm(args: &[&str]) -> Command {
    let mut command = Command::new("npm");
    command.args(args).current_dir(extension_dir());
    command
}

#[test]
fn vscode_extension_builds_type_checks_and_passes_its_unit_tests() {
    let _guard = lock(&ONE_AT_A_TIME);
    let output = run(npm(&["test"]), "`npm test` in editors/vscode");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("# fail 0"),
        "no node test summary in:\n{stdout}"
    );
}

#[test]
fn vscode_webview_renders_recorded_streams_in_headless_chromium() {
    let _guard = lock(&ONE_AT_A_TIME);
    let chromium = std::env::var_os("TANDEM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    assert!(
        chromium.is_file(),
        "{} is missing: run scripts/install-chromium (scripts/test does)",
        chromium.display()
    );
    let screenshot = repo().join("target/vscode-webview.png");
    let _ = std::fs::remove_file(&screenshot);
    let output = run(
        npm(&["run", "test:webview"]),
        "`npm run test:webview` in editors/vscode",
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("# fail 0"),
        "no node test summary in:\n{stdout}"
    );
    assert!(screenshot.is_file(), "no screenshot was saved");
}

#[test]
fn vscode_reducer_handles_streams_recorded_from_this_server() {
    let _guard = lock(&ONE_AT_A_TIME);
    let dir = extension_dir();
    let events = tempfile::tempdir().unwrap();
    let mut record = Command::new("node");
    record
        .arg(repo().join("scripts/record-editor-events"))
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_tandem"))
        .arg("--out")
        .arg(events.path());
    run(record, "scripts/record-editor-events");
    run(npm(&["run", "build"]), "`npm run build` in editors/vscode");
    let mut test = Command::new("node");
    test.args(["--test", "test/unit/reducer.test.mjs"])
        .current_dir(&dir)
        .env("TANDEM_EVENTS_DIR", events.path());
    let output = run(test, "the reducer tests on fresh recordings");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("# fail 0"),
        "no node test summary in:\n{stdout}"
    );
}

#[test]
fn vscode_extension_host_starts_this_server_and_forwards_its_events() {
    let _guard = lock(&ONE_AT_A_TIME);
    let mut command = npm(&["run", "test:host"]);
    command.env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"));
    let output = run(command, "`npm run test:host` in editors/vscode");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("# fail 0") && stdout.contains("# skipped 0"),
        "the host tests did not all run and pass:\n{stdout}"
    );
}

/// Real VS Code: code-server 4.139.1 (VS Code 1.139.1, installed by scripts/install-code-server
/// into a cache outside the clone) with the platform .vsix of this build installed, driven in
/// Chromium by `test/e2e/real-vscode.mjs`: in a fresh window, the first Ctrl+. on an error
/// offers "Ask Tandem to fix" before any Tandem view or command (the extension starts with the
/// window), applied through the review; chat, an edit rejected, `definition` and `references`
/// answered by VS Code's TypeScript features, an edit whose result carries the type error VS
/// Code then reports, an abort; a folder in Restricted Mode and a window without a key, both
/// without a pop-up at start; an empty window whose first file gets the fix's code action.
/// Screenshots go to target/vscode-e2e/.
#[test]
fn real_vscode_runs_the_packaged_extension_end_to_end() {
    let _guard = lock(&ONE_AT_A_TIME);
    let dir = extension_dir();
    let code_server = repo().join("target/code-server/bin/code-server");
    assert!(
        code_server.is_file(),
        "{} is missing: run scripts/install-code-server (scripts/test does)",
        code_server.display()
    );
    let out = repo().join("target/vscode-e2e");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let vsix = out.join("tandem.vsix");
    let mut package = Command::new(repo().join("scripts/package-vscode"));
    package
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_tandem"))
        .arg("--out")
        .arg(&vsix);
    run(package, "scripts/package-vscode");
    let mut e2e = Command::new("node");
    e2e.arg("test/e2e/real-vscode.mjs")
        .arg("--code-server")
        .arg(&code_server)
        .arg("--vsix")
        .arg(&vsix)
        .arg("--out")
        .arg(&out)
        .current_dir(&dir);
    let output = run(e2e, "the real VS Code suite (test/e2e/real-vscode.mjs)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("every step passed"),
        "the real VS Code suite did not finish:\n{stdout}"
    );
    for shot in [
        "02-fix-code-action",
        "03-fix-review",
        "05-chat-answer",
        "07-rejected",
        "07c-typescript-error",
        "08-aborted",
        "09-restricted",
        "12-empty-window-fix",
    ] {
        assert!(
            out.join(format!("{shot}.png")).is_file(),
            "no screenshot {shot}.png"
        );
    }
}
