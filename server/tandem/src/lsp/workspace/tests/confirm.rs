//! Consent for edits: annotations, questions, Apply all, auto mode, failures, timeouts.

use super::*;

#[tokio::test]
async fn confirm_mode_annotates_edits_when_the_client_can_preview() {
    let f = confirm(FULL);
    let text = "let x = 1;\n";
    let path = f.open("src/main.rs", 9, text);
    let outcome = f.propose(edit(&path, text, &[("1", "2")])).await;
    assert_eq!(outcome, ChangeOutcome::Applied);
    let expected = WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier::new(uri(&path), 9),
            edits: vec![OneOf::Right(AnnotatedTextEdit {
                text_edit: te(0, 8, 0, 9, "2"),
                annotation_id: ANNOTATION_ID.into(),
            })],
        }])),
        change_annotations: Some(HashMap::from([(
            ANNOTATION_ID.to_owned(),
            ChangeAnnotation {
                label: "Tandem: edit src/main.rs".into(),
                needs_confirmation: Some(true),
                description: Some("+1/-1 lines".into()),
            },
        )])),
    };
    assert_eq!(
        f.client.sent(),
        vec![Sent::ApplyEdit {
            label: "Tandem: edit src/main.rs".into(),
            edit: expected,
        }]
    );
}

#[tokio::test]
async fn annotated_new_file_and_closed_file_carry_the_annotation_everywhere() {
    let f = confirm(FULL);
    let new = f.path("fresh.txt");
    f.propose(write_change(&new, None, "one\ntwo\n")).await;
    let closed = f.write("closed.txt", "a\n");
    f.propose(edit(&closed, "a\n", &[("a", "b")])).await;
    let edits = f.client.edits();
    let Some(DocumentChanges::Operations(ops)) = &edits[0].document_changes else {
        panic!("expected operations, got {:?}", edits[0]);
    };
    let DocumentChangeOperation::Op(ResourceOp::Create(create)) = &ops[0] else {
        panic!("expected a create first, got {:?}", ops[0]);
    };
    assert_eq!(create.annotation_id.as_deref(), Some(ANNOTATION_ID));
    let annotation = &edits[0].change_annotations.as_ref().expect("annotations")[ANNOTATION_ID];
    assert_eq!(annotation.label, "Tandem: create fresh.txt");
    assert_eq!(annotation.description.as_deref(), Some("+2/-0 lines"));
    // A closed file is addressed without a version, so it can carry the annotation.
    let Some(DocumentChanges::Edits(docs)) = &edits[1].document_changes else {
        panic!("expected document edits, got {:?}", edits[1]);
    };
    assert_eq!(docs[0].text_document.version, None);
    assert_eq!(
        docs[0].edits,
        vec![OneOf::Right(AnnotatedTextEdit {
            text_edit: te(0, 0, 0, 1, "b"),
            annotation_id: ANNOTATION_ID.into(),
        })]
    );
    assert!(f.client.questions().is_empty());
}

const NOTES: &str = "one\ntwo\n";
const ASK_NOTES: &str = "Tandem wants to edit notes.txt (+1/-1 lines)";

#[tokio::test]
async fn confirm_mode_asks_with_buttons_then_applies() {
    let f = confirm(VERSIONED);
    let path = f.open("notes.txt", 1, NOTES);
    f.client
        .reply_questions([Reply::Choose(Some(interaction::APPLY))]);
    let outcome = f.propose(edit(&path, NOTES, &[("two", "2")])).await;
    assert_eq!(outcome, ChangeOutcome::Applied);
    assert_eq!(
        f.client.sent(),
        vec![
            question(ASK_NOTES, &interaction::EDIT_ACTIONS, MessageType::INFO),
            Sent::ApplyEdit {
                label: "Tandem: edit notes.txt".into(),
                edit: versioned(uri(&path), Some(1), vec![te(1, 0, 1, 3, "2")]),
            },
        ]
    );
}

#[tokio::test]
async fn reject_or_dismiss_is_a_rejection_and_nothing_is_sent() {
    let f = confirm(VERSIONED);
    let path = f.open("notes.txt", 1, NOTES);
    f.client.reply_questions([
        Reply::Choose(Some(interaction::REJECT)),
        Reply::Choose(None),
    ]);
    for _ in 0..2 {
        let outcome = f.propose(edit(&path, NOTES, &[("two", "2")])).await;
        assert_eq!(outcome, rejected(REJECTED_BY_USER));
    }
    assert_eq!(f.client.questions(), vec![ASK_NOTES, ASK_NOTES]);
    assert!(f.client.edits().is_empty());
}

