//! Which WorkspaceEdit a change becomes: positions, shapes, stale ranges, reads.

use super::*;

const WIDE: &str = "fn main() {}\n😀中 x = 1;\n";

#[tokio::test]
async fn edit_in_open_document_counts_utf16_units() {
    let f = auto(VERSIONED);
    let path = f.open("wide.rs", 7, WIDE);
    let outcome = f.propose(edit(&path, WIDE, &[("1", "2")])).await;
    assert_eq!(outcome, ChangeOutcome::Applied);
    // 😀 is 2 UTF-16 units, 中 one, " x = " five.
    assert_eq!(
        f.client.sent(),
        vec![Sent::ApplyEdit {
            label: "Tandem: edit wide.rs".into(),
            edit: versioned(uri(&path), Some(7), vec![te(1, 8, 1, 9, "2")]),
        }]
    );
}

#[tokio::test]
async fn edit_in_open_document_counts_utf8_bytes() {
    let f = fixture(VERSIONED, PositionEncoding::Utf8, EditMode::Auto);
    let path = f.open("wide.rs", 2, WIDE);
    f.propose(edit(&path, WIDE, &[("1", "2")])).await;
    assert_eq!(
        f.client.edits(),
        vec![versioned(uri(&path), Some(2), vec![te(1, 12, 1, 13, "2")])]
    );
}

#[tokio::test]
async fn whole_file_write_sends_only_the_changed_lines() {
    let f = auto(VERSIONED);
    let path = f.open("abc.txt", 3, "a\nb\nc\nd\n");
    let change = write_change(&path, Some("a\nb\nc\nd\n"), "a\nB\nc\nd\ne\n");
    assert_eq!(f.propose(change).await, ChangeOutcome::Applied);
    let expected = vec![te(1, 0, 1, 1, "B"), te(4, 0, 4, 0, "e\n")];
    assert_eq!(
        f.client.edits(),
        vec![versioned(uri(&path), Some(3), expected)]
    );

    let g = auto(VERSIONED);
    let path = g.open("tail.txt", 1, "a\nb");
    g.propose(write_change(&path, Some("a\nb"), "a\nc")).await;
    assert_eq!(
        g.client.edits(),
        vec![versioned(uri(&path), Some(1), vec![te(1, 0, 1, 1, "c")])]
    );
}

/// The spec's worked example: `hello world` → `hello there` replaces `world` only, so the
/// user's cursor and marks on `hello ` stay where they are; a multi-line edit sends only the
/// lines that change, each trimmed.
#[tokio::test]
async fn an_edit_sends_only_what_changes_inside_the_tools_range() {
    let f = auto(VERSIONED);
    let text = "hello world\nsecond line\n";
    let path = f.open("hello.txt", 1, text);
    f.propose(edit(&path, text, &[("hello world", "hello there")]))
        .await;
    assert_eq!(
        f.client.edits(),
        vec![versioned(
            uri(&path),
            Some(1),
            vec![te(0, 6, 0, 11, "there")]
        )]
    );
    let g = auto(VERSIONED);
    let text = "fn a() {\n    one();\n    two();\n    three();\n}\n";
    let path = g.open("block.rs", 1, text);
    let old = "fn a() {\n    one();\n    two();\n    three();\n}";
    let new = "fn a() {\n    uno();\n    two();\n    tres();\n}";
    g.propose(edit(&path, text, &[(old, new)])).await;
    assert_eq!(
        g.client.edits(),
        vec![versioned(
            uri(&path),
            Some(1),
            vec![te(1, 4, 1, 7, "uno"), te(3, 5, 3, 9, "res")]
        )]
    );
    // Multi-byte characters are never cut: é and è share their first byte.
    let h = auto(VERSIONED);
    let text = "café\n";
    let path = h.open("cafe.txt", 1, text);
    h.propose(edit(&path, text, &[("café", "cafè")])).await;
    assert_eq!(
        h.client.edits(),
        vec![versioned(uri(&path), Some(1), vec![te(0, 3, 0, 4, "è")])]
    );
}

