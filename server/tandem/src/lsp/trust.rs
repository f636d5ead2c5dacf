//! Project trust in the language server: the editor's own trust when it has one, otherwise one
//! question per folder for the server's lifetime.
//!
//! Sessions are built at once ([`ProjectTrust::now`]): a folder that is trusted or not gets its
//! session accordingly, and a folder that needs a question gets an untrusted session marked
//! pending. The question itself is a `window/showMessageRequest`, so it is asked from the run's
//! spawned task, never from a request handler ([`ProjectTrust::ask`]): before a pending
//! session's first run, the user sees exactly what would run (MCP servers with their command
//! lines, a custom shell, skills, a replaced system prompt) and answers Trust, Trust always
//! (saved in trust.json, shared with pi) or Don't trust. Concurrent sessions of one folder wait
//! for the same answer; a dismissed question, an error or no answer in time means not trusted,
//! and the folder is not asked about again until the server restarts.
//!
//! The editor's trust (`initializationOptions.workspaceTrusted`) decides for its workspace
//! folders, without a question; other folders are decided as above.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use tandem_ai::sync::lock;

use tandem_ai::registry::AgentDir;
use tandem_coding::trust::{canonical, ProtectedResources, TrustDecision, TrustSource, TrustStore};
use tandem_protocol::interaction::{self, TrustAnswer};
use tokio::sync::watch;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

use super::workspace::client::{with_timeout, ClientError, SHOW_MESSAGE_REQUEST};
use super::workspace::EditorClient;
use crate::host::setup::decide_trust;

enum Answer {
    Known(bool),
    Asking(watch::Receiver<Option<bool>>),
}

/// The server's trust state: the command line's and the editor's say, and the answers given in
/// this process.
#[derive(Default)]
pub struct ProjectTrust {
    command_line: Option<bool>,
    editor: Mutex<Option<bool>>,
    answers: Mutex<HashMap<PathBuf, Answer>>,
}

impl ProjectTrust {
    /// Trust with the command line's decision (`--approve`: `Some(true)`, `--no-approve`:
    /// `Some(false)`).
    pub fn new(command_line: Option<bool>) -> Self {
        ProjectTrust {
            command_line,
            ..ProjectTrust::default()
        }
    }

    /// Records the editor's own trust for its workspace folders (`None`: it has none).
    pub fn set_editor(&self, trusted: Option<bool>) {
        *lock(&self.editor) = trusted;
    }

    /// The editor's own trust, when it gave one.
    pub fn editor(&self) -> Option<bool> {
        *lock(&self.editor)
    }

    /// Trust for a session in `cwd` as far as it is known without asking (`Ask`: build it
    /// untrusted and ask before its first run); `folders` are the editor's workspace folders.
    /// In order: `--no-approve`, the editor's own trust for its folders, `--approve`, this
    /// server's earlier answers, then trust.json and `defaultProjectTrust`. `warn` hears a
    /// broken trust.json. Blocking (reads files).
    pub fn now(
        &self,
        agent_dir: &AgentDir,
        cwd: &Path,
        folders: &[PathBuf],
        warn: &mut dyn FnMut(String),
    ) -> TrustDecision {
        if self.command_line == Some(false) {
            return TrustDecision::Decided {
                trusted: false,
                source: TrustSource::CommandLine,
            };
        }
        let dir = canonical(cwd);
        let in_editor = folders.iter().any(|f| dir.starts_with(canonical(f)));
        if let (true, Some(trusted)) = (in_editor, self.editor()) {
            return TrustDecision::Decided {
                trusted,
                source: TrustSource::Editor,
            };
        }
        if let Some(Answer::Known(trusted)) = lock(&self.answers).get(&dir) {
            return TrustDecision::Decided {
                trusted: *trusted,
                source: TrustSource::User,
            };
        }
        decide_trust(agent_dir, &dir, self.command_line, warn)
    }

    /// Asks the user about `resources` (once per folder; later callers get the same answer) and
    /// returns whether the folder is trusted. "Trust always" is saved in `agent_dir`'s
    /// trust.json; a save that fails is reported to the editor and the folder is still trusted
    /// for this server. Call only from a spawned task.
    pub async fn ask(
        &self,
        agent_dir: &AgentDir,
        resources: &ProtectedResources,
        editor: &dyn EditorClient,
        timeout: Duration,
    ) -> bool {
        let dir = resources.dir.clone();
        let (tx, waiting) = {
            let mut answers = lock(&self.answers);
            match answers.get(&dir) {
                Some(Answer::Known(trusted)) => return *trusted,
                Some(Answer::Asking(rx)) => (None, Some(rx.clone())),
                None => {
                    let (tx, rx) = watch::channel(None);
                    answers.insert(dir.clone(), Answer::Asking(rx));
                    (Some(tx), None)
                }
            }
        };
        if let Some(mut rx) = waiting {
            let answered = rx.wait_for(Option::is_some).await.map(|a| *a);
            return matches!(answered, Ok(Some(true)));
        }
        let trusted = self.question(agent_dir, resources, editor, timeout).await;
        lock(&self.answers).insert(dir, Answer::Known(trusted));
        if let Some(tx) = tx {
            let _ = tx.send(Some(trusted));
        }
        trusted
    }

