//! Prompting, the queues, models and thinking levels, bash, compaction and the switches.

use serde_json::{json, Value};
use tandem_tests::wire::{Turn, WireApi};

use crate::client::{kinds, start_a_long_turn, Rpc};
use crate::support::{body_mentions, Sandbox};

/// The event kinds without the streamed deltas (their number depends on the chunking).
fn without_updates(lines: &[Value]) -> Vec<String> {
    kinds(lines)
        .into_iter()
        .filter(|k| k != "message_update")
        .collect()
}

#[test]
fn a_prompt_answers_started_then_streams_pis_events_to_agent_settled() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Hello there"));
    let mut rpc = Rpc::start(&sandbox, &[]);
    let (before, response) = rpc.request(json!({"type": "prompt", "message": "hi"}));
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(
        response,
        json!({"id": "req-1", "type": "response", "command": "prompt", "success": true,
            "data": {"disposition": "started"}})
    );
    let events = rpc.until("agent_settled");
    assert_eq!(
        without_updates(&events),
        [
            "agent_start",
            "turn_start",
            "message_start:system",
            "message_end:system",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end:assistant",
            "agent_end",
            "agent_settled"
        ]
    );
    // The events are JSON mode's lines: delta-only updates, agent_end with willRetry.
    let update = events
        .iter()
        .find(|e| e["type"] == "message_update")
        .expect("an update");
    assert!(update.get("message").is_none(), "{update}");
    assert!(update["assistantMessageEvent"].get("partial").is_none());
    let end = events
        .iter()
        .find(|e| e["type"] == "agent_end")
        .expect("end");
    assert_eq!(end["willRetry"], false);
    assert_eq!(
        events.last(),
        Some(&json!({"type": "agent_settled", "aborted": false}))
    );

    assert_eq!(
        rpc.data(json!({"type": "get_last_assistant_text"})),
        json!({"text": "Hello there"})
    );
    let messages = rpc.data(json!({"type": "get_messages"}));
    let roles: Vec<&str> = messages["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    assert_eq!(messages["messages"][1]["content"][0]["text"], "hi");
    let stats = rpc.data(json!({"type": "get_session_stats"}));
    assert_eq!(
        (
            &stats["userMessages"],
            &stats["assistantMessages"],
            &stats["totalMessages"],
            &stats["toolCalls"]
        ),
        // The run's system message counts, as in pi 1.6.
        (&json!(1), &json!(1), &json!(3), &json!(0))
    );
    assert_eq!(stats["contextUsage"]["contextWindow"], 128000);
    assert!(rpc.finish().success());
}

#[test]
fn a_prompt_while_running_needs_a_streaming_behaviour_and_abort_settles_the_run() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &[]);
    start_a_long_turn(&sandbox, &mut rpc, "wait");
    assert_eq!(rpc.data(json!({"type": "get_state"}))["isStreaming"], true);
    let busy = rpc.call(json!({"type": "prompt", "message": "again"}));
    assert_eq!(
        busy,
        json!({"id": "req-3", "type": "response", "command": "prompt", "success": false,
            "error": "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."})
    );
    let (before, queued) =
        rpc.request(json!({"type": "prompt", "message": "later", "streamingBehavior": "followUp"}));
    assert_eq!(queued["data"], json!({"disposition": "queued"}));
    assert_eq!(
        before,
        [json!({"type": "queue_update", "steering": [], "followUp": ["later"]})]
    );
    let (before, aborted) = rpc.request(json!({"type": "abort"}));
    assert_eq!(
        aborted,
        json!({"id": "req-5", "type": "response", "command": "abort", "success": true})
    );
    assert_eq!(
        before.last(),
        Some(&json!({"type": "agent_settled", "aborted": true})),
        "{before:?}"
    );
    let (_, cleared) = rpc.request(json!({"type": "clear_queue"}));
    assert_eq!(
        cleared["data"],
        json!({"steering": [], "followUp": ["later"]})
    );
    assert_eq!(rpc.data(json!({"type": "get_state"}))["isStreaming"], false);
    assert!(rpc.finish().success());
}

