//! JSON-RPC messages as the client sorts them: responses to its own requests, and what the
//! server sends on its own (notifications, and requests awaiting a reply).

use std::fmt;

use serde_json::Value;

/// The id of a request the client sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId(pub(super) i64);

impl RequestId {
    /// The id on the wire (for `$/cancelRequest`, or finding the response in the log).
    pub fn value(self) -> i64 {
        self.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A message the server sent on its own: a notification, or a request when `id` is set
/// (answer it with [`LspClient::reply`](super::LspClient::reply)).
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// The method.
    pub method: String,
    /// The request id, when the server expects a reply.
    pub id: Option<Value>,
    /// The params (`null` when absent).
    pub params: Value,
}

impl Incoming {
    /// True for a request (the server waits for a reply), false for a notification.
    pub fn is_request(&self) -> bool {
        self.id.is_some()
    }
}

/// The message as JSON (without `jsonrpc`), for assertion messages and logs.
impl fmt::Display for Incoming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut message = serde_json::json!({"method": self.method, "params": self.params});
        if let Some(id) = &self.id {
            message["id"] = id.clone();
        }
        message.fmt(f)
    }
}

/// A message from the server, sorted.
pub(super) enum Sorted {
    /// A response: its id (when it is one of ours) and the whole message.
    Response(Option<RequestId>, Value),
    /// A notification or a server request.
    Incoming(Incoming),
}

/// Sorts one message; `None` when it is neither a request, a notification nor a response.
pub(super) fn sort(message: &Value) -> Option<Sorted> {
    if let Some(method) = message.get("method") {
        return Some(Sorted::Incoming(Incoming {
            method: method.as_str()?.to_string(),
            id: message.get("id").cloned(),
            params: message.get("params").cloned().unwrap_or(Value::Null),
        }));
    }
    if message.get("result").is_none() && message.get("error").is_none() {
        return None;
    }
    let id = message.get("id")?.as_i64().map(RequestId);
    Some(Sorted::Response(id, message.clone()))
}

/// A JSON-RPC error object as a person reads it: its message and code, not its JSON.
pub(super) fn error_text(error: &Value) -> String {
    match (error["message"].as_str(), error["code"].as_i64()) {
        (Some(message), Some(code)) => format!("{message} (error {code})"),
        _ => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let Some(Sorted::Incoming(request)) = sort(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "workspace/applyEdit",
                "params": {"edit": {}}}),
        ) else {
            panic!("a server request")
        };
        assert!(request.is_request());
        assert_eq!(request.params, json!({"edit": {}}));
        let Some(Sorted::Incoming(note)) = sort(&json!({"jsonrpc": "2.0", "method": "exit"}))
        else {
            panic!("a notification")
        };
        assert_eq!((note.is_request(), note.params), (false, Value::Null));
        let error = json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -1, "message": "no"}});
        let Some(Sorted::Response(id, whole)) = sort(&error) else {
            panic!("a response")
        };
        assert_eq!((id, whole), (Some(RequestId(2)), error));
        assert!(sort(&json!({"jsonrpc": "2.0", "id": 2})).is_none());
        assert!(sort(&json!({"method": 5})).is_none());
    }

    #[test]
    fn an_error_reads_as_its_message_and_code() {
        let error = json!({"code": -32602, "message": "bad `text`"});
        assert_eq!(error_text(&error), "bad `text` (error -32602)");
        assert_eq!(error_text(&json!({"odd": 1})), r#"{"odd":1}"#);
    }
}
