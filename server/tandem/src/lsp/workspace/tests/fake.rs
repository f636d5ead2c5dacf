//! A scripted [`EditorClient`] for the workspace's tests: it records every request and answers
//! from a script (or never answers, to test timeouts).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use tandem_agent::BoxFuture;
use tower_lsp_server::ls_types::{
    self as lsp, ApplyWorkspaceEditResponse, DocumentChanges, MessageActionItem, MessageType,
    OneOf, WorkspaceEdit,
};

use tandem_protocol::requests::{SaveDocumentsParams, SaveDocumentsResult, SaveFailure};

use crate::lsp::documents::{DocumentStore, TextChange};
use crate::lsp::position::{Position, Range};

use crate::lsp::workspace::client::{ClientError, EditCapabilities, EditorClient};

/// A request the workspace sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent {
    /// `workspace/applyEdit`.
    ApplyEdit {
        /// Its label.
        label: String,
        /// The edit.
        edit: WorkspaceEdit,
    },
    /// `tandem/saveDocuments`.
    Save {
        /// The URIs.
        uris: Vec<String>,
    },
    /// `window/showMessageRequest`.
    Question {
        /// The message type.
        typ: MessageType,
        /// The text.
        message: String,
        /// The action titles, in order.
        actions: Vec<String>,
    },
}

/// How the fake answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `applyEdit`: this `applied` and failure reason.
    Applied(bool, Option<&'static str>),
    /// `showMessageRequest`: the chosen title (`None`: dismissed).
    Choose(Option<&'static str>),
    /// The request fails.
    Fail(&'static str),
    /// Never answer.
    Hang,
    /// `applyEdit`: answer `applied: true` (applying it) only after this long.
    Late(std::time::Duration),
    /// `applyEdit`: answer `applied: true` without applying it (Neovim, finding its buffer
    /// newer than the edit's version).
    Skip,
}

/// What the fake editor does to its document store just before it applies an edit (the
/// user typing while the edit is in flight).
pub type Typing = Box<dyn FnMut(&mut DocumentStore) + Send>;

/// The fake editor. Unscripted requests: edits are applied, questions dismissed. With a
/// document store ([`FakeClient::editor`]) it behaves like an editor: an edit it answers
/// `applied: true` to is applied to the open document (a new version, as its `didChange`
/// would say); a versioned edit for another version is refused as VS Code refuses it; a
/// plain one is applied at its positions whatever happened since.
pub struct FakeClient {
    caps: EditCapabilities,
    sent: Mutex<Vec<Sent>>,
    edit_replies: Mutex<VecDeque<Reply>>,
    question_replies: Mutex<VecDeque<Reply>>,
    store: Option<Arc<Mutex<DocumentStore>>>,
    typing: Mutex<VecDeque<Typing>>,
    question_typing: Mutex<VecDeque<Typing>>,
    save_refusals: Mutex<Vec<(String, String)>>,
}

impl std::fmt::Debug for FakeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeClient")
            .field("caps", &self.caps)
            .finish()
    }
}

impl FakeClient {
    /// A client with `caps`.
    pub fn new(caps: EditCapabilities) -> Self {
        FakeClient {
            caps,
            sent: Mutex::new(Vec::new()),
            edit_replies: Mutex::new(VecDeque::new()),
            question_replies: Mutex::new(VecDeque::new()),
            store: None,
            typing: Mutex::new(VecDeque::new()),
            question_typing: Mutex::new(VecDeque::new()),
            save_refusals: Mutex::new(Vec::new()),
        }
    }

    /// A client with `caps` that edits the documents of `store` as an editor would.
    pub fn editor(caps: EditCapabilities, store: Arc<Mutex<DocumentStore>>) -> Self {
        FakeClient {
            store: Some(store),
            ..FakeClient::new(caps)
        }
    }

    /// Before the next edits are applied, the user types (one closure per edit).
    pub fn type_before_edits(&self, typing: impl IntoIterator<Item = Typing>) {
        lock(&self.typing).extend(typing);
    }

    /// `tandem/saveDocuments` cannot save `uri`, for `why`.
    pub fn refuse_to_save(&self, uri: &str, why: &str) {
        lock(&self.save_refusals).push((uri.to_owned(), why.to_owned()));
    }

    /// While the next questions are open, the user types (one closure per question).
    pub fn type_during_questions(&self, typing: impl IntoIterator<Item = Typing>) {
        lock(&self.question_typing).extend(typing);
    }

    /// A closure that applies `edit` later (for late answers): true when applied.
    fn apply_later(
        &self,
        edit: WorkspaceEdit,
    ) -> impl FnOnce(Option<Arc<Mutex<DocumentStore>>>) -> bool {
        let caps = self.caps;
        move |store| {
            let late = FakeClient {
                store,
                ..FakeClient::new(caps)
            };
            late.apply_to_store(&edit).is_ok()
        }
    }

