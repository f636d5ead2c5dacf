//! A scripted editor for unit tests of what the server asks the client about its language
//! servers (`tandem/diagnostics`, `tandem/languageRequest`): it records each request and
//! answers from the test's script.

use std::sync::Mutex;

use serde_json::Value;
use tandem_agent::BoxFuture;
use tandem_ai::sync::lock;
use tandem_protocol::requests::{
    DiagnosticsParams, DiagnosticsResult, LanguageRequestParams, LanguageRequestResult,
};
use tower_lsp_server::ls_types::{ApplyWorkspaceEditResponse, MessageActionItem, MessageType};

use crate::lsp::workspace::client::{ClientError, EditCapabilities, EditorClient};

/// How the scripted editor answers.
#[derive(Clone)]
pub enum Reply {
    /// This result.
    Answer(Value),
    /// An error answer.
    Fail(&'static str),
    /// Never.
    Hang,
}

/// `(method, params)` → the reply.
type Script = Box<dyn Fn(&str, &Value) -> Reply + Send + Sync>;

/// An editor with language servers, as far as the two requests go: it records what it is
/// asked and answers from the test's script (`method` is `tandem/diagnostics` or the language
/// request's method).
pub struct Editor {
    /// What the client declared.
    pub caps: EditCapabilities,
    asked: Mutex<Vec<(String, Value)>>,
    script: Script,
}

impl Editor {
    /// An editor that declared both requests, answering from `script`.
    pub fn new(script: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static) -> Self {
        Editor {
            caps: EditCapabilities {
                diagnostics: true,
                language_requests: true,
                ..EditCapabilities::default()
            },
            asked: Mutex::new(Vec::new()),
            script: Box::new(script),
        }
    }

    /// Declaring `caps` instead.
    pub fn with_caps(mut self, caps: EditCapabilities) -> Self {
        self.caps = caps;
        self
    }

    /// What it was asked, in order: (method, params).
    pub fn asked(&self) -> Vec<(String, Value)> {
        lock(&self.asked).clone()
    }

    fn answer<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        method: &str,
        params: Value,
    ) -> BoxFuture<'_, Result<T, ClientError>> {
        let reply = (self.script)(method, &params);
        lock(&self.asked).push((method.to_owned(), params));
        Box::pin(async move {
            match reply {
                Reply::Answer(v) => serde_json::from_value(v)
                    .map_err(|e| ClientError::Failed(format!("bad test answer: {e}"))),
                Reply::Fail(why) => Err(ClientError::Failed(why.to_owned())),
                Reply::Hang => std::future::pending().await,
            }
        })
    }
}

impl EditorClient for Editor {
    fn apply_edit(
        &self,
        _label: String,
        _edit: tower_lsp_server::ls_types::WorkspaceEdit,
    ) -> BoxFuture<'_, Result<ApplyWorkspaceEditResponse, ClientError>> {
        Box::pin(async { Err(ClientError::Failed("no edits here".into())) })
    }

    fn show_message_request(
        &self,
        _typ: MessageType,
        _message: String,
        _actions: Vec<MessageActionItem>,
    ) -> BoxFuture<'_, Result<Option<MessageActionItem>, ClientError>> {
        Box::pin(async { Ok(None) })
    }

    fn diagnostics(
        &self,
        params: DiagnosticsParams,
    ) -> BoxFuture<'_, Result<DiagnosticsResult, ClientError>> {
        let value = serde_json::to_value(params).expect("params");
        self.answer(tandem_protocol::methods::DIAGNOSTICS, value)
    }

    fn language_request(
        &self,
        params: LanguageRequestParams,
    ) -> BoxFuture<'_, Result<LanguageRequestResult, ClientError>> {
        let method = params.method.clone();
        self.answer(&method, params.params)
    }

    fn capabilities(&self) -> EditCapabilities {
        self.caps
    }
}