#[tokio::test]
async fn apply_all_stops_asking_until_the_run_is_reset() {
    let f = confirm(VERSIONED);
    let path = f.open("notes.txt", 1, NOTES);
    f.client
        .reply_questions([Reply::Choose(Some(interaction::APPLY_ALL))]);
    let change = edit(&path, NOTES, &[("two", "2")]);
    assert_eq!(f.propose(change.clone()).await, ChangeOutcome::Applied);
    assert!(f.ws.applies_all());
    let now = f.text(&path);
    let change = edit(&path, &now, &[("one", "1")]);
    assert_eq!(f.propose(change.clone()).await, ChangeOutcome::Applied);
    assert_eq!(f.client.questions().len(), 1);
    assert_eq!(f.client.edits().len(), 2);

    f.ws.reset_run_approvals();
    let now = f.text(&path);
    let change = edit(&path, &now, &[("2", "zwei")]);
    assert_eq!(f.propose(change).await, rejected(REJECTED_BY_USER));
    assert_eq!(f.client.questions().len(), 2);
    assert_eq!(f.client.edits().len(), 2);
}

#[tokio::test]
async fn auto_mode_never_asks() {
    let f = auto(FULL);
    let path = f.open("notes.txt", 1, NOTES);
    f.propose(edit(&path, NOTES, &[("two", "2")])).await;
    assert_eq!(
        f.client.edits(),
        vec![versioned(uri(&path), Some(1), vec![te(1, 0, 1, 3, "2")])]
    );
    assert!(f.client.questions().is_empty());
}

#[tokio::test]
async fn a_client_without_apply_edit_gets_no_request_and_a_clear_refusal() {
    let f = confirm(EditCapabilities {
        apply_edit: false,
        ..PLAIN
    });
    let path = f.open("notes.txt", 1, NOTES);
    let outcome = f.propose(edit(&path, NOTES, &[("two", "2")])).await;
    let ChangeOutcome::Refused { reason } = outcome else {
        panic!("expected a refusal, got {outcome:?}")
    };
    assert!(
        reason.contains("does not support workspace/applyEdit"),
        "{reason}"
    );
    assert!(f.client.sent().is_empty(), "nothing was sent to the client");
}

#[tokio::test]
async fn confirm_without_any_way_to_ask_refuses_with_the_fix() {
    let f = confirm(EditCapabilities {
        show_message_request: false,
        ..PLAIN
    });
    let path = f.open("notes.txt", 1, NOTES);
    let outcome = f.propose(edit(&path, NOTES, &[("two", "2")])).await;
    let ChangeOutcome::Refused { reason } = outcome else {
        panic!("expected a refusal, got {outcome:?}");
    };
    assert!(reason.contains("editMode setting to auto"), "{reason}");
    assert!(f.client.sent().is_empty());
}

#[tokio::test]
async fn applied_false_is_a_refusal_by_the_editor_not_a_rejection_by_the_user() {
    let f = auto(VERSIONED);
    let path = f.open("notes.txt", 1, NOTES);
    f.client.reply_edits([
        Reply::Applied(false, Some("the file is read-only")),
        Reply::Applied(false, None),
        Reply::Fail("connection closed"),
    ]);
    let change = edit(&path, NOTES, &[("two", "2")]);
    assert_eq!(
        f.propose(change.clone()).await,
        refused("the file is read-only")
    );
    assert_eq!(f.propose(change.clone()).await, refused(NOT_APPLIED));
    assert_eq!(
        f.propose(change).await,
        refused("the editor request failed: connection closed")
    );
}

#[tokio::test]
async fn applied_false_in_the_editors_own_preview_is_the_users_rejection() {
    let f = confirm(FULL);
    let path = f.open("notes.txt", 1, NOTES);
    f.client
        .reply_edits([Reply::Applied(false, Some("rejected in the preview"))]);
    let change = edit(&path, NOTES, &[("two", "2")]);
    assert_eq!(f.propose(change).await, rejected("rejected in the preview"));
}

#[tokio::test]
async fn a_client_that_never_answers_is_a_timeout_not_a_rejection() {
    let f = confirm(VERSIONED);
    f.set_timeout(Duration::from_millis(50));
    let path = f.open("notes.txt", 1, NOTES);
    f.client
        .reply_questions([Reply::Hang, Reply::Choose(Some(interaction::APPLY))]);
    f.client.reply_edits([Reply::Hang]);
    let change = edit(&path, NOTES, &[("two", "2")]);
    let bounded = Duration::from_secs(5);
    let mut outcomes = Vec::new();
    for _ in 0..2 {
        let outcome = tokio::time::timeout(bounded, f.propose(change.clone()))
            .await
            .expect("the workspace's own timeout fires first");
        outcomes.push(outcome);
    }
    assert_eq!(
        outcomes,
        vec![
            ChangeOutcome::TimedOut {
                detail: "the editor did not answer within 1 s (nothing was sent)".into()
            },
            ChangeOutcome::TimedOut {
                detail: "the editor did not answer workspace/applyEdit within 1 s".into()
            },
        ]
    );
    // The first hang was the question, the second the applyEdit after "Apply".
    assert_eq!(f.client.questions().len(), 2);
    assert_eq!(f.client.edits().len(), 1);
}
