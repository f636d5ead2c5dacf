//! A live session: the [`AgentSession`], the pump forwarding its events ([`super::pump`]), and
//! the turn runner every front door uses.
//!
//! One turn at a time: [`Live::turn`] refuses a second while one runs (the front door queues the
//! text as steering or a follow-up instead, or answers "busy"). A turn stops counting as running
//! when its prompt returns, before its end is delivered, so a client that reacts to `settled`
//! finds the session idle; its answer waits until the pump has delivered that end (each run's
//! end is numbered), so a client never sees the answer before the events.
//! A prompt that fails without the session reporting it (it could not start; its session file
//! could not be written) is added to the stream as a [`Failure`]. A steering or follow-up message
//! that arrives while a run is ending (after its last look at the queues) would wait for the
//! next prompt: the turn runs it at once ([`AgentSession::run_late_messages`]).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tandem_ai::ImageContent;
use tandem_coding::agent_session::{AgentSession, OnAccepted, SessionError};
use tandem_coding::extensions::InputSource;
use tokio::sync::{mpsc, watch};

use super::pump::{pump, Batching, Failure, PumpInput, Translate, Transport};

/// What a turn sends: the user's text and images, and the context a front door adds (an
/// editor's file and selection), which the model reads but the user's message does not hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    /// The user's own text.
    pub text: String,
    /// Attached images.
    pub images: Vec<ImageContent>,
    /// Context the model reads just before the text.
    pub context: Option<String>,
}

impl Prompt {
    /// `text` alone.
    pub fn text(text: impl Into<String>) -> Prompt {
        Prompt {
            text: text.into(),
            ..Prompt::default()
        }
    }
}

/// A prompt refused because a turn is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a turn is already running")]
pub struct Busy;

/// A live session; see the module docs.
pub struct Live {
    session: Arc<AgentSession>,
    busy: watch::Sender<bool>,
    /// How many run ends the pump has delivered.
    settled: watch::Receiver<u64>,
    /// How many run ends the runs started so far will produce (each prompt one: the session's
    /// `agent_settled`, or a settling [`Failure`]).
    expected: AtomicU64,
    failures: mpsc::UnboundedSender<Failure>,
    /// Where prompts come from, for extensions' `input` event: a person typing (the terminal
    /// mode) or a program (the rest).
    typed: std::sync::atomic::AtomicBool,
}

impl Live {
    /// Wraps `session` and starts forwarding its events through `translator` to `transport`.
    /// Must be called inside the runtime.
    pub fn start<T, S>(
        session: AgentSession,
        translator: T,
        transport: S,
        batching: Batching,
    ) -> Arc<Live>
    where
        T: Translate,
        S: Transport<T::Out>,
    {
        let (settled_tx, settled) = watch::channel(0u64);
        let (failures, failed) = mpsc::unbounded_channel();
        let input = PumpInput {
            events: session.subscribe(),
            failures: failed,
        };
        tokio::spawn(pump(input, translator, transport, batching, settled_tx));
        let live = Arc::new(Live {
            session: Arc::new(session),
            busy: watch::channel(false).0,
            settled,
            expected: AtomicU64::new(0),
            failures,
            typed: std::sync::atomic::AtomicBool::new(false),
        });
        // An extension's `sendUserMessage` to the idle session runs as a turn of this runner.
        let weak = Arc::downgrade(&live);
        live.session.set_idle_prompter(Arc::new(move |text, images| {
            let weak = weak.clone();
            // Sent from an extension command, the prompt that ran the command still holds the
            // runner: this one starts once it is done.
            tokio::spawn(async move {
                for _ in 0..3 {
                    let Some(live) = weak.upgrade() else { return };
                    live.idle(Duration::from_secs(600)).await;
                    let prompt = Prompt {
                        text: text.clone(),
                        images: images.clone(),
                        context: None,
                    };
                    if live.spawn_turn(prompt, async {}, |_| {}).is_ok() {
                        return;
                    }
                }
                tracing::warn!(target: "tandem::extensions", "an extension's message found the session busy three times and was dropped: {text}");
            });
        }));
        live
    }

