//! The `bash` tool: runs a command line in the working directory and answers with the end of
//! its combined output.
//!
//! The model mostly needs the end of a command's output (the error, the summary), so the result
//! keeps the last 2000 lines / 50 KB. Memory stays bounded however much a command prints: only a
//! rolling tail is kept, and once the output is too long for the result, all of it goes to a
//! temp log whose path the result names. Partial output streams to the UI, throttled. Timeouts
//! and aborts kill the command's whole process group (see [`super::process`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput, ToolUpdates};
use tokio::time::{sleep_until, timeout_at, Instant};
use tokio_util::sync::CancellationToken;

use super::args::{parse, BashArgs};
use super::process::{
    resolve_shell, terminated_by_signal, GroupProcess, OutputCapture, ProcessEvent, Snapshot,
};
use super::truncate::{format_size, TruncatedBy, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use crate::env::ToolEnv;
use crate::workspace::{CommandEnding, CommandOutcome, CommandRequest, WorkspaceError};

/// At most one partial result per this interval.
const UPDATE_INTERVAL: Duration = Duration::from_millis(100);
/// After a kill, how long to collect the output still in the pipe.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(1);

/// The `bash` tool.
pub struct BashTool {
    env: Arc<ToolEnv>,
    schema: Value,
    description: String,
}

impl BashTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Bash command to execute"},
                "timeout": {
                    "type": "number",
                    "description": "Timeout in seconds (optional, no default timeout)"
                }
            },
            "required": ["command"]
        });
        let description = format!(
            "Run a bash command in the current working directory and get back its stdout and \
             stderr, interleaved. Only the end of the output is returned: the last \
             {DEFAULT_MAX_LINES} lines or {}KB, whichever limit is reached first; when output is \
             cut, the complete output is written to a temp file whose path is given. A timeout \
             in seconds can be set; by default there is none.",
            DEFAULT_MAX_BYTES / 1024
        );
        BashTool {
            env,
            schema,
            description,
        }
    }
}

impl AgentTool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(run(&self.env, call))
    }
}

/// How the command ended.
enum Ending {
    Exited(std::process::ExitStatus),
    /// Ended where the workspace ran it (a client's terminal).
    Remote {
        code: Option<i32>,
        signal: Option<String>,
    },
    TimedOut,
    Aborted,
}

/// Output kept from a command a workspace runs (the tail is then truncated as pi does).
const REMOTE_OUTPUT_LIMIT: usize = 1024 * 1024;

async fn run(env: &ToolEnv, call: ToolInvocation) -> Result<ToolOutput, ToolError> {
    let BashArgs {
        command,
        timeout: timeout_secs,
    } = parse("bash", call.args.clone())?;
    let command = command.as_str();
    // The user may take a while to answer; an abort meanwhile ends the call.
    tokio::select! {
        biased;
        _ = call.cancel.cancelled() => return Err(ToolError::new("Command aborted")),
        consent = env.check_bash(&call.call_id, command, &env.cwd) => consent?,
    }
    if call.cancel.is_cancelled() {
        return Err(ToolError::new("Command aborted"));
    }
    // The command sees on disk what the user sees in the editor.
    tokio::select! {
        biased;
        _ = call.cancel.cancelled() => return Err(ToolError::new("Command aborted")),
        () = env.workspace.before_command(&call.call_id, command) => {}
    }
    if !tokio::fs::try_exists(&env.cwd).await.unwrap_or(false) {
        return Err(ToolError::new(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            env.cwd.display()
        )));
    }
    let shell = resolve_shell(&env.shell).await?;
    let script = match env.shell.command_prefix.as_deref() {
        Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
        _ => command.to_string(),
    };
    let timeout = timeout_secs
        .filter(|t| *t > 0.0)
        .and_then(|t| Duration::try_from_secs_f64(t).ok());
    let request = CommandRequest {
        shell: shell.clone(),
        script: script.clone(),
        cwd: env.cwd.clone(),
        timeout,
        output_limit: REMOTE_OUTPUT_LIMIT,
    };
    let started = Instant::now();
    if let Some(remote) = env
        .workspace
        .run_command(&call.call_id, request, call.cancel.clone())
    {
        return run_remote(remote, timeout_secs, started).await;
    }
    // Only here, when no client terminal runs it: the command runs exactly once.
    let mut process = GroupProcess::spawn(&shell, &script, &env.cwd).map_err(|e| {
        ToolError::new(format!(
            "Could not start the shell {}: {e}",
            shell.display()
        ))
    })?;
    let deadline = timeout.and_then(|d| Instant::now().checked_add(d));

    let mut capture = OutputCapture::new();
    let mut stream = UpdateStream::new(&call.updates, &call.cancel, deadline);
    let ending = loop {
        tokio::select! {
            biased;
            _ = call.cancel.cancelled() => break Ending::Aborted,
            _ = sleep_until_opt(deadline) => break Ending::TimedOut,
            _ = sleep_until(stream.due), if stream.dirty => stream.send(&mut capture).await,
            event = process.next() => match event {
                Ok(ProcessEvent::Output(bytes)) => {
                    capture.push(&bytes).await;
                    stream.mark_dirty(&mut capture).await;
                }
                Ok(ProcessEvent::Finished(status)) => break Ending::Exited(status),
                Err(e) => {
                    process.kill_group();
                    return Err(ToolError::new(format!("Reading the command's output failed: {e}")));
                }
            },
        }
    };
    if !matches!(ending, Ending::Exited(_)) {
        process.kill_group();
        let drain_until = Instant::now() + DRAIN_AFTER_KILL;
        while let Ok(Ok(ProcessEvent::Output(bytes))) =
            timeout_at(drain_until, process.next()).await
        {
            capture.push(&bytes).await;
        }
    }
    drop(process);
    if stream.dirty {
        stream.send(&mut capture).await;
    }
    let snapshot = capture.finish().await;
    finish(ending, &snapshot, timeout_secs, started)
}