    async fn question(
        &self,
        agent_dir: &AgentDir,
        resources: &ProtectedResources,
        editor: &dyn EditorClient,
        timeout: Duration,
    ) -> bool {
        let dir = &resources.dir;
        if !editor.capabilities().show_message_request {
            editor
                .show_message(MessageType::WARNING, not_asked_message(dir))
                .await;
            return false;
        }
        let actions = interaction::TRUST_ACTIONS
            .iter()
            .map(|title| MessageActionItem {
                title: (*title).to_owned(),
                properties: Default::default(),
            })
            .collect();
        let call =
            editor.show_message_request(MessageType::WARNING, question_text(resources), actions);
        let answer = match with_timeout(SHOW_MESSAGE_REQUEST, timeout, call).await {
            Ok(item) => TrustAnswer::from_title(item.map(|i| i.title).as_deref()),
            Err(e) => {
                tracing::warn!(
                    "the trust question for {} got no answer ({e}); not trusted",
                    dir.display()
                );
                // An editor that refuses the request (Helix has no dialogs) is told how to
                // trust the folder; one that let it time out was shown the question.
                if matches!(e, ClientError::Failed(_)) {
                    editor
                        .show_message(MessageType::WARNING, not_asked_message(dir))
                        .await;
                }
                TrustAnswer::DontTrust
            }
        };
        match answer {
            TrustAnswer::Trust => true,
            TrustAnswer::TrustAlways => {
                if let Err(e) = TrustStore::new(agent_dir.path()).save(dir, true) {
                    editor
                        .show_message(
                            MessageType::WARNING,
                            format!("Tandem trusts {} for now, but {e}", dir.display()),
                        )
                        .await;
                }
                true
            }
            TrustAnswer::DontTrust => false,
        }
    }
}

/// The question: which folder, and exactly what trusting it would run or load.
pub fn question_text(resources: &ProtectedResources) -> String {
    let mut text = format!(
        "Tandem: trust the folder {}? Its project configuration would be used:",
        resources.dir.display()
    );
    for line in resources.describe() {
        text.push_str("\n- ");
        text.push_str(&line);
    }
    text.push_str(
        "\nUntil you trust it, Tandem ignores these (context files such as AGENTS.md still \
         load). \"Trust always\" saves the decision in trust.json, shared with pi.",
    );
    text
}

