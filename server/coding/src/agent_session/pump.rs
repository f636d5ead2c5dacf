//! The event pump: persists each finished message as it happens and forwards every event to
//! the session's subscribers, in the agent's order.

use std::sync::Arc;

use tandem_agent::{Agent, AgentEvent, AgentMessage};

use crate::messages::CodingMessage;

use super::{lock, user_text, AgentSessionEvent, SessionEvent, Shared};

/// The current queues as a `queue_update` event.
pub(super) fn queue_update(agent: &Agent) -> SessionEvent {
    SessionEvent::QueueUpdate {
        steering: agent
            .queued_steering()
            .iter()
            .filter_map(user_text)
            .collect(),
        follow_up: agent
            .queued_follow_ups()
            .iter()
            .filter_map(user_text)
            .collect(),
    }
}

/// Writes a finished message to the session file as pi does: an extension's `custom` message as
/// a `custom_message` entry, anything else as a `message` entry.
fn persist(
    session: &mut crate::session::SessionManager,
    message: &AgentMessage,
) -> Result<String, crate::session::SessionError> {
    if let AgentMessage::Custom(custom) = message {
        if let Some(CodingMessage::Custom(m)) = CodingMessage::parse(custom) {
            return session.append_custom_message(m.custom_type, m.content, m.display, m.details);
        }
    }
    session.append_message(message.clone())
}

/// Starts the pump for `agent`; it ends when the agent is dropped.
pub(super) fn start(agent: &Agent, shared: Arc<Shared>) {
    let mut events = agent.subscribe();
    let agent = agent.downgrade();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let mut queue_changed = false;
            match event.as_ref() {
                AgentEvent::MessageEnd { message } => {
                    let result = persist(&mut lock(&shared.session), message);
                    if let Err(e) = result {
                        tracing::error!(error = %e, "could not persist a message");
                        lock(&shared.persist_error).get_or_insert(e.to_string());
                    }
                }
                AgentEvent::MessageStart { message } => {
                    // A queued message being delivered leaves its queue.
                    if let Some(text) = user_text(message) {
                        let mut queued = lock(&shared.queued);
                        if let Some(i) = queued.iter().position(|q| *q == text) {
                            queued.remove(i);
                            queue_changed = true;
                        }
                    }
                }
                _ => {}
            }
            let is_end = matches!(event.as_ref(), AgentEvent::AgentEnd { .. });
            shared.emit(AgentSessionEvent::Agent(event)).await;
            if queue_changed {
                if let Some(agent) = agent.upgrade() {
                    let update = queue_update(&agent);
                    drop(agent);
                    shared.emit(AgentSessionEvent::Session(update)).await;
                }
            }
            if is_end {
                shared.ends.send_modify(|n| *n += 1);
            }
        }
    });
}