/// Waits for a command the workspace runs, then answers as for a local one.
async fn run_remote(
    remote: BoxFuture<'_, Result<CommandOutcome, WorkspaceError>>,
    timeout_secs: Option<f64>,
    started: Instant,
) -> Result<ToolOutput, ToolError> {
    let outcome = remote
        .await
        .map_err(|e| ToolError::new(format!("Running the command failed: {e}")))?;
    let mut capture = OutputCapture::new();
    capture.push(&outcome.output).await;
    let ending = match outcome.ending {
        CommandEnding::Exited { code, signal } => Ending::Remote { code, signal },
        CommandEnding::TimedOut => Ending::TimedOut,
        CommandEnding::Aborted => Ending::Aborted,
    };
    let snapshot = capture.finish().await;
    finish(ending, &snapshot, timeout_secs, started)
}

/// A failure: the output (when there is any), a blank line, then what happened.
fn with_status(text: String, status: String) -> ToolError {
    if text.is_empty() {
        ToolError::new(status)
    } else {
        ToolError::new(format!("{text}\n\n{status}"))
    }
}

/// Turns the ending and the captured output into pi's result or error text.
fn finish(
    ending: Ending,
    snapshot: &Snapshot,
    timeout_secs: Option<f64>,
    started: Instant,
) -> Result<ToolOutput, ToolError> {
    match ending {
        Ending::Aborted => Err(with_status(render(snapshot, ""), "Command aborted".into())),
        Ending::TimedOut => Err(with_status(
            render(snapshot, ""),
            format!(
                "Command timed out after {} seconds",
                timeout_secs.unwrap_or_default()
            ),
        )),
        Ending::Exited(status) => exited(snapshot, status.code(), started, || {
            terminated_by_signal(status)
        }),
        Ending::Remote { code, signal } => exited(snapshot, code, started, || match signal {
            Some(name) => format!("Command was terminated by signal {name}"),
            None => "Command ended without an exit code".to_string(),
        }),
    }
}

/// pi's result for a command that exited: the output, or an error naming the code or signal.
fn exited(
    snapshot: &Snapshot,
    code: Option<i32>,
    started: Instant,
    signal: impl FnOnce() -> String,
) -> Result<ToolOutput, ToolError> {
    let text = render(snapshot, "(no output)");
    match code {
        Some(0) => {
            let output = ToolOutput {
                structured_content: Some(snapshot.structured(0, started)),
                ..ToolOutput::text(text)
            };
            Ok(match snapshot.truncated_details() {
                Some(details) => output.with_details(details),
                None => output,
            })
        }
        Some(code) => Err(with_status(
            text,
            format!("Command exited with code {code}"),
        )),
        None => Err(with_status(text, signal())),
    }
}

