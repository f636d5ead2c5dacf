//! Malformed input on the wire (issue 16, part 6): every class of bad frame gets the JSON-RPC
//! error the specification asks for, and the server keeps serving — the next request is
//! answered by the same process. Also the exit status when input ends.
//!
//! The LSP classes (protocol-ext/README.md, "Transport", lists the same):
//!  1. invalid JSON body                       → -32700, id null
//!  2. body that is not UTF-8                   → -32700, id null
//!  3. byte-order mark before the JSON          → -32700, id null
//!  4. byte-order mark before the header        → -32700, id null (the frame after it is read)
//!  5. non-numeric Content-Length               → -32700, id null
//!  6. negative Content-Length                  → -32700, id null
//!  7. missing Content-Length                   → -32700, id null
//!  8. Content-Length shorter than the body     → -32700, id null
//!  9. a header line without a colon (garbage)  → -32700, id null
//! 10. empty body                               → -32700, id null
//! 11. a batch (JSON array)                     → -32600, id null
//! 12. a JSON scalar (a string)                 → -32600, id null
//! 13. `"jsonrpc": "1.0"`                       → -32600, the request's id
//! 14. no `jsonrpc`                             → -32600, the request's id
//! 15. a fractional id                          → -32600, id null
//! 16. an object id                             → -32600, id null
//! 17. a boolean id                             → -32600, id null
//! 18. `method` not a string                    → -32600, the request's id
//! 19. `params` a scalar                        → -32600, the request's id
//! 20. a frame above `--max-message-bytes`      → -32600, the request's id (read from its start)
//! 21. an endless header line                   → -32700, id null
//! 22. a request nested 200 deep                → -32600, the request's id (serde_json, which
//!     tower-lsp-server decodes with, stops at 128 levels and its reader with it)
//! 23. a notification nested 200 deep           → -32600, id null (as other bad notifications)
//! 24. a Content-Length of 10^12 with 60 bytes  → -32600, the request's id, at once (the next
//!     frame is found by resynchronising)
//!
//! A client's response nested 200 deep is dropped (a response is never answered) and the
//! server keeps serving.
//!
//! ACP (newline-delimited): a line that is not UTF-8 (-32700, id null), a line above the limit
//! (-32600 with its id), and invalid JSON (the ACP crate's own -32700).

use serde_json::{json, Value};
use tandem_tests::lsp_client::LspClient;

use super::harness::RawAcp;
use crate::support::lsp::{sandbox_lsp, sandbox_lsp_args, stderr_of};
use crate::support::process::{assert_no_panic, HANG_GUARD};
use crate::support::Sandbox;

/// The limit the tests run with, so that an oversized frame is cheap to send.
const LIMIT: usize = 64 * 1024;

fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn with_length(length: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {length}\r\n\r\n").into_bytes();
    out.extend_from_slice(body);
    out
}

/// One class of malformed input: its name, its bytes, the error code and id expected.
struct Class {
    name: &'static str,
    bytes: Vec<u8>,
    code: i64,
    id: Value,
}

fn class(name: &'static str, bytes: Vec<u8>, code: i64, id: Value) -> Class {
    Class {
        name,
        bytes,
        code,
        id,
    }
}