#[tokio::test]
async fn identical_write_is_applied_without_asking_the_editor() {
    let f = confirm(VERSIONED);
    let path = f.open("same.txt", 1, "same\n");
    let outcome = f
        .propose(write_change(&path, Some("same\n"), "same\n"))
        .await;
    assert_eq!(outcome, ChangeOutcome::Applied);
    assert_eq!(f.client.sent(), vec![]);
}

#[tokio::test]
async fn new_file_is_a_create_operation_when_supported() {
    let f = auto(FULL);
    let path = f.path("new/file.rs");
    let outcome = f.propose(write_change(&path, None, "hello\n")).await;
    assert_eq!(outcome, ChangeOutcome::Applied);
    let expected = WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Operations(vec![
            DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                uri: uri(&path),
                options: None,
                annotation_id: None,
            })),
            DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: uri(&path),
                    version: None,
                },
                edits: vec![OneOf::Left(te(0, 0, 0, 0, "hello\n"))],
            }),
        ])),
        change_annotations: None,
    };
    assert_eq!(
        f.client.sent(),
        vec![Sent::ApplyEdit {
            label: "Tandem: create new/file.rs".into(),
            edit: expected,
        }]
    );
    assert!(!path.exists(), "never written behind the editor's back");
}

#[tokio::test]
async fn new_file_without_create_support_is_a_plain_insert() {
    let f = auto(VERSIONED);
    let path = f.path("new.txt");
    f.propose(write_change(&path, None, "hello\n")).await;
    assert_eq!(
        f.client.edits(),
        vec![plain(uri(&path), vec![te(0, 0, 0, 0, "hello\n")])]
    );
}

#[tokio::test]
async fn file_not_open_goes_through_apply_edit_as_a_changes_map() {
    let f = auto(VERSIONED);
    let path = f.write("disk.txt", "x\ny\n");
    let outcome = f.propose(edit(&path, "x\ny\n", &[("y", "z")])).await;
    assert_eq!(outcome, ChangeOutcome::Applied);
    assert_eq!(
        f.client.edits(),
        vec![plain(uri(&path), vec![te(1, 0, 1, 1, "z")])]
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "x\ny\n");
}

#[tokio::test]
async fn a_bom_on_disk_is_not_counted_in_positions() {
    let f = auto(PLAIN);
    let text = "\u{FEFF}a😀b\n";
    let path = f.write("bom.txt", text);
    f.propose(edit(&path, text, &[("b", "c")])).await;
    assert_eq!(
        f.client.edits(),
        vec![plain(uri(&path), vec![te(0, 3, 0, 4, "c")])]
    );
}

#[tokio::test]
async fn a_document_opened_under_another_spelling_of_its_uri_is_found() {
    let f = auto(VERSIONED);
    let path = f.path("a.txt");
    let spelled = format!("{}/%61.txt", uri(&f.root).as_str());
    f.store
        .lock()
        .expect("store")
        .open(&spelled, "plaintext", 4, "buffer\n");
    assert_eq!(
        f.ws.read(&path).await.expect("read"),
        FileContent::Text("buffer\n".into())
    );
    f.propose(edit(&path, "buffer\n", &[("buffer", "text")]))
        .await;
    let spelled: Uri = spelled.parse().expect("uri");
    assert_eq!(
        f.client.edits(),
        vec![versioned(spelled, Some(4), vec![te(0, 0, 0, 6, "text")])]
    );
}

