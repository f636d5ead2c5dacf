//! `--mode json` beside the real pi 1.6: the same scripted conversation (reasoning, text in many
//! deltas, a read call whose arguments stream in pieces, a bash call with text and reasoning
//! after it, a long answer) through
//! both programs, every line compared after blanking what differs between any two runs (ids,
//! timestamps, durations, the sandbox's path, and the sections and tools of the `system` message
//! each run starts with: each program's own prompt and tools).
//!
//! No difference is set aside: after the blanking, every line is pi 1.6's. Two things
//! are not gaps but timing, and are left out on both sides: the `usage` on `message_update`
//! lines (pi serializes its live message, which has usually taken the final usage by the time
//! the line is written) and `tool_execution_update` lines (how many depends on how the
//! command's output is read).

use serde_json::{json, Value};
use tandem_tests::mock_llm::MockLlm;

use crate::support_pi::sse::Answer;
use crate::support_pi::{pi16_bin, Agent, Sandbox, MODEL};

const QUESTION: &str = "what does hello.txt say, and what does echo print?";
const ANSWER_WORDS: usize = 60;

fn queue_conversation(mock: &MockLlm) {
    let mut first = Answer::new("chatcmpl-json-1");
    for piece in ["I should ", "read the ", "file first."] {
        first = first.reasoning(piece);
    }
    for piece in ["Let me ", "look at ", "the file."] {
        first = first.text(piece);
    }
    let first = first.streamed_tool_call("call_read_1", "read", &json!({"path": "hello.txt"}), 5);
    mock.enqueue(first.response());
    mock.enqueue(
        Answer::new("chatcmpl-json-2")
            .text("Now the command.")
            .streamed_tool_call("call_bash_2", "bash", &json!({"command": "echo hi"}), 7)
            // Text after a call joins the message's text block; reasoning after text its
            // thinking block (pi's Chat Completions provider keeps one of each).
            .text(" It prints hi.")
            .reasoning("A second thought.")
            .response(),
    );
    let mut last = Answer::new("chatcmpl-json-3").reasoning("Now answer.");
    for n in 0..ANSWER_WORDS {
        last = last.text(&format!("word{n} "));
    }
    mock.enqueue(last.response());
}

/// Runs the conversation with `agent` in a fresh sandbox whose model reasons; its stdout lines.
async fn json_run(mock: &MockLlm, agent: Agent) -> Vec<Value> {
    let sandbox = Sandbox::with_model(mock, json!({ "id": "mock-model", "reasoning": true }));
    queue_conversation(mock);
    let args = [
        "--mode",
        "json",
        "--model",
        MODEL,
        "--thinking",
        "high",
        QUESTION,
    ];
    let stdout = sandbox.run_ok(agent, &args).await;
    let cwd = sandbox.cwd.to_string_lossy().into_owned();
    stdout
        .lines()
        .map(|line| {
            let line = line.replace(&cwd, "<cwd>");
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{agent:?} printed {line}: {e}"))
        })
        .collect()
}

/// Blanks what differs between any two runs, and leaves out the timing-dependent lines and
/// fields (see the module docs).
fn normalized(lines: Vec<Value>) -> Vec<Value> {
    fn blank(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                // A system message's sections and tools are each program's own prompt and tools
                // (different by design, like the prompt text): only their presence is compared.
                if fields.get("role").and_then(Value::as_str) == Some("system") {
                    for key in ["sections", "toolsAdded"] {
                        if let Some(field) = fields.get_mut(key) {
                            *field = json!("…");
                        }
                    }
                }
                for (key, field) in fields.iter_mut() {
                    match key.as_str() {
                        "timestamp" | "durationMs" | "wall_time_seconds" => *field = json!("…"),
                        _ => blank(field),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(blank),
            _ => {}
        }
    }
    let mut lines: Vec<Value> = lines
        .into_iter()
        .filter(|l| l["type"] != "tool_execution_update")
        .collect();
    if let Some(header) = lines.first_mut() {
        header["id"] = json!("…");
    }
    for line in &mut lines {
        blank(line);
        if line["type"] == "message_update" {
            line["usage"] = json!("…");
        }
    }
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_pi_16_lines_for_the_same_conversation() {
    pi16_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let pi = json_run(&mock, Agent::Pi16).await;
    let tandem = json_run(&mock, Agent::Tandem).await;
    if let Ok(dir) = std::env::var("TANDEM_DUMP_JSON") {
        let dump = |name: &str, lines: &[Value]| {
            let text: Vec<String> = lines.iter().map(Value::to_string).collect();
            std::fs::write(format!("{dir}/{name}.jsonl"), text.join("\n")).expect("dump");
        };
        dump("pi16", &pi);
        dump("tandem", &tandem);
    }

    // Delta-only updates: no line carries the partial message.
    for line in tandem.iter().filter(|l| l["type"] == "message_update") {
        assert!(line.get("message").is_none(), "{line}");
        assert!(
            line["assistantMessageEvent"].get("partial").is_none(),
            "{line}"
        );
    }

    let theirs = normalized(pi);
    let ours = normalized(tandem);
    let text = |lines: &[Value]| -> Vec<String> { lines.iter().map(Value::to_string).collect() };
    let (theirs, ours) = (text(&theirs), text(&ours));
    for (n, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "line {n}: Tandem (left) and pi 1.6 (right) differ");
    }
    assert_eq!(
        ours.len(),
        theirs.len(),
        "Tandem printed {} lines, pi 1.6 {}; the extra lines:\n{}",
        ours.len(),
        theirs.len(),
        if ours.len() > theirs.len() {
            &ours[theirs.len()..]
        } else {
            &theirs[ours.len()..]
        }
        .join("\n")
    );
}
