//! Benchmark driver for the `grep` and `find` tools (used by `scripts/bench-search`).
//!
//! ```text
//! search_bench gen  <dir> [files]                     # deterministic tree (default 60000 files)
//! search_bench grep <dir> <pattern> [options]         # one grep call through the tool
//! search_bench find <dir> <pattern> [options]         # one find call through the tool
//!   options: --glob G  --ignore-case  --literal  --limit N  --repeat N  --print
//! ```
//!
//! Each call goes through the real tool (`ToolEnv` over a `DiskWorkspace`), as the agent makes
//! it. Elapsed milliseconds go to stderr (one line per run, then the median); `--print` writes
//! the tool's text to stdout.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};
use tandem_coding::agent::{AgentTool, ToolInvocation, ToolUpdates};
use tandem_coding::tools::{FindTool, GrepTool};
use tandem_coding::{DiskWorkspace, PermissionPolicy, ToolEnv};
use tokio_util::sync::CancellationToken;

fn usage() -> ! {
    eprintln!(
        "usage: search_bench gen <dir> [files]\n       \
         search_bench grep|find <dir> <pattern> [--glob G] [--ignore-case] [--literal] \
         [--limit N] [--repeat N] [--print]"
    );
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(dir)) = (args.first(), args.get(1)) else {
        usage()
    };
    let dir = PathBuf::from(dir);
    if mode == "gen" {
        let files = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(60_000);
        if let Err(e) = generate(&dir, files) {
            eprintln!("cannot generate the tree in {}: {e}", dir.display());
            std::process::exit(1);
        }
        return;
    }
    let Some(pattern) = args.get(2) else { usage() };
    let mut call = Map::new();
    call.insert("pattern".into(), json!(pattern));
    let (mut repeat, mut print) = (1usize, false);
    let mut rest = args[3..].iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--glob" => call.insert("glob".into(), json!(rest.next().unwrap_or_else(|| usage()))),
            "--ignore-case" => call.insert("ignoreCase".into(), json!(true)),
            "--literal" => call.insert("literal".into(), json!(true)),
            "--limit" => {
                let n: u64 = rest
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| usage());
                call.insert("limit".into(), json!(n))
            }
            "--repeat" => {
                repeat = rest
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| usage());
                None
            }
            "--print" => {
                print = true;
                None
            }
            _ => usage(),
        };
    }
    let root = std::fs::canonicalize(&dir).unwrap_or(dir);
    let workspace = Arc::new(DiskWorkspace::new(
        [root.clone()],
        PermissionPolicy::AllowAll,
    ));
    let env = Arc::new(ToolEnv::new(workspace, &root));
    let tool: Box<dyn AgentTool> = match mode.as_str() {
        "grep" => Box::new(GrepTool::new(env)),
        "find" => Box::new(FindTool::new(env)),
        _ => usage(),
    };
    let mut times = Vec::new();
    for _ in 0..repeat.max(1) {
        let started = Instant::now();
        let result = tool
            .execute(ToolInvocation {
                call_id: "bench".into(),
                args: Value::Object(call.clone()),
                cancel: CancellationToken::new(),
                updates: ToolUpdates::discard(),
            })
            .await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        times.push(ms);
        match result {
            Ok(out) => {
                let text = serde_json::to_value(&out.content).unwrap_or_default();
                let text = text[0]["text"].as_str().unwrap_or_default().to_string();
                // Lines before the 50KB cut, when there was one.
                let total = out
                    .details
                    .as_ref()
                    .and_then(|d| d["truncation"]["totalLines"].as_u64());
                eprintln!(
                    "elapsed_ms={ms:.2} lines={} total_lines={}",
                    text.lines().count(),
                    total.map_or("-".to_string(), |t| t.to_string())
                );
                if print {
                    println!("{text}");
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    times.sort_by(f64::total_cmp);
    eprintln!("median_ms={:.2}", times[times.len() / 2]);
}

/// A small deterministic generator (64-bit LCG), so every run builds the same tree.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: [&str; 32] = [
    "let", "value", "return", "struct", "match", "result", "error", "config", "buffer", "index",
    "parse", "token", "stream", "future", "handle", "thread", "lock", "queue", "event", "client",
    "server", "request", "response", "header", "payload", "cache", "entry", "vector", "string",
    "option", "worker", "signal",
];
const EXTENSIONS: [&str; 6] = ["rs", "ts", "txt", "md", "json", "log"];

/// Writes `files` files in `top/sub/` directories, with `.gitignore` files at the root
/// (`*.log`, `/target/`) and in every tenth directory (`generated_*`), a hidden directory per
/// top-level directory, an empty `.git` so the tree is a repository, and a few rare tokens:
/// `ZQX_NEEDLE` in about 1 file of 2000 and `fn name_handler(` in about 1 of 50.
fn generate(dir: &Path, files: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join(".git"))?;
    std::fs::write(dir.join(".gitignore"), "*.log\n/target/\n")?;
    let mut rng = Lcg(42);
    let per_dir = 100;
    for i in 0..files {
        let (top, sub) = (i / (per_dir * 30), (i / per_dir) % 30);
        let hidden = i % 500 == 7;
        let folder = if hidden {
            dir.join(format!("d{top:02}/.cache{sub:02}"))
        } else {
            dir.join(format!("d{top:02}/s{sub:02}"))
        };
        if i % per_dir == 0 || hidden {
            std::fs::create_dir_all(&folder)?;
            if sub % 10 == 3 && !hidden {
                std::fs::write(folder.join(".gitignore"), "generated_*\n")?;
            }
        }
        let ext = EXTENSIONS[rng.below(EXTENSIONS.len() as u64) as usize];
        let stem = if rng.below(20) == 0 {
            "generated_code"
        } else {
            "file"
        };
        let mut body = String::new();
        let lines = 10 + rng.below(80);
        for line in 0..lines {
            let words = 4 + rng.below(10);
            for w in 0..words {
                if w > 0 {
                    body.push(' ');
                }
                body.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            }
            if line == 3 && rng.below(2000) == 0 {
                body.push_str(" ZQX_NEEDLE");
            }
            if line == 5 && rng.below(50) == 0 {
                body.push_str(" fn worker_handler(x)");
            }
            body.push('\n');
        }
        std::fs::write(folder.join(format!("{stem}_{i:05}.{ext}")), body)?;
    }
    std::fs::create_dir_all(dir.join("target"))?;
    std::fs::write(dir.join("target/ignored.txt"), "ZQX_NEEDLE\n")?;
    Ok(())
}
