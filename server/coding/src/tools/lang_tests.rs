use std::path::{Path, PathBuf};

use serde_json::json;
use tandem_ai::UserBlock;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::intel::{
    Diagnostic, FileEdits, IntelError, Location, Pos, ScriptedIntel, Severity, Span, Symbol,
};
use crate::settings::{DiagnosticsConfig, DiagnosticsSettings};
use crate::workspace::{PermissionDecision, ScriptedWorkspace, Workspace};

struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    workspace: Arc<ScriptedWorkspace>,
    intel: Arc<ScriptedIntel>,
    env: Arc<ToolEnv>,
}

fn fixture(intel: ScriptedIntel) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical root");
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    let intel = Arc::new(intel);
    let env = Arc::new(
        ToolEnv::new(workspace.clone() as Arc<dyn Workspace>, &root).with_intel(
            Some(intel.clone() as Arc<dyn LanguageIntel>),
            DiagnosticsSettings {
                settle_ms: Some(200),
                ..Default::default()
            }
            .config(),
        ),
    );
    Fixture {
        _dir: dir,
        root,
        workspace,
        intel,
        env,
    }
}

impl Fixture {
    /// The same folder and workspace, answered by `intel` under `config`.
    fn with(self, intel: ScriptedIntel, config: DiagnosticsConfig) -> Fixture {
        let intel = Arc::new(intel);
        let env = Arc::new(
            ToolEnv::new(self.workspace.clone() as Arc<dyn Workspace>, &self.root)
                .with_intel(Some(intel.clone() as Arc<dyn LanguageIntel>), config),
        );
        Fixture { env, intel, ..self }
    }

    fn write(&self, name: &str, content: &str) -> PathBuf {
        let path = self.root.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(&path, content).expect("write fixture file");
        path
    }

