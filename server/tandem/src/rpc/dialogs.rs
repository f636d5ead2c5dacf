//! Questions to the client, as pi's extension UI sub-protocol has them (`docs/rpc-extension-ui.md`
//! of pi 1.6): an `extension_ui_request` (`select`, `confirm`, `input`, `editor`) with a fresh id
//! and, when the question has one, a `timeout` in milliseconds, answered by an
//! `extension_ui_response` with that id (`value`, `confirmed`, or `cancelled: true`). A client
//! that never answers is not waited for past the timeout: the question resolves to its default
//! (no choice), as pi resolves it; so does a question still open when the process shuts down,
//! or one whose asker gave up (an extension's own time limit). An answer to no open question is
//! ignored, as pi ignores it. Notices (`notify`, `setStatus`, …) are the same record with a
//! fresh id and no answer ([`Dialogs::tell`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value};
use tandem_ai::sync::lock;
use tokio::sync::oneshot;

use super::wire::dialog_request;

/// Writes one record to the client.
pub type Write = Box<dyn Fn(&Value) + Send + Sync>;

/// The open questions.
pub struct Dialogs {
    open: Mutex<HashMap<String, oneshot::Sender<Map<String, Value>>>>,
    next: AtomicU64,
    write: Write,
    /// The client is gone (stdin ended): questions get their defaults without being asked.
    closed: AtomicBool,
}

impl Dialogs {
    /// Questions written with `write`.
    pub fn new(write: Write) -> Self {
        Dialogs {
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            write,
            closed: AtomicBool::new(false),
        }
    }

    /// Asks the client to choose one of `options`; the choice, or `None` when it cancelled,
    /// answered something else or did not answer within `timeout`.
    pub async fn select(&self, title: &str, options: &[&str], timeout: Duration) -> Option<String> {
        self.select_within(title, options, Some(timeout)).await
    }

    /// [`Dialogs::select`], waiting as long as it takes when there is no `timeout`.
    pub async fn select_within(
        &self,
        title: &str,
        options: &[&str],
        timeout: Option<Duration>,
    ) -> Option<String> {
        let mut fields = Map::new();
        fields.insert("title".into(), title.into());
        fields.insert("options".into(), options.to_vec().into());
        let answer = self.ask("select", fields, timeout).await?;
        match answer.get("value") {
            Some(Value::String(v)) if options.contains(&v.as_str()) => Some(v.clone()),
            _ => None,
        }
    }

    /// A yes-or-no question: `confirmed: true` is yes; anything else (no, cancelled, no
    /// answer in time) is no.
    pub async fn confirm(&self, title: &str, message: &str, timeout: Option<Duration>) -> bool {
        let mut fields = Map::new();
        fields.insert("title".into(), title.into());
        fields.insert("message".into(), message.into());
        let answer = self.ask("confirm", fields, timeout).await;
        answer.is_some_and(|a| a.get("confirmed") == Some(&Value::Bool(true)))
    }

