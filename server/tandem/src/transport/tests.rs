use serde_json::{json, Value};

use super::envelope::{check, id_from_prefix, Kind, Verdict, INVALID_REQUEST, PARSE_ERROR};
use super::frames::{FrameReader, Incoming, MAX_HEADER_LINE};
use super::lines::{Line, LineReader};
use super::MessageLimit;

fn frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

/// Everything the reader makes of `input`, with a 1 KiB limit.
fn read_all(input: &[u8]) -> Vec<Incoming> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut reader = FrameReader::new(input, 1024);
        let mut out = Vec::new();
        while let Some(item) = reader.next().await.expect("read") {
            out.push(item);
        }
        out
    })
}

/// (code, id) of a refusal, or the body of a frame.
fn summary(items: &[Incoming]) -> Vec<Result<String, (i64, Value)>> {
    items
        .iter()
        .map(|i| match i {
            Incoming::Body(b) => Ok(String::from_utf8_lossy(b).into_owned()),
            Incoming::Refused(r) => Err((r.code, r.id.clone())),
        })
        .collect()
}

#[test]
fn well_formed_frames_pass_with_any_header_case_and_extra_headers() {
    let input = format!(
        "\r\ncontent-length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\nX-Other: 1\r\n\r\n{PING}{}",
        PING.len(),
        frame(PING)
    );
    assert_eq!(
        summary(&read_all(input.as_bytes())),
        [Ok(PING.to_string()), Ok(PING.to_string())]
    );
}

#[test]
fn a_bad_or_missing_content_length_is_refused_and_the_next_frame_read() {
    for header in [
        "Content-Length: abc\r\n",
        "Content-Length: -5\r\n",
        "Content-Length: 99999999999999999999999\r\n",
        "Content-Type: application/json\r\n",
    ] {
        let input = format!("{header}\r\n{{\"id\":1}}{}", frame(PING));
        assert_eq!(
            summary(&read_all(input.as_bytes())),
            [Err((PARSE_ERROR, Value::Null)), Ok(PING.to_string())],
            "{header:?}"
        );
    }
}

#[test]
fn garbage_before_a_header_is_refused_once_and_the_frame_still_read() {
    let bom = format!("\u{feff}{}", frame(PING));
    let garbage = format!("hello there\r\n{}", frame(PING));
    let glued = format!("}}}}{}", frame(PING));
    for input in [bom, garbage, glued] {
        assert_eq!(
            summary(&read_all(input.as_bytes())),
            [Err((PARSE_ERROR, Value::Null)), Ok(PING.to_string())],
            "{input:?}"
        );
    }
}

#[test]
fn an_endless_header_line_is_refused_without_being_held() {
    let input = format!("{}\r\n{}", "x".repeat(MAX_HEADER_LINE * 20), frame(PING));
    assert_eq!(
        summary(&read_all(input.as_bytes())),
        [Err((PARSE_ERROR, Value::Null)), Ok(PING.to_string())]
    );
}

#[test]
fn a_body_over_the_limit_is_skipped_and_answered_with_its_id() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":"big-1","method":"x","params":{{"t":"{}"}}}}"#,
        "a".repeat(5000)
    );
    let input = format!("{}{}", frame(&big), frame(PING));
    assert_eq!(
        summary(&read_all(input.as_bytes())),
        [Err((INVALID_REQUEST, json!("big-1"))), Ok(PING.to_string())]
    );
}

