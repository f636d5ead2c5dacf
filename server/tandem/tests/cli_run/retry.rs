//! Transient provider errors are retried with backoff (`retry` settings); other errors end the
//! run with exit code 1 and the error on stderr.

use serde_json::{json, Value};
use tandem_tests::mock_llm::MockResponse;
use tandem_tests::wire::{self, Turn, WireApi};

use crate::support::{entry_kinds, read_jsonl, type_of, Sandbox};
use crate::{find, folded_types};

#[test]
fn a_rate_limited_request_is_retried_and_the_answer_printed() {
    let sandbox = Sandbox::new(WireApi::AnthropicMessages);
    sandbox.write_settings(json!({"retry": {"baseDelayMs": 10}}));
    sandbox.enqueue(wire::rate_limited(WireApi::AnthropicMessages));
    sandbox.answer(&Turn::text("Second time lucky."));
    let run = sandbox.run(&["-p", "hi"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Second time lucky.\n");
    assert_eq!(sandbox.requests().len(), 2);
    // As in pi, the failed attempt stays in the file (for history); the context drops it, and
    // (as pi 1.6 records it) a context edit leaves it out of a resumed session's context too.
    let entries = read_jsonl(&sandbox.only_session());
    assert_eq!(
        entry_kinds(&entries)[3..],
        [
            "message:system",
            "message:user",
            "message:assistant",
            "context_edit",
            "message:assistant"
        ]
    );
    assert_eq!(entries[6]["targetId"], entries[5]["id"]);
    assert_eq!(entries[6]["replacement"], Value::Null);
    let entries: Vec<Value> = entries
        .into_iter()
        .filter(|e| e["type"] != "context_edit" && e["message"]["role"] != "system")
        .collect();
    let failed = &entries[4]["message"];
    assert_eq!(failed["stopReason"], "error");
    assert!(
        failed["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("HTTP 429") && m.contains("rate_limit_error")),
        "{failed}"
    );
    assert_eq!(entries[5]["message"]["stopReason"], "stop");
    let second = sandbox.requests()[1].json().expect("JSON body");
    assert_eq!(
        second["messages"].as_array().map(Vec::len),
        Some(1),
        "{second}"
    );
}

#[test]
fn json_mode_reports_auto_retry_events() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"retry": {"baseDelayMs": 10}}));
    sandbox.enqueue(wire::rate_limited(WireApi::OpenAiCompletions));
    sandbox.answer(&Turn::text("Second time lucky."));
    let run = sandbox.run(&["--mode", "json", "hi"]);
    run.expect_code(0);
    let lines = run.json_lines();
    let start = lines
        .iter()
        .find(|l| type_of(l) == "auto_retry_start")
        .expect("auto_retry_start");
    assert_eq!(start["attempt"], 1);
    assert_eq!(start["maxAttempts"], 3);
    assert_eq!(start["delayMs"], 10);
    assert!(
        start["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("429") || m.contains("Rate limit")),
        "{start}"
    );
    let end = lines
        .iter()
        .find(|l| type_of(l) == "auto_retry_end")
        .expect("auto_retry_end");
    assert_eq!(
        end,
        &json!({"type": "auto_retry_end", "success": true, "attempt": 1})
    );
    let types = folded_types(run.types());
    let at = |t: &str| types.iter().position(|x| x == t).expect(t);
    assert!(at("auto_retry_start") < at("auto_retry_end"));
    assert_eq!(types.last().map(String::as_str), Some("agent_settled"));
    let ends: Vec<_> = lines
        .iter()
        .filter(|l| type_of(l) == "message_end" && l["message"]["role"] == "assistant")
        .map(|l| l["message"]["stopReason"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(ends, ["error", "stop"]);
}

#[test]
fn retries_that_run_out_end_the_run_with_exit_code_1() {
    let api = WireApi::GoogleGenerativeAi;
    let sandbox = Sandbox::new(api);
    sandbox.write_settings(json!({"retry": {"baseDelayMs": 1, "maxRetries": 2}}));
    for _ in 0..3 {
        sandbox.enqueue(wire::rate_limited(api));
    }
    let run = sandbox.run(&["--mode", "json", "hi"]);
    run.expect_code(1);
    assert_eq!(sandbox.requests().len(), 3);
    let lines = run.json_lines();
    let starts: Vec<(u64, u64)> = lines
        .iter()
        .filter(|l| type_of(l) == "auto_retry_start")
        .map(|l| {
            (
                l["attempt"].as_u64().unwrap_or(0),
                l["delayMs"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(starts, [(1, 1), (2, 2)], "attempts and doubling delays");
    let end = find(&lines, "auto_retry_end");
    assert_eq!(end["success"], false);
    assert_eq!(end["attempt"], 2);
    assert!(
        end["finalError"]
            .as_str()
            .is_some_and(|e| e.contains("RESOURCE_EXHAUSTED")),
        "{end}"
    );
}

#[test]
fn a_failed_answer_goes_to_stderr_with_exit_code_1() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let error = json!({"error": {"message": "Invalid value for 'temperature'", "type": "invalid_request_error"}});
    sandbox.enqueue(MockResponse::json(400, error));
    let run = sandbox.run(&["-p", "hi"]);
    run.expect_code(1);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("HTTP 400"), "{}", run.stderr);
    assert!(
        run.stderr.contains("Invalid value for 'temperature'"),
        "{}",
        run.stderr
    );
    assert_eq!(sandbox.requests().len(), 1, "a 400 is not retried");
}