#[tokio::test]
async fn a_buffer_changed_since_the_read_gets_the_edit_where_its_text_is() {
    let f = auto(VERSIONED);
    let text = "let x = 1;\nlet y = 2;\n";
    let path = f.open("main.rs", 1, text);
    // The user added a line above: the edit moves with its text.
    f.store
        .lock()
        .expect("store")
        .change(
            uri(&path).as_str(),
            2,
            &[TextChange::full("// typed\nlet x = 1;\nlet y = 2;\n")],
        )
        .expect("change");
    let change = edit(&path, text, &[("y = 2", "y = 3")]);
    let ChangeOutcome::Rebased(made) = f.propose(change).await else {
        panic!("expected a re-based edit");
    };
    assert_eq!(made.new_text, "// typed\nlet x = 1;\nlet y = 3;\n");
    assert_eq!(f.text(&path), "// typed\nlet x = 1;\nlet y = 3;\n");
    assert_eq!(
        f.client.edits(),
        vec![versioned(uri(&path), Some(2), vec![te(2, 8, 2, 9, "3")])]
    );
}

#[tokio::test]
async fn a_region_the_user_changed_is_a_conflict_showing_it_and_nothing_is_sent() {
    let f = auto(VERSIONED);
    let text = "let x = 1;\n";
    let path = f.open("main.rs", 1, text);
    let change = edit(&path, text, &[("1", "2")]);
    f.store
        .lock()
        .expect("store")
        .change(uri(&path).as_str(), 2, &[TextChange::full("let x = 10;\n")])
        .expect("change");
    let ChangeOutcome::Conflict { detail } = f.propose(change).await else {
        panic!("expected a conflict");
    };
    assert!(detail.contains("The user changed main.rs"), "{detail}");
    assert!(detail.contains("let x = 10;"), "{detail}");

    let disk = f.write("disk.rs", "fn a() {}\n");
    let change = edit(&disk, "fn b() {}\n", &[("b", "c")]);
    assert!(matches!(
        f.propose(change).await,
        ChangeOutcome::Conflict { .. }
    ));

    let mut overlapping = edit(&disk, "fn a() {}\n", &[("fn", "pub fn")]);
    overlapping.edits.push(TextEdit {
        range: 1..4,
        new_text: "x".into(),
    });
    assert!(matches!(
        f.propose(overlapping).await,
        ChangeOutcome::Conflict { .. }
    ));
    assert!(f.client.sent().is_empty());
}

#[tokio::test]
async fn read_prefers_the_open_buffer() {
    let f = auto(PLAIN);
    let path = f.write("file.txt", "on disk\n");
    assert_eq!(
        f.ws.read(&path).await.expect("read"),
        FileContent::Disk(path.clone())
    );
    f.open("file.txt", 1, "unsaved\n");
    assert_eq!(
        f.ws.read(&path).await.expect("read"),
        FileContent::Text("unsaved\n".into())
    );
    let missing = f.path("missing.txt");
    assert_eq!(
        f.ws.read(&missing).await,
        Err(WorkspaceError::NotFound(missing.clone()))
    );
    assert_eq!(
        f.ws.read(&f.root).await,
        Err(WorkspaceError::IsDirectory(f.root.clone()))
    );
}

#[tokio::test]
async fn crlf_line_breaks_are_never_split() {
    let f = auto(VERSIONED);
    let old = "a\r\nb\r\nc\r\n";
    let path = f.open("crlf.txt", 2, old);
    f.propose(write_change(&path, Some(old), "a\r\nB\r\nc\r\n"))
        .await;
    assert_eq!(
        f.client.edits(),
        vec![versioned(uri(&path), Some(2), vec![te(1, 0, 1, 1, "B")])]
    );
    // A line break changed from CRLF to LF: the whole break is replaced, never half of it.
    let g = auto(VERSIONED);
    let path = g.open("crlf2.txt", 2, old);
    g.propose(write_change(&path, Some(old), "a\r\nb\nc\r\n"))
        .await;
    assert_eq!(
        g.client.edits(),
        vec![versioned(uri(&path), Some(2), vec![te(1, 1, 2, 0, "\n")])]
    );
}
