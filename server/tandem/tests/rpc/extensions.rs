//! Extensions in RPC mode, driven by pi 1.6's own `RpcClient` (tests/rpc/pi_client_extensions.mjs)
//! with pi 1.6's example extensions, unmodified: their dialogs reach the client as pi's
//! extension UI sub-protocol and its answers reach them, their notices arrive, extension
//! commands run through `prompt` and are listed by `get_commands`, a handler that throws is an
//! `extension_error` event. Each scenario runs against Tandem and against pi 1.6 itself, and
//! the two must agree.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tandem_tests::wire::{Turn, WireApi};

use super::pi_client::{pi16, root};
use crate::support::Sandbox;

/// pi 1.6's example extension `name`.
fn example(name: &str) -> String {
    let path = pi16().join("package/examples/extensions").join(name);
    assert!(path.exists(), "{} is missing", path.display());
    path.display().to_string()
}

/// The stand-in for pi's cli.js that runs Tandem.
fn tandem_cli() -> PathBuf {
    root().join("server/tandem/tests/rpc/tandem-cli.cjs")
}

/// pi 1.6's cli.js.
fn pi_cli() -> PathBuf {
    pi16().join("package/dist/cli.js")
}

/// Runs `scenario` of pi_client_extensions.mjs in `sandbox` with `extensions` loaded, the agent
/// started from `cli`; what the script saw.
fn drive(sandbox: &Sandbox, scenario: &str, extensions: &[String], cli: &Path) -> Value {
    let output = super::pi_client::node_script("pi_client_extensions.mjs", sandbox, cli)
        .env("SCENARIO", scenario)
        .env("EXTENSIONS", json!(extensions).to_string())
        .output()
        .expect("runs node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the script printed no result ({e}): {stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(
        result.get("failure").is_none(),
        "{}",
        result["failure"].as_str().unwrap_or_default()
    );
    result
}

/// Runs `scenario` against Tandem and against pi 1.6, each in a sandbox `prepare` readies
/// (its model answers, its files); `extensions` gives the files to load in that sandbox.
fn both(
    scenario: &str,
    prepare: impl Fn(&Sandbox),
    extensions: impl Fn(&Sandbox) -> Vec<String>,
) -> (Value, Value) {
    let run = |cli: &Path| {
        let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
        prepare(&sandbox);
        drive(&sandbox, scenario, &extensions(&sandbox), cli)
    };
    (run(&tandem_cli()), run(&pi_cli()))
}

/// The records of `result[field]` (a list of records, or an object with `records`).
fn records<'v>(result: &'v Value, field: &str) -> &'v Value {
    match &result[field] {
        Value::Array(_) => &result[field],
        other => &other["records"],
    }
}

#[test]
fn permission_gate_asks_the_client_and_yes_runs_the_command_and_no_blocks_it() {
    let (tandem, pi) = both(
        "gate",
        |sandbox| {
            for (call, answer) in [("call_1", "Cleaned."), ("call_2", "Could not.")] {
                sandbox.answer(&Turn::tool_call(
                    call,
                    "bash",
                    json!({"command": "rm -rf build"}),
                ));
                sandbox.answer(&Turn::text(answer));
            }
        },
        |_| vec![example("permission-gate.ts")],
    );
    assert_eq!(tandem["buildAfterYes"], false, "{tandem}");
    assert_eq!(tandem["buildAfterNo"], true, "{tandem}");
    assert_eq!(tandem["allowed"][0]["isError"], false, "{tandem}");
    assert_eq!(
        tandem["blocked"],
        json!([{"text": "Blocked by user", "isError": true}])
    );
    // The question, as pi asks it: a `select` with the command in its title, no time limit.
    let question = json!({"type": "extension_ui_request", "method": "select",
        "title": "⚠️ Dangerous command:\n\n  rm -rf build\n\nAllow?", "options": ["Yes", "No"]});
    assert_eq!(tandem["records"], json!([question, question]));
    // pi 1.6 does the same.
    for field in [
        "buildAfterYes",
        "buildAfterNo",
        "allowed",
        "blocked",
        "records",
    ] {
        assert_eq!(tandem[field], pi[field], "{field}");
    }
}

