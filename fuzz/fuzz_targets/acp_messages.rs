//! ACP message decoding: the official SDK's (`agent-client-protocol` 5.2, protocol v1) parsing
//! of what a client sends the agent, then Tandem's conversion of a prompt
//! (`tandem::acp::prompt::convert`).
//!
//! Input: either a whole JSON-RPC line (starting with `{`), read with the SDK's
//! `TransportFrame::parse_json` as the stdio transport does, whose `method` and `params` are
//! then parsed; or `method NEWLINE params-JSON`. The method and params go through
//! `ClientRequest::parse_message` and `ClientNotification::parse_message` (the dispatch the
//! agent's handlers receive). Checks: no panic; a parsed message serializes and parses back to
//! the same JSON (floats to the last place); a parsed `session/prompt` converts (or is refused with a message naming the
//! block) and the conversion never returns an empty prompt.
#![no_main]

use std::path::Path;

use agent_client_protocol::v1::schema::{ClientNotification, ClientRequest};
use agent_client_protocol::{JsonRpcMessage, TransportFrame};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tandem::acp::prompt::convert;

fn roundtrip<M: JsonRpcMessage>(message: &M) {
    let untyped = message.to_untyped_message().expect("serializes");
    let json = serde_json::to_value(&untyped).expect("serializes");
    let method = json
        .get("method")
        .and_then(Value::as_str)
        .expect("method")
        .to_string();
    let params = json.get("params").cloned().unwrap_or(Value::Null);
    let again = M::parse_message(&method, &params).expect("its own JSON parses");
    let json2 =
        serde_json::to_value(again.to_untyped_message().expect("serializes")).expect("json");
    assert!(same(&json, &json2), "{method}: {json} became {json2}");
}

/// Equal, except that floats may differ in the last place: serde_json (without its
/// `float_roundtrip` feature, as Tandem builds it) may parse a printed float 1 ulp off.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || ((x - y) / x.abs().max(y.abs())).abs() < 1e-14
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn decode(method: &str, params: &Value) {
    if ClientRequest::matches_method(method) {
        if let Ok(request) = ClientRequest::parse_message(method, params) {
            roundtrip(&request);
            if let ClientRequest::PromptRequest(prompt) = &request {
                for cwd in ["/home/user/project", "/"] {
                    match convert(&prompt.prompt, Path::new(cwd)) {
                        Ok(p) => assert!(!p.text.trim().is_empty() || !p.images.is_empty()),
                        Err(e) => assert!(!e.is_empty()),
                    }
                }
            }
        }
    }
    if ClientNotification::matches_method(method) {
        if let Ok(notification) = ClientNotification::parse_message(method, params) {
            roundtrip(&notification);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.starts_with('{') {
        let frame = TransportFrame::parse_json(text);
        let _ = frame.to_json();
        if let Ok(Value::Object(message)) = serde_json::from_str::<Value>(text) {
            if let Some(Value::String(method)) = message.get("method") {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                decode(method, &params);
            }
        }
        return;
    }
    let Some((method, params)) = text.split_once('\n') else {
        return;
    };
    let params = if params.trim().is_empty() {
        Value::Null
    } else {
        match serde_json::from_str::<Value>(params) {
            Ok(v) => v,
            Err(_) => return,
        }
    };
    decode(method, &params);
});
