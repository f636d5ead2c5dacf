//! Answers and the JSON-RPC errors of the ACP agent.

use agent_client_protocol::Error;
use serde::Serialize;
use serde_json::Value;

use crate::host::setup::SetupError;

/// A request's responder.
pub type Responder = agent_client_protocol::v1::Responder<Value>;

/// Answers `responder` with `result`.
pub fn reply<T: Serialize>(responder: Responder, result: Result<T, Error>) {
    let sent =
        match result.and_then(|r| serde_json::to_value(r).map_err(Error::into_internal_error)) {
            Ok(value) => responder.respond(value),
            Err(e) => responder.respond_with_error(e),
        };
    if let Err(e) = sent {
        tracing::warn!("could not send a response: {}", e.message);
    }
}

/// -32602 with the reason, in the message (what clients show) and the data.
pub fn invalid_params(message: impl Into<String>) -> Error {
    with_reason(Error::invalid_params(), message.into())
}

/// -32603 with the reason, in the message and the data.
pub fn internal(message: impl Into<String>) -> Error {
    with_reason(Error::internal_error(), message.into())
}

/// `error` whose message says the reason after the code's own words ("Invalid params: …"):
/// many clients show only the message, never the data.
fn with_reason(error: Error, reason: String) -> Error {
    let message = format!("{}: {reason}", error.message);
    let mut error = error.data(Value::String(reason));
    error.message = message;
    error
}

/// The protocol's "session not found".
pub fn unknown_session(id: &str) -> Error {
    agent_client_protocol::v1::schema::Error::session_not_found(id.to_string()).into()
}

/// A session that could not be set up: a missing key asks the client to authenticate (-32000,
/// "authentication required"), anything else is an internal error with the reason. Either way
/// the data is the host's message, configuration problems included.
pub fn setup_error(e: SetupError) -> Error {
    let text = e.to_string();
    match &e {
        SetupError::Model(failed) if failed.needs_key() => {
            Error::auth_required().data(Value::String(text))
        }
        _ => internal(text),
    }
}
