//! The agent loop's own costs with an instant model: per streamed delta (compared with the bare
//! stream it consumes) and per tool call.
//!
//! Run: `cargo bench -p tandem-agent --bench loop`. Figures go to BENCHMARKS.md.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use serde_json::{json, Value};
use tandem_agent::{
    Agent, AgentOptions, AgentTool, BoxFuture, StreamFn, ToolError, ToolInvocation, ToolOutput,
};
use tandem_ai::{Api, AssistantStream, InputKind, Message, Model, ModelCost, StopReason};

fn model() -> Model {
    Model {
        id: "instant".into(),
        name: "instant".into(),
        api: Api::Other("bench".into()),
        provider: "bench".into(),
        base_url: String::new(),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 1_000_000,
        max_tokens: 100_000,
        headers: None,
        compat: None,
    }
}

/// A model that answers instantly: `deltas` text pieces on a turn without tool results to
/// answer, or `calls` tool calls on the first turn when `calls > 0`.
fn instant_stream(deltas: usize, calls: usize) -> StreamFn {
    Arc::new(move |model, context, _options| {
        let (mut writer, stream) = AssistantStream::channel(model);
        let first_turn = !context
            .messages
            .iter()
            .any(|m| matches!(m, Message::ToolResult(_)));
        tokio::spawn(async move {
            if calls > 0 && first_turn {
                for i in 0..calls {
                    writer.start_tool_call(format!("call_{i}"), "noop").await;
                    writer.tool_call_delta("{\"n\": 1}").await;
                }
                writer.finish(StopReason::ToolUse).await;
            } else {
                for _ in 0..deltas {
                    writer.text_delta("word ").await;
                }
                writer.finish(StopReason::Stop).await;
            }
        });
        stream
    })
}

struct Noop {
    schema: Value,
}

impl AgentTool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, _call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn run_agent(stream_fn: StreamFn, with_tool: bool) -> usize {
    run_agent_with(stream_fn, with_tool, true).await
}

async fn run_agent_with(stream_fn: StreamFn, with_tool: bool, subscribe: bool) -> usize {
    let mut options = AgentOptions::new(model());
    options.stream_fn = stream_fn;
    if with_tool {
        options.tools = vec![Arc::new(Noop {
            schema: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        })];
    }
    let agent = Agent::new(options);
    if !subscribe {
        let _ = agent.prompt_text("go", Vec::new()).await;
        return agent.messages().len();
    }
    let mut events = agent.subscribe();
    let drain = tokio::spawn(async move {
        let mut n = 0usize;
        while events.recv().await.is_some() {
            n += 1;
        }
        n
    });
    let _ = agent.prompt_text("go", Vec::new()).await;
    drop(agent);
    drain.await.unwrap_or(0)
}

fn deltas(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("agent_20k_deltas");
    group.sample_size(20);
    group.bench_function("bare_stream", |b| {
        b.iter(|| {
            rt.block_on(async {
                let stream_fn = instant_stream(20_000, 0);
                let mut stream = stream_fn(&model(), &Default::default(), Default::default());
                let mut n = 0usize;
                while stream.next().await.is_some() {
                    n += 1;
                }
                n
            })
        })
    });
    group.bench_function("through_agent_loop", |b| {
        b.iter(|| rt.block_on(run_agent(instant_stream(20_000, 0), false)))
    });
    group.bench_function("through_agent_loop_no_subscriber", |b| {
        b.iter(|| rt.block_on(run_agent_with(instant_stream(20_000, 0), false, false)))
    });
    group.finish();
}

fn tool_calls(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("agent_tool_calls");
    group.sample_size(20);
    for calls in [1usize, 100] {
        group.bench_with_input(BenchmarkId::from_parameter(calls), &calls, |b, &calls| {
            b.iter(|| rt.block_on(run_agent(instant_stream(1, calls), true)))
        });
    }
    group.finish();
}

criterion_group!(benches, deltas, tool_calls);
criterion_main!(benches);
