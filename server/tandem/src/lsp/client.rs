//! The JSON-RPC boundary with tower-lsp-server: its [`Client`] adapted to the seams the rest of
//! the server is written against ([`EventSink`] for the `tandem/event` stream, the workspace's
//! [`EditorClient`] for `workspace/applyEdit`, `window/showMessageRequest` and the `tandem/*`
//! requests to the client), and the two
//! conversions on the way in and out ([`absent_params_as_empty`], [`rpc_error`]).
//!
//! Keeping the JSON-RPC client behind these traits lets the event forwarder and the workspace be
//! tested with plain channels, and keeps the opt-in rule (events only for clients that declared
//! `experimental.tandem.events`) in one place.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tandem_ai::sync::read_lock;

use futures_util::Stream;
use serde_json::Value;
use tandem_agent::BoxFuture;
use tandem_protocol::events::EventNotification;
use tandem_protocol::requests::{
    DiagnosticsParams, DiagnosticsResult, InputParams, InputResult, LanguageRequestParams,
    LanguageRequestResult, SaveDocumentsParams, SaveDocumentsResult,
};
use tandem_protocol::TandemError;
use tokio::sync::watch;
use tower_lsp_server::jsonrpc;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::ApplyWorkspaceEdit;
use tower_lsp_server::ls_types::{
    ApplyWorkspaceEditParams, ApplyWorkspaceEditResponse, MessageActionItem, MessageType,
    WorkspaceEdit,
};
use tower_lsp_server::{Client, ClientSocket, Loopback};

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
    outbox: Arc<Outbox>,
}

impl ClientEvents {
    /// A sink over `client`, sending only while `enabled` is true (set at `initialize`); what
    /// it sent counts as written once `outbox` saw the writer take it.
    pub fn new(client: Client, enabled: Arc<AtomicBool>, outbox: Arc<Outbox>) -> Self {
        ClientEvents {
            client,
            enabled,
            outbox,
        }
    }
}

impl EventSink for ClientEvents {
    fn delivers(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    fn send(&self, notification: EventNotification) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.enabled.load(Ordering::Acquire) {
                self.outbox.queued.fetch_add(1, Ordering::AcqRel);
                self.client
                    .send_notification::<TandemEvent>(notification)
                    .await;
            }
        })
    }

    fn written(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.outbox.taken_all())
    }
}

/// How long [`Outbox::taken_all`] waits at most (the writer takes a queued message at once
/// unless stdout is blocked by a client that stopped reading).
const OUTBOX_WAIT: Duration = Duration::from_secs(2);

/// tower-lsp-server queues the server's notifications and requests on one channel and its
/// answers on another, and its writer takes from both in turn: a `tandem/event` queued before
/// an answer may be written after it. The outbox counts the events queued and the events the
/// writer took from the channel (it writes what it took before taking anything else), so the
/// server can wait until an event is ahead of an answer it is about to give — a run's
/// `settled` before the answer to `shutdown`.
#[derive(Debug)]
pub struct Outbox {
    queued: AtomicU64,
    /// Events taken by the writer; `u64::MAX` once the writer stopped.
    taken: watch::Sender<u64>,
}

impl Default for Outbox {
    fn default() -> Self {
        Outbox {
            queued: AtomicU64::new(0),
            taken: watch::channel(0).0,
        }
    }
}

impl Outbox {
    /// `socket`, counting the events the writer takes from it.
    pub fn socket(self: &Arc<Self>, socket: ClientSocket) -> CountedSocket {
        CountedSocket {
            socket,
            outbox: self.clone(),
        }
    }

    /// The writer stopped: nothing queued will be taken, so nobody waits for it.
    pub fn close(&self) {
        self.taken.send_replace(u64::MAX);
    }

    /// Waits until the writer took every event queued so far (at most [`OUTBOX_WAIT`]).
    pub async fn taken_all(&self) {
        let queued = self.queued.load(Ordering::Acquire);
        let mut taken = self.taken.subscribe();
        let waited = tokio::time::timeout(OUTBOX_WAIT, taken.wait_for(|n| *n >= queued)).await;
        if waited.is_err() {
            tracing::warn!("an event was not written within {OUTBOX_WAIT:?}");
        }
    }

    fn took(&self, request: &jsonrpc::Request) {
        if request.method() == <TandemEvent as Notification>::METHOD {
            self.taken.send_modify(|n| *n = n.saturating_add(1));
        }
    }
}

/// tower-lsp-server's [`ClientSocket`] with its outgoing messages counted by an [`Outbox`].
pub struct CountedSocket {
    socket: ClientSocket,
    outbox: Arc<Outbox>,
}

type Requests = <ClientSocket as Loopback>::RequestStream;

impl Loopback for CountedSocket {
    type RequestStream = CountedRequests;
    type ResponseSink = <ClientSocket as Loopback>::ResponseSink;

    fn split(self) -> (Self::RequestStream, Self::ResponseSink) {
        let (requests, responses) = Loopback::split(self.socket);
        let counted = CountedRequests {
            requests,
            outbox: self.outbox,
        };
        (counted, responses)
    }
}

/// The outgoing half of a [`CountedSocket`].
pub struct CountedRequests {
    requests: Requests,
    outbox: Arc<Outbox>,
}

impl Stream for CountedRequests {
    type Item = jsonrpc::Request;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = Pin::new(&mut self.requests).poll_next(cx);
        match &next {
            Poll::Ready(Some(request)) => self.outbox.took(request),
            Poll::Ready(None) => self.outbox.close(),
            Poll::Pending => {}
        }
        next
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

    fn input(&self, params: InputParams) -> BoxFuture<'_, Result<InputResult, ClientError>> {
        Box::pin(async move {
            self.client
                .send_request::<InputRequest>(params)
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

/// `tandem/input` as tower-lsp-server sends it.
pub enum InputRequest {}

impl tower_lsp_server::ls_types::request::Request for InputRequest {
    type Params = InputParams;
    type Result = InputResult;
    const METHOD: &'static str = tandem_protocol::methods::INPUT;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn event() -> jsonrpc::Request {
        jsonrpc::Request::build(<TandemEvent as Notification>::METHOD).finish()
    }

    #[tokio::test(start_paused = true)]
    async fn taken_all_waits_for_the_writer_to_take_every_queued_event() {
        let outbox = Arc::new(Outbox::default());
        outbox.queued.fetch_add(2, Ordering::AcqRel);
        outbox.took(&event());
        let waiting = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.taken_all().await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!waiting.is_finished(), "one event is still queued");
        // Other messages on the channel are not events.
        outbox.took(&jsonrpc::Request::build("window/logMessage").finish());
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !waiting.is_finished(),
            "a log message is not the queued event"
        );
        outbox.took(&event());
        tokio::time::timeout(Duration::from_millis(10), waiting)
            .await
            .expect("taken_all returns once the writer took the event")
            .expect("the waiting task ran");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stopped_writer_or_a_stuck_one_never_holds_the_wait_for_long() {
        let outbox = Arc::new(Outbox::default());
        outbox.queued.fetch_add(1, Ordering::AcqRel);
        let stuck = tokio::time::Instant::now();
        outbox.taken_all().await;
        assert_eq!(stuck.elapsed(), OUTBOX_WAIT);
        outbox.close();
        let closed = tokio::time::Instant::now();
        outbox.taken_all().await;
        assert_eq!(closed.elapsed(), Duration::ZERO);
    }
}
