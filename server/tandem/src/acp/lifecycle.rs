//! The ends of a session's life in the ACP agent: `session/resume`, `session/close`,
//! `session/delete` and `logout`; the `session_info_update`s that give the client a session's
//! title and last activity; and requests the client cancels with `$/cancel_request`.
//!
//! `session/delete` removes only a session file that `session/list` shows for a folder this
//! client used (in `session/new`, `load`, `resume` or `list`): the id must match the header of a
//! regular `*.jsonl` file (not a symbolic link) directly in that folder's session directory,
//! and no other process may hold the file. A session open in this connection is closed first,
//! as `session/close` would. Anything else is refused with -32602 naming the reason.
//!
//! `logout` never touches the keys (environment variables, pi's auth.json and models.json stay as
//! they are): it closes this connection's sessions and refuses new ones (-32000, "authentication
//! required") until the client calls `authenticate` again, which checks the keys afresh.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tandem_ai::sync::lock;

use agent_client_protocol::v1::schema::{
    CloseSessionRequest, CloseSessionResponse, DeleteSessionRequest, DeleteSessionResponse,
    LogoutResponse, ResumeSessionRequest, SessionInfoUpdate, SessionUpdate,
};
use agent_client_protocol::{Error, RequestCancellation};
use serde_json::Value;
use tandem_agent::AgentMessage;
use tandem_ai::types::{now_millis, Message};
use tandem_coding::session::{self as sessions, entry::EntryKind, time::format_iso};

use super::errors::{internal, invalid_params, unknown_session};
use super::live::AcpSession;
use super::sessions::{agent_dir, one_line, TITLE_CHARS};
use super::workspace::ClientConnection;
use super::{AcpAgent, AUTH_METHOD, SHUTDOWN_WAIT};

/// The longest session id `session/delete` looks for.
const MAX_ID_LEN: usize = 200;

impl AcpAgent {
    /// `session/resume`: the session as `session/load` opens it, without its history.
    pub(super) async fn resume_session(
        &self,
        request: ResumeSessionRequest,
        cx: ClientConnection,
        cancel: &RequestCancellation,
    ) -> Result<Arc<AcpSession>, Error> {
        let opened = self
            .open_stored(
                request.session_id.0.to_string(),
                &request.cwd,
                &request.mcp_servers,
                request.additional_directories.clone(),
                cx,
            )
            .await?;
        self.unless_cancelled(opened, cancel).await
    }

    /// A session a request set up, unless the client cancelled the request meanwhile: then a
    /// session this request started (`fresh`) is ended again and the answer is -32800.
    pub(super) async fn unless_cancelled(
        &self,
        (session, fresh): (Arc<AcpSession>, bool),
        cancel: &RequestCancellation,
    ) -> Result<Arc<AcpSession>, Error> {
        if !cancel.is_cancelled() {
            return Ok(session);
        }
        if fresh {
            lock(&self.sessions).remove(&session.id);
            self.end_sessions(vec![session]).await;
        }
        Err(Error::request_cancelled())
    }

    /// `session/close`: the running turn is cancelled (its prompt answers `cancelled`, the
    /// partial answer saved), then the session's MCP and language servers stop and the session
    /// is forgotten.
    pub(super) async fn close_session(
        &self,
        request: CloseSessionRequest,
    ) -> Result<CloseSessionResponse, Error> {
        let id = request.session_id.0.to_string();
        let session = lock(&self.sessions)
            .remove(&id)
            .ok_or_else(|| unknown_session(&id))?;
        self.close(&id, session).await;
        Ok(CloseSessionResponse::new())
    }

    /// Ends `session` (already out of the map) and waits until its file is free.
    async fn close(&self, id: &str, session: Arc<AcpSession>) {
        let file = session.session.session_file();
        self.end_sessions(vec![session]).await;
        // The last tasks of the turn let go of the session's file in a moment; the answer waits
        // for that (at most [`SHUTDOWN_WAIT`]), so the file may then be deleted or opened by
        // another program.
        if let Some(file) = file {
            if !crate::host::turns::file_released(&file, SHUTDOWN_WAIT).await {
                tracing::warn!(
                    "session {id}: its file {} is still held {SHUTDOWN_WAIT:?} after \
                     session/close",
                    file.display()
                );
            }
        }
    }

    /// Ends `sessions` (already out of the map): cancels their turns, waits (at most
    /// [`SHUTDOWN_WAIT`] in all) for them to end with their answers saved and their updates
    /// out, writes the file of a new session that has a prompt, stops the MCP and language
    /// servers.
    pub(super) async fn end_sessions(&self, sessions: Vec<Arc<AcpSession>>) {
        for s in &sessions {
            s.cancel();
        }
        let deadline = tokio::time::Instant::now() + SHUTDOWN_WAIT;
        for s in &sessions {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if !s.live.idle(left).await {
                tracing::warn!(
                    "session {}: its turn did not end within {SHUTDOWN_WAIT:?}",
                    s.id
                );
            }
        }
        for s in &sessions {
            s.live.save_started();
            lock(&self.titles).remove(&s.id);
        }
        for s in &sessions {
            let extensions = lock(&s.extensions).take();
            if let Some(extensions) = extensions {
                extensions.shutdown().await;
            }
            let mcp = std::mem::take(&mut *lock(&s.mcp));
            mcp.shutdown().await;
            let languages = lock(&s.languages).take();
            if let Some(languages) = languages {
                languages.shutdown().await;
            }
        }
    }

