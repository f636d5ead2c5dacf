//! The built-in scripted model: replays assistant turns from a script file, with no network.
//!
//! It drives the demo when no real model is configured and gives editor-integration tests a
//! model whose answers, tool calls, chunking and failures are exactly known. The script is JSON:
//!
//! ```json
//! { "chunkSize": 16, "delayMs": 0, "loop": false,
//!   "turns": [ { "thinking": "…", "text": "…",
//!                "toolCalls": [ { "name": "read", "arguments": { "path": "a.txt" } } ],
//!                "stopReason": "toolUse", "error": "…", "usage": { "input": 10, "output": 5 },
//!                "chunkSize": 4, "delayMs": 10 } ] }
//! ```
//!
//! The turn replayed is the number of assistant messages already in the context, or the number
//! of calls this process already made with the same script for the same session (`session_id`),
//! whichever is larger. So a resumed session continues where it left off, and a call whose
//! context no longer holds the previous answer (a retry after a scripted failure, a compaction's
//! summary call) still gets the next turn. The model's `baseUrl` is the script's path; an empty
//! one selects the built-in demo.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::cost::apply_cost;
use crate::error::ProviderError;
use crate::model::{Api, InputKind, Model, ModelCost};
use crate::options::StreamOptions;
use crate::stream::StreamWriter;
use crate::sync::lock;
use crate::types::{Context, Message, StopReason, Usage};

const DEMO_SCRIPT: &str = include_str!("../../data/demo-script.json");

/// A script: turns plus defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Script {
    /// The assistant turns, in order.
    pub turns: Vec<ScriptTurn>,
    /// Characters per streamed piece (default 16).
    #[serde(default)]
    pub chunk_size: Option<usize>,
    /// Pause between pieces in milliseconds (default 0).
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Start again from the first turn after the last one.
    #[serde(default, rename = "loop")]
    pub looped: bool,
}

/// One assistant turn.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptTurn {
    /// Reasoning streamed first.
    #[serde(default)]
    pub thinking: Option<String>,
    /// Answer text.
    #[serde(default)]
    pub text: Option<String>,
    /// Tool calls, streamed after the text.
    #[serde(default)]
    pub tool_calls: Vec<ScriptToolCall>,
    /// Stop reason; default `toolUse` when there are tool calls, else `stop`.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// Fail the turn with this message after streaming its content.
    #[serde(default)]
    pub error: Option<String>,
    /// Reported usage; default estimates from the text (4 characters a token).
    #[serde(default)]
    pub usage: Option<ScriptUsage>,
    /// Overrides the script's chunk size.
    #[serde(default)]
    pub chunk_size: Option<usize>,
    /// Overrides the script's delay.
    #[serde(default)]
    pub delay_ms: Option<u64>,
}

/// A scripted tool call.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptToolCall {
    /// Call id; generated when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments object.
    #[serde(default)]
    pub arguments: Value,
}

/// Scripted token counts.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptUsage {
    /// Input tokens.
    #[serde(default)]
    pub input: u64,
    /// Output tokens.
    #[serde(default)]
    pub output: u64,
    /// Cache-read tokens.
    #[serde(default)]
    pub cache_read: u64,
    /// Cache-write tokens.
    #[serde(default)]
    pub cache_write: u64,
}

impl Script {
    /// Parses a script; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Script, ProviderError> {
        let script: Script = serde_json::from_str(text).map_err(|e| {
            ProviderError::Request(format!(
                "Scripted model: {origin} is not a valid script ({e}). See the format in the README."
            ))
        })?;
        if script.turns.is_empty() {
            return Err(ProviderError::Request(format!(
                "Scripted model: {origin} has no turns"
            )));
        }
        Ok(script)
    }

    /// The built-in demo script.
    pub fn demo() -> Script {
        // The demo script is part of the binary and covered by a test, so it always parses.
        Script::parse(DEMO_SCRIPT, "the built-in demo script").unwrap_or(Script {
            turns: vec![ScriptTurn {
                text: Some("Hello from Tandem's scripted model.".into()),
                ..ScriptTurn::default()
            }],
            chunk_size: None,
            delay_ms: None,
            looped: true,
        })
    }
}

