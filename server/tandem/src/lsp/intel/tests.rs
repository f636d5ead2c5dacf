//! `EditorIntel` against a scripted editor: the requests it sends (URIs, positions in the
//! negotiated encoding, the settle wait), the answers it reads, and the failures it reports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tandem_ai::sync::lock;
use tandem_coding::intel::{
    Diagnostic, Document, FileDiagnostics, FileEdits, IntelError, LanguageIntel, Location, Pos,
    Settle, Severity, Span, Symbol,
};
use tandem_protocol::requests::DocumentDiagnostics;

use super::EditorIntel;
use crate::lsp::documents::DocumentStore;
use crate::lsp::position::PositionEncoding;
use crate::lsp::scripted_editor::{Editor, Reply};
use crate::lsp::workspace::client::EditCapabilities;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: Arc<Mutex<DocumentStore>>,
    editor: Arc<Editor>,
    intel: EditorIntel,
}

fn fixture(
    encoding: PositionEncoding,
    script: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static,
) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    let store = Arc::new(Mutex::new(DocumentStore::new(encoding)));
    let editor = Arc::new(Editor::new(script));
    let intel = EditorIntel::new(vec![root.clone()], store.clone(), editor.clone())
        .with_timeouts(Duration::from_millis(200), Duration::from_millis(100));
    Fixture {
        _dir: dir,
        root,
        store,
        editor,
        intel,
    }
}

fn uri(path: &Path) -> String {
    crate::uri::string_from_path(path)
}

/// Language requests answered by `servers` servers with `result`.
fn servers(servers: u32, result: Value) -> Reply {
    Reply::Answer(json!({"servers": servers, "result": result}))
}

fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

fn span(l1: u32, c1: u32, l2: u32, c2: u32) -> Span {
    Span {
        start: Pos {
            line: l1,
            character: c1,
        },
        end: Pos {
            line: l2,
            character: c2,
        },
    }
}

const APP: &str = "fn main() {\n    let é = naïve(1);\n}\n";

impl Fixture {
    /// The same workspace and documents, with an editor answering from `script`.
    fn answering(self, script: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static) -> Self {
        let editor = Arc::new(Editor::new(script));
        let intel = EditorIntel::new(vec![self.root.clone()], self.store.clone(), editor.clone())
            .with_timeouts(Duration::from_millis(200), Duration::from_millis(100));
        Fixture {
            editor,
            intel,
            ..self
        }
    }

    fn file(&self, name: &str, text: &str) -> Document {
        let path = self.root.join(name);
        std::fs::write(&path, text).expect("write");
        Document {
            path,
            text: text.to_owned(),
        }
    }

    fn open(&self, name: &str, text: &str) -> Document {
        let path = self.root.join(name);
        lock(&self.store).open(&uri(&path), "rust", 1, text);
        Document {
            path,
            text: text.to_owned(),
        }
    }
}

#[tokio::test]
async fn a_definition_is_asked_at_the_utf8_column_and_read_back_in_utf16() {
    let fx = fixture(PositionEncoding::Utf8, |_, _| Reply::Hang);
    let app = fx.open("app.rs", APP);
    let lib = fx.file("lib.rs", "// ü\nfn naïve(x: u32) {}\n");
    let lib_uri = uri(&lib.path);
    let fx = fx.answering(move |_, _| {
        // `naïve` at bytes 3..9 of line 1 (UTF-16 3..8), as a LocationLink, and the same
        // place again as a Location from a second server.
        servers(
            2,
            json!([
                {"targetUri": lib_uri, "targetRange": range(1, 0, 1, 21),
                 "targetSelectionRange": range(1, 3, 1, 9)},
                {"uri": lib_uri, "range": range(1, 3, 1, 9)}
            ]),
        )
    });
    // `naïve(1)` starts at UTF-16 column 12 of line 1 (`é` is one unit), byte 13.
    let found = fx
        .intel
        .definition(
            app.clone(),
            Pos {
                line: 1,
                character: 13,
            },
        )
        .await
        .expect("definition");
    assert_eq!(
        found,
        vec![Location {
            path: lib.path.clone(),
            span: span(1, 3, 1, 8),
        }]
    );
    let asked = fx.editor.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0, "textDocument/definition");
    assert_eq!(
        asked[0].1,
        json!({"textDocument": {"uri": uri(&app.path)}, "position": {"line": 1, "character": 14}})
    );
}

