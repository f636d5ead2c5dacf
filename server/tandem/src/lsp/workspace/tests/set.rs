//! An undo's changes as one `workspace/applyEdit`: several documents and a deletion, the buffer
//! the user typed in since refused, and a client that cannot delete files.

use tandem_coding::workspace::{ChangeSet, FileDeletion};

use super::*;
use crate::lsp::workspace::set::CANNOT_DELETE;

fn whole(path: &Path, old: &str, new: &str) -> FileChange {
    FileChange {
        path: path.to_path_buf(),
        real: path.to_path_buf(),
        old_text: Some(old.to_owned()),
        new_text: new.to_owned(),
        edits: Vec::new(),
    }
}

fn deletion(path: &Path, old: &str) -> FileDeletion {
    FileDeletion {
        path: path.to_path_buf(),
        real: path.to_path_buf(),
        old_text: old.to_owned(),
    }
}

#[tokio::test]
async fn several_documents_and_a_deletion_go_as_one_edit() {
    let f = auto(FULL);
    let open = f.open("a.txt", 3, "one\nTWO\nthree\n");
    let disk = f.write("b.txt", "x\nY\n");
    let created = f.write("new.txt", "fresh\n");
    let set = ChangeSet {
        changes: vec![
            whole(&open, "one\nTWO\nthree\n", "one\ntwo\nthree\n"),
            whole(&disk, "x\nY\n", "x\ny\n"),
        ],
        deletions: vec![deletion(&created, "fresh\n")],
    };
    let outcome = f.ws.propose_set("undo", set).await.expect("propose");
    assert_eq!(outcome, ChangeOutcome::Applied);
    let edits = f.client.edits();
    assert_eq!(edits.len(), 1, "one edit for the whole undo");
    let Some(DocumentChanges::Operations(ops)) = &edits[0].document_changes else {
        panic!("expected operations: {:?}", edits[0]);
    };
    assert_eq!(ops.len(), 3, "{ops:?}");
    let DocumentChangeOperation::Edit(first) = &ops[0] else {
        panic!("{ops:?}")
    };
    assert_eq!(first.text_document.version, Some(3));
    assert_eq!(
        first.edits,
        vec![OneOf::Left(lsp::TextEdit::new(
            lsp::Range::new(lsp::Position::new(1, 0), lsp::Position::new(1, 3)),
            "two".into()
        ))]
    );
    assert!(
        matches!(&ops[2], DocumentChangeOperation::Op(ResourceOp::Delete(d)) if d.uri == uri(&created)),
        "{ops:?}"
    );
}

#[tokio::test]
async fn a_buffer_typed_in_since_the_undo_was_computed_refuses_it_whole() {
    let f = confirm(FULL);
    let open = f.open("a.txt", 3, "one\nTWO\nthree\nmore\n");
    let set = ChangeSet {
        changes: vec![whole(&open, "one\nTWO\nthree\n", "one\ntwo\nthree\n")],
        deletions: Vec::new(),
    };
    let outcome = f.ws.propose_set("undo", set).await.expect("propose");
    let ChangeOutcome::Rejected {
        reason: Some(reason),
    } = outcome
    else {
        panic!("expected a refusal, got {outcome:?}")
    };
    assert!(reason.contains(CHANGED_IN_EDITOR), "{reason}");
    assert!(f.client.sent().is_empty(), "nothing was asked or sent");
}

#[tokio::test]
async fn a_client_that_cannot_delete_files_is_told_why() {
    let f = auto(VERSIONED);
    let created = f.write("new.txt", "fresh\n");
    let set = ChangeSet {
        changes: Vec::new(),
        deletions: vec![deletion(&created, "fresh\n")],
    };
    let outcome = f.ws.propose_set("undo", set).await.expect("propose");
    assert_eq!(
        outcome,
        ChangeOutcome::Rejected {
            reason: Some(CANNOT_DELETE.into())
        }
    );
    assert!(created.exists());
}

#[tokio::test]
async fn confirm_mode_asks_once_for_the_undo_even_after_apply_all() {
    let f = confirm(VERSIONED);
    let other = f.open("b.txt", 1, "b\n");
    f.client.reply_questions([
        Reply::Choose(Some(interaction::APPLY_ALL)),
        Reply::Choose(Some(interaction::REJECT)),
    ]);
    let applied = f.propose(edit(&other, "b\n", &[("b", "B")])).await;
    assert_eq!(applied, ChangeOutcome::Applied);
    assert!(f.ws.applies_all());
    let open = f.open("a.txt", 1, "A\n");
    let set = ChangeSet {
        changes: vec![whole(&open, "A\n", "a\n")],
        deletions: Vec::new(),
    };
    let outcome = f.ws.propose_set("undo", set).await.expect("propose");
    assert_eq!(
        outcome,
        ChangeOutcome::Rejected {
            reason: Some(REJECTED_BY_USER.into())
        }
    );
    let questions = f.client.questions();
    assert_eq!(
        questions[1..],
        ["Tandem wants to undo its changes to 1 file(s) (+1/-1 lines)"]
    );
    assert_eq!(f.client.edits().len(), 1, "only the agent's edit was sent");
}
