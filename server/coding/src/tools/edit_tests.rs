use std::path::{Path, PathBuf};

use serde_json::json;
use tandem_agent::ToolUpdates;
use tandem_ai::UserBlock;
use tempfile::TempDir;

use super::*;
use crate::workspace::{ScriptedWorkspace, Workspace};

/// A temp workspace root with the edit tool over a scripted workspace.
struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    workspace: Arc<ScriptedWorkspace>,
    calls: Arc<crate::calls::CallRecords>,
    tool: EditTool,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical root");
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    let env = Arc::new(ToolEnv::new(workspace.clone() as Arc<dyn Workspace>, &root));
    Fixture {
        _dir: dir,
        root,
        workspace,
        calls: env.calls.clone(),
        tool: EditTool::new(env),
    }
}

impl Fixture {
    fn write(&self, name: &str, content: &str) -> PathBuf {
        let path = self.root.join(name);
        std::fs::write(&path, content).expect("write fixture file");
        path
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join(name)).expect("read file")
    }

    async fn edit(&self, path: &str, edits: &[(&str, &str)]) -> Result<ToolOutput, ToolError> {
        let edits: Vec<Value> = edits
            .iter()
            .map(|(old, new)| json!({"oldText": old, "newText": new}))
            .collect();
        self.tool
            .execute(invocation(json!({"path": path, "edits": edits})))
            .await
    }
}

fn invocation(args: Value) -> ToolInvocation {
    ToolInvocation {
        call_id: "call-1".into(),
        args,
        cancel: CancellationToken::new(),
        updates: ToolUpdates::discard(),
    }
}

fn text(output: &ToolOutput) -> &str {
    match output.content.first() {
        Some(UserBlock::Text(block)) => &block.text,
        other => panic!("expected a text block, got {other:?}"),
    }
}

fn error(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(e) => e.0,
        Ok(output) => panic!("expected an error, got {:?}", text(&output)),
    }
}

#[tokio::test]
async fn single_edit_reports_like_the_reference_session() {
    let f = fixture();
    let path = f.write("hello.txt", "hello world\nsecond line\n");
    let output = f
        .edit("hello.txt", &[("hello world", "hello there")])
        .await
        .expect("edit");
    assert_eq!(
        text(&output),
        "Successfully replaced 1 block(s) in hello.txt."
    );
    assert_eq!(
        output.details,
        Some(
            json!({"diff": "-1 hello world\n+1 hello there\n 2 second line", "firstChangedLine": 1})
        )
    );
    assert_eq!(f.read("hello.txt"), "hello there\nsecond line\n");
    assert_eq!(
        f.workspace.proposals(),
        vec![FileChange {
            real: path.clone(),
            path,
            old_text: Some("hello world\nsecond line\n".into()),
            new_text: "hello there\nsecond line\n".into(),
            edits: vec![TextEdit {
                range: 0..11,
                new_text: "hello there".into(),
            }],
        }]
    );
}

#[tokio::test]
async fn multiple_edits_apply_together_against_the_original() {
    let f = fixture();
    f.write("m.txt", "alpha\nbeta\ngamma\ndelta\n");
    let output = f
        .edit("m.txt", &[("delta", "DELTA"), ("alpha\nbeta", "AB")])
        .await
        .expect("edit");
    assert_eq!(text(&output), "Successfully replaced 2 block(s) in m.txt.");
    assert_eq!(f.read("m.txt"), "AB\ngamma\nDELTA\n");
    let proposal = &f.workspace.proposals()[0];
    let ranges: Vec<_> = proposal.edits.iter().map(|e| e.range.clone()).collect();
    assert_eq!(ranges, vec![0..10, 17..22]);
    assert_eq!(
        output.details,
        Some(
            json!({"diff": "-1 alpha\n-2 beta\n+1 AB\n 3 gamma\n-4 delta\n+3 DELTA", "firstChangedLine": 1})
        )
    );
}

