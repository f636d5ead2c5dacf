//! How an extension's `ctx.ui` reaches the editor: `select` and `confirm` as
//! `window/showMessageRequest` buttons, `input` and `editor` as `tandem/input` (clients that
//! declared it; others answer "cancelled"), `notify` and problems as `window/showMessage`. A
//! status, a widget or a title have no standard place in an editor and are not shown.

use std::sync::Arc;

use tandem_agent::BoxFuture;
use tandem_protocol::requests::InputParams;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

use super::workspace::client::EditorClient;
use crate::extensions::{ExtensionUi, Level};

/// The buttons of a confirmation.
const YES: &str = "Yes";
const NO: &str = "No";

/// See the module documentation.
pub struct EditorUi {
    editor: Arc<dyn EditorClient>,
}

impl EditorUi {
    /// The user interface `editor` offers extensions.
    pub fn new(editor: Arc<dyn EditorClient>) -> EditorUi {
        EditorUi { editor }
    }
}

fn actions(titles: &[String]) -> Vec<MessageActionItem> {
    titles
        .iter()
        .map(|title| MessageActionItem {
            title: title.clone(),
            properties: Default::default(),
        })
        .collect()
}

impl ExtensionUi for EditorUi {
    fn has_ui(&self) -> bool {
        self.editor.capabilities().show_message_request
    }

    fn select(&self, title: String, options: Vec<String>) -> BoxFuture<'static, Option<String>> {
        let editor = self.editor.clone();
        Box::pin(async move {
            if options.is_empty() || !editor.capabilities().show_message_request {
                return None;
            }
            let chosen = editor
                .show_message_request(MessageType::INFO, title, actions(&options))
                .await;
            // Only one of the options counts: a client may answer anything.
            chosen
                .ok()
                .flatten()
                .map(|a| a.title)
                .filter(|t| options.contains(t))
        })
    }

    fn confirm(&self, title: String, message: String) -> BoxFuture<'static, bool> {
        let editor = self.editor.clone();
        Box::pin(async move {
            if !editor.capabilities().show_message_request {
                return false;
            }
            let text = if message.is_empty() {
                title
            } else {
                format!("{title}\n\n{message}")
            };
            let buttons = [YES.to_string(), NO.to_string()];
            let chosen = editor
                .show_message_request(MessageType::INFO, text, actions(&buttons))
                .await;
            matches!(chosen, Ok(Some(a)) if a.title == YES)
        })
    }

    fn input(
        &self,
        title: String,
        placeholder: Option<String>,
    ) -> BoxFuture<'static, Option<String>> {
        self.ask_text(title, placeholder, None, false)
    }

    fn editor(&self, title: String, prefill: Option<String>) -> BoxFuture<'static, Option<String>> {
        self.ask_text(title, None, prefill, true)
    }

    fn notify(&self, message: &str, level: Level) {
        let typ = match level {
            Level::Info => MessageType::INFO,
            Level::Warning => MessageType::WARNING,
            Level::Error => MessageType::ERROR,
        };
        self.show(typ, message.to_string());
    }

    fn problem(&self, line: &str) {
        self.show(MessageType::WARNING, format!("Tandem: {line}"));
    }
}

impl EditorUi {
    fn ask_text(
        &self,
        title: String,
        placeholder: Option<String>,
        prefill: Option<String>,
        multiline: bool,
    ) -> BoxFuture<'static, Option<String>> {
        let editor = self.editor.clone();
        Box::pin(async move {
            if !editor.capabilities().input {
                return None;
            }
            let params = InputParams {
                title,
                placeholder,
                prefill,
                multiline,
                source: None,
            };
            editor.input(params).await.ok().and_then(|r| r.value)
        })
    }

    fn show(&self, typ: MessageType, message: String) {
        let editor = self.editor.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { editor.show_message(typ, message).await });
        }
    }
}
