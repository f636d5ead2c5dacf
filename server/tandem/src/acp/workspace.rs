//! The ACP client as the tools' [`Workspace`]: its file system, its permission prompts and its
//! terminals, each when the client announced it, the disk and local processes otherwise.
//!
//! - Reads go through `fs/read_text_file` when the client can (an unsaved buffer wins over
//!   disk). Binary files, images and very large files are read from disk: the client's method
//!   is for text. A client that fails to read a file the disk has is logged and the disk is
//!   used.
//! - Edits follow the session's [`Mode`]: refused in `read-only`, asked through
//!   `session/request_permission` (with the diff) in `ask`, applied in `accept-edits`. "Always
//!   allow" on an edit switches the session to `accept-edits`, announced with
//!   `current_mode_update`. Applied edits are written through `fs/write_text_file` when the
//!   client can, to disk otherwise.
//! - Commands and paths outside the workspace always ask.
//! - grep, find and ls search the disk: ACP has no method listing the client's open buffers
//!   (`fs/read_text_file` reads one named file), so unsaved text is seen by read only.
//! - Bash runs in a client terminal (`terminal/create` … `wait_for_exit` … `output` …
//!   `release`) when the client has them; its id is sent as the call's content at once.
//!
//! Every question names the tool call it is for (the workspace is told the call) and waits until that
//! call was announced to the client. A `session/cancel` ends open questions at once (as
//! rejected) and kills a running terminal. Client requests other than permission prompts time
//! out, so a client that never answers cannot hang a turn.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use tandem_ai::sync::lock;

use agent_client_protocol::v1::schema::{
    Content, ContentBlock, CreateTerminalRequest, CurrentModeUpdate, Diff, KillTerminalRequest,
    PermissionOption, PermissionOptionKind, ReadTextFileRequest, ReleaseTerminalRequest,
    RequestPermissionOutcome, RequestPermissionRequest, SessionNotification, SessionUpdate,
    Terminal, TerminalExitStatus, TerminalOutputRequest, TextContent, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
    WaitForTerminalExitRequest, WriteTextFileRequest,
};
use agent_client_protocol::{Client, Error, JsonRpcRequest};
use serde_json::json;
use tandem_agent::BoxFuture;
use tandem_coding::{
    ChangeOutcome, CommandEnding, CommandOutcome, CommandRequest, DiskWorkspace, FileChange,
    FileContent, PermissionDecision, PermissionPolicy, PermissionRequest, Workspace,
    WorkspaceError,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::errors::invalid_params;
use super::modes::Mode;
use super::updates::CallExtras;
use tandem_coding::trust::ProtectedResources;
use tandem_protocol::interaction::TrustAnswer;

/// The trust question's option ids.
const TRUST_ONCE: &str = "trust_once";
const TRUST_ALWAYS: &str = "trust_always";
const DONT_TRUST: &str = "dont_trust";

/// The connection to the client.
pub type ClientConnection = agent_client_protocol::v1::ConnectionTo<Client>;

/// How long the client may take to answer a file or terminal request.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a question waits for its call to be announced (the event forwarder is behind).
const ANNOUNCE_WAIT: Duration = Duration::from_secs(5);
/// Files larger than this are read from disk, not through the client.
const CLIENT_READ_LIMIT: u64 = 8 * 1024 * 1024;

/// What the client said it can do at `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCaps {
    /// `fs.readTextFile`.
    pub read: bool,
    /// `fs.writeTextFile`.
    pub write: bool,
    /// `terminal`.
    pub terminal: bool,
    /// `session.compaction`: compactions may be sent as `compaction_update`s.
    pub compaction: bool,
    /// `session.notices`: `notice` updates may be sent.
    pub notices: bool,
    /// `session.configOptions.boolean`: configuration options may be `type: "boolean"`.
    pub boolean_options: bool,
    /// `elicitation.form`: `elicitation/create` forms may be sent (extensions' text dialogs).
    pub elicitation_form: bool,
}

/// How long a question the turn no longer waits for (the turn was cancelled) is left to the
/// client to answer before Tandem cancels it (`$/cancel_request`).
const CANCELLED_QUESTION_GRACE: Duration = Duration::from_secs(30);

/// Hears a mode the workspace chose itself.
pub type ModeListener = Box<dyn Fn(Mode) + Send + Sync>;