/// Each fuzzy case of pi's test suite, plus untouched lines that hold the same kind of
/// character: they must come out byte for byte.
#[tokio::test]
async fn fuzzy_matches_replace_only_what_they_cover() {
    let cases: [(&str, &str, &str, &str); 7] = [
        (
            "keep   \nline one   \nline two  \nline three\n",
            "line one\nline two\n",
            "replaced\n",
            "keep   \nreplaced\nline three\n",
        ),
        (
            "s = \u{2018}x\u{2019};\nconsole.log(\u{2018}hello\u{2019});\n",
            "console.log('hello');",
            "console.log('world');",
            "s = \u{2018}x\u{2019};\nconsole.log('world');\n",
        ),
        (
            "const msg = \u{201C}Hello World\u{201D};\nt = \u{201C}t\u{201D}\n",
            "const msg = \"Hello World\";",
            "const msg = \"Goodbye\";",
            "const msg = \"Goodbye\";\nt = \u{201C}t\u{201D}\n",
        ),
        (
            "range: 1\u{2013}5\nbreak\u{2014}here\nother\u{2014}dash\n",
            "range: 1-5\nbreak-here",
            "range: 10-50\nbreak--here",
            "range: 10-50\nbreak--here\nother\u{2014}dash\n",
        ),
        (
            "hello\u{00A0}world\nkeep\u{00A0}this\n",
            "hello world",
            "hello universe",
            "hello universe\nkeep\u{00A0}this\n",
        ),
        (
            "ＡＢＣ１２３\ncafe\u{0301}\nＸＹＺ\n",
            "ABC123\ncafé\n",
            "XYZ789\ncoffee\n",
            "XYZ789\ncoffee\nＸＹＺ\n",
        ),
        (
            "你好，世界\n你好（世界）\n",
            "你好,世界\n你好(世界)\n",
            "你好，pi\n你好(pi)\n",
            "你好，pi\n你好(pi)\n",
        ),
    ];
    for (content, old, new, expected) in cases {
        let f = fixture();
        f.write("f.txt", content);
        let output = f.edit("f.txt", &[(old, new)]).await.expect("fuzzy edit");
        assert_eq!(text(&output), "Successfully replaced 1 block(s) in f.txt.");
        assert_eq!(f.read("f.txt"), expected, "editing {content:?}");
    }
}

#[tokio::test]
async fn exact_match_is_preferred() {
    let f = fixture();
    f.write("e.txt", "const x = 'exact';\nconst y = 'other';\n");
    f.edit("e.txt", &[("const x = 'exact';", "const x = 'changed';")])
        .await
        .expect("edit");
    assert_eq!(
        f.read("e.txt"),
        "const x = 'changed';\nconst y = 'other';\n"
    );
}

#[tokio::test]
async fn failures_use_pi_texts_and_change_nothing() {
    let f = fixture();
    f.write("f.txt", "foo foo foo\nbar\n");
    let cases: [(&[(&str, &str)], &str); 6] = [
        (&[("nope", "x")], "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."),
        (&[("foo", "x")], "Found 3 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."),
        (&[("", "x")], "oldText must not be empty in f.txt."),
        (&[("bar", "bar")], "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."),
        (&[("foo foo foo\nbar", "x"), ("foo\nbar", "y")], "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."),
        // One bad edit in a batch: nothing is applied, nothing is proposed.
        (&[("bar", "BAR"), ("missing", "x")], "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."),
    ];
    for (edits, expected) in cases {
        assert_eq!(error(f.edit("f.txt", edits).await), expected);
    }
    assert_eq!(f.read("f.txt"), "foo foo foo\nbar\n");
    assert!(f.workspace.proposals().is_empty());
}

#[tokio::test]
async fn input_errors() {
    let f = fixture();
    assert_eq!(
        error(f.edit("absent.txt", &[("a", "b")]).await),
        "Could not edit file: absent.txt. Error code: ENOENT."
    );
    f.write("f.txt", "x");
    let no_edits = f
        .tool
        .execute(invocation(json!({"path": "f.txt", "edits": []})))
        .await;
    assert_eq!(
        error(no_edits),
        "Edit tool input is invalid. edits must contain at least one replacement."
    );
}

#[tokio::test]
async fn crlf_files_stay_crlf_and_ranges_cover_the_raw_bytes() {
    let f = fixture();
    f.write("c.txt", "first\r\nsecond\r\nthird\r\n");
    f.edit("c.txt", &[("second\nthird", "two\nthree")])
        .await
        .expect("edit");
    assert_eq!(f.read("c.txt"), "first\r\ntwo\r\nthree\r\n");
    let proposal = &f.workspace.proposals()[0];
    assert_eq!(
        proposal.edits,
        vec![TextEdit {
            range: 7..20,
            new_text: "two\r\nthree".into(),
        }]
    );
    // pi's fixture: duplicates are found across CRLF and LF lines.
    f.write("d.txt", "hello\r\nworld\r\n---\r\nhello\nworld\n");
    assert_eq!(
        error(f.edit("d.txt", &[("hello\nworld\n", "replaced\n")]).await),
        "Found 2 occurrences of the text in d.txt. The text must be unique. Please provide more context to make it unique."
    );
}