fn lsp_classes() -> Vec<Class> {
    let request = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tandem/models/list",
        "params": {}})
    };
    let note = br#"{"jsonrpc":"2.0","method":"$/tandemTest"}"#;
    let mut bom_header = b"\xEF\xBB\xBF".to_vec();
    bom_header.extend(framed(note));
    let mut bom_body = b"\xEF\xBB\xBF".to_vec();
    bom_body.extend_from_slice(note);
    let big = json!({"jsonrpc": "2.0", "id": 2020, "method": "tandem/models/list",
        "params": {"padding": "x".repeat(LIMIT * 2)}})
    .to_string();
    let deep = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let deep_request = format!(
        r#"{{"jsonrpc":"2.0","id":2222,"method":"tandem/models/list","params":{{"x":{}}}}}"#,
        deep(200)
    );
    let deep_note = format!(
        r#"{{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{{"settings":{}}}}}"#,
        deep(200)
    );
    let mut endless = vec![b'x'; 100 * 1024];
    endless.extend_from_slice(b"\r\n");
    let v = |v: Value| v.to_string().into_bytes();
    vec![
        class(
            "invalid JSON",
            framed(br#"{"jsonrpc":"2.0","id":1,"#),
            -32700,
            Value::Null,
        ),
        class(
            "invalid UTF-8",
            framed(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}"),
            -32700,
            Value::Null,
        ),
        class(
            "BOM before the JSON",
            framed(&bom_body),
            -32700,
            Value::Null,
        ),
        class("BOM before the header", bom_header, -32700, Value::Null),
        class(
            "non-numeric Content-Length",
            with_length("ten", note),
            -32700,
            Value::Null,
        ),
        class(
            "negative Content-Length",
            with_length("-5", note),
            -32700,
            Value::Null,
        ),
        class(
            "missing Content-Length",
            [
                b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n".as_slice(),
                note,
            ]
            .concat(),
            -32700,
            Value::Null,
        ),
        class(
            "Content-Length shorter than the body",
            with_length("10", note),
            -32700,
            Value::Null,
        ),
        class(
            "a header line without a colon",
            [b"hello there\r\n".as_slice(), &framed(note)].concat(),
            -32700,
            Value::Null,
        ),
        class("empty body", framed(b""), -32700, Value::Null),
        class(
            "a batch",
            v(json!([request(json!(11))])),
            -32600,
            Value::Null,
        ),
        class(
            "a JSON string",
            framed(b"\"initialize\""),
            -32600,
            Value::Null,
        ),
        class(
            "jsonrpc 1.0",
            v(json!({"jsonrpc": "1.0", "id": 13, "method": "tandem/models/list", "params": {}})),
            -32600,
            json!(13),
        ),
        class(
            "no jsonrpc",
            v(json!({"id": "fourteen", "method": "tandem/models/list", "params": {}})),
            -32600,
            json!("fourteen"),
        ),
        class(
            "a fractional id",
            v(request(json!(1.5))),
            -32600,
            Value::Null,
        ),
        class(
            "an object id",
            v(request(json!({"n": 16}))),
            -32600,
            Value::Null,
        ),
        class("a boolean id", v(request(json!(true))), -32600, Value::Null),
        class(
            "method not a string",
            v(json!({"jsonrpc": "2.0", "id": 18, "method": 42})),
            -32600,
            json!(18),
        ),
        class(
            "params a scalar",
            v(json!({"jsonrpc": "2.0", "id": 19, "method": "tandem/models/list", "params": 7})),
            -32600,
            json!(19),
        ),
        class(
            "a frame above the limit",
            framed(big.as_bytes()),
            -32600,
            json!(2020),
        ),
        class("an endless header line", endless, -32700, Value::Null),
        class(
            "a request nested 200 deep",
            framed(deep_request.as_bytes()),
            -32600,
            json!(2222),
        ),
        class(
            "a notification nested 200 deep",
            framed(deep_note.as_bytes()),
            -32600,
            Value::Null,
        ),
        class(
            "a Content-Length of 10^12",
            with_length(
                "1000000000000",
                br#"{"jsonrpc":"2.0","id":2424,"method":"tandem/models/list","params":{"#,
            ),
            -32600,
            json!(2424),
        ),
    ]
    .into_iter()
    .map(|mut c| {
        // The JSON classes above are bodies; frame them.
        if c.bytes.first() == Some(&b'{') || c.bytes.first() == Some(&b'[') {
            c.bytes = framed(&c.bytes);
        }
        c
    })
    .collect()
}

/// Sends `class`'s bytes, then a request; checks the error arrived and the request was answered.
fn check_class(lsp: &mut LspClient, class: &Class) -> anyhow::Result<()> {
    let before = lsp.log().len();
    lsp.send_bytes(&class.bytes)?;
    let answer = lsp.request("tandem/models/list", json!({}));
    let answer =
        answer.map_err(|e| anyhow::anyhow!("{}: the next request failed: {e}", class.name))?;
    assert!(
        answer.as_array().is_some_and(|models| !models.is_empty()),
        "{}: the model list",
        class.name
    );
    let errors: Vec<&Value> = lsp.log()[before..]
        .iter()
        .filter(|m| m.get("error").is_some())
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e["error"]["code"] == class.code && e["id"] == class.id),
        "{}: expected error {} with id {}; got {errors:?}",
        class.name,
        class.code,
        class.id
    );
    for e in &errors {
        assert!(
            e["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{}: an error says what was wrong: {e}",
            class.name
        );
    }
    Ok(())
}

#[test]
fn every_class_of_malformed_lsp_frame_is_answered_and_the_server_keeps_serving(
) -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let limit = LIMIT.to_string();
    let mut lsp = sandbox_lsp_args(&sandbox, &["--max-message-bytes", &limit], json!({}))?;
    let classes = lsp_classes();
    assert!(classes.len() >= 16);
    for class in &classes {
        check_class(&mut lsp, class)?;
    }
    let status = lsp.shutdown()?;
    assert_eq!(status.code(), Some(0));
    let stderr = stderr_of(&lsp);
    assert_no_panic(&stderr);
    // Each refusal is logged, never silent.
    let logged = stderr.matches("refused a message from the client").count();
    assert!(
        logged >= classes.len(),
        "{logged} refusals logged:\n{stderr}"
    );
    Ok(())
}