/// One session's workspace; see the module docs.
pub struct AcpWorkspace {
    session_id: String,
    cx: ClientConnection,
    caps: ClientCaps,
    roots: Vec<PathBuf>,
    disk: DiskWorkspace,
    mode: Mutex<Mode>,
    turn: Mutex<CancellationToken>,
    terminals: Mutex<HashMap<String, String>>,
    announced: Mutex<HashSet<String>>,
    announced_changed: Notify,
    /// Called when an "always allow" changes the mode.
    on_mode_change: Mutex<Option<ModeListener>>,
}

/// Sends `request` and waits for the answer, at most `CLIENT_TIMEOUT`.
async fn ask_client<R: JsonRpcRequest>(
    cx: &ClientConnection,
    request: R,
    what: &str,
) -> Result<R::Response, WorkspaceError> {
    let sent = cx.send_request(request).block_task();
    match tokio::time::timeout(CLIENT_TIMEOUT, sent).await {
        Ok(Ok(response)) => Ok(response),
        Ok(Err(e)) => Err(WorkspaceError::Client(format!(
            "the client's {what} failed: {}",
            e.message
        ))),
        Err(_) => Err(WorkspaceError::Client(format!(
            "the client did not answer {what} within {} s",
            CLIENT_TIMEOUT.as_secs()
        ))),
    }
}

impl AcpWorkspace {
    /// The workspace of session `session_id`, working in `roots` (the first is the cwd).
    pub fn new(
        session_id: &str,
        cx: ClientConnection,
        caps: ClientCaps,
        roots: Vec<PathBuf>,
        mode: Mode,
    ) -> Self {
        AcpWorkspace {
            session_id: session_id.to_string(),
            cx,
            caps,
            disk: DiskWorkspace::new(roots.clone(), PermissionPolicy::AllowAll),
            roots,
            mode: Mutex::new(mode),
            turn: Mutex::new(CancellationToken::new()),
            terminals: Mutex::new(HashMap::new()),
            announced: Mutex::new(HashSet::new()),
            announced_changed: Notify::new(),
            on_mode_change: Mutex::new(None),
        }
    }

    /// Hears mode changes the workspace makes itself ("always allow" on an edit).
    pub fn set_mode_listener(&self, listener: ModeListener) {
        *lock(&self.on_mode_change) = Some(listener);
    }

    /// What the client announced it can do.
    pub fn caps(&self) -> ClientCaps {
        self.caps
    }

    /// The session's mode.
    pub fn mode(&self) -> Mode {
        *lock(&self.mode)
    }

    /// Sets the mode (the client's `session/set_mode`).
    pub fn set_mode(&self, mode: Mode) {
        *lock(&self.mode) = mode;
    }

    /// Starts a turn: questions of the previous one are over.
    pub fn begin_turn(&self) {
        *lock(&self.turn) = CancellationToken::new();
        lock(&self.terminals).clear();
    }

    /// Ends the turn's open questions and kills its terminals (`session/cancel`).
    pub fn cancel_turn(&self) {
        lock(&self.turn).cancel();
    }

    fn turn(&self) -> CancellationToken {
        lock(&self.turn).clone()
    }

    /// Notes that `tool_call` was sent for `id`.
    pub fn mark_announced(&self, id: &str) {
        lock(&self.announced).insert(id.to_string());
        self.announced_changed.notify_waiters();
    }

    async fn wait_announced(&self, id: &str) {
        let wait = async {
            loop {
                let changed = self.announced_changed.notified();
                if lock(&self.announced).contains(id) {
                    return;
                }
                changed.await;
            }
        };
        let _ = tokio::time::timeout(ANNOUNCE_WAIT, wait).await;
    }

    fn notify(&self, update: SessionUpdate) {
        let note = SessionNotification::new(self.session_id.clone(), update);
        if let Err(e) = self.cx.send_notification(note) {
            tracing::warn!(
                "session {}: could not send an update: {}",
                self.session_id,
                e.message
            );
        }
    }

