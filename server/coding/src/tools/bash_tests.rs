//! The bash tool against real processes: texts, ordering, truncation and the spill log,
//! streamed updates, timeouts and aborts (whole process groups die), and consent.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tandem_agent::ToolUpdates;
use tandem_ai::UserBlock;
use tempfile::TempDir;
use tokio::sync::mpsc;

use super::*;
use crate::env::{BashPolicy, ShellSettings};
use crate::workspace::{PermissionDecision, PermissionRequest, ScriptedWorkspace};

struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    workspace: Arc<ScriptedWorkspace>,
    tool: Arc<BashTool>,
}

fn fixture(shell: ShellSettings) -> Fixture {
    fixture_in(shell, None)
}

fn fixture_in(shell: ShellSettings, cwd: Option<&str>) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical temp dir");
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    let cwd = cwd.map(|c| root.join(c)).unwrap_or_else(|| root.clone());
    let env = ToolEnv::new(workspace.clone(), cwd).with_shell(shell);
    Fixture {
        _dir: dir,
        root,
        workspace,
        tool: Arc::new(BashTool::new(Arc::new(env))),
    }
}

fn invocation(args: Value, cancel: CancellationToken, updates: ToolUpdates) -> ToolInvocation {
    ToolInvocation {
        call_id: "call-1".into(),
        args,
        cancel,
        updates,
    }
}

async fn run(tool: &BashTool, args: Value) -> Result<ToolOutput, ToolError> {
    let call = invocation(args, CancellationToken::new(), ToolUpdates::discard());
    tool.execute(call).await
}

async fn ok(tool: &BashTool, command: &str) -> ToolOutput {
    match run(tool, json!({ "command": command })).await {
        Ok(out) => out,
        Err(e) => panic!("`{command}` failed: {e}"),
    }
}

async fn err(tool: &BashTool, args: Value) -> String {
    match run(tool, args.clone()).await {
        Ok(out) => panic!("{args} succeeded: {}", text(&out)),
        Err(e) => e.0,
    }
}

fn text(out: &ToolOutput) -> String {
    out.content
        .iter()
        .map(|block| match block {
            UserBlock::Text(t) => t.text.as_str(),
            UserBlock::Image(_) => "",
        })
        .collect()
}

fn pid_on_line(text: &str, line: usize) -> libc::pid_t {
    let raw = text.lines().nth(line).unwrap_or_default();
    raw.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid on line {line} of {text:?}"))
}

/// Gone, or a zombie nobody reaped yet (PID 1 in a container may never reap).
fn is_dead(pid: libc::pid_t) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    state.starts_with('Z') || state.starts_with('X')
}

