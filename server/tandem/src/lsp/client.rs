//! The JSON-RPC boundary with tower-lsp-server: its [`Client`] adapted to the seams the rest of
//! the server is written against ([`EventSink`] for the `tandem/event` stream, the workspace's
//! [`EditorClient`] for `workspace/applyEdit`, `window/showMessageRequest` and the `tandem/*`
//! requests to the client), and the two
//! conversions on the way in and out ([`absent_params_as_empty`], [`rpc_error`]).
//!
//! Keeping the JSON-RPC client behind these traits lets the event forwarder and the workspace be
//! tested with plain channels, and keeps the opt-in rule (events only for clients that declared
//! `experimental.tandem.events`) in one place.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tandem_ai::sync::read_lock;

use serde_json::Value;
use tandem_agent::BoxFuture;
use tandem_protocol::events::EventNotification;
use tandem_protocol::requests::{
    DiagnosticsParams, DiagnosticsResult, LanguageRequestParams, LanguageRequestResult,
    SaveDocumentsParams, SaveDocumentsResult,
};
use tandem_protocol::TandemError;
use tower_lsp_server::jsonrpc;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::ApplyWorkspaceEdit;
use tower_lsp_server::ls_types::{
    ApplyWorkspaceEditParams, ApplyWorkspaceEditResponse, MessageActionItem, MessageType,
    WorkspaceEdit,
};
use tower_lsp_server::Client;

use super::events::EventSink;
use super::workspace::client::{ClientError, EditCapabilities, EditorClient};

/// `tandem/event`, as tower-lsp-server's typed notification.
#[derive(Debug)]
pub enum TandemEvent {}

impl Notification for TandemEvent {
    type Params = EventNotification;
    const METHOD: &'static str = tandem_protocol::methods::EVENT;
}

/// Sends `tandem/event` to the client, but only once it has opted in.
#[derive(Clone)]
pub struct ClientEvents {
    client: Client,
    enabled: Arc<AtomicBool>,
}

impl ClientEvents {
    /// A sink over `client`, sending only while `enabled` is true (set at `initialize`).
    pub fn new(client: Client, enabled: Arc<AtomicBool>) -> Self {
        ClientEvents { client, enabled }
    }
}

impl EventSink for ClientEvents {
    fn delivers(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    fn send(&self, notification: EventNotification) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.enabled.load(Ordering::Acquire) {
                self.client
                    .send_notification::<TandemEvent>(notification)
                    .await;
            }
        })
    }
}

/// The workspace's [`EditorClient`] over tower-lsp-server's [`Client`]: `workspace/applyEdit`
/// (with its label) and `window/showMessageRequest`. No timeout here: the workspace wraps
/// every call in its own.
pub struct LspEditor {
    client: Client,
    capabilities: Arc<std::sync::RwLock<EditCapabilities>>,
}

impl LspEditor {
    /// An editor over `client`; `capabilities` is filled in at `initialize`.
    pub fn new(client: Client, capabilities: Arc<std::sync::RwLock<EditCapabilities>>) -> Self {
        LspEditor {
            client,
            capabilities,
        }
    }
}

fn failed(e: tower_lsp_server::jsonrpc::Error) -> ClientError {
    ClientError::Failed(e.to_string())
}

impl EditorClient for LspEditor {
    fn apply_edit(
        &self,
        label: String,
        edit: WorkspaceEdit,
    ) -> BoxFuture<'_, Result<ApplyWorkspaceEditResponse, ClientError>> {
        Box::pin(async move {
            let params = ApplyWorkspaceEditParams {
                label: Some(label),
                edit,
            };
            self.client
                .send_request::<ApplyWorkspaceEdit>(params)
                .await
                .map_err(failed)
        })
    }

    fn show_message_request(
        &self,
        typ: MessageType,
        message: String,
        actions: Vec<MessageActionItem>,
    ) -> BoxFuture<'_, Result<Option<MessageActionItem>, ClientError>> {
        Box::pin(async move {
            self.client
                .show_message_request(typ, message, Some(actions))
                .await
                .map_err(failed)
        })
    }

    fn show_message(&self, typ: MessageType, message: String) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.client.show_message(typ, message).await })
    }

    fn save_documents(
        &self,
        params: SaveDocumentsParams,
    ) -> BoxFuture<'_, Result<SaveDocumentsResult, ClientError>> {
        Box::pin(async move {
            self.client
                .send_request::<SaveDocuments>(params)
                .await
                .map_err(failed)
        })
    }

    fn diagnostics(
        &self,
        params: DiagnosticsParams,
    ) -> BoxFuture<'_, Result<DiagnosticsResult, ClientError>> {
        Box::pin(async move {
            self.client
                .send_request::<EditorDiagnostics>(params)
                .await
                .map_err(failed)
        })
    }

    fn language_request(
        &self,
        params: LanguageRequestParams,
    ) -> BoxFuture<'_, Result<LanguageRequestResult, ClientError>> {
        Box::pin(async move {
            self.client
                .send_request::<LanguageRequest>(params)
                .await
                .map_err(failed)
        })
    }

    fn capabilities(&self) -> EditCapabilities {
        *read_lock(&self.capabilities)
    }
}

/// `tandem/saveDocuments`, as tower-lsp-server's typed request.
#[derive(Debug)]
pub enum SaveDocuments {}

impl tower_lsp_server::ls_types::request::Request for SaveDocuments {
    type Params = SaveDocumentsParams;
    type Result = SaveDocumentsResult;
    const METHOD: &'static str = tandem_protocol::methods::SAVE_DOCUMENTS;
}

/// `tandem/diagnostics`, as tower-lsp-server's typed request.
#[derive(Debug)]
pub enum EditorDiagnostics {}

impl tower_lsp_server::ls_types::request::Request for EditorDiagnostics {
    type Params = DiagnosticsParams;
    type Result = DiagnosticsResult;
    const METHOD: &'static str = tandem_protocol::methods::DIAGNOSTICS;
}

/// `tandem/languageRequest`, as tower-lsp-server's typed request.
#[derive(Debug)]
pub enum LanguageRequest {}

impl tower_lsp_server::ls_types::request::Request for LanguageRequest {
    type Params = LanguageRequestParams;
    type Result = LanguageRequestResult;
    const METHOD: &'static str = tandem_protocol::methods::LANGUAGE_REQUEST;
}

/// Tandem's error object as tower-lsp-server's.
pub fn rpc_error(e: TandemError) -> jsonrpc::Error {
    jsonrpc::Error {
        code: jsonrpc::ErrorCode::from(e.code),
        message: e.message.into(),
        data: e.data,
    }
}

/// The spec lets `tandem/...` requests omit params whose fields are all optional; the
/// router would reject them ("Missing params field"), so they are read as `{}`.
pub fn absent_params_as_empty(request: jsonrpc::Request) -> jsonrpc::Request {
    if !request.method().starts_with("tandem/") {
        return request;
    }
    let (method, id, params) = request.into_parts();
    let params = params.unwrap_or_else(|| Value::Object(Default::default()));
    let builder = jsonrpc::Request::build(method).params(params);
    match id {
        Some(id) => builder.id(id).finish(),
        None => builder.finish(),
    }
}
