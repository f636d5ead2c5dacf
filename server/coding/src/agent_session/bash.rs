//! A shell command the user runs directly (pi's `!cmd`, RPC's `bash`): its output streams to
//! the caller as it comes, its result is pi's `BashResult`, and it is recorded as pi records it —
//! a `bashExecution` message in the conversation and the session file, which the model reads
//! with the next prompt unless `excludeFromContext`. A command that ends while a run is active
//! is recorded after that run settles, so it never lands between a tool call and its result.
//!
//! It runs like the bash tool (the session's shell settings, its own process group, the output
//! kept as a bounded tail with the whole of it spilled to a temp log when long) but asks no
//! permission: the user typed it.

use std::path::PathBuf;

use serde::Serialize;
use tandem_agent::AgentMessage;
use tandem_ai::now_millis;
use tandem_ai::sync::lock;
use tokio_util::sync::CancellationToken;

use super::{AgentSession, SessionError};
use crate::env::ShellSettings;
use crate::messages::{BashExecutionMessage, CodingMessage};
use crate::tools::process::{resolve_shell, GroupProcess, OutputCapture, ProcessEvent};

/// How a user's command ended, as pi's `BashResult`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashResult {
    /// The output's end (pi's 2000 lines / 50 KB), stdout and stderr interleaved.
    pub output: String,
    /// The exit code; absent when the command was cancelled or killed by a signal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Whether it was aborted.
    pub cancelled: bool,
    /// Whether `output` is only the end of it.
    pub truncated: bool,
    /// The whole output, when it was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

/// An extension's `user_bash` result as pi's `BashResult` (missing fields: empty, not cut).
fn extension_result(value: &serde_json::Value) -> BashResult {
    BashResult {
        output: value
            .get("output")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_string(),
        exit_code: value.get("exitCode").and_then(serde_json::Value::as_i64),
        cancelled: value.get("cancelled").and_then(serde_json::Value::as_bool) == Some(true),
        truncated: value.get("truncated").and_then(serde_json::Value::as_bool) == Some(true),
        full_output_path: None,
    }
}

/// UTF-8 text out of output chunks that may split a character: what is incomplete at a chunk's
/// end waits for the next one.
#[derive(Default)]
struct Utf8Chunks {
    held: Vec<u8>,
}

impl Utf8Chunks {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.held.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.held) {
            Ok(_) => self.held.len(),
            // An incomplete character at the end waits; anything else invalid is replaced.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.held.len(),
        };
        let text = String::from_utf8_lossy(&self.held[..valid]).into_owned();
        self.held.drain(..valid);
        text
    }

    fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.held).into_owned();
        self.held.clear();
        text
    }
}