/// A SIGKILLed process needs a moment to be torn down; wait for that, but not forever.
async fn assert_dies(pid: libc::pid_t) {
    let until = Instant::now() + Duration::from_secs(5);
    while !is_dead(pid) {
        assert!(Instant::now() < until, "process {pid} is still running");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn details_path(out: &ToolOutput) -> PathBuf {
    let details = out.details.as_ref().expect("details");
    PathBuf::from(details["fullOutputPath"].as_str().expect("fullOutputPath"))
}

#[tokio::test]
async fn echo_returns_the_output_as_is() {
    let f = fixture(ShellSettings::default());
    let out = ok(&f.tool, "echo 'test output'").await;
    assert_eq!(text(&out), "test output\n");
    assert_eq!(out.details, None);
    assert_eq!(
        text(&ok(&f.tool, "pwd").await),
        format!("{}\n", f.root.display())
    );
}

#[tokio::test]
async fn stdout_and_stderr_interleave_in_write_order() {
    let f = fixture(ShellSettings::default());
    let out = ok(&f.tool, "echo a; echo b >&2; echo c; echo d >&2").await;
    assert_eq!(text(&out), "a\nb\nc\nd\n");
}

#[tokio::test]
async fn empty_output_and_failures_use_pis_texts() {
    let f = fixture(ShellSettings::default());
    assert_eq!(text(&ok(&f.tool, "true").await), "(no output)");
    assert_eq!(
        err(&f.tool, json!({"command": "echo oops; exit 3"})).await,
        "oops\n\n\nCommand exited with code 3"
    );
    assert_eq!(
        err(&f.tool, json!({"command": "exit 1"})).await,
        "(no output)\n\nCommand exited with code 1"
    );
    assert_eq!(
        err(&f.tool, json!({"command": "kill -TERM $$"})).await,
        "(no output)\n\nCommand was terminated by signal SIGTERM"
    );
}

#[tokio::test]
async fn invalid_utf8_is_decoded_lossily() {
    let f = fixture(ShellSettings::default());
    let out = ok(&f.tool, r"printf '\xff\xfeok\n'").await;
    assert_eq!(text(&out), "\u{fffd}\u{fffd}ok\n");
}

#[tokio::test]
async fn the_command_prefix_runs_first() {
    let shell = ShellSettings {
        command_prefix: Some("export GREETING=hello\necho prefix".into()),
        ..ShellSettings::default()
    };
    let f = fixture(shell);
    assert_eq!(
        text(&ok(&f.tool, "echo $GREETING").await),
        "prefix\nhello\n"
    );
}

#[tokio::test]
async fn a_missing_working_directory_or_shell_is_reported() {
    let f = fixture_in(ShellSettings::default(), Some("missing"));
    assert_eq!(
        err(&f.tool, json!({"command": "echo hi"})).await,
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            f.root.join("missing").display()
        )
    );
    let shell = ShellSettings {
        shell: Some("/nonexistent/shell".into()),
        ..ShellSettings::default()
    };
    let f = fixture(shell);
    assert_eq!(
        err(&f.tool, json!({"command": "echo hi"})).await,
        "Custom shell path not found: /nonexistent/shell\nPlease update shellPath in your settings."
    );
    let shell = ShellSettings {
        shell: Some("/bin/sh".into()),
        ..ShellSettings::default()
    };
    let f = fixture(shell);
    assert_eq!(text(&ok(&f.tool, "echo via sh").await), "via sh\n");
}

#[tokio::test]
async fn long_output_keeps_the_tail_and_spills_everything() {
    let f = fixture(ShellSettings::default());
    let out = ok(&f.tool, "seq 1 200000").await;
    let path = details_path(&out);
    let tail: String = (198002..=200000).map(|i| format!("{i}\n")).collect();
    assert_eq!(
        text(&out),
        format!(
            "{tail}\n\n[Showing lines 198002-200001 of 200001. Full output: {}]",
            path.display()
        )
    );
    let details = out.details.as_ref().expect("details");
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert_eq!(details["truncation"]["totalLines"], 200001);
    assert_eq!(details["truncation"]["outputLines"], 2000);
    let full = std::fs::read_to_string(&path).expect("spill file");
    assert_eq!(full.lines().count(), 200000);
    let expected: String = (1..=200000).map(|i| format!("{i}\n")).collect();
    assert!(full == expected, "the spill file differs from the output");
    assert_eq!(details["truncation"]["totalBytes"], expected.len());
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn wide_output_is_cut_at_the_byte_limit() {
    let f = fixture(ShellSettings::default());
    let command = "for i in $(seq 1 1000); do printf '%099d\\n' $i; done";
    let out = ok(&f.tool, command).await;
    let path = details_path(&out);
    let tail: String = (489..=1000).map(|i| format!("{i:099}\n")).collect();
    assert_eq!(
        text(&out),
        format!(
            "{tail}\n\n[Showing lines 489-1001 of 1001 (50.0KB limit). Full output: {}]",
            path.display()
        )
    );
    assert_eq!(std::fs::metadata(&path).expect("spill file").len(), 100_000);
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn an_overlong_last_line_keeps_its_end() {
    let f = fixture(ShellSettings::default());
    let out = ok(&f.tool, "head -c 60000 /dev/zero | tr '\\0' x").await;
    let path = details_path(&out);
    assert_eq!(
        text(&out),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {}]",
            "x".repeat(51200),
            path.display()
        )
    );
    let _ = std::fs::remove_file(path);
}

/// A call running in a task, and its updates.
type Running = (
    tokio::task::JoinHandle<Result<ToolOutput, ToolError>>,
    mpsc::Receiver<(usize, ToolOutput)>,
);

/// Runs `command` in a task, handing back its updates.
fn spawn_with_updates(tool: &Arc<BashTool>, args: Value, cancel: CancellationToken) -> Running {
    let (updates, rx) = ToolUpdates::channel(64);
    let tool = tool.clone();
    let call = invocation(args, cancel, updates);
    (tokio::spawn(async move { tool.execute(call).await }), rx)
}

#[tokio::test]
async fn partial_output_streams_while_the_command_runs() {
    let f = fixture(ShellSettings::default());
    let command = "for i in 1 2 3; do echo $i; sleep 0.2; done";
    let (task, mut rx) = spawn_with_updates(
        &f.tool,
        json!({ "command": command }),
        CancellationToken::new(),
    );
    let mut seen = Vec::new();
    while let Some((_, update)) = rx.recv().await {
        seen.push(text(&update));
    }
    let out = task.await.expect("task").expect("result");
    assert_eq!(text(&out), "1\n2\n3\n");
    assert!(seen.len() >= 2, "too few updates: {seen:?}");
    assert_eq!(seen.first().map(String::as_str), Some("1\n"));
    assert_eq!(seen.last().map(String::as_str), Some("1\n2\n3\n"));
    assert!(seen.windows(2).all(|w| w[1].starts_with(&w[0])), "{seen:?}");
}

#[tokio::test]
async fn updates_are_throttled_for_chatty_commands() {
    let f = fixture(ShellSettings::default());
    let started = Instant::now();
    let (task, mut rx) = spawn_with_updates(
        &f.tool,
        json!({"command": "seq 1 300000"}),
        CancellationToken::new(),
    );
    let mut count = 0u128;
    while rx.recv().await.is_some() {
        count += 1;
    }
    let out = task.await.expect("task").expect("result");
    let _ = std::fs::remove_file(details_path(&out));
    let allowed = started.elapsed().as_millis() / UPDATE_INTERVAL.as_millis() + 2;
    assert!(
        count <= allowed,
        "{count} updates, at most {allowed} expected"
    );
}

#[tokio::test]
async fn a_timeout_kills_the_group_and_reports_the_output_so_far() {
    let f = fixture(ShellSettings::default());
    let started = Instant::now();
    let command = "sleep 100 & echo $!; bash -c 'echo $$; sleep 100'";
    let message = err(&f.tool, json!({"command": command, "timeout": 1})).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let (background, grandchild) = (pid_on_line(&message, 0), pid_on_line(&message, 1));
    assert_eq!(
        message,
        format!("{background}\n{grandchild}\n\n\nCommand timed out after 1 seconds")
    );
    assert_dies(background).await;
    assert_dies(grandchild).await;
}

#[tokio::test]
async fn a_timeout_with_no_output_is_just_the_notice() {
    let f = fixture(ShellSettings::default());
    let message = err(&f.tool, json!({"command": "sleep 30", "timeout": 0.5})).await;
    assert_eq!(message, "Command timed out after 0.5 seconds");
}

#[tokio::test]
async fn an_abort_kills_the_group_promptly() {
    let f = fixture(ShellSettings::default());
    let cancel = CancellationToken::new();
    let command = "echo $$; sleep 100 & echo $!; sleep 30";
    let (task, mut rx) = spawn_with_updates(&f.tool, json!({ "command": command }), cancel.clone());
    let mut printed = String::new();
    while printed.lines().count() < 2 {
        let (_, update) = rx.recv().await.expect("an update before the end");
        printed = text(&update);
    }
    cancel.cancel();
    let aborted_at = Instant::now();
    let message = task.await.expect("task").expect_err("aborted");
    assert!(aborted_at.elapsed() < Duration::from_secs(3));
    let (shell, background) = (pid_on_line(&printed, 0), pid_on_line(&printed, 1));
    assert_eq!(
        message.0,
        format!("{shell}\n{background}\n\n\nCommand aborted")
    );
    assert_dies(shell).await;
    assert_dies(background).await;
}

#[tokio::test]
async fn an_abort_before_the_start_runs_nothing() {
    let f = fixture(ShellSettings::default());
    let cancel = CancellationToken::new();
    cancel.cancel();
    let call = invocation(
        json!({"command": "touch marker"}),
        cancel,
        ToolUpdates::discard(),
    );
    let message = f.tool.execute(call).await.expect_err("aborted");
    assert_eq!(message.0, "Command aborted");
    assert!(!f.root.join("marker").exists());
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let f = fixture(ShellSettings::default());
    let (updates, mut rx) = ToolUpdates::channel(64);
    let call = invocation(
        json!({"command": "echo $$; sleep 30"}),
        CancellationToken::new(),
        updates,
    );
    let mut running = f.tool.execute(call);
    let pid = tokio::select! {
        _ = &mut running => panic!("the command ended early"),
        Some((_, update)) = rx.recv() => pid_on_line(&text(&update), 0),
    };
    drop(running);
    assert_dies(pid).await;
}

#[tokio::test]
async fn a_background_job_does_not_hold_the_call_open() {
    let f = fixture(ShellSettings::default());
    let started = Instant::now();
    let out = ok(&f.tool, "sleep 30 & echo $!").await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let pid = pid_on_line(&text(&out), 0);
    // Like pi, a command that ends normally leaves its background jobs running.
    assert!(!is_dead(pid));
    // SAFETY: signalling the test's own leftover `sleep`.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

fn asking() -> ShellSettings {
    ShellSettings {
        policy: BashPolicy::Ask,
        ..ShellSettings::default()
    }
}

fn bash_request(command: &str, cwd: &Path) -> PermissionRequest {
    PermissionRequest::Bash {
        command: command.into(),
        cwd: cwd.to_path_buf(),
    }
}

#[tokio::test]
async fn the_deny_policy_runs_nothing() {
    let f = fixture(ShellSettings {
        policy: BashPolicy::Deny,
        ..ShellSettings::default()
    });
    assert_eq!(
        err(&f.tool, json!({"command": "touch marker"})).await,
        "Running shell commands is disabled (bash permission is set to deny)"
    );
    assert!(!f.root.join("marker").exists());
    assert!(f.workspace.permission_requests().is_empty());
}

#[tokio::test]
async fn a_rejected_command_runs_nothing() {
    let f = fixture(asking());
    f.workspace.answer_permissions([PermissionDecision::Reject {
        reason: Some("not now".into()),
    }]);
    assert_eq!(
        err(&f.tool, json!({"command": "touch marker"})).await,
        "The user rejected running this command: not now"
    );
    assert!(!f.root.join("marker").exists());
    assert_eq!(
        f.workspace.permission_requests(),
        [bash_request("touch marker", &f.root)]
    );
}

#[tokio::test]
async fn allow_always_stops_asking() {
    let f = fixture(asking());
    f.workspace
        .answer_permissions([PermissionDecision::AllowAlways]);
    assert_eq!(text(&ok(&f.tool, "echo one").await), "one\n");
    assert_eq!(text(&ok(&f.tool, "echo two").await), "two\n");
    assert_eq!(
        f.workspace.permission_requests(),
        [bash_request("echo one", &f.root)]
    );
}

/// A workspace that runs commands itself (as an ACP client's terminal does): it answers with a
/// fixed outcome and records the request.
struct TerminalWorkspace {
    inner: ScriptedWorkspace,
    outcome: CommandOutcome,
    seen: std::sync::Mutex<Vec<CommandRequest>>,
}

impl crate::workspace::Workspace for TerminalWorkspace {
    fn roots(&self) -> &[PathBuf] {
        self.inner.roots()
    }
    fn read<'a>(
        &'a self,
        path: &'a Path,
    ) -> BoxFuture<'a, Result<crate::workspace::FileContent, WorkspaceError>> {
        self.inner.read(path)
    }
    fn propose<'a>(
        &'a self,
        call: &'a str,
        change: crate::workspace::FileChange,
    ) -> BoxFuture<'a, Result<crate::workspace::ChangeOutcome, WorkspaceError>> {
        self.inner.propose(call, change)
    }
    fn ask_permission<'a>(
        &'a self,
        call: &'a str,
        request: PermissionRequest,
    ) -> BoxFuture<'a, PermissionDecision> {
        self.inner.ask_permission(call, request)
    }
    fn run_command<'a>(
        &'a self,
        _call: &'a str,
        request: CommandRequest,
        _cancel: CancellationToken,
    ) -> Option<BoxFuture<'a, Result<CommandOutcome, WorkspaceError>>> {
        self.seen.lock().unwrap().push(request);
        let outcome = self.outcome.clone();
        Some(Box::pin(async move { Ok(outcome) }))
    }
}

