//! RPC mode's records: reading one input line (a command, a dialog's answer, or an error to
//! send back) and the responses' shape, as pi 1.6 writes them:
//! `{"id"?, "type": "response", "command", "success": true, "data"?}` or
//! `{..., "success": false, "error"}`. The id is echoed as the client sent it (a string or a
//! number) and left out when there was none.

use serde_json::{json, Map, Value};

use crate::transport::lines::Line;

/// What one input line is.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A command: its id (when given), its type and the whole object.
    Command {
        /// The client's id, echoed in the response.
        id: Option<Value>,
        /// `type`.
        kind: String,
        /// The command object.
        body: Map<String, Value>,
    },
    /// An answer to an `extension_ui_request`.
    DialogAnswer(Map<String, Value>),
    /// Nothing to run: send this response and read on.
    Refused(Value),
}

/// Reads one line from the line reader.
pub fn incoming(line: Line) -> Incoming {
    match line {
        Line::Text(text) => parse(&text),
        // A line too long to read whole still answers its id when its start shows one.
        Line::Refused(refusal) => {
            let id = Some(refusal.id).filter(|id| !id.is_null());
            let reason = format!("Failed to parse command: {}", refusal.message);
            Incoming::Refused(failure(id, Some("parse"), &reason))
        }
    }
}

/// Reads one line of text.
pub fn parse(text: &str) -> Incoming {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return Incoming::Refused(parse_failure(&e.to_string())),
    };
    let Value::Object(body) = value else {
        // pi reads `type` off whatever was sent: a non-object has none.
        return Incoming::Refused(unknown(None, None));
    };
    let id = body.get("id").filter(|id| !id.is_null()).cloned();
    match body.get("type") {
        Some(Value::String(kind)) if kind == "extension_ui_response" => {
            Incoming::DialogAnswer(body)
        }
        Some(Value::String(kind)) => Incoming::Command {
            id,
            kind: kind.clone(),
            body,
        },
        _ => Incoming::Refused(unknown(id, None)),
    }
}

/// pi's answer to a line that is not JSON: no id, `command: "parse"`.
fn parse_failure(reason: &str) -> Value {
    failure(
        None,
        Some("parse"),
        &format!("Failed to parse command: {reason}"),
    )
}

/// pi's answer to a command type it does not know (or no type at all: no `command` then).
pub fn unknown(id: Option<Value>, kind: Option<&str>) -> Value {
    failure(
        id,
        kind,
        &format!("Unknown command: {}", kind.unwrap_or("undefined")),
    )
}

/// A successful response; `data` is left out when `None`.
pub fn success(id: Option<Value>, command: &str, data: Option<Value>) -> Value {
    let mut out = head(id, Some(command));
    out.insert("success".into(), true.into());
    if let Some(data) = data {
        out.insert("data".into(), data);
    }
    Value::Object(out)
}

/// A failed response.
pub fn failure(id: Option<Value>, command: Option<&str>, error: &str) -> Value {
    let mut out = head(id, command);
    out.insert("success".into(), false.into());
    out.insert("error".into(), error.into());
    Value::Object(out)
}

fn head(id: Option<Value>, command: Option<&str>) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(id) = id {
        out.insert("id".into(), id);
    }
    out.insert("type".into(), "response".into());
    if let Some(command) = command {
        out.insert("command".into(), command.into());
    }
    out
}

/// A command's arguments, read with errors that name the field and what it must be.
pub struct Args<'a> {
    kind: &'a str,
    body: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// The arguments of command `kind`.
    pub fn new(kind: &'a str, body: &'a Map<String, Value>) -> Self {
        Args { kind, body }
    }

    fn field(&self, name: &str) -> Option<&'a Value> {
        self.body.get(name).filter(|v| !v.is_null())
    }

    fn wrong(&self, name: &str, expected: &str) -> String {
        match self.field(name) {
            None => format!("{}: `{name}` is required ({expected})", self.kind),
            Some(v) => format!(
                "{}: `{name}` must be {expected}, not {}",
                self.kind,
                tandem_protocol::config::kind(v)
            ),
        }
    }

    /// A required string.
    pub fn string(&self, name: &str) -> Result<&'a str, String> {
        self.field(name)
            .and_then(Value::as_str)
            .ok_or_else(|| self.wrong(name, "a string"))
    }

    /// An optional string.
    pub fn opt_string(&self, name: &str) -> Result<Option<&'a str>, String> {
        match self.field(name) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| self.wrong(name, "a string")),
        }
    }

    /// A required boolean.
    pub fn boolean(&self, name: &str) -> Result<bool, String> {
        self.field(name)
            .and_then(Value::as_bool)
            .ok_or_else(|| self.wrong(name, "true or false"))
    }

    /// An optional boolean.
    pub fn opt_boolean(&self, name: &str) -> Result<Option<bool>, String> {
        match self.field(name) {
            None => Ok(None),
            Some(v) => v
                .as_bool()
                .map(Some)
                .ok_or_else(|| self.wrong(name, "true or false")),
        }
    }

    /// A required string out of `allowed`.
    pub fn one_of(&self, name: &str, allowed: &[&str]) -> Result<&'a str, String> {
        let expected = format!("one of {}", quoted(allowed));
        match self.field(name).and_then(Value::as_str) {
            Some(s) if allowed.contains(&s) => Ok(s),
            Some(s) => Err(format!(
                "{}: `{name}` must be {expected}, not \"{s}\"",
                self.kind
            )),
            None => Err(self.wrong(name, &expected)),
        }
    }

    /// An optional string out of `allowed`.
    pub fn opt_one_of(&self, name: &str, allowed: &[&str]) -> Result<Option<&'a str>, String> {
        match self.field(name) {
            None => Ok(None),
            Some(_) => self.one_of(name, allowed).map(Some),
        }
    }

    /// An optional value, deserialized; `expected` names its shape in the error.
    pub fn opt_typed<T: serde::de::DeserializeOwned>(
        &self,
        name: &str,
        expected: &str,
    ) -> Result<Option<T>, String> {
        match self.field(name) {
            None => Ok(None),
            Some(v) => serde_json::from_value(v.clone())
                .map(Some)
                .map_err(|e| format!("{}: `{name}` must be {expected} ({e})", self.kind)),
        }
    }
}

fn quoted(allowed: &[&str]) -> String {
    allowed
        .iter()
        .map(|a| format!("\"{a}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `{"type": "extension_ui_request", "id", "method", ...fields}`.
pub fn dialog_request(id: &str, method: &str, fields: Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), "extension_ui_request".into());
    out.insert("id".into(), id.into());
    out.insert("method".into(), method.into());
    out.extend(fields);
    Value::Object(out)
}

/// `{"type": "bash_execution_update", "id"?, "delta"}`.
pub fn bash_update(id: Option<&Value>, delta: String) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), "bash_execution_update".into());
    if let Some(id) = id {
        out.insert("id".into(), id.clone());
    }
    out.insert("delta".into(), delta.into());
    Value::Object(out)
}

/// The `data` of `clear_queue`.
pub fn queue_texts(steering: Vec<String>, follow_up: Vec<String>) -> Value {
    json!({ "steering": steering, "followUp": follow_up })
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;

/// A model as RPC answers show it: pi's model object without `headers`, whose values are
/// credentials more often than not (models.json's custom auth headers).
pub fn model(model: &tandem_ai::Model) -> Value {
    let mut value = serde_json::to_value(model).unwrap_or(Value::Null);
    if let Some(fields) = value.as_object_mut() {
        fields.remove("headers");
    }
    value
}
