//! The state shared by the server task and the test: the response queue and the request log.
//!
//! Taking the next response and recording the request happen under one lock, so the n-th
//! recorded request is always the one that got the n-th response, even with concurrent
//! connections. A `watch` channel publishes the request count so tests can wait on it.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use super::fixture::MockResponse;
use super::request::RecordedRequest;

/// Queue, log and the count of recorded requests.
pub(crate) struct Shared {
    inner: Mutex<Inner>,
    recorded: watch::Sender<usize>,
}

struct Inner {
    queue: VecDeque<MockResponse>,
    requests: Vec<RecordedRequest>,
    cycle: bool,
}

impl Shared {
    pub(crate) fn new() -> Self {
        Self {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                requests: Vec::new(),
                cycle: false,
            }),
            recorded: watch::Sender::new(0),
        }
    }

    /// A panicking test thread must not hide what the server saw, so poisoning is ignored:
    /// every critical section leaves the state consistent.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn enqueue(&self, response: MockResponse) {
        self.lock().queue.push_back(response);
    }

    pub(crate) fn set_cycle(&self, cycle: bool) {
        self.lock().cycle = cycle;
    }

    pub(crate) fn queued(&self) -> usize {
        self.lock().queue.len()
    }

    /// Takes the next response for `request` (re-queueing it when cycling) and records the
    /// request. Returns `None` when the queue is empty.
    pub(crate) fn answer(&self, mut request: RecordedRequest) -> Option<MockResponse> {
        let mut inner = self.lock();
        let response = inner.queue.pop_front();
        if let Some(response) = &response {
            if inner.cycle {
                inner.queue.push_back(response.clone());
            }
        }
        request.response = response.as_ref().map(|r| r.name().to_owned());
        inner.requests.push(request);
        // Published under the lock so the count never goes backwards.
        self.recorded.send_replace(inner.requests.len());
        response
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// A receiver of the number of recorded requests.
    pub(crate) fn subscribe(&self) -> watch::Receiver<usize> {
        self.recorded.subscribe()
    }
}