impl AgentSession {
    /// Runs `command` in the session's working directory with its shell settings, handing each
    /// piece of output to `on_output` as it comes, and records it (see the module docs).
    /// [`AgentSession::abort_bash`] cancels it. Refused while another user command runs.
    pub async fn run_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        mut on_output: impl FnMut(String) + Send,
    ) -> Result<BashResult, SessionError> {
        let cancel = CancellationToken::new();
        {
            let mut running = lock(&self.bash);
            if running.as_ref().is_some_and(|c| !c.is_cancelled()) {
                return Err(SessionError::Bash(
                    "A bash command is already running; wait for it or abort it first".into(),
                ));
            }
            *running = Some(cancel.clone());
        }
        let replaced = match self.extensions() {
            Some(extensions) => extensions.user_bash(command, exclude_from_context).await,
            None => None,
        };
        let result = match replaced {
            // An extension ran it elsewhere (over SSH, say) or answered for it.
            Some(value) => {
                let result = extension_result(&value);
                on_output(result.output.clone());
                Ok(result)
            }
            None => self.execute_bash(command, &cancel, &mut on_output).await,
        };
        *lock(&self.bash) = None;
        let result = result?;
        self.record_bash(BashExecutionMessage {
            command: command.to_string(),
            output: result.output.clone(),
            exit_code: result.exit_code,
            cancelled: result.cancelled,
            truncated: result.truncated,
            full_output_path: result.full_output_path.clone(),
            timestamp: now_millis(),
            exclude_from_context: exclude_from_context.then_some(true),
        })?;
        Ok(result)
    }

    /// Cancels the user's running command, if any.
    pub fn abort_bash(&self) {
        if let Some(cancel) = lock(&self.bash).as_ref() {
            cancel.cancel();
        }
    }

    async fn execute_bash(
        &self,
        command: &str,
        cancel: &CancellationToken,
        on_output: &mut (impl FnMut(String) + Send),
    ) -> Result<BashResult, SessionError> {
        let (shell_settings, cwd) = {
            let settings = lock(&self.settings);
            let shell = ShellSettings {
                shell: settings.shell_path.clone().map(PathBuf::from),
                command_prefix: settings.shell_command_prefix.clone(),
                ..ShellSettings::default()
            };
            (shell, self.with_session(|s| s.cwd().to_path_buf()))
        };
        let shell = resolve_shell(&shell_settings)
            .await
            .map_err(|e| SessionError::Bash(e.to_string()))?;
        let script = match shell_settings.command_prefix.as_deref() {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
            _ => command.to_string(),
        };
        let mut process = GroupProcess::spawn(&shell, &script, &cwd).map_err(|e| {
            SessionError::Bash(format!(
                "Could not start the shell {} in {}: {e}",
                shell.display(),
                cwd.display()
            ))
        })?;
        let mut capture = OutputCapture::new();
        let mut text = Utf8Chunks::default();
        let status = loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break None,
                event = process.next() => match event {
                    Ok(ProcessEvent::Output(bytes)) => {
                        capture.push(&bytes).await;
                        let piece = text.push(&bytes);
                        if !piece.is_empty() {
                            on_output(piece);
                        }
                    }
                    Ok(ProcessEvent::Finished(status)) => break Some(status),
                    Err(e) => {
                        process.kill_group();
                        return Err(SessionError::Bash(format!(
                            "Reading the command's output failed: {e}"
                        )));
                    }
                },
            }
        };
        if status.is_none() {
            process.kill_group();
        }
        drop(process);
        let rest = text.finish();
        if !rest.is_empty() {
            on_output(rest);
        }
        let snapshot = capture.finish().await;
        Ok(BashResult {
            output: snapshot.truncation.content.clone(),
            exit_code: status.and_then(|s| s.code()).map(i64::from),
            cancelled: status.is_none(),
            truncated: snapshot.truncation.truncated(),
            full_output_path: snapshot.full_output.map(|p| p.display().to_string()),
        })
    }

    /// Adds a user's command to the conversation and the session file, or, while a run is
    /// active, keeps it for the end of that run.
    fn record_bash(&self, message: BashExecutionMessage) -> Result<(), SessionError> {
        let message = CodingMessage::BashExecution(message).into_agent_message();
        if self.agent.is_running() {
            lock(&self.pending_bash).push(message);
            return Ok(());
        }
        self.append_bash(message)
    }

    /// Records the commands kept while a run was active (called when it has settled).
    pub(super) fn flush_pending_bash(&self) -> Result<(), SessionError> {
        let pending = std::mem::take(&mut *lock(&self.pending_bash));
        for message in pending {
            self.append_bash(message)?;
        }
        Ok(())
    }

    fn append_bash(&self, message: AgentMessage) -> Result<(), SessionError> {
        self.with_session(|s| s.append_message(message.clone()))
            .map_err(|e| SessionError::Persistence(e.to_string()))?;
        self.agent.update_state(|s| s.messages.push(message));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Chunks;

    #[test]
    fn a_character_split_across_chunks_is_kept_whole() {
        let mut chunks = Utf8Chunks::default();
        let bytes = "é!".as_bytes();
        assert_eq!(chunks.push(&bytes[..1]), "");
        assert_eq!(chunks.push(&bytes[1..]), "é!");
        assert_eq!(chunks.finish(), "");
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut chunks = Utf8Chunks::default();
        assert_eq!(chunks.push(b"a\xffb"), "a\u{fffd}b");
        assert_eq!(chunks.push(b"\xe2\x82"), "");
        assert_eq!(chunks.finish(), "\u{fffd}");
    }
}
