//! The terminal handed to another program and taken back: the prompt edited in an external
//! editor (Ctrl+G) and the process suspended to a shell with job control (Ctrl+Z, `fg`); and
//! the settings of pi's terminal interface Tandem's acts on (`quietStartup`,
//! `hideThinkingBlock`).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::json;
use tandem_tests::mock_llm::Gate;
use tandem_tests::wire::{self, Turn, WireApi};

use crate::editing::reasoned;
use crate::support::tmux::Launch;
use crate::support::{self, Sandbox};
use crate::{ready, send, wait_text, WAIT};

/// An "editor" that reads one line from the terminal, as a real editor reads keys, and adds it
/// to the file as a new last line; the line `fail` makes it exit with 3 instead.
fn line_editor(sandbox: &Sandbox) -> PathBuf {
    let path = sandbox.home.join("line-editor");
    std::fs::write(
        &path,
        "#!/bin/sh\n\
         printf 'line editor on %s> ' \"$(basename \"$1\")\"\n\
         IFS= read -r line || exit 4\n\
         [ \"$line\" = fail ] && exit 3\n\
         { cat \"$1\"; printf '\\n%s\\n' \"$line\"; } > \"$1.new\" && mv \"$1.new\" \"$1\"\n",
    )
    .expect("the editor script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[test]
fn ctrl_g_edits_the_prompt_in_the_users_editor_and_its_keys_reach_only_the_editor() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Got the edited prompt."));
    let editor = line_editor(&sandbox);
    let tmux = Launch::tandem(&sandbox, &["--model", support::MODEL])
        .env("VISUAL", &editor)
        .size(100, 40)
        .start();
    ready(&tmux);
    tmux.send_text("first draft");
    wait_text(&tmux, "first draft");
    tmux.send_keys(&["C-g"]);
    wait_text(&tmux, "line editor on prompt.md>");
    // Every key goes to the editor: none may be read by Tandem meanwhile.
    tmux.send_text("added in the editor");
    tmux.send_keys(&["Enter"]);
    // Typed at the editor's prompt, then back in Tandem's editor.
    let screen = tmux
        .wait_for("the edited prompt in Tandem's editor", WAIT, |s| {
            s.text().matches("added in the editor").count() >= 2
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(screen.contains("first draft"), "{screen}");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "Got the edited prompt.");
    ready(&tmux);
    let body = sandbox.requests()[0].json().expect("JSON request");
    let prompt = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| support::content_text(&m["content"], ""))
        .expect("a user message");
    assert_eq!(prompt, "first draft\nadded in the editor");

    // An editor that fails leaves the prompt as it was, and says so.
    tmux.send_text("keep me");
    tmux.send_keys(&["C-g"]);
    wait_text(&tmux, "line editor on prompt.md>");
    tmux.send_text("fail");
    tmux.send_keys(&["Enter"]);
    let screen = wait_text(&tmux, "exited with code 3; the prompt is unchanged");
    assert!(screen.contains("keep me"), "{screen}");
    // And Tandem still works: the keys reach its editor again.
    tmux.send_text(" and more");
    wait_text(&tmux, "keep me and more");
}

#[test]
fn ctrl_z_suspends_to_the_shell_and_fg_brings_the_conversation_back() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Answer before suspending."));
    sandbox.answer(&Turn::text("Answer after fg."));
    // An interactive shell with job control, as a user's.
    let tmux = Launch::in_sandbox(&sandbox, ["bash", "--norc", "--noprofile", "-i"])
        .env("PS1", "shell$ ")
        .size(100, 40)
        .start();
    wait_text(&tmux, "shell$");
    tmux.send_text(&format!(
        "{} --model {}",
        env!("CARGO_BIN_EXE_tandem"),
        support::MODEL
    ));
    tmux.send_keys(&["Enter"]);
    ready(&tmux);
    send(&tmux, "before");
    wait_text(&tmux, "Answer before suspending.");
    ready(&tmux);
    tmux.send_text("half typed");
    tmux.send_keys(&["C-z"]);
    let screen = tmux
        .wait_for("the shell, tandem stopped", WAIT, |s| {
            s.contains("Stopped") && s.text().trim_end().ends_with("shell$")
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !screen.contains("Ask anything"),
        "the live area is cleared: {screen}"
    );
    assert!(screen.contains("Answer before suspending."), "{screen}");
    tmux.send_text("echo from-the-shell");
    tmux.send_keys(&["Enter"]);
    tmux.wait_for("the shell's output", WAIT, |s| {
        s.text().lines().any(|l| l.trim_end() == "from-the-shell")
    })
    .unwrap_or_else(|e| panic!("{e}"));
    tmux.send_text("fg");
    tmux.send_keys(&["Enter"]);
    let screen = wait_text(&tmux, "half typed");
    assert!(
        screen.contains("Ask anything") || screen.contains("half typed"),
        "{screen}"
    );
    tmux.send_keys(&["C-c"]);
    tmux.wait_for("the editor cleared", WAIT, |s| {
        !s.contains("half typed") || s.contains("Ask anything")
    })
    .unwrap_or_else(|e| panic!("{e}"));
    send(&tmux, "after");
    wait_text(&tmux, "Answer after fg.");
    ready(&tmux);
    assert_eq!(sandbox.requests().len(), 2);
    tmux.send_keys(&["C-d"]);
    tmux.wait_for("the shell again", WAIT, |s| {
        !s.contains("Ask anything") && s.text().trim_end().ends_with("shell$")
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn quiet_startup_and_hide_thinking_block_from_the_settings() {
    let sandbox = Sandbox::with_model(
        WireApi::OpenAiCompletions,
        json!({"id": "mock-model", "reasoning": true}),
    );
    sandbox.write_settings(json!({"quietStartup": true, "hideThinkingBlock": true}));
    sandbox.enqueue(reasoned(
        "Private musing.\nSecond line.\n",
        "Visible answer.",
    ));
    let tmux = crate::open(&sandbox, &[], 100, 40);
    let screen = tmux.capture();
    assert!(!screen.contains("/hotkeys for keys"), "no title: {screen}");
    // Nothing said about the settings: Tandem acts on both.
    assert!(!screen.contains("quietStartup"), "{screen}");
    assert!(!screen.contains("hideThinkingBlock"), "{screen}");
    send(&tmux, "think");
    let screen = wait_text(&tmux, "Visible answer.");
    assert!(screen.contains("Thought for 2 lines"), "{screen}");
    assert!(!screen.contains("Private musing."), "{screen}");
    ready(&tmux);
    tmux.send_keys(&["C-t"]);
    wait_text(&tmux, "Private musing.");
}

/// Closing the terminal (SIGHUP) or SIGTERM ends the mode as /quit does: the run is stopped,
/// its unanswered prompt is kept in the session file, the terminal is given back, exit 0.
#[test]
fn a_closed_terminal_or_sigterm_quits_cleanly_and_keeps_the_prompt() {
    for signal in [libc::SIGHUP, libc::SIGTERM] {
        let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
        let gate = Gate::new();
        sandbox.enqueue(
            wire::response(WireApi::OpenAiCompletions, &Turn::text("never")).held_until(&gate),
        );
        let tmux = crate::open(&sandbox, &[], 100, 40);
        send(&tmux, "a prompt left unanswered");
        wait_text(&tmux, "Working…");
        // SAFETY: kill(2) on the program's pid; no memory is involved.
        let rc = unsafe { libc::kill(tmux.pane_pid(), signal) };
        assert_eq!(rc, 0, "kill {signal}");
        let status = tmux.wait_for_exit(WAIT).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(status, 0, "signal {signal}");
        let prompts: Vec<String> = support::read_jsonl(&sandbox.only_session())
            .iter()
            .filter(|e| e["type"] == "message" && e["message"]["role"] == "user")
            .map(|e| support::content_text(&e["message"]["content"], ""))
            .collect();
        assert_eq!(prompts, ["a prompt left unanswered"], "signal {signal}");
        gate.open();
    }
}