/// The built-in demo model (`scripted/demo`), used when no real model is configured.
pub fn demo_model() -> Model {
    Model {
        id: "demo".into(),
        name: "Scripted demo (no network)".into(),
        api: Api::Scripted,
        provider: "scripted".into(),
        base_url: String::new(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
    }
}

async fn load(model: &Model) -> Result<Script, ProviderError> {
    if model.base_url.is_empty() {
        return Ok(Script::demo());
    }
    let path = &model.base_url;
    let text = tokio::fs::read_to_string(path).await.map_err(|e| {
        ProviderError::Request(format!(
            "Scripted model {}/{}: cannot read the script file {path}: {e}. Set the model's baseUrl to a script file.",
            model.provider, model.id
        ))
    })?;
    Script::parse(&text, path)
}

/// Calls made per (script, session) in this process.
fn calls_made(script: &str, session: Option<&str>) -> usize {
    static CALLS: OnceLock<Mutex<HashMap<(String, String), usize>>> = OnceLock::new();
    let mut calls = lock(CALLS.get_or_init(|| Mutex::new(HashMap::new())));
    let count = calls
        .entry((script.to_string(), session.unwrap_or("").to_string()))
        .or_insert(0);
    let before = *count;
    *count += 1;
    before
}

fn chunks(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let size = size.max(1);
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .char_indices()
            .nth(size)
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        let (head, tail) = rest.split_at(end);
        rest = tail;
        Some(head)
    })
}

fn context_chars(context: &Context) -> usize {
    let mut n = context.system_prompt.as_ref().map_or(0, String::len);
    for message in &context.messages {
        n += serde_json::to_string(message).map_or(0, |s| s.len());
    }
    n
}