    /// Marks the prompts as typed by a person (the terminal mode): extensions' `input` event
    /// sees `source: "interactive"` rather than `"rpc"`.
    pub fn set_typed(&self, typed: bool) {
        self.typed.store(typed, Ordering::Release);
    }

    /// The session.
    pub fn session(&self) -> &Arc<AgentSession> {
        &self.session
    }

    /// Writes the session's file if it has a prompt and is not written yet (pi writes it at the
    /// first answer; a front door ending mid-turn calls this so the prompt is kept). A failure
    /// is logged: the process is ending and nobody is left to tell.
    pub fn save_started(&self) {
        let (written, id) = self
            .session
            .with_session(|m| (m.write_started(), m.session_id().to_string()));
        match written {
            Ok(true) => {
                tracing::info!("saved the unanswered prompt of session {id} before exiting")
            }
            Ok(false) => {}
            Err(e) => tracing::error!("session {id}: could not write its file before exiting: {e}"),
        }
    }

    /// The session's notices not yet shown: each time it moved to a new file because another
    /// program wrote to its file. A front door shows them after a turn, as it shows the
    /// configuration problems found at setup.
    pub fn take_notices(&self) -> Vec<String> {
        self.session.with_session(|s| s.take_notices())
    }

    /// Whether a turn is running.
    pub fn is_busy(&self) -> bool {
        *self.busy.borrow()
    }

    /// Marks a turn as running; `Err(Busy)` when one already is.
    fn claim(&self) -> Result<(), Busy> {
        let mut claimed = false;
        self.busy.send_if_modified(|busy| {
            claimed = !*busy;
            *busy = true;
            claimed
        });
        if claimed {
            Ok(())
        } else {
            Err(Busy)
        }
    }

    fn release(&self) {
        self.busy.send_replace(false);
    }

    /// Runs one turn in the calling task: `before` first (a trust question, say), then the
    /// prompt, then waits until the pump has delivered its end. Returns the prompt's result once
    /// the turn no longer counts as running (a client told the answer may send the next prompt
    /// at once). `Err(Busy)` at once when a turn is running. Late messages are run by
    /// [`Live::spawn_turn`]; a caller awaiting turns itself calls [`Live::run_late_messages`].
    pub async fn turn(
        &self,
        prompt: Prompt,
        before: impl Future<Output = ()>,
    ) -> Result<Result<(), SessionError>, Busy> {
        self.claim()?;
        Ok(self
            .run_claimed(
                async move {
                    before.await;
                    prompt
                },
                None,
            )
            .await)
    }

    /// Starts a turn in a task of its own (as [`Live::turn`]), hands its result to `answer`,
    /// then runs any late messages. When a turn is running, `answer` hears
    /// [`SessionError::Busy`] at once and the result is `Err(Busy)`.
    pub fn spawn_turn(
        self: &Arc<Self>,
        prompt: Prompt,
        before: impl Future<Output = ()> + Send + 'static,
        answer: impl FnOnce(Result<(), SessionError>) + Send + 'static,
    ) -> Result<(), Busy> {
        self.spawn_prepared(
            async move {
                before.await;
                prompt
            },
            answer,
        )
    }

    /// [`Live::spawn_turn`] with a prompt that is made in the turn's task, once the turn is
    /// claimed: a front door that asks its client for part of the prompt (an editor's
    /// diagnostics) asks from there, never from a request handler. A busy session drops
    /// `prompt` unpolled.
    pub fn spawn_prepared(
        self: &Arc<Self>,
        prompt: impl Future<Output = Prompt> + Send + 'static,
        answer: impl FnOnce(Result<(), SessionError>) + Send + 'static,
    ) -> Result<(), Busy> {
        self.spawn_accepting(prompt, None, answer)
    }

