//! `tandem demo` as a user runs it: the real binary, a temp HOME and no agent dir in the
//! environment. The demo drives `tandem lsp` as an editor would (initialize, didOpen,
//! `tandem/prompt`, `workspace/applyEdit`), so this runs the whole server path offline.

use std::process::Command;

#[test]
fn demo_fixes_the_greeting_through_the_language_server() {
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("demo")
        .env("HOME", home.path())
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    for expected in [
        "Let me look at the greeting code.",
        "The greeting says \"Helo\" instead of \"Hello\". I'll fix the spelling.",
        "Fixed: `greet()` now returns \"Hello, {name}!\" and `./check.sh` passes.",
        "→ Read src/greet.py",
        "→ Edit src/greet.py",
        "→ Run `./check.sh`",
        // The check ran on the fixed file: the demo's editor saved it when the server asked
        // (tandem/saveDocuments), not on its own.
        "ok: Hello, world!",
        "+    return f\"Hello, {name}!\"",
        "-    return f\"Helo, {name}!\"",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in stdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}
