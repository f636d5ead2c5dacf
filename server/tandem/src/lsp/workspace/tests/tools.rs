//! The coding tools over an `LspWorkspace`: what the model's edit and write calls become.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::{json, Value};
use tandem_agent::{ToolInvocation, ToolOutput, ToolUpdates};
use tandem_ai::{CancellationToken, UserBlock};
use tandem_coding::workspace::Workspace;
use tandem_coding::ToolEnv;
use tandem_protocol::config::{BashPermission, EditMode};
use tandem_protocol::interaction;
use tower_lsp_server::ls_types::{
    self as lsp, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, TextDocumentEdit,
    Uri, WorkspaceEdit,
};

use super::fake::{FakeClient, Reply, Sent};
use crate::lsp::documents::DocumentStore;
use crate::lsp::position::PositionEncoding;
use crate::lsp::workspace::client::EditCapabilities;
use crate::lsp::workspace::{LspWorkspace, WorkspaceSettings};

const CAPS: EditCapabilities = EditCapabilities {
    apply_edit: true,
    document_changes: true,
    create_files: false,
    delete_files: false,
    change_annotations: false,
    show_message_request: true,
    save_documents: false,
    diagnostics: false,
    language_requests: false,
    input: false,
};

const BUFFER: &str = "// 😀 héllo\nfn answer() -> u32 { 41 }\n";

struct Editor {
    _dir: tempfile::TempDir,
    uri: Uri,
    client: Arc<FakeClient>,
    env: Arc<ToolEnv>,
    disk: std::path::PathBuf,
}

/// `src/lib.rs` on disk holds old text; the editor has it open with unsaved `BUFFER`.
fn editor(mode: EditMode) -> Editor {
    editor_within(mode, Duration::from_secs(10))
}

/// [`editor`] with an answer timeout of `timeout`.
fn editor_within(mode: EditMode, timeout: Duration) -> Editor {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    let disk = root.join("src/lib.rs");
    std::fs::create_dir_all(root.join("src")).expect("src");
    std::fs::write(&disk, "fn old() {}\n").expect("write");
    let uri = Uri::from_file_path(&disk).expect("uri");
    let mut store = DocumentStore::new(PositionEncoding::Utf16);
    store.open(uri.as_str(), "rust", 5, BUFFER);
    let store = Arc::new(Mutex::new(store));
    let client = Arc::new(FakeClient::editor(CAPS, store.clone()));
    let settings = WorkspaceSettings {
        edit_mode: mode,
        bash_permission: BashPermission::Ask,
        timeout,
        save_before_commands: true,
    };
    let workspace = LspWorkspace::new(
        vec![root.clone()],
        store,
        client.clone(),
        Arc::new(RwLock::new(settings)),
    );
    let env = Arc::new(ToolEnv::new(
        Arc::new(workspace) as Arc<dyn Workspace>,
        &root,
    ));
    Editor {
        _dir: dir,
        uri,
        client,
        env,
        disk,
    }
}

async fn run(env: &Arc<ToolEnv>, tool: &str, args: Value) -> Result<String, String> {
    let tool = tandem_coding::tools::tool(env, tool).expect("tool");
    let call = ToolInvocation {
        call_id: "call-1".into(),
        args,
        cancel: CancellationToken::new(),
        updates: ToolUpdates::discard(),
    };
    tool.execute(call).await.map(text).map_err(|e| e.0)
}

