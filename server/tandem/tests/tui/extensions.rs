//! Extensions in the terminal (issue 30): pi 1.6's own examples, unmodified, and extensions
//! written here, loaded with `-e` in Tandem's Node extension host (Node 24 from
//! `scripts/install-pi16`; each test writes the host into its own cache directory). The
//! picker answers a `tool_call` gate, `/pirate` runs an extension command, notices, statuses,
//! widgets and the title show (sanitized), dialogs take text and honour their timeouts, each
//! session's extensions are shut down with it, and an extension may cancel `/new`.

use std::path::{Path, PathBuf};

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::tmux::{Launch, Tmux};
use crate::support::{Sandbox, MODEL};
use crate::{ready, send, wait_text, WAIT};

/// Node 24, installed by `scripts/install-pi16`.
fn node() -> PathBuf {
    crate::support::node()
}

/// pi 1.6's example extension `name`.
fn example(name: &str) -> String {
    crate::support::pi_example(name)
}

/// Writes an extension into the sandbox's home (not the project: nothing is discovered) and
/// returns its path.
fn extension(sandbox: &Sandbox, name: &str, source: &str) -> String {
    let path = sandbox.home.join("extensions").join(name);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("extension folder");
    std::fs::write(&path, source).expect("write the extension");
    path.display().to_string()
}

/// `tandem --model mock/mock-model <args>` with the extension host's Node and cache, once its
/// editor is drawn.
fn open_with(sandbox: &Sandbox, args: &[&str]) -> Tmux {
    let mut all = vec!["--model", MODEL];
    all.extend_from_slice(args);
    let tmux = Launch::tandem(sandbox, &all)
        .env("TANDEM_NODE", node())
        .env("XDG_CACHE_HOME", sandbox.home.join("cache"))
        .size(100, 40)
        .start();
    ready(&tmux);
    tmux
}

/// The text of the tool result for call `id` in a recorded Chat Completions request body.
fn tool_result_text(body: &serde_json::Value, id: &str) -> Option<String> {
    body["messages"].as_array()?.iter().find_map(|m| {
        (m["role"] == "tool" && m["tool_call_id"] == id).then(|| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            other => crate::support::content_text(other, "\n"),
        })
    })
}

/// Waits until `path` holds `needle`.
fn wait_file(tmux: &Tmux, path: &Path, needle: &str) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} never held {needle:?}; it holds {text:?}\n{}",
            path.display(),
            tmux.capture()
        );
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

/// pi's permission gate asks before `rm -rf`: the model calls bash, the picker shows the
/// command, and the answer decides.
fn gate(answer: &[&str]) -> (Sandbox, Tmux) {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.cwd.join("x")).expect("a folder to remove");
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "bash",
        json!({"command": "rm -rf x"}),
    ));
    sandbox.answer(&Turn::text("All done."));
    let tmux = open_with(&sandbox, &["-e", &example("permission-gate.ts")]);
    send(&tmux, "clean up");
    let screen = wait_text(&tmux, "Allow?");
    assert!(screen.contains("Dangerous command:"), "{screen}");
    assert!(screen.contains("rm -rf x"), "{screen}");
    assert!(screen.contains("› Yes"), "{screen}");
    tmux.send_keys(answer);
    wait_text(&tmux, "All done.");
    ready(&tmux);
    (sandbox, tmux)
}

#[test]
fn permission_gate_yes_in_the_picker_runs_the_command() {
    let (sandbox, _tmux) = gate(&["Enter"]);
    assert!(!sandbox.cwd.join("x").exists(), "the command did not run");
    let second = sandbox.requests()[1].json().expect("JSON");
    let result = tool_result_text(&second, "call_1").unwrap_or_default();
    assert!(!result.contains("Blocked"), "{result}");
}

