//! Saved before commands: the documents Tandem changed are saved by the editor before a
//! command runs; what cannot be saved is named to the model.

use super::*;

/// How many `tandem/saveDocuments` requests the client got.
fn saves(f: &Fixture) -> usize {
    f.client
        .sent()
        .iter()
        .filter(|s| matches!(s, Sent::Save { .. }))
        .count()
}

/// Opens `name` ("x"), edits it ("y") and runs a command; what the model is told.
async fn edit_then_command(f: &Fixture, name: &str) -> Vec<String> {
    let path = f.open(name, 1, "x\n");
    f.propose(edit(&path, "x\n", &[("x", "y")])).await;
    f.ws.before_command("call-2", "make").await;
    f.ws.take_notices()
}

const SAVING: EditCapabilities = EditCapabilities {
    save_documents: true,
    diagnostics: false,
    language_requests: false,
    ..VERSIONED
};

#[tokio::test]
async fn an_edited_document_is_saved_before_a_command_and_then_forgotten() {
    let f = auto(SAVING);
    let path = f.open("a.txt", 1, "Helo, world!\n");
    let outcome = f
        .propose(edit(&path, "Helo, world!\n", &[("Helo", "Hello")]))
        .await;
    assert_eq!(outcome, ChangeOutcome::Applied);
    f.ws.before_command("call-2", "./check.sh").await;
    assert_eq!(
        f.client.sent().last(),
        Some(&Sent::Save {
            uris: vec![uri(&path).as_str().to_owned()]
        })
    );
    assert_eq!(saves(&f), 1);
    assert!(f.ws.take_notices().is_empty(), "saved: nothing to tell");
    // Saved: the next command asks nothing.
    f.ws.before_command("call-3", "./check.sh").await;
    assert_eq!(saves(&f), 1);
}

#[tokio::test]
async fn a_document_the_editor_cannot_save_is_named_to_the_model() {
    let f = auto(SAVING);
    let path = f.open("a.txt", 1, "x\n");
    f.client
        .refuse_to_save(uri(&path).as_str(), "the file is read-only");
    f.propose(edit(&path, "x\n", &[("x", "y")])).await;
    f.ws.before_command("call-2", "make").await;
    let notices = f.ws.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("unsaved changes in a.txt (the file is read-only)"),
        "{notices:?}"
    );
}

#[tokio::test]
async fn an_editor_that_cannot_save_or_the_setting_off_gets_the_list_of_unsaved_files() {
    // Helix declares no saveDocuments.
    let f = auto(VERSIONED);
    let notices = edit_then_command(&f, "a.txt").await;
    assert!(
        notices[0].contains("a.txt (this editor cannot be asked to save)"),
        "{notices:?}"
    );
    assert_eq!(saves(&f), 0);

    let f = auto(SAVING);
    f.settings.write().expect("settings").save_before_commands = false;
    let notices = edit_then_command(&f, "b.txt").await;
    assert!(
        notices[0].contains("b.txt (saveBeforeCommands is off)"),
        "{notices:?}"
    );
    assert_eq!(saves(&f), 0);
}

#[tokio::test]
async fn nothing_is_asked_when_no_edit_was_applied() {
    let f = auto(SAVING);
    let path = f.open("a.txt", 1, "x\n");
    f.client.reply_edits([Reply::Applied(false, Some("no"))]);
    f.propose(edit(&path, "x\n", &[("x", "y")])).await;
    f.ws.before_command("call-2", "make").await;
    assert_eq!(saves(&f), 0);
    assert!(f.ws.take_notices().is_empty());
}
