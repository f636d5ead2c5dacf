//! `--mode json`: the session header, then pi's events in pi's order and shapes. The reference
//! is what pi 0.73.1 printed for the same task against the same answers
//! (`fixtures/reference/pi-0.73.1-json-mode-trace.jsonl`), with the fields pi 1.6 changed
//! applied ([`as_pi_16`]); `tests/pi_interop.rs` compares every line with the real pi 1.6.

use serde_json::{json, Value};
use tandem_tests::wire::WireApi;

use crate::support::{read_jsonl, type_of, Sandbox};
use crate::{folded_types, queue_edit_task};

const REFERENCE: &str =
    include_str!("../../../../fixtures/reference/pi-0.73.1-json-mode-trace.jsonl");

fn reference() -> Vec<Value> {
    REFERENCE
        .lines()
        .map(|l| serde_json::from_str(l).expect("reference line"))
        .collect()
}

/// Blanks what differs between any two runs: timestamps, response ids, and the header's id and
/// working directory.
fn normalized(mut lines: Vec<Value>) -> Vec<Value> {
    fn blank(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    match key.as_str() {
                        "timestamp" | "responseId" | "durationMs" => *field = json!("…"),
                        _ => blank(field),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(blank),
            _ => {}
        }
    }
    if let Some(header) = lines.first_mut() {
        header["id"] = json!("…");
        header["cwd"] = json!("…");
    }
    lines.iter_mut().for_each(blank);
    lines
}

/// pi 0.73.1's lines with what pi 1.6 prints differently outside `message_update`: the streamed
/// assistant message starts `pending`, `agent_end` says `willRetry` and a finished tool call
/// its `durationMs`.
fn as_pi_16(mut lines: Vec<Value>) -> Vec<Value> {
    for line in &mut lines {
        match line["type"].as_str() {
            Some("message_start") if line["message"]["role"] == "assistant" => {
                line["message"]["stopReason"] = json!("pending");
            }
            Some("agent_end") => line["willRetry"] = json!(false),
            Some("tool_execution_end") => line["durationMs"] = json!(0),
            _ => {}
        }
    }
    lines
}

fn run_reference_task() -> (Sandbox, Vec<Value>) {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    queue_edit_task(&sandbox);
    let run = sandbox.run(&["--mode", "json", "change world to there in hello.txt"]);
    run.expect_code(0);
    (sandbox, without_the_system_message(run.json_lines()))
}

/// `lines` without the `system` message a run starts with (pi 1.6 reports its recorded prompt
/// and tools; the pi 0.73.1 reference has no such message), after checking it is there: its
/// start and end right after the first `turn_start`, and first in `agent_end.messages`.
fn without_the_system_message(mut lines: Vec<Value>) -> Vec<Value> {
    let is_system = |l: &Value| l["message"]["role"] == "system";
    let at = lines.iter().position(is_system).expect("a system message");
    assert_eq!(type_of(&lines[at - 1]), "turn_start");
    assert_eq!(type_of(&lines[at]), "message_start");
    assert_eq!(type_of(&lines[at + 1]), "message_end");
    assert!(lines[at + 1]["message"]["toolsAdded"].is_array());
    lines.drain(at..at + 2);
    assert!(!lines.iter().any(is_system));
    for line in &mut lines {
        if let Some(messages) = line.get_mut("messages").and_then(Value::as_array_mut) {
            assert_eq!(messages[0]["role"], "system");
            messages.remove(0);
        }
    }
    lines
}

#[test]
fn json_mode_prints_the_header_then_pi_event_order() {
    let (sandbox, lines) = run_reference_task();
    let header = read_jsonl(&sandbox.only_session()).remove(0);
    assert_eq!(lines[0], header, "the first line is the session header");

    let expected = folded_types(reference().iter().map(type_of));
    let mut ours = folded_types(lines.iter().map(type_of));
    // `agent_settled` (pi 0.85's "everything finished" event) follows pi 0.73.1's last line.
    assert_eq!(ours.pop().as_deref(), Some("agent_settled"));
    assert_eq!(ours, expected);
}

#[test]
fn json_mode_lines_other_than_streaming_updates_are_pi_lines() {
    let (_sandbox, mut lines) = run_reference_task();
    assert_eq!(
        lines.pop().map(|l| type_of(&l)).as_deref(),
        Some("agent_settled")
    );
    let keep = |lines: Vec<Value>| -> Vec<Value> {
        let kept = lines
            .into_iter()
            .filter(|l| type_of(l) != "message_update")
            .collect();
        normalized(kept)
    };
    lines
        .iter_mut()
        .for_each(tandem_tests::pi_fields::without_pi_16_fields);
    let ours = keep(lines);
    let theirs = keep(as_pi_16(reference()));
    assert_eq!(ours.len(), theirs.len());
    for (n, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "line {n} (message_update lines left out)");
    }
}
