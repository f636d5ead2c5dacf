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

use super::client::{with_timeout, ClientError, APPLY_EDIT, SHOW_MESSAGE_REQUEST};
use super::edits::{can_annotate, workspace_edit, PlannedChange};
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

impl LspWorkspace {
    /// Gets consent for `planned` as the settings say and sends it; the client's answer is
    /// the outcome.
    pub(super) async fn confirm_and_apply(
        &self,
        path: &Path,
        real: &Path,
        planned: PlannedChange,
    ) -> ChangeOutcome {
        let settings = self.settings();
        let caps = self.client.capabilities();
        let shown = self.display_path(path);
        let verb = if planned.create { "create" } else { "edit" };
        let label = format!("Tandem: {verb} {shown}");
        let stats = format!("+{}/-{} lines", planned.added, planned.removed);

        if !caps.apply_edit {
            return rejected(
                "the editor does not support workspace/applyEdit, so Tandem cannot change files \
                 through it; use an editor integration that does, or the tandem CLI",
            );
        }
        let how = if settings.edit_mode == EditMode::Auto || self.apply_all.load(Ordering::SeqCst) {
            Confirmation::Direct
        } else if can_annotate(&planned, &caps) {
            Confirmation::Annotate
        } else if caps.show_message_request {
            Confirmation::Ask
        } else {
            Confirmation::Impossible
        };
        let annotation = match how {
            Confirmation::Direct => None,
            Confirmation::Annotate => Some((
                ANNOTATION_ID.to_owned(),
                ChangeAnnotation {
                    label: label.clone(),
                    needs_confirmation: Some(true),
                    description: Some(stats),
                },
            )),
            Confirmation::Impossible => {
                return rejected(
                    "the editor can neither preview nor confirm edits; set the tandem \
                     editMode setting to auto to apply them directly",
                )
            }
            Confirmation::Ask => {
                let message = format!("Tandem wants to {verb} {shown} ({stats})");
                let answer = self
                    .ask(MessageType::INFO, message, &interaction::EDIT_ACTIONS)
                    .await;
                match answer.map(|title| EditAnswer::from_title(title.as_deref())) {
                    Ok(EditAnswer::Apply) => None,
                    Ok(EditAnswer::ApplyAll) => {
                        self.apply_all.store(true, Ordering::SeqCst);
                        None
                    }
                    Ok(EditAnswer::Reject) => return rejected(REJECTED_BY_USER),
                    Err(e) => return rejected(no_answer(&e)),
                }
            }
        };

        // The path must still lead where it was approved to, after any question. (Between this
        // check and the editor's own write, the editor is the one opening the file.)
        if let Err(e) = tandem_coding::paths::verify_target(path, real) {
            return rejected(e);
        }
        let edit = workspace_edit(planned, &caps, annotation);
        let timeout = settings.timeout;
        match with_timeout(APPLY_EDIT, timeout, self.client.apply_edit(label, edit)).await {
            Ok(response) if response.applied => ChangeOutcome::Applied,
            Ok(response) => rejected(
                response
                    .failure_reason
                    .filter(|r| !r.trim().is_empty())
                    .as_deref()
                    .unwrap_or(NOT_APPLIED),
            ),
            Err(e) => rejected(no_answer(&e)),
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
