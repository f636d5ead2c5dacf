//! Turns of the ACP agent: `session/prompt` (run by the host's turn runner, answered when the
//! turn's updates are out) and `session/cancel`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{PromptRequest, PromptResponse, StopReason as AcpStop};
use agent_client_protocol::Error;
use serde_json::Value;
use tandem_ai::StopReason;
use tandem_coding::agent_session::SessionError;

use super::errors::{internal, invalid_params, reply, Responder};
use super::lifecycle::now_iso;
use super::live::AcpSession;
use super::{prompt, updates, AcpAgent};
use crate::host::turns::Prompt;

impl AcpAgent {
    /// `session/prompt`: refused at once while the session runs a turn; otherwise the turn
    /// runs in a task of its own (after the first turn's questions) and answers when it ends.
    pub(super) fn prompt(self: Arc<Self>, request: PromptRequest, responder: Responder) {
        let id = request.session_id.0.to_string();
        let session = match self.get(&id) {
            Ok(s) => s,
            Err(e) => return reply::<()>(responder, Err(e)),
        };
        let prompt = match prompt::convert(&request.prompt, &session.cwd) {
            Ok(p) => p,
            Err(e) => return reply::<()>(responder, Err(invalid_params(e))),
        };
        if !prompt.images.is_empty() {
            let model = session
                .live
                .session()
                .agent()
                .with_state(|s| s.model.clone());
            if !model.accepts_images() {
                let why = format!(
                    "the prompt has an image, but the model {}/{} does not take images; \
                     switch to a model that does, or send text",
                    model.provider, model.id
                );
                return reply::<()>(responder, Err(invalid_params(why)));
            }
        }
        if session.live.is_busy() {
            return reply::<()>(responder, Err(busy(&id)));
        }
        if let Some(back_to) = undo_command(&prompt.text) {
            let back_to = back_to.map(str::to_owned);
            tokio::spawn(async move {
                let text = undo(&session, back_to.as_deref()).await;
                session.notify(updates::own_message(text));
                reply(responder, Ok(PromptResponse::new(AcpStop::EndTurn)));
            });
            return;
        }
        session.cancelled.store(false, Ordering::Release);
        session.workspace.begin_turn();
        let before = {
            let (agent, session) = (self.clone(), session.clone());
            async move { agent.first_turn(&session).await }
        };
        // `$/cancel_request` for this prompt cancels the turn as `session/cancel` does; the
        // watch ends with the turn.
        let (ended, turn_over) = tokio::sync::oneshot::channel::<()>();
        let cancellation = responder.cancellation();
        let (agent, answered) = (self.clone(), session.clone());
        let title_from = prompt.text.clone();
        let started = session.live.spawn_turn(
            Prompt {
                text: prompt.text,
                images: prompt.images,
                context: None,
            },
            before,
            move |result| {
                let _ = ended.send(());
                // Said before the answer, like the configuration problems before a first turn.
                super::sessions::show_notices(&answered, &answered.live.take_notices());
                agent.announce_info(&answered, None, Some(now_iso()));
                let cancelled = answered.cancelled.load(Ordering::Acquire);
                reply(responder, turn_answer(&answered, result, cancelled));
            },
        );
        if started.is_err() {
            // A prompt that slipped in since the check above: answered "busy" already.
            tracing::warn!("session {id}: a second prompt was refused (busy)");
            return;
        }
        self.announce_info(&session, Some(&title_from), None);
        tokio::spawn(async move {
            tokio::select! {
                () = cancellation.cancelled() => session.cancel(),
                _ = turn_over => {}
            }
        });
    }

    /// `session/cancel`.
    pub(super) fn cancel(&self, id: &str) {
        match self.get(id) {
            Ok(session) => session.cancel(),
            Err(_) => tracing::warn!("session/cancel for unknown session {id}; ignored"),
        }
    }
}

/// The `/undo [ENTRY]` slash command: `Some(back_to)` when `text` is one.
pub(super) fn undo_command(text: &str) -> Option<Option<&str>> {
    let rest = text.trim().strip_prefix("/undo")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let rest = rest.trim();
    Some((!rest.is_empty()).then_some(rest))
}

/// Runs an undo through the session's workspace (its edits are asked about as the mode says);
/// what it did, for the user.
async fn undo(session: &AcpSession, back_to: Option<&str>) -> String {
    match session
        .session
        .undo(session.workspace.as_ref(), back_to)
        .await
    {
        Ok(report) => report.describe(&session.cwd),
        Err(e) => e.to_string(),
    }
}

fn busy(id: &str) -> Error {
    Error::invalid_request().data(Value::String(format!(
        "session {id} is already running a prompt; send session/cancel or wait for its answer"
    )))
}

/// The answer to a finished turn.
fn turn_answer(
    session: &AcpSession,
    result: Result<(), SessionError>,
    cancelled: bool,
) -> Result<PromptResponse, Error> {
    match result {
        Ok(()) => {}
        Err(SessionError::Busy) => return Err(busy(&session.id)),
        Err(SessionError::Expansion(e)) => return Err(invalid_params(e)),
        Err(e) => {
            return Err(internal(format!(
                "the turn ran but the session file could not be written: {e}"
            )))
        }
    }
    if cancelled {
        return Ok(PromptResponse::new(AcpStop::Cancelled));
    }
    // An extension command, or a prompt an extension's `input` handler handled: no model
    // answered, and none was to.
    if session.session.last_prompt_handled() {
        return Ok(PromptResponse::new(AcpStop::EndTurn));
    }
    let Some(last) = session.session.last_assistant() else {
        return Err(internal("the model gave no answer"));
    };
    let stop = match last.stop_reason {
        StopReason::Stop | StopReason::ToolUse => AcpStop::EndTurn,
        StopReason::Length => AcpStop::MaxTokens,
        StopReason::Aborted => AcpStop::Cancelled,
        StopReason::Error => {
            let message = last
                .error_message
                .unwrap_or_else(|| "the model call failed".to_string());
            if message.contains("stop_reason \"refusal\"")
                || message.contains("stop_reason \"sensitive\"")
            {
                AcpStop::Refusal
            } else {
                return Err(internal(message));
            }
        }
    };
    Ok(PromptResponse::new(stop))
}