#[test]
fn permission_gate_no_in_the_picker_blocks_the_command() {
    let (sandbox, tmux) = gate(&["Down", "Enter"]);
    assert!(sandbox.cwd.join("x").is_dir(), "the command ran");
    let second = sandbox.requests()[1].json().expect("JSON");
    assert_eq!(
        tool_result_text(&second, "call_1").as_deref(),
        Some("Blocked by user")
    );
    let screen = tmux.capture();
    assert!(screen.contains("Blocked by user"), "{screen}");
}

#[test]
fn pirate_is_listed_completed_and_run_and_changes_the_next_system_prompt() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Ahoy, matey."));
    let tmux = open_with(&sandbox, &["-e", &example("pirate.ts")]);
    // The start-up listing names the loaded extension.
    let screen = tmux.capture();
    assert!(screen.contains("Extensions: pirate.ts"), "{screen}");
    // Completion offers the extension's command with its description.
    tmux.send_text("/pir");
    wait_text(&tmux, "Toggle pirate mode (agent speaks like a pirate)");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "Arrr! Pirate mode enabled!");
    ready(&tmux);
    // The command asked no model; the next prompt's system prompt is the pirate's.
    assert!(sandbox.requests().is_empty());
    send(&tmux, "say hello");
    wait_text(&tmux, "Ahoy, matey.");
    ready(&tmux);
    let body = sandbox.requests()[0].json().expect("JSON");
    let system = &body["messages"][0];
    assert!(
        matches!(system["role"].as_str(), Some("system" | "developer")),
        "{body}"
    );
    assert!(system.to_string().contains("PIRATE MODE"), "{system}");
    // A second /pirate turns it off.
    send(&tmux, "/pirate");
    wait_text(&tmux, "Pirate mode disabled");
}

/// An extension that shows things, some with escape sequences an extension should never get
/// to the terminal raw.
const SHOWS: &str = r#"
export default function (pi) {
  pi.on("session_start", async (_event, ctx) => {
    ctx.ui.setStatus("shows", "shows: ready \x1b[31mred");
    ctx.ui.setWidget("shows", ["widget line one", "widget line two"]);
    ctx.ui.setWidget("under", ["under the editor"], { placement: "belowEditor" });
    ctx.ui.setTitle("titled \x1b]0;evil\x07 by shows");
    // Asked before the terminal is drawn: answered at once with the default, and said.
    const early = await ctx.ui.confirm("Early question", "asked at start");
    ctx.ui.notify(`early: ${early}`, "info");
  });
  pi.registerCommand("shout", {
    description: "Say something with escapes",
    handler: async (_args, ctx) => {
      ctx.ui.notify("careful \x1b[2J\x1b]52;c;ZXZpbA==\x07 done", "warning");
      ctx.ui.notify("plain info from shout", "info");
      ctx.ui.setStatus("shows", undefined);
      ctx.ui.setWidget("shows", undefined);
      ctx.ui.setEditorText("prefilled by shout");
    },
  });
}
"#;

