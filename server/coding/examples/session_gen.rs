//! Writes a large, realistic session file for memory and resume measurements (issue 29).
//!
//! ```text
//! session_gen <file> [entries] [--compact-every N] [--cwd DIR]
//! session_gen --resume <file> [runs]      # time SessionManager::open + build_context
//! ```
//!
//! The session is one linear conversation as pi and Tandem write it: the model and thinking
//! level first, then turns of a user prompt, assistant messages with tool calls (usage and a
//! response id on each) and tool results of varied sizes (mostly a line or two, sometimes a
//! page, now and then a 15 KB read), about 330 bytes per entry on average. With `--compact-every N` (default
//! 2000; 0 for none) a compaction follows every N entries, keeping the latest ~200 entries from a
//! user prompt on, as a long session that reached the model's window would hold. Deterministic
//! (a fixed xorshift seed). Default: 1,000,000 entries.
//!
//! `--resume` opens the file `runs` times (default 5), building the model's context each time,
//! and prints each run's milliseconds (freeing excluded), the fastest and the median, and the
//! process's peak resident memory (`VmHWM`).

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use tandem_ai::{
    Api, AssistantBlock, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserMessage,
};
use tandem_coding::agent::AgentMessage;
use tandem_coding::session::json::to_js_line;
use tandem_coding::session::time::format_iso;
use tandem_coding::session::{EntryKind, SessionEntry, SessionHeader};

const START_MS: i64 = 1_796_022_805_998;
const WORDS: &[&str] = &[
    "parser", "the", "tests", "module", "fix", "error", "value", "return", "function", "types",
    "trailing", "commas", "argument", "list", "check", "again", "build", "input", "output", "file",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn words(&mut self, n: usize) -> String {
        let mut out = String::new();
        for i in 0..n {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(WORDS[self.below(WORDS.len() as u64) as usize]);
        }
        out
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: session_gen <file> [entries] [--compact-every N] [--cwd DIR]\n       \
         session_gen --resume <file> [runs]"
    );
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    if std::env::args().nth(1).as_deref() == Some("--resume") {
        args.next();
        let path = args.next().map(PathBuf::from).unwrap_or_else(|| usage());
        let runs = args
            .next()
            .map_or(5, |n| n.parse().unwrap_or_else(|_| usage()));
        resume(&path, runs);
        return;
    }
    let Some(path) = args.next().map(PathBuf::from) else {
        usage()
    };
    let mut entries = 1_000_000usize;
    let mut compact_every = 2000usize;
    let mut cwd = "/home/user/project".to_string();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--compact-every" => {
                compact_every = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--cwd" => cwd = args.next().unwrap_or_else(|| usage()),
            n => entries = n.parse().unwrap_or_else(|_| usage()),
        }
    }
    if let Err(e) = generate(&path, entries, compact_every, &cwd) {
        eprintln!("cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
}

fn resume(path: &PathBuf, runs: usize) {
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = std::time::Instant::now();
        let session = match tandem_coding::session::SessionManager::open(path) {
            Ok(session) => session,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        let context = session.build_context();
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        println!("resume: {ms:.1} ms ({} messages)", context.messages.len());
        times.push(ms);
        drop((session, context));
    }
    times.sort_by(f64::total_cmp);
    let peak = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l["VmHWM:".len()..].trim().to_string())
        })
        .unwrap_or_default();
    println!(
        "fastest {:.1} ms, median {:.1} ms over {runs} runs; peak RSS {peak}",
        times[0],
        times[times.len() / 2]
    );
}

/// What the turn in progress needs to be continued.
struct Turn {
    /// The id of the pending tool call, when the last message was an assistant's call.
    call: Option<(String, String)>,
    /// Assistant messages left in this turn.
    left: u64,
}

