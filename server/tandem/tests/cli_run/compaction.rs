//! Compaction from the outside: a prompt the provider refuses as too long is compacted and
//! continued (whole turns, or a turn split at the cut); a context past the threshold after an
//! answer is compacted for the next prompt; a recovery that fails ends the run with an error.

use serde_json::json;
use tandem_tests::mock_llm::MockResponse;
use tandem_tests::wire::{self, Turn, WireApi};

use crate::support::{body_mentions, entry_kinds, read_jsonl, type_of, Sandbox};
use crate::{find, folded_types, HELLO};

/// A second prompt that fills the recent budget on its own, so a cut lands just before it.
const SECOND: &str = "second question, with enough words in it to fill the recent budget";

/// A model with a 4096-token window and compaction settings that keep almost nothing verbatim.
fn small_window(api: WireApi) -> Sandbox {
    let sandbox = Sandbox::with_model(api, json!({"id": "mock-model", "contextWindow": 4096}));
    sandbox.write_settings(json!({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 10}}));
    sandbox
}

/// An answer of about 110 estimated tokens, far more than the recent budget.
fn long_first_answer() -> String {
    "The first answer, long enough to be worth summarizing. "
        .repeat(8)
        .trim_end()
        .to_string()
}

#[test]
fn an_overflowing_prompt_is_compacted_and_the_run_continues() {
    let api = WireApi::AnthropicMessages;
    let sandbox = small_window(api);
    // The second prompt alone fills the recent budget, so the cut falls between the two turns.
    sandbox.answer(&Turn::text(long_first_answer()));
    sandbox.enqueue(wire::context_overflow(api));
    sandbox.answer(&Turn::text("Summary: the user asked a first question."));
    sandbox.answer(&Turn::text("The second answer."));
    let run = sandbox.run(&["--mode", "json", "first question", SECOND]);
    run.expect_code(0);

    let lines = run.json_lines();
    let types = folded_types(run.types());
    let at = |t: &str| types.iter().position(|x| x == t).expect(t);
    assert!(at("compaction_start") < at("compaction_end"));
    assert_eq!(types.last().map(String::as_str), Some("agent_settled"));
    assert_eq!(
        find(&lines, "compaction_start"),
        &json!({"type": "compaction_start", "reason": "overflow"})
    );
    let end = find(&lines, "compaction_end");
    assert_eq!(end["reason"], "overflow");
    assert_eq!(end["aborted"], false);
    assert_eq!(end["willRetry"], true);
    assert_eq!(
        end["result"]["summary"],
        "Summary: the user asked a first question."
    );

    let entries = read_jsonl(&sandbox.only_session());
    assert_eq!(
        entry_kinds(&entries)[3..],
        [
            "message:system",
            "message:user",
            "message:assistant",
            "message:user",
            "message:assistant",
            "compaction",
            "context_edit",
            "message:assistant"
        ]
    );
    assert_eq!(entries[7]["message"]["stopReason"], "error");
    // The failed answer is left out of a resumed context too (pi 1.6's record of it).
    assert_eq!(entries[9]["targetId"], entries[7]["id"]);
    let compaction = &entries[8];
    assert_eq!(compaction["summary"], end["result"]["summary"]);
    assert_eq!(
        compaction["firstKeptEntryId"], entries[6]["id"],
        "kept from the second prompt"
    );
    assert_eq!(compaction["tokensBefore"], end["result"]["tokensBefore"]);
    assert!(compaction["tokensBefore"].as_u64().is_some_and(|t| t > 100));
    assert_eq!(
        entries[10]["message"]["content"][0]["text"],
        "The second answer."
    );

    let requests = sandbox.requests();
    assert_eq!(requests.len(), 4);
    assert!(body_mentions(&requests[2], "The first answer, long enough"));
    assert!(body_mentions(&requests[2], "first question"));
    let resumed = &requests[3];
    assert!(body_mentions(
        resumed,
        "Summary: the user asked a first question."
    ));
    assert!(body_mentions(resumed, SECOND));
    assert!(!body_mentions(resumed, "The first answer, long enough"));
}

