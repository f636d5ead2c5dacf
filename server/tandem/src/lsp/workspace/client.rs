//! The seam between the server's spawned work and the editor: the requests it sends the client.
//!
//! [`super::LspWorkspace`] and the editor's language intelligence ([`crate::lsp::intel`])
//! never talk JSON-RPC themselves. The server implements [`EditorClient`] over
//! tower-lsp-server's `Client` (`apply_edit` → `workspace/applyEdit`, `show_message_request` →
//! `window/showMessageRequest`, `show_message` → `window/showMessage`, `save_documents`,
//! `diagnostics` and `language_request` → the `tandem/*` requests of the same names) and
//! reports what the client said it supports in `initialize` as [`EditCapabilities`]. Tests
//! implement it with a scripted fake.
//!
//! Implementations need not time out: the workspace wraps every call in its own timeout
//! ([`super::WorkspaceSettings::timeout`]), so a client that never answers costs the tool an
//! error, never a hung server.

use std::time::Duration;

use tandem_agent::BoxFuture;
use tandem_protocol::capabilities::ClientCapability;
use tandem_protocol::requests::{
    DiagnosticsParams, DiagnosticsResult, InputParams, InputResult, LanguageRequestParams,
    LanguageRequestResult, SaveDocumentsParams, SaveDocumentsResult,
};
use tower_lsp_server::ls_types::{
    ApplyWorkspaceEditResponse, ClientCapabilities, MessageActionItem, MessageType,
    ResourceOperationKind, WorkspaceEdit,
};

/// The editor, as the workspace needs it.
pub trait EditorClient: Send + Sync {
    /// Sends `workspace/applyEdit` with `label` and resolves with the client's answer.
    fn apply_edit(
        &self,
        label: String,
        edit: WorkspaceEdit,
    ) -> BoxFuture<'_, Result<ApplyWorkspaceEditResponse, ClientError>>;

    /// Sends `window/showMessageRequest`; `None` when the user dismissed it.
    fn show_message_request(
        &self,
        typ: MessageType,
        message: String,
        actions: Vec<MessageActionItem>,
    ) -> BoxFuture<'_, Result<Option<MessageActionItem>, ClientError>>;

    /// Sends `window/showMessage` (a notification: nothing to wait for). The default drops it,
    /// for fakes that do not care.
    fn show_message(&self, _typ: MessageType, _message: String) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Sends `tandem/saveDocuments` (only when [`EditCapabilities::save_documents`]). The
    /// default fails, for fakes that do not save.
    fn save_documents(
        &self,
        _params: SaveDocumentsParams,
    ) -> BoxFuture<'_, Result<SaveDocumentsResult, ClientError>> {
        Box::pin(async {
            Err(ClientError::Failed(
                "this editor cannot save documents".into(),
            ))
        })
    }

    /// Sends `tandem/diagnostics` (only when [`EditCapabilities::diagnostics`]). The default
    /// fails, for fakes without language intelligence.
    fn diagnostics(
        &self,
        _params: DiagnosticsParams,
    ) -> BoxFuture<'_, Result<DiagnosticsResult, ClientError>> {
        Box::pin(async {
            Err(ClientError::Failed(
                "this editor cannot report diagnostics".into(),
            ))
        })
    }

    /// Sends `tandem/languageRequest` (only when [`EditCapabilities::language_requests`]).
    /// The default fails, for fakes without language intelligence.
    fn language_request(
        &self,
        _params: LanguageRequestParams,
    ) -> BoxFuture<'_, Result<LanguageRequestResult, ClientError>> {
        Box::pin(async {
            Err(ClientError::Failed(
                "this editor cannot answer language requests".into(),
            ))
        })
    }

    /// Sends `tandem/input` (only when [`EditCapabilities::input`]). The default fails, for
    /// fakes without it.
    fn input(&self, _params: InputParams) -> BoxFuture<'_, Result<InputResult, ClientError>> {
        Box::pin(async {
            Err(ClientError::Failed(
                "this editor cannot ask for text".into(),
            ))
        })
    }

    /// What the client supports for edits (from its `initialize` capabilities).
    fn capabilities(&self) -> EditCapabilities;
}