#[test]
fn steer_follow_up_clear_queue_and_the_queue_modes() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &[]);
    let (before, steer) = rpc.request(json!({"type": "steer", "message": "s1"}));
    assert_eq!(
        steer,
        json!({"id": "req-1", "type": "response", "command": "steer", "success": true,
            "data": {"disposition": "queued"}})
    );
    assert_eq!(
        before,
        [json!({"type": "queue_update", "steering": ["s1"], "followUp": []})]
    );
    let (_, follow) = rpc.request(json!({"type": "follow_up", "message": "f1"}));
    assert_eq!(follow["data"], json!({"disposition": "queued"}));
    assert_eq!(
        rpc.data(json!({"type": "get_state"}))["pendingMessageCount"],
        2
    );
    let (before, cleared) = rpc.request(json!({"type": "clear_queue"}));
    assert_eq!(
        cleared["data"],
        json!({"steering": ["s1"], "followUp": ["f1"]})
    );
    assert_eq!(
        before,
        [json!({"type": "queue_update", "steering": [], "followUp": []})]
    );
    for (kind, field) in [
        ("set_steering_mode", "steeringMode"),
        ("set_follow_up_mode", "followUpMode"),
    ] {
        let response = rpc.call(json!({"type": kind, "mode": "all"}));
        assert_eq!(response["success"], true, "{response}");
        assert!(response.get("data").is_none());
        assert_eq!(rpc.data(json!({"type": "get_state"}))[field], "all");
    }
    let bad = rpc.call(json!({"type": "set_steering_mode", "mode": "sometimes"}));
    assert_eq!(
        bad["error"],
        "set_steering_mode: `mode` must be one of \"all\", \"one-at-a-time\", not \"sometimes\""
    );
    assert!(rpc.finish().success());
}

