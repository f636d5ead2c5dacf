use std::io::{BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::*;

/// A client wired through pipes to a fake server: `serve` gets each message the client sends
/// and gives the bytes to answer with, or `None` to close the server's output.
fn fake_server(mut serve: impl FnMut(Value) -> Option<Vec<u8>> + Send + 'static) -> LspClient {
    let (client_reads, mut server_writes) = std::io::pipe().unwrap();
    let (server_reads, client_writes) = std::io::pipe().unwrap();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(server_reads);
        while let Ok(Some(received)) = read_frame(&mut reader) {
            match serve(received.message) {
                Some(bytes) => {
                    if server_writes.write_all(&bytes).is_err() {
                        return;
                    }
                }
                None => return,
            }
        }
    });
    LspClient::connect(client_reads, client_writes)
        .unwrap()
        .with_timeout(Duration::from_secs(5))
}

fn result(id: &Value, result: Value) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn note(method: &str, params: Value) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

#[test]
fn a_request_gets_its_result_and_what_came_first_stays_queued_in_order() {
    let mut lsp = fake_server(|m| {
        Some(
            [
                note("first", json!(1)),
                frame(&json!({"jsonrpc": "2.0", "id": "s1", "method": "ask", "params": {}})),
                note("second", json!(2)),
                result(&m["id"], json!({"echo": m["params"]})),
            ]
            .concat(),
        )
    });
    let answer = lsp.request("tandem/state", json!({"x": 1})).unwrap();
    assert_eq!(answer, json!({"echo": {"x": 1}}));
    let methods: Vec<&str> = lsp.seen().iter().map(|m| m.method.as_str()).collect();
    assert_eq!(methods, ["first", "ask", "second"]);
    assert_eq!(lsp.log().len(), 4);
    let ask = lsp.server_request("ask").unwrap();
    assert_eq!(ask.id, Some(json!("s1")));
    assert_eq!(lsp.next_incoming("first").unwrap().method, "first");
    assert_eq!(lsp.next_incoming("second").unwrap().params, json!(2));
}

#[test]
fn an_error_response_is_a_refusal_naming_the_method_code_and_message() {
    let mut lsp = fake_server(|m| {
        Some(frame(&json!({"jsonrpc": "2.0", "id": m["id"],
            "error": {"code": -32602, "message": "`text` must be a string", "data": {}}})))
    });
    let whole = lsp.request_response("tandem/prompt", json!({})).unwrap();
    assert_eq!(whole["error"]["code"], -32602);
    let refused = lsp.request("tandem/prompt", json!({})).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the language server refused `tandem/prompt`: `text` must be a string (error -32602)"
    );
}

#[test]
fn a_wait_that_times_out_names_what_it_waited_for() {
    let mut lsp = fake_server(|_| Some(Vec::new())).with_timeout(Duration::from_millis(50));
    let error = lsp.request("shutdown", Value::Null).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the language server did not answer within 50ms (waiting for the answer to `shutdown`)"
    );
    let error = lsp.wait_for("the first diagnostic", |_| true).unwrap_err();
    assert!(error
        .to_string()
        .ends_with("(waiting for the first diagnostic)"));
}

#[test]
fn a_server_that_closes_its_output_is_closed_not_a_timeout() {
    let mut lsp = fake_server(|_| None);
    let error = lsp.request("initialize", json!({})).unwrap_err();
    assert!(matches!(error, ClientError::Closed), "{error}");
}

#[test]
fn a_malformed_frame_ends_the_stream_with_what_was_wrong() {
    let mut lsp = fake_server(|_| Some(b"Content-Length: 2\n\n{}".to_vec()));
    let error = lsp.request("initialize", json!({})).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"the language server sent a malformed frame: a header line does not end in \r\n: "Content-Length: 2\n""#
    );
    assert!(matches!(
        lsp.request("initialize", json!({})),
        Err(ClientError::Closed)
    ));
}

#[test]
fn a_frame_that_is_not_json_rpc_is_reported() {
    let mut lsp = fake_server(|_| Some(frame(&json!({"hello": 1}))));
    let error = lsp.request("initialize", json!({})).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with(r#"not a JSON-RPC message: {"hello":1}"#),
        "{error}"
    );
}

#[test]
fn a_handler_answers_server_requests_while_a_request_waits() {
    // The server answers the client's request only after its own request was answered.
    let lsp = fake_server(|m| match m["method"].as_str() {
        Some("go") => Some(
            [
                frame(&json!({"jsonrpc": "2.0", "id": 7, "method": "workspace/applyEdit"})),
                frame(&json!({"jsonrpc": "2.0", "id": 8, "method": "window/showMessageRequest"})),
            ]
            .concat(),
        ),
        None if m["id"] == 7 => Some(Vec::new()),
        None => Some(
            [
                note("applied", m["result"].clone()),
                result(&json!(1), json!("done")),
            ]
            .concat(),
        ),
        Some(_) => Some(Vec::new()),
    });
    let mut lsp = lsp
        .with_timeout(Duration::from_millis(300))
        .with_handler(Box::new(|request, out| {
            if request.method == "workspace/applyEdit" {
                out.notify("textDocument/didChange", json!({}))?;
                out.reply(request, json!({"applied": true}))?;
            }
            Ok(())
        }));
    let ask = lsp.request("go", json!({}));
    // The showMessageRequest was left unanswered, so the server never answered `go`...
    assert!(matches!(ask, Err(ClientError::Timeout { .. })), "{ask:?}");
    // ... and it waits in the queue for the caller, while the applyEdit does not.
    let question = lsp.next_incoming("the question").unwrap();
    assert_eq!(question.method, "window/showMessageRequest");
    lsp.reply(&question, json!({"title": "Yes"})).unwrap();
    let id = RequestId(1);
    assert_eq!(lsp.response(id).unwrap()["result"], "done");
    assert_eq!(lsp.received("applied")[0].params, json!({"title": "Yes"}));
}