    /// A text question (`input` with its placeholder, `editor` with its prefill): the text,
    /// or `None` when cancelled or not answered in time.
    pub async fn text(
        &self,
        method: &str,
        mut fields: Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Option<String> {
        fields.retain(|_, v| !v.is_null());
        let answer = self.ask(method, fields, timeout).await?;
        match answer.get("value") {
            Some(Value::String(v)) => Some(v.clone()),
            _ => None,
        }
    }

    /// Writes a request the client does not answer (`notify`, `setStatus`, `setWidget`,
    /// `setTitle`, `set_editor_text`).
    pub fn tell(&self, method: &str, fields: Map<String, Value>) {
        let id = self.fresh_id();
        (self.write)(&dialog_request(&id, method, fields));
    }

    fn fresh_id(&self) -> String {
        format!(
            "tandem-ui-{}-{}",
            std::process::id(),
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    /// Sends the request and waits for its answer; `None` when cancelled or timed out. A
    /// caller that stops waiting (dropping this future) closes the question.
    async fn ask(
        &self,
        method: &str,
        mut fields: Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Option<Map<String, Value>> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let id = self.fresh_id();
        let (tx, rx) = oneshot::channel();
        lock(&self.open).insert(id.clone(), tx);
        let _open = Open {
            dialogs: self,
            id: &id,
        };
        if let Some(timeout) = timeout {
            fields.insert("timeout".into(), (timeout.as_millis() as u64).into());
        }
        (self.write)(&dialog_request(&id, method, fields));
        let answer = match timeout {
            Some(timeout) => tokio::time::timeout(timeout, rx).await.ok()?,
            None => rx.await,
        };
        let answer = answer.ok()?;
        if answer.get("cancelled") == Some(&Value::Bool(true)) {
            return None;
        }
        Some(answer)
    }

    /// Hands an `extension_ui_response` to the question it answers (ignored when none is
    /// open under its id).
    pub fn answer(&self, response: Map<String, Value>) {
        let Some(id) = response.get("id").and_then(Value::as_str) else {
            tracing::warn!("an extension_ui_response without a string id was ignored");
            return;
        };
        match lock(&self.open).remove(id) {
            Some(waiting) => {
                let _ = waiting.send(response);
            }
            None => tracing::warn!(
                "an extension_ui_response for {id}, which is not an open question, was ignored"
            ),
        }
    }

    /// Resolves every open question to its default, and every later one at once (the
    /// process is ending).
    pub fn close_all(&self) {
        self.closed.store(true, Ordering::Release);
        lock(&self.open).clear();
    }
}

/// An open question, closed when its asker is done with it (answered, timed out, dropped).
struct Open<'a> {
    dialogs: &'a Dialogs,
    id: &'a str,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        lock(&self.dialogs.open).remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use serde_json::{json, Value};

    use super::Dialogs;

    fn dialogs() -> (Arc<Dialogs>, Arc<Mutex<Vec<Value>>>) {
        let written = Arc::new(Mutex::new(Vec::new()));
        let sink = written.clone();
        let dialogs = Dialogs::new(Box::new(move |v: &Value| {
            sink.lock().expect("sink").push(v.clone())
        }));
        (Arc::new(dialogs), written)
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_question_resolves_to_no_choice_at_its_timeout() {
        let (dialogs, written) = dialogs();
        let choice = dialogs
            .select("Trust?", &["Yes", "No"], Duration::from_secs(60))
            .await;
        assert_eq!(choice, None);
        let request = written.lock().expect("sink")[0].clone();
        assert_eq!(request["type"], "extension_ui_request");
        assert_eq!(request["method"], "select");
        assert_eq!(request["timeout"], 60000);
        assert_eq!(request["options"], json!(["Yes", "No"]));
        // A late answer is ignored.
        dialogs.answer(
            json!({"type": "extension_ui_response", "id": request["id"], "value": "Yes"})
                .as_object()
                .cloned()
                .expect("object"),
        );
    }

    #[tokio::test]
    async fn an_answer_resolves_its_question_and_only_a_listed_option_counts() {
        let (dialogs, written) = dialogs();
        for (answer, expected) in [
            (json!({"value": "No"}), Some("No".to_string())),
            (json!({"value": "Maybe"}), None),
            (json!({"cancelled": true, "value": "Yes"}), None),
        ] {
            let asking = {
                let dialogs = dialogs.clone();
                tokio::spawn(async move {
                    dialogs
                        .select("Trust?", &["Yes", "No"], Duration::from_secs(60))
                        .await
                })
            };
            let id = loop {
                let last = written.lock().expect("sink").pop();
                if let Some(request) = last {
                    break request["id"].clone();
                }
                tokio::task::yield_now().await;
            };
            let mut response = answer.as_object().cloned().expect("object");
            response.insert("id".into(), id);
            dialogs.answer(response);
            assert_eq!(asking.await.expect("joins"), expected);
        }
    }
}