/// The parts of the client's capabilities that shape a `WorkspaceEdit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditCapabilities {
    /// `workspace.applyEdit`: the client applies edits the server sends. Without it no edit is
    /// sent and every change is refused with a message saying so.
    pub apply_edit: bool,
    /// `workspace.workspaceEdit.documentChanges`: versioned `TextDocumentEdit`s.
    pub document_changes: bool,
    /// `workspace.workspaceEdit.resourceOperations` includes `create`.
    pub create_files: bool,
    /// `workspace.workspaceEdit.resourceOperations` includes `delete` (an undo deletes the
    /// files a turn created).
    pub delete_files: bool,
    /// `workspace.workspaceEdit.changeAnnotationSupport` is present: the client can ask the
    /// user to confirm edits annotated with `needsConfirmation` (VS Code's refactor preview).
    pub change_annotations: bool,
    /// The client can show `window/showMessageRequest` buttons. The request belongs to the
    /// base protocol, so [`EditCapabilities::from_client`] always assumes it; `false` means
    /// the server knows the client has no dialogs, and confirm mode then refuses edits it
    /// cannot confirm otherwise (with a message naming `editMode: auto`).
    pub show_message_request: bool,
    /// `experimental.tandem.saveDocuments`: the client saves documents on request before a
    /// command runs.
    pub save_documents: bool,
    /// `experimental.tandem.diagnostics`: the client answers `tandem/diagnostics` with the
    /// diagnostics of its other language servers.
    pub diagnostics: bool,
    /// `experimental.tandem.languageRequests`: the client answers `tandem/languageRequest`
    /// (definition, references, symbols, hover, rename) from its other language servers.
    pub language_requests: bool,
    /// `experimental.tandem.input`: the client answers `tandem/input` (text an extension asks
    /// the user for).
    pub input: bool,
}

impl Default for EditCapabilities {
    /// A client that declared nothing: plain `changes` maps, questions by message request.
    fn default() -> Self {
        EditCapabilities {
            apply_edit: true,
            document_changes: false,
            create_files: false,
            delete_files: false,
            change_annotations: false,
            show_message_request: true,
            save_documents: false,
            diagnostics: false,
            language_requests: false,
            input: false,
        }
    }
}

impl EditCapabilities {
    /// Reads the client's `initialize` capabilities.
    pub fn from_client(capabilities: &ClientCapabilities) -> Self {
        let edit = capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref());
        let tandem = ClientCapability::from_experimental(capabilities.experimental.as_ref());
        EditCapabilities {
            apply_edit: capabilities
                .workspace
                .as_ref()
                .and_then(|w| w.apply_edit)
                .unwrap_or(false),
            document_changes: edit.and_then(|e| e.document_changes).unwrap_or(false),
            create_files: edit
                .and_then(|e| e.resource_operations.as_ref())
                .is_some_and(|ops| ops.contains(&ResourceOperationKind::Create)),
            delete_files: edit
                .and_then(|e| e.resource_operations.as_ref())
                .is_some_and(|ops| ops.contains(&ResourceOperationKind::Delete)),
            change_annotations: edit.is_some_and(|e| e.change_annotation_support.is_some()),
            show_message_request: true,
            save_documents: tandem.save_documents,
            diagnostics: tandem.diagnostics,
            language_requests: tandem.language_requests,
            input: tandem.input,
        }
    }
}

/// A request to the client that did not produce an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// No answer within the workspace's timeout.
    #[error("the editor did not answer {method} within {seconds} s")]
    Timeout {
        /// The LSP method (`workspace/applyEdit`, `window/showMessageRequest`).
        method: &'static str,
        /// The timeout, in whole seconds (rounded up).
        seconds: u64,
    },
    /// The request failed (the client answered with an error, or the connection closed).
    #[error("the editor request failed: {0}")]
    Failed(String),
}

impl ClientError {
    /// A timeout of `timeout` on `method`.
    pub fn timeout(method: &'static str, timeout: Duration) -> Self {
        let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
        ClientError::Timeout { method, seconds }
    }
}

/// `workspace/applyEdit`.
pub const APPLY_EDIT: &str = "workspace/applyEdit";
/// `window/showMessageRequest`.
pub const SHOW_MESSAGE_REQUEST: &str = "window/showMessageRequest";

/// Awaits `call`, giving up after `timeout`.
pub(crate) async fn with_timeout<T>(
    method: &'static str,
    timeout: Duration,
    call: BoxFuture<'_, Result<T, ClientError>>,
) -> Result<T, ClientError> {
    match tokio::time::timeout(timeout, call).await {
        Ok(answer) => answer,
        Err(_) => Err(ClientError::timeout(method, timeout)),
    }
}