#[test]
fn notices_statuses_widgets_and_the_title_are_shown_sanitized() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(&sandbox, "shows.js", SHOWS);
    let tmux = open_with(&sandbox, &["-e", &path]);
    // Set while the session started: in the footer, above the editor, in the title.
    let screen = wait_text(&tmux, "shows: ready");
    assert!(screen.contains("shows: ready ␛[31mred"), "{screen}");
    let widget = screen.find("widget line one").expect("the widget");
    let editor = screen.find("Ask anything").expect("the editor");
    assert!(widget < editor, "{screen}");
    assert!(screen.contains("widget line two"), "{screen}");
    let under = screen
        .find("under the editor")
        .expect("the widget under the editor");
    let footer = screen.find("mock/mock-model").expect("the footer");
    assert!(editor < under && under < footer, "{screen}");
    assert!(screen.contains("early: false"), "{screen}");
    assert!(
        screen.contains(r#"An extension asked "Early question" before the terminal was ready"#),
        "{screen}"
    );
    assert!(screen.contains("Extensions: shows.js"), "{screen}");
    let title = tmux.format("#{pane_title}");
    assert_eq!(title, "titled ␛]0;evil␇ by shows");
    // The command's notices: the escapes as stand-ins, nothing cleared or copied.
    send(&tmux, "/shout");
    let screen = wait_text(&tmux, "plain info from shout");
    assert!(
        screen.contains("Warning: careful ␛[2J␛]52;c;ZXZpbA==␇ done"),
        "{screen}"
    );
    assert!(
        screen.contains("Extensions: shows.js"),
        "the screen was cleared\n{screen}"
    );
    // Cleared (the widget under the editor stays), and the editor holds the text the
    // command gave it.
    let screen = tmux
        .wait_for("the status and widget gone", WAIT, |s| {
            !s.contains("shows: ready") && !s.contains("widget line one")
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(screen.contains("prefilled by shout"), "{screen}");
    assert!(screen.contains("under the editor"), "{screen}");
}

/// An extension whose command asks for text, a confirmation and a choice that times out.
const ASKS: &str = r#"
export default function (pi) {
  pi.registerCommand("ask", {
    description: "Ask the user things",
    handler: async (_args, ctx) => {
      const name = await ctx.ui.input("What is your name?", "a name");
      ctx.ui.notify(`name: ${name}`, "info");
      const ok = await ctx.ui.confirm("Really?", "This is the message under it");
      ctx.ui.notify(`confirmed: ${ok}`, "info");
      const text = await ctx.ui.editor("Edit this", "first line");
      ctx.ui.notify(`edited: ${JSON.stringify(text)}`, "info");
      const quick = await ctx.ui.select("Quick, pick one", ["a", "b"], { timeout: 1500 });
      ctx.ui.notify(`picked: ${quick}`, "info");
    },
  });
}
"#;

#[test]
fn dialogs_take_text_confirm_and_time_out() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(&sandbox, "asks.js", ASKS);
    let tmux = open_with(&sandbox, &["-e", &path]);
    send(&tmux, "/ask");
    let screen = wait_text(&tmux, "What is your name?");
    assert!(screen.contains("a name"), "the placeholder\n{screen}");
    assert!(screen.contains("Enter submits"), "{screen}");
    send(&tmux, "Ada");
    wait_text(&tmux, "name: Ada");
    let screen = wait_text(&tmux, "Really?");
    assert!(screen.contains("This is the message under it"), "{screen}");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "confirmed: true");
    wait_text(&tmux, "Edit this");
    // Shift+Enter adds a line; Enter submits.
    tmux.send_keys(&["S-Enter"]);
    tmux.send_text("second line");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, r#"edited: "first line\nsecond line""#);
    // The choice nobody answers counts down and closes when its time is up.
    let screen = wait_text(&tmux, "Quick, pick one (");
    assert!(
        screen.contains("Quick, pick one (2s)") || screen.contains("Quick, pick one (1s)"),
        "{screen}"
    );
    tmux.wait_for("the choice closed by its timeout", WAIT, |s| {
        s.contains("picked: undefined") && !s.contains("Quick, pick one")
    })
    .unwrap_or_else(|e| panic!("{e}"));
    ready(&tmux);
    assert!(sandbox.requests().is_empty());
}

/// An extension that writes its session events to a file.
fn lifecycle(log: &Path) -> String {
    format!(
        r#"
import {{ appendFileSync }} from "node:fs";
const log = {log:?};
export default function (pi) {{
  pi.on("session_start", async (event) => {{
    appendFileSync(log, `start ${{event.reason}} ${{process.pid}}\n`);
  }});
  pi.on("session_shutdown", async (event) => {{
    appendFileSync(log, `shutdown ${{event.reason}} ${{process.pid}}\n`);
  }});
}}
"#,
        log = log.display().to_string()
    )
}