    /// Reports call `call` running (`in_progress`): approved, or applied without a question.
    fn running(&self, call: &str) {
        self.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call.to_string(),
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
        )));
    }

    /// Asks the client about `fields` (for the current call, `pending` while the question is
    /// open, `in_progress` once allowed); `Reject` when the turn is cancelled or the client
    /// fails.
    async fn permission(&self, call: &str, fields: ToolCallUpdateFields) -> PermissionDecision {
        let fields = fields.status(ToolCallStatus::Pending);
        let options = vec![
            PermissionOption::new("allow_once", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                "allow_always",
                "Always allow",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce),
        ];
        match self.choose(Some(call), fields, options).await {
            Ok(id) => match id.as_str() {
                "allow_once" => {
                    self.running(call);
                    PermissionDecision::AllowOnce
                }
                "allow_always" => {
                    self.running(call);
                    PermissionDecision::AllowAlways
                }
                _ => PermissionDecision::Reject { reason: None },
            },
            Err(reason) => PermissionDecision::Reject {
                reason: Some(reason),
            },
        }
    }

    /// Asks whether to trust the session's folder ([`crate::acp`] does it before the first
    /// turn that would use the project's configuration): the question lists what would run.
    /// Any answer but a trust option — a rejection, a cancelled turn, a failing client — is no.
    pub async fn ask_trust(&self, resources: &ProtectedResources) -> TrustAnswer {
        let mut text =
            "This folder has project configuration that Tandem uses only if you trust it:\n"
                .to_string();
        for line in resources.describe() {
            text.push_str(&format!("- {line}\n"));
        }
        text.push_str(
            "Until you trust it, Tandem ignores these (context files such as AGENTS.md still \
             load). \"Trust always\" saves the decision in trust.json, shared with pi.",
        );
        let fields = ToolCallUpdateFields::new()
            .title(format!("Trust {}?", resources.dir.display()))
            .kind(ToolKind::Other)
            .locations(vec![ToolCallLocation::new(resources.dir.clone())])
            .content(vec![ToolCallContent::Content(Content::new(
                ContentBlock::Text(TextContent::new(text)),
            ))]);
        let options = vec![
            PermissionOption::new(TRUST_ONCE, "Trust", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                TRUST_ALWAYS,
                "Trust always",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(DONT_TRUST, "Don't trust", PermissionOptionKind::RejectOnce),
        ];
        match self.choose(None, fields, options).await.as_deref() {
            Ok(TRUST_ONCE) => TrustAnswer::Trust,
            Ok(TRUST_ALWAYS) => TrustAnswer::TrustAlways,
            _ => TrustAnswer::DontTrust,
        }
    }

    /// Asks the user to choose one of `choices` (an extension's `select` or `confirm`) as a
    /// `session/request_permission` outside any tool call: `title` is the request's title,
    /// `detail` its text, each choice an option of kind `kind(index)`. The index chosen;
    /// `None` when the client cancelled, failed, or the turn was cancelled.
    pub async fn ask_choice(
        &self,
        title: &str,
        detail: Option<&str>,
        choices: &[String],
        kind: impl Fn(usize) -> PermissionOptionKind,
    ) -> Option<usize> {
        let mut fields = ToolCallUpdateFields::new()
            .title(title.to_string())
            .kind(ToolKind::Other)
            .status(ToolCallStatus::Pending);
        if let Some(detail) = detail.filter(|d| !d.is_empty()) {
            fields = fields.content(vec![ToolCallContent::Content(Content::new(
                ContentBlock::Text(TextContent::new(detail.to_string())),
            ))]);
        }
        let options = choices
            .iter()
            .enumerate()
            .map(|(i, choice)| {
                PermissionOption::new(format!("choice-{i}"), choice.clone(), kind(i))
            })
            .collect();
        let chosen = self.choose(None, fields, options).await.ok()?;
        let index: usize = chosen.strip_prefix("choice-")?.parse().ok()?;
        (index < choices.len()).then_some(index)
    }

    /// Sends `session/request_permission` for `fields` (named after tool call `call`, or a new
    /// id outside one) and returns the chosen option's id; an error says why there is none.
    async fn choose(
        &self,
        call: Option<&str>,
        fields: ToolCallUpdateFields,
        options: Vec<PermissionOption>,
    ) -> Result<String, String> {
        let call_id = match call {
            Some(id) => {
                self.wait_announced(id).await;
                id.to_string()
            }
            // Not from a tool call: a synthetic id the client has not seen.
            None => format!("permission-{}", uuid_like()),
        };
        let request = RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new(call_id, fields),
            options,
        );
        let turn = self.turn();
        let mut sent = Box::pin(self.cx.send_request(request).block_task());
        let answer = tokio::select! {
            biased;
            answer = &mut sent => answer,
            _ = turn.cancelled() => {
                // After `session/cancel` the client answers its open questions itself
                // (`cancelled`), and may already have: dropping the request now would send a
                // `$/cancel_request` for an answered request. Its answer is awaited aside; one
                // that never comes is cancelled after a grace period.
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(CANCELLED_QUESTION_GRACE, sent).await;
                });
                return Err("the turn was cancelled".into());
            }
        };
        match answer {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => {
                    Ok(selected.option_id.0.to_string())
                }
                RequestPermissionOutcome::Cancelled => {
                    Err("the permission request was cancelled".into())
                }
                _ => Err("the client answered with an unknown outcome".into()),
            },
            Err(e) => Err(format!(
                "the client failed to answer the permission request: {}",
                e.message
            )),
        }
    }

    async fn read_through_client(&self, path: &Path) -> Result<String, WorkspaceError> {
        let request = ReadTextFileRequest::new(self.session_id.clone(), path.to_path_buf());
        let what = format!("fs/read_text_file for {}", path.display());
        Ok(ask_client(&self.cx, request, &what).await?.content)
    }

    async fn apply(&self, call: &str, change: FileChange) -> Result<ChangeOutcome, WorkspaceError> {
        if !self.caps.write {
            return self.disk.propose(call, change).await;
        }
        // The path must still lead where it was approved to, after any question.
        change.verify_target()?;
        let mut outcome = ChangeOutcome::Applied;
        let mut new_text = change.new_text.clone();
        if self.caps.read {
            // The client writes whole files: if the user changed the buffer since the tool read
            // it (a question was open, say), the change is placed on the text as it is now, so
            // the write keeps their typing; a region they changed is a conflict, nothing
            // written. (ACP has no versions: the window left is one client round trip.)
            let current = self.read_through_client(&change.path).await.ok();
            if let (Some(old), Some(now)) = (&change.old_text, &current) {
                if old != now {
                    let shown = change.path.display().to_string();
                    match tandem_coding::workspace::rebase::rebase(&change, Some(now), &shown) {
                        Ok(rebased) => {
                            new_text = rebased.new_text.clone();
                            outcome = ChangeOutcome::Rebased(Box::new(FileChange {
                                old_text: Some(now.clone()),
                                new_text: rebased.new_text,
                                edits: rebased.edits,
                                ..change.clone()
                            }));
                        }
                        Err(conflict) => {
                            return Ok(ChangeOutcome::Conflict {
                                detail: conflict.detail,
                            })
                        }
                    }
                }
            }
        }
        let request =
            WriteTextFileRequest::new(self.session_id.clone(), change.path.clone(), new_text);
        let what = format!("fs/write_text_file for {}", change.path.display());
        ask_client(&self.cx, request, &what).await?;
        Ok(outcome)
    }

    async fn propose_change(
        &self,
        call: &str,
        change: FileChange,
    ) -> Result<ChangeOutcome, WorkspaceError> {
        let verb = if change.old_text.is_some() {
            "Edit"
        } else {
            "Create"
        };
        match self.mode() {
            Mode::ReadOnly => Ok(ChangeOutcome::Rejected {
                reason: Some(
                    "the session is in read-only mode; switch the mode to let Tandem change files"
                        .into(),
                ),
            }),
            Mode::AcceptEdits => {
                self.wait_announced(call).await;
                self.running(call);
                self.apply(call, change).await
            }
            Mode::Ask => {
                let fields = ToolCallUpdateFields::new()
                    .title(format!("{verb} {}", change.path.display()))
                    .kind(ToolKind::Edit)
                    .locations(vec![ToolCallLocation::new(change.path.clone())])
                    .content(vec![ToolCallContent::Diff(
                        Diff::new(change.path.clone(), change.new_text.clone())
                            .old_text(change.old_text.clone()),
                    )]);
                match self.permission(call, fields).await {
                    PermissionDecision::AllowOnce => self.apply(call, change).await,
                    PermissionDecision::AllowAlways => {
                        self.set_mode(Mode::AcceptEdits);
                        self.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                            Mode::AcceptEdits.id(),
                        )));
                        if let Some(listener) = lock(&self.on_mode_change).as_ref() {
                            listener(Mode::AcceptEdits);
                        }
                        self.apply(call, change).await
                    }
                    PermissionDecision::Reject { reason } => Ok(ChangeOutcome::Rejected {
                        reason: Some(reason.unwrap_or_else(|| "the user rejected it".into())),
                    }),
                }
            }
        }
    }

    async fn read_file(&self, path: &Path) -> Result<FileContent, WorkspaceError> {
        if !self.caps.read {
            return self.disk.read(path).await;
        }
        let meta = tokio::fs::metadata(path).await;
        if let Ok(meta) = &meta {
            if meta.is_dir() {
                return Err(WorkspaceError::IsDirectory(path.to_path_buf()));
            }
            if meta.len() > CLIENT_READ_LIMIT || looks_binary(path).await {
                return Ok(FileContent::Disk(path.to_path_buf()));
            }
        }
        match self.read_through_client(path).await {
            Ok(text) => Ok(FileContent::Text(text)),
            Err(e) if meta.is_ok() => {
                tracing::warn!(
                    "session {}: {e}; reading {} from disk",
                    self.session_id,
                    path.display()
                );
                Ok(FileContent::Disk(path.to_path_buf()))
            }
            Err(_) => Err(WorkspaceError::NotFound(path.to_path_buf())),
        }
    }

    async fn run_in_terminal(
        &self,
        call: &str,
        request: CommandRequest,
        cancel: CancellationToken,
    ) -> Result<CommandOutcome, WorkspaceError> {
        let create = CreateTerminalRequest::new(
            self.session_id.clone(),
            request.shell.display().to_string(),
        )
        .args(vec!["-c".to_string(), request.script.clone()])
        .cwd(request.cwd.clone())
        .output_byte_limit(request.output_limit as u64);
        let terminal_id = ask_client(&self.cx, create, "terminal/create")
            .await?
            .terminal_id;
        lock(&self.terminals).insert(call.to_string(), terminal_id.0.to_string());
        self.wait_announced(call).await;
        self.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call.to_string(),
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .content(vec![ToolCallContent::Terminal(Terminal::new(
                    terminal_id.clone(),
                ))])
                .raw_input(json!({"command": request.script, "cwd": request.cwd})),
        )));
        let sid = self.session_id.clone();
        let wait = self
            .cx
            .send_request(WaitForTerminalExitRequest::new(
                sid.clone(),
                terminal_id.clone(),
            ))
            .block_task();
        let turn = self.turn();
        let timeout = async {
            match request.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let mut exit: Option<TerminalExitStatus> = None;
        let ending = tokio::select! {
            waited = wait => match waited {
                Ok(r) => {
                    exit = Some(r.exit_status);
                    None
                }
                Err(e) => {
                    self.release(&terminal_id).await;
                    return Err(WorkspaceError::Client(format!(
                        "the client's terminal/wait_for_exit failed: {}", e.message
                    )));
                }
            },
            _ = cancel.cancelled() => Some(CommandEnding::Aborted),
            _ = turn.cancelled() => Some(CommandEnding::Aborted),
            _ = timeout => Some(CommandEnding::TimedOut),
        };
        if ending.is_some() {
            let kill = KillTerminalRequest::new(sid.clone(), terminal_id.clone());
            if let Err(e) = ask_client(&self.cx, kill, "terminal/kill").await {
                tracing::warn!("session {sid}: {e}");
            }
        }
        let output = ask_client(
            &self.cx,
            TerminalOutputRequest::new(sid.clone(), terminal_id.clone()),
            "terminal/output",
        )
        .await;
        self.release(&terminal_id).await;
        let output = output?;
        let ending = ending.unwrap_or_else(|| {
            let status = exit.or(output.exit_status.clone());
            CommandEnding::Exited {
                code: status
                    .as_ref()
                    .and_then(|s| s.exit_code)
                    .and_then(|c| i32::try_from(c).ok()),
                signal: status.and_then(|s| s.signal),
            }
        });
        Ok(CommandOutcome {
            output: output.output.into_bytes(),
            truncated: output.truncated,
            ending,
        })
    }

    async fn release(&self, terminal_id: &agent_client_protocol::v1::schema::TerminalId) {
        let release = ReleaseTerminalRequest::new(self.session_id.clone(), terminal_id.clone());
        if let Err(e) = ask_client(&self.cx, release, "terminal/release").await {
            tracing::warn!("session {}: {e}", self.session_id);
        }
    }
}

