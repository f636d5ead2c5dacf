//! Paths whose real location is outside the workspace — `..`, absolute paths, symlinks that
//! escape — need the user's permission in every tool, and a refusal is a clear tool error.

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{ToolInvocation, ToolUpdates};
use tandem_coding::tools::tool;
use tandem_coding::{PermissionDecision, PermissionRequest, ScriptedWorkspace, ToolEnv};
use tokio_util::sync::CancellationToken;

struct Fixture {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    workspace: Arc<ScriptedWorkspace>,
    env: Arc<ToolEnv>,
}

fn fixture() -> Fixture {
    let inside = tempfile::tempdir().expect("temp dir");
    let outside_dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(inside.path()).expect("canon");
    let outside = std::fs::canonicalize(outside_dir.path()).expect("canon");
    std::fs::write(outside.join("secret.txt"), "top secret\n").expect("secret");
    std::os::unix::fs::symlink(&outside, root.join("escape")).expect("symlink");
    std::fs::write(root.join("ok.txt"), "fine\n").expect("inside file");
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    let env = Arc::new(ToolEnv::new(workspace.clone(), root.clone()));
    Fixture {
        _dirs: (inside, outside_dir),
        root,
        outside,
        workspace,
        env,
    }
}

async fn call(env: &Arc<ToolEnv>, name: &str, args: Value) -> Result<String, String> {
    let t = tool(env, name).expect("tool");
    let out = t
        .execute(ToolInvocation {
            call_id: "c1".into(),
            args,
            cancel: CancellationToken::new(),
            updates: ToolUpdates::discard(),
        })
        .await
        .map_err(|e| e.0)?;
    Ok(out
        .content
        .iter()
        .filter_map(|b| match b {
            tandem_ai::UserBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect())
}

fn reject() -> PermissionDecision {
    PermissionDecision::Reject { reason: None }
}

#[tokio::test]
async fn every_file_tool_asks_before_following_a_symlink_out_of_the_workspace() {
    let f = fixture();
    let cases = [
        ("read", json!({"path": "escape/secret.txt"}), false),
        ("ls", json!({"path": "escape"}), false),
        (
            "grep",
            json!({"pattern": "secret", "path": "escape"}),
            false,
        ),
        ("find", json!({"pattern": "*.txt", "path": "escape"}), false),
        (
            "write",
            json!({"path": "escape/new.txt", "content": "x"}),
            true,
        ),
        (
            "edit",
            json!({"path": "escape/secret.txt", "edits": [{"oldText": "top", "newText": "no"}]}),
            true,
        ),
    ];
    for (name, args, write) in cases {
        f.workspace.answer_permissions([reject()]);
        let before = f.workspace.permission_requests().len();
        let err = call(&f.env, name, args).await.expect_err(name);
        assert!(err.contains("outside the workspace"), "{name}: {err}");
        let requests = f.workspace.permission_requests();
        assert_eq!(requests.len(), before + 1, "{name} asked once");
        match &requests[before] {
            PermissionRequest::OutsideWorkspace { path, write: w } => {
                assert!(path.starts_with(&f.outside), "{name}: {path:?}");
                assert_eq!(*w, write, "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // Nothing outside changed.
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).expect("secret"),
        "top secret\n"
    );
    assert!(!f.outside.join("new.txt").exists());
    assert!(f.workspace.proposals().is_empty());
}

#[tokio::test]
async fn dot_dot_and_absolute_paths_are_outside_too_and_allow_always_is_remembered() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");
    let dotdot = format!(
        "../{}/secret.txt",
        f.outside
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
    );
    f.workspace.answer_permissions([reject()]);
    let err = call(&f.env, "read", json!({"path": secret.to_string_lossy()}))
        .await
        .expect_err("absolute path refused");
    assert!(err.contains("outside the workspace"), "{err}");

    f.workspace
        .answer_permissions([PermissionDecision::AllowAlways]);
    // Both temp dirs share a parent, so `../<outside>/secret.txt` climbs out of the root.
    assert_eq!(f.root.parent(), f.outside.parent());
    assert_eq!(
        call(&f.env, "read", json!({"path": dotdot})).await,
        Ok("top secret\n".into())
    );
    let asked = f.workspace.permission_requests().len();
    // Remembered for the session: no new question.
    assert_eq!(
        call(&f.env, "read", json!({"path": secret.to_string_lossy()})).await,
        Ok("top secret\n".into())
    );
    assert_eq!(f.workspace.permission_requests().len(), asked);
    // Inside paths never ask.
    assert_eq!(
        call(&f.env, "read", json!({"path": "ok.txt"})).await,
        Ok("fine\n".into())
    );
    assert_eq!(f.workspace.permission_requests().len(), asked);
}
