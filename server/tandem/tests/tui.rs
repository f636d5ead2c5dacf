//! The interactive terminal mode, driven in a real terminal: `tandem` in a tmux pane against the
//! mock LLM, keys sent with `send-keys`, the screen read with `capture-pane`
//! (tests/support/tmux.rs). Every wait polls the screen; nothing is timed.

mod support;

#[path = "tui/commands.rs"]
mod commands;
#[path = "tui/conversation.rs"]
mod conversation;
#[path = "tui/editing.rs"]
mod editing;
#[path = "tui/extensions.rs"]
mod extensions;
#[path = "tui/outside.rs"]
mod outside;
#[path = "tui/streaming.rs"]
mod streaming;

use std::time::Duration;

use support::tmux::{Launch, Screen, Tmux};
use support::{read_jsonl, Sandbox};

/// How long a test waits for the screen to reach a state (a loaded CI machine is slow).
const WAIT: Duration = Duration::from_secs(60);

/// `tandem --model mock/mock-model <args>` in `sandbox`, `width` × `height`, once its editor is
/// drawn.
fn open(sandbox: &Sandbox, args: &[&str], width: u16, height: u16) -> Tmux {
    let mut all = vec!["--model", support::MODEL];
    all.extend_from_slice(args);
    let tmux = Launch::tandem(sandbox, &all).size(width, height).start();
    ready(&tmux);
    tmux
}

/// Waits until the editor is drawn and no run is going on.
fn ready(tmux: &Tmux) -> Screen {
    tmux.wait_for("the editor, idle", WAIT, |s| {
        s.contains("Ask anything") && !s.contains("Working…")
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Types `text` and presses Enter.
fn send(tmux: &Tmux, text: &str) {
    tmux.send_text(text);
    tmux.send_keys(&["Enter"]);
}

/// Waits until `needle` is on the screen.
fn wait_text(tmux: &Tmux, needle: &str) -> Screen {
    tmux.wait_for(&format!("{needle:?}"), WAIT, |s| s.contains(needle))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The texts of the session's assistant answers, in order.
fn answers(sandbox: &Sandbox) -> Vec<String> {
    read_jsonl(&sandbox.only_session())
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "assistant")
        .map(|e| support::content_text(&e["message"]["content"], ""))
        .collect()
}