/// A session's workspace roots: `cwd` (checked already), then the client's
/// `additionalDirectories`, each of which must be an absolute path to an existing directory.
/// They are taken with every symlink resolved, as the tools compare resolved paths with them;
/// a root given twice counts once. Every root has the same rules: paths that resolve outside all
/// of them (through `..` or a symlink) need the user's permission.
pub fn workspace_roots(cwd: &Path, extra: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut roots = vec![cwd.to_path_buf()];
    for dir in extra {
        if !dir.is_absolute() {
            return Err(invalid_params(format!(
                "additionalDirectories: `{}` is not an absolute path; give each directory's \
                 absolute path",
                dir.display()
            )));
        }
        let real = std::fs::canonicalize(dir)
            .ok()
            .filter(|real| real.is_dir())
            .ok_or_else(|| {
                invalid_params(format!(
                    "additionalDirectories: `{}` is not an existing directory",
                    dir.display()
                ))
            })?;
        if !roots.contains(&real) {
            roots.push(real);
        }
    }
    Ok(roots)
}

/// A short random hex string.
fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}", nanos)
}

/// True when the file's start has a NUL byte (images, archives, executables).
async fn looks_binary(path: &Path) -> bool {
    use tokio::io::AsyncReadExt;
    let Ok(mut file) = tokio::fs::File::open(path).await else {
        return false;
    };
    let mut head = vec![0u8; 8192];
    let Ok(n) = file.read(&mut head).await else {
        return false;
    };
    head[..n].contains(&0) || tandem_coding::tools::image_mime(&head[..n]).is_some()
}

