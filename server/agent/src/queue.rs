//! Steering and follow-up queues: messages the user sends while the agent works.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::message::AgentMessage;

/// How many queued messages one poll takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueMode {
    /// Everything queued.
    All,
    /// The oldest message only (pi's default).
    #[default]
    OneAtATime,
}

/// A FIFO of messages with a drain mode.
#[derive(Debug, Clone, Default)]
pub struct PendingQueue {
    mode: QueueMode,
    messages: VecDeque<AgentMessage>,
}

impl PendingQueue {
    /// An empty queue.
    pub fn new(mode: QueueMode) -> Self {
        PendingQueue {
            mode,
            messages: VecDeque::new(),
        }
    }

    /// The drain mode.
    pub fn mode(&self) -> QueueMode {
        self.mode
    }

    /// Changes the drain mode.
    pub fn set_mode(&mut self, mode: QueueMode) {
        self.mode = mode;
    }

    /// Appends a message.
    pub fn push(&mut self, message: AgentMessage) {
        self.messages.push_back(message);
    }

    /// Takes what one poll gets: everything, or the oldest message.
    pub fn drain(&mut self) -> Vec<AgentMessage> {
        match self.mode {
            QueueMode::All => self.messages.drain(..).collect(),
            QueueMode::OneAtATime => self.messages.pop_front().into_iter().collect(),
        }
    }

    /// Removes everything, returning it.
    pub fn clear(&mut self) -> Vec<AgentMessage> {
        self.messages.drain(..).collect()
    }

    /// The queued messages, oldest first.
    pub fn messages(&self) -> impl Iterator<Item = &AgentMessage> {
        self.messages.iter()
    }

    /// How many are queued.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_ai::UserMessage;

    fn msg(text: &str) -> AgentMessage {
        let mut m = UserMessage::text(text);
        m.timestamp = 0;
        m.into()
    }

    #[test]
    fn one_at_a_time_takes_the_oldest_and_all_takes_everything() {
        let mut q = PendingQueue::new(QueueMode::OneAtATime);
        q.push(msg("a"));
        q.push(msg("b"));
        assert_eq!(q.drain(), vec![msg("a")]);
        assert_eq!(q.len(), 1);
        q.set_mode(QueueMode::All);
        q.push(msg("c"));
        assert_eq!(q.drain(), vec![msg("b"), msg("c")]);
        assert!(q.drain().is_empty());
    }
}