#[test]
fn models_and_thinking_levels() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_models(json!({"providers": {"mock": {
        "baseUrl": WireApi::OpenAiCompletions.base_url(&sandbox.mock.base_url()),
        "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": "mock-model"}, {"id": "deep", "reasoning": true}],
        // A custom auth header: a credential, never shown in a model object (issue 29).
        "headers": {"x-gateway-token": "gw-SECRET-HEADER-777"},
    }}}));
    let mut rpc = Rpc::start(&sandbox, &[]);
    let models = rpc.data(json!({"type": "get_available_models"}));
    assert!(!models.to_string().contains("gw-SECRET"), "{models}");
    assert!(models["models"][0].get("headers").is_none(), "{models}");
    let ids: Vec<&str> = models["models"]
        .as_array()
        .expect("models")
        .iter()
        .map(|m| m["id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(ids, ["mock-model", "deep"]);
    assert_eq!(
        rpc.data(json!({"type": "get_available_thinking_levels"})),
        json!({"levels": ["off"]})
    );
    assert_eq!(
        rpc.data(json!({"type": "cycle_thinking_level"})),
        Value::Null
    );

    let deep = rpc.data(json!({"type": "set_model", "provider": "mock", "modelId": "deep"}));
    assert!(!deep.to_string().contains("gw-SECRET"), "{deep}");
    assert_eq!(
        (&deep["id"], &deep["reasoning"]),
        (&json!("deep"), &json!(true))
    );
    assert_eq!(deep["contextWindow"], 128000);
    assert_eq!(
        rpc.data(json!({"type": "get_available_thinking_levels"})),
        json!({"levels": ["off", "minimal", "low", "medium", "high"]})
    );
    let (before, set) = rpc.request(json!({"type": "set_thinking_level", "level": "high"}));
    assert_eq!(
        set,
        json!({"id": "req-6", "type": "response", "command": "set_thinking_level",
            "success": true})
    );
    assert_eq!(
        before,
        [json!({"type": "thinking_level_changed", "level": "high"})]
    );
    let state = rpc.data(json!({"type": "get_state"}));
    assert_eq!(state["thinkingLevel"], "high");
    assert!(!state.to_string().contains("gw-SECRET"), "{state}");
    assert_eq!(
        rpc.data(json!({"type": "cycle_thinking_level"})),
        json!({"level": "off"})
    );
    let bad = rpc.call(json!({"type": "set_thinking_level", "level": "maximum"}));
    assert_eq!(bad["success"], false);
    assert!(
        bad["error"]
            .as_str()
            .unwrap_or_default()
            .contains("`level` must be one of"),
        "{bad}"
    );

    let cycled = rpc.data(json!({"type": "cycle_model"}));
    assert_eq!(cycled["model"]["id"], "mock-model");
    assert_eq!(
        (&cycled["thinkingLevel"], &cycled["isScoped"]),
        (&json!("off"), &json!(false))
    );
    assert_eq!(
        rpc.data(json!({"type": "get_state"}))["model"]["id"],
        "mock-model"
    );

    let missing = rpc.call(json!({"type": "set_model", "provider": "mock", "modelId": "nope"}));
    assert_eq!(
        missing,
        json!({"id": "req-12", "type": "response", "command": "set_model", "success": false,
            "error": "Model not found: mock/nope"})
    );
    assert!(rpc.finish().success());
}

#[test]
fn bash_streams_its_output_with_the_command_id_and_the_model_reads_it_next() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("seen"));
    let mut rpc = Rpc::start(&sandbox, &[]);
    let (before, response) = rpc.request(json!({"type": "bash", "command": "echo hi"}));
    assert_eq!(
        before,
        [json!({"type": "bash_execution_update", "id": "req-1", "delta": "hi\n"})]
    );
    assert_eq!(
        response,
        json!({"id": "req-1", "type": "response", "command": "bash", "success": true,
            "data": {"output": "hi\n", "exitCode": 0, "cancelled": false, "truncated": false}})
    );
    let hidden = rpc.data(
        json!({"type": "bash", "command": "echo secret-output; exit 3",
        "excludeFromContext": true}),
    );
    assert_eq!(hidden["exitCode"], 3);
    let messages = rpc.data(json!({"type": "get_messages"}));
    let first = &messages["messages"][0];
    assert_eq!(
        (
            &first["role"],
            &first["command"],
            &first["output"],
            &first["exitCode"]
        ),
        (
            &json!("bashExecution"),
            &json!("echo hi"),
            &json!("hi\n"),
            &json!(0)
        )
    );
    assert_eq!(messages["messages"][1]["excludeFromContext"], true);
    rpc.call(json!({"type": "prompt", "message": "what did it print?"}));
    rpc.until("agent_settled");
    let requests = sandbox.requests();
    assert!(
        body_mentions(&requests[0], "Ran `echo hi`"),
        "{:?}",
        requests[0]
    );
    assert!(!body_mentions(&requests[0], "secret-output"));
    assert!(rpc.finish().success());
}

#[test]
fn abort_bash_cancels_the_running_command() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &[]);
    rpc.send(&json!({"id": "long", "type": "bash", "command": "echo started; sleep 30"}));
    assert_eq!(
        rpc.next(),
        json!({"type": "bash_execution_update", "id": "long", "delta": "started\n"})
    );
    rpc.send(&json!({"id": "stop", "type": "abort_bash"}));
    // The two answers race: the cancelled command may answer first.
    let (mut aborted, mut response) = (None, None);
    while aborted.is_none() || response.is_none() {
        let line = rpc.next();
        match line["id"].as_str() {
            Some("stop") => aborted = Some(line),
            Some("long") => response = Some(line),
            _ => panic!("unexpected line: {line}"),
        }
    }
    assert_eq!(
        aborted,
        Some(json!({"id": "stop", "type": "response", "command": "abort_bash", "success": true}))
    );
    let response = response.unwrap_or_default();
    assert_eq!(response["data"]["cancelled"], true, "{response}");
    assert!(response["data"].get("exitCode").is_none());
    assert!(rpc.finish().success());
}