async fn run_in_terminal(
    outcome: CommandOutcome,
    command: &str,
) -> (Result<ToolOutput, ToolError>, Vec<CommandRequest>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical temp dir");
    let workspace = Arc::new(TerminalWorkspace {
        inner: ScriptedWorkspace::new(&root),
        outcome,
        seen: Default::default(),
    });
    let env = ToolEnv::new(workspace.clone(), &root).with_shell(ShellSettings {
        command_prefix: Some("set -e".into()),
        policy: BashPolicy::Allow,
        ..ShellSettings::default()
    });
    let tool = BashTool::new(Arc::new(env));
    let result = run(&tool, json!({"command": command, "timeout": 5})).await;
    let seen = workspace.seen.lock().unwrap().clone();
    (result, seen)
}

#[tokio::test]
async fn a_command_a_terminal_runs_is_not_also_run_here() {
    // It once was: the local shell started before the workspace was asked, so a command
    // with side effects ran twice (here and in the client's terminal).
    let marker = tempfile::tempdir().expect("temp dir");
    let file = marker.path().join("ran-here");
    let command = format!("touch {}", file.display());
    let (result, seen) = run_in_terminal(
        CommandOutcome {
            output: Vec::new(),
            truncated: false,
            ending: CommandEnding::Exited {
                code: Some(0),
                signal: None,
            },
        },
        &command,
    )
    .await;
    result.expect("the command succeeded");
    assert_eq!(seen.len(), 1, "the terminal ran it");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!file.exists(), "the command also ran locally");
}