    /// Applies `edit` to the open documents as an editor would; `Err` with the reason it
    /// refuses.
    fn apply_to_store(&self, edit: &WorkspaceEdit) -> Result<(), String> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let mut store = lock(store);
        if let Some(mut typing) = lock(&self.typing).pop_front() {
            typing(&mut store);
        }
        let mut targets: Vec<(String, Option<i32>, Vec<lsp::TextEdit>)> = Vec::new();
        if let Some(changes) = &edit.changes {
            for (uri, edits) in changes {
                targets.push((uri.as_str().to_owned(), None, edits.clone()));
            }
        }
        if let Some(DocumentChanges::Edits(docs)) = &edit.document_changes {
            for doc in docs {
                let edits = doc
                    .edits
                    .iter()
                    .map(|e| match e {
                        OneOf::Left(e) => e.clone(),
                        OneOf::Right(a) => a.text_edit.clone(),
                    })
                    .collect();
                targets.push((
                    doc.text_document.uri.as_str().to_owned(),
                    doc.text_document.version,
                    edits,
                ));
            }
        }
        for (uri, version, edits) in targets {
            let Some(doc) = store.get(&uri) else {
                continue;
            };
            if version.is_some_and(|v| v != doc.version()) {
                return Err("document version mismatch".into());
            }
            // Last first, so earlier positions stay valid (as LSP edits are all against the
            // same text).
            let mut changes: Vec<TextChange> = edits
                .iter()
                .map(|e| {
                    let at = |p: lsp::Position| Position::new(p.line, p.character);
                    TextChange::replace(
                        Range::new(at(e.range.start), at(e.range.end)),
                        e.new_text.clone(),
                    )
                })
                .collect();
            changes.reverse();
            let next = doc.version() + 1;
            store
                .change(&uri, next, &changes)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The next `applyEdit` requests get these replies.
    pub fn reply_edits(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.edit_replies).extend(replies);
    }

    /// The next questions get these replies.
    pub fn reply_questions(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.question_replies).extend(replies);
    }

    /// Every request so far, in order.
    pub fn sent(&self) -> Vec<Sent> {
        lock(&self.sent).clone()
    }

    /// The edits sent so far.
    pub fn edits(&self) -> Vec<WorkspaceEdit> {
        self.sent()
            .into_iter()
            .filter_map(|s| match s {
                Sent::ApplyEdit { edit, .. } => Some(edit),
                Sent::Question { .. } | Sent::Save { .. } => None,
            })
            .collect()
    }

    /// The question messages sent so far.
    pub fn questions(&self) -> Vec<String> {
        self.sent()
            .into_iter()
            .filter_map(|s| match s {
                Sent::Question { message, .. } => Some(message),
                Sent::ApplyEdit { .. } | Sent::Save { .. } => None,
            })
            .collect()
    }
}

impl EditorClient for FakeClient {
    fn apply_edit(
        &self,
        label: String,
        edit: WorkspaceEdit,
    ) -> BoxFuture<'_, Result<ApplyWorkspaceEditResponse, ClientError>> {
        let edit_for_store = edit.clone();
        lock(&self.sent).push(Sent::ApplyEdit { label, edit });
        let reply = lock(&self.edit_replies)
            .pop_front()
            .unwrap_or(Reply::Applied(true, None));
        let reply = match reply {
            Reply::Applied(true, reason) => match self.apply_to_store(&edit_for_store) {
                Ok(()) => Reply::Applied(true, reason),
                Err(_) => Reply::Applied(false, Some("document version mismatch")),
            },
            Reply::Skip => Reply::Applied(true, None),
            Reply::Late(delay) => {
                let store = self.store.clone();
                let pending = self.apply_later(edit_for_store.clone());
                return Box::pin(async move {
                    tokio::time::sleep(delay).await;
                    let applied = pending(store);
                    Ok(ApplyWorkspaceEditResponse {
                        applied,
                        failure_reason: None,
                        failed_change: None,
                    })
                });
            }
            other => other,
        };
        Box::pin(async move {
            match reply {
                Reply::Applied(applied, reason) => Ok(ApplyWorkspaceEditResponse {
                    applied,
                    failure_reason: reason.map(str::to_owned),
                    failed_change: None,
                }),
                Reply::Fail(why) => Err(ClientError::Failed(why.to_owned())),
                Reply::Hang => std::future::pending().await,
                Reply::Choose(_) => panic!("a question reply scripted for applyEdit"),
                Reply::Late(_) | Reply::Skip => unreachable!("answered above"),
            }
        })
    }

    fn show_message_request(
        &self,
        typ: MessageType,
        message: String,
        actions: Vec<MessageActionItem>,
    ) -> BoxFuture<'_, Result<Option<MessageActionItem>, ClientError>> {
        let actions: Vec<String> = actions.into_iter().map(|a| a.title).collect();
        lock(&self.sent).push(Sent::Question {
            typ,
            message,
            actions,
        });
        let reply = lock(&self.question_replies)
            .pop_front()
            .unwrap_or(Reply::Choose(None));
        if let (Some(store), Some(mut typing)) =
            (&self.store, lock(&self.question_typing).pop_front())
        {
            typing(&mut lock(store));
        }
        Box::pin(async move {
            match reply {
                Reply::Choose(title) => Ok(title.map(|title| MessageActionItem {
                    title: title.to_owned(),
                    properties: Default::default(),
                })),
                Reply::Fail(why) => Err(ClientError::Failed(why.to_owned())),
                Reply::Hang => std::future::pending().await,
                Reply::Applied(..) | Reply::Late(_) | Reply::Skip => {
                    panic!("an applyEdit reply scripted for a question")
                }
            }
        })
    }

    fn save_documents(
        &self,
        params: SaveDocumentsParams,
    ) -> BoxFuture<'_, Result<SaveDocumentsResult, ClientError>> {
        lock(&self.sent).push(Sent::Save {
            uris: params.uris.clone(),
        });
        let refuse = lock(&self.save_refusals).clone();
        Box::pin(async move {
            let mut result = SaveDocumentsResult::default();
            for uri in params.uris {
                match refuse.iter().find(|(u, _)| *u == uri) {
                    Some((_, why)) => result.failed.push(SaveFailure {
                        uri,
                        message: why.clone(),
                    }),
                    None => result.saved.push(uri),
                }
            }
            Ok(result)
        })
    }

    fn capabilities(&self) -> EditCapabilities {
        self.caps
    }
}