#[test]
fn compaction_and_the_automatic_switches() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let mut rpc = Rpc::start(&sandbox, &[]);
    let (before, compact) = rpc.request(json!({"type": "compact"}));
    assert_eq!(
        kinds(&before),
        ["compaction_start", "compaction_end"],
        "{before:?}"
    );
    assert_eq!(
        compact,
        json!({"id": "req-1", "type": "response", "command": "compact", "success": false,
            "error": "Nothing to compact: the conversation is already short enough"})
    );
    for (kind, enabled) in [("set_auto_compaction", false), ("set_auto_retry", false)] {
        let response = rpc.call(json!({"type": kind, "enabled": enabled}));
        assert_eq!(response["success"], true, "{response}");
    }
    assert_eq!(
        rpc.data(json!({"type": "get_state"}))["autoCompactionEnabled"],
        false
    );
    let bad = rpc.call(json!({"type": "set_auto_retry", "enabled": "yes"}));
    assert_eq!(
        bad["error"],
        "set_auto_retry: `enabled` must be true or false, not a string"
    );
    let response = rpc.call(json!({"type": "abort_retry"}));
    assert_eq!(
        response,
        json!({"id": "req-6", "type": "response", "command": "abort_retry", "success": true})
    );
    assert!(rpc.finish().success());
}

#[test]
fn get_commands_lists_prompt_templates_and_skills() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.agent_dir.join("prompts")).expect("prompts dir");
    sandbox.write_agent_file(
        "prompts/review.md",
        "---\ndescription: Review the change\n---\nReview $1",
    );
    let mut rpc = Rpc::start(&sandbox, &[]);
    let data = rpc.data(json!({"type": "get_commands"}));
    let commands = data["commands"].as_array().expect("commands");
    assert_eq!(commands.len(), 1, "{data}");
    assert_eq!(
        (
            &commands[0]["name"],
            &commands[0]["description"],
            &commands[0]["source"]
        ),
        (
            &json!("review"),
            &json!("Review the change"),
            &json!("prompt")
        )
    );
    assert_eq!(commands[0]["sourceInfo"]["scope"], "user");
    assert!(rpc.finish().success());
}

#[test]
fn compact_summarizes_and_answers_after_its_events() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"compaction": {"keepRecentTokens": 1}}));
    sandbox.answer(&Turn::text("one"));
    sandbox.answer(&Turn::text("two"));
    // The history's summary and, the cut splitting the last turn, its prefix's.
    sandbox.answer(&Turn::text("The user said first and second."));
    sandbox.answer(&Turn::text("The last turn asked for a second answer."));
    let mut rpc = Rpc::start(&sandbox, &[]);
    for text in ["first", "second"] {
        rpc.data(json!({"type": "prompt", "message": text}));
        rpc.until("agent_settled");
    }
    let (before, compacted) =
        rpc.request(json!({"type": "compact", "customInstructions": "keep it short"}));
    assert_eq!(kinds(&before), ["compaction_start", "compaction_end"]);
    assert_eq!(before[1]["result"], compacted["data"]);
    let data = &compacted["data"];
    let summary = data["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("The user said first and second."),
        "{compacted}"
    );
    assert!(data["firstKeptEntryId"].is_string() && data["tokensBefore"].is_u64());
    // pi 1.6's result: the estimated size after, what the summaries cost, the file lists; the
    // cost is on the session's compaction entry too.
    assert!(data["estimatedTokensAfter"].is_u64(), "{compacted}");
    assert!(
        data["usage"]["totalTokens"].as_u64() > Some(0),
        "{compacted}"
    );
    assert!(data["details"]["readFiles"].is_array(), "{compacted}");
    let session = std::fs::read_to_string(sandbox.only_session()).expect("session file");
    let entry: serde_json::Value = session
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "compaction")
        .expect("a compaction entry");
    assert_eq!(entry["usage"], data["usage"], "{session}");
    assert!(sandbox.requests()[2..]
        .iter()
        .any(|r| body_mentions(r, "keep it short")));
    assert!(rpc.finish().success());
}
