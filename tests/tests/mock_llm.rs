//! Tests of the mock LLM server itself, driven over real HTTP with reqwest.
//!
//! Nothing here sleeps: ordering is proven by sequencing requests, and the only clock is the
//! client-side timeout that detects a stalled stream.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use tandem_tests::mock_llm::{Ending, FixtureError, MockLlm, MockResponse};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/mock")
        .join(name)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client builds")
}

/// Reads the body chunk by chunk until it ends or fails; returns the chunks and the error.
async fn read_chunks(mut response: reqwest::Response) -> (Vec<Vec<u8>>, Option<reqwest::Error>) {
    let mut chunks = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => chunks.push(chunk.to_vec()),
            Ok(None) => return (chunks, None),
            Err(err) => return (chunks, Some(err)),
        }
    }
}

#[test]
fn parses_a_fixture_with_comments_headers_and_chunking() {
    let response = MockResponse::from_file(fixture("text.sse")).expect("fixture parses");
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["x-request-id"], "req_mock_text");
    assert_eq!(response.chunk_size(), Some(7));
    assert_eq!(response.ending(), Ending::Complete);
    let body = std::str::from_utf8(response.body()).expect("body is UTF-8");
    assert!(body.starts_with("data: {\"id\":\"c1\""), "{body}");
    assert!(body.ends_with("data: [DONE]\n\n"), "{body}");
    assert!(response.name().ends_with("text.sse"));

    let error = MockResponse::from_file(fixture("rate-limit.json")).expect("fixture parses");
    assert_eq!(error.status(), 429);
    assert_eq!(error.headers()["content-type"], "application/json");
    assert_eq!(error.headers()["retry-after"], "2");

    assert_eq!(
        MockResponse::from_file(fixture("cut.sse"))
            .unwrap()
            .ending(),
        Ending::Cut
    );
    assert_eq!(
        MockResponse::from_file(fixture("stall.sse"))
            .unwrap()
            .ending(),
        Ending::Stall
    );
}

#[test]
fn crlf_body_is_kept_byte_for_byte() {
    let raw = std::fs::read(fixture("crlf.sse")).expect("fixture readable");
    let separator = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("fixture has a CRLF separator");
    let response = MockResponse::parse("crlf.sse", &raw).expect("fixture parses");
    assert_eq!(response.body().as_ref(), &raw[separator + 4..]);
    assert!(response.body().windows(2).any(|w| w == b"\r\n"));
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream; charset=utf-8"
    );
}