#[tokio::test]
async fn utf16_sessions_pass_positions_through_untouched() {
    let fx = fixture(PositionEncoding::Utf16, |_, params| {
        let uri = params["textDocument"]["uri"].clone();
        servers(1, json!([{"uri": uri, "range": range(1, 8, 1, 13)}]))
    });
    let app = fx.open("app.rs", APP);
    let found = fx
        .intel
        .references(
            app.clone(),
            Pos {
                line: 1,
                character: 13,
            },
            true,
        )
        .await
        .expect("references");
    assert_eq!(found[0].span, span(1, 8, 1, 13));
    let asked = fx.editor.asked();
    assert_eq!(asked[0].0, "textDocument/references");
    assert_eq!(asked[0].1["position"], json!({"line": 1, "character": 13}));
    assert_eq!(asked[0].1["context"], json!({"includeDeclaration": true}));
}

#[tokio::test]
async fn diagnostics_wait_for_newer_generations_and_are_read_with_their_codes() {
    let fx = fixture(PositionEncoding::Utf8, |_, params| {
        let uri = params["uris"][0].clone();
        Reply::Answer(json!({"settled": true, "files": [
            {"uri": uri, "generation": 4, "analyzed": true, "diagnostics": [
                {"range": range(1, 8, 1, 10), "severity": 1, "code": 2304, "source": "rustc",
                 "message": "cannot find `é`"},
                {"range": range(0, 0, 0, 2), "severity": 2, "code": "dead_code",
                 "message": "unused"},
                {"range": range(2, 0, 2, 1), "message": "no severity"}]},
            // Outside the workspace: left out.
            {"uri": "file:///elsewhere/x.rs", "generation": 1, "diagnostics": []}]}))
    });
    let app = fx.open("app.rs", APP);
    let settle = Settle {
        after: BTreeMap::from([(app.path.clone(), 3)]),
        wait: Duration::from_millis(50),
        quiet: Duration::from_millis(10),
    };
    let answer = fx
        .intel
        .diagnostics(Some(vec![app.clone()]), Some(settle))
        .await
        .expect("diagnostics");
    assert!(answer.settled);
    let asked = fx.editor.asked();
    assert_eq!(
        asked[0],
        (
            "tandem/diagnostics".to_owned(),
            json!({"uris": [uri(&app.path)], "after": {uri(&app.path): 3}, "waitMs": 50,
                "quietMs": 10})
        )
    );
    assert_eq!(
        answer.files,
        vec![FileDiagnostics {
            path: app.path.clone(),
            generation: 4,
            analyzed: true,
            diagnostics: vec![
                Diagnostic {
                    // `é` is bytes 8..10, one UTF-16 unit.
                    span: span(1, 8, 1, 9),
                    severity: Severity::Error,
                    source: Some("rustc".into()),
                    code: Some("2304".into()),
                    message: "cannot find `é`".into(),
                },
                Diagnostic {
                    span: span(0, 0, 0, 2),
                    severity: Severity::Warning,
                    source: None,
                    code: Some("dead_code".into()),
                    message: "unused".into(),
                },
                Diagnostic {
                    span: span(2, 0, 2, 1),
                    severity: Severity::Error,
                    source: None,
                    code: None,
                    message: "no severity".into(),
                },
            ],
        }]
    );
}

