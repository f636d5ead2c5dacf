//! A scripted [`EditorClient`] for the workspace's tests: it records every request and answers
//! from a script (or never answers, to test timeouts).

use std::collections::VecDeque;
use std::sync::Mutex;
use tandem_ai::sync::lock;

use tandem_agent::BoxFuture;
use tower_lsp_server::ls_types::{
    ApplyWorkspaceEditResponse, MessageActionItem, MessageType, WorkspaceEdit,
};

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
}

/// The fake editor. Unscripted requests: edits are applied, questions dismissed.
#[derive(Debug)]
pub struct FakeClient {
    caps: EditCapabilities,
    sent: Mutex<Vec<Sent>>,
    edit_replies: Mutex<VecDeque<Reply>>,
    question_replies: Mutex<VecDeque<Reply>>,
}

impl FakeClient {
    /// A client with `caps`.
    pub fn new(caps: EditCapabilities) -> Self {
        FakeClient {
            caps,
            sent: Mutex::new(Vec::new()),
            edit_replies: Mutex::new(VecDeque::new()),
            question_replies: Mutex::new(VecDeque::new()),
        }
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
                Sent::Question { .. } => None,
            })
            .collect()
    }

    /// The question messages sent so far.
    pub fn questions(&self) -> Vec<String> {
        self.sent()
            .into_iter()
            .filter_map(|s| match s {
                Sent::Question { message, .. } => Some(message),
                Sent::ApplyEdit { .. } => None,
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
        lock(&self.sent).push(Sent::ApplyEdit { label, edit });
        let reply = lock(&self.edit_replies)
            .pop_front()
            .unwrap_or(Reply::Applied(true, None));
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
        Box::pin(async move {
            match reply {
                Reply::Choose(title) => Ok(title.map(|title| MessageActionItem {
                    title: title.to_owned(),
                    properties: Default::default(),
                })),
                Reply::Fail(why) => Err(ClientError::Failed(why.to_owned())),
                Reply::Hang => std::future::pending().await,
                Reply::Applied(..) => panic!("an applyEdit reply scripted for a question"),
            }
        })
    }

    fn capabilities(&self) -> EditCapabilities {
        self.caps
    }
}
