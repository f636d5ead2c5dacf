//! Tandem's event stream, `tandem/event` (protocol-ext's README), as tests read it: per session,
//! in order, run by run. Each event is the notification's params, `{session, seq, event}`.

use serde_json::Value;

use super::{ClientError, Incoming, LspClient};

/// The method of Tandem's event notifications.
const METHOD: &str = "tandem/event";

/// The `type` of an event's params (`{session, seq, event: {type, …}}`), or `""`.
pub fn event_type(params: &Value) -> &str {
    params["event"]["type"].as_str().unwrap_or_default()
}

fn of_session(message: &Incoming, session: &str) -> bool {
    message.method == METHOD && message.params["session"] == session
}

impl LspClient {
    /// Every event of `session` received so far, in order, taken or not.
    pub fn events(&self, session: &str) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| of_session(m, session))
            .map(|m| m.params.clone())
            .collect()
    }

    /// Waits until `session` has sent `runs` `settled` events in all; then its events, as
    /// [`LspClient::events`].
    pub fn wait_settled(&mut self, session: &str, runs: usize) -> Result<Vec<Value>, ClientError> {
        let what = format!("`settled` number {runs} of session {session}");
        let deadline = self.deadline();
        let (mut settled, mut scanned) = (0, 0);
        loop {
            settled += self.seen[scanned..]
                .iter()
                .filter(|m| of_session(m, session) && event_type(&m.params) == "settled")
                .count();
            scanned = self.seen.len();
            if settled >= runs {
                return Ok(self.events(session));
            }
            self.receive(deadline, &what)?;
        }
    }

    /// Takes the events of `session` not taken yet, up to and including its next `settled`:
    /// one run's events, waiting for them.
    pub fn next_run(&mut self, session: &str) -> Result<Vec<Value>, ClientError> {
        let what = format!("session {session} to settle");
        let mut events = Vec::new();
        loop {
            let message = self.wait_for(&what, |m| of_session(m, session))?;
            let done = event_type(&message.params) == "settled";
            events.push(message.params);
            if done {
                return Ok(events);
            }
        }
    }
}
