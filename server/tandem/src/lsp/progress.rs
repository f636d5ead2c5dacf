//! Work-done progress and the closing answer of a command's run.
//!
//! A code action's run has no chat view to show it in some editors (Helix, plain Neovim), so the
//! server reports it with standard LSP: `window/workDoneProgress/create` (only when the client
//! advertises `window.workDoneProgress`), `$/progress` begin / report (the current tool's
//! title) / end, and then the answer ([`Answers`]: a message, or for a long one a file the
//! editor opens). Cancelling the token aborts the run.
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

use super::answer::Answers;
use super::answer_files::AnswerFiles;
use super::sessions::Sessions;

/// How long the client may take to answer `window/workDoneProgress/create`.
pub const CREATE_TIMEOUT: Duration = Duration::from_secs(5);

/// What a run's progress shows, from the session's events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A tool started: its title ("Edit src/main.rs").
    Tool(String),
    /// The run ended: the answer, or what went wrong.
    Finished(Outcome),
    /// The session settled (or an extension handled the prompt): nothing more comes.
    Settled {
        /// The work was aborted.
        aborted: bool,
    },
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
        AgentSessionEvent::Session(SessionEvent::AgentSettled { aborted }) => {
            Some(Step::Settled { aborted: *aborted })
        }
        AgentSessionEvent::Session(SessionEvent::PromptHandled) => {
            Some(Step::Settled { aborted: false })
        }
        AgentSessionEvent::Session(_) => None,
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The text of its last assistant message, trimmed (never empty).
    Answer(String),
    /// It ended without text.
    Done,
    /// It was aborted.
    Stopped,
    /// It failed: why.
    Failed(String),
    /// It ended without any assistant message.
    NoAnswer,
}

impl Outcome {
    /// What the user is told: the answer, or a sentence saying how the run ended.
    pub fn text(&self) -> String {
        match self {
            Outcome::Answer(text) => text.clone(),
            Outcome::Done => "Done.".to_string(),
            Outcome::Stopped => "Stopped.".to_string(),
            Outcome::Failed(why) => format!("Failed: {why}"),
            Outcome::NoAnswer => "Tandem stopped without an answer.".to_string(),
        }
    }
}

/// How the run whose messages are `messages` ended, from its last assistant message.
pub fn outcome(messages: &[AgentMessage]) -> Outcome {
    let last = messages.iter().rev().find_map(|m| match m {
        AgentMessage::Llm(Message::Assistant(a)) => Some(a),
        _ => None,
    });
    let Some(a) = last else {
        return Outcome::NoAnswer;
    };
    match a.stop_reason {
        StopReason::Aborted => return Outcome::Stopped,
        StopReason::Error => {
            let why = a.error_message.as_deref().unwrap_or("unknown error");
            return Outcome::Failed(why.to_string());
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
        Outcome::Done
    } else {
        Outcome::Answer(text)
    }
}

/// The first non-empty line of `text`.
pub fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The progress tokens of running commands, whether the client shows progress, and how a
/// command's answer reaches it.
pub struct Progress {
    client: Client,
    supported: AtomicBool,
    next: AtomicU64,
    tokens: Mutex<HashMap<String, SessionId>>,
    answers: Answers,
}

impl Progress {
    /// No runs yet; progress off until [`Progress::set_supported`]; long answers saved in the
    /// user's cache directory.
    pub fn new(client: Client) -> Self {
        let answers = Answers::new(Arc::new(client.clone()), AnswerFiles::from_env());
        Progress {
            client,
            supported: AtomicBool::new(false),
            next: AtomicU64::new(1),
            tokens: Mutex::new(HashMap::new()),
            answers,
        }
    }

    /// How a command's answer reaches the client (set up at `initialize`).
    pub fn answers(&self) -> &Answers {
        &self.answers
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
    /// started): progress with `message`, then (when `show_summary`) the answer, delivered by
    /// [`Answers::deliver`]. Returns at once.
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
                    let settled = matches!(s, Step::Settled { .. });
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
            let mut finished = None;
            let mut aborted = true;
            while let Some(s) = steps.recv().await {
                match s {
                    Step::Tool(title) => this.send(&token, report(title)).await,
                    Step::Finished(outcome) => finished = Some(outcome),
                    Step::Settled { aborted: a } => {
                        aborted = a;
                        break;
                    }
                }
            }
            // No run at all and not aborted: an extension handled the prompt.
            let outcome = finished.unwrap_or(if aborted {
                Outcome::Stopped
            } else {
                Outcome::Done
            });
            this.send(&token, end(first_line(&outcome.text()))).await;
            if let Some(t) = &token {
                this.lock().remove(t);
            }
            if show_summary {
                this.answers.deliver(&session, &outcome).await;
            }
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
    fn the_first_line_is_the_first_non_empty_one() {
        assert_eq!(first_line("\n  Fixed it.\nMore."), "Fixed it.");
        assert_eq!(first_line(""), "");
    }

    #[test]
    fn no_answer_and_aborted_runs_say_so() {
        assert_eq!(outcome(&[]), Outcome::NoAnswer);
        assert_eq!(outcome(&[]).text(), "Tandem stopped without an answer.");
        assert_eq!(Outcome::Stopped.text(), "Stopped.");
        assert_eq!(Outcome::Done.text(), "Done.");
        assert_eq!(Outcome::Failed("boom".into()).text(), "Failed: boom");
        assert_eq!(Outcome::Answer("Hi.".into()).text(), "Hi.");
    }
}