#[test]
fn the_envelope_checks_give_the_errors_json_rpc_asks_for() {
    let refused = |body: &[u8]| match check(body) {
        Verdict::Refuse(r) => (r.code, r.id),
        other => panic!("{}: {other:?}", String::from_utf8_lossy(body)),
    };
    assert_eq!(refused(b"{not json"), (PARSE_ERROR, Value::Null));
    assert_eq!(refused(b"{\"id\":1,\xff}"), (PARSE_ERROR, Value::Null));
    assert_eq!(refused(b"\xEF\xBB\xBF{}"), (PARSE_ERROR, Value::Null));
    assert_eq!(refused(b""), (PARSE_ERROR, Value::Null));
    assert_eq!(
        refused(br#"[{"jsonrpc":"2.0","id":1,"method":"a"}]"#),
        (INVALID_REQUEST, Value::Null)
    );
    assert_eq!(refused(br#""hello""#), (INVALID_REQUEST, Value::Null));
    assert_eq!(
        refused(br#"{"jsonrpc":"1.0","id":3,"method":"a"}"#),
        (INVALID_REQUEST, json!(3))
    );
    assert_eq!(
        refused(br#"{"id":"s","method":"a"}"#),
        (INVALID_REQUEST, json!("s"))
    );
    assert_eq!(
        refused(br#"{"jsonrpc":"2.0","id":1.5,"method":"a"}"#),
        (INVALID_REQUEST, Value::Null)
    );
    assert_eq!(
        refused(br#"{"jsonrpc":"2.0","id":{},"method":"a"}"#),
        (INVALID_REQUEST, Value::Null)
    );
    assert_eq!(
        refused(br#"{"jsonrpc":"2.0","id":true,"method":"a"}"#),
        (INVALID_REQUEST, Value::Null)
    );
    assert_eq!(
        refused(br#"{"jsonrpc":"2.0","id":4,"method":5}"#),
        (INVALID_REQUEST, json!(4))
    );
    assert_eq!(
        refused(br#"{"jsonrpc":"2.0","id":4}"#),
        (INVALID_REQUEST, json!(4))
    );
    assert_eq!(
        refused(br#"{"jsonrpc":"2.0","id":4,"method":"a","params":3}"#),
        (INVALID_REQUEST, json!(4))
    );

    assert_eq!(
        check(PING.as_bytes()),
        Verdict::Pass(Kind::Request("ping".into()))
    );
    assert_eq!(
        check(br#"{"jsonrpc":"2.0","method":"exit","params":null}"#),
        Verdict::Pass(Kind::Notification("exit".into()))
    );
    assert_eq!(
        check(br#"{"jsonrpc":"2.0","id":0,"result":null}"#),
        Verdict::Pass(Kind::Response)
    );
    assert!(matches!(
        check(br#"{"jsonrpc":"2.0","id":0,"error":{"code":"x"}}"#),
        Verdict::Drop(_)
    ));
}

#[test]
fn the_id_of_a_cut_message_is_read_only_when_complete() {
    assert_eq!(
        id_from_prefix(br#"{"jsonrpc":"2.0","id":12,"method":"x","params":{"a":"#),
        json!(12)
    );
    assert_eq!(
        id_from_prefix(br#"{"jsonrpc":"2.0","id":"ab","method":"#),
        json!("ab")
    );
    assert_eq!(
        id_from_prefix(br#"{"jsonrpc":"2.0","id":"abc"#),
        Value::Null
    );
    assert_eq!(id_from_prefix(br#"{"jsonrpc":"2.0","id":12"#), Value::Null);
    assert_eq!(
        id_from_prefix(br#"{"method":"x","params":{"id":3,"#),
        Value::Null
    );
}

#[test]
fn acp_lines_refuse_bad_utf8_and_long_lines_and_go_on() {
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"x","params":"{}"}}"#,
        "a".repeat(10_000)
    );
    let input = [
        b"\xff\xfe\n".as_slice(),
        b"\n\r\n",
        long.as_bytes(),
        b"\n",
        PING.as_bytes(),
        b"\r\n",
        PING.as_bytes(),
    ]
    .concat();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let lines = rt.block_on(async {
        let mut reader = LineReader::new(input.as_slice(), 4096);
        let mut out = Vec::new();
        while let Some(line) = reader.next().await.expect("read") {
            out.push(match line {
                Line::Text(t) => Ok(t),
                Line::Refused(r) => Err((r.code, r.id)),
            });
        }
        out
    });
    assert_eq!(
        lines,
        [
            Err((PARSE_ERROR, Value::Null)),
            Err((INVALID_REQUEST, json!(9))),
            Ok(PING.to_string()),
            Ok(PING.to_string()),
        ]
    );
}

#[test]
fn the_limit_comes_from_the_flag_then_the_default() {
    assert_eq!(
        MessageLimit::resolve(Some(1 << 20)),
        Ok(MessageLimit(1 << 20))
    );
    assert!(MessageLimit::resolve(Some(10)).is_err());
}

/// A request whose params nest `depth` levels (the message itself is one more).
fn nested_request(id: &str, depth: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"x","params":{{"a":{}1{}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

#[test]
fn json_nested_deeper_than_the_decoder_reads_is_refused_with_its_id() {
    use super::envelope::MAX_DEPTH;
    // The message, its params and `depth` arrays: 2 + depth levels.
    let deepest = nested_request("5", MAX_DEPTH - 2);
    assert_eq!(
        check(deepest.as_bytes()),
        Verdict::Pass(Kind::Request("x".into()))
    );
    // What passes is what the protocol crates' decoder (serde_json, limit 128) reads.
    serde_json::from_str::<Value>(&deepest).expect("serde_json reads the deepest message passed");
    let too_deep = nested_request("\"d\"", MAX_DEPTH - 1);
    assert!(serde_json::from_str::<Value>(&too_deep).is_err());
    match check(too_deep.as_bytes()) {
        Verdict::Refuse(r) => {
            assert_eq!((r.code, r.id), (INVALID_REQUEST, json!("d")));
            assert!(r.message.contains("nests"), "{}", r.message);
        }
        other => panic!("{other:?}"),
    }
    // Brackets inside strings (escaped quotes too) are text, not nesting.
    let text = format!(
        r#"{{"jsonrpc":"2.0","method":"n","params":{{"t":"\"{}"}}}}"#,
        "[{".repeat(500)
    );
    assert_eq!(
        check(text.as_bytes()),
        Verdict::Pass(Kind::Notification("n".into()))
    );
    // A notification has no id to answer; a response is dropped, never answered.
    let note = format!(
        r#"{{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{{"settings":{}1{}}}}}"#,
        "{\"a\":".repeat(200),
        "}".repeat(200)
    );
    assert!(matches!(check(note.as_bytes()), Verdict::Refuse(r) if r.id == Value::Null));
    let response = format!(
        r#"{{"jsonrpc":"2.0","id":3,"result":{}1{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    assert!(matches!(check(response.as_bytes()), Verdict::Drop(_)));
}

#[test]
fn a_content_length_beyond_the_limit_is_refused_at_once_without_its_body() {
    // A client declares a terabyte, sends the start of a request and waits for the answer: the
    // reader answers now, then reads the next frame whenever it comes.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let mut reader = FrameReader::new(server, 1024);
        use tokio::io::AsyncWriteExt;
        client
            .write_all(b"Content-Length: 1000000000000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":42,")
            .await
            .expect("write");
        let first = reader.next().await.expect("read").expect("an answer");
        assert_eq!(summary(&[first]), [Err((INVALID_REQUEST, json!(42)))]);
        client
            .write_all(frame(PING).as_bytes())
            .await
            .expect("write");
        let next = reader.next().await.expect("read").expect("the next frame");
        assert_eq!(summary(&[next]), [Ok(PING.to_string())]);
        // Nothing at all after the header: answered without an id, not waited for.
        client
            .write_all(b"Content-Length: 99999999999\r\n\r\n")
            .await
            .expect("write");
        let third = reader.next().await.expect("read").expect("an answer");
        assert_eq!(summary(&[third]), [Err((INVALID_REQUEST, Value::Null))]);
    });
}