#[test]
fn every_dialog_and_notice_of_the_sub_protocol_reaches_the_client_as_pi_sends_it() {
    let (tandem, pi) = both(
        "demo",
        |sandbox| sandbox.answer(&Turn::text("Hello there")),
        |_| vec![example("rpc-demo.ts"), example("timed-confirm.ts")],
    );
    // session_start: a title, a widget, a status.
    assert_eq!(
        tandem["atStart"],
        json!([
            {"type": "extension_ui_request", "method": "setTitle", "title": "pi RPC Demo"},
            {"type": "extension_ui_request", "method": "setWidget", "widgetKey": "rpc-demo",
             "widgetLines": ["--- RPC Extension UI Demo ---", "Loaded and ready."]},
            {"type": "extension_ui_request", "method": "setStatus", "statusKey": "rpc-demo",
             "statusText": "Turns: 0"},
        ])
    );
    // get_commands lists the extensions' commands, as pi does.
    let commands = tandem["commands"].as_array().expect("commands");
    let input = commands
        .iter()
        .find(|c| c["name"] == "rpc-input")
        .expect("rpc-input listed");
    assert_eq!(input["source"], "extension");
    assert_eq!(input["scope"], "temporary");
    assert!(
        input["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("/rpc-demo.ts")),
        "{input}"
    );
    // pi 1.6 lists the same, after them its built-in extensions' commands (`builtin:` paths),
    // which Tandem does not have; Tandem names the files by their real paths.
    let own = |result: &Value| -> Vec<Value> {
        result["commands"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| {
                !c["path"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("builtin:")
            })
            .map(|c| {
                let mut c = c.clone();
                let path = c["path"].as_str().unwrap_or_default();
                c["path"] = json!(Path::new(path).file_name().map(|n| n.to_string_lossy()));
                c
            })
            .collect()
    };
    assert_eq!(own(&tandem), own(&pi));
    // Commands through `prompt`, each answered `handled` once done.
    for field in ["input", "editor", "prefill", "timed", "timedOut"] {
        assert_eq!(tandem[field]["disposition"], "handled", "{field}: {tandem}");
    }
    assert_eq!(
        records(&tandem, "input"),
        &json!([
            {"type": "extension_ui_request", "method": "input", "title": "Enter a value",
             "placeholder": "type something..."},
            {"type": "extension_ui_request", "method": "notify",
             "message": "You entered: hello", "notifyType": "info"},
        ])
    );
    assert_eq!(
        methods(records(&tandem, "editor")),
        ["editor", "notify"],
        "{tandem}"
    );
    assert_eq!(
        records(&tandem, "editor")[0]["prefill"],
        "Line 1\nLine 2\nLine 3"
    );
    assert_eq!(records(&tandem, "editor")[1]["message"], "Editor cancelled");
    assert_eq!(
        methods(records(&tandem, "prefill")),
        ["set_editor_text", "notify"]
    );
    // An extension command cannot be queued.
    assert_eq!(
        tandem["steer"],
        "Extension command \"/rpc-prefill\" cannot be queued. Use prompt() or execute the \
         command when not streaming."
    );
    // A dialog with a time limit says so; unanswered, it resolves to its default at the limit.
    assert_eq!(records(&tandem, "timed")[0]["timeout"], 5000);
    assert_eq!(
        records(&tandem, "timed")[1]["message"],
        "Confirmed by user!"
    );
    assert_eq!(
        records(&tandem, "timedOut")[1]["message"],
        "Cancelled or timed out"
    );
    // new_session: session_before_switch asks; "no" cancels, "yes" lets the new session (and
    // its own extensions, session_start "new") start.
    assert_eq!(tandem["refusedNew"]["answer"], json!({"cancelled": true}));
    assert_eq!(
        methods(records(&tandem, "refusedNew")),
        ["confirm", "notify"]
    );
    assert_eq!(tandem["allowedNew"]["answer"], json!({"cancelled": false}));
    assert_eq!(
        methods(records(&tandem, "allowedNew")),
        ["confirm", "setTitle", "setWidget", "setStatus"]
    );
    assert_eq!(
        records(&tandem, "allowedNew")[1]["title"],
        "pi RPC Demo (new session)"
    );
    // A turn's statuses.
    assert_eq!(tandem["turn"]["last"], "agent_settled");
    assert_eq!(
        methods(records(&tandem, "turn")),
        ["setStatus", "setStatus"]
    );
    // pi 1.6 sends the same records.
    for field in [
        "atStart",
        "steer",
        "input",
        "editor",
        "prefill",
        "timed",
        "refusedNew",
        "allowedNew",
        "turn",
        "timedOut",
    ] {
        assert_eq!(tandem[field], pi[field], "{field}");
    }
}

#[test]
fn a_prompt_an_input_handler_handles_is_answered_handled_and_runs_nothing() {
    let (tandem, pi) = both(
        "input",
        |sandbox| sandbox.answer(&Turn::text("Briefly.")),
        |_| vec![example("input-transform.ts")],
    );
    assert_eq!(
        tandem["ping"],
        json!({"disposition": "handled", "records": [{"type": "extension_ui_request",
            "method": "notify", "message": "pong", "notifyType": "info"}]})
    );
    assert_eq!(tandem["quick"]["last"], "agent_settled");
    assert_eq!(
        support_text(&tandem["quick"]["prompt"]),
        "Respond briefly in 1-2 sentences: What is Rust?"
    );
    assert_eq!(tandem["ping"], pi["ping"]);
    assert_eq!(tandem["quick"], pi["quick"]);
}

/// A user message's text (a string, or text blocks).
fn support_text(content: &Value) -> String {
    crate::support::content_text(content, "")
}

/// An extension that logs the session's lifecycle events to lifecycle.log in its folder.
const LIFECYCLE: &str = r#"import fs from "node:fs";
export default function (pi) {
  const log = (event) => {
    const line = [event.type, event.reason ?? "-", event.position ?? "-",
      event.previousSessionFile ? "previous" : "-", event.targetSessionFile ? "target" : "-"];
    fs.appendFileSync(new URL("./lifecycle.log", import.meta.url), line.join(" ") + "\n");
  };
  for (const name of ["session_start", "session_shutdown", "session_before_switch",
      "session_before_fork"]) {
    pi.on(name, async (event) => log(event));
  }
}
"#;

#[test]
fn replacing_the_session_shuts_its_extensions_down_and_starts_the_new_ones_as_pi_does() {
    let (tandem, pi) = both(
        "lifecycle",
        |sandbox| {
            sandbox.write("lifecycle.js", LIFECYCLE);
            sandbox.answer(&Turn::text("One."));
        },
        |sandbox| vec![sandbox.cwd.join("lifecycle.js").display().to_string()],
    );
    for command in ["newSession", "switchSession", "clone"] {
        assert_eq!(tandem[command], json!({"cancelled": false}), "{command}");
    }
    assert_eq!(tandem["fork"]["cancelled"], false);
    assert_eq!(
        tandem["log"],
        json!([
            "session_start startup - - -",
            "session_before_switch new - - -",
            "session_shutdown new - - target",
            "session_start new - previous -",
            "session_before_switch resume - - target",
            "session_shutdown resume - - target",
            "session_start resume - previous -",
            "session_before_fork - at - -",
            "session_shutdown fork - - target",
            "session_start fork - previous -",
            "session_before_fork - before - -",
            "session_shutdown fork - - target",
            "session_start fork - previous -",
            "session_shutdown quit - - -",
        ])
    );
    assert_eq!(tandem["log"], pi["log"]);
    for command in ["newSession", "switchSession", "fork", "clone"] {
        assert_eq!(tandem[command], pi[command], "{command}");
    }
}

/// An extension whose command and whose `before_agent_start` handler throw.
const THROWING: &str = r#"export default function (pi) {
  pi.registerCommand("explode", {
    description: "Throws",
    handler: async () => {
      throw new Error("boom");
    },
  });
  pi.on("before_agent_start", async () => {
    throw new Error("kaboom");
  });
}
"#;

#[test]
fn a_command_or_handler_that_throws_is_an_extension_error_event() {
    let (tandem, pi) = both(
        "errors",
        |sandbox| {
            sandbox.write("throwing.js", THROWING);
            sandbox.answer(&Turn::text("Fine."));
        },
        |sandbox| vec![sandbox.cwd.join("throwing.js").display().to_string()],
    );
    assert_eq!(tandem["command"]["disposition"], "handled", "{tandem}");
    assert_eq!(
        records(&tandem, "command"),
        &json!([{"type": "extension_error", "extensionPath": "command:explode",
                 "event": "command", "error": "boom"}])
    );
    let failed = &records(&tandem, "turn")[0];
    assert_eq!(failed["type"], "extension_error", "{tandem}");
    assert_eq!(failed["event"], "before_agent_start");
    assert!(
        failed["extensionPath"]
            .as_str()
            .is_some_and(|p| p.ends_with("throwing.js")),
        "{failed}"
    );
    // The run went on.
    assert_eq!(tandem["text"], "Fine.");
    assert_eq!(tandem["turn"]["last"], "agent_settled");
    for field in ["command", "text"] {
        assert_eq!(tandem[field], pi[field], "{field}");
    }
    // Each ran in a sandbox of its own: the files' names are compared.
    let named = |result: &Value| {
        let mut turn = records(result, "turn").clone();
        for record in turn.as_array_mut().into_iter().flatten() {
            let path = record["extensionPath"].as_str().unwrap_or_default();
            let name = Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().to_string());
            record["extensionPath"] = json!(name);
        }
        turn
    };
    assert_eq!(named(&tandem), named(&pi));
}

/// The `method`s of `records`.
fn methods(records: &Value) -> Vec<String> {
    records
        .as_array()
        .map(|r| {
            r.iter()
                .map(|r| r["method"].as_str().unwrap_or("?").to_string())
                .collect()
        })
        .unwrap_or_default()
}