#[tokio::test]
async fn files_outside_the_workspace_or_left_out_by_the_editor_are_answered_without_asking() {
    let fx = fixture(PositionEncoding::Utf16, |_, _| {
        Reply::Answer(json!({"settled": false, "files": []}))
    });
    let outside = Document {
        path: PathBuf::from("/elsewhere/x.rs"),
        text: String::new(),
    };
    let answer = fx
        .intel
        .diagnostics(Some(vec![outside.clone()]), None)
        .await
        .expect("diagnostics");
    assert!(fx.editor.asked().is_empty(), "nothing asked");
    assert_eq!(answer.files[0].path, outside.path);
    assert!(!answer.files[0].analyzed);

    let app = fx.file("app.rs", APP);
    let answer = fx
        .intel
        .diagnostics(Some(vec![app.clone(), outside.clone()]), None)
        .await
        .expect("diagnostics");
    assert!(!answer.settled);
    let asked = fx.editor.asked();
    assert_eq!(asked[0].1, json!({"uris": [uri(&app.path)]}));
    let paths: Vec<&Path> = answer.files.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(paths, vec![app.path.as_path(), outside.path.as_path()]);
    assert_eq!(answer.files[0].generation, 0);
    assert!(answer.files[0].analyzed);
}

#[tokio::test]
async fn all_diagnostics_are_asked_without_uris() {
    let fx = fixture(PositionEncoding::Utf16, |_, _| {
        Reply::Answer(json!({"files": []}))
    });
    let answer = fx.intel.diagnostics(None, None).await.expect("diagnostics");
    assert!(answer.settled, "settled defaults to true");
    assert_eq!(fx.editor.asked()[0].1, json!({}));
}

#[tokio::test]
async fn an_editor_that_never_answers_costs_the_wait_plus_the_grace_then_an_error() {
    let fx = fixture(PositionEncoding::Utf16, |_, _| Reply::Hang);
    let app = fx.file("app.rs", APP);
    let started = std::time::Instant::now();
    let settle = Settle {
        after: BTreeMap::new(),
        wait: Duration::from_millis(100),
        quiet: Duration::from_millis(10),
    };
    let error = fx
        .intel
        .diagnostics(Some(vec![app.clone()]), Some(settle))
        .await
        .expect_err("no answer");
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(
        error,
        IntelError::Failed("the editor did not answer tandem/diagnostics within 1 s".into())
    );
    let error = fx
        .intel
        .hover(app, Pos::default())
        .await
        .expect_err("no answer");
    assert_eq!(
        error,
        IntelError::Failed("the editor did not answer textDocument/hover within 1 s".into())
    );
}