/// What a client that cannot show questions is told.
fn not_asked_message(dir: &Path) -> String {
    format!(
        "Tandem: {} has project configuration (.pi/settings.json, mcp.json, skills, prompts or \
         system-prompt files) that is not used, because the folder is not trusted and this \
         editor cannot be asked. To trust it, run `tandem trust {}` (or trust it in pi), or \
         set defaultProjectTrust in the agent directory's settings.json.",
        dir.display(),
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use crate::lsp::workspace::client::EditCapabilities;
    use tandem_agent::BoxFuture;
    use tower_lsp_server::ls_types::{ApplyWorkspaceEditResponse, WorkspaceEdit};

    /// Answers every question with `title` after `delay`, counting the questions.
    struct Answering {
        title: Option<&'static str>,
        asked: Mutex<Vec<String>>,
        shown: Mutex<Vec<String>>,
        dialogs: bool,
    }

    impl EditorClient for Answering {
        fn apply_edit(
            &self,
            _label: String,
            _edit: WorkspaceEdit,
        ) -> BoxFuture<'_, Result<ApplyWorkspaceEditResponse, ClientError>> {
            Box::pin(async { Err(ClientError::Failed("no edits here".into())) })
        }

        fn show_message_request(
            &self,
            _typ: MessageType,
            message: String,
            actions: Vec<MessageActionItem>,
        ) -> BoxFuture<'_, Result<Option<MessageActionItem>, ClientError>> {
            lock(&self.asked).push(message);
            let chosen = self
                .title
                .and_then(|t| actions.into_iter().find(|a| a.title == t));
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(chosen)
            })
        }

        fn show_message(&self, _typ: MessageType, message: String) -> BoxFuture<'_, ()> {
            lock(&self.shown).push(message);
            Box::pin(async {})
        }

        fn capabilities(&self) -> EditCapabilities {
            EditCapabilities {
                show_message_request: self.dialogs,
                ..EditCapabilities::default()
            }
        }
    }

    fn answering(title: Option<&'static str>) -> Arc<Answering> {
        Arc::new(Answering {
            title,
            asked: Mutex::new(Vec::new()),
            shown: Mutex::new(Vec::new()),
            dialogs: true,
        })
    }

    struct Dirs {
        _tmp: tempfile::TempDir,
        agent: AgentDir,
        project: PathBuf,
    }

    fn dirs() -> Dirs {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = canonical(tmp.path());
        let project = root.join("project");
        std::fs::create_dir_all(project.join(".pi")).expect("mkdir");
        std::fs::write(
            project.join(".pi/mcp.json"),
            r#"{"mcpServers": {"x": {"command": "touch", "args": ["/tmp/marker"]}}}"#,
        )
        .expect("write");
        std::fs::create_dir_all(root.join("agent")).expect("mkdir");
        Dirs {
            agent: AgentDir::new(root.join("agent")),
            project,
            _tmp: tmp,
        }
    }

    fn pending(trust: &ProjectTrust, d: &Dirs, folders: &[PathBuf]) -> ProtectedResources {
        match trust.now(&d.agent, &d.project, folders, &mut |w| panic!("{w}")) {
            TrustDecision::Ask(resources) => resources,
            other => panic!("expected a question, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_editors_trust_decides_for_its_folders_only() {
        let d = dirs();
        let trust = ProjectTrust::default();
        trust.set_editor(Some(false));
        let folders = vec![d.project.clone()];
        assert_eq!(
            trust.now(&d.agent, &d.project, &folders, &mut |w| panic!("{w}")),
            TrustDecision::Decided {
                trusted: false,
                source: TrustSource::Editor
            }
        );
        trust.set_editor(Some(true));
        assert!(trust
            .now(&d.agent, &d.project, &folders, &mut |w| panic!("{w}"))
            .trusted());
        // Outside the editor's folders the server decides (and asks).
        pending(&trust, &d, &[]);
    }

    #[tokio::test]
    async fn one_question_per_folder_names_what_would_run() {
        let d = dirs();
        let trust = Arc::new(ProjectTrust::default());
        let resources = pending(&trust, &d, &[]);
        let editor = answering(Some("Trust"));
        let (a, b) = tokio::join!(
            trust.ask(
                &d.agent,
                &resources,
                editor.as_ref(),
                Duration::from_secs(5)
            ),
            trust.ask(
                &d.agent,
                &resources,
                editor.as_ref(),
                Duration::from_secs(5)
            ),
        );
        assert!(a && b);
        let asked = lock(&editor.asked).clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(
            asked[0].contains("MCP server \"x\" would start: touch /tmp/marker (.pi/mcp.json)"),
            "{}",
            asked[0]
        );
        // Answered in this process: later sessions are decided without a question.
        assert!(trust
            .now(&d.agent, &d.project, &[], &mut |w| panic!("{w}"))
            .trusted());
        // "Trust" is not saved.
        assert!(!d.agent.path().join("trust.json").exists());
    }

    #[tokio::test]
    async fn trust_always_is_saved_and_a_dismissal_is_no() {
        let d = dirs();
        let trust = ProjectTrust::default();
        let resources = pending(&trust, &d, &[]);
        let dismissed = answering(None);
        assert!(
            !trust
                .ask(
                    &d.agent,
                    &resources,
                    dismissed.as_ref(),
                    Duration::from_secs(5)
                )
                .await
        );
        // Not asked again in this process.
        let again = answering(Some("Trust"));
        assert!(
            !trust
                .ask(&d.agent, &resources, again.as_ref(), Duration::from_secs(5))
                .await
        );
        assert!(lock(&again.asked).is_empty());

        let trust = ProjectTrust::default();
        let always = answering(Some("Trust always"));
        assert!(
            trust
                .ask(
                    &d.agent,
                    &resources,
                    always.as_ref(),
                    Duration::from_secs(5)
                )
                .await
        );
        let saved = TrustStore::new(d.agent.path())
            .lookup(&d.project)
            .expect("trust.json")
            .expect("a decision");
        assert!(saved.trusted);
        // A new server decides from trust.json without asking.
        assert_eq!(
            ProjectTrust::default().now(&d.agent, &d.project, &[], &mut |w| panic!("{w}")),
            TrustDecision::Decided {
                trusted: true,
                source: TrustSource::Saved(d.project.clone())
            }
        );
    }

    #[tokio::test]
    async fn no_answer_in_time_or_no_dialogs_is_no() {
        let d = dirs();
        let trust = ProjectTrust::default();
        let resources = pending(&trust, &d, &[]);
        let slow = answering(Some("Trust"));
        assert!(
            !trust
                .ask(
                    &d.agent,
                    &resources,
                    slow.as_ref(),
                    Duration::from_millis(1)
                )
                .await
        );
        let trust = ProjectTrust::default();
        let mut mute = answering(Some("Trust"));
        Arc::get_mut(&mut mute).expect("unique").dialogs = false;
        assert!(
            !trust
                .ask(&d.agent, &resources, mute.as_ref(), Duration::from_secs(5))
                .await
        );
        assert!(lock(&mute.asked).is_empty());
        let shown = lock(&mute.shown).clone();
        assert!(shown[0].contains("tandem trust"), "{shown:?}");
    }
}
