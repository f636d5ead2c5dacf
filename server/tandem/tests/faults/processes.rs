//! Issue 29: an abort ends every process a command started — also one that left the command's
//! process group (`setsid … &`) and one orphaned by a double fork — in print mode (Ctrl-C) and
//! through `tandem lsp` (`tandem/abort`). The command writes its background processes' pids to
//! a file and then waits; the test aborts once all are written and checks none is left.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_tests::lsp_client::event_type;
use tandem_tests::wire::Turn;

use super::harness::interrupt;
use crate::support::lsp::{sandbox_lsp, stderr_of};
use crate::support::process::{assert_no_panic, command, wait_or_fail, HANG_GUARD};
use crate::support::{Sandbox, MODEL};

/// A command that starts three sleeps outside its process group — `setsid … &`, a double fork
/// `( setsid … & )`, a `nohup` in a subshell that exits — writes their pids to `pids`, then
/// waits for the abort.
fn escaping_command(pids: &Path) -> String {
    let pids = pids.display();
    format!(
        "setsid sleep 1001 & echo $! >> '{pids}'; \
         ( setsid sleep 1002 & echo $! >> '{pids}' ); \
         sh -c 'nohup sleep 1003 >/dev/null 2>&1 & echo $! >> \"{pids}\"'; \
         echo started; sleep 1000"
    )
}

/// The pids the command wrote, once all three are there (a hang guard bounds the wait).
fn wait_for_pids(pids: &Path) -> Vec<u32> {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let found: Vec<u32> = std::fs::read_to_string(pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if found.len() == 3 {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "the command's sleeps did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` runs (a zombie waiting to be reaped does not count).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rfind(')').is_some_and(|at| !s[at..].starts_with(") Z")))
}

/// Asserts that none of `pids` runs, waiting (bounded) for the kernel to finish the kills.
fn assert_all_gone(pids: &[u32], what: &str) {
    let deadline = Instant::now() + HANG_GUARD;
    while pids.iter().any(|p| running(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = pids.iter().copied().filter(|p| running(*p)).collect();
    // Never leave them behind, whatever the assertion says.
    for p in &left {
        // SAFETY: kill(2) on a pid this test's command started.
        unsafe { libc::kill(*p as libc::pid_t, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "{what}: still running after the abort: {left:?}"
    );
}

/// A sandbox whose model runs [`escaping_command`] and then answers; the file the command's
/// pids go to.
fn sandbox_running_escapes() -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::with_quick_retries();
    let pids = sandbox.home.join("pids");
    sandbox.answer(&Turn::tool_call(
        "c1",
        "bash",
        json!({"command": escaping_command(&pids)}),
    ));
    sandbox.answer(&Turn::text("stopped"));
    (sandbox, pids)
}

#[test]
fn ctrl_c_ends_every_process_the_command_started_even_outside_its_group() {
    let (sandbox, pids) = sandbox_running_escapes();
    let mut child = command(
        &sandbox,
        &["--model", MODEL, "--mode", "json", "-p", "go"],
        "escape.stderr",
    )
    .spawn()
    .expect("spawns tandem");
    drop(child.stdin.take());
    let started = wait_for_pids(&pids);
    interrupt(&child);
    let status = wait_or_fail(&mut child, HANG_GUARD, "tandem after SIGINT");
    assert_eq!(status.code(), Some(130));
    assert_no_panic(&std::fs::read_to_string(sandbox.home.join("escape.stderr")).unwrap());
    assert_all_gone(&started, "print mode");
}

#[test]
fn tandem_abort_ends_every_process_the_command_started_even_outside_its_group() -> anyhow::Result<()>
{
    let (sandbox, pids) = sandbox_running_escapes();
    let mut lsp = sandbox_lsp(&sandbox, json!({"bashPermission": "allow"}))?;
    let session = crate::support::lsp::prompt(&mut lsp, json!({"text": "go"}))?;
    let s = session.clone();
    lsp.wait_for("the command's start", |m| {
        m.params["session"] == s && event_type(&m.params) == "tool_start"
    })?;
    let started = wait_for_pids(&pids);
    lsp.request("tandem/abort", json!({"session": session}))?;
    lsp.wait_settled(&session, 1)?;
    assert_all_gone(&started, "tandem/abort");
    lsp.shutdown()?;
    assert_no_panic(&stderr_of(&lsp));
    Ok(())
}