#[tokio::test]
async fn errors_no_server_and_unreadable_answers_are_tool_errors_in_words() {
    let fx = fixture(PositionEncoding::Utf16, |method, _| match method {
        "textDocument/definition" => Reply::Fail("Method not found"),
        "textDocument/hover" => servers(0, Value::Null),
        _ => servers(1, json!([{"uri": 42}])),
    });
    let app = fx.file("app.rs", APP);
    let error = fx
        .intel
        .definition(app.clone(), Pos::default())
        .await
        .expect_err("error answer");
    assert_eq!(
        error,
        IntelError::Failed("the editor's textDocument/definition failed: Method not found".into())
    );
    let error = fx
        .intel
        .hover(app.clone(), Pos::default())
        .await
        .expect_err("no server");
    assert!(matches!(&error, IntelError::NoServer { path, .. } if *path == app.path));
    assert!(error.to_string().contains("language extension"), "{error}");
    let error = fx
        .intel
        .references(app.clone(), Pos::default(), false)
        .await
        .expect_err("unreadable");
    let text = error.to_string();
    assert!(
        text.starts_with(
            "the editor's answer to textDocument/references could not be read: item 0"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn documents_outside_the_workspace_are_never_asked_about() {
    let fx = fixture(PositionEncoding::Utf16, |_, _| servers(1, Value::Null));
    let outside = Document {
        path: PathBuf::from("/elsewhere/x.rs"),
        text: "x".into(),
    };
    let error = fx
        .intel
        .document_symbols(outside)
        .await
        .expect_err("outside");
    assert!(
        error.to_string().contains("outside the workspace"),
        "{error}"
    );
    assert!(fx.editor.asked().is_empty());
}

#[tokio::test]
async fn document_symbols_are_flattened_parents_first_with_depth_and_container() {
    let fx = fixture(PositionEncoding::Utf16, |_, _| {
        servers(
            2,
            json!([
                {"name": "User", "kind": 5, "detail": "", "range": range(0, 0, 9, 1),
                 "selectionRange": range(0, 6, 0, 10), "children": [
                    {"name": "name", "kind": 8, "range": range(1, 4, 1, 20),
                     "selectionRange": range(1, 4, 1, 8)},
                    {"name": "greet", "kind": 6, "detail": "fn(&self)", "range": range(2, 4, 4, 5),
                     "selectionRange": range(2, 7, 2, 12), "children": [
                        {"name": "x", "kind": 13, "range": range(3, 8, 3, 18),
                         "selectionRange": range(3, 12, 3, 13)}]}]},
                // A second server's flat answer.
                {"name": "main", "kind": 12, "containerName": "app",
                 "location": {"uri": "file:///w/app.rs", "range": range(11, 0, 13, 1)}}
            ]),
        )
    });
    let app = fx.file("app.rs", APP);
    let symbols = fx
        .intel
        .document_symbols(app.clone())
        .await
        .expect("symbols");
    let brief: Vec<(String, String, u32, Option<String>, u32)> = symbols
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.kind.clone(),
                s.depth,
                s.container.clone(),
                s.location.span.start.line,
            )
        })
        .collect();
    let own = |n: &str, k: &str, d: u32, c: Option<&str>, l: u32| {
        (n.to_owned(), k.to_owned(), d, c.map(str::to_owned), l)
    };
    assert_eq!(
        brief,
        vec![
            own("User", "class", 0, None, 0),
            own("name", "field", 1, Some("User"), 1),
            own("greet", "method", 1, Some("User"), 2),
            own("x", "variable", 2, Some("greet"), 3),
            own("main", "function", 0, Some("app"), 11),
        ]
    );
    assert_eq!(symbols[0].detail, None, "an empty detail is none");
    assert_eq!(symbols[2].detail.as_deref(), Some("fn(&self)"));
    assert_eq!(symbols[4].location.path, PathBuf::from("/w/app.rs"));
}

#[tokio::test]
async fn workspace_symbols_read_both_forms() {
    let fx = fixture(PositionEncoding::Utf16, |_, params| {
        assert_eq!(params, &json!({"query": "Use"}));
        servers(
            1,
            json!([
                {"name": "User", "kind": 23, "location": {"uri": "file:///w/m.rs",
                 "range": range(2, 0, 5, 1)}},
                {"name": "use_it", "kind": 12, "containerName": "m",
                 "location": {"uri": "file:///w/n.rs"}}
            ]),
        )
    });
    let symbols = fx
        .intel
        .workspace_symbols("Use".into(), None)
        .await
        .expect("symbols");
    assert_eq!(
        symbols,
        vec![
            Symbol {
                name: "User".into(),
                kind: "struct".into(),
                detail: None,
                location: Location {
                    path: "/w/m.rs".into(),
                    span: span(2, 0, 5, 1),
                },
                container: None,
                depth: 0,
            },
            Symbol {
                name: "use_it".into(),
                kind: "function".into(),
                detail: None,
                location: Location {
                    path: "/w/n.rs".into(),
                    span: Span::default(),
                },
                container: Some("m".into()),
                depth: 0,
            },
        ]
    );
}

#[tokio::test]
async fn hover_contents_of_every_shape_become_text() {
    let answers = [
        (json!(null), None),
        (
            json!({"contents": {"kind": "markdown", "value": "**x**: u32"}}),
            Some("**x**: u32"),
        ),
        (json!({"contents": "plain"}), Some("plain")),
        (
            json!({"contents": [{"language": "rust", "value": "fn f()"}, "", "docs"]}),
            Some("```rust\nfn f()\n```\n\ndocs"),
        ),
        (
            json!({"contents": {"kind": "plaintext", "value": "  "}}),
            None,
        ),
    ];
    for (result, want) in answers {
        let given = result.clone();
        let fx = fixture(PositionEncoding::Utf16, move |_, _| {
            servers(1, given.clone())
        });
        let app = fx.file("app.rs", APP);
        let text = fx.intel.hover(app, Pos::default()).await.expect("hover");
        assert_eq!(text.as_deref(), want, "{result}");
    }
}

