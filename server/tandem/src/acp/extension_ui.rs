//! Extensions' `ctx.ui` through the ACP client (`ctx.mode` is `"acp"`, `ctx.hasUI` true: a
//! client can always be asked for permission).
//!
//! - `select` and `confirm` are `session/request_permission` requests outside any tool call,
//!   the workspace's own path for questions ([`AcpWorkspace::ask_choice`]): each choice one
//!   option, `confirm` two ("Yes", an allow option, and "No", a reject option). A cancelled
//!   request, a cancelled turn or a failing client is no choice.
//! - `input` and `editor` are `elicitation/create` forms with one text field, for a client that
//!   declared `elicitation.form`; for others they are answered "cancelled" at once, and the
//!   log says so once per session.
//! - `notify` and problems with extensions are `notice` updates for a client that declared
//!   `session.notices` (ACP's place for things the user should see that are not the agent's
//!   answer), else only logged. A status, a widget, a window title or the prompt editor's text
//!   have no place in ACP and are not shown.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, ElicitationAction, ElicitationContentValue, ElicitationFormMode,
    ElicitationSchema, ElicitationSessionScope, Notice, NoticeSeverity, PermissionOptionKind,
    SessionNotification, SessionUpdate, StringPropertySchema,
};
use tandem_agent::BoxFuture;

use super::workspace::{AcpWorkspace, ClientConnection};
use crate::extensions::{ExtensionUi, Level};

/// The form field an extension's text dialog is answered in.
const FIELD: &str = "value";
/// `confirm`'s two choices.
const YES: &str = "Yes";
const NO: &str = "No";
/// How long an elicitation may stay unanswered when the extension gave no limit; the event's
/// own time limit usually ends it sooner.
const ELICITATION_LIMIT: Duration = Duration::from_secs(600);

/// See the module docs.
pub struct AcpUi {
    session_id: String,
    cx: ClientConnection,
    workspace: Arc<AcpWorkspace>,
    /// Whether the missing elicitation support was logged already.
    noted: AtomicBool,
}

impl AcpUi {
    /// The user interface of session `session_id`, asking through `workspace` and `cx`.
    pub fn new(session_id: &str, cx: ClientConnection, workspace: Arc<AcpWorkspace>) -> AcpUi {
        AcpUi {
            session_id: session_id.to_string(),
            cx,
            workspace,
            noted: AtomicBool::new(false),
        }
    }

    fn notice(&self, severity: NoticeSeverity, text: &str) -> bool {
        if !self.workspace.caps().notices || text.is_empty() {
            return false;
        }
        let update = SessionUpdate::Notice(Notice::new(severity, text.to_string()));
        let note = SessionNotification::new(self.session_id.clone(), update);
        if let Err(e) = self.cx.send_notification(note) {
            tracing::warn!(
                "session {}: could not send a notice: {}",
                self.session_id,
                e.message
            );
        }
        true
    }

    /// A text dialog as an `elicitation/create` form; `None` when the client has no forms, or
    /// declined, cancelled or failed.
    fn ask_text(
        &self,
        title: String,
        hint: Option<String>,
        prefill: Option<String>,
    ) -> BoxFuture<'static, Option<String>> {
        if !self.workspace.caps().elicitation_form {
            if !self.noted.swap(true, Ordering::AcqRel) {
                tracing::warn!(
                    "session {}: an extension asked for text (ctx.ui.input or ctx.ui.editor), \
                     but the client did not declare elicitation forms; answered as cancelled",
                    self.session_id
                );
            }
            return Box::pin(std::future::ready(None));
        }
        let field = StringPropertySchema::new()
            .title(title.clone())
            .description(hint)
            .default_value(prefill);
        let schema = ElicitationSchema::new().property(FIELD, field, true);
        let scope = ElicitationSessionScope::new(self.session_id.clone());
        let request = CreateElicitationRequest::new(ElicitationFormMode::new(scope, schema), title);
        let sent = self.cx.send_request(request).block_task();
        let session = self.session_id.clone();
        Box::pin(async move {
            let answer = match tokio::time::timeout(ELICITATION_LIMIT, sent).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(e)) => {
                    tracing::warn!(
                        "session {session}: elicitation/create failed: {}",
                        e.message
                    );
                    return None;
                }
                Err(_) => return None,
            };
            match answer.action {
                ElicitationAction::Accept(accepted) => text_of(accepted.content),
                _ => None,
            }
        })
    }
}

/// The text the form's field holds.
fn text_of(content: Option<BTreeMap<String, ElicitationContentValue>>) -> Option<String> {
    match content?.remove(FIELD)? {
        ElicitationContentValue::String(text) => Some(text),
        _ => None,
    }
}

fn severity(level: Level) -> NoticeSeverity {
    match level {
        Level::Info => NoticeSeverity::Info,
        Level::Warning => NoticeSeverity::Warning,
        Level::Error => NoticeSeverity::Error,
    }
}

impl ExtensionUi for AcpUi {
    fn has_ui(&self) -> bool {
        true
    }

    fn select(&self, title: String, options: Vec<String>) -> BoxFuture<'static, Option<String>> {
        let workspace = self.workspace.clone();
        Box::pin(async move {
            if options.is_empty() {
                return None;
            }
            let index = workspace
                .ask_choice(&title, None, &options, |_| PermissionOptionKind::AllowOnce)
                .await?;
            options.into_iter().nth(index)
        })
    }

    fn confirm(&self, title: String, message: String) -> BoxFuture<'static, bool> {
        let workspace = self.workspace.clone();
        Box::pin(async move {
            let choices = [YES.to_string(), NO.to_string()];
            let kind = |i| {
                if i == 0 {
                    PermissionOptionKind::AllowOnce
                } else {
                    PermissionOptionKind::RejectOnce
                }
            };
            let chosen = workspace
                .ask_choice(&title, Some(&message), &choices, kind)
                .await;
            chosen == Some(0)
        })
    }

    fn input(
        &self,
        title: String,
        placeholder: Option<String>,
    ) -> BoxFuture<'static, Option<String>> {
        self.ask_text(title, placeholder, None)
    }

    fn editor(&self, title: String, prefill: Option<String>) -> BoxFuture<'static, Option<String>> {
        self.ask_text(title, None, prefill)
    }

    fn notify(&self, message: &str, level: Level) {
        if !self.notice(severity(level), message) {
            tracing::info!(target: "tandem::extensions", "session {}: {message}", self.session_id);
        }
    }

    fn problem(&self, line: &str) {
        // The runner has logged it already.
        self.notice(NoticeSeverity::Warning, line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_field_is_the_answer() {
        let mut content = BTreeMap::new();
        content.insert(
            FIELD.to_string(),
            ElicitationContentValue::String("typed".into()),
        );
        assert_eq!(text_of(Some(content)), Some("typed".to_string()));
        let mut other = BTreeMap::new();
        other.insert("other".to_string(), ElicitationContentValue::Integer(1));
        assert_eq!(text_of(Some(other)), None);
        assert_eq!(text_of(None), None);
    }
}
