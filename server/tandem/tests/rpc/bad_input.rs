//! Strict JSONL framing and bad input: each bad line gets pi's error response and the next line
//! is served.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::client::Rpc;
use crate::support::{Sandbox, MODEL};

#[test]
fn malformed_lines_get_pis_errors_and_serving_goes_on() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &[]);
    rpc.write_raw(b"not json\n");
    let parse = rpc.next();
    assert_eq!(
        (&parse["type"], &parse["command"], &parse["success"]),
        (&json!("response"), &json!("parse"), &json!(false))
    );
    assert!(parse.get("id").is_none());
    assert!(parse["error"]
        .as_str()
        .is_some_and(|e| e.starts_with("Failed to parse command: ")));
    for line in ["[1,2]", "42", "null", "{\"id\":\"x\"}"] {
        rpc.write_raw(format!("{line}\n").as_bytes());
        let response = rpc.next();
        assert_eq!(response["error"], "Unknown command: undefined", "{line}");
        assert!(response.get("command").is_none(), "{line}");
    }
    let unknown = rpc.call(json!({"type": "teleport"}));
    assert_eq!(
        unknown,
        json!({"id": "req-1", "type": "response", "command": "teleport", "success": false,
            "error": "Unknown command: teleport"})
    );
    let missing = rpc.call(json!({"type": "prompt"}));
    assert_eq!(missing["error"], "prompt: `message` is required (a string)");
    let wrong = rpc.call(json!({"type": "set_model", "provider": "mock", "modelId": 7}));
    assert_eq!(
        wrong["error"],
        "set_model: `modelId` must be a string, not a number"
    );
    let images = rpc.call(json!({"type": "prompt", "message": "x", "images": "cat.png"}));
    assert!(
        images["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("prompt: `images` must be")),
        "{images}"
    );
    // Images are checked before they join the session (issue 29), as ACP's are: base64 of a
    // PNG, JPEG, GIF or WebP of the type claimed.
    for (data, mime, why) in [
        (
            "%%% not base64",
            "image/png",
            "images[0]: the image data is not valid base64",
        ),
        (
            "aGVsbG8=",
            "text/plain",
            "images[0]: \"text/plain\" is not an image type",
        ),
        (
            "aGVsbG8=",
            "image/png",
            "images[0]: \"image/png\" is not an image type",
        ),
    ] {
        let bad = rpc.call(json!({"type": "prompt", "message": "x",
            "images": [{"type": "image", "data": data, "mimeType": mime}]}));
        assert!(
            bad["error"].as_str().is_some_and(|e| e.contains(why)),
            "{why}: {bad}"
        );
    }
    assert!(sandbox.requests().is_empty());
    // A number id is echoed as a number.
    rpc.send(&json!({"id": 7, "type": "get_available_thinking_levels"}));
    assert_eq!(rpc.next()["id"], 7);
    // An answer to no open question is ignored; the next command is answered.
    rpc.send(&json!({"type": "extension_ui_response", "id": "nobody", "value": "x"}));
    assert_eq!(rpc.call(json!({"type": "get_state"}))["success"], true);
    assert!(rpc.finish().success());
}

#[test]
fn framing_is_lf_only_with_one_cr_stripped_and_invalid_utf8_refused() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("ok"));
    let mut rpc = Rpc::start(&sandbox, &[]);
    // CRLF, blank lines between commands.
    rpc.write_raw(b"\n\r\n{\"id\":\"a\",\"type\":\"get_state\"}\r\n");
    assert_eq!(rpc.next()["id"], "a");
    // Not UTF-8: a parse error, then the next line.
    rpc.write_raw(b"{\"id\":\"b\",\"type\":\"get_state\",\"x\":\"\xff\"}\n");
    let refused = rpc.next();
    assert_eq!(refused["command"], "parse");
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("not valid UTF-8")),
        "{refused}"
    );
    // U+2028 and U+2029 inside a string are not line ends.
    rpc.write_raw(
        "{\"id\":\"c\",\"type\":\"prompt\",\"message\":\"one\u{2028}two\u{2029}three\"}\n"
            .as_bytes(),
    );
    assert_eq!(rpc.next()["data"]["disposition"], "started");
    rpc.until("agent_settled");
    let messages = rpc.data(json!({"type": "get_messages"}));
    assert_eq!(
        messages["messages"][1]["content"][0]["text"],
        "one\u{2028}two\u{2029}three"
    );
    // A command split across writes is one line.
    rpc.write_raw(b"{\"id\":\"d\",");
    rpc.write_raw(b"\"type\":\"get_state\"}\n");
    assert_eq!(rpc.next()["id"], "d");
    assert!(rpc.finish().success());
}

#[test]
fn a_line_over_the_size_limit_is_refused_and_skipped() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start_raw(
        &sandbox,
        &["--mode", "rpc", "--model", MODEL],
        &[("TANDEM_MAX_MESSAGE_BYTES", "4096")],
    );
    let huge = format!(
        "{{\"id\":\"big\",\"type\":\"prompt\",\"message\":\"{}\"}}\n",
        "x".repeat(10_000)
    );
    rpc.write_raw(huge.as_bytes());
    let refused = rpc.next();
    assert_eq!(refused["success"], false);
    // Its id, read from the line's start, goes with the refusal (issue 29).
    assert_eq!(refused["id"], "big", "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("longer than the limit of 4096 bytes")),
        "{refused}"
    );
    assert_eq!(rpc.data(json!({"type": "get_state"}))["messageCount"], 0);
    assert!(sandbox.requests().is_empty());
    assert!(rpc.finish().success());
}

#[test]
fn file_arguments_are_refused_in_rpc_mode() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let run = sandbox.run(&["--mode", "rpc", "@notes.md"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("@file arguments are not supported in RPC mode"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}
