//! Sequence numbers: the server's per-session counter and the client's gap detector.
//!
//! JSON-RPC over one stream does not lose or reorder notifications, so a gap means something
//! above the transport went wrong (a client that attached to a running session, a plugin that
//! dropped messages while reloading). Either way the client cannot rebuild the partial message
//! from deltas it never saw; it should re-read the session with `tandem/state` and take the next
//! `message_end` as the truth.

use std::collections::HashMap;

use crate::events::{Event, EventNotification};
use crate::ids::SessionId;

/// The server side: numbers one session's notifications 1, 2, 3, ...
#[derive(Debug, Clone, Default)]
pub struct Sequencer {
    last: u64,
}

impl Sequencer {
    /// A counter whose first notification will be `seq` 1.
    pub fn new() -> Self {
        Sequencer::default()
    }

    /// Wraps `event` for `session` with the next sequence number.
    pub fn wrap(&mut self, session: &SessionId, event: Event) -> EventNotification {
        self.last += 1;
        EventNotification {
            session: session.clone(),
            seq: self.last,
            event,
        }
    }

    /// The number of the last notification wrapped (0 before the first).
    pub fn last(&self) -> u64 {
        self.last
    }
}

/// What a received sequence number means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqCheck {
    /// The next one expected.
    InOrder,
    /// `missed` notifications were skipped (for a session seen for the first time, the ones
    /// before it); re-read the session's state.
    Gap {
        /// How many were skipped.
        missed: u64,
    },
    /// Not newer than the last one seen: a duplicate or a replay; ignore it.
    Stale {
        /// The last number seen for the session.
        last: u64,
    },
}

/// The client side: remembers the last `seq` per session and classifies each new one.
#[derive(Debug, Clone, Default)]
pub struct SeqTracker {
    last: HashMap<SessionId, u64>,
}

impl SeqTracker {
    /// A tracker that has seen nothing.
    pub fn new() -> Self {
        SeqTracker::default()
    }

    /// Records `seq` for `session` and says whether it follows the previous one. A stale
    /// number is not recorded.
    pub fn observe(&mut self, session: &SessionId, seq: u64) -> SeqCheck {
        let last = self.last.get(session).copied().unwrap_or(0);
        if seq <= last {
            return SeqCheck::Stale { last };
        }
        self.last.insert(session.clone(), seq);
        match seq - last - 1 {
            0 => SeqCheck::InOrder,
            missed => SeqCheck::Gap { missed },
        }
    }

    /// The last number seen for `session`, if any.
    pub fn last(&self, session: &SessionId) -> Option<u64> {
        self.last.get(session).copied()
    }

    /// Forgets a session (e.g. when the client closes its view of it).
    pub fn forget(&mut self, session: &SessionId) {
        self.last.remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequencer_starts_at_one_and_counts_up() {
        let s = SessionId::from("a");
        let mut q = Sequencer::new();
        assert_eq!(q.last(), 0);
        assert_eq!(q.wrap(&s, Event::AgentStart).seq, 1);
        let n = q.wrap(&s, Event::Settled);
        assert_eq!((n.seq, n.session, n.event), (2, s, Event::Settled));
        assert_eq!(q.last(), 2);
    }

    #[test]
    fn tracker_detects_gaps_and_stale_numbers_per_session() {
        let (a, b) = (SessionId::from("a"), SessionId::from("b"));
        let mut t = SeqTracker::new();
        assert_eq!(t.observe(&a, 1), SeqCheck::InOrder);
        assert_eq!(t.observe(&a, 2), SeqCheck::InOrder);
        assert_eq!(t.observe(&b, 1), SeqCheck::InOrder);
        assert_eq!(t.observe(&a, 5), SeqCheck::Gap { missed: 2 });
        assert_eq!(t.observe(&a, 5), SeqCheck::Stale { last: 5 });
        assert_eq!(t.observe(&a, 3), SeqCheck::Stale { last: 5 });
        assert_eq!(t.observe(&a, 6), SeqCheck::InOrder);
        assert_eq!(t.last(&a), Some(6));
        // Attaching to a session that is already running.
        let c = SessionId::from("c");
        assert_eq!(t.observe(&c, 40), SeqCheck::Gap { missed: 39 });
        t.forget(&c);
        assert_eq!(t.last(&c), None);
    }
}
