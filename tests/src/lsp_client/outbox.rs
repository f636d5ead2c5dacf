//! What the client sends, as a [`Handler`] sees it: the server's input, and whether the request
//! at hand was answered.

use std::io::Write;

use serde_json::{json, Value};

use super::{write_frame, ClientError, Incoming};

/// Answers the server's requests as they arrive, before anyone waits for them: `reply` (or
/// `reply_error`) through the [`Outbox`] to answer; a request left unanswered stays in the
/// queue for the caller.
pub type Handler = Box<dyn FnMut(&Incoming, &mut Outbox<'_>) -> Result<(), ClientError> + Send>;

/// The server's input, as a [`Handler`] sees it.
pub struct Outbox<'a> {
    input: &'a mut Option<Box<dyn Write + Send>>,
    replied: bool,
}

impl<'a> Outbox<'a> {
    pub(super) fn new(input: &'a mut Option<Box<dyn Write + Send>>) -> Outbox<'a> {
        Outbox {
            input,
            replied: false,
        }
    }

    /// Whether a reply went out through this outbox.
    pub(super) fn replied(&self) -> bool {
        self.replied
    }

    /// Sends one JSON message, framed.
    pub fn send(&mut self, message: &Value) -> Result<(), ClientError> {
        let Some(input) = self.input.as_mut() else {
            let what = message["method"].as_str().unwrap_or("a message");
            return Err(ClientError::InputClosed(what.to_string()));
        };
        write_frame(input, message).map_err(ClientError::Write)
    }

    /// Sends a notification (`params` left out when `null`).
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message)
    }

    /// Answers the server's request `to` with `result`.
    pub fn reply(&mut self, to: &Incoming, result: Value) -> Result<(), ClientError> {
        let id = to
            .id
            .as_ref()
            .ok_or_else(|| ClientError::NotARequest(to.method.clone()))?;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))?;
        self.replied = true;
        Ok(())
    }

    /// Answers the server's request `to` with an error.
    pub fn reply_error(
        &mut self,
        to: &Incoming,
        code: i64,
        message: &str,
    ) -> Result<(), ClientError> {
        let id = to
            .id
            .as_ref()
            .ok_or_else(|| ClientError::NotARequest(to.method.clone()))?;
        self.send(&json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": code, "message": message}}))?;
        self.replied = true;
        Ok(())
    }
}