#[tokio::test]
async fn a_workspace_with_a_terminal_runs_the_command_and_pi_formats_the_result() {
    let (result, seen) = run_in_terminal(
        CommandOutcome {
            output: b"hello\n".to_vec(),
            truncated: false,
            ending: CommandEnding::Exited {
                code: Some(0),
                signal: None,
            },
        },
        "echo hello",
    )
    .await;
    assert_eq!(text(&result.expect("the command succeeded")), "hello\n");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].script, "set -e\necho hello");
    assert_eq!(seen[0].timeout, Some(Duration::from_secs(5)));
    assert!(seen[0].shell.is_absolute() || seen[0].shell == Path::new("sh"));

    let (result, _) = run_in_terminal(
        CommandOutcome {
            output: b"boom\n".to_vec(),
            truncated: false,
            ending: CommandEnding::Exited {
                code: Some(3),
                signal: None,
            },
        },
        "false",
    )
    .await;
    assert_eq!(
        result.expect_err("exit 3 fails").to_string(),
        "boom\n\n\nCommand exited with code 3"
    );

    let (result, _) = run_in_terminal(
        CommandOutcome {
            output: Vec::new(),
            truncated: false,
            ending: CommandEnding::Exited {
                code: None,
                signal: Some("SIGKILL".into()),
            },
        },
        "sleep 9",
    )
    .await;
    assert_eq!(
        result.expect_err("killed").to_string(),
        "(no output)\n\nCommand was terminated by signal SIGKILL"
    );

    let (result, _) = run_in_terminal(
        CommandOutcome {
            output: b"partial".to_vec(),
            truncated: false,
            ending: CommandEnding::TimedOut,
        },
        "sleep 9",
    )
    .await;
    assert_eq!(
        result.expect_err("timed out").to_string(),
        "partial\n\nCommand timed out after 5 seconds"
    );
}
