//! Load (issue 9, part 4): `tandem lsp` with eight sessions streaming long answers from the mock
//! LLM over real HTTP while the editor types 1000 `didChange` notifications into an open
//! document and keeps sending ordinary requests (`textDocument/codeAction`, `tandem/state`,
//! `tandem/sessions/list`) and follow-up prompts.
//!
//! Correctness under load only — no timing is asserted (latency and memory are measured by
//! `scripts/bench-load`, figures in BENCHMARKS.md):
//! - every request gets its answer, and none is an error;
//! - every session settles, having streamed every answer whole (the text rebuilt from its
//!   `text_delta`s equals the answer the mock sent, once per prompt);
//! - the server's copy of the document after the 1000 changes equals the client's: a session
//!   on the scripted model `read`s the document, and the read tool answers from the server's
//!   buffer (an open document wins over the disk, which still holds the original text).
//!
//! `big_session.rs` (issue 29): resuming a 120,000-entry session file peaks below twice the
//! file's size (measured with `wait4`'s `ru_maxrss`), and the turn is appended correctly.

mod support;

#[path = "load/big_session.rs"]
mod big_session;
#[path = "load/typing.rs"]
mod typing;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use support::lsp::{answers, assistant_texts, file_uri, initialize, new_session};
use support::process::in_sandbox;
use support::Sandbox;
use tandem_tests::lsp_client::{ClientError, LspClient, RequestId};
use tandem_tests::mock_llm::MockResponse;
use tandem_tests::wire::WireApi;

use typing::Buffer;

/// How long any wait may take before the test fails (a hang guard, never a timing assertion).
const GUARD: Duration = Duration::from_secs(90);

const SESSIONS: usize = 8;
const CHANGES: usize = 1000;
/// Words in each streamed answer (one SSE chunk each).
const WORDS: usize = 3000;

fn answer() -> String {
    (0..WORDS).map(|i| format!("w{} ", i % 100)).collect()
}

/// An OpenAI chat-completions SSE body streaming `answer()` one word per chunk.
fn sse_body() -> String {
    let mut body = String::new();
    for i in 0..WORDS {
        body.push_str(&format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"mock-model\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{} \"}},\"finish_reason\":null}}]}}\n\n",
            i % 100
        ));
    }
    body.push_str("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10,\"total_tokens\":20}}\n\ndata: [DONE]\n\n");
    body
}

/// A sandbox whose `mock/mock-model` streams the long answer forever and whose `script/t`
/// reads doc.rs, then says done.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let script = sandbox.home.join("read-doc.json");
    std::fs::write(
        &script,
        json!({"turns": [
            {"toolCalls": [{"name": "read", "arguments": {"path": "doc.rs"}}]},
            {"text": "done"}
        ]})
        .to_string(),
    )
    .unwrap();
    sandbox.write_models(json!({"providers": {
        "mock": {"baseUrl": WireApi::OpenAiCompletions.base_url(&sandbox.mock.base_url()),
                 "api": "openai-completions", "apiKey": "test-key",
                 "models": [{"id": "mock-model"}]},
        "script": {"api": "scripted", "apiKey": "none", "baseUrl": script,
                   "models": [{"id": "t"}]}
    }}));
    sandbox.mock.set_cycle(true);
    // Pieces of 4 KiB, each its own HTTP chunk: the client reads the stream in many parts.
    sandbox.enqueue(
        MockResponse::sse(sse_body())
            .with_header("content-type", "text/event-stream")
            .with_chunk(4096),
    );
    sandbox
}

/// `tandem lsp` in the sandbox, initialized; server requests are answered `null`.
fn start(sandbox: &Sandbox) -> Result<LspClient, ClientError> {
    let mut cmd = in_sandbox(sandbox, &["lsp"]);
    cmd.stderr(Stdio::piped());
    let mut lsp = LspClient::spawn(cmd)?
        .with_timeout(GUARD)
        .with_handler(answers(|_, _| Value::Null));
    initialize(
        &mut lsp,
        &sandbox.cwd,
        json!({"general": {"positionEncodings": ["utf-16"]},
            "experimental": {"tandem": {"events": true}}}),
        json!({"agentDir": sandbox.agent_dir, "model": "mock/mock-model"}),
    )?;
    Ok(lsp)
}