    /// `session/delete`: removes the session's file (see the module's rules).
    pub(super) async fn delete_session(
        &self,
        request: DeleteSessionRequest,
    ) -> Result<DeleteSessionResponse, Error> {
        let id = request.session_id.0.to_string();
        check_id(&id)?;
        // A user deleting the thread they are in expects it gone: it is closed first (its turn
        // cancelled, what it said saved), then deleted.
        let open = lock(&self.sessions).remove(&id);
        if let Some(session) = open {
            self.close(&id, session).await;
        }
        let cwds: Vec<PathBuf> = lock(&self.cwds).iter().cloned().collect();
        let options = self.options.clone();
        tokio::task::spawn_blocking(move || {
            let agent_dir = agent_dir()?;
            let mut dirs: Vec<PathBuf> = cwds
                .iter()
                .map(|cwd| options.session_dir(&agent_dir, cwd))
                .collect();
            dirs.sort();
            dirs.dedup();
            delete_from(&dirs, &id)
        })
        .await
        .unwrap_or_else(|e| Err(internal(format!("deleting the session failed: {e}"))))?;
        Ok(DeleteSessionResponse::new())
    }

    /// `logout`: closes every session and refuses new ones until `authenticate`; the keys stay.
    pub(super) async fn logout(&self) -> Result<LogoutResponse, Error> {
        self.logged_out.store(true, Ordering::Release);
        let sessions: Vec<_> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        self.end_sessions(sessions).await;
        Ok(LogoutResponse::new())
    }

    /// Refuses to set a session up after `logout` until the client authenticates again.
    pub(super) fn check_logged_in(&self) -> Result<(), Error> {
        if self.logged_out.load(Ordering::Acquire) {
            return Err(Error::auth_required().data(Value::String(format!(
                "logged out: call authenticate (method `{AUTH_METHOD}`) before opening sessions \
                 again"
            ))));
        }
        Ok(())
    }

    /// Remembers a folder the client used: `session/delete` may remove its sessions.
    pub(super) fn remember_cwd(&self, cwd: &Path) {
        lock(&self.cwds).insert(cwd.to_path_buf());
    }

    /// Tells the client the session's title and `updated`, the time of its last activity, when
    /// there is either to tell. The title is announced once per session (again only when its
    /// recorded name changes): its recorded name, else the first line of its first prompt
    /// (`prompt` when the session has none yet). Nothing for a session no longer open.
    pub(super) fn announce_info(
        &self,
        session: &AcpSession,
        prompt: Option<&str>,
        updated: Option<String>,
    ) {
        // A closed session (its turn answering after session/close) has nothing more to say.
        if !lock(&self.sessions).contains_key(&session.id) {
            return;
        }
        let (name, first) = title_of(session);
        let title = {
            let mut titles = lock(&self.titles);
            let title = match titles.get(&session.id) {
                Some(told) => name.filter(|n| n != told),
                None => name
                    .or(first)
                    .or_else(|| prompt.map(|p| one_line(p, TITLE_CHARS)))
                    .filter(|t| !t.is_empty()),
            };
            if let Some(title) = &title {
                titles.insert(session.id.clone(), title.clone());
            }
            title
        };
        if title.is_none() && updated.is_none() {
            return;
        }
        let mut info = SessionInfoUpdate::new();
        if let Some(title) = title {
            info = info.title(title);
        }
        if let Some(updated) = updated {
            info = info.updated_at(updated);
        }
        session.notify(SessionUpdate::SessionInfoUpdate(info));
    }
}

/// Now in ISO 8601, as ACP's `updatedAt`.
pub(super) fn now_iso() -> String {
    format_iso(now_millis())
}

/// The time of the session's last entry, as ACP's `updatedAt`.
pub(super) fn last_activity(session: &AcpSession) -> Option<String> {
    session
        .session
        .with_session(|m| m.leaf_entry().map(|e| e.timestamp.clone()))
}

/// The session's recorded name, and the first line of its first prompt.
fn title_of(session: &AcpSession) -> (Option<String>, Option<String>) {
    session.session.with_session(|m| {
        let name = m.session_name().map(|n| one_line(n, usize::MAX));
        let first = m.entries().iter().find_map(|e| match &e.kind {
            EntryKind::Message {
                message: AgentMessage::Llm(Message::User(user)),
            } => Some(one_line(&user.content.text(), TITLE_CHARS)),
            _ => None,
        });
        (name, first)
    })
}

