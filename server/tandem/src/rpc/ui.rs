//! Extensions' `ctx.ui` in RPC mode: pi 1.6's extension UI sub-protocol
//! (`docs/rpc-extension-ui.md`). Dialogs (`select`, `confirm`, `input`, `editor`) are questions
//! to the client through [`Dialogs`], with the extension's `timeout` when it gave one (`editor`
//! has none, as in pi); the rest (`notify`, `setStatus`, `setWidget`, `setTitle`,
//! `set_editor_text`) are the same record, told and not answered. A handler that throws is an
//! `extension_error` event (`docs/json.md`, "RPC-only events"); other problems with extensions
//! go to stderr as warnings, like every other problem of RPC mode.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tandem_agent::BoxFuture;

use super::dialogs::Dialogs;
use crate::extensions::{ExtensionUi, HandlerFailure, Level};

/// See the module docs.
pub struct RpcUi {
    dialogs: Arc<Dialogs>,
    /// Writes one record to the client (the events' `extension_error`).
    write: fn(&Value),
}

impl RpcUi {
    /// Extension dialogs as `dialogs`' questions; records written with `write`.
    pub fn new(dialogs: Arc<Dialogs>, write: fn(&Value)) -> RpcUi {
        RpcUi { dialogs, write }
    }
}

fn fields(pairs: &[(&str, Option<Value>)]) -> Map<String, Value> {
    pairs
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.to_string(), v)))
        .collect()
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Info => "info",
        Level::Warning => "warning",
        Level::Error => "error",
    }
}

impl ExtensionUi for RpcUi {
    fn has_ui(&self) -> bool {
        true
    }

    fn select(&self, title: String, options: Vec<String>) -> BoxFuture<'static, Option<String>> {
        self.select_within(title, options, None)
    }

    fn select_within(
        &self,
        title: String,
        options: Vec<String>,
        timeout: Option<Duration>,
    ) -> BoxFuture<'static, Option<String>> {
        let dialogs = self.dialogs.clone();
        Box::pin(async move {
            let listed: Vec<&str> = options.iter().map(String::as_str).collect();
            dialogs.select_within(&title, &listed, timeout).await
        })
    }

    fn confirm(&self, title: String, message: String) -> BoxFuture<'static, bool> {
        self.confirm_within(title, message, None)
    }

    fn confirm_within(
        &self,
        title: String,
        message: String,
        timeout: Option<Duration>,
    ) -> BoxFuture<'static, bool> {
        let dialogs = self.dialogs.clone();
        Box::pin(async move { dialogs.confirm(&title, &message, timeout).await })
    }

    fn input(
        &self,
        title: String,
        placeholder: Option<String>,
    ) -> BoxFuture<'static, Option<String>> {
        self.input_within(title, placeholder, None)
    }

    fn input_within(
        &self,
        title: String,
        placeholder: Option<String>,
        timeout: Option<Duration>,
    ) -> BoxFuture<'static, Option<String>> {
        let dialogs = self.dialogs.clone();
        Box::pin(async move {
            let asked = fields(&[
                ("title", Some(json!(title))),
                ("placeholder", placeholder.map(Value::from)),
            ]);
            dialogs.text("input", asked, timeout).await
        })
    }

    fn editor(&self, title: String, prefill: Option<String>) -> BoxFuture<'static, Option<String>> {
        let dialogs = self.dialogs.clone();
        Box::pin(async move {
            let asked = fields(&[
                ("title", Some(json!(title))),
                ("prefill", prefill.map(Value::from)),
            ]);
            dialogs.text("editor", asked, None).await
        })
    }

    fn notify(&self, message: &str, level: Level) {
        self.dialogs.tell(
            "notify",
            fields(&[
                ("message", Some(json!(message))),
                ("notifyType", Some(json!(level_name(level)))),
            ]),
        );
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        self.dialogs.tell(
            "setStatus",
            fields(&[
                ("statusKey", Some(json!(key))),
                ("statusText", text.map(Value::from)),
            ]),
        );
    }

    fn set_widget(&self, key: &str, lines: Option<Vec<String>>) {
        self.set_widget_placed(key, lines, None);
    }

    fn set_widget_placed(&self, key: &str, lines: Option<Vec<String>>, placement: Option<&str>) {
        self.dialogs.tell(
            "setWidget",
            fields(&[
                ("widgetKey", Some(json!(key))),
                ("widgetLines", lines.map(|l| json!(l))),
                ("widgetPlacement", placement.map(Value::from)),
            ]),
        );
    }

    fn set_title(&self, title: &str) {
        self.dialogs
            .tell("setTitle", fields(&[("title", Some(json!(title)))]));
    }

    fn set_editor_text(&self, text: &str) {
        self.dialogs
            .tell("set_editor_text", fields(&[("text", Some(json!(text)))]));
    }

    fn problem(&self, line: &str) {
        crate::eprintln_safe!("Warning: {line}");
    }

    fn handler_failed(&self, failure: &HandlerFailure<'_>) -> bool {
        (self.write)(&extension_error(failure));
        true
    }
}

