//! Behaviour of the `grep` tool against pi's texts, on small trees in temp dirs.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, ToolError, ToolInvocation, ToolUpdates};
use tandem_ai::UserBlock;
use tokio_util::sync::CancellationToken;

use super::GrepTool;
use crate::env::ToolEnv;
use crate::workspace::ScriptedWorkspace;

struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        Tree {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn root(&self) -> std::path::PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("canonical temp dir")
    }

    fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> &Self {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, content).expect("write");
        self
    }

    fn git(&self) -> &Self {
        std::fs::create_dir_all(self.root().join(".git")).expect("mkdir .git");
        self
    }

    async fn grep(&self, args: Value) -> Result<(String, Option<Value>), ToolError> {
        grep_in(&self.root(), args, CancellationToken::new()).await
    }

    async fn text(&self, args: Value) -> String {
        self.grep(args).await.expect("grep succeeds").0
    }
}

async fn grep_in(
    root: &Path,
    args: Value,
    cancel: CancellationToken,
) -> Result<(String, Option<Value>), ToolError> {
    let workspace = Arc::new(ScriptedWorkspace::new(root));
    let tool = GrepTool::new(Arc::new(ToolEnv::new(workspace, root)));
    let out = tool
        .execute(ToolInvocation {
            call_id: "call".into(),
            args,
            cancel,
            updates: ToolUpdates::discard(),
        })
        .await?;
    let text = match out.content.first() {
        Some(UserBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    };
    Ok((text, out.details))
}

#[tokio::test]
async fn matches_are_listed_by_path_then_line() {
    let tree = Tree::new();
    tree.file("b.txt", "hello there\n")
        .file("a.txt", "hello\nworld\nsay hello again\n")
        .file("src/deep/c.rs", "// hello from rust\n");
    let out = tree.grep(json!({"pattern": "hel+o"})).await.expect("grep");
    assert_eq!(
        out.0,
        "a.txt:1: hello\na.txt:3: say hello again\nb.txt:1: hello there\n\
         src/deep/c.rs:1: // hello from rust"
    );
    assert_eq!(out.1, None);
    assert_eq!(
        tree.text(json!({"pattern": "absent"})).await,
        "No matches found"
    );
}

#[tokio::test]
async fn ignore_case_and_literal_patterns() {
    let tree = Tree::new();
    tree.file("a.txt", "Hello\nHELLO\nhello\ncall(a.b)\ncall(axb)\n");
    assert_eq!(
        tree.text(json!({"pattern": "hello"})).await,
        "a.txt:3: hello"
    );
    assert_eq!(
        tree.text(json!({"pattern": "hello", "ignoreCase": true}))
            .await,
        "a.txt:1: Hello\na.txt:2: HELLO\na.txt:3: hello"
    );
    assert_eq!(
        tree.text(json!({"pattern": "call(a.b", "literal": true}))
            .await,
        "a.txt:4: call(a.b)"
    );
    assert_eq!(
        tree.text(json!({"pattern": "a.b)", "literal": true})).await,
        "a.txt:4: call(a.b)"
    );
    let err = tree
        .grep(json!({"pattern": "call(a.b"}))
        .await
        .expect_err("invalid regex");
    assert!(err.0.starts_with("regex parse error:"), "{err}");
    assert!(err.0.contains("unclosed group"), "{err}");
    assert!(err
        .0
        .ends_with("Set literal=true to search for the pattern as plain text."));
}

#[tokio::test]
async fn glob_filters_files_like_rg() {
    let tree = Tree::new();
    tree.file("top.rs", "needle\n")
        .file("top.txt", "needle\n")
        .file("src/lib.rs", "needle\n")
        .file("src/util/mod.rs", "needle\n")
        .file("src/a.spec.ts", "needle\n");
    assert_eq!(
        tree.text(json!({"pattern": "needle", "glob": "*.rs"}))
            .await,
        "src/lib.rs:1: needle\nsrc/util/mod.rs:1: needle\ntop.rs:1: needle"
    );
    assert_eq!(
        tree.text(json!({"pattern": "needle", "glob": "**/*.spec.ts"}))
            .await,
        "src/a.spec.ts:1: needle"
    );
    assert_eq!(
        tree.text(json!({"pattern": "needle", "glob": "!*.rs"}))
            .await,
        "src/a.spec.ts:1: needle\ntop.txt:1: needle"
    );
    let err = tree
        .grep(json!({"pattern": "needle", "glob": "[oops"}))
        .await
        .expect_err("bad glob");
    assert!(err.0.contains("error parsing glob '[oops'"), "{err}");
}

#[tokio::test]
async fn context_lines_repeat_where_windows_overlap() {
    let tree = Tree::new();
    tree.file(
        "c.txt",
        "one\nmatch two\nthree\nmatch four\nfive\nsix\nseven\n",
    );
    assert_eq!(
        tree.text(json!({"pattern": "match", "context": 1})).await,
        "c.txt-1- one\nc.txt:2: match two\nc.txt-3- three\n\
         c.txt-3- three\nc.txt:4: match four\nc.txt-5- five"
    );
    // Like pi: the file's final newline makes an empty last line that context can show.
    assert_eq!(
        tree.text(json!({"pattern": "seven", "context": 2})).await,
        "c.txt-5- five\nc.txt-6- six\nc.txt:7: seven\nc.txt-8- "
    );
    tree.file("crlf.txt", "a\r\nhit\r\nb\r\n");
    assert_eq!(
        tree.text(json!({"pattern": "hit", "path": "crlf.txt", "context": 1}))
            .await,
        "crlf.txt-1- a\ncrlf.txt:2: hit\ncrlf.txt-3- b"
    );
}

#[tokio::test]
async fn limit_notice_and_details() {
    let tree = Tree::new();
    tree.file("l.txt", "x1\nx2\nx3\nx4\nx5\n");
    let (text, details) = tree
        .grep(json!({"pattern": "x", "limit": 2}))
        .await
        .expect("grep");
    assert_eq!(
        text,
        "l.txt:1: x1\nl.txt:2: x2\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(details, Some(json!({"matchLimitReached": 2})));
    // pi's own test: limit and context together.
    tree.file(
        "context.txt",
        "before\nmatch one\nafter\nmiddle\nmatch two\nafter two",
    );
    assert_eq!(
        tree.text(json!({"pattern": "match", "path": "context.txt", "limit": 1, "context": 1}))
            .await,
        "context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\n\n\
         [1 matches limit reached. Use limit=2 for more, or refine pattern]"
    );
}

#[tokio::test]
async fn limit_stops_the_walk_across_files() {
    let tree = Tree::new();
    for i in 0..40 {
        tree.file(&format!("f{i:02}.txt"), "hit\nhit\n");
    }
    let text = tree.text(json!({"pattern": "hit", "limit": 7})).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9, "{text}");
    assert!(lines[..7].iter().all(|l| l.ends_with(": hit")));
    assert_eq!(
        lines[8],
        "[7 matches limit reached. Use limit=14 for more, or refine pattern]"
    );
}

#[tokio::test]
async fn long_lines_are_cut_with_a_notice() {
    let tree = Tree::new();
    tree.file("long.txt", format!("{}\nshort\n", "y".repeat(600)));
    let (text, details) = tree.grep(json!({"pattern": "y"})).await.expect("grep");
    assert_eq!(
        text,
        format!(
            "long.txt:1: {}... [truncated]\n\n\
             [Some lines truncated to 500 chars. Use read tool to see full lines]",
            "y".repeat(500)
        )
    );
    assert_eq!(details, Some(json!({"linesTruncated": true})));
}

#[tokio::test]
async fn output_is_cut_at_50kb() {
    let tree = Tree::new();
    let body: String = (0..300)
        .map(|i| format!("{i:03} {}\n", "z".repeat(400)))
        .collect();
    tree.file("big.txt", body);
    let (text, details) = tree
        .grep(json!({"pattern": "z", "limit": 1000}))
        .await
        .expect("grep");
    let (kept, notice) = text.rsplit_once("\n\n").expect("notice");
    assert_eq!(notice, "[50.0KB limit reached]");
    assert!(kept.len() <= 50 * 1024);
    assert_eq!(kept.lines().count(), 122);
    let details = details.expect("details");
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    assert_eq!(details["truncation"]["outputLines"], 122);
    assert_eq!(details["truncation"]["totalLines"], 300);
    assert_eq!(details["truncation"]["maxBytes"], 51200);
}

#[tokio::test]
async fn binary_files_are_skipped_unless_named() {
    let tree = Tree::new();
    tree.file("bin.dat", b"needle\x00\x01\x02needle\n")
        .file("text.txt", "needle\n");
    assert_eq!(
        tree.text(json!({"pattern": "needle"})).await,
        "text.txt:1: needle"
    );
    let named = tree
        .text(json!({"pattern": "needle", "path": "bin.dat"}))
        .await;
    assert_eq!(named, "bin.dat:1: needle\u{0}\u{1}\u{2}needle");
}

#[tokio::test]
async fn gitignore_files_count_inside_a_repository() {
    let tree = Tree::new();
    tree.git()
        .file(".gitignore", "*.log\n/build/\n")
        .file("sub/.gitignore", "secret.txt\n")
        .file("sub/.ignore", "skipped.txt\n")
        .file("app.log", "needle\n")
        .file("build/out.txt", "needle\n")
        .file("keep.txt", "needle\n")
        .file("sub/secret.txt", "needle\n")
        .file("sub/skipped.txt", "needle\n")
        .file("sub/kept.txt", "needle\n")
        .file("sub/deep/debug.log", "needle\n")
        .file("sub/deep/secret.txt", "needle\n")
        .file("other/secret.txt", "needle\n");
    assert_eq!(
        tree.text(json!({"pattern": "needle"})).await,
        "keep.txt:1: needle\nother/secret.txt:1: needle\nsub/kept.txt:1: needle"
    );
    // Searching below the repository root still applies the parent's rules.
    assert_eq!(
        tree.text(json!({"pattern": "needle", "path": "sub"})).await,
        "kept.txt:1: needle"
    );
}

#[tokio::test]
async fn gitignore_needs_a_repository_like_rg() {
    let tree = Tree::new();
    tree.file(".gitignore", "*.log\n")
        .file(".ignore", "quiet.txt\n")
        .file("app.log", "needle\n")
        .file("quiet.txt", "needle\n");
    assert_eq!(
        tree.text(json!({"pattern": "needle"})).await,
        "app.log:1: needle"
    );
}

#[tokio::test]
async fn hidden_files_are_searched_but_not_dot_git() {
    let tree = Tree::new();
    tree.git()
        .file(".env", "TOKEN=needle\n")
        .file(".config/tool.toml", "key = \"needle\"\n")
        .file(".git/config", "needle\n")
        .file(".git/logs/HEAD", "needle\n");
    assert_eq!(
        tree.text(json!({"pattern": "needle"})).await,
        ".config/tool.toml:1: key = \"needle\"\n.env:1: TOKEN=needle"
    );
}

#[tokio::test]
async fn a_single_file_is_shown_by_name() {
    let tree = Tree::new();
    tree.file("dir/example.txt", "first line\nmatch line\nlast line");
    assert_eq!(
        tree.text(json!({"pattern": "match", "path": "dir/example.txt"}))
            .await,
        "example.txt:2: match line"
    );
    // An ignored file named explicitly is still searched, as rg does.
    tree.git().file(".gitignore", "*.txt\n");
    assert_eq!(
        tree.text(json!({"pattern": "match", "path": "@dir/example.txt"}))
            .await,
        "example.txt:2: match line"
    );
}

#[tokio::test]
async fn missing_path_and_cancellation() {
    let tree = Tree::new();
    let err = tree
        .grep(json!({"pattern": "x", "path": "nope"}))
        .await
        .expect_err("missing");
    assert_eq!(
        err.0,
        format!("Path not found: {}", tree.root().join("nope").display())
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = grep_in(&tree.root(), json!({"pattern": "x"}), cancel)
        .await
        .expect_err("aborted");
    assert_eq!(err.0, "Operation aborted");
}

/// grep in `tree` with editor buffers open: (path relative to the root, unsaved text).
async fn grep_with_buffers(tree: &Tree, buffers: &[(&str, &str)], args: Value) -> String {
    let root = tree.root();
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    for (rel, text) in buffers {
        workspace.open_buffer(root.join(rel), *text);
    }
    let tool = GrepTool::new(Arc::new(ToolEnv::new(workspace, &root)));
    let out = tool
        .execute(ToolInvocation {
            call_id: "call".into(),
            args,
            cancel: CancellationToken::new(),
            updates: ToolUpdates::discard(),
        })
        .await
        .expect("grep succeeds");
    match out.content.first() {
        Some(UserBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn an_open_buffer_is_searched_instead_of_the_disk() {
    let tree = Tree::new();
    tree.file("a.rs", "fn saved() {}\nlet old_name = 1;\n")
        .file("b.rs", "old_name here\n");
    let buffers = [("a.rs", "fn saved() {}\n// added\nlet fresh_name = 1;\n")];
    // A string only in the buffer is found, at the buffer's line.
    let out = grep_with_buffers(&tree, &buffers, json!({"pattern": "fresh_name"})).await;
    assert_eq!(out, "a.rs:3: let fresh_name = 1;");
    // A string deleted in the buffer but still on disk is not.
    let out = grep_with_buffers(&tree, &buffers, json!({"pattern": "old_name"})).await;
    assert_eq!(out, "b.rs:1: old_name here");
    // Context lines come from the buffer too.
    let out = grep_with_buffers(&tree, &buffers, json!({"pattern": "fresh", "context": 1})).await;
    assert_eq!(
        out,
        "a.rs-2- // added\na.rs:3: let fresh_name = 1;\na.rs-4- "
    );
    // A file named explicitly is its buffer as well.
    let out = grep_with_buffers(&tree, &buffers, json!({"pattern": "added", "path": "a.rs"})).await;
    assert_eq!(out, "a.rs:2: // added");
}

#[tokio::test]
async fn unsaved_new_documents_are_searched_with_the_walks_filters() {
    let tree = Tree::new();
    tree.git()
        .file(".gitignore", "target/\n")
        .file("src/lib.rs", "nothing\n")
        .file("target/out.rs", "nothing\n");
    let buffers = [
        ("src/new.rs", "needle in a new file\n"),
        ("src/fresh/deeper.rs", "needle deeper\n"),
        ("target/gen.rs", "needle in an ignored folder\n"),
        ("notes.md", "needle in markdown\n"),
    ];
    let out = grep_with_buffers(&tree, &buffers, json!({"pattern": "needle"})).await;
    assert_eq!(
        out,
        "notes.md:1: needle in markdown\nsrc/fresh/deeper.rs:1: needle deeper\nsrc/new.rs:1: needle in a new file"
    );
    let out = grep_with_buffers(
        &tree,
        &buffers,
        json!({"pattern": "needle", "glob": "*.rs"}),
    )
    .await;
    assert_eq!(
        out,
        "src/fresh/deeper.rs:1: needle deeper\nsrc/new.rs:1: needle in a new file"
    );
    let out = grep_with_buffers(
        &tree,
        &buffers,
        json!({"pattern": "needle", "path": "src/new.rs"}),
    )
    .await;
    assert_eq!(out, "new.rs:1: needle in a new file");
    let out = grep_with_buffers(&tree, &buffers, json!({"pattern": "needle", "path": "src"})).await;
    assert_eq!(
        out,
        "fresh/deeper.rs:1: needle deeper\nnew.rs:1: needle in a new file"
    );
}

#[tokio::test]
async fn a_folder_only_unsaved_documents_hold_can_be_searched() {
    let tree = Tree::new();
    tree.file("a.txt", "needle on disk\n");
    let buffers = [
        ("fresh/one.rs", "needle one\n"),
        ("fresh/sub/two.rs", "needle two\n"),
    ];
    let out = grep_with_buffers(
        &tree,
        &buffers,
        json!({"pattern": "needle", "path": "fresh"}),
    )
    .await;
    assert_eq!(out, "one.rs:1: needle one\nsub/two.rs:1: needle two");
}
