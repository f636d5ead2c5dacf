//! How an edit or an action gets the user's consent: edit mode, change annotations, questions.
//!
//! Edits (issue 6, item 5): in `auto` mode, or after "Apply all" in this run, the edit is sent
//! as is. In `confirm` mode a client with change-annotation support gets every edit annotated
//! with `needsConfirmation` and shows its own preview (VS Code's refactor preview); any other
//! client is asked first with `window/showMessageRequest` (Apply / Reject / Apply all). Either
//! way the client's `applied` answer is the outcome: `applied: false` becomes a rejection
//! carrying the client's reason.
//!
//! Commands and outside paths (item 7): the bash permission setting decides, and in `ask`
//! mode a message request asks. A dismissed question, an unknown answer, an error or no answer
//! in time is always the safe answer: reject.

use std::path::Path;
use std::sync::atomic::Ordering;

use tandem_coding::workspace::{ChangeOutcome, PermissionDecision, PermissionRequest};
use tandem_protocol::config::{BashPermission, EditMode};
use tandem_protocol::interaction::{self, EditAnswer, PermissionAnswer};
use tower_lsp_server::ls_types::{ChangeAnnotation, MessageActionItem, MessageType};

use super::client::{with_timeout, ClientError, SHOW_MESSAGE_REQUEST};
use super::edits::{can_annotate, PlannedChange};
use super::LspWorkspace;

/// The id of the one change annotation an edit carries.
pub const ANNOTATION_ID: &str = "tandem-edit";

/// Why an edit was not applied, when the user said no.
pub const REJECTED_BY_USER: &str = "rejected by the user";

/// The reason a client gave nothing for `applied: false`.
pub const NOT_APPLIED: &str = "the editor did not apply the edit";

/// How an edit is confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Confirmation {
    /// Send it as is.
    Direct,
    /// Send it annotated with `needsConfirmation`.
    Annotate,
    /// Ask with a message request, then send it as is.
    Ask,
    /// The client can neither preview nor ask.
    Impossible,
}

/// The consent an edit got, and how it is to be sent.
#[derive(Debug, Clone)]
pub(super) struct Consent {
    /// The edit's label (`Tandem: edit <file>`).
    pub label: String,
    /// The change annotation every edit carries, when the editor confirms it itself.
    pub annotation: Option<(String, ChangeAnnotation)>,
    /// True when the user was asked first (the document may have changed meanwhile).
    pub asked: bool,
}

impl LspWorkspace {
    /// Gets consent for `planned` as the settings say: `Ok` with how to send it, or the
    /// outcome when it is not to be sent.
    pub(super) async fn consent(
        &self,
        path: &Path,
        planned: &PlannedChange,
    ) -> Result<Consent, ChangeOutcome> {
        let settings = self.settings();
        let caps = self.client.capabilities();
        let shown = self.display_path(path);
        let verb = if planned.create { "create" } else { "edit" };
        let label = format!("Tandem: {verb} {shown}");
        let stats = format!("+{}/-{} lines", planned.added, planned.removed);

        if !caps.apply_edit {
            return Err(refused(
                "the editor does not support workspace/applyEdit, so Tandem cannot change files \
                 through it; use an editor integration that does, or the tandem CLI",
            ));
        }
        let how = if settings.edit_mode == EditMode::Auto || self.apply_all.load(Ordering::SeqCst) {
            Confirmation::Direct
        } else if can_annotate(planned, &caps) {
            Confirmation::Annotate
        } else if caps.show_message_request {
            Confirmation::Ask
        } else {
            Confirmation::Impossible
        };
        match how {
            Confirmation::Direct => Ok(Consent::direct(label)),
            Confirmation::Annotate => Ok(Consent {
                annotation: Some((
                    ANNOTATION_ID.to_owned(),
                    ChangeAnnotation {
                        label: label.clone(),
                        needs_confirmation: Some(true),
                        description: Some(stats),
                    },
                )),
                label,
                asked: false,
            }),
            Confirmation::Impossible => Err(refused(
                "the editor can neither preview nor confirm edits; set the tandem editMode \
                 setting to auto to apply them directly",
            )),
            Confirmation::Ask => {
                let message = format!("Tandem wants to {verb} {shown} ({stats})");
                let answer = self
                    .ask(MessageType::INFO, message, &interaction::EDIT_ACTIONS)
                    .await;
                match answer.map(|title| EditAnswer::from_title(title.as_deref())) {
                    Ok(EditAnswer::Apply) => {}
                    Ok(EditAnswer::ApplyAll) => self.apply_all.store(true, Ordering::SeqCst),
                    Ok(EditAnswer::Reject) => {
                        return Err(ChangeOutcome::Rejected {
                            reason: Some(REJECTED_BY_USER.into()),
                        })
                    }
                    Err(e @ ClientError::Timeout { .. }) => {
                        return Err(ChangeOutcome::TimedOut {
                            detail: format!("{} (nothing was sent)", no_answer(&e)),
                        })
                    }
                    Err(e) => return Err(refused(no_answer(&e))),
                }
                Ok(Consent {
                    label,
                    annotation: None,
                    asked: true,
                })
            }
        }
    }

