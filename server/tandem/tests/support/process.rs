//! The `tandem` binary as a child process in a [`Sandbox`]: a clean environment, stderr kept in
//! a file, a hang guard on every wait, and the check every fault test ends with (no panic).

use std::fs::File;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::Sandbox;

/// Longest any one wait on the binary may take before the test fails as hung. A guard only:
/// nothing asserts how fast anything is.
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// `tandem <args>` in the sandbox: its home, agent dir and project, and nothing else from the
/// environment but `PATH`.
pub fn in_sandbox(sandbox: &Sandbox, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
    cmd.args(args)
        .current_dir(&sandbox.cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir);
    if let Some(node) = super::extension_node() {
        cmd.env("TANDEM_NODE", node);
    }
    cmd
}

/// [`in_sandbox`] with stdin and stdout piped and stderr to `<home>/<stderr_name>`.
pub fn command(sandbox: &Sandbox, args: &[&str], stderr_name: &str) -> Command {
    let stderr = File::create(sandbox.home.join(stderr_name)).expect("stderr file");
    let mut cmd = in_sandbox(sandbox, args);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    cmd
}

/// Waits for `child` to exit; kills it and fails the test if it takes longer than `guard`.
pub fn wait_or_fail(child: &mut Child, guard: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + guard;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: the process did not exit within {guard:?} (hung)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Fails when `stderr` shows a panic.
pub fn assert_no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked"),
        "the process panicked; stderr:\n{stderr}"
    );
}