#[tokio::test]
async fn a_bom_is_kept_and_counted_in_the_ranges() {
    let f = fixture();
    f.write("b.txt", "\u{FEFF}first\r\nsecond\r\nthird\r\n");
    f.edit("b.txt", &[("second\n", "REPLACED\n")])
        .await
        .expect("edit");
    assert_eq!(f.read("b.txt"), "\u{FEFF}first\r\nREPLACED\r\nthird\r\n");
    let proposal = &f.workspace.proposals()[0];
    assert_eq!(
        proposal.old_text.as_deref(),
        Some("\u{FEFF}first\r\nsecond\r\nthird\r\n")
    );
    assert_eq!(proposal.edits[0].range, 10..18);
}

#[tokio::test]
async fn details_number_lines_like_pi() {
    let f = fixture();
    let content: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    f.write("n.txt", &content);
    let output = f
        .edit("n.txt", &[("line 2\n", "two\n"), ("line 25\n", "")])
        .await
        .expect("edit");
    assert_eq!(
        output.details,
        Some(json!({
            "diff": "  1 line 1\n- 2 line 2\n+ 2 two\n  3 line 3\n  4 line 4\n  5 line 5\n  6 line 6\n    ...\n 21 line 21\n 22 line 22\n 23 line 23\n 24 line 24\n-25 line 25\n 26 line 26\n 27 line 27\n 28 line 28\n 29 line 29\n    ...",
            "firstChangedLine": 2
        }))
    );
}

#[tokio::test]
async fn a_rejected_edit_changes_nothing() {
    let f = fixture();
    f.write("r.txt", "keep me\n");
    f.workspace.answer_changes([
        ChangeOutcome::Rejected {
            reason: Some("not now".into()),
        },
        ChangeOutcome::Rejected { reason: None },
    ]);
    assert_eq!(
        error(f.edit("r.txt", &[("keep", "drop")]).await),
        "The user rejected the edit to r.txt: not now"
    );
    assert_eq!(
        error(f.edit("r.txt", &[("keep", "drop")]).await),
        "The user rejected the edit to r.txt"
    );
    assert_eq!(f.read("r.txt"), "keep me\n");
    assert_eq!(f.workspace.proposals().len(), 2);
}

#[tokio::test]
async fn every_argument_form_records_its_change_with_the_files_line_numbers() {
    let f = fixture();
    let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let forms = [
        json!({"path": "n.txt", "edits": [{"oldText": "line 20\n", "newText": "twenty\n"}]}),
        json!({"path": "n.txt", "edits": "[{\"oldText\":\"line 20\\n\",\"newText\":\"twenty\\n\"}]"}),
        json!({"path": "n.txt", "oldText": "line 20\n", "newText": "twenty\n"}),
    ];
    // Applied or rejected, the record is the same.
    f.workspace
        .answer_changes([ChangeOutcome::Rejected { reason: None }]);
    for args in forms {
        f.write("n.txt", &text);
        let args = f.tool.prepare_arguments(args);
        let _ = f.tool.execute(invocation(args)).await;
        let change = f
            .calls
            .take("call-1")
            .and_then(|r| r.change)
            .expect("a recorded change");
        assert_eq!(change.path, f.root.join("n.txt"));
        assert_eq!(change.old_text.as_deref(), Some(text.as_str()));
        assert!(
            change
                .diff
                .starts_with("--- a/n.txt\n+++ b/n.txt\n@@ -17,7 +17,7 @@\n"),
            "{}",
            change.diff
        );
        assert!(
            change.diff.contains("-line 20\n+twenty\n"),
            "{}",
            change.diff
        );
    }
}

#[tokio::test]
async fn an_unsaved_buffer_wins_over_disk() {
    let f = fixture();
    let path = f.write("u.txt", "on disk\n");
    f.workspace.open_buffer(&path, "in the editor\n");
    f.edit("u.txt", &[("editor", "buffer")])
        .await
        .expect("edit");
    assert_eq!(
        f.workspace.buffer(&path).as_deref(),
        Some("in the buffer\n")
    );
    assert_eq!(f.read("u.txt"), "on disk\n");
    let proposal = &f.workspace.proposals()[0];
    assert_eq!(proposal.old_text.as_deref(), Some("in the editor\n"));
    assert_eq!(proposal.edits[0].range, 7..13);
}