#[tokio::test]
async fn a_rename_becomes_each_files_edits_in_utf16() {
    let fx = fixture(PositionEncoding::Utf8, |_, _| Reply::Hang);
    let app = fx.open("app.rs", APP);
    let lib = fx.file("lib.rs", "fn naïve() {}\nfn naïve2() { naïve() }\n");
    let (app_uri, lib_uri) = (uri(&app.path), uri(&lib.path));
    let fx = fx.answering(move |_, params| {
        assert_eq!(params["newName"], "simple");
        servers(
            1,
            json!({"documentChanges": [
                {"textDocument": {"uri": lib_uri, "version": null}, "edits": [
                    {"range": range(1, 15, 1, 21), "newText": "simple"},
                    {"range": range(0, 3, 0, 9), "newText": "simple",
                     "annotationId": "rename"}]},
                {"textDocument": {"uri": app_uri, "version": 1}, "edits": [
                    {"range": range(1, 13, 1, 19), "newText": "simple"}]}],
             "changes": {"file:///ignored.rs": []}}),
        )
    });
    let edits = fx
        .intel
        .rename(
            app.clone(),
            Pos {
                line: 1,
                character: 13,
            },
            "simple".into(),
        )
        .await
        .expect("rename");
    let mut want = vec![
        FileEdits {
            path: app.path.clone(),
            // `naïve` after `é`: bytes 13..19, UTF-16 12..17.
            edits: vec![(span(1, 12, 1, 17), "simple".into())],
        },
        FileEdits {
            path: lib.path.clone(),
            edits: vec![
                (span(0, 3, 0, 8), "simple".into()),
                (span(1, 14, 1, 19), "simple".into()),
            ],
        },
    ];
    want.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(edits, want);
}

#[tokio::test]
async fn a_rename_that_moves_files_is_refused_and_a_null_one_is_empty() {
    let fx = fixture(PositionEncoding::Utf16, |_, params| {
        if params["newName"] == "moved" {
            servers(
                1,
                json!({"documentChanges": [{"kind": "rename", "oldUri": "file:///w/a.rs",
                    "newUri": "file:///w/b.rs"}]}),
            )
        } else {
            servers(1, Value::Null)
        }
    });
    let app = fx.file("app.rs", APP);
    let error = fx
        .intel
        .rename(app.clone(), Pos::default(), "moved".into())
        .await
        .expect_err("resource operation");
    assert!(
        error
            .to_string()
            .contains("renames file:///w/a.rs to file:///w/b.rs"),
        "{error}"
    );
    let edits = fx
        .intel
        .rename(app, Pos::default(), "same".into())
        .await
        .expect("null rename");
    assert!(edits.is_empty());
}

#[tokio::test]
async fn features_follow_what_the_client_declared() {
    let fx = fixture(PositionEncoding::Utf16, |_, _| Reply::Hang);
    assert_eq!(fx.intel.features(), tandem_coding::intel::Features::ALL);
    let only_diagnostics = Arc::new(Editor::new(|_, _| Reply::Hang).with_caps(EditCapabilities {
        diagnostics: true,
        ..EditCapabilities::default()
    }));
    let intel = EditorIntel::new(vec![fx.root.clone()], fx.store.clone(), only_diagnostics);
    let features = intel.features();
    assert!(features.diagnostics && !features.definition && !features.rename);
    assert!(
        EditorIntel::declared(
            vec![fx.root.clone()],
            fx.store.clone(),
            Arc::new(Editor::new(|_, _| Reply::Hang).with_caps(EditCapabilities::default())),
        )
        .is_none(),
        "a client that declared neither gets none"
    );
}

#[test]
fn the_answer_type_for_files_matches_the_protocol() {
    // The fake answers through the protocol's own types.
    let d: DocumentDiagnostics =
        serde_json::from_value(json!({"uri": "file:///a", "diagnostics": []})).expect("file");
    assert_eq!(d.generation, 0);
    assert_eq!(d.analyzed, None);
}