#[test]
fn replying_to_a_notification_is_an_error() {
    let mut lsp = fake_server(|_| Some(note("window/logMessage", json!({}))));
    lsp.notify("ping", Value::Null).unwrap();
    let log = lsp.next_incoming("a log message").unwrap();
    let error = lsp.reply(&log, Value::Null).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`window/logMessage` is a notification: there is nothing to reply to"
    );
}

#[test]
fn events_are_read_per_session_and_run_by_run() {
    let sent = Arc::new(Mutex::new(0));
    let count = Arc::clone(&sent);
    let mut lsp = fake_server(move |_| {
        let mut n = count.lock().unwrap();
        *n += 1;
        let event = |session: &str, seq: u64, kind: &str| {
            note(
                "tandem/event",
                json!({"session": session, "seq": seq, "event": {"type": kind}}),
            )
        };
        let run = 2 * (*n - 1);
        Some(
            [
                event("a", run + 1, "text_delta"),
                event("b", 1, "text_delta"),
                event("a", run + 2, "settled"),
            ]
            .concat(),
        )
    })
    .with_timeout(Duration::from_millis(300));
    lsp.notify("go", Value::Null).unwrap();
    let first = lsp.next_run("a").unwrap();
    assert_eq!(
        first.iter().map(event_type).collect::<Vec<_>>(),
        ["text_delta", "settled"]
    );
    lsp.notify("go", Value::Null).unwrap();
    let second = lsp.next_run("a").unwrap();
    assert_eq!(second[0]["seq"], 3);
    assert_eq!(lsp.wait_settled("a", 2).unwrap().len(), 4);
    assert_eq!(lsp.events("b").len(), 2);
    let waited = lsp.wait_settled("a", 3);
    assert!(
        matches!(waited, Err(ClientError::Timeout { .. })),
        "{waited:?}"
    );
}

#[test]
fn a_program_that_cannot_start_is_named() {
    let error = LspClient::spawn(Command::new("tandem-test-no-such-server")).err();
    let text = error.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.starts_with("cannot start the language server `tandem-test-no-such-server`: "),
        "{text}"
    );
}

#[test]
fn a_spawned_server_echoes_closes_and_leaves_its_stderr() {
    // `cat` echoes every frame back: a notification returns as the server's own.
    let mut command = Command::new("sh");
    command
        .args(["-c", "cat; echo 'the end' >&2"])
        .stderr(Stdio::piped());
    let mut lsp = LspClient::spawn(command)
        .unwrap()
        .with_timeout(Duration::from_secs(5));
    lsp.notify("window/showMessage", json!({"message": "hi"}))
        .unwrap();
    let echoed = lsp.next_incoming("the echo").unwrap();
    assert_eq!(echoed.params, json!({"message": "hi"}));
    assert_eq!(
        lsp.bytes_read(),
        frame(&json!({"jsonrpc": "2.0",
        "method": "window/showMessage", "params": {"message": "hi"}}))
        .len()
    );
    lsp.close_input();
    assert!(matches!(
        lsp.notify("exit", Value::Null),
        Err(ClientError::InputClosed(m)) if m == "exit"
    ));
    let status = lsp.wait_exit(Duration::from_secs(5)).unwrap();
    assert!(status.success());
    assert_eq!(lsp.stderr().as_deref(), Some("the end\n"));
    assert!(matches!(
        lsp.next_incoming("more"),
        Err(ClientError::Closed)
    ));
}

#[test]
fn raw_bytes_go_out_unframed() {
    let mut lsp = LspClient::spawn(Command::new("cat"))
        .unwrap()
        .with_timeout(Duration::from_secs(5));
    lsp.send_bytes(b"Content-Length: nine\r\n\r\n").unwrap();
    let error = lsp.next_incoming("the echo").unwrap_err();
    assert!(
        error.to_string().contains(r#"Content-Length "nine""#),
        "{error}"
    );
    assert_eq!(lsp.stderr(), None);
    let status = lsp.kill().unwrap();
    assert!(!status.success());
}

#[test]
fn process_calls_on_a_connected_client_say_there_is_no_process() {
    let mut lsp = fake_server(|_| Some(Vec::new()));
    let error = lsp.wait_exit(Duration::from_millis(1)).unwrap_err();
    assert!(matches!(error, ClientError::NoProcess), "{error}");
}
