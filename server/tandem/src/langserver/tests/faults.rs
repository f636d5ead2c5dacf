//! Servers that are missing, exit at once, never answer, crash mid-request or hang: each is an
//! error naming the server, within the bound, and the next request does not wait again.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_coding::intel::{Document, IntelError, LanguageIntel, Pos};

use super::{repo, servers};
use crate::langserver::{LanguageServers, Limits};

fn quick() -> Limits {
    Limits {
        initialize: Duration::from_secs(1),
        request: Duration::from_secs(1),
        first_report: Duration::from_millis(300),
        shutdown: Duration::from_millis(500),
        restarts: 2,
    }
}

/// A workspace with one `a.foo` file, and servers with `entry` as `fake` for `.foo` files.
fn fake(entry: Value) -> (tempfile::TempDir, std::sync::Arc<LanguageServers>, Document) {
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path().canonicalize().expect("real path");
    let path = root.join("a.foo");
    std::fs::write(&path, "hello\n").expect("write");
    let mut entry = entry;
    entry["fileTypes"] = json!(["foo"]);
    let servers = servers(&root, json!({ "fake": entry }), quick());
    let document = Document {
        path,
        text: "hello\n".to_string(),
    };
    (temp, servers, document)
}

fn failed(result: Result<impl std::fmt::Debug, IntelError>) -> String {
    match result {
        Err(IntelError::Failed(text)) => text,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn gone(pid_file: &Path) -> bool {
    let pid = std::fs::read_to_string(pid_file).expect("pid file");
    !PathBuf::from(format!("/proc/{}", pid.trim())).exists()
}

#[tokio::test]
async fn a_missing_command_is_no_server_naming_the_setting() {
    let (_temp, servers, document) = fake(json!({"command": "tandem-no-such-language-server"}));
    match servers.definition(document.clone(), Pos::default()).await {
        Err(IntelError::NoServer { path, hint }) => {
            assert_eq!(path, document.path);
            let hint = hint.unwrap_or_default();
            assert!(hint.contains("`tandem-no-such-language-server`"), "{hint}");
            assert!(hint.contains("languageServers.fake"), "{hint}");
        }
        other => panic!("expected NoServer, got {other:?}"),
    }
    assert!(matches!(
        servers.diagnostics(Some(vec![document]), None).await,
        Err(IntelError::NoServer { .. })
    ));
}

#[tokio::test]
async fn a_file_no_server_handles_is_not_analyzed_and_other_requests_say_what_to_configure() {
    let (_temp, servers, document) = fake(json!({"command": "true"}));
    let other = Document {
        path: document.path.with_extension("zzz"),
        text: String::new(),
    };
    let answer = servers
        .diagnostics(Some(vec![other.clone()]), None)
        .await
        .expect("diagnostics");
    assert!(!answer.files[0].analyzed && answer.settled);
    let error = servers
        .hover(other, Pos::default())
        .await
        .expect_err("no server");
    assert!(
        error.to_string().contains("\"languageServers\"") && error.to_string().contains("zzz"),
        "{error}"
    );
    let outside = Document {
        path: PathBuf::from("/elsewhere/b.foo"),
        text: String::new(),
    };
    let error = servers
        .hover(outside, Pos::default())
        .await
        .expect_err("outside");
    assert!(
        error.to_string().contains("look only at files inside"),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_that_exits_at_once_is_reported_with_its_status_and_stderr() {
    let (_temp, servers, document) = fake(json!({
        "command": "sh",
        "args": ["-c", "echo 'fake: no config found' >&2; exit 3"],
    }));
    let started = Instant::now();
    let text = failed(servers.definition(document.clone(), Pos::default()).await);
    assert!(text.contains("language server `fake`"), "{text}");
    assert!(text.contains("exit status 3"), "{text}");
    assert!(text.contains("fake: no config found"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // Not started again: the same answer at once.
    let started = Instant::now();
    assert_eq!(failed(servers.hover(document, Pos::default()).await), text);
    assert!(started.elapsed() < Duration::from_millis(200));
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_fails_within_the_bound_and_is_killed() {
    let temp = tempfile::tempdir().expect("temp dir");
    let pid_file = temp.path().join("pid");
    let script = format!("echo $$ > '{}'; exec sleep 1000", pid_file.display());
    let (_temp, servers, document) = fake(json!({"command": "sh", "args": ["-c", script]}));
    let started = Instant::now();
    let text = failed(servers.definition(document.clone(), Pos::default()).await);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(
        text.contains("language server `fake` did not answer `initialize` within 1 s"),
        "{text}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(gone(&pid_file), "the hung server still runs");
    // Diagnostics too end within their bound with the same error.
    let started = Instant::now();
    let error = servers.diagnostics(Some(vec![document]), None).await;
    assert_eq!(failed(error), text);
    assert!(started.elapsed() < Duration::from_millis(500));
}

#[tokio::test]
async fn a_crashing_server_is_restarted_twice_and_a_hung_request_times_out() {
    let temp = tempfile::tempdir().expect("temp dir");
    let starts = temp.path().join("starts");
    let script = repo().join("fixtures/langservers/misbehaving-server.py");
    let (_temp, servers, document) = fake(json!({
        "command": "python3",
        "args": [script],
        "env": {"MISBEHAVING_STARTS": starts},
    }));
    let started = Instant::now();
    let text = failed(servers.hover(document.clone(), Pos::default()).await);
    assert!(
        text.contains("language server `fake` did not answer `textDocument/hover` within 1 s"),
        "{text}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let refs = servers
        .references(document.clone(), Pos::default(), true)
        .await;
    assert_eq!(refs, Ok(Vec::new()));

    for _ in 0..3 {
        let text = failed(servers.definition(document.clone(), Pos::default()).await);
        assert!(
            text.contains(
                "language server `fake` exited during `textDocument/definition` (exit status 5)"
            ),
            "{text}"
        );
        assert!(text.contains("misbehaving: crashing on purpose"), "{text}");
    }
    let text = failed(servers.definition(document.clone(), Pos::default()).await);
    assert!(
        text.contains("language server `fake` stopped 3 times (the last time: exit status 5)"),
        "{text}"
    );
    let count = std::fs::read_to_string(&starts)
        .expect("starts")
        .lines()
        .count();
    assert_eq!(count, 3);
}

#[tokio::test]
async fn shutdown_stops_the_servers_and_later_requests_fail() {
    let temp = tempfile::tempdir().expect("temp dir");
    let starts = temp.path().join("starts");
    let script = repo().join("fixtures/langservers/misbehaving-server.py");
    let (_temp, servers, document) = fake(json!({
        "command": "python3",
        "args": [script],
        "env": {"MISBEHAVING_STARTS": starts},
    }));
    servers
        .references(document.clone(), Pos::default(), false)
        .await
        .expect("references");
    let running = servers.pool.running();
    assert_eq!(running.len(), 1);
    let client = running[0].clone();
    let started = Instant::now();
    servers.shutdown().await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(!client.alive());
    assert_eq!(client.exit_status().as_deref(), Some("exit status 0"));
    let text = failed(servers.references(document, Pos::default(), false).await);
    assert!(text.contains("stopped with the session"), "{text}");
}
