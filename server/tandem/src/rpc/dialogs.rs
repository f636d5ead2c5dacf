//! Questions to the client, as pi's extension UI sub-protocol has them: an
//! `extension_ui_request` (`select`) with a fresh id and a `timeout` in
//! milliseconds, answered by an `extension_ui_response` with that id (`value` or `cancelled: true`). A client that never answers is not waited for: at the timeout the
//! question resolves to its default (no choice), as pi resolves it; so does a
//! question still open when the process shuts down. An answer to no open question is ignored,
//! as pi ignores it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
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
}

impl Dialogs {
    /// Questions written with `write`.
    pub fn new(write: Write) -> Self {
        Dialogs {
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            write,
        }
    }

    /// Asks the client to choose one of `options`; the choice, or `None` when it cancelled,
    /// answered something else or did not answer within `timeout`.
    pub async fn select(&self, title: &str, options: &[&str], timeout: Duration) -> Option<String> {
        let mut fields = Map::new();
        fields.insert("title".into(), title.into());
        fields.insert("options".into(), options.to_vec().into());
        let answer = self.ask("select", fields, timeout).await?;
        match answer.get("value") {
            Some(Value::String(v)) if options.contains(&v.as_str()) => Some(v.clone()),
            _ => None,
        }
    }

    /// Sends the request and waits for its answer; `None` when cancelled or timed out.
    async fn ask(
        &self,
        method: &str,
        mut fields: Map<String, Value>,
        timeout: Duration,
    ) -> Option<Map<String, Value>> {
        let id = format!(
            "tandem-ui-{}-{}",
            std::process::id(),
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        );
        let (tx, rx) = oneshot::channel();
        lock(&self.open).insert(id.clone(), tx);
        fields.insert("timeout".into(), (timeout.as_millis() as u64).into());
        (self.write)(&dialog_request(&id, method, fields));
        let answer = tokio::time::timeout(timeout, rx).await;
        lock(&self.open).remove(&id);
        let answer = answer.ok()?.ok()?;
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

    /// Resolves every open question to its default (the process is ending).
    pub fn close_all(&self) {
        lock(&self.open).clear();
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
