use std::path::PathBuf;

use tandem_agent::ToolUpdates;
use tandem_ai::UserBlock;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::workspace::{
    ChangeOutcome, PermissionDecision, PermissionRequest, ScriptedWorkspace, Workspace,
};

struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    workspace: Arc<ScriptedWorkspace>,
    calls: Arc<crate::calls::CallRecords>,
    tool: WriteTool,
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
        tool: WriteTool::new(env),
    }
}

impl Fixture {
    async fn write(&self, path: &str, content: &str) -> Result<String, String> {
        let call = ToolInvocation {
            call_id: "call-1".into(),
            args: json!({"path": path, "content": content}),
            cancel: CancellationToken::new(),
            updates: ToolUpdates::discard(),
        };
        match self.tool.execute(call).await {
            Ok(output) => match output.content.first() {
                Some(UserBlock::Text(block)) if output.details.is_none() => Ok(block.text.clone()),
                other => panic!("unexpected output {other:?}"),
            },
            Err(e) => Err(e.0),
        }
    }
}

#[tokio::test]
async fn a_write_records_its_change_new_or_over_the_old_text() {
    let f = fixture();
    f.write("w.txt", "one\ntwo\n").await.expect("written");
    let change = f
        .calls
        .take("call-1")
        .and_then(|r| r.change)
        .expect("record");
    assert_eq!(change.old_text, None);
    assert_eq!(
        change.diff,
        "--- /dev/null\n+++ b/w.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    );
    f.write("w.txt", "one\n2\n").await.expect("written");
    let change = f
        .calls
        .take("call-1")
        .and_then(|r| r.change)
        .expect("record");
    assert_eq!(change.old_text.as_deref(), Some("one\ntwo\n"));
    assert!(
        change.diff.contains("@@ -1,2 +1,2 @@\n one\n-two\n+2\n"),
        "{}",
        change.diff
    );
}

#[tokio::test]
async fn creates_the_file_and_its_directories() {
    let f = fixture();
    assert_eq!(
        f.write("nested/dir/test.txt", "Test content")
            .await
            .as_deref(),
        Ok("Successfully wrote 12 bytes to nested/dir/test.txt")
    );
    let path = f.root.join("nested/dir/test.txt");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "Test content"
    );
    assert_eq!(
        f.workspace.proposals(),
        vec![FileChange {
            real: path.clone(),
            path,
            old_text: None,
            new_text: "Test content".into(),
            edits: Vec::new(),
        }]
    );
}

#[tokio::test]
async fn overwrites_with_the_current_text_as_base() {
    let f = fixture();
    let path = f.root.join("f.txt");
    std::fs::write(&path, "old\n").expect("write");
    f.write("f.txt", "new\n").await.expect("write");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "new\n");
    assert_eq!(
        f.workspace.proposals()[0].old_text.as_deref(),
        Some("old\n")
    );
}

#[tokio::test]
async fn an_open_buffer_is_the_base_and_receives_the_text() {
    let f = fixture();
    let path = f.root.join("b.txt");
    std::fs::write(&path, "disk\n").expect("write");
    f.workspace.open_buffer(&path, "unsaved\n");
    f.write("b.txt", "fresh\n").await.expect("write");
    assert_eq!(
        f.workspace.proposals()[0].old_text.as_deref(),
        Some("unsaved\n")
    );
    assert_eq!(f.workspace.buffer(&path).as_deref(), Some("fresh\n"));
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "disk\n");
}

/// The size is the real UTF-8 byte count (pi reports UTF-16 units: 8 here).
#[tokio::test]
async fn reports_the_size_in_bytes() {
    let f = fixture();
    assert_eq!(
        f.write("u.txt", "h\u{e9}llo \u{1F600}").await.as_deref(),
        Ok("Successfully wrote 11 bytes to u.txt")
    );
}

#[tokio::test]
async fn a_rejected_write_changes_nothing() {
    let f = fixture();
    f.workspace.answer_changes([ChangeOutcome::Rejected {
        reason: Some("no thanks".into()),
    }]);
    assert_eq!(
        f.write("r.txt", "x").await,
        Err("The user rejected writing r.txt: no thanks".into())
    );
    assert!(!f.root.join("r.txt").exists());
}

#[tokio::test]
async fn writing_outside_the_workspace_asks_first() {
    let f = fixture();
    let other = tempfile::tempdir().expect("other dir");
    let outside = std::fs::canonicalize(other.path())
        .expect("canonical")
        .join("out.txt");
    let raw = outside.to_string_lossy().to_string();
    f.workspace.answer_permissions([
        PermissionDecision::AllowOnce,
        PermissionDecision::Reject { reason: None },
    ]);
    assert_eq!(
        f.write(&raw, "allowed").await,
        Ok(format!("Successfully wrote 7 bytes to {raw}"))
    );
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), "allowed");
    let denied = f.write(&raw, "denied").await.expect_err("refused");
    assert!(denied.starts_with("Access to "), "{denied}");
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), "allowed");
    let request = PermissionRequest::OutsideWorkspace {
        path: outside,
        write: true,
    };
    assert_eq!(
        f.workspace.permission_requests(),
        vec![request.clone(), request]
    );
}

#[tokio::test]
async fn a_directory_cannot_be_written() {
    let f = fixture();
    std::fs::create_dir(f.root.join("d")).expect("mkdir");
    let error = f.write("d", "x").await.expect_err("directory");
    assert_eq!(
        error,
        format!("{} is a directory, not a file", f.root.join("d").display())
    );
}