/// Every text block of a result, joined.
async fn run_all(env: &Arc<ToolEnv>, tool: &str, args: Value) -> String {
    let tool = tandem_coding::tools::tool(env, tool).expect("tool");
    let call = ToolInvocation {
        call_id: "call-2".into(),
        args,
        cancel: CancellationToken::new(),
        updates: ToolUpdates::discard(),
    };
    match tool.execute(call).await {
        Ok(output) => output
            .content
            .iter()
            .filter_map(|b| match b {
                UserBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => e.0,
    }
}

#[tokio::test]
async fn a_timed_out_edit_answered_later_is_told_to_the_model_in_the_next_result() {
    let e = editor_within(EditMode::Auto, Duration::from_millis(50));
    e.client
        .reply_edits([Reply::Late(Duration::from_millis(200))]);
    let args = json!({"path": "src/lib.rs", "edits": [{"oldText": "41", "newText": "42"}]});
    let result = run(&e.env, "edit", args).await;
    let error = result.expect_err("a timeout is a tool error");
    assert!(
        error.contains("No answer from the editor about the edit to src/lib.rs")
            && error.contains("do not repeat the change"),
        "{error}"
    );
    // The late answer comes; the next tool result (any tool) carries what it said, once.
    let mut noted = None;
    for _ in 0..200 {
        let out = run_all(&e.env, "read", json!({"path": "src/lib.rs"})).await;
        if out.contains("after all") {
            noted = Some(out);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let noted = noted.expect("the late answer reached a tool result");
    assert!(
        noted.contains(
            "the change to src/lib.rs that timed out earlier was applied by the editor after all"
        ),
        "{noted}"
    );
    // The notice may come with a read that started before the answer (its text is then the
    // older one): the next read sees the edit, and is not told again.
    let again = run_all(&e.env, "read", json!({"path": "src/lib.rs"})).await;
    assert!(
        again.contains("{ 42 }"),
        "the read sees the late edit: {again}"
    );
    assert!(!again.contains("after all"), "said once: {again}");
}

fn text(output: ToolOutput) -> String {
    match output.content.first() {
        Some(UserBlock::Text(block)) => block.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

fn versioned(uri: Uri, edits: Vec<lsp::TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier::new(uri, 5),
            edits: edits.into_iter().map(OneOf::Left).collect(),
        }])),
        change_annotations: None,
    }
}

fn te(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> lsp::TextEdit {
    lsp::TextEdit::new(
        lsp::Range::new(lsp::Position::new(l1, c1), lsp::Position::new(l2, c2)),
        text.to_owned(),
    )
}

#[tokio::test]
async fn edit_tool_edits_the_unsaved_buffer_through_apply_edit() {
    let e = editor(EditMode::Auto);
    let args = json!({"path": "src/lib.rs", "edits": [{"oldText": "41", "newText": "42"}]});
    let result = run(&e.env, "edit", args).await;
    assert_eq!(
        result.as_deref(),
        Ok("Successfully replaced 1 block(s) in src/lib.rs.")
    );
    assert_eq!(
        e.client.sent(),
        vec![Sent::ApplyEdit {
            label: "Tandem: edit src/lib.rs".into(),
            edit: versioned(e.uri.clone(), vec![te(1, 22, 1, 23, "2")]),
        }]
    );
    assert_eq!(
        std::fs::read_to_string(&e.disk).expect("disk"),
        "fn old() {}\n"
    );
}

#[tokio::test]
async fn a_rejected_edit_is_a_tool_error_the_model_sees() {
    let e = editor(EditMode::Confirm);
    e.client
        .reply_questions([Reply::Choose(Some(interaction::REJECT))]);
    let args = json!({"path": "src/lib.rs", "edits": [{"oldText": "41", "newText": "42"}]});
    let result = run(&e.env, "edit", args).await;
    assert_eq!(
        result,
        Err("The user rejected the edit to src/lib.rs: rejected by the user".into())
    );
    assert_eq!(
        e.client.questions(),
        vec!["Tandem wants to edit src/lib.rs (+1/-1 lines)"]
    );
    assert!(e.client.edits().is_empty());
}

#[tokio::test]
async fn write_tool_replaces_only_the_changed_lines_of_the_buffer() {
    let e = editor(EditMode::Auto);
    let content = "// 😀 héllo\nfn answer() -> u32 { 42 }\n";
    let args = json!({"path": "src/lib.rs", "content": content});
    let result = run(&e.env, "write", args).await;
    assert_eq!(
        result.as_deref(),
        Ok(format!("Successfully wrote {} bytes to src/lib.rs", content.len()).as_str())
    );
    assert_eq!(
        e.client.edits(),
        vec![versioned(e.uri.clone(), vec![te(1, 22, 1, 23, "2")])]
    );
}