/// The kept output (or `empty` when there is none), followed by pi's truncation notice.
fn render(snapshot: &Snapshot, empty: &str) -> String {
    let t = &snapshot.truncation;
    let mut text = if t.content.is_empty() {
        empty.to_string()
    } else {
        t.content.clone()
    };
    if !t.truncated() {
        return text;
    }
    let full = snapshot.full_output_ref();
    let end = t.total_lines;
    let start = end + 1 - t.output_lines.min(end);
    if t.last_line_partial {
        text.push_str(&format!(
            "\n\n[Showing last {} of line {end} (line is {}). Full output: {full}]",
            format_size(t.output_bytes),
            format_size(snapshot.last_line_bytes)
        ));
    } else if t.truncated_by == Some(TruncatedBy::Lines) {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {end}. Full output: {full}]"
        ));
    } else {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {end} ({} limit). Full output: {full}]",
            format_size(DEFAULT_MAX_BYTES)
        ));
    }
    text
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Snapshot {
    /// pi 1.6's `structuredContent` of a command that exited: the output kept (the tail, when
    /// it was cut), whether it was cut and where the whole of it is, the exit code, and the wall
    /// time in tenths of a second.
    fn structured(&self, exit_code: i32, started: Instant) -> Value {
        let t = &self.truncation;
        let tenths = (started.elapsed().as_millis() + 50) / 100;
        let mut value = json!({
            "output": t.content,
            "truncated": t.truncated(),
        });
        if let (true, Some(path)) = (t.truncated(), &self.full_output) {
            value["full_output_path"] = json!(path.display().to_string());
        }
        value["exit_code"] = json!(exit_code);
        // Whole seconds as integers, as JavaScript prints them.
        value["wall_time_seconds"] = match tenths % 10 {
            0 => json!(tenths / 10),
            _ => json!(tenths as f64 / 10.0),
        };
        value
    }

    /// pi's `details` for a cut output: the truncation and the log's path.
    fn truncated_details(&self) -> Option<Value> {
        let t = &self.truncation;
        if !t.truncated() {
            return None;
        }
        let mut details = json!({"truncation": t.details(DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)});
        if let Some(path) = &self.full_output {
            details["fullOutputPath"] = json!(path.display().to_string());
        }
        Some(details)
    }

    /// What the notice says after "Full output:".
    fn full_output_ref(&self) -> String {
        match (&self.full_output, &self.spill_error) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(reason)) => format!("not saved ({reason})"),
            (None, None) => "not saved".to_string(),
        }
    }
}

/// Throttled partial results: the first output goes out at once, later output at most once per
/// [`UPDATE_INTERVAL`], and the last pending state before the end.
struct UpdateStream<'a> {
    updates: &'a ToolUpdates,
    cancel: &'a CancellationToken,
    deadline: Option<Instant>,
    /// Output arrived since the last update.
    dirty: bool,
    /// When the next update may go out.
    due: Instant,
}

impl<'a> UpdateStream<'a> {
    fn new(
        updates: &'a ToolUpdates,
        cancel: &'a CancellationToken,
        deadline: Option<Instant>,
    ) -> Self {
        UpdateStream {
            updates,
            cancel,
            deadline,
            dirty: false,
            due: Instant::now(),
        }
    }

    /// Notes new output; sends it now when the interval has passed.
    async fn mark_dirty(&mut self, capture: &mut OutputCapture) {
        self.dirty = true;
        if Instant::now() >= self.due {
            self.send(capture).await;
        }
    }

    /// Sends the current tail. A slow consumer may delay it, but never past an abort or the
    /// timeout: then the update is dropped.
    async fn send(&mut self, capture: &mut OutputCapture) {
        self.dirty = false;
        self.due = Instant::now() + UPDATE_INTERVAL;
        let snapshot = capture.snapshot().await;
        let mut details = serde_json::Map::new();
        if let Some(Value::Object(extra)) = snapshot.truncated_details() {
            details = extra;
        }
        let partial = ToolOutput::text(snapshot.truncation.content.clone())
            .with_details(Value::Object(details));
        tokio::select! {
            _ = self.updates.send(partial) => {}
            _ = self.cancel.cancelled() => {}
            _ = sleep_until_opt(self.deadline) => {}
        }
    }
}

#[cfg(test)]
#[path = "bash_tests.rs"]
mod tests;
