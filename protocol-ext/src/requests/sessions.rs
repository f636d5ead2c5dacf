//! Sessions: `tandem/sessions/new`, `list`, `open`, `fork`, `entries`.
//!
//! A live session's id is the id in its session file's header, so an entry of
//! `tandem/sessions/list` and a live session can be matched by id. Files are pi's JSONL v3
//! sessions at pi's paths, so `pi --session <path>` opens what Tandem wrote and vice versa.

use serde::{Deserialize, Serialize};

use crate::ids::SessionId;
use crate::methods::{self, Request};

/// The result of the requests that make a session live: `{session}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionResult {
    /// The live session.
    pub session: SessionId,
}

/// `tandem/sessions/new` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsNewParams {
    /// Working directory (an absolute path); absent → the first workspace folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

impl Request for SessionsNewParams {
    const METHOD: &'static str = methods::SESSIONS_NEW;
    type Result = SessionResult;
}

/// `tandem/sessions/list` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsListParams {
    /// Whose sessions (an absolute path); absent → the first workspace folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// True → every project's sessions, ignoring `cwd`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub all: bool,
}

/// One stored session, as `tandem/sessions/list` returns it (newest `modified` first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session id (the header's `id`).
    pub id: String,
    /// The session file's absolute path (pass it to `tandem/sessions/open`).
    pub path: String,
    /// The working directory it was created in (empty for old files that lack it).
    pub cwd: String,
    /// The name given to it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The file it was forked from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_path: Option<String>,
    /// Creation time, ISO 8601 UTC (`2025-06-01T09:30:00.000Z`).
    pub created: String,
    /// Last activity, ISO 8601 UTC.
    pub modified: String,
    /// Messages stored (all roles, all branches).
    pub message_count: u64,
    /// The first user message's text, or `(no messages)`.
    pub first_message: String,
}

impl Request for SessionsListParams {
    const METHOD: &'static str = methods::SESSIONS_LIST;
    type Result = Vec<SessionInfo>;
}

/// `tandem/sessions/open` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsOpenParams {
    /// A session file (absolute path), e.g. from `tandem/sessions/list`.
    pub path: String,
}

impl Request for SessionsOpenParams {
    const METHOD: &'static str = methods::SESSIONS_OPEN;
    type Result = SessionResult;
}

/// `tandem/sessions/fork` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionsForkParams {
    /// The session to fork.
    pub session: SessionId,
    /// The entry to fork at (the new session holds the path from the root to it); absent →
    /// the current leaf, i.e. a copy of the current branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
}

impl Request for SessionsForkParams {
    const METHOD: &'static str = methods::SESSIONS_FORK;
    type Result = SessionResult;
}

/// `tandem/sessions/entries` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsEntriesParams {
    /// The live session.
    pub session: SessionId,
}

/// One entry of a session's current branch, as `tandem/sessions/entries` returns it (root
/// first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryInfo {
    /// The entry id (pass it to `tandem/sessions/fork` as `entryId`).
    pub id: String,
    /// The entry's type in the session file: `message`, `model_change`, `compaction`, ….
    #[serde(rename = "type")]
    pub kind: String,
    /// For a `message` entry: the message's role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The text a user would recognise it by (a message's text, a compaction's summary),
    /// at most 200 characters; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// When it was written, ISO 8601 UTC.
    pub timestamp: String,
}

impl Request for SessionsEntriesParams {
    const METHOD: &'static str = methods::SESSIONS_ENTRIES;
    type Result = Vec<EntryInfo>;
}

fn is_false(b: &bool) -> bool {
    !*b
}
