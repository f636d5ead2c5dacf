//! `tandem --export <session.jsonl> [output.html]`: a session file as one self-contained HTML
//! page, as pi's `--export` makes one: the current branch's conversation (what the model sees
//! when the session is resumed), with thinking, tool calls and their results folded. Without
//! an output path the page is `tandem-session-<file name>.html` in the working directory.
//!
//! The page holds no script and loads nothing: every text from the session is escaped, so a
//! session holding `<script>` (a tool result quoting a web page, a hostile file) stays text.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;
use tandem_agent::AgentMessage;
use tandem_ai::{AssistantBlock, Message, UserBlock, UserContent};
use tandem_coding::session::SessionManager;

/// Writes the page for the session file `input` to `output` (or the default name in `cwd`);
/// the path written.
pub fn export(input: &Path, output: Option<&Path>, cwd: &Path) -> anyhow::Result<PathBuf> {
    let input = cwd.join(input);
    if !input.is_file() {
        anyhow::bail!("File not found: {}", input.display());
    }
    let manager = SessionManager::open(&input)
        .with_context(|| format!("could not read the session file {}", input.display()))?;
    write_page(&manager, output, cwd)
}

/// Writes the page for `manager`'s session to `output` (relative to `cwd`), by default
/// `tandem-session-<file name>.html` in `cwd` (`session-<id>` for a session with no file yet);
/// the path written.
pub fn write_page(
    manager: &SessionManager,
    output: Option<&Path>,
    cwd: &Path,
) -> anyhow::Result<PathBuf> {
    let html = render(manager);
    let output = match output {
        Some(path) => cwd.join(path),
        None => {
            let stem = manager
                .session_file()
                .and_then(Path::file_stem)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("session-{}", manager.session_id()));
            cwd.join(format!("tandem-session-{stem}.html"))
        }
    };
    std::fs::write(&output, html)
        .with_context(|| format!("could not write {}", output.display()))?;
    Ok(output)
}

/// The page.
pub fn render(manager: &SessionManager) -> String {
    let header = manager.header();
    let title = manager
        .session_name()
        .map(str::to_string)
        .unwrap_or_else(|| format!("Session {}", header.id));
    let context = manager.build_context();
    let mut body = String::new();
    for message in &context.messages {
        message_html(&mut body, message);
    }
    let model = context
        .model
        .as_ref()
        .map(|m| format!("{}/{}", m.provider, m.model_id))
        .unwrap_or_else(|| "none recorded".into());
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <header><h1>{title}</h1><dl><dt>Session</dt><dd><code>{id}</code></dd>\
         <dt>Folder</dt><dd><code>{cwd}</code></dd><dt>Started</dt><dd>{started}</dd>\
         <dt>Model</dt><dd><code>{model}</code></dd></dl></header>\n{body}</main>\n</body>\n</html>\n",
        title = escape(&title),
        id = escape(&header.id),
        cwd = escape(&header.cwd),
        started = escape(&header.timestamp),
        model = escape(&model),
    )
}

fn message_html(out: &mut String, message: &AgentMessage) {
    match message {
        AgentMessage::Llm(Message::User(user)) => {
            let text = match &user.content {
                UserContent::Text(text) => text.clone(),
                UserContent::Blocks(blocks) => blocks_text(blocks),
            };
            section(out, "user", "You", &pre(&text));
        }
        AgentMessage::Llm(Message::Assistant(assistant)) => {
            let mut inner = String::new();
            for block in &assistant.content {
                match block {
                    AssistantBlock::Text(t) => inner.push_str(&pre(&t.text)),
                    AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                        fold(&mut inner, "thinking", "Thinking", &pre(&t.thinking))
                    }
                    AssistantBlock::Thinking(_) => {}
                    AssistantBlock::ToolCall(call) => {
                        let arguments = serde_json::to_string_pretty(&call.arguments)
                            .unwrap_or_else(|_| call.arguments.to_string());
                        fold(
                            &mut inner,
                            "tool-call",
                            &format!("Tool call: {}", call.name),
                            &pre(&arguments),
                        );
                    }
                }
            }
            let label = format!("Assistant <small>{}</small>", escape(&assistant.model));
            section(out, "assistant", &label, &inner);
        }
        AgentMessage::Llm(Message::ToolResult(result)) => {
            let mut inner = String::new();
            let summary = format!(
                "{} result{}",
                result.tool_name,
                if result.is_error { " (error)" } else { "" }
            );
            fold(
                &mut inner,
                if result.is_error {
                    "tool-error"
                } else {
                    "tool-result"
                },
                &summary,
                &pre(&blocks_text(&result.content)),
            );
            out.push_str(&inner);
        }
        AgentMessage::Custom(custom) => {
            let fields = custom.fields();
            let text = match fields.get("content").or_else(|| fields.get("summary")) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => strings(other).join("\n"),
                None => return,
            };
            fold(out, "custom", custom.role(), &pre(&text));
        }
    }
}

fn blocks_text(blocks: &[UserBlock]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            UserBlock::Text(t) => t.text.clone(),
            UserBlock::Image(i) => format!("[image: {}]", i.mime_type),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map.get("text").map(strings).unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn section(out: &mut String, class: &str, label: &str, inner: &str) {
    let _ = writeln!(
        out,
        "<section class=\"{class}\"><h2>{label}</h2>{inner}</section>"
    );
}

fn fold(out: &mut String, class: &str, summary: &str, inner: &str) {
    let _ = writeln!(
        out,
        "<details class=\"{class}\"><summary>{}</summary>{inner}</details>",
        escape(summary)
    );
}

fn pre(text: &str) -> String {
    format!("<pre>{}</pre>", escape(text))
}

/// Text as HTML text and attribute content.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "\
:root{color-scheme:light dark;--bg:#f7f7f5;--card:#fff;--fg:#1d1d1f;--muted:#6b6b70;--user:#e8f0fe;--tool:#f1f1ef;--err:#fde8e8}\
@media (prefers-color-scheme:dark){:root{--bg:#17171a;--card:#202024;--fg:#e8e8ea;--muted:#9a9aa2;--user:#1f2a3d;--tool:#26262b;--err:#3d1f1f}}\
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,sans-serif}\
main{max-width:52rem;margin:0 auto;padding:1.5rem}\
header h1{font-size:1.3rem;margin:0 0 .5rem}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;color:var(--muted);font-size:.85rem}\
dd{margin:0}section{background:var(--card);border-radius:8px;padding:.6rem 1rem;margin:.8rem 0}\
section.user{background:var(--user)}h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);margin:.2rem 0}\
h2 small{text-transform:none;letter-spacing:0}\
pre{white-space:pre-wrap;word-break:break-word;font:13px/1.45 ui-monospace,monospace;margin:.3rem 0}\
section pre{font:inherit}details{background:var(--tool);border-radius:6px;padding:.3rem .7rem;margin:.4rem 0}\
details.tool-error{background:var(--err)}details pre{font:13px/1.45 ui-monospace,monospace!important}\
summary{cursor:pointer;color:var(--muted);font-size:.85rem}";
