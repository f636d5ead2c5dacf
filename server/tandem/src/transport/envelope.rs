//! Is one message a JSON-RPC 2.0 message the protocol crates can take, and if not, which error
//! does the specification ask for?
//!
//! JSON-RPC 2.0 (section 5.1) says: a body that is not JSON is a Parse error (-32700, `id`
//! null); JSON that is not a valid Request object is an Invalid Request (-32600), with the
//! request's `id` when it can be read and `null` otherwise; a batch (Tandem's protocols have
//! none) gets one Invalid Request. A response is never answered: a malformed one is logged and
//! dropped. LSP narrows the envelope further: `id` is an integer or a string, `params` an object
//! or an array.
//!
//! JSON nested deeper than [`MAX_DEPTH`] is refused too (-32600 with its id for a request; a
//! response is dropped): serde_json, which tower-lsp-server decodes with, stops at 128 levels,
//! and the server's reader would stop with it.
//!
//! The check reads the body once as borrowed raw JSON: `params` and `result` are validated as
//! JSON but never built into a tree, so a 10 MB `didOpen` costs one extra scan, not a copy.
//! What passes here is exactly what tower-lsp-server's decoder accepts (its reader stops for
//! good at the first message it cannot decode, so nothing it would refuse may reach it).

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// JSON-RPC's Parse error.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's Invalid Request.
pub const INVALID_REQUEST: i64 = -32600;

/// An error answer the transport sends itself, for a message it did not pass on.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// `-32700` or `-32600`.
    pub code: i64,
    /// The request's id when it could be read; `null` otherwise.
    pub id: Value,
    /// What was wrong and what to send instead.
    pub message: String,
}

impl Refusal {
    /// A Parse error (`id` null).
    pub fn parse_error(message: impl Into<String>) -> Refusal {
        Refusal {
            code: PARSE_ERROR,
            id: Value::Null,
            message: message.into(),
        }
    }

    /// An Invalid Request answering `id` (null when unknown).
    pub fn invalid_request(id: Value, message: impl Into<String>) -> Refusal {
        Refusal {
            code: INVALID_REQUEST,
            id,
            message: message.into(),
        }
    }

    /// The error response as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        })
        .to_string()
    }
}

/// What to do with one message.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// A well-formed request, notification or response: pass it on.
    Pass(Kind),
    /// Malformed and answerable: send this error instead.
    Refuse(Refusal),
    /// A malformed response: JSON-RPC forbids answering it; log why and drop it.
    Drop(String),
}

/// What a well-formed message is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A request (it has an id) for `method`.
    Request(String),
    /// A notification for `method`.
    Notification(String),
    /// A response to one of the server's requests.
    Response,
}

/// Present-or-absent for a member that may be `null` (serde's `Option` reads `null` as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The members JSON-RPC defines, borrowed; any others are ignored.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

impl Envelope<'_> {
    /// No method, and a result or an error.
    fn is_response(&self) -> bool {
        self.method.is_none() && (self.result.is_some() || self.error.is_some())
    }
}

/// An id LSP allows: an integer (within i64, as the protocol crates read it) or a string.
fn usable_id(raw: &RawValue) -> Option<Value> {
    match serde_json::from_str::<Value>(raw.get()).ok()? {
        Value::Number(n) if n.is_i64() => Some(Value::Number(n)),
        Value::String(s) => Some(Value::String(s)),
        _ => None,
    }
}

/// The first byte of a raw value (`{`, `[`, `"`, a digit, `n`…).
fn first_byte(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b' ')
}

/// The deepest nesting of arrays and objects a message may have, the message itself counted:
/// one level less than serde_json's recursion limit (128), which the protocol crates decode
/// with.
pub const MAX_DEPTH: usize = 127;

/// `Some(depth)` when `json` (valid JSON) nests arrays and objects deeper than [`MAX_DEPTH`]:
/// the depth at which the scan stopped. One pass over the bytes; strings are skipped.
fn too_deep(json: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for b in json.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Checks one message body; see the module docs.
pub fn check(body: &[u8]) -> Verdict {
    if body.starts_with(b"\xEF\xBB\xBF") {
        return Verdict::Refuse(Refusal::parse_error(
            "the message starts with a byte-order mark: send UTF-8 JSON without one",
        ));
    }
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        Err(e) => {
            return Verdict::Refuse(Refusal::parse_error(format!(
                "the message is not valid UTF-8 (at byte {}): JSON-RPC messages are UTF-8 JSON",
                e.valid_up_to()
            )))
        }
    };
    if text.trim().is_empty() {
        return Verdict::Refuse(Refusal::parse_error(
            "the message is empty: send one JSON-RPC object",
        ));
    }
    let raw: &RawValue = match serde_json::from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            // serde_json's text names the position and the kind of error, never the input.
            return Verdict::Refuse(Refusal::parse_error(format!(
                "the message is not valid JSON: {e}"
            )));
        }
    };
    match first_byte(raw) {
        b'{' => {}
        b'[' => {
            return Verdict::Refuse(Refusal::invalid_request(
                Value::Null,
                "batches are not supported: send each message on its own",
            ))
        }
        _ => {
            return Verdict::Refuse(Refusal::invalid_request(
                Value::Null,
                "the message is not a JSON object: send a JSON-RPC request or notification object",
            ))
        }
    }
    let envelope: Envelope = match serde_json::from_str(raw.get()) {
        Ok(envelope) => envelope,
        Err(e) => {
            return Verdict::Refuse(Refusal::invalid_request(
                Value::Null,
                format!("the message is not a JSON-RPC object: {e}"),
            ))
        }
    };
    if let Some(depth) = too_deep(raw.get()) {
        let why = format!(
            "the message nests {depth} levels deep or more; at most {MAX_DEPTH} are read: send \
             flatter JSON"
        );
        return if envelope.is_response() {
            Verdict::Drop(why)
        } else {
            let id = envelope.id.and_then(usable_id).unwrap_or(Value::Null);
            Verdict::Refuse(Refusal::invalid_request(id, why))
        };
    }
    check_envelope(&envelope)
}

