//! Behaviour of the `find` tool against pi's texts, on small trees in temp dirs.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, ToolError, ToolInvocation, ToolUpdates};
use tandem_ai::UserBlock;
use tokio_util::sync::CancellationToken;

use super::FindTool;
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

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("canonical temp dir")
    }

    fn file(&self, rel: &str, content: &str) -> &Self {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, content).expect("write");
        self
    }

    fn git(&self) -> &Self {
        std::fs::create_dir_all(self.root().join(".git")).expect("mkdir .git");
        self
    }

    async fn find_with(
        &self,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<(String, Option<Value>), ToolError> {
        let root = self.root();
        let workspace = Arc::new(ScriptedWorkspace::new(&root));
        let tool = FindTool::new(Arc::new(ToolEnv::new(workspace, &root)));
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

    async fn find(&self, args: Value) -> Result<(String, Option<Value>), ToolError> {
        self.find_with(args, CancellationToken::new()).await
    }

    async fn text(&self, pattern: &str) -> String {
        self.find(json!({ "pattern": pattern }))
            .await
            .expect("find succeeds")
            .0
    }
}

#[tokio::test]
async fn nested_gitignores_and_hidden_files() {
    let tree = Tree::new();
    tree.git()
        .file(".gitignore", "*.log\n/target/\n")
        .file("a/.gitignore", "ignored.txt\n")
        .file("a/deep/.gitignore", "secret.txt\n")
        .file(".git/notes.txt", "")
        .file(".secret/hidden.txt", "")
        .file("visible.txt", "")
        .file("ignored.txt", "")
        .file("a/ignored.txt", "")
        .file("a/kept.txt", "")
        .file("a/deep/ignored.txt", "")
        .file("a/deep/secret.txt", "")
        .file("a/deep/kept.txt", "")
        .file("b/ignored.txt", "")
        .file("b/secret.txt", "")
        .file("debug.log", "")
        .file("target/out.txt", "");
    assert_eq!(
        tree.text("*.txt").await,
        ".secret/hidden.txt\na/deep/kept.txt\na/kept.txt\nb/ignored.txt\nb/secret.txt\n\
         ignored.txt\nvisible.txt"
    );
    // Directories are listed too, with a trailing slash; `.git` never is.
    assert_eq!(
        tree.text("*")
            .await
            .lines()
            .filter(|l| l.ends_with('/'))
            .collect::<Vec<_>>(),
        vec![".secret/", "a/", "a/deep/", "b/"]
    );
    // Below the repository root the parent's rules still apply.
    let (text, _) = tree
        .find(json!({"pattern": "*.txt", "path": "a"}))
        .await
        .expect("find");
    assert_eq!(text, "deep/kept.txt\nkept.txt");
}

#[tokio::test]
async fn gitignore_counts_outside_a_repository_too() {
    let tree = Tree::new();
    tree.file(".gitignore", "ignored.txt\n")
        .file("sub/.gitignore", "*.tmp\n")
        .file("ignored.txt", "")
        .file("kept.txt", "")
        .file("sub/x.tmp", "")
        .file("y.tmp", "");
    assert_eq!(tree.text("*.txt").await, "kept.txt");
    assert_eq!(tree.text("*.tmp").await, "y.tmp");
}

#[tokio::test]
async fn globs_with_directories_match_the_whole_path() {
    let tree = Tree::new();
    tree.file("visible.txt", "")
        .file(".secret/hidden.txt", "")
        .file("src/foo/bar/example.spec.ts", "")
        .file("src/main.ts", "")
        .file("lib/src/other.spec.ts", "")
        .file("x.spec.ts/inner.ts", "");
    assert_eq!(
        tree.text("**/*.txt").await,
        ".secret/hidden.txt\nvisible.txt"
    );
    assert_eq!(
        tree.text("src/**/*.spec.ts").await,
        "lib/src/other.spec.ts\nsrc/foo/bar/example.spec.ts"
    );
    assert_eq!(
        tree.text("src/*.ts").await,
        "lib/src/other.spec.ts\nsrc/main.ts"
    );
    assert_eq!(
        tree.text("*.spec.ts").await,
        "lib/src/other.spec.ts\nsrc/foo/bar/example.spec.ts\nx.spec.ts/"
    );
    // `*` does not cross `/` when matching a name.
    assert_eq!(tree.text("src*").await, "lib/src/\nsrc/");
}

#[tokio::test]
async fn case_is_smart() {
    let tree = Tree::new();
    tree.file("Readme.MD", "").file("notes.md", "");
    assert_eq!(tree.text("*.md").await, "Readme.MD\nnotes.md");
    assert_eq!(tree.text("*.MD").await, "Readme.MD");
}

#[tokio::test]
async fn limit_notice_and_details() {
    let tree = Tree::new();
    for name in ["a.rs", "b.rs", "c.rs", "d.rs", "e.rs"] {
        tree.file(name, "");
    }
    let (text, details) = tree
        .find(json!({"pattern": "*.rs", "limit": 2}))
        .await
        .expect("find");
    let (list, notice) = text.split_once("\n\n").expect("notice");
    assert_eq!(list.lines().count(), 2, "{text}");
    assert_eq!(
        notice,
        "[2 results limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(details, Some(json!({"resultLimitReached": 2})));
    let (text, details) = tree
        .find(json!({"pattern": "*.rs", "limit": 5}))
        .await
        .expect("find");
    assert_eq!(
        text,
        "a.rs\nb.rs\nc.rs\nd.rs\ne.rs\n\n\
         [5 results limit reached. Use limit=10 for more, or refine pattern]"
    );
    assert_eq!(details, Some(json!({"resultLimitReached": 5})));
}

#[tokio::test]
async fn output_is_cut_at_50kb() {
    let tree = Tree::new();
    for i in 0..300 {
        tree.file(&format!("{i:03}{}.txt", "n".repeat(200)), "");
    }
    let (text, details) = tree.find(json!({"pattern": "*.txt"})).await.expect("find");
    let (kept, notice) = text.rsplit_once("\n\n").expect("notice");
    assert_eq!(notice, "[50.0KB limit reached]");
    // Each line is 207 bytes plus a newline: 246 fit in 51200 bytes.
    assert_eq!(kept.lines().count(), 246);
    let details = details.expect("details");
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    assert_eq!(details["truncation"]["totalLines"], 300);
}

#[tokio::test]
async fn no_files_missing_paths_and_cancellation() {
    let tree = Tree::new();
    tree.file("a.txt", "");
    assert_eq!(tree.text("*.zip").await, "No files found matching pattern");
    let err = tree
        .find(json!({"pattern": "*", "path": "missing"}))
        .await
        .expect_err("missing");
    assert_eq!(
        err.0,
        format!("Path not found: {}", tree.root().join("missing").display())
    );
    let err = tree
        .find(json!({"pattern": "*", "path": "a.txt"}))
        .await
        .expect_err("file");
    assert_eq!(
        err.0,
        format!("Not a directory: {}", tree.root().join("a.txt").display())
    );
    let err = tree
        .find(json!({"pattern": "[a"}))
        .await
        .expect_err("bad glob");
    assert!(err.0.starts_with("error parsing glob '[a'"), "{err}");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = tree
        .find_with(json!({"pattern": "*"}), cancel)
        .await
        .expect_err("aborted");
    assert_eq!(err.0, "Operation aborted");
}

#[tokio::test]
async fn unsaved_new_documents_are_listed_when_they_match() {
    let tree = Tree::new();
    tree.git()
        .file(".gitignore", "target/\n")
        .file("src/lib.rs", "")
        .file("target/out.rs", "");
    let root = tree.root();
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    workspace.open_buffer(root.join("src/new.rs"), "unsaved");
    workspace.open_buffer(root.join("src/lib.rs"), "open and on disk: listed once");
    workspace.open_buffer(root.join("target/gen.rs"), "in an ignored folder");
    workspace.open_buffer(root.join("notes.md"), "does not match");
    let tool = FindTool::new(Arc::new(ToolEnv::new(workspace, &root)));
    let out = tool
        .execute(ToolInvocation {
            call_id: "call".into(),
            args: json!({"pattern": "*.rs"}),
            cancel: CancellationToken::new(),
            updates: ToolUpdates::discard(),
        })
        .await
        .expect("find succeeds");
    let text = match out.content.first() {
        Some(UserBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    };
    assert_eq!(text, "src/lib.rs\nsrc/new.rs");
}