/// A session id `session/delete` may look for: not empty, not too long, and nothing that could
/// name a path (separators, `..`, control characters).
fn check_id(id: &str) -> Result<(), Error> {
    let bad = if id.trim().is_empty() {
        Some("it is empty")
    } else if id.len() > MAX_ID_LEN {
        Some("it is too long")
    } else if id.contains(['/', '\\']) || id.contains("..") {
        Some("it contains a path separator or `..`")
    } else if id.chars().any(char::is_control) {
        Some("it contains control characters")
    } else {
        None
    };
    match bad {
        Some(why) => Err(invalid_params(format!(
            "invalid session id {}: {why}; pass a sessionId from session/list",
            Value::String(id.chars().take(MAX_ID_LEN).collect())
        ))),
        None => Ok(()),
    }
}

/// Deletes the files of session `id` found directly in `dirs` (session directories), after
/// checking each one; refuses when there is none or one may not be deleted. Blocking.
fn delete_from(dirs: &[PathBuf], id: &str) -> Result<(), Error> {
    let mut found = Vec::new();
    for dir in dirs {
        for s in sessions::list_sessions(dir).sessions {
            if s.id == id {
                found.push((dir.clone(), s.path));
            }
        }
    }
    if found.is_empty() {
        let searched: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(invalid_params(format!(
            "no session {id} in the session folders of the directories this client used ({}); \
             session/delete removes only sessions session/list shows for a cwd the client used",
            if searched.is_empty() {
                "none yet".to_string()
            } else {
                searched.join(", ")
            }
        )));
    }
    // Every file is checked before any is removed.
    let mut held = Vec::new();
    for (dir, path) in &found {
        held.push((path, checked_file(dir, path, id)?));
    }
    for (path, _lock) in held {
        std::fs::remove_file(path).map_err(|e| {
            internal(format!(
                "could not delete session file {}: {e}",
                path.display()
            ))
        })?;
    }
    Ok(())
}

/// Opens and locks the file of session `id` at `path` after checking that it is a regular file
/// (not a link) directly in `dir` whose header names `id`, and that no other process writes it.
fn checked_file(dir: &Path, path: &Path, id: &str) -> Result<std::fs::File, Error> {
    let refuse = |why: String| invalid_params(format!("will not delete {}: {why}", path.display()));
    let meta = std::fs::symlink_metadata(path).map_err(|e| refuse(e.to_string()))?;
    if !meta.file_type().is_file() {
        return Err(refuse("it is not a regular file (a link?)".to_string()));
    }
    let inside = match (std::fs::canonicalize(dir), path.parent()) {
        (Ok(dir), Some(parent)) => std::fs::canonicalize(parent).is_ok_and(|p| p == dir),
        _ => false,
    };
    if !inside || path.extension().is_none_or(|x| x != "jsonl") {
        return Err(refuse(format!(
            "it is not a session file of {}",
            dir.display()
        )));
    }
    let file = match sessions::claim_file(path) {
        sessions::Claim::Held(file) => file,
        sessions::Claim::Busy => {
            return Err(refuse(
                "another process has the session open; close it there first".to_string(),
            ))
        }
        sessions::Claim::Unavailable => {
            return Err(refuse("it cannot be opened for writing".to_string()))
        }
    };
    // Read again under the lock: the file must still be the session asked for.
    match sessions::session_info(path) {
        Ok(info) if info.id == id => Ok(file),
        _ => Err(refuse(format!("its header no longer names session {id}"))),
    }
}

/// The folders a connection used, for `session/delete`.
pub(super) type UsedFolders = HashSet<PathBuf>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_name_paths_are_refused() {
        for id in [
            "",
            "  ",
            "..",
            "a/../b",
            "a/b",
            "a\\b",
            "x\u{0}y",
            "line\nbreak",
        ] {
            let e = check_id(id).expect_err(id);
            assert_eq!(i32::from(e.code), -32602, "{id:?}");
        }
        assert!(check_id(&"a".repeat(MAX_ID_LEN + 1)).is_err());
        for id in [
            "01a22b4d-25d5-77de-8d60-df9ef5711e8b",
            "my-session_2",
            "v1.2",
        ] {
            assert!(check_id(id).is_ok(), "{id:?}");
        }
    }

    #[test]
    fn delete_refuses_links_and_files_of_other_folders_and_finds_nothing_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        let header = |id: &str| {
            format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}}\n")
        };
        let outside = dir.path().join("outside.jsonl");
        std::fs::write(&outside, header("linked")).unwrap();
        std::os::unix::fs::symlink(&outside, sessions.join("link.jsonl")).unwrap();
        std::fs::write(sessions.join("real.jsonl"), header("real")).unwrap();
        let e = delete_from(std::slice::from_ref(&sessions), "linked").expect_err("a link");
        assert!(
            format!("{:?}", e.data).contains("not a regular file"),
            "{e:?}"
        );
        assert!(outside.exists() && sessions.join("link.jsonl").exists());
        let e = delete_from(&[], "real").expect_err("no folders used");
        assert!(format!("{:?}", e.data).contains("none yet"), "{e:?}");
        delete_from(std::slice::from_ref(&sessions), "real").unwrap();
        assert!(!sessions.join("real.jsonl").exists());
    }
}
