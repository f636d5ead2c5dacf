//! Work-done progress and the closing summary of a command's run.
//!
//! A code action's run has no chat view to show it in some editors (Helix, plain Neovim), so the
//! server reports it with standard LSP: `window/workDoneProgress/create` (only when the client
//! advertises `window.workDoneProgress`), `$/progress` begin / report (the current tool's
//! title) / end, and a short `window/showMessage` with the answer. Cancelling the token aborts
//! the run.
//!
//! Everything here runs in a spawned task: the handler that started the run has already
//! answered. The session's events are drained at once into an unbounded queue, so waiting for
//! the client's answer to `create` (bounded by [`CREATE_TIMEOUT`]) never holds the session back.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tandem_ai::sync::lock;

use tandem_agent::{AgentEvent, AgentMessage};
use tandem_ai::{AssistantBlock, Message, StopReason};
use tandem_coding::agent_session::{AgentSessionEvent, SessionEvent};
use tandem_coding::describe_tool_call;
use tandem_protocol::SessionId;
use tokio::sync::mpsc;
use tower_lsp_server::ls_types::notification::Progress as ProgressNote;
use tower_lsp_server::ls_types::request::WorkDoneProgressCreate;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::Client;

use super::sessions::Sessions;

/// How long the client may take to answer `window/workDoneProgress/create`.
pub const CREATE_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest `window/showMessage` summary, in characters.
pub const SUMMARY_CHARS: usize = 300;

/// What a run's progress shows, from the session's events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A tool started: its title ("Edit src/main.rs").
    Tool(String),
    /// The run ended: the answer, or what went wrong.
    Finished(String),
    /// The session settled: nothing more comes.
    Settled,
}

/// The step an event means, if any (`cwd` resolves tool paths for titles).
pub fn step(event: &AgentSessionEvent, cwd: &std::path::Path) -> Option<Step> {
    match event {
        AgentSessionEvent::Agent(e) => match e.as_ref() {
            AgentEvent::ToolExecutionStart {
                tool_name, args, ..
            } => Some(Step::Tool(describe_tool_call(tool_name, args, cwd).title)),
            AgentEvent::AgentEnd { messages } => Some(Step::Finished(outcome(messages))),
            _ => None,
        },
        AgentSessionEvent::Session(SessionEvent::AgentSettled) => Some(Step::Settled),
        AgentSessionEvent::Session(_) => None,
    }
}

/// The text of the run's last assistant message, or why it stopped.
pub fn outcome(messages: &[AgentMessage]) -> String {
    let last = messages.iter().rev().find_map(|m| match m {
        AgentMessage::Llm(Message::Assistant(a)) => Some(a),
        _ => None,
    });
    let Some(a) = last else {
        return "Tandem stopped without an answer.".to_string();
    };
    match a.stop_reason {
        StopReason::Aborted => return "Stopped.".to_string(),
        StopReason::Error => {
            let why = a.error_message.as_deref().unwrap_or("unknown error");
            return format!("Failed: {why}");
        }
        _ => {}
    }
    let text: Vec<&str> = a
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.join("").trim().to_string();
    if text.is_empty() {
        "Done.".to_string()
    } else {
        text
    }
}

/// The first non-empty line of `text`.
pub fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The first lines of `text`, at most [`SUMMARY_CHARS`] characters, with an ellipsis when cut.
pub fn summary(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = lines[..lines.len().min(3)].join("\n");
    let mut out: String = joined.chars().take(SUMMARY_CHARS).collect();
    if joined.chars().count() > SUMMARY_CHARS || lines.len() > 3 {
        out.push('…');
    }
    out
}

/// The progress tokens of running commands and whether the client shows progress.
pub struct Progress {
    client: Client,
    supported: AtomicBool,
    next: AtomicU64,
    tokens: Mutex<HashMap<String, SessionId>>,
}