#[test]
fn an_overflow_inside_a_tool_turn_summarizes_history_and_turn_prefix() {
    let api = WireApi::OpenAiResponses;
    let sandbox = small_window(api);
    sandbox.write("hello.txt", HELLO);
    sandbox.answer(&Turn::text(long_first_answer()));
    sandbox.run(&["-p", "first question"]).expect_code(0);
    let session = sandbox.only_session();
    let before = std::fs::read(&session).expect("session bytes");

    // The next run resumes that file: read, then the request overflows; the recent budget
    // keeps the read call and its result, so the second prompt's turn is split.
    sandbox.answer(&Turn::tool_call(
        "call_r",
        "read",
        json!({"path": "hello.txt"}),
    ));
    sandbox.enqueue(wire::context_overflow(api));
    sandbox.answer(&Turn::text("Summary A."));
    sandbox.answer(&Turn::text("Summary B."));
    sandbox.answer(&Turn::text("The second answer."));
    let path = session.to_string_lossy().to_string();
    let run = sandbox.run(&["--mode", "json", "--session", &path, "second question"]);
    run.expect_code(0);
    let lines = run.json_lines();
    assert_eq!(
        lines[0]["id"],
        read_jsonl(&session)[0]["id"],
        "same session"
    );
    assert_eq!(find(&lines, "compaction_end")["willRetry"], true);

    let after = std::fs::read(&session).expect("session bytes");
    assert!(after.starts_with(&before), "the resumed file was rewritten");
    let entries = read_jsonl(&session);
    assert_eq!(
        entry_kinds(&entries)[6..],
        [
            "message:user",
            "message:assistant",
            "message:toolResult",
            "message:assistant",
            "compaction",
            "context_edit",
            "message:assistant"
        ]
    );
    let compaction = &entries[10];
    assert_eq!(
        compaction["firstKeptEntryId"], entries[7]["id"],
        "kept from the read call"
    );
    let summary = compaction["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with("Summary A.") && summary.ends_with("Summary B."),
        "{summary}"
    );

    let requests = sandbox.requests();
    assert_eq!(requests.len(), 6);
    let (history, prefix, resumed) = (&requests[3], &requests[4], &requests[5]);
    assert!(body_mentions(history, "The first answer, long enough"));
    assert!(body_mentions(prefix, "second question"));
    assert!(!body_mentions(prefix, "The first answer, long enough"));
    assert!(body_mentions(resumed, "Summary A."));
    assert!(
        body_mentions(resumed, HELLO),
        "the kept read result is sent again"
    );
    assert!(!body_mentions(resumed, "The first answer, long enough"));
}

#[test]
fn a_context_past_the_threshold_after_an_answer_is_compacted() {
    let sandbox = small_window(WireApi::OpenAiCompletions);
    // 3500 input tokens of a 4096 window with 1000 reserved: past the threshold.
    sandbox.answer(&Turn::text(long_first_answer()).with_usage(3500, 20, 0));
    sandbox.answer(&Turn::text("Summary T."));
    let run = sandbox.run(&["--mode", "json", "look at everything"]);
    run.expect_code(0);
    let lines = run.json_lines();
    let types = folded_types(run.types());
    let at = |t: &str| types.iter().position(|x| x == t).expect(t);
    assert!(at("agent_end") < at("compaction_start"));
    assert!(at("compaction_end") < at("agent_settled"));
    assert_eq!(find(&lines, "compaction_start")["reason"], "threshold");
    let end = find(&lines, "compaction_end");
    assert_eq!(end["willRetry"], false);
    assert_eq!(end["result"]["tokensBefore"], 3520);
    assert!(end["result"]["summary"]
        .as_str()
        .is_some_and(|s| s.ends_with("Summary T.")));
    assert_eq!(sandbox.requests().len(), 2);
    let entries = read_jsonl(&sandbox.only_session());
    assert_eq!(
        entry_kinds(&entries)[3..],
        [
            "message:system",
            "message:user",
            "message:assistant",
            "compaction"
        ]
    );
    assert_eq!(entries[6]["summary"], end["result"]["summary"]);
}

#[test]
fn compaction_model_overrides_move_the_threshold_for_that_model_only() {
    // 2500 of 4096 with the ordinary 1000 reserved: under the threshold, no compaction.
    let quiet = small_window(WireApi::OpenAiCompletions);
    quiet.answer(&Turn::text(long_first_answer()).with_usage(2500, 20, 0));
    let run = quiet.run(&["--mode", "json", "look at everything"]);
    run.expect_code(0);
    assert!(!run.types().iter().any(|t| t == "compaction_start"));

    // The model's override reserves 2000: the same answer is past it. Another model's entry
    // changes nothing, and keepRecentTokens still comes from the ordinary setting.
    let sandbox = small_window(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"compaction": {
        "reserveTokens": 1000,
        "keepRecentTokens": 10,
        "modelOverrides": {
            "mock/mock-model": {"reserveTokens": 2000},
            "mock/other-model": {"reserveTokens": 0}
        }
    }}));
    sandbox.answer(&Turn::text(long_first_answer()).with_usage(2500, 20, 0));
    sandbox.answer(&Turn::text("Summary T."));
    let run = sandbox.run(&["--mode", "json", "look at everything"]);
    run.expect_code(0);
    let lines = run.json_lines();
    assert_eq!(find(&lines, "compaction_start")["reason"], "threshold");
    assert_eq!(
        find(&lines, "compaction_end")["result"]["tokensBefore"],
        2520
    );
}

