//! Consent for commands and outside paths; capabilities from initialize.

use super::*;

fn bash(command: &str) -> PermissionRequest {
    PermissionRequest::Bash {
        command: command.into(),
        cwd: PathBuf::from("/"),
    }
}

fn deny(reason: &str) -> PermissionDecision {
    PermissionDecision::Reject {
        reason: Some(reason.into()),
    }
}

#[tokio::test]
async fn bash_in_ask_mode_maps_each_answer() {
    let f = confirm(PLAIN);
    f.client.reply_questions([
        Reply::Choose(Some(interaction::ALLOW)),
        Reply::Choose(Some(interaction::ALLOW_FOR_SESSION)),
        Reply::Choose(Some(interaction::DENY)),
        Reply::Choose(None),
        Reply::Fail("closed"),
    ]);
    let expected = [
        PermissionDecision::AllowOnce,
        PermissionDecision::AllowAlways,
        deny("denied by the user"),
        deny("dismissed by the user"),
        deny("the editor request failed: closed"),
    ];
    for want in expected {
        assert_eq!(
            f.ws.ask_permission("call-1", bash("cargo test")).await,
            want
        );
    }
    let ask = question(
        "Tandem wants to run: cargo test",
        &interaction::PERMISSION_ACTIONS,
        MessageType::WARNING,
    );
    assert_eq!(f.client.sent(), vec![ask; 5]);
}

#[tokio::test]
async fn bash_allow_and_deny_settings_never_ask() {
    let f = confirm(PLAIN);
    f.settings.write().expect("settings").bash_permission = BashPermission::Allow;
    assert_eq!(
        f.ws.ask_permission("call-1", bash("ls")).await,
        PermissionDecision::AllowOnce
    );
    f.settings.write().expect("settings").bash_permission = BashPermission::Deny;
    assert_eq!(
        f.ws.ask_permission("call-1", bash("ls")).await,
        deny("bash is disabled (bashPermission: deny)")
    );
    assert!(f.client.sent().is_empty());
}

#[tokio::test]
async fn a_permission_question_left_unanswered_is_denied() {
    let f = confirm(PLAIN);
    f.set_timeout(Duration::from_millis(50));
    f.client.reply_questions([Reply::Hang]);
    let decision = tokio::time::timeout(
        Duration::from_secs(5),
        f.ws.ask_permission("call-1", bash("ls")),
    )
    .await
    .expect("the workspace's own timeout fires first");
    assert_eq!(decision, deny("the editor did not answer within 1 s"));
}

#[tokio::test]
async fn outside_paths_are_asked_with_allow_and_deny() {
    let f = confirm(PLAIN);
    f.client
        .reply_questions([Reply::Choose(Some(interaction::ALLOW))]);
    let request = PermissionRequest::OutsideWorkspace {
        path: PathBuf::from("/etc/hosts"),
        write: true,
    };
    assert_eq!(
        f.ws.ask_permission("call-1", request.clone()).await,
        PermissionDecision::AllowOnce
    );
    assert_eq!(
        f.ws.ask_permission("call-1", request).await,
        deny("dismissed by the user")
    );
    let ask = question(
        "Tandem wants to write /etc/hosts (outside the workspace)",
        &[interaction::ALLOW, interaction::DENY],
        MessageType::WARNING,
    );
    assert_eq!(f.client.sent(), vec![ask.clone(), ask]);
}

#[test]
fn capabilities_are_read_from_initialize() {
    let caps: ClientCapabilities = serde_json::from_value(json!({
        "workspace": {"applyEdit": true, "workspaceEdit": {
            "documentChanges": true,
            "resourceOperations": ["create", "rename", "delete"],
            "changeAnnotationSupport": {"groupsOnLabel": true}
        }}
    }))
    .expect("capabilities");
    assert_eq!(EditCapabilities::from_client(&caps), FULL);
    let plain: ClientCapabilities =
        serde_json::from_value(json!({"workspace": {"applyEdit": true}})).expect("capabilities");
    assert_eq!(EditCapabilities::from_client(&plain), PLAIN);
    assert_eq!(EditCapabilities::default(), PLAIN);
    // A client that never declared applyEdit gets no edits at all.
    let bare: ClientCapabilities = serde_json::from_value(json!({})).expect("capabilities");
    assert!(!EditCapabilities::from_client(&bare).apply_edit);
}