impl Progress {
    /// No runs yet; progress off until [`Progress::set_supported`].
    pub fn new(client: Client) -> Self {
        Progress {
            client,
            supported: AtomicBool::new(false),
            next: AtomicU64::new(1),
            tokens: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, SessionId>> {
        lock(&self.tokens)
    }

    /// Whether the client advertised `window.workDoneProgress`.
    pub fn set_supported(&self, supported: bool) {
        self.supported.store(supported, Ordering::Release);
    }

    /// The session whose run `token` reports, forgetting the token (a cancel).
    pub fn take(&self, token: &str) -> Option<SessionId> {
        self.lock().remove(token)
    }

    /// Follows a run of `session` whose events come on `events` (subscribed before the run
    /// started): progress with `message`, then (when `show_summary`) a `window/showMessage`
    /// with the answer. Returns at once.
    pub fn follow(
        self: &Arc<Self>,
        session: SessionId,
        cwd: PathBuf,
        mut events: mpsc::Receiver<AgentSessionEvent>,
        message: String,
        show_summary: bool,
    ) {
        let (tx, mut steps) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(e) = events.recv().await {
                if let Some(s) = step(&e, &cwd) {
                    let settled = s == Step::Settled;
                    if tx.send(s).is_err() || settled {
                        break;
                    }
                }
            }
        });
        let this = self.clone();
        tokio::spawn(async move {
            let token = this.create(&session).await;
            this.send(&token, begin(&message)).await;
            let mut answer = None;
            while let Some(s) = steps.recv().await {
                match s {
                    Step::Tool(title) => this.send(&token, report(title)).await,
                    Step::Finished(text) => answer = Some(text),
                    Step::Settled => break,
                }
            }
            let answer = answer.unwrap_or_else(|| "Stopped.".to_string());
            this.send(&token, end(first_line(&answer))).await;
            if let Some(t) = &token {
                this.lock().remove(t);
            }
            if !show_summary {
                return;
            }
            let kind = if answer.starts_with("Failed:") {
                MessageType::ERROR
            } else {
                MessageType::INFO
            };
            let text = format!("Tandem: {}", summary(&answer));
            this.client.show_message(kind, text).await;
        });
    }

    /// A new token registered for `session`, or `None` when the client shows no progress or
    /// does not accept the token in time.
    async fn create(&self, session: &SessionId) -> Option<String> {
        if !self.supported.load(Ordering::Acquire) {
            return None;
        }
        let token = format!("tandem-run-{}", self.next.fetch_add(1, Ordering::Relaxed));
        self.lock().insert(token.clone(), session.clone());
        let params = WorkDoneProgressCreateParams {
            token: NumberOrString::String(token.clone()),
        };
        let request = self.client.send_request::<WorkDoneProgressCreate>(params);
        match tokio::time::timeout(CREATE_TIMEOUT, request).await {
            Ok(Ok(())) => Some(token),
            Ok(Err(e)) => {
                tracing::warn!("the client refused progress token {token}: {e}");
                self.lock().remove(&token);
                None
            }
            Err(_) => {
                tracing::warn!("no answer to window/workDoneProgress/create for {token}");
                self.lock().remove(&token);
                None
            }
        }
    }

    async fn send(&self, token: &Option<String>, value: WorkDoneProgress) {
        if let Some(t) = token {
            let params = ProgressParams {
                token: NumberOrString::String(t.clone()),
                value: ProgressParamsValue::WorkDone(value),
            };
            self.client.send_notification::<ProgressNote>(params).await;
        }
    }
}

/// Aborts the run whose progress token is `token` (`window/workDoneProgress/cancel`).
pub fn cancel(progress: &Progress, sessions: &Sessions, token: &str) {
    match progress.take(token) {
        Some(session) => {
            if let Err(e) = sessions.abort(&session) {
                tracing::warn!("cancel {token}: {}", e.message);
            }
        }
        None => tracing::warn!("cancel of unknown progress token {token}; ignored"),
    }
}

fn begin(message: &str) -> WorkDoneProgress {
    WorkDoneProgress::Begin(WorkDoneProgressBegin {
        title: "Tandem".to_string(),
        cancellable: Some(true),
        message: Some(message.to_string()),
        percentage: None,
    })
}

fn report(message: String) -> WorkDoneProgress {
    WorkDoneProgress::Report(WorkDoneProgressReport {
        cancellable: Some(true),
        message: Some(message),
        percentage: None,
    })
}

fn end(message: &str) -> WorkDoneProgress {
    WorkDoneProgress::End(WorkDoneProgressEnd {
        message: Some(message.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_keep_the_first_lines() {
        assert_eq!(first_line("\n  Fixed it.\nMore."), "Fixed it.");
        assert_eq!(summary("a\n\nb\nc"), "a\nb\nc");
        assert_eq!(summary("a\nb\nc\nd"), "a\nb\nc…");
        let long = "x".repeat(SUMMARY_CHARS + 5);
        assert_eq!(summary(&long).chars().count(), SUMMARY_CHARS + 1);
    }

    #[test]
    fn no_answer_and_aborted_runs_say_so() {
        assert_eq!(outcome(&[]), "Tandem stopped without an answer.");
    }
}
