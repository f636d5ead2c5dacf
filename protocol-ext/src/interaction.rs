//! The questions the server asks with `window/showMessageRequest`, and how answers are read.
//!
//! Clients show these as plain buttons, so the titles are part of the protocol: a test or a
//! plugin that answers automatically picks an action by its exact title. A dismissed question
//! (`null` result) or an unknown title is always the safe answer: reject the edit, deny the
//! command, do not trust the folder.

/// Confirm-mode edit question: apply this edit.
pub const APPLY: &str = "Apply";
/// Confirm-mode edit question: reject it (the model is told, as a tool error).
pub const REJECT: &str = "Reject";
/// Confirm-mode edit question: apply this and every further edit of the current run.
pub const APPLY_ALL: &str = "Apply all";

/// The edit question's actions, in the order offered.
pub const EDIT_ACTIONS: [&str; 3] = [APPLY, REJECT, APPLY_ALL];

/// Permission question (a command, or a path outside the workspace): allow once.
pub const ALLOW: &str = "Allow";
/// Permission question: allow this and the same kind of request for the rest of the session.
pub const ALLOW_FOR_SESSION: &str = "Allow for this session";
/// Permission question: deny (the model gets a tool error).
pub const DENY: &str = "Deny";

/// The permission question's actions, in the order offered.
pub const PERMISSION_ACTIONS: [&str; 3] = [ALLOW, ALLOW_FOR_SESSION, DENY];

/// Project-trust question: trust the folder for as long as the server runs.
pub const TRUST: &str = "Trust";
/// Project-trust question: trust it and save the decision in trust.json (shared with pi).
pub const TRUST_ALWAYS: &str = "Trust always";
/// Project-trust question: do not trust it (its project configuration stays unused).
pub const DONT_TRUST: &str = "Don't trust";

/// The project-trust question's actions, in the order offered.
pub const TRUST_ACTIONS: [&str; 3] = [TRUST, TRUST_ALWAYS, DONT_TRUST];

/// The answer to the project-trust question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    /// Trust for this server's lifetime.
    Trust,
    /// Trust and save the decision.
    TrustAlways,
    /// Do not trust (also a dismissed question or an unknown title).
    DontTrust,
}

impl TrustAnswer {
    /// Reads the chosen action's title (`None` when the user dismissed the question).
    pub fn from_title(title: Option<&str>) -> TrustAnswer {
        match title {
            Some(TRUST) => TrustAnswer::Trust,
            Some(TRUST_ALWAYS) => TrustAnswer::TrustAlways,
            _ => TrustAnswer::DontTrust,
        }
    }
}

/// The answer to an edit question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditAnswer {
    /// Apply this edit.
    Apply,
    /// Do not apply it.
    Reject,
    /// Apply it and the run's further edits without asking.
    ApplyAll,
}

impl EditAnswer {
    /// Reads the chosen action's title (`None` when the user dismissed the question).
    pub fn from_title(title: Option<&str>) -> EditAnswer {
        match title {
            Some(APPLY) => EditAnswer::Apply,
            Some(APPLY_ALL) => EditAnswer::ApplyAll,
            _ => EditAnswer::Reject,
        }
    }
}

/// The answer to a permission question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionAnswer {
    /// Allow once.
    Allow,
    /// Allow for the rest of the session.
    AllowForSession,
    /// Deny.
    Deny,
}

impl PermissionAnswer {
    /// Reads the chosen action's title (`None` when the user dismissed the question).
    pub fn from_title(title: Option<&str>) -> PermissionAnswer {
        match title {
            Some(ALLOW) => PermissionAnswer::Allow,
            Some(ALLOW_FOR_SESSION) => PermissionAnswer::AllowForSession,
            _ => PermissionAnswer::Deny,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_map_to_answers_and_anything_else_is_safe() {
        assert_eq!(EditAnswer::from_title(Some("Apply")), EditAnswer::Apply);
        assert_eq!(
            EditAnswer::from_title(Some("Apply all")),
            EditAnswer::ApplyAll
        );
        assert_eq!(EditAnswer::from_title(Some("Reject")), EditAnswer::Reject);
        assert_eq!(EditAnswer::from_title(Some("apply")), EditAnswer::Reject);
        assert_eq!(EditAnswer::from_title(None), EditAnswer::Reject);
        assert_eq!(
            PermissionAnswer::from_title(Some("Allow")),
            PermissionAnswer::Allow
        );
        assert_eq!(
            PermissionAnswer::from_title(Some("Allow for this session")),
            PermissionAnswer::AllowForSession
        );
        assert_eq!(PermissionAnswer::from_title(None), PermissionAnswer::Deny);
        assert_eq!(
            PermissionAnswer::from_title(Some("Sure")),
            PermissionAnswer::Deny
        );
        assert_eq!(TrustAnswer::from_title(Some("Trust")), TrustAnswer::Trust);
        assert_eq!(
            TrustAnswer::from_title(Some("Trust always")),
            TrustAnswer::TrustAlways
        );
        assert_eq!(TrustAnswer::from_title(None), TrustAnswer::DontTrust);
        assert_eq!(
            TrustAnswer::from_title(Some("trust")),
            TrustAnswer::DontTrust
        );
    }
}
