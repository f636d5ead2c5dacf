//! Forking a live session at an entry.

use serde_json::{json, Value};
use tandem_agent::BoxFuture;
use tandem_protocol::events::EventNotification;
use tower_lsp_server::ls_types::{
    ApplyWorkspaceEditResponse, MessageActionItem, MessageType, WorkspaceEdit,
};

use super::*;
use crate::lsp::config::SessionDeps;
use crate::lsp::documents::DocumentStore;
use crate::lsp::position::PositionEncoding;
use crate::lsp::workspace::client::{ClientError, EditCapabilities, EditorClient};

struct NoEditor;

impl EditorClient for NoEditor {
    fn apply_edit(
        &self,
        _: String,
        _: WorkspaceEdit,
    ) -> BoxFuture<'_, Result<ApplyWorkspaceEditResponse, ClientError>> {
        Box::pin(std::future::pending())
    }
    fn show_message_request(
        &self,
        _: MessageType,
        _: String,
        _: Vec<MessageActionItem>,
    ) -> BoxFuture<'_, Result<Option<MessageActionItem>, ClientError>> {
        Box::pin(std::future::pending())
    }
    fn capabilities(&self) -> EditCapabilities {
        EditCapabilities::default()
    }
}

struct NoEvents;

impl EventSink for NoEvents {
    fn send(&self, _: EventNotification) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_at_an_entry_holds_the_path_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, r#"{"turns": [{"text": "an answer"}]}"#).unwrap();
    let models = json!({"providers": {"script": {"api": "scripted", "apiKey": "none",
        "baseUrl": script.display().to_string(), "models": [{"id": "t"}]}}});
    std::fs::write(dir.path().join("models.json"), models.to_string()).unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let config = Arc::new(ServerConfig::default());
    config.apply_initialization_options(Some(
        &json!({"model": "script/t", "agentDir": dir.path().display().to_string()}),
    ));
    let deps = SessionDeps {
        documents: Arc::new(Mutex::new(DocumentStore::new(PositionEncoding::Utf16))),
        editor: Arc::new(NoEditor),
        unsaved: Arc::new(crate::lsp::workspace::UnsavedEdits::new()),
        inflight: Arc::new(crate::lsp::workspace::InFlight::new()),
    };
    let sessions = Sessions::new(Arc::new(NoEvents), config, deps, project);
    let id = sessions.create(Origin::New, None).await.unwrap();
    let entry = sessions.get(&id).unwrap();
    entry.session.prompt("hello", Vec::new()).await.unwrap();
    let file = sessions.session_file(&id).unwrap();
    let before = lines(&file);
    let user = before
        .iter()
        .find(|l| l["type"] == "message" && l["message"]["role"] == "user")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();

    let forked = sessions.fork(&id, Some(user.clone())).await.unwrap();
    assert_ne!(forked, id);
    let fork_file = sessions.session_file(&forked).unwrap();
    let after = lines(&fork_file);
    assert_eq!(after[0]["parentSession"], file.display().to_string());
    assert_eq!(after.last().unwrap()["id"], user.as_str());
    // Counts include the `system` message recording the prompt and tools (as pi 1.6's do).
    assert_eq!(sessions.state(&forked).unwrap().message_count, 2);
    assert_eq!(lines(&file), before);
    assert_eq!(sessions.state(&id).unwrap().message_count, 3);

    // No entry id: a copy of the current branch, ending at the answer.
    let copy = sessions.fork(&id, None).await.unwrap();
    assert_eq!(sessions.state(&copy).unwrap().message_count, 3);

    let e = sessions
        .fork(&id, Some("nope1234".into()))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
    assert_eq!(e.data, Some(json!({"field": "entryId"})));
    assert!(e.message.contains("entryId") && e.message.contains("nope1234"));
}
