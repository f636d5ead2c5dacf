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

/// A FIFO of messages with a drain mode. Messages queued together (a group) are delivered
/// together, also one at a time: a prompt with the context that goes with it.
#[derive(Debug, Clone, Default)]
pub struct PendingQueue {
    mode: QueueMode,
    groups: VecDeque<Vec<AgentMessage>>,
}

impl PendingQueue {
    /// An empty queue.
    pub fn new(mode: QueueMode) -> Self {
        PendingQueue {
            mode,
            groups: VecDeque::new(),
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
        self.groups.push_back(vec![message]);
    }

    /// Appends messages that are delivered together (nothing when `messages` is empty).
    pub fn push_group(&mut self, messages: Vec<AgentMessage>) {
        if !messages.is_empty() {
            self.groups.push_back(messages);
        }
    }

    /// Takes what one poll gets: everything, or the oldest message (with its group).
    pub fn drain(&mut self) -> Vec<AgentMessage> {
        match self.mode {
            QueueMode::All => self.groups.drain(..).flatten().collect(),
            QueueMode::OneAtATime => self.groups.pop_front().unwrap_or_default(),
        }
    }

    /// Removes everything, returning it.
    pub fn clear(&mut self) -> Vec<AgentMessage> {
        self.groups.drain(..).flatten().collect()
    }

    /// The queued messages, oldest first.
    pub fn messages(&self) -> impl Iterator<Item = &AgentMessage> {
        self.groups.iter().flatten()
    }

    /// How many messages are queued.
    pub fn len(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
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

    #[test]
    fn a_group_is_delivered_together_even_one_at_a_time() {
        let mut q = PendingQueue::new(QueueMode::OneAtATime);
        q.push_group(vec![msg("context"), msg("prompt")]);
        q.push(msg("next"));
        assert_eq!(q.len(), 3);
        assert_eq!(q.drain(), vec![msg("context"), msg("prompt")]);
        assert_eq!(q.drain(), vec![msg("next")]);
        q.push_group(Vec::new());
        assert!(q.is_empty());
    }
}