/// Replays the turn for `context`.
pub async fn run(
    writer: &mut StreamWriter,
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<StopReason, ProviderError> {
    let script = load(model).await?;
    let answered = context
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant(_)))
        .count();
    let done = answered.max(calls_made(&model.base_url, options.session_id.as_deref()));
    let index = if script.looped {
        done % script.turns.len()
    } else {
        done
    };
    let Some(turn) = script.turns.get(index) else {
        return Err(ProviderError::Request(format!(
            "Scripted model {}/{}: the script has {} turns and this is turn {}; add turns or set \"loop\": true",
            model.provider,
            model.id,
            script.turns.len(),
            done + 1
        )));
    };
    let size = turn.chunk_size.or(script.chunk_size).unwrap_or(16);
    let delay = Duration::from_millis(turn.delay_ms.or(script.delay_ms).unwrap_or(0));
    let pause = || async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    };
    writer.message_mut().response_id = Some(format!("scripted-{}", index + 1));
    let mut produced = 0usize;
    if let Some(thinking) = &turn.thinking {
        for piece in chunks(thinking, size) {
            writer.thinking_delta(piece).await;
            pause().await;
        }
        produced += thinking.len();
    }
    if let Some(text) = &turn.text {
        for piece in chunks(text, size) {
            writer.text_delta(piece).await;
            pause().await;
        }
        produced += text.len();
    }
    for (n, call) in turn.tool_calls.iter().enumerate() {
        let id = call
            .id
            .clone()
            .unwrap_or_else(|| format!("call_{}_{}", index + 1, n + 1));
        writer.start_tool_call(id, &call.name).await;
        let args = if call.arguments.is_null() {
            "{}".to_string()
        } else {
            call.arguments.to_string()
        };
        for piece in chunks(&args, size) {
            writer.tool_call_delta(piece).await;
            pause().await;
        }
        produced += args.len();
    }
    let usage = writer.message_mut();
    usage.usage = match turn.usage {
        Some(u) => Usage {
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            reasoning: None,
            total_tokens: u.input + u.output + u.cache_read + u.cache_write,
            ..Usage::default()
        },
        None => {
            let input = context_chars(context).div_ceil(4) as u64;
            let output = produced.div_ceil(4) as u64;
            Usage {
                input,
                output,
                reasoning: None,
                total_tokens: input + output,
                ..Usage::default()
            }
        }
    };
    apply_cost(&mut usage.usage, &model.cost);
    if let Some(error) = &turn.error {
        return Err(ProviderError::Provider {
            provider: model.provider.clone(),
            message: error.clone(),
        });
    }
    Ok(turn.stop_reason.unwrap_or(if turn.tool_calls.is_empty() {
        StopReason::Stop
    } else {
        StopReason::ToolUse
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::AssistantMessageEvent;
    use crate::types::{AssistantBlock, UserMessage};
    use serde_json::json;

    #[test]
    fn the_demo_script_parses() {
        let script = Script::parse(DEMO_SCRIPT, "demo").expect("demo parses");
        assert!(script.looped);
        assert!(script.turns.len() >= 2);
    }

    #[test]
    fn chunks_respect_characters() {
        let pieces: Vec<&str> = chunks("héllo😀x", 2).collect();
        assert_eq!(pieces, ["hé", "ll", "o😀", "x"]);
    }

    #[test]
    fn bad_scripts_get_clear_errors() {
        let err =
            Script::parse("{\"turns\": [{\"txt\": 1}]}", "s.json").expect_err("unknown field");
        assert!(
            err.to_string().contains("s.json is not a valid script"),
            "{err}"
        );
        let err = Script::parse("{\"turns\": []}", "s.json").expect_err("no turns");
        assert!(err.to_string().contains("has no turns"), "{err}");
    }

    async fn replay(
        script: &str,
        context: Context,
    ) -> (Vec<AssistantMessageEvent>, crate::types::AssistantMessage) {
        let dir = std::env::temp_dir().join(format!(
            "tandem-script-{}-{}",
            std::process::id(),
            crate::types::now_millis()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("script.json");
        std::fs::write(&path, script).expect("write script");
        let mut model = demo_model();
        model.base_url = path.to_string_lossy().into_owned();
        let mut stream = crate::providers::stream(&model, &context, StreamOptions::default());
        let mut events = Vec::new();
        while let Some(e) = stream.next().await {
            events.push(e);
        }
        let msg = stream.final_message().cloned().expect("final");
        let _ = std::fs::remove_dir_all(&dir);
        (events, msg)
    }

    #[tokio::test]
    async fn turns_follow_the_number_of_assistant_messages() {
        let script = r#"{"chunkSize": 3, "turns": [
            {"text": "one", "toolCalls": [{"id": "c1", "name": "read", "arguments": {"path": "a.txt"}}]},
            {"text": "two", "error": "overloaded", "usage": {"input": 7, "output": 2}}
        ]}"#;
        let mut ctx = Context {
            messages: vec![Message::User(UserMessage::text("go"))],
            ..Context::default()
        };
        let (events, msg) = replay(script, ctx.clone()).await;
        assert_eq!(msg.stop_reason, StopReason::ToolUse);
        assert_eq!(msg.text(), "one");
        assert!(
            matches!(&msg.content[1], AssistantBlock::ToolCall(c) if c.arguments == json!({"path": "a.txt"}))
        );
        assert!(
            events
                .iter()
                .filter(|e| e.kind() == "toolcall_delta")
                .count()
                > 3
        );

        ctx.messages.push(Message::Assistant(msg));
        let (_, msg) = replay(script, ctx.clone()).await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(msg.text(), "two");
        assert_eq!(msg.usage.input, 7);
        assert!(msg
            .error_message
            .as_deref()
            .unwrap_or("")
            .contains("overloaded"));

        ctx.messages.push(Message::Assistant(msg));
        let (_, msg) = replay(script, ctx).await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert!(msg
            .error_message
            .as_deref()
            .unwrap_or("")
            .contains("the script has 2 turns"));
    }

    #[tokio::test]
    async fn cancelling_a_slow_script_ends_in_aborted() {
        let dir = std::env::temp_dir().join(format!("tandem-script-cancel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("slow.json");
        std::fs::write(
            &path,
            r#"{"chunkSize": 1, "delayMs": 50, "turns": [{"text": "a long, slow answer"}]}"#,
        )
        .expect("write script");
        let mut model = demo_model();
        model.base_url = path.to_string_lossy().into_owned();
        let options = StreamOptions::default();
        let cancel = options.cancel.clone();
        let mut stream = crate::providers::stream(&model, &Context::default(), options);
        while let Some(event) = stream.next().await {
            if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
                cancel.cancel();
            }
        }
        let msg = stream.final_message().cloned().expect("final");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(msg.stop_reason, StopReason::Aborted);
        assert_eq!(msg.error_message.as_deref(), Some("Request was aborted"));
        // What streamed before the abort is kept; the rest never comes.
        let text = msg.text();
        assert!(
            !text.is_empty() && "a long, slow answer".starts_with(&text) && text.len() < 19,
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_missing_script_file_is_a_clear_error() {
        let mut model = demo_model();
        model.base_url = "/nonexistent/tandem/script.json".into();
        let msg = crate::providers::stream(&model, &Context::default(), StreamOptions::default())
            .result()
            .await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert!(msg
            .error_message
            .unwrap_or_default()
            .contains("cannot read the script file /nonexistent/tandem/script.json"));
    }
}