#[test]
fn a_response_nested_too_deep_is_dropped_and_the_server_keeps_serving() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"tandem-1","result":{}1{}}}"#,
        "{\"a\":".repeat(300),
        "}".repeat(300)
    );
    lsp.send_bytes(&framed(deep.as_bytes()))?;
    let answer = lsp.request("tandem/models/list", json!({}))?;
    assert!(answer.as_array().is_some_and(|m| !m.is_empty()), "{answer}");
    assert_eq!(lsp.shutdown()?.code(), Some(0));
    let stderr = stderr_of(&lsp);
    assert!(
        stderr.contains("dropped a malformed response from the client"),
        "{stderr}"
    );
    assert_no_panic(&stderr);
    Ok(())
}

#[test]
fn a_malformed_frame_before_initialize_does_not_stop_the_server() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let mut cmd = crate::support::process::in_sandbox(&sandbox, &["lsp"]);
    cmd.stderr(std::process::Stdio::piped());
    let mut lsp = LspClient::spawn(cmd)?.with_timeout(HANG_GUARD);
    lsp.send_bytes(&framed(b"{oops"))?;
    lsp.send_bytes(b"Content-Length: nope\r\n\r\n{}")?;
    let result = lsp.initialize(json!({"processId": null, "rootUri": null, "capabilities": {}}))?;
    assert!(result["capabilities"].is_object(), "{result}");
    let parse_errors = lsp
        .log()
        .iter()
        .filter(|m| m["error"]["code"] == -32700 && m["id"].is_null())
        .count();
    assert_eq!(parse_errors, 2, "{:?}", lsp.log());
    assert_eq!(lsp.shutdown()?.code(), Some(0));
    Ok(())
}

#[test]
fn the_exit_status_says_whether_shutdown_came_first() -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();

    // exit without shutdown: 1, as LSP says.
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    lsp.notify("exit", Value::Null)?;
    assert_eq!(lsp.wait_exit(HANG_GUARD)?.code(), Some(1));

    // stdin closed without shutdown (the client went away): 1 as well.
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    lsp.close_input();
    assert_eq!(lsp.wait_exit(HANG_GUARD)?.code(), Some(1));

    // shutdown, then stdin closed without exit: 0.
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    lsp.request("shutdown", Value::Null)?;
    lsp.close_input();
    assert_eq!(lsp.wait_exit(HANG_GUARD)?.code(), Some(0));
    assert_no_panic(&stderr_of(&lsp));
    Ok(())
}

#[test]
fn malformed_acp_lines_are_answered_and_the_agent_keeps_serving() {
    let sandbox = Sandbox::with_quick_retries();
    sandbox.write_settings(json!({"defaultProvider": "mock", "defaultModel": "mock-model"}));
    let limit = LIMIT.to_string();
    let mut acp = RawAcp::start(&sandbox, &["--max-message-bytes", &limit]);
    acp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    assert!(acp.response(1).get("result").is_some());

    let long = json!({"jsonrpc": "2.0", "id": 77, "method": "session/list",
        "params": {"padding": "x".repeat(LIMIT * 2)}});
    let cases: Vec<(&str, Vec<u8>, i64, Value)> = vec![
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":5,\xff}\n".to_vec(),
            -32700,
            Value::Null,
        ),
        (
            "a line above the limit",
            format!("{long}\n").into_bytes(),
            -32600,
            json!(77),
        ),
        (
            "invalid JSON",
            b"{\"jsonrpc\":\"2.0\",\n".to_vec(),
            -32700,
            Value::Null,
        ),
    ];
    let mut next = 10;
    for (name, bytes, code, id) in cases {
        let before = acp.seen.len();
        acp.send_bytes(&bytes);
        next += 1;
        acp.send(json!({"jsonrpc": "2.0", "id": next, "method": "session/list", "params": {}}));
        let answer = acp.response(next);
        assert!(answer.get("result").is_some(), "{name}: {answer}");
        let errors: Vec<&Value> = acp.seen[before..]
            .iter()
            .filter(|m| m.get("error").is_some())
            .collect();
        assert!(
            errors
                .iter()
                .any(|e| e["error"]["code"] == code && e["id"] == id),
            "{name}: expected {code} with id {id}; got {errors:?}"
        );
    }
    let stderr = acp.close(&sandbox);
    assert!(
        stderr.contains("refused a message from the client"),
        "{stderr}"
    );
}
