//! Long answers: 100 KB in 20,000 chunks rendered exactly (the terminal's history and the
//! session file agree), and a window resized while an answer streams.

use std::time::Duration;

use tandem_tests::mock_llm::MockResponse;
use tandem_tests::wire::WireApi;

use crate::support::Sandbox;
use crate::{answers, open, ready, send, wait_text};

/// One Chat Completions SSE event carrying `text`.
fn chunk(text: &str) -> String {
    let event = serde_json::json!({
        "id": "chatcmpl-tui", "object": "chat.completion.chunk", "created": 1,
        "model": "mock-model",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}],
    });
    format!("data: {event}\n\n")
}

/// An answer of `text` streamed in pieces of `piece` characters.
fn streamed(text: &str, piece: usize) -> MockResponse {
    let mut body = String::new();
    let chars: Vec<char> = text.chars().collect();
    for part in chars.chunks(piece) {
        body.push_str(&chunk(&part.iter().collect::<String>()));
    }
    body.push_str(
        "data: {\"id\":\"chatcmpl-tui\",\"object\":\"chat.completion.chunk\",\"created\":1,\
         \"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\
         \"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10,\"total_tokens\":20}}\n\n\
         data: [DONE]\n\n",
    );
    MockResponse::sse(body)
}

/// Paragraphs of numbered words, about `bytes` long, ending with a marker line.
fn long_answer(bytes: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    while out.len() < bytes {
        out.push_str(&format!("Paragraph {n}:"));
        for w in 0..12 {
            out.push_str(&format!(" w{n}x{w}"));
        }
        out.push_str(".\n\n");
        n += 1;
    }
    out.push_str("END-OF-ANSWER");
    out
}

/// The words of the answer as the terminal's history shows it: everything between the prompt
/// line and the marker.
fn shown_words(history: &str, prompt: &str) -> Vec<String> {
    let start = history
        .find(&format!("› {prompt}"))
        .map(|i| i + format!("› {prompt}").len())
        .expect("the prompt in the history");
    let end = history[start..]
        .find("END-OF-ANSWER")
        .map(|i| start + i + "END-OF-ANSWER".len())
        .expect("the answer's end in the history");
    history[start..end]
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_100_kb_answer_in_20000_chunks_is_shown_exactly() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let answer = long_answer(100_000);
    sandbox.enqueue(streamed(&answer, answer.len() / 20_000));
    let tmux = open(&sandbox, &[], 120, 40);
    send(&tmux, "write a lot");
    tmux.wait_for("the whole answer", Duration::from_secs(180), |s| {
        s.contains("END-OF-ANSWER") && !s.contains("Working…")
    })
    .unwrap_or_else(|e| panic!("{e}"));
    ready(&tmux);
    let recorded = answers(&sandbox);
    assert_eq!(recorded, std::slice::from_ref(&answer));
    let history = tmux.capture_history().text();
    let expected: Vec<String> = answer.split_whitespace().map(str::to_string).collect();
    assert_eq!(shown_words(&history, "write a lot"), expected);
}

#[test]
fn a_window_resized_mid_stream_still_shows_the_whole_answer() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let answer = long_answer(6_000);
    sandbox.enqueue(
        streamed(&answer, 40)
            .with_chunk(400)
            .with_chunk_delay(Duration::from_millis(20)),
    );
    let tmux = open(&sandbox, &[], 120, 30);
    send(&tmux, "stream slowly");
    wait_text(&tmux, "Paragraph 3:");
    tmux.resize(60, 20);
    wait_text(&tmux, "Paragraph 20:");
    tmux.resize(100, 35);
    wait_text(&tmux, "Paragraph 30:");
    // Shorter, then taller again at once: lines come back from the terminal's history.
    tmux.resize(80, 12);
    tmux.resize(100, 35);
    tmux.wait_for("the whole answer", Duration::from_secs(120), |s| {
        s.contains("END-OF-ANSWER") && !s.contains("Working…")
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let history = tmux.capture_history().text();
    let expected: Vec<String> = answer.split_whitespace().map(str::to_string).collect();
    assert_eq!(shown_words(&history, "stream slowly"), expected);
    // Lines printed after the shrink fit the narrow window.
    let screen = tmux.capture();
    assert!(
        screen.text().lines().all(|l| l.chars().count() <= 100),
        "{screen}"
    );
}