    /// Decides `request` as the settings say, asking the user when needed.
    pub(super) async fn decide(&self, request: PermissionRequest) -> PermissionDecision {
        let (message, actions): (String, &[&str]) = match &request {
            PermissionRequest::Bash { command, .. } => match self.settings().bash_permission {
                BashPermission::Allow => return PermissionDecision::AllowOnce,
                BashPermission::Deny => {
                    return reject("bash is disabled (bashPermission: deny)");
                }
                BashPermission::Ask => (
                    format!("Tandem wants to run: {command}"),
                    &interaction::PERMISSION_ACTIONS,
                ),
            },
            PermissionRequest::OutsideWorkspace { path, write } => {
                let verb = if *write { "write" } else { "read" };
                (
                    format!(
                        "Tandem wants to {verb} {} (outside the workspace)",
                        path.display()
                    ),
                    &[interaction::ALLOW, interaction::DENY],
                )
            }
            // Asked in every edit mode: this is where an edit can plant code that runs later.
            PermissionRequest::ProtectedPath { path, risk } => {
                if !self.client.capabilities().show_message_request {
                    return reject(&format!(
                        "{} can make tools run code and this editor cannot ask for consent",
                        path.display()
                    ));
                }
                (
                    format!(
                        "Tandem wants to write {}. Careful: {risk}.",
                        self.display_path(path)
                    ),
                    &[interaction::ALLOW, interaction::DENY],
                )
            }
        };
        match self.ask(MessageType::WARNING, message, actions).await {
            Ok(title) => match PermissionAnswer::from_title(title.as_deref()) {
                PermissionAnswer::Allow => PermissionDecision::AllowOnce,
                PermissionAnswer::AllowForSession => PermissionDecision::AllowAlways,
                PermissionAnswer::Deny if title.is_none() => reject("dismissed by the user"),
                PermissionAnswer::Deny => reject("denied by the user"),
            },
            Err(e) => reject(&no_answer(&e)),
        }
    }

    /// Asks with `window/showMessageRequest`; the chosen title, `None` when dismissed.
    pub(super) async fn ask(
        &self,
        typ: MessageType,
        message: String,
        titles: &[&str],
    ) -> Result<Option<String>, ClientError> {
        let actions = titles
            .iter()
            .map(|title| MessageActionItem {
                title: (*title).to_owned(),
                properties: Default::default(),
            })
            .collect();
        let call = self.client.show_message_request(typ, message, actions);
        let answer = with_timeout(SHOW_MESSAGE_REQUEST, self.settings().timeout, call).await?;
        Ok(answer.map(|item| item.title))
    }
}

/// The reason given to the model when the client failed or never answered.
pub(super) fn no_answer(error: &ClientError) -> String {
    match error {
        ClientError::Timeout { seconds, .. } => {
            format!("the editor did not answer within {seconds} s")
        }
        ClientError::Failed(detail) => format!("the editor request failed: {detail}"),
    }
}

pub(super) fn refused(reason: impl Into<String>) -> ChangeOutcome {
    ChangeOutcome::Refused {
        reason: reason.into(),
    }
}

pub(super) fn rejected(reason: impl Into<String>) -> ChangeOutcome {
    ChangeOutcome::Rejected {
        reason: Some(reason.into()),
    }
}

fn reject(reason: &str) -> PermissionDecision {
    PermissionDecision::Reject {
        reason: Some(reason.to_owned()),
    }
}
