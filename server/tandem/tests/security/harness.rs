//! What only the security tests use: which key each provider sends, careless provider answers
//! that echo it, and the search for a secret in every file a front door wrote. The front doors
//! themselves, and the secrets, are `support::front_doors`.

use std::path::{Path, PathBuf};

use serde_json::json;
use tandem_tests::mock_llm::MockResponse;

use crate::support::front_doors::*;
use crate::support::Sandbox;

/// The files the tests write themselves (they hold the secrets on purpose).
const INPUTS: [&str; 4] = ["models.json", "auth.json", "settings.json", "script.json"];

/// The key each provider sends, and whether it sends the custom header.
pub fn key_of(provider: &str) -> &'static str {
    match provider {
        "lit" | "hdr" => KEY_MODELS,
        "envp" => KEY_ENV,
        "authp" => KEY_AUTH,
        other => panic!("no key for {other}"),
    }
}

/// What a careless provider answers: a 401 whose message echoes the request's auth headers.
pub fn echo_401(key: &str, header: bool) -> MockResponse {
    let mut message =
        format!("Incorrect API key provided: Bearer {key}. You sent authorization: Bearer {key}");
    if header {
        message.push_str(&format!("; x-custom-auth: {HEADER_SECRET}"));
    }
    MockResponse::json(
        401,
        json!({"error": {"message": message, "type": "invalid_request_error",
            "code": "invalid_api_key"}}),
    )
}

/// A 200 stream that fails with an error event echoing the key (and the header).
pub fn echo_in_stream(key: &str, header: bool) -> MockResponse {
    let mut message = format!("request rejected for Bearer {key}");
    if header {
        message.push_str(&format!(" with x-custom-auth {HEADER_SECRET}"));
    }
    let chunk = json!({"error": {"message": message, "type": "invalid_request_error"}});
    MockResponse::sse(format!("data: {chunk}\n\n")).with_header("content-type", "text/event-stream")
}

/// A 500 echoing the key: retried once (settings), then reported.
pub fn echo_500(key: &str) -> MockResponse {
    MockResponse::json(
        500,
        json!({"error": {"message": format!("internal error handling key {key}")}}),
    )
}

/// Every file under `dir` (recursively) the program wrote, with its text.
pub fn written_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if !INPUTS.iter().any(|n| path.file_name() == Some(n.as_ref())) {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.push((path, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    out
}

/// Checks every file the program wrote under the sandbox's home (session files above all).
/// Returns how many session files there were.
pub fn assert_files_clean(sandbox: &Sandbox) -> usize {
    let files = written_files(&sandbox.home);
    for (path, text) in &files {
        assert_clean(&format!("file {}", path.display()), text);
    }
    files
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "jsonl"))
        .count()
}