fn check_envelope(m: &Envelope) -> Verdict {
    let id = m.id.map(|raw| (raw, usable_id(raw)));
    let answer_id = id
        .as_ref()
        .and_then(|(_, v)| v.clone())
        .unwrap_or(Value::Null);
    let refuse =
        |message: String| Verdict::Refuse(Refusal::invalid_request(answer_id.clone(), message));
    let version = m
        .jsonrpc
        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
    let is_response = m.is_response();
    if version.as_deref() != Some("2.0") {
        let found = m.jsonrpc.map_or("no `jsonrpc` member".to_string(), |raw| {
            format!("`\"jsonrpc\": {}`", excerpt(raw.get()))
        });
        let message =
            format!("{found}: this server speaks JSON-RPC 2.0; send `\"jsonrpc\": \"2.0\"`");
        return if is_response {
            Verdict::Drop(message)
        } else {
            refuse(message)
        };
    }
    if is_response {
        return check_response(m);
    }
    let Some(method) = m.method else {
        return refuse("the message has no `method`: a request needs one".to_string());
    };
    let Ok(method) = serde_json::from_str::<String>(method.get()) else {
        return refuse(format!(
            "`method` must be a string, not `{}`",
            excerpt(method.get())
        ));
    };
    if let Some((raw, None)) = &id {
        return refuse(format!(
            "`id` must be an integer or a string, not `{}` (request `{method}`)",
            excerpt(raw.get())
        ));
    }
    if let Some(params) = m.params {
        // `null` is tolerated: several clients send it for `shutdown` and `exit`.
        if !matches!(first_byte(params), b'{' | b'[' | b'n') {
            return refuse(format!(
                "`params` of `{method}` must be an object or an array, not `{}`",
                excerpt(params.get())
            ));
        }
    }
    if id.is_some() {
        Verdict::Pass(Kind::Request(method))
    } else {
        Verdict::Pass(Kind::Notification(method))
    }
}

fn check_response(m: &Envelope) -> Verdict {
    let Some(id) = m.id else {
        return Verdict::Drop("a response without an `id`".to_string());
    };
    if first_byte(id) != b'n' && usable_id(id).is_none() {
        return Verdict::Drop(format!(
            "a response whose `id` is `{}`, not an integer or a string",
            excerpt(id.get())
        ));
    }
    if let (Some(_), Some(_)) = (m.result, m.error) {
        return Verdict::Drop("a response with both `result` and `error`".to_string());
    }
    if let Some(error) = m.error {
        #[derive(Deserialize)]
        struct ErrorObject {
            #[allow(dead_code)]
            code: i64,
            #[allow(dead_code)]
            message: String,
        }
        if serde_json::from_str::<ErrorObject>(error.get()).is_err() {
            return Verdict::Drop(format!(
                "a response whose `error` is not `{{\"code\": integer, \"message\": string}}`: `{}`",
                excerpt(error.get())
            ));
        }
    }
    Verdict::Pass(Kind::Response)
}

/// At most 60 characters of a raw value, for error messages.
fn excerpt(text: &str) -> String {
    let mut chars = text.chars();
    let short: String = chars.by_ref().take(60).collect();
    if chars.next().is_some() {
        format!("{short}…")
    } else {
        short
    }
}

/// The `id` of a message of which only the first bytes were kept (one too large to read): an
/// integer or a complete string found at the top level of `prefix`, else `null`.
pub fn id_from_prefix(prefix: &[u8]) -> Value {
    let text = match std::str::from_utf8(prefix) {
        Ok(text) => text,
        // Cut inside a character: the valid part.
        Err(e) => std::str::from_utf8(&prefix[..e.valid_up_to()]).unwrap_or_default(),
    };
    let partial = tandem_ai::partial_json::parse_partial(text);
    match partial.get("id") {
        Some(Value::Number(n)) if n.is_i64() => Value::Number(n.clone()),
        // A string being read is shown as its prefix: keep it only when its closing quote is in.
        Some(Value::String(s)) => {
            let quoted = Value::String(s.clone()).to_string();
            if closes_after(text, &quoted) {
                Value::String(s.clone())
            } else {
                Value::Null
            }
        }
        _ => Value::Null,
    }
}

/// Whether `quoted` (a JSON string with its quotes) occurs in `text` followed by more input
/// (a `,`, `}` or space), i.e. the string was complete in the prefix.
fn closes_after(text: &str, quoted: &str) -> bool {
    text.match_indices(quoted).any(|(at, _)| {
        text[at + quoted.len()..]
            .trim_start()
            .starts_with([',', '}'])
    })
}