/// A sandbox whose second prompt overflows and whose summary call is then refused.
fn failed_recovery() -> Sandbox {
    let api = WireApi::AnthropicMessages;
    let sandbox = small_window(api);
    sandbox.answer(&Turn::text(long_first_answer()));
    sandbox.enqueue(wire::context_overflow(api));
    sandbox.enqueue(MockResponse::json(
        400,
        json!({"type": "error", "error": {
            "type": "invalid_request_error", "message": "summary request refused"
        }}),
    ));
    sandbox
}

/// BUG (run.rs `execute` + AgentSession overflow recovery): the overflowing answer is dropped
/// from the context before compacting, and when the compaction fails nothing puts it back, so
/// `last_assistant()` finds the *first* prompt's answer: print mode prints it as the answer to
/// the second prompt and exits 0 (JSON mode exits 0 too).
#[test]
fn a_failed_overflow_recovery_does_not_print_the_previous_answer() {
    let sandbox = failed_recovery();
    let run = sandbox.run(&["-p", "first question", SECOND]);
    assert_eq!(
        run.stdout, "",
        "the first prompt's answer was printed for the second"
    );
    run.expect_code(1);
    assert!(
        run.stderr.contains("prompt is too long") || run.stderr.contains("summary request refused"),
        "{}",
        run.stderr
    );

    let sandbox = failed_recovery();
    let run = sandbox.run(&["--mode", "json", "first question", SECOND]);
    run.expect_code(1);
}

/// BUG (same cause): a single prompt that overflows with nothing to compact reports
/// "The model gave no answer" instead of the provider's error.
#[test]
fn an_overflow_with_nothing_to_compact_reports_the_provider_error() {
    let api = WireApi::AnthropicMessages;
    let sandbox = small_window(api);
    sandbox.enqueue(wire::context_overflow(api));
    let run = sandbox.run(&["-p", SECOND]);
    run.expect_code(1);
    assert!(run.stderr.contains("prompt is too long"), "{}", run.stderr);
}

/// BUG (pi conformance): pi reports a failed compaction as `{type, aborted, willRetry,
/// errorMessage}`; its `result: undefined` is dropped by `JSON.stringify`. Tandem prints
/// `"result":null`.
#[test]
fn a_failed_compaction_event_has_no_result_field() {
    let sandbox = failed_recovery();
    let run = sandbox.run(&["--mode", "json", "first question", SECOND]);
    let lines = run.json_lines();
    let end = find(&lines, "compaction_end");
    assert_eq!(end["willRetry"], false);
    assert!(
        end["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("summary request refused")),
        "{end}"
    );
    assert!(end.get("result").is_none(), "{end}");
}

/// BUG (pi conformance): after one compact-and-retry, a second overflow in the same prompt
/// ends the run; pi then emits `compaction_end` with `willRetry: false` and an
/// `errorMessage` saying the recovery failed. Tandem emits nothing.
#[test]
fn a_second_overflow_after_recovery_is_reported() {
    let api = WireApi::AnthropicMessages;
    let sandbox = small_window(api);
    sandbox.answer(&Turn::text(long_first_answer()));
    sandbox.enqueue(wire::context_overflow(api));
    sandbox.answer(&Turn::text("Summary."));
    sandbox.enqueue(wire::context_overflow(api));
    let run = sandbox.run(&["--mode", "json", "first question", SECOND]);
    run.expect_code(1);
    assert_eq!(sandbox.requests().len(), 4, "no second compaction");
    let lines = run.json_lines();
    let ends: Vec<_> = lines
        .iter()
        .filter(|l| type_of(l) == "compaction_end")
        .collect();
    assert_eq!(ends.len(), 2, "{ends:?}");
    assert_eq!(ends[1]["willRetry"], false);
    assert!(
        ends[1]["errorMessage"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{}",
        ends[1]
    );
}
