//! Application error codes and the error object the server answers with.
//!
//! JSON-RPC reserves -32768..-32000 for the protocol; -32099..-32000 are for servers, and LSP
//! uses -32899..-32800 as well as -32002 (ServerNotInitialized) and -32001 (UnknownErrorCode).
//! Tandem's codes are -32001 and -32003..-32007: -32002 is left to LSP, so a client can tell
//! "not initialized" from Tandem's "busy" (-32007). Each constructor
//! writes a message that names the thing (session, model, field, path) and says what to do, and
//! puts the thing itself in `data` so a plugin can act on it without parsing text.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::ids::SessionId;
use crate::methods::Request;
use crate::params;

/// The error codes Tandem's requests answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// -32001: no live session has the given id.
    UnknownSession,
    /// -32007: the session is running and the request cannot run concurrently.
    Busy,
    /// -32003: no model is configured, or its provider has no API key.
    NoModel,
    /// -32004: `provider/id` names no known model.
    UnknownModel,
    /// -32005: a session file could not be read or is not a session.
    SessionFile,
    /// -32006: the session has too little history to compact.
    NothingToCompact,
    /// -32602 (JSON-RPC): params are malformed; `data.field` names the field.
    InvalidParams,
    /// -32603 (JSON-RPC): a bug or an I/O failure on the server.
    InternalError,
    /// -32800 (LSP): the request was cancelled (`$/cancelRequest` or `tandem/abort`).
    RequestCancelled,
}

impl ErrorCode {
    /// Every code, in table order.
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::UnknownSession,
        ErrorCode::Busy,
        ErrorCode::NoModel,
        ErrorCode::UnknownModel,
        ErrorCode::SessionFile,
        ErrorCode::NothingToCompact,
        ErrorCode::InvalidParams,
        ErrorCode::InternalError,
        ErrorCode::RequestCancelled,
    ];

    /// The numeric code on the wire.
    pub const fn code(self) -> i64 {
        match self {
            ErrorCode::UnknownSession => -32001,
            ErrorCode::Busy => -32007,
            ErrorCode::NoModel => -32003,
            ErrorCode::UnknownModel => -32004,
            ErrorCode::SessionFile => -32005,
            ErrorCode::NothingToCompact => -32006,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::RequestCancelled => -32800,
        }
    }

    /// The code for a number, if it is one of Tandem's.
    pub fn from_code(code: i64) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.code() == code)
    }
}

/// A JSON-RPC error object (`{code, message, data?}`) for a failed `tandem/...` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TandemError {
    /// One of [`ErrorCode`]'s numbers (clients must tolerate others).
    pub code: i64,
    /// What went wrong and what to do, for a person.
    pub message: String,
    /// The thing concerned, for a program: `{"session"}`, `{"field"}`, `{"provider","id"}`,
    /// `{"path"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl TandemError {
    fn new(code: ErrorCode, message: String, data: Option<Value>) -> Self {
        TandemError {
            code: code.code(),
            message,
            data,
        }
    }

    /// The code as an [`ErrorCode`], if it is one of Tandem's.
    pub fn kind(&self) -> Option<ErrorCode> {
        ErrorCode::from_code(self.code)
    }

    /// No live session is called `session`.
    pub fn unknown_session(session: &SessionId) -> Self {
        TandemError::new(
            ErrorCode::UnknownSession,
            format!(
                "unknown session `{session}`: no open session has this id; create one with \
                 tandem/sessions/new or open its file with tandem/sessions/open"
            ),
            Some(json!({ "session": session })),
        )
    }

    /// `method` cannot run while `session` is running.
    pub fn busy(session: &SessionId, method: &str) -> Self {
        TandemError::new(
            ErrorCode::Busy,
            format!(
                "session `{session}` is busy: {method} cannot run during a run; wait for its \
                 `settled` event or call tandem/abort first"
            ),
            Some(json!({ "session": session })),
        )
    }

    /// No usable model; `detail` is the actionable text (which env var or models.json entry
    /// to set, or how to choose a model).
    pub fn no_model(detail: impl Into<String>) -> Self {
        TandemError::new(ErrorCode::NoModel, detail.into(), None)
    }

    /// `provider/id` names no known model.
    pub fn unknown_model(provider: &str, id: &str) -> Self {
        TandemError::new(
            ErrorCode::UnknownModel,
            format!(
                "unknown model `{provider}/{id}`: tandem/models/list shows the models this \
                 server knows; add others in models.json"
            ),
            Some(json!({ "provider": provider, "id": id })),
        )
    }

    /// The session file at `path` could not be used, because `reason`.
    pub fn session_file(path: &str, reason: impl fmt::Display) -> Self {
        TandemError::new(
            ErrorCode::SessionFile,
            format!("cannot open session file {path}: {reason}"),
            Some(json!({ "path": path })),
        )
    }

    /// `session` has too little history to compact.
    pub fn nothing_to_compact(session: &SessionId) -> Self {
        TandemError::new(
            ErrorCode::NothingToCompact,
            format!("session `{session}` has nothing to compact yet"),
            Some(json!({ "session": session })),
        )
    }

    /// Params of `method` were wrong: `field` (a dotted path, when known) and what was wrong.
    pub fn invalid_params(method: &str, field: Option<&str>, detail: impl fmt::Display) -> Self {
        TandemError::new(
            ErrorCode::InvalidParams,
            format!("invalid params for {method}: {detail}"),
            field.map(|f| json!({ "field": f })),
        )
    }

    /// A bug or an I/O failure; `detail` says what failed.
    pub fn internal(detail: impl Into<String>) -> Self {
        TandemError::new(ErrorCode::InternalError, detail.into(), None)
    }

    /// The request was cancelled before it finished; `what` names it.
    pub fn cancelled(what: &str) -> Self {
        TandemError::new(
            ErrorCode::RequestCancelled,
            format!("{what} was cancelled"),
            None,
        )
    }
}

impl fmt::Display for TandemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for TandemError {}

/// Parses `params` as the request `R`, or answers -32602 naming the field and its full path.
///
/// Absent params (`null`) are read as `{}`, so a request whose fields are all optional needs
/// none, and one with required fields names the first missing one.
pub fn parse_params<R: Request>(params: Value) -> Result<R, TandemError> {
    let params = match params {
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    params::from_value(params)
        .map_err(|e| TandemError::invalid_params(R::METHOD, e.field.as_deref(), &e))
}

#[cfg(test)]
#[path = "errors_tests.rs"]
mod tests;