/// A probe request of kind `i % 3`; what its result must look like is checked by [`check`].
fn probe(
    lsp: &mut LspClient,
    i: usize,
    uri: &str,
    sessions: &[String],
    buffer: &Buffer,
) -> Result<RequestId, ClientError> {
    let lines = buffer.text().split('\n').count();
    match i % 3 {
        0 => lsp.send_request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri},
                "range": {"start": {"line": (i / 3) % lines, "character": 0},
                          "end": {"line": (i / 3) % lines, "character": 0}},
                "context": {"diagnostics": []}}),
        ),
        1 => lsp.send_request(
            "tandem/state",
            json!({"session": sessions[i % sessions.len()]}),
        ),
        _ => lsp.send_request("tandem/sessions/list", json!({})),
    }
}

fn check(kind: usize, response: &Value, sessions: &[String]) {
    assert!(response.get("error").is_none(), "{response}");
    let result = &response["result"];
    match kind % 3 {
        0 => assert!(result.is_array() || result.is_null(), "{response}"),
        1 => assert!(
            sessions.iter().any(|s| result["session"] == s.as_str()),
            "{response}"
        ),
        _ => assert!(result.is_array(), "{response}"),
    }
}

#[test]
fn eight_sessions_stream_while_the_editor_types_1000_changes_and_requests_are_all_answered(
) -> anyhow::Result<()> {
    let sandbox = sandbox();
    let doc = sandbox.cwd.join("doc.rs");
    std::fs::write(&doc, typing::START).unwrap();
    let uri = file_uri(&doc);
    let mut lsp = start(&sandbox)?;
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1,
            "text": typing::START}}),
    )?;

    // Eight sessions start streaming.
    let mut prompts = Vec::new();
    for i in 0..SESSIONS {
        prompts.push(lsp.send_request("tandem/prompt", json!({"text": format!("stream {i}")}))?);
    }
    let mut sessions = Vec::new();
    for id in prompts {
        let r = lsp.response(id)?;
        assert_eq!(r["result"]["queued"], false, "{r}");
        sessions.push(r["result"]["session"].as_str().unwrap().to_string());
    }

    // The editor types; every 10th change a request, every 125th a follow-up prompt.
    let mut buffer = Buffer::new(typing::START, 0x9e37_79b9_7f4a_7c15);
    let mut probes = Vec::new();
    let mut follow_ups = Vec::new();
    let mut version = 1;
    let mut sent = 0;
    while sent < CHANGES {
        // Now and then two changes in one notification, applied in order.
        let batch = if sent % 7 == 3 && sent + 2 <= CHANGES {
            2
        } else {
            1
        };
        let changes: Vec<Value> = (0..batch).map(|_| buffer.edit()).collect();
        version += 1;
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                "contentChanges": changes}),
        )?;
        for _ in 0..batch {
            sent += 1;
            if sent % 10 == 0 {
                let kind = sent / 10;
                probes.push((kind, probe(&mut lsp, kind, &uri, &sessions, &buffer)?));
            }
            if sent % 125 == 0 {
                let session = sessions[(sent / 125 - 1) % SESSIONS].clone();
                let id = lsp.send_request(
                    "tandem/prompt",
                    json!({"session": session, "text": "and again", "whenBusy": "followUp"}),
                )?;
                follow_ups.push((session, id));
            }
        }
        lsp.drain()?;
    }
    let events_while_typing = lsp.received("tandem/event").len();

    // Every request is answered, none with an error.
    assert_eq!(probes.len(), CHANGES / 10);
    for (kind, id) in &probes {
        let r = lsp.response(*id)?;
        check(*kind, &r, &sessions);
    }
    // Every session settles after streaming every answer whole.
    let mut runs = [1usize; SESSIONS];
    for (session, id) in &follow_ups {
        let r = lsp.response(*id)?;
        assert!(r.get("error").is_none(), "{r}");
        if r["result"]["queued"] == false {
            let i = sessions.iter().position(|s| s == session).unwrap();
            runs[i] += 1;
        }
    }
    let expected = answer();
    for (i, session) in sessions.iter().enumerate() {
        let events = lsp.wait_settled(session, runs[i])?;
        let prompts = 1 + follow_ups.iter().filter(|(s, _)| s == session).count();
        let texts = assistant_texts(&events);
        assert_eq!(texts.len(), prompts, "session {i}: one answer per prompt");
        for text in &texts {
            assert!(
                text == &expected,
                "session {i}: an answer streamed incomplete or reordered ({} bytes instead of {})",
                text.len(),
                expected.len()
            );
        }
        let state = lsp.request("tandem/state", json!({"session": session}))?;
        assert_eq!(state["running"], false, "{state}");
        assert_eq!(state["queued"], json!({"steering": [], "followUp": []}));
    }

    // The server's view of the document equals the client's copy.
    let reader = new_session(&mut lsp)?;
    lsp.request(
        "tandem/models/set",
        json!({"session": reader, "provider": "script", "id": "t"}),
    )?;
    lsp.request(
        "tandem/prompt",
        json!({"session": reader, "text": "read doc.rs"}),
    )?;
    let events = lsp.wait_settled(&reader, 1)?;
    let read = &events
        .iter()
        .find(|e| e["event"]["type"] == "tool_end")
        .expect("the read tool ran")["event"];
    assert_eq!(read["isError"], false, "{read}");
    let server_view = read["text"].as_str().unwrap();
    let client_view = buffer.text();
    assert_ne!(client_view, typing::START, "the typing changed the text");
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), typing::START);
    assert!(
        server_view == client_view,
        "the server's document differs from the client's after {CHANGES} changes\nserver:\n{server_view}\nclient:\n{client_view}"
    );
    eprintln!(
        "load: {} events while typing, {} in all, {} bytes from the server, {} runs",
        events_while_typing,
        lsp.seen().len(),
        lsp.bytes_read(),
        runs.iter().sum::<usize>()
    );
    lsp.shutdown()?;
    Ok(())
}