    async fn call(&self, tool: &str, args: serde_json::Value) -> Result<String, ToolError> {
        let tool = crate::tools::tool(&self.env, tool).expect("a built-in tool");
        let output = tool
            .execute(ToolInvocation {
                call_id: "call-1".into(),
                args,
                cancel: CancellationToken::new(),
                updates: tandem_agent::ToolUpdates::discard(),
            })
            .await?;
        Ok(output
            .content
            .iter()
            .filter_map(|b| match b {
                UserBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

fn span(line: u32, from: u32, to: u32) -> Span {
    Span {
        start: Pos {
            line,
            character: from,
        },
        end: Pos {
            line,
            character: to,
        },
    }
}

fn at(path: &Path, line: u32, from: u32, to: u32) -> Location {
    Location {
        path: path.to_path_buf(),
        span: span(line, from, to),
    }
}

#[tokio::test]
async fn definition_takes_the_models_line_and_column_and_quotes_the_target() {
    let f = fixture(ScriptedIntel::default());
    let models = f.write("pkg/models.py", "\nclass User:\n    pass\n");
    // A user's unsaved buffer wins over disk: non-ASCII before the symbol.
    let app = f.write("app.py", "");
    f.workspace
        .open_buffer(&app, "import pkg\n# é𝄞\nu = «User»()\n");
    let f = f.with(
        ScriptedIntel::default().with_definition(vec![
            at(&models, 1, 6, 10),
            at(&models, 1, 6, 10),
            at(Path::new("/usr/lib/stubs/builtins.pyi"), 40, 2, 5),
        ]),
        Default::default(),
    );
    let out = f
        .call(
            "definition",
            json!({"path": "app.py", "line": 3, "column": 6}),
        )
        .await
        .expect("definition");
    // Column 6 (characters) is UTF-16 unit 5 ("u = «" is 5 units).
    assert_eq!(
        f.intel.asked(),
        vec![format!("definition {} 2:5", app.display())]
    );
    assert_eq!(
        out, "pkg/models.py:2:7: class User:\n/usr/lib/stubs/builtins.pyi:41:3",
        "deduplicated, quoted inside the workspace only"
    );
    let past = f
        .call(
            "definition",
            json!({"path": "app.py", "line": 9, "column": 1}),
        )
        .await
        .expect_err("past the end");
    assert!(
        past.0.contains("Line 9 is past the end of app.py"),
        "{}",
        past.0
    );
}

#[tokio::test]
async fn references_hover_and_symbols_are_compact_text() {
    let dir_intel = ScriptedIntel::default();
    let f = fixture(dir_intel);
    let a = f.write("a.py", "def greet():\n    return 1\n\ngreet()\n");
    let b = f.write("b.py", "from a import greet\ngreet()\n");
    let symbols = vec![
        Symbol {
            name: "Greeter".into(),
            kind: "class".into(),
            detail: None,
            location: at(&a, 0, 0, 5),
            container: None,
            depth: 0,
        },
        Symbol {
            name: "greet".into(),
            kind: "method".into(),
            detail: Some("(self) -> int".into()),
            location: at(&a, 1, 4, 9),
            container: Some("Greeter".into()),
            depth: 1,
        },
    ];
    let intel = ScriptedIntel::default()
        .with_references(vec![at(&a, 3, 0, 5), at(&b, 0, 14, 19), at(&b, 1, 0, 5)])
        .with_hover("```python\ndef greet() -> int\n```")
        .with_symbols(symbols);
    let f = f.with(intel, Default::default());
    let out = f
        .call(
            "references",
            json!({"path": "a.py", "line": 1, "column": 5}),
        )
        .await
        .expect("references");
    assert_eq!(
        out,
        "3 references in 2 files:\na.py:4:1: greet()\nb.py:1:15: from a import greet\nb.py:2:1: greet()"
    );
    let out = f
        .call("hover", json!({"path": "a.py", "line": 1, "column": 5}))
        .await
        .expect("hover");
    assert_eq!(out, "```python\ndef greet() -> int\n```");
    let out = f
        .call("symbols", json!({"path": "a.py"}))
        .await
        .expect("outline");
    assert_eq!(
        out,
        "a.py:\n1: class Greeter\n  2: method greet — (self) -> int"
    );
    let out = f
        .call("symbols", json!({"query": "gre"}))
        .await
        .expect("workspace symbols");
    assert_eq!(
        out,
        "class Greeter: a.py:1\nmethod greet (in Greeter): a.py:2"
    );
    let none = f.call("symbols", json!({})).await.expect_err("needs one");
    assert!(none.0.contains("needs a path"), "{}", none.0);
}

#[tokio::test]
async fn a_failing_source_fails_the_tool_with_its_words() {
    let f = fixture(ScriptedIntel::default().failing(IntelError::Failed(
        "the editor did not answer within 10 s".into(),
    )));
    f.write("a.py", "x = 1\n");
    let err = f
        .call("hover", json!({"path": "a.py", "line": 1, "column": 1}))
        .await
        .expect_err("failed");
    assert_eq!(
        err.0,
        "Hover failed (the scripted source): the editor did not answer within 10 s"
    );
    let f = fixture(ScriptedIntel::default().failing(IntelError::NoServer {
        path: "/w/a.xyz".into(),
        hint: Some("configure one in settings.json `languageServers`".into()),
    }));
    f.write("a.py", "x = 1\n");
    let err = f
        .call(
            "definition",
            json!({"path": "a.py", "line": 1, "column": 1}),
        )
        .await
        .expect_err("no server");
    assert!(
        err.0
            .contains("no language server handles /w/a.xyz (configure one"),
        "{}",
        err.0
    );
}

fn type_errors(document: &crate::intel::Document) -> Option<Vec<Diagnostic>> {
    if document.path.extension().is_none_or(|e| e != "py") {
        return None;
    }
    Some(
        document
            .text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("nme"))
            .map(|(i, l)| Diagnostic {
                span: span(i as u32, l.find("nme").unwrap_or(0) as u32, 0),
                severity: Severity::Error,
                source: Some("Pyright".into()),
                code: Some("reportAttributeAccessIssue".into()),
                message: "Cannot access attribute \"nme\"".into(),
            })
            .collect(),
    )
}

#[tokio::test]
async fn an_applied_edit_ends_with_the_diagnostics_it_introduced_and_fixed() {
    let f = fixture(ScriptedIntel::default().with_diagnostics(type_errors));
    f.write("app.py", "def f(u):\n    return u.name\n");
    let out = f
        .call(
            "edit",
            json!({"path": "app.py", "edits": [{"oldText": "u.name", "newText": "u.nme"}]}),
        )
        .await
        .expect("edit");
    assert_eq!(
        out,
        "Successfully replaced 1 block(s) in app.py.\n\n\
         New diagnostics in app.py after this change, from the scripted source:\n\
         app.py:2:14: error [Pyright reportAttributeAccessIssue] Cannot access attribute \"nme\""
    );
    let app = f.root.join("app.py");
    assert_eq!(
        f.intel.asked(),
        vec![
            format!("diagnostics {}", app.display()),
            format!("diagnostics {} (settle)", app.display())
        ]
    );
    let out = f
        .call(
            "edit",
            json!({"path": "app.py", "edits": [{"oldText": "u.nme", "newText": "u.name"}]}),
        )
        .await
        .expect("edit");
    assert!(
        out.ends_with(
            "No new errors or warnings in app.py (none in the file).\n\
             Fixed by this change (1): error [Pyright reportAttributeAccessIssue] Cannot access attribute \"nme\""
        ),
        "{out}"
    );
    // A file no language server looks at: no report, no settle wait.
    f.write("notes.txt", "a\n");
    let out = f
        .call("write", json!({"path": "notes.txt", "content": "b\n"}))
        .await
        .expect("write");
    assert_eq!(out, "Successfully wrote 2 bytes to notes.txt");
    assert!(!f
        .intel
        .asked()
        .iter()
        .any(|a| a.contains("notes.txt (settle)")));
    // A rejected edit gets no report.
    f.workspace
        .answer_changes([crate::workspace::ChangeOutcome::Rejected { reason: None }]);
    let asked = f.intel.asked().len();
    f.call(
        "edit",
        json!({"path": "app.py", "edits": [{"oldText": "u.name", "newText": "u.nme"}]}),
    )
    .await
    .expect_err("rejected");
    assert_eq!(f.intel.asked().len(), asked + 1, "only the reading before");
}

#[tokio::test]
async fn diagnostics_that_cannot_be_read_are_said_after_the_edit() {
    let f = fixture(
        ScriptedIntel::default().failing(IntelError::Failed("ruff exited with status 3".into())),
    );
    f.write("app.py", "x = 1\n");
    let out = f
        .call(
            "edit",
            json!({"path": "app.py", "edits": [{"oldText": "1", "newText": "2"}]}),
        )
        .await
        .expect("the edit itself succeeds");
    assert!(
        out.ends_with(
            "The diagnostics of app.py could not be read after this change: ruff exited with status 3."
        ),
        "{out}"
    );
}

#[tokio::test]
async fn the_diagnostics_tool_lists_a_file_or_a_folder() {
    let f = fixture(ScriptedIntel::default().with_diagnostics(type_errors));
    f.write("src/app.py", "print(u.nme)\nprint(v.nme)\n");
    let out = f
        .call("diagnostics", json!({"path": "src/app.py"}))
        .await
        .expect("diagnostics");
    assert_eq!(
        out,
        "2 errors, 0 warnings in 1 file (from the scripted source):\n\
         src/app.py:1:9: error [Pyright reportAttributeAccessIssue] Cannot access attribute \"nme\"\n\
         src/app.py:2:9: error [Pyright reportAttributeAccessIssue] Cannot access attribute \"nme\""
    );
    f.write("notes.txt", "nme\n");
    let out = f
        .call("diagnostics", json!({"path": "notes.txt"}))
        .await
        .expect("diagnostics");
    assert_eq!(
        out,
        "No errors or warnings in notes.txt (from the scripted source). No language server looks at notes.txt."
    );
    let bad = f
        .call("diagnostics", json!({"severity": "fatal"}))
        .await
        .expect_err("bad severity");
    assert!(bad.0.contains("severity must be"), "{}", bad.0);

    // Servers still analyzing: the model is told the list may be incomplete.
    let busy = fixture(
        ScriptedIntel::default()
            .with_diagnostics(type_errors)
            .unsettled(),
    );
    busy.write("app.py", "print(u.nme)\n");
    let out = busy
        .call("diagnostics", json!({"path": "app.py"}))
        .await
        .expect("diagnostics");
    assert!(
        out.starts_with(
            "1 error, 0 warnings in 1 file (from the scripted source):\n(The language servers \
             had not finished analyzing: this may be incomplete; ask again in a moment.)\n\
             app.py:1:9: error"
        ),
        "{out}"
    );
}

#[tokio::test]
async fn rename_proposes_every_file_as_one_set_and_checks_each_path() {
    let f = fixture(ScriptedIntel::default());
    let a = f.write("a.py", "def greet():\n    pass\ngreet()\n");
    let b = f.write("b.py", "from a import greet\n");
    let outside = tempfile::tempdir().expect("outside");
    let c = outside.path().join("c.py");
    std::fs::write(&c, "greet()\n").expect("outside file");
    let c = std::fs::canonicalize(&c).expect("canonical");
    let edits = |with_outside: bool| {
        let mut files = vec![
            FileEdits {
                path: a.clone(),
                edits: vec![
                    (span(0, 4, 9), "salute".into()),
                    (span(2, 0, 5), "salute".into()),
                ],
            },
            FileEdits {
                path: b.clone(),
                edits: vec![(span(0, 14, 19), "salute".into())],
            },
        ];
        if with_outside {
            files.push(FileEdits {
                path: c.clone(),
                edits: vec![(span(0, 0, 5), "salute".into())],
            });
        }
        files
    };
    let f = f.with(
        ScriptedIntel::default().with_rename(edits(false)),
        Default::default(),
    );
    let out = f
        .call(
            "rename",
            json!({"path": "a.py", "line": 1, "column": 6, "newName": "salute"}),
        )
        .await
        .expect("rename");
    assert_eq!(
        out,
        "Renamed `greet` to `salute`: 3 edits in 2 files (a.py, b.py)."
    );
    assert_eq!(
        std::fs::read_to_string(&a).expect("a"),
        "def salute():\n    pass\nsalute()\n"
    );
    assert_eq!(
        std::fs::read_to_string(&b).expect("b"),
        "from a import salute\n"
    );
    // The applied changes are the run's checkpoint (undo).
    assert_eq!(f.env.calls.take_applied().len(), 2);

    // A file outside the workspace is asked about; refused → nothing changes anywhere.
    std::fs::write(&a, "def greet():\n    pass\ngreet()\n").expect("reset");
    std::fs::write(&b, "from a import greet\n").expect("reset");
    let f = f.with(
        ScriptedIntel::default().with_rename(edits(true)),
        Default::default(),
    );
    f.workspace
        .answer_permissions([PermissionDecision::Reject { reason: None }]);
    let err = f
        .call(
            "rename",
            json!({"path": "a.py", "line": 1, "column": 6, "newName": "salute"}),
        )
        .await
        .expect_err("outside refused");
    assert!(err.0.contains("outside the workspace"), "{}", err.0);
    assert_eq!(
        std::fs::read_to_string(&b).expect("b"),
        "from a import greet\n"
    );
    assert_eq!(std::fs::read_to_string(&c).expect("c"), "greet()\n");

    // Edits computed on another text than the one here are refused.
    f.workspace.open_buffer(&b, "from a import gr_et\n");
    let f = f.with(
        ScriptedIntel::default().with_rename(edits(false)),
        Default::default(),
    );
    let err = f
        .call(
            "rename",
            json!({"path": "a.py", "line": 1, "column": 6, "newName": "salute"}),
        )
        .await
        .expect_err("stale view");
    assert!(err.0.contains("differs from the text here"), "{}", err.0);
    assert_eq!(
        std::fs::read_to_string(&a).expect("a"),
        "def greet():\n    pass\ngreet()\n"
    );
}

#[test]
fn language_tools_are_offered_by_feature() {
    use crate::intel::Features;
    assert!(crate::tools::language_tools(Features::default()).is_empty());
    assert_eq!(
        crate::tools::language_tools(Features {
            diagnostics: true,
            rename: true,
            ..Features::default()
        }),
        vec!["diagnostics", "rename"]
    );
    assert_eq!(crate::tools::language_tools(Features::ALL).len(), 6);
}

#[tokio::test]
async fn reading_a_file_gets_its_language_servers_ready() {
    let f = fixture(ScriptedIntel::default());
    let path = f.write("a.py", "x = 1\n");
    f.call("read", json!({"path": "a.py"})).await.expect("read");
    // Spawned: it runs beside the read, which does not wait for it.
    for _ in 0..200 {
        if !f.intel.asked().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(f.intel.asked(), [format!("prepare {}", path.display())]);

    // Not when reports after edits are off: nothing would use it.
    let quiet = fixture(ScriptedIntel::default()).with(
        ScriptedIntel::default(),
        DiagnosticsSettings {
            after_edit: Some(false),
            ..Default::default()
        }
        .config(),
    );
    quiet.write("a.py", "x = 1\n");
    quiet
        .call("read", json!({"path": "a.py"}))
        .await
        .expect("read");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(quiet.intel.asked().is_empty(), "{:?}", quiet.intel.asked());
}
