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