/// pi's `extension_error` event.
pub fn extension_error(failure: &HandlerFailure<'_>) -> Value {
    json!({
        "type": "extension_error",
        "extensionPath": failure.extension_path,
        "event": failure.event,
        "error": failure.error,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::{json, Value};

    use super::*;

    fn ui() -> (RpcUi, Arc<Dialogs>, Arc<Mutex<Vec<Value>>>) {
        let written = Arc::new(Mutex::new(Vec::new()));
        let sink = written.clone();
        let dialogs = Arc::new(Dialogs::new(Box::new(move |v: &Value| {
            sink.lock().expect("sink").push(v.clone())
        })));
        (RpcUi::new(dialogs.clone(), |_| {}), dialogs, written)
    }

    fn last(written: &Mutex<Vec<Value>>) -> Value {
        written
            .lock()
            .expect("sink")
            .last()
            .cloned()
            .expect("a record")
    }

    #[test]
    fn notices_are_requests_nobody_answers_in_pis_shapes() {
        let (ui, _, written) = ui();
        ui.notify("Blocked", Level::Warning);
        let note = last(&written);
        assert_eq!(note["type"], "extension_ui_request");
        assert_eq!(note["method"], "notify");
        assert_eq!(note["message"], "Blocked");
        assert_eq!(note["notifyType"], "warning");
        assert!(note["id"].is_string());
        ui.set_status("demo", None);
        assert_eq!(
            last(&written).as_object().map(|o| o.len()),
            Some(4),
            "statusText is left out when cleared: {}",
            last(&written)
        );
        ui.set_widget_placed("w", Some(vec!["a".into()]), Some("belowEditor"));
        let widget = last(&written);
        assert_eq!(widget["widgetLines"], json!(["a"]));
        assert_eq!(widget["widgetPlacement"], "belowEditor");
        ui.set_editor_text("hi");
        assert_eq!(last(&written)["method"], "set_editor_text");
    }

    #[tokio::test]
    async fn dialogs_carry_the_timeout_and_read_pis_answers() {
        let (ui, dialogs, written) = ui();
        let confirm = tokio::spawn(ui.confirm_within(
            "Clear?".into(),
            "All lost".into(),
            Some(Duration::from_secs(5)),
        ));
        let request = loop {
            if let Some(r) = written.lock().expect("sink").pop() {
                break r;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(request["method"], "confirm");
        assert_eq!(request["message"], "All lost");
        assert_eq!(request["timeout"], 5000);
        dialogs.answer(
            json!({"type": "extension_ui_response", "id": request["id"], "confirmed": true})
                .as_object()
                .cloned()
                .expect("object"),
        );
        assert!(confirm.await.expect("joins"));

        let editor = tokio::spawn(ui.editor("Edit".into(), Some("a\nb".into())));
        let request = loop {
            if let Some(r) = written.lock().expect("sink").pop() {
                break r;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(request["prefill"], "a\nb");
        assert!(request.get("timeout").is_none());
        dialogs.answer(
            json!({"type": "extension_ui_response", "id": request["id"], "cancelled": true})
                .as_object()
                .cloned()
                .expect("object"),
        );
        assert_eq!(editor.await.expect("joins"), None);
    }
}