impl CallExtras for AcpWorkspace {
    fn terminal(&self, call_id: &str) -> Option<String> {
        lock(&self.terminals).get(call_id).cloned()
    }
}

impl Workspace for AcpWorkspace {
    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<FileContent, WorkspaceError>> {
        Box::pin(self.read_file(path))
    }

    fn propose<'a>(
        &'a self,
        call: &'a str,
        change: FileChange,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        Box::pin(self.propose_change(call, change))
    }

    fn ask_permission<'a>(
        &'a self,
        call: &'a str,
        request: PermissionRequest,
    ) -> BoxFuture<'a, PermissionDecision> {
        let title = request.title();
        let fields = match &request {
            PermissionRequest::Bash { command, cwd } => ToolCallUpdateFields::new()
                .title(title)
                .kind(ToolKind::Execute)
                .raw_input(json!({"command": command, "cwd": cwd}))
                .content(vec![ToolCallContent::Content(Content::new(
                    ContentBlock::Text(TextContent::new(format!("```sh\n{command}\n```"))),
                ))]),
            PermissionRequest::OutsideWorkspace { path, write } => ToolCallUpdateFields::new()
                .title(title)
                .kind(if *write {
                    ToolKind::Edit
                } else {
                    ToolKind::Read
                })
                .locations(vec![ToolCallLocation::new(path.clone())]),
            // Asked in every mode (accept-edits too).
            PermissionRequest::ProtectedPath { path, risk } => ToolCallUpdateFields::new()
                .title(title)
                .kind(ToolKind::Edit)
                .locations(vec![ToolCallLocation::new(path.clone())])
                .content(vec![ToolCallContent::Content(Content::new(
                    ContentBlock::Text(TextContent::new(format!("Careful: {risk}."))),
                ))]),
        };
        Box::pin(self.permission(call, fields))
    }

    fn run_command<'a>(
        &'a self,
        call: &'a str,
        request: CommandRequest,
        cancel: CancellationToken,
    ) -> Option<BoxFuture<'a, Result<CommandOutcome, WorkspaceError>>> {
        if !self.caps.terminal {
            return None;
        }
        Some(Box::pin(self.run_in_terminal(call, request, cancel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_resolved_checked_and_counted_once() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (cwd, extra) = (base.join("cwd"), base.join("extra"));
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&extra).unwrap();
        std::os::unix::fs::symlink(&extra, base.join("alias")).unwrap();
        // Through a symlink, twice, and the cwd again: the cwd and the real extra, once each.
        let roots =
            workspace_roots(&cwd, &[base.join("alias"), extra.clone(), cwd.clone()]).unwrap();
        assert_eq!(roots, vec![cwd.clone(), extra.clone()]);
        std::fs::write(base.join("file"), "x").unwrap();
        for (bad, says) in [
            (PathBuf::from("rel"), "`rel` is not an absolute path"),
            (base.join("gone"), "is not an existing directory"),
            (base.join("file"), "is not an existing directory"),
        ] {
            let e = workspace_roots(&cwd, &[bad]).unwrap_err();
            assert_eq!(e.code, agent_client_protocol::ErrorCode::INVALID_PARAMS);
            assert!(format!("{e:?}").contains(says), "{e:?}");
        }
    }
}