fn generate(
    path: &PathBuf,
    entries: usize,
    compact_every: usize,
    cwd: &str,
) -> std::io::Result<()> {
    let header = SessionHeader::new(
        "01a22b4d-25d5-77de-8d60-df9ef5711e8b",
        format_iso(START_MS),
        cwd,
        None,
    );
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    writeln!(
        out,
        "{}",
        to_js_line(&header).map_err(std::io::Error::other)?
    )?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut parent: Option<String> = None;
    let mut user_prompts: Vec<(usize, String)> = Vec::new();
    let mut turn = Turn {
        call: None,
        left: 0,
    };
    let mut bytes = 0u64;
    let mut due = false;
    for i in 0..entries {
        due |= compact_every > 0 && i > 0 && i % compact_every == 0;
        let id = format!("{:08x}", i + 1);
        let ms = START_MS + i as i64 * 1000;
        let kind = if i == 0 {
            EntryKind::ModelChange {
                provider: "mock".into(),
                model_id: "mock-model".into(),
            }
        } else if i == 1 {
            EntryKind::ThinkingLevelChange {
                thinking_level: "off".into(),
            }
        } else if due && turn.call.is_none() {
            due = false;
            // Keep the latest ~200 entries, from a user prompt on.
            let kept = user_prompts
                .iter()
                .rev()
                .find(|(at, _)| i - at >= 200)
                .or(user_prompts.last())
                .map(|(_, id)| id.clone())
                .unwrap_or_else(|| id.clone());
            EntryKind::Compaction {
                summary: format!(
                    "## Goal\n{}\n\n## Progress\n{}\n\n## Next steps\n{}",
                    rng.words(40),
                    rng.words(200),
                    rng.words(60)
                ),
                first_kept_entry_id: kept,
                tokens_before: 150_000 + rng.below(30_000),
                details: Some(
                    json!({"readFiles": ["src/lib.rs"], "modifiedFiles": ["src/parser.rs"]}),
                ),
                usage: None,
                from_hook: None,
                system_message: None,
            }
        } else {
            EntryKind::Message {
                message: message(&mut rng, &mut turn, i, ms, &id, &mut user_prompts),
            }
        };
        let entry = SessionEntry {
            kind,
            id: id.clone(),
            parent_id: parent.replace(id),
            timestamp: format_iso(ms),
        };
        let line = to_js_line(&entry).map_err(std::io::Error::other)?;
        bytes += line.len() as u64 + 1;
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    eprintln!(
        "{}: {entries} entries, {bytes} bytes of entries ({} per line)",
        path.display(),
        bytes / entries.max(1) as u64
    );
    Ok(())
}

fn message(
    rng: &mut Rng,
    turn: &mut Turn,
    i: usize,
    ms: i64,
    id: &str,
    user_prompts: &mut Vec<(usize, String)>,
) -> AgentMessage {
    if let Some((call_id, tool)) = turn.call.take() {
        // The tool's result: mostly small, sometimes a big file read.
        let size = match rng.below(1000) {
            0..=1 => 5_000 + rng.below(10_000) as usize,
            2..=49 => 300 + rng.below(700) as usize,
            _ => 10 + rng.below(60) as usize,
        };
        let mut text = String::with_capacity(size + 16);
        while text.len() < size {
            text.push_str(&rng.words(8));
            text.push('\n');
        }
        let mut m = ToolResultMessage::text(call_id, tool, text, rng.below(20) == 0);
        m.timestamp = ms;
        return m.into();
    }
    if turn.left == 0 {
        turn.left = 1 + rng.below(6);
        user_prompts.push((i, id.to_string()));
        let words = 5 + rng.below(30) as usize;
        let mut m = UserMessage::text(format!(
            "Step {i}: {} in src/module_{}.rs",
            rng.words(words),
            rng.below(300)
        ));
        m.timestamp = ms;
        return m.into();
    }
    turn.left -= 1;
    let mut m = AssistantMessage::empty(Api::OpenAiCompletions, "mock", "mock-model");
    let words = 3 + rng.below(12) as usize;
    m.content.push(AssistantBlock::Text(TextContent {
        text: rng.words(words),
        text_signature: None,
    }));
    if turn.left > 0 {
        let (name, arguments) = match rng.below(3) {
            0 => (
                "read",
                json!({"path": format!("src/module_{}.rs", rng.below(300))}),
            ),
            1 => (
                "bash",
                json!({"command": format!("cargo test -p crate_{}", rng.below(20))}),
            ),
            _ => (
                "edit",
                json!({"path": format!("src/module_{}.rs", rng.below(300)),
                       "edits": [{"oldText": rng.words(6), "newText": rng.words(7)}]}),
            ),
        };
        let call_id = format!("call_{i:08x}");
        m.content.push(AssistantBlock::ToolCall(ToolCall {
            id: call_id.clone(),
            name: name.into(),
            arguments,
            thought_signature: None,
        }));
        m.stop_reason = StopReason::ToolUse;
        turn.call = Some((call_id, name.to_string()));
    } else {
        m.stop_reason = StopReason::Stop;
    }
    let input = 2000 + rng.below(100_000);
    m.usage = Usage {
        input,
        output: 40 + rng.below(400),
        total_tokens: input + 200,
        ..Usage::default()
    };
    m.timestamp = ms;
    m.response_id = Some(format!("chatcmpl-{i:012x}"));
    m.into()
}
