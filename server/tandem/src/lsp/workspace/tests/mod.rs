//! The workspace's tests: a fixture over a temp root, a document store and a scripted client.

mod confirm;
mod edits;
mod fake;
mod permissions;
mod races;
mod saving;
mod set;
mod tools;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::json;
use tandem_coding::workspace::{
    apply_edits, ChangeOutcome, FileChange, FileContent, PermissionDecision, PermissionRequest,
    TextEdit, Workspace, WorkspaceError,
};
use tandem_protocol::config::{BashPermission, EditMode};
use tandem_protocol::interaction;
use tempfile::TempDir;
use tower_lsp_server::ls_types::{
    self as lsp, AnnotatedTextEdit, ChangeAnnotation, ClientCapabilities, CreateFile,
    DocumentChangeOperation, DocumentChanges, MessageType, OneOf,
    OptionalVersionedTextDocumentIdentifier, ResourceOp, TextDocumentEdit, Uri, WorkspaceEdit,
};

use crate::lsp::documents::{DocumentStore, TextChange};
use crate::lsp::position::PositionEncoding;
use crate::lsp::workspace::client::EditCapabilities;
use crate::lsp::workspace::confirm::{ANNOTATION_ID, NOT_APPLIED, REJECTED_BY_USER};
use crate::lsp::workspace::{LspWorkspace, WorkspaceSettings, CHANGED_IN_EDITOR};
use fake::{FakeClient, Reply, Sent};

const PLAIN: EditCapabilities = EditCapabilities {
    apply_edit: true,
    document_changes: false,
    create_files: false,
    delete_files: false,
    change_annotations: false,
    show_message_request: true,
    save_documents: false,
    diagnostics: false,
    language_requests: false,
    input: false,
};
const VERSIONED: EditCapabilities = EditCapabilities {
    document_changes: true,
    ..PLAIN
};
const FULL: EditCapabilities = EditCapabilities {
    apply_edit: true,
    document_changes: true,
    create_files: true,
    delete_files: true,
    change_annotations: true,
    show_message_request: true,
    save_documents: false,
    diagnostics: false,
    language_requests: false,
    input: false,
};

struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    store: Arc<Mutex<DocumentStore>>,
    client: Arc<FakeClient>,
    settings: Arc<RwLock<WorkspaceSettings>>,
    ws: Arc<LspWorkspace>,
}

fn fixture(caps: EditCapabilities, encoding: PositionEncoding, mode: EditMode) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical root");
    let store = Arc::new(Mutex::new(DocumentStore::new(encoding)));
    let client = Arc::new(FakeClient::editor(caps, store.clone()));
    let settings = Arc::new(RwLock::new(WorkspaceSettings {
        edit_mode: mode,
        bash_permission: BashPermission::Ask,
        timeout: Duration::from_secs(10),
        save_before_commands: true,
    }));
    let ws = Arc::new(
        LspWorkspace::new(
            vec![root.clone()],
            store.clone(),
            client.clone(),
            settings.clone(),
        )
        .with_quiet(Duration::from_millis(1)),
    );
    Fixture {
        _dir: dir,
        root,
        store,
        client,
        settings,
        ws,
    }
}

fn auto(caps: EditCapabilities) -> Fixture {
    fixture(caps, PositionEncoding::Utf16, EditMode::Auto)
}

fn confirm(caps: EditCapabilities) -> Fixture {
    fixture(caps, PositionEncoding::Utf16, EditMode::Confirm)
}

fn uri(path: &Path) -> Uri {
    Uri::from_file_path(path).expect("file uri")
}

impl Fixture {
    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Opens `name` in the "editor" (not on disk).
    fn open(&self, name: &str, version: i32, text: &str) -> PathBuf {
        let path = self.path(name);
        let mut store = self.store.lock().expect("store");
        store.open(uri(&path).as_str(), "plaintext", version, text);
        path
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(&path, text).expect("write");
        path
    }

    /// The open document's text now.
    fn text(&self, path: &Path) -> String {
        let store = self.store.lock().expect("store");
        store
            .get(uri(path).as_str())
            .expect("open document")
            .text()
            .to_string()
    }

    fn set_timeout(&self, timeout: Duration) {
        self.settings.write().expect("settings").timeout = timeout;
    }

    async fn propose(&self, change: FileChange) -> ChangeOutcome {
        self.ws.propose("call-1", change).await.expect("propose")
    }
}

/// An edit of `old` replacing each unique `needle` with its replacement.
fn edit(path: &Path, old: &str, replacements: &[(&str, &str)]) -> FileChange {
    let mut edits: Vec<TextEdit> = replacements
        .iter()
        .map(|(needle, new)| {
            let start = old.find(needle).expect("needle present");
            TextEdit {
                range: start..start + needle.len(),
                new_text: (*new).to_owned(),
            }
        })
        .collect();
    edits.sort_by_key(|e| e.range.start);
    FileChange {
        real: path.to_path_buf(),
        path: path.to_path_buf(),
        old_text: Some(old.to_owned()),
        new_text: apply_edits(old, &edits),
        edits,
    }
}

fn write_change(path: &Path, old: Option<&str>, new: &str) -> FileChange {
    FileChange {
        real: path.to_path_buf(),
        path: path.to_path_buf(),
        old_text: old.map(str::to_owned),
        new_text: new.to_owned(),
        edits: Vec::new(),
    }
}

fn te(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> lsp::TextEdit {
    lsp::TextEdit::new(
        lsp::Range::new(lsp::Position::new(l1, c1), lsp::Position::new(l2, c2)),
        text.to_owned(),
    )
}

fn versioned(uri: Uri, version: Option<i32>, edits: Vec<lsp::TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier { uri, version },
            edits: edits.into_iter().map(OneOf::Left).collect(),
        }])),
        change_annotations: None,
    }
}

fn plain(uri: Uri, edits: Vec<lsp::TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri, edits)])),
        document_changes: None,
        change_annotations: None,
    }
}

fn refused(reason: &str) -> ChangeOutcome {
    ChangeOutcome::Refused {
        reason: reason.to_owned(),
    }
}

fn rejected(reason: &str) -> ChangeOutcome {
    ChangeOutcome::Rejected {
        reason: Some(reason.to_owned()),
    }
}

fn question(message: &str, actions: &[&str], typ: MessageType) -> Sent {
    Sent::Question {
        typ,
        message: message.to_owned(),
        actions: actions.iter().map(|a| (*a).to_owned()).collect(),
    }
}