/// Regression (found by the test above): a follow-up that arrived while a run was ending — after
/// the agent's last look at its queues, before the session went idle — was answered `queued:
/// true` and then never run. Here the window is held open: the answer pushes the context past
/// the compaction threshold, so a compaction (a slow summary call) runs after the agent loop
/// ended, and the follow-up is sent when its `compaction_start` arrives.
#[test]
fn a_follow_up_sent_while_a_run_ends_is_still_answered() -> anyhow::Result<()> {
    use tandem_tests::wire::{turn, Turn};
    let api = WireApi::OpenAiCompletions;
    let sandbox = Sandbox::with_model(api, json!({"id": "mock-model", "contextWindow": 4096}));
    sandbox.write_settings(json!({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 10}}));
    let long = "The first answer, long enough to keep. ".repeat(40);
    // 3500 input tokens of a 4096 window with 1000 reserved: past the threshold.
    sandbox.answer(&Turn::text(long.clone()).with_usage(3500, 20, 0));
    sandbox.enqueue(
        MockResponse::sse(turn(api, &Turn::text("Summary.")))
            .with_header("content-type", "text/event-stream")
            .with_chunk(64)
            .with_chunk_delay(std::time::Duration::from_millis(40)),
    );
    sandbox.answer(&Turn::text("second answer"));
    let mut lsp = start(&sandbox)?;
    let session = lsp.request("tandem/prompt", json!({"text": "first"}))?["session"]
        .as_str()
        .unwrap()
        .to_string();
    lsp.wait_until("compaction_start", |c| {
        c.events(&session)
            .iter()
            .any(|e| e["event"]["type"] == "compaction_start")
    })?;
    let queued = lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "then this", "whenBusy": "followUp"}),
    )?;
    assert_eq!(queued["queued"], true, "{queued}");
    lsp.wait_until("the follow-up's answer", |c| {
        let events = c.events(&session);
        assistant_texts(&events).len() == 2
            && events
                .last()
                .is_some_and(|e| e["event"]["type"] == "settled")
    })?;
    assert_eq!(
        assistant_texts(&lsp.events(&session)),
        [long, "second answer".to_string()]
    );
    let state = lsp.request("tandem/state", json!({"session": session}))?;
    assert_eq!(
        state["queued"],
        json!({"steering": [], "followUp": []}),
        "{state}"
    );
    assert_eq!(state["running"], false, "{state}");
    lsp.shutdown()?;
    Ok(())
}
