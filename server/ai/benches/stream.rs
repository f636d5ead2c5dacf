//! Streaming costs: SSE parsing plus event construction for a long answer, and tool-call
//! arguments streamed in 5k pieces at growing sizes (the cost must grow linearly).
//!
//! Run: `cargo bench -p tandem-ai --bench stream`. Figures go to BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tandem_ai::http::VecSource;
use tandem_ai::partial_json::parse_partial;
use tandem_ai::providers::openai_completions;
use tandem_ai::sse::SseDecoder;
use tandem_ai::{Api, AssistantStream, InputKind, Model, ModelCost, PartialMessage, StopReason};

fn model() -> Model {
    Model {
        id: "bench-model".into(),
        name: "bench".into(),
        api: Api::OpenAiCompletions,
        provider: "bench".into(),
        base_url: "http://127.0.0.1:1".into(),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
    }
}

/// An OpenAI chat-completions SSE body streaming `n` deltas of `piece`.
fn completions_body(n: usize, piece: &str) -> String {
    let mut body = String::with_capacity(n * (piece.len() + 120));
    for _ in 0..n {
        body.push_str("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":");
        body.push_str(&serde_json::to_string(piece).unwrap_or_default());
        body.push_str("},\"finish_reason\":null}]}\n\n");
    }
    body.push_str("data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
    body.push_str("data: [DONE]\n\n");
    body
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn text_stream(c: &mut Criterion) {
    let body = completions_body(20_000, "word ");
    let rt = runtime();
    let mut group = c.benchmark_group("text_stream_20k_deltas");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.sample_size(20);
    group.bench_function("sse_frames_only", |b| {
        b.iter(|| {
            let mut decoder = SseDecoder::new();
            let mut out = Vec::new();
            for chunk in body.as_bytes().chunks(4096) {
                decoder.feed(chunk, &mut out).expect("decodes");
            }
            decoder.finish(&mut out);
            out.len()
        })
    });
    group.bench_function("sse_decode_events_and_partial", |b| {
        b.iter(|| {
            rt.block_on(async {
                let model = model();
                let (mut writer, mut stream) = AssistantStream::channel(&model);
                let source = VecSource::from_body(&body);
                let producer = tokio::spawn(async move {
                    match openai_completions::decode(source, &mut writer, &model).await {
                        Ok(reason) => writer.finish(reason).await,
                        Err(e) => writer.fail(StopReason::Error, e.to_string()).await,
                    }
                });
                let mut partial: Option<PartialMessage> = None;
                let mut n = 0usize;
                while let Some(event) = stream.next().await {
                    match &mut partial {
                        Some(p) => p.apply(&event),
                        None => {
                            if let tandem_ai::AssistantMessageEvent::Start { partial: m } = &event {
                                partial = Some(PartialMessage::new(m.clone()));
                            }
                        }
                    }
                    n += 1;
                }
                let _ = producer.await;
                n
            })
        })
    });
    group.finish();
}

/// Splits `text` into `pieces` parts on character boundaries.
fn split(text: &str, pieces: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let per = chars.len().div_ceil(pieces).max(1);
    chars.chunks(per).map(|c| c.iter().collect()).collect()
}

fn tool_arguments(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("toolcall_args_5k_pieces");
    group.sample_size(10);
    for size in [1_000usize, 100_000, 1_000_000] {
        let content = "x".repeat(size.saturating_sub(40));
        let args = serde_json::json!({"path": "src/big.txt", "content": content}).to_string();
        let pieces = split(&args, 5_000);
        group.throughput(Throughput::Bytes(args.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("incremental", size),
            &pieces,
            |b, pieces| {
                b.iter(|| {
                    rt.block_on(async {
                        let model = model();
                        let (mut writer, mut stream) = AssistantStream::channel(&model);
                        let pieces = pieces.clone();
                        let producer = tokio::spawn(async move {
                            writer.start_tool_call("call_1", "write").await;
                            for p in &pieces {
                                writer.tool_call_delta(p).await;
                            }
                            writer.finish(StopReason::ToolUse).await;
                        });
                        let mut partial = PartialMessage::new(tandem_ai::AssistantMessage::empty(
                            Api::OpenAiCompletions,
                            "bench",
                            "bench-model",
                        ));
                        while let Some(event) = stream.next().await {
                            partial.apply(&event);
                        }
                        let _ = producer.await;
                        partial.message().content.len()
                    })
                })
            },
        );
        // pi's approach for comparison: re-parse the accumulated text after every piece. Only
        // at the two smaller sizes: at 1 MB it parses ~2.5 GB per iteration.
        if size <= 100_000 {
            group.bench_with_input(
                BenchmarkId::new("reparse_each_delta", size),
                &pieces,
                |b, pieces| {
                    b.iter(|| {
                        let mut acc = String::new();
                        let mut keys = 0usize;
                        for p in pieces {
                            acc.push_str(p);
                            keys += parse_partial(&acc).as_object().map_or(0, |o| o.len());
                        }
                        keys
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, text_stream, tool_arguments);
criterion_main!(benches);