    /// [`Live::spawn_prepared`] that tells `accepted` what became of the prompt before
    /// anything of its run is sent ([`AgentSession::prompt_accepting`]): RPC answers `prompt`
    /// then, with `started` or, for an extension command or a handled input, `handled`.
    pub fn spawn_accepting(
        self: &Arc<Self>,
        prompt: impl Future<Output = Prompt> + Send + 'static,
        accepted: Option<OnAccepted>,
        answer: impl FnOnce(Result<(), SessionError>) + Send + 'static,
    ) -> Result<(), Busy> {
        if let Err(busy) = self.claim() {
            answer(Err(SessionError::Busy));
            return Err(busy);
        }
        let live = self.clone();
        tokio::spawn(async move {
            let result = live.run_claimed(prompt, accepted).await;
            answer(result);
            live.run_late_messages().await;
        });
        Ok(())
    }

    /// The turn itself, once claimed: its prompt made first (a trust question, say, comes
    /// before it). The claim is released as soon as the prompt returns — a
    /// client told of the run's end (its `settled`, its answer) may send the next prompt at
    /// once — and the result is returned once the pump has delivered that end.
    async fn run_claimed(
        &self,
        prompt: impl Future<Output = Prompt>,
        accepted: Option<OnAccepted>,
    ) -> Result<(), SessionError> {
        let prompt = prompt.await;
        let end = self.expected.fetch_add(1, Ordering::AcqRel) + 1;
        let result = self
            .session
            .prompt_accepting(
                &prompt.text,
                prompt.images,
                prompt.context.as_deref(),
                if self.typed.load(Ordering::Acquire) {
                    InputSource::Interactive
                } else {
                    InputSource::Rpc
                },
                accepted,
            )
            .await;
        if let Err(e) = &result {
            tracing::warn!("the prompt failed: {e}");
            // A persistence failure comes after the session's own `agent_settled`; anything
            // else happened before the run started, so the failure ends it.
            let _ = self.failures.send(Failure {
                message: format!("the prompt failed: {e}"),
                settles: !matches!(e, SessionError::Persistence(_)),
            });
        }
        self.release();
        self.delivered(end).await;
        result
    }

    /// Runs steering or follow-up messages that arrived while the last run was ending.
    pub async fn run_late_messages(&self) {
        while self.session.has_late_messages() && self.claim().is_ok() {
            let end = self.expected.fetch_add(1, Ordering::AcqRel) + 1;
            let settles = match self.session.run_late_messages().await {
                Ok(ran) => ran,
                Err(e) => {
                    tracing::warn!("the queued messages failed: {e}");
                    let _ = self.failures.send(Failure {
                        message: format!("the queued messages failed: {e}"),
                        settles: false,
                    });
                    // The session settled the run before reporting its file's failure.
                    true
                }
            };
            if !settles {
                // Nothing ran: no end to wait for (the claim kept other runs out meanwhile).
                self.expected.fetch_sub(1, Ordering::AcqRel);
            }
            self.release();
            if settles {
                self.delivered(end).await;
            }
        }
    }

    /// Waits until the pump has delivered run end number `end`.
    async fn delivered(&self, end: u64) {
        let mut settled = self.settled.clone();
        let _ = settled.wait_for(|n| *n >= end).await;
    }

    /// Waits up to `limit` until no turn runs and the end of every run started was delivered;
    /// whether it got there.
    pub async fn idle(&self, limit: Duration) -> bool {
        let mut busy = self.busy.subscribe();
        let mut settled = self.settled.clone();
        let done = async {
            let _ = busy.wait_for(|b| !*b).await;
            let end = self.expected.load(Ordering::Acquire);
            let _ = settled.wait_for(|n| *n >= end).await;
        };
        tokio::time::timeout(limit, done).await.is_ok()
    }
}

/// Waits up to `limit` until no handle holds the lock of session file `file` any more: once a
/// front door has closed a session, the last tasks of its turn let go of the file a moment
/// later, and a client told the session is closed may open the file at once (or delete it).
/// Whether the file was released (a missing file counts as released).
pub async fn file_released(file: &std::path::Path, limit: Duration) -> bool {
    use tandem_coding::session::{claim_file, Claim};
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if !matches!(claim_file(file), Claim::Busy) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
