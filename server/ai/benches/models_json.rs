//! Loading a large models.json (issue 18): the registry with 10k, 20k and 40k custom models,
//! half of them replacing a model of the same id (each custom model is looked up among those
//! already known), and the list of available models. The cost must grow linearly.
//!
//! Run: `cargo bench -p tandem-ai --bench models_json`. Figures go to BENCHMARKS.md.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::json;
use tandem_ai::registry::{AgentDir, ModelRegistry};

/// A models.json of `n` models over 10 providers; every second id appears twice (the later
/// definition replaces the earlier one), and every provider overrides one built-in model id.
fn models_json(n: usize) -> String {
    let mut providers = serde_json::Map::new();
    for p in 0..10 {
        let models: Vec<_> = (0..n / 10)
            .map(|i| {
                let id = if i % 2 == 0 { i / 2 } else { i };
                json!({"id": format!("model-{id}"), "contextWindow": 32_000 + i})
            })
            .collect();
        providers.insert(
            format!("provider{p}"),
            json!({"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",
                "apiKey": "sk-bench-not-a-real-key", "models": models,
                "modelOverrides": {"model-1": {"maxTokens": 1000}}}),
        );
    }
    json!({"providers": providers}).to_string()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("models_json");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for n in [10_000usize, 20_000, 40_000] {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = models_json(n);
        std::fs::write(dir.path().join("models.json"), &text).expect("models.json");
        let agent_dir = AgentDir::new(dir.path());
        let loaded = ModelRegistry::load(agent_dir.clone());
        assert!(
            loaded.load_errors().is_empty(),
            "{:?}",
            loaded.load_errors()
        );
        eprintln!(
            "{n} models: {} bytes of models.json, {} models loaded",
            text.len(),
            loaded.all().len()
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("load", n), &agent_dir, |b, dir| {
            b.iter(|| ModelRegistry::load(dir.clone()))
        });
        group.bench_with_input(BenchmarkId::new("available", n), &loaded, |b, registry| {
            b.iter(|| registry.available().len())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