#[test]
fn missing_separator_names_the_file_and_line() {
    let path = fixture("invalid/missing-separator.sse");
    let err = MockResponse::from_file(&path).expect_err("must not parse");
    assert!(
        matches!(err, FixtureError::MissingSeparator { line: 3, .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!("{}:3:", path.display())),
        "{message}"
    );
}

#[test]
fn unknown_key_names_the_file_line_and_key() {
    let path = fixture("invalid/unknown-key.sse");
    let err = MockResponse::from_file(&path).expect_err("must not parse");
    assert!(
        matches!(&err, FixtureError::UnknownKey { line: 3, key, .. } if key == "chunk-size"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!("{}:3:", path.display())),
        "{message}"
    );
    assert!(message.contains("chunk-size"), "{message}");
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let err = MockResponse::from_file(fixture("no-such.sse")).expect_err("must fail");
    assert!(matches!(err, FixtureError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such.sse"), "{err}");
}

#[tokio::test]
async fn serves_the_body_in_pieces_that_may_split_utf8() {
    let mock = MockLlm::start().await.unwrap();
    mock.enqueue_file(fixture("text.sse")).unwrap();
    let expected = MockResponse::from_file(fixture("text.sse")).unwrap();

    let response = client()
        .post(mock.url("/v1/chat/completions"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["x-request-id"], "req_mock_text");
    let (chunks, error) = read_chunks(response).await;
    assert!(error.is_none(), "{error:?}");

    assert_eq!(chunks.concat(), expected.body().as_ref());
    // Each 7-byte piece is its own HTTP chunk, and the client never sees data across them.
    assert!(chunks.iter().all(|c| !c.is_empty() && c.len() <= 7));
    assert!(chunks.len() >= expected.body().len().div_ceil(7));
    // The fixture is written so that some pieces end inside a multi-byte character.
    assert!(expected
        .body()
        .chunks(7)
        .any(|piece| std::str::from_utf8(piece).is_err()));
}

#[tokio::test]
async fn cut_delivers_the_body_then_fails_it() {
    let mock = MockLlm::start().await.unwrap();
    mock.enqueue_file(fixture("cut.sse")).unwrap();
    let expected = MockResponse::from_file(fixture("cut.sse")).unwrap();

    let response = client().post(mock.url("/v1")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let (chunks, error) = read_chunks(response).await;
    assert_eq!(chunks.concat(), expected.body().as_ref());
    let error = error.expect("a cut stream must end in an error, not a clean end");
    assert!(error.is_body() || error.is_decode(), "{error:?}");
}

#[tokio::test]
async fn stall_keeps_the_connection_open_until_the_client_gives_up() {
    let mock = MockLlm::start().await.unwrap();
    mock.enqueue_file(fixture("stall.sse")).unwrap();
    mock.enqueue(MockResponse::json(200, json!({"ok": true})));
    let expected = MockResponse::from_file(fixture("stall.sse")).unwrap();

    let mut response = client().post(mock.url("/v1")).send().await.unwrap();
    let mut received = Vec::new();
    while received.len() < expected.body().len() {
        match response.chunk().await {
            Ok(Some(chunk)) => received.extend_from_slice(&chunk),
            other => panic!("the stalled body ended early: {other:?}"),
        }
    }
    assert_eq!(received, expected.body().as_ref());
    // The client gives up on its own clock; the body neither ends nor fails meanwhile. The
    // timeout only starts once the whole body is in, so a slow machine cannot fail this.
    let next = tokio::time::timeout(Duration::from_millis(300), response.chunk()).await;
    assert!(
        next.is_err(),
        "a stalled stream must send nothing more: {next:?}"
    );
    drop(response);

    // The server is unharmed by the abandoned connection.
    let next = client().get(mock.url("/after")).send().await.unwrap();
    assert_eq!(
        next.json::<serde_json::Value>().await.unwrap(),
        json!({"ok": true})
    );
}

#[tokio::test]
async fn serves_concurrent_connections() {
    let mock = MockLlm::start().await.unwrap();
    mock.enqueue(MockResponse::sse("data: first\n\n").with_stall());
    mock.enqueue(MockResponse::sse("data: second\n\n"));

    // The first exchange stays open; the second must still be answered on another connection.
    let mut stalled = client().get(mock.url("/one")).send().await.unwrap();
    assert_eq!(
        stalled.chunk().await.unwrap().unwrap().as_ref(),
        b"data: first\n\n"
    );
    let second = client().get(mock.url("/two")).send().await.unwrap();
    assert_eq!(second.text().await.unwrap(), "data: second\n\n");

    let requests = mock.wait_for_requests(2).await.unwrap();
    assert_ne!(requests[0].connection, requests[1].connection);
}

#[tokio::test]
async fn empty_queue_answers_500_naming_the_request() {
    let mock = MockLlm::start().await.unwrap();
    let response = client()
        .post(mock.url("/v1/messages?beta=true"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({"error": {"message": "mock-llm: no response queued for POST /v1/messages?beta=true"}})
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].response, None);
}

#[tokio::test]
async fn records_method_path_headers_and_json_body() {
    let mock = MockLlm::start().await.unwrap();
    mock.enqueue_file(fixture("rate-limit.json")).unwrap();
    let sent = json!({"model": "gpt-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]});

    let response = client()
        .post(mock.url("/v1/chat/completions?x=1"))
        .header("Authorization", "Bearer sk-test")
        .header("X-Custom-Thing", "yes")
        .json(&sent)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");

    let requests = mock.wait_for_requests(1).await.unwrap();
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions?x=1");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.header("X-CUSTOM-THING"), Some("yes"));
    assert!(request
        .headers
        .iter()
        .any(|(name, _)| name == "x-custom-thing"));
    assert!(request
        .headers
        .iter()
        .all(|(name, _)| *name == name.to_ascii_lowercase()));
    assert_eq!(request.json().unwrap(), sent);
    assert!(request
        .response
        .as_deref()
        .unwrap()
        .ends_with("rate-limit.json"));
}

#[tokio::test]
async fn answers_in_fifo_order_on_a_kept_alive_connection() {
    let mock = MockLlm::start().await.unwrap();
    for word in ["one", "two", "three"] {
        mock.enqueue(MockResponse::sse(format!("data: {word}\n\n")).with_name(word));
    }
    assert_eq!(mock.queued(), 3);

    let client = client();
    let mut bodies = Vec::new();
    for path in ["/a", "/b", "/c"] {
        bodies.push(
            client
                .get(mock.url(path))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
        );
    }
    assert_eq!(
        bodies,
        ["data: one\n\n", "data: two\n\n", "data: three\n\n"]
    );

    let requests = mock.wait_for_requests(3).await.unwrap();
    let order: Vec<_> = requests
        .iter()
        .map(|r| (r.path.as_str(), r.response.as_deref().unwrap()))
        .collect();
    assert_eq!(order, [("/a", "one"), ("/b", "two"), ("/c", "three")]);
    assert!(requests
        .iter()
        .all(|r| r.connection == requests[0].connection));
    assert_eq!(mock.queued(), 0);
}

#[tokio::test]
async fn cycling_replays_the_queue() {
    let mock = MockLlm::start().await.unwrap();
    mock.set_cycle(true);
    mock.enqueue(MockResponse::sse("a"));
    mock.enqueue(MockResponse::sse("b"));
    let client = client();
    let mut bodies = Vec::new();
    for _ in 0..5 {
        bodies.push(
            client
                .get(mock.base_url())
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
        );
    }
    assert_eq!(bodies, ["a", "b", "a", "b", "a"]);
}

#[tokio::test]
async fn waiting_for_requests_that_never_come_fails_clearly() {
    let mock = MockLlm::start().await.unwrap();
    let err = mock
        .wait_for_requests_within(1, Duration::from_millis(50))
        .await
        .expect_err("no request was sent");
    assert_eq!(err.wanted, 1);
    assert!(err.to_string().contains("waiting for 1 request"), "{err}");
}

#[tokio::test]
async fn shutdown_closes_the_port() {
    let mock = MockLlm::start().await.unwrap();
    let addr = mock.addr();
    assert!(mock.base_url().starts_with("http://127.0.0.1:"));
    mock.shutdown().await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[test]
fn builders_set_status_headers_and_delivery() {
    let response = MockResponse::json(503, json!({"error": "busy"}))
        .with_header("retry-after", "1")
        .with_header("Retry-After", "5")
        .with_chunk(2)
        .with_chunk_delay(Duration::from_millis(3))
        .with_cut();
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["retry-after"], "5");
    assert_eq!(response.headers().get_all("retry-after").iter().count(), 1);
    assert_eq!(response.body().as_ref(), br#"{"error":"busy"}"#);
    assert_eq!(response.chunk_size(), Some(2));
    assert_eq!(response.chunk_delay(), Duration::from_millis(3));
    assert_eq!(response.ending(), Ending::Cut);
    assert_eq!(MockResponse::sse("x").with_stall().ending(), Ending::Stall);
    assert_eq!(MockResponse::sse("x").with_chunk(0).chunk_size(), None);
}

mod binary {
    //! The `mock-llm` binary, driven as a child process the way editor tests use it.

    use std::process::Stdio;
    use std::time::Duration;

    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
    use tokio::process::Command;

    use super::{client, fixture};

    const LIMIT: Duration = Duration::from_secs(30);

    #[tokio::test]
    async fn prints_its_url_serves_in_a_loop_and_exits_when_stdin_closes() {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
            .arg("--loop")
            .arg(fixture("rate-limit.json"))
            .arg(fixture("crlf.sse"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("mock-llm starts");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut url = String::new();
        tokio::time::timeout(LIMIT, stdout.read_line(&mut url))
            .await
            .expect("URL printed in time")
            .unwrap();
        let url = url.trim_end().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");

        let crlf = std::fs::read(fixture("crlf.sse")).unwrap();
        let client = client();
        let mut statuses = Vec::new();
        for _ in 0..3 {
            let response = client.post(format!("{url}/v1")).send().await.unwrap();
            statuses.push(response.status().as_u16());
            let body = response.bytes().await.unwrap();
            if statuses.len() == 2 {
                assert!(crlf.ends_with(&body), "CRLF body served verbatim");
            }
        }
        assert_eq!(statuses, [429, 200, 429]);

        drop(child.stdin.take());
        let status = tokio::time::timeout(LIMIT, child.wait())
            .await
            .expect("exits once stdin closes")
            .unwrap();
        assert!(status.success(), "{status}");
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).await.unwrap();
        assert_eq!(rest, "", "stdout holds only the URL line");
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .await
            .unwrap();
        assert!(stderr.contains("#3 POST /v1"), "{stderr}");
    }

    #[tokio::test]
    async fn a_broken_fixture_fails_before_any_url_is_printed() {
        let output = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
            .arg(fixture("invalid/unknown-key.sse"))
            .stdin(Stdio::null())
            .output();
        let output = tokio::time::timeout(LIMIT, output)
            .await
            .expect("exits in time")
            .unwrap();
        assert!(!output.status.success());
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("unknown-key.sse:3:"), "{stderr}");
    }
}
