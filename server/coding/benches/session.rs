//! Resuming a long session: open a 100,000-entry file and build the model's context.
//!
//! The file is a realistic conversation (a user message, then assistant/tool-result pairs with
//! tool calls, each line around 300 bytes), generated once into a temp dir. The target is
//! well under half a second per resume in a release build.

use std::io::Write;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use tandem_ai::{
    Api, AssistantBlock, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserMessage,
};
use tandem_coding::agent::AgentMessage;
use tandem_coding::session::json::to_js_line;
use tandem_coding::session::time::format_iso;
use tandem_coding::session::{EntryKind, SessionEntry, SessionHeader, SessionManager};

const ENTRIES: usize = 100_000;

fn message(i: usize) -> AgentMessage {
    let ts = 1_796_022_805_998 + i as i64;
    match i % 10 {
        0 => {
            let mut m = UserMessage::text(format!(
                "Step {i}: please look at src/module_{i}.rs and make the parser accept trailing \
                 commas in argument lists, then run the tests again."
            ));
            m.timestamp = ts;
            m.into()
        }
        n if n % 2 == 1 => {
            let mut m = AssistantMessage::empty(Api::OpenAiCompletions, "mock", "mock-model");
            m.content.push(AssistantBlock::Text(TextContent {
                text: format!("Reading the file for step {i} before changing it."),
                text_signature: None,
            }));
            m.content.push(AssistantBlock::ToolCall(ToolCall {
                id: format!("call_{i}"),
                name: "read".into(),
                arguments: json!({"path": format!("src/module_{i}.rs")}),
                thought_signature: None,
            }));
            m.usage = Usage {
                input: 1200,
                output: 40,
                reasoning: None,
                total_tokens: 1240,
                ..Usage::default()
            };
            m.stop_reason = StopReason::ToolUse;
            m.timestamp = ts;
            m.response_id = Some(format!("chatcmpl-{i:012x}"));
            m.into()
        }
        _ => {
            let mut m = ToolResultMessage::text(
                format!("call_{}", i - 1),
                "read",
                format!("fn parse_{i}(input: &str) -> Result<Ast, Error> {{\n    todo!()\n}}\n"),
                false,
            );
            m.timestamp = ts;
            m.into()
        }
    }
}

/// Writes the session file and returns its average line length.
fn generate(path: &Path) -> usize {
    let header = SessionHeader::new(
        "01a22b4d-25d5-77de-8d60-df9ef5711e8b",
        "2026-11-30T07:13:25.974Z",
        "/home/user/project",
        None,
    );
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    writeln!(out, "{}", to_js_line(&header).expect("header")).expect("write");
    let mut total = 0;
    for i in 0..ENTRIES {
        let entry = SessionEntry {
            kind: EntryKind::Message {
                message: message(i),
            },
            id: format!("{:08x}", i + 1),
            parent_id: (i > 0).then(|| format!("{i:08x}")),
            timestamp: format_iso(1_796_022_805_998 + i as i64),
        };
        let line = to_js_line(&entry).expect("entry");
        total += line.len();
        writeln!(out, "{line}").expect("write");
    }
    out.flush().expect("flush");
    total / ENTRIES
}

fn bench_resume(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.jsonl");
    let average = generate(&path);
    eprintln!("session: {ENTRIES} entries, {average} bytes per line on average");

    let mut group = c.benchmark_group("session");
    group.sample_size(10);
    // What a resume costs: the session and its context stay alive afterwards, so freeing them
    // is measured separately.
    group.bench_function("resume_100k", |b| {
        b.iter_with_large_drop(|| {
            let session = SessionManager::open(&path).expect("opens");
            let context = session.build_context();
            assert_eq!(context.messages.len(), ENTRIES);
            (session, context)
        })
    });
    group.bench_function("resume_and_drop_100k", |b| {
        b.iter(|| {
            let session = SessionManager::open(&path).expect("opens");
            session.build_context().messages.len()
        })
    });
    let session = SessionManager::open(&path).expect("opens");
    group.bench_function("build_context_100k", |b| {
        b.iter_with_large_drop(|| session.build_context())
    });
    group.bench_function("open_100k", |b| {
        b.iter_with_large_drop(|| SessionManager::open(&path).expect("opens"))
    });
    group.finish();
}

criterion_group!(benches, bench_resume);
criterion_main!(benches);