#[test]
fn each_session_has_its_own_extensions_shut_down_with_it() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let log = sandbox.home.join("lifecycle.log");
    let path = extension(&sandbox, "lifecycle.js", &lifecycle(&log));
    let tmux = open_with(&sandbox, &["-e", &path]);
    wait_file(&tmux, &log, "start startup");
    send(&tmux, "/new");
    wait_text(&tmux, "New session.");
    let text = wait_file(&tmux, &log, "start new");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[1].starts_with("shutdown new "), "{text}");
    // The new session's host is a process of its own, started after the old one stopped.
    let pid = |line: &str| line.rsplit(' ').next().unwrap_or("").to_string();
    assert_eq!(pid(lines[0]), pid(lines[1]), "{text}");
    assert_ne!(pid(lines[0]), pid(lines[2]), "{text}");
    ready(&tmux);
    tmux.send_keys(&["C-d"]);
    tmux.wait_for_exit(WAIT).unwrap_or_else(|e| panic!("{e}"));
    let text = wait_file(&tmux, &log, "shutdown quit");
    let last = text.lines().last().unwrap_or_default();
    assert_eq!(
        pid(last),
        pid(text.lines().nth(2).unwrap_or_default()),
        "{text}"
    );
}

/// pi's own example of `session_before_switch`: a confirmation before `/new`.
const ASKS_BEFORE_NEW: &str = r#"
export default function (pi) {
  pi.on("session_before_switch", async (event, ctx) => {
    if (event.reason === "new") {
      const ok = await ctx.ui.confirm("Clear?", "Start over with a new session?");
      if (!ok) return { cancel: true };
    }
  });
}
"#;

#[test]
fn an_extension_can_cancel_a_new_session() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let path = extension(&sandbox, "asks-before-new.js", ASKS_BEFORE_NEW);
    let tmux = open_with(&sandbox, &["-e", &path]);
    send(&tmux, "/new");
    let screen = wait_text(&tmux, "Start over with a new session?");
    assert!(screen.contains("Clear?"), "{screen}");
    tmux.send_keys(&["Down", "Enter"]);
    wait_text(&tmux, "An extension cancelled the switch");
    ready(&tmux);
    send(&tmux, "/new");
    wait_text(&tmux, "Start over with a new session?");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "New session.");
}

/// A cloned repository's `.pi/extensions/` runs nothing while the trust question waits, and
/// loads (its command completes, its tool is offered) once the user trusts the folder.
#[test]
fn a_repositorys_extensions_load_only_after_the_folder_is_trusted() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.cwd.join(".pi/extensions")).expect("dir");
    sandbox.write(
        ".pi/extensions/repo.ts",
        r#"import { writeFileSync } from "node:fs";
import { Type } from "typebox";
export default function (pi: any) {
  writeFileSync("extension-ran", "yes");
  pi.registerCommand("repo-hello", { description: "The repository's command", handler: async (_a: string, ctx: any) => ctx.ui.notify("hello from the repo", "info") });
  pi.registerTool({ name: "repo_tool", label: "Repo", description: "The repository's tool",
    parameters: Type.Object({}), async execute() { return { content: [{ type: "text", text: "repo" }], details: {} }; } });
}"#,
    );
    sandbox.answer(&Turn::text("done"));
    let tmux = Launch::tandem(&sandbox, &["--model", MODEL])
        .env("TANDEM_NODE", node())
        .env("XDG_CACHE_HOME", sandbox.home.join("cache"))
        .size(100, 40)
        .start();
    let screen = wait_text(&tmux, "Trust it for this session only");
    assert!(screen.contains("extensions would run"), "{screen}");
    assert!(
        !sandbox.cwd.join("extension-ran").exists(),
        "ran before the answer"
    );
    tmux.send_keys(&["Down", "Enter"]);
    wait_text(&tmux, "The folder is trusted");
    ready(&tmux);
    send(&tmux, "/repo-hello");
    wait_text(&tmux, "hello from the repo");
    assert!(sandbox.cwd.join("extension-ran").exists());
    send(&tmux, "go");
    wait_text(&tmux, "done");
    assert!(sandbox.offered_tools(0).contains(&"repo_tool".to_string()));
}
