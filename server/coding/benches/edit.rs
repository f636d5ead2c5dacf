//! One `edit` call on a 50,000-line file, through the tool and a disk workspace: read, match,
//! compute the proposal and the diff details, write back.
//!
//! Each iteration replaces one line in the middle and the next puts it back, so the file stays
//! the same size throughout. `exact` matches the text as is; `fuzzy` has to go through pi's
//! normalization (the file has curly quotes, the edit straight ones).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use tandem_coding::agent::{AgentTool, ToolInvocation, ToolUpdates};
use tandem_coding::{tools, DiskWorkspace, PermissionPolicy, ToolEnv, Workspace};
use tokio_util::sync::CancellationToken;

const LINES: usize = 50_000;
const MIDDLE: usize = LINES / 2;

/// A source-like file; the middle line says `marker` in `quotes` (`'` or `’`).
fn content(quote: &str) -> String {
    (0..LINES)
        .map(|i| {
            if i == MIDDLE {
                format!("    let label = {quote}marker{quote}; // the line the edit changes\n")
            } else {
                format!("    let value_{i} = compute({i}, \"argument\"); // ordinary line\n")
            }
        })
        .collect()
}

fn args(old: &str, new: &str) -> Value {
    json!({"path": "big.rs", "edits": [{"oldText": old, "newText": new}]})
}

/// Benchmarks alternating between the two calls of `round_trip` (the second undoes the first)
/// on a fresh file whose middle line uses `quote`.
fn bench_edit(c: &mut Criterion, name: &str, quote: &str, round_trip: [Value; 2]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    std::fs::write(root.join("big.rs"), content(quote)).expect("write file");
    let workspace: Arc<dyn Workspace> = Arc::new(DiskWorkspace::new(
        [root.clone()],
        PermissionPolicy::AllowAll,
    ));
    let env = Arc::new(ToolEnv::new(workspace, &root));
    let edit = tools::tool(&env, "edit").expect("edit tool");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut turn = 0;
    c.bench_function(name, |b| {
        b.iter(|| {
            run(&runtime, edit.as_ref(), round_trip[turn % 2].clone());
            turn += 1;
        })
    });
    let text = std::fs::read_to_string(root.join("big.rs")).expect("read back");
    assert_eq!(text.lines().count(), LINES);
}

fn run(runtime: &tokio::runtime::Runtime, tool: &dyn AgentTool, args: Value) {
    let output = runtime
        .block_on(tool.execute(ToolInvocation {
            call_id: "bench".into(),
            args,
            cancel: CancellationToken::new(),
            updates: ToolUpdates::discard(),
        }))
        .expect("edit succeeds");
    assert!(output.details.is_some_and(|d| d["diff"].is_string()));
}

fn benches(c: &mut Criterion) {
    bench_edit(
        c,
        "edit_50k_lines/exact",
        "'",
        [
            args("let label = 'marker';", "let label = 'changed';"),
            args("let label = 'changed';", "let label = 'marker';"),
        ],
    );
    // The file keeps curly quotes; the model types straight ones.
    bench_edit(
        c,
        "edit_50k_lines/fuzzy",
        "\u{2019}",
        [
            args(
                "let label = 'marker';",
                "let label = \u{2019}changed\u{2019};",
            ),
            args(
                "let label = 'changed';",
                "let label = \u{2019}marker\u{2019};",
            ),
        ],
    );
}

criterion_group!(edit, benches);
criterion_main!(edit);