/// Changes the file on disk just before proposing, as another program might.
struct RacingWorkspace(ScriptedWorkspace);

impl Workspace for RacingWorkspace {
    fn roots(&self) -> &[PathBuf] {
        self.0.roots()
    }
    fn read<'a>(
        &'a self,
        path: &'a Path,
    ) -> BoxFuture<'a, Result<crate::FileContent, WorkspaceError>> {
        self.0.read(path)
    }
    fn propose<'a>(
        &'a self,
        call: &'a str,
        change: FileChange,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        let _ = std::fs::write(&change.path, "changed underneath\n");
        self.0.propose(call, change)
    }
    fn ask_permission<'a>(
        &'a self,
        call: &'a str,
        request: crate::PermissionRequest,
    ) -> BoxFuture<'a, crate::PermissionDecision> {
        self.0.ask_permission(call, request)
    }
}

#[tokio::test]
async fn a_conflict_is_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    let path = root.join("race.txt");
    std::fs::write(&path, "original\n").expect("write");
    let workspace = Arc::new(RacingWorkspace(ScriptedWorkspace::new(&root)));
    let tool = EditTool::new(Arc::new(ToolEnv::new(workspace, &root)));
    let args = json!({"path": "race.txt", "edits": [{"oldText": "original", "newText": "mine"}]});
    assert_eq!(
        error(tool.execute(invocation(args)).await),
        format!(
            "{} changed since it was read; read it again before editing",
            path.display()
        )
    );
}

#[tokio::test]
async fn an_aborted_run_does_not_edit() {
    let f = fixture();
    f.write("a.txt", "text\n");
    let call =
        invocation(json!({"path": "a.txt", "edits": [{"oldText": "text", "newText": "new"}]}));
    call.cancel.cancel();
    assert_eq!(error(f.tool.execute(call).await), "Operation aborted");
    assert_eq!(f.read("a.txt"), "text\n");
}

#[test]
fn older_argument_shapes_are_accepted() {
    let f = fixture();
    assert_eq!(
        f.tool
            .prepare_arguments(json!({"path": "p", "oldText": "a", "newText": "b"})),
        json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]})
    );
    assert_eq!(
        f.tool.prepare_arguments(
            json!({"path": "p", "edits": "[{\"oldText\":\"a\",\"newText\":\"b\"}]"})
        ),
        json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]})
    );
    let current = json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]});
    assert_eq!(f.tool.prepare_arguments(current.clone()), current);
}

fn markers(count: usize) -> String {
    (0..count).map(|i| format!("marker {i}\n")).collect()
}

/// Edits of one file queue in arrival order: each proposal is computed against the text the
/// previous one produced.
#[tokio::test]
async fn edits_of_one_file_apply_in_arrival_order() {
    let f = fixture();
    let path = f.write("q.txt", &markers(20));
    let env = f.tool.env.clone();
    let held = env.mutations.lock(&path).await;
    let mut calls: Vec<_> = (0..20)
        .map(|i| {
            let args = json!({"path": "q.txt", "edits": [{"oldText": format!("marker {i}\n"), "newText": format!("done {i}\n")}]});
            f.tool.execute(invocation(args))
        })
        .collect();
    // Poll each once, in order, so each joins the file's queue behind the previous one.
    for call in calls.iter_mut() {
        assert!(futures_util::poll!(call.as_mut()).is_pending());
    }
    drop(held);
    for result in futures_util::future::join_all(calls).await {
        result.expect("edit");
    }
    let proposals = f.workspace.proposals();
    assert_eq!(proposals.len(), 20);
    for (i, proposal) in proposals.iter().enumerate() {
        let expected: String = (0..20)
            .map(|j| {
                if j <= i {
                    format!("done {j}\n")
                } else {
                    format!("marker {j}\n")
                }
            })
            .collect();
        assert_eq!(proposal.new_text, expected, "proposal {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_of_one_file_all_land() {
    let f = fixture();
    f.write("c.txt", &markers(20));
    let tool = Arc::new(f.tool);
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let tool = tool.clone();
            tokio::spawn(async move {
                let args = json!({"path": "c.txt", "edits": [{"oldText": format!("marker {i}\n"), "newText": format!("done {i}\n")}]});
                tool.execute(invocation(args)).await
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task").expect("edit");
    }
    let expected: String = (0..20).map(|i| format!("done {i}\n")).collect();
    assert_eq!(
        std::fs::read_to_string(f.root.join("c.txt")).expect("read"),
        expected
    );
}
