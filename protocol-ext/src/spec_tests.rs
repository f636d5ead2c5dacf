//! The README is the spec: every JSON-RPC message in its `jsonc` examples must parse as this
//! crate's types and serialize back to what the page shows, the example event streams must be
//! numbered without gaps, and the examples must cover every request and every event type.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde_json::Value;

use crate::capabilities::{ClientCapability, ServerCapability};
use crate::commands::{self, Command, CommandResult};
use crate::config::TandemConfig;
use crate::errors::{parse_params, TandemError};
use crate::events::{Event, EventNotification, SeqCheck, SeqTracker};
use crate::ids::SessionId;
use crate::interaction;
use crate::methods::{self, Request};
use crate::requests::*;

const README: &str = include_str!("../README.md");

/// The `jsonc` blocks of the README, each as its JSON messages in order.
fn example_blocks() -> Vec<Vec<Value>> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in README.lines() {
        let t = line.trim_start();
        match current.as_mut() {
            None if t == "```jsonc" => current = Some(String::new()),
            None => {}
            Some(text) if t == "```" => {
                let values = serde_json::Deserializer::from_str(text)
                    .into_iter::<Value>()
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap_or_else(|e| panic!("README block is not JSON: {e}\n{text}"));
                blocks.push(values);
                current = None;
            }
            Some(_) if t.starts_with("//") => {}
            Some(text) => {
                text.push_str(t.trim_start_matches(['→', '←']));
                text.push('\n');
            }
        }
    }
    blocks
}

/// True when every field and element of `shown` is in `ours` with the same value (ours may add
/// defaults the example leaves out).
fn covers(ours: &Value, shown: &Value) -> bool {
    match (ours, shown) {
        (Value::Object(a), Value::Object(b)) => b.iter().all(|(k, v)| {
            a.get(k)
                .map_or_else(|| is_skipped_default(v), |x| covers(x, v))
        }),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| covers(x, y))
        }
        _ => ours == shown,
    }
}

/// What our types leave out when serializing: `null`, `false`, `[]`.
fn is_skipped_default(v: &Value) -> bool {
    v.is_null() || v == &Value::Bool(false) || v.as_array().is_some_and(|a| a.is_empty())
}

fn assert_covers<T: Serialize>(parsed: &T, shown: &Value) {
    let ours = serde_json::to_value(parsed).unwrap();
    assert!(covers(&ours, shown), "parsed {ours}\nfrom {shown}");
}

/// Parses a request's params as `R` (and checks they serialize back).
fn request<R: Request>(params: &Value) -> Result<(), TandemError> {
    let parsed: R = parse_params(params.clone())?;
    assert_covers(&parsed, params);
    Ok(())
}

/// Parses the params of a `tandem/...` request; `None` for other methods.
fn tandem_request(method: &str, params: &Value) -> Option<Result<(), TandemError>> {
    Some(match method {
        methods::PROMPT => request::<PromptParams>(params),
        methods::ABORT => request::<AbortParams>(params),
        methods::SESSIONS_NEW => request::<SessionsNewParams>(params),
        methods::SESSIONS_LIST => request::<SessionsListParams>(params),
        methods::SESSIONS_OPEN => request::<SessionsOpenParams>(params),
        methods::SESSIONS_FORK => request::<SessionsForkParams>(params),
        methods::SESSIONS_ENTRIES => request::<SessionsEntriesParams>(params),
        methods::STATE => request::<StateParams>(params),
        methods::MODELS_LIST => request::<ModelsListParams>(params),
        methods::MODELS_SET => request::<ModelsSetParams>(params),
        methods::THINKING_SET => request::<ThinkingSetParams>(params),
        methods::COMPACT => request::<CompactParams>(params),
        methods::UNDO => request::<UndoParams>(params),
        _ => return None,
    })
}

fn check_command(name: &Value, arguments: &Value) -> Command {
    let args = arguments.as_array().cloned().unwrap_or_default();
    let cmd = Command::parse(name.as_str().unwrap_or(""), &args).unwrap();
    assert_eq!(&Value::Array(cmd.arguments()), arguments);
    cmd
}

fn check_standard_request(method: &str, params: &Value) {
    match method {
        "initialize" => {
            let opts = TandemConfig::from_initialization_options(&params["initializationOptions"]);
            assert!(opts.warnings.is_empty(), "{:?}", opts.warnings);
            crate::config::editor_trust(Some(&params["initializationOptions"])).unwrap();
            let exp = params["capabilities"].get("experimental");
            assert!(ClientCapability::from_experimental(exp).events);
        }
        "workspace/executeCommand" => {
            check_command(&params["command"], &params["arguments"]);
        }
        // Server → client requests of the extension.
        methods::INPUT => request::<InputParams>(params).unwrap(),
        "window/showMessageRequest" => {
            let titles: Vec<&str> = params["actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["title"].as_str().unwrap())
                .collect();
            assert!(
                titles == interaction::EDIT_ACTIONS
                    || titles == interaction::PERMISSION_ACTIONS
                    || titles == interaction::TRUST_ACTIONS
                    || titles == [interaction::ALLOW, interaction::DENY],
                "{titles:?}"
            );
        }
        _ => {}
    }
}

fn check_standard_result(method: &str, result: &Value) {
    match method {
        "initialize" => {
            let caps = &result["capabilities"];
            assert_eq!(
                caps["experimental"],
                ServerCapability::current().to_experimental()
            );
            assert_eq!(
                caps["executeCommandProvider"]["commands"],
                serde_json::json!(commands::ALL)
            );
            assert_eq!(
                caps["codeActionProvider"]["codeActionKinds"],
                serde_json::json!([commands::KIND_FIX, commands::KIND_ASSIST])
            );
        }
        "workspace/executeCommand" => {
            let parsed: CommandResult = serde_json::from_value(result.clone()).unwrap();
            assert_covers(&parsed, result);
        }
        methods::INPUT => {
            let parsed: InputResult = serde_json::from_value(result.clone()).unwrap();
            assert_covers(&parsed, result);
        }
        "textDocument/codeAction" => {
            for action in result.as_array().unwrap() {
                let c = &action["command"];
                let cmd = check_command(&c["command"], &c["arguments"]);
                assert_eq!(action["title"], Value::String(cmd.title()));
                assert_eq!(c["title"], Value::String(cmd.title()));
                assert_eq!(action["kind"].as_str(), cmd.code_action_kind());
            }
        }
        _ => {}
    }
}

#[derive(Default)]
struct Coverage {
    events: BTreeSet<&'static str>,
    requests: BTreeSet<String>,
    answered: BTreeSet<String>,
}

fn check_message(
    msg: &Value,
    invalid: &HashMap<String, Value>,
    pending: &mut HashMap<String, String>,
    seqs: &mut SeqTracker,
    first: &mut BTreeSet<SessionId>,
    seen: &mut Coverage,
) {
    assert_eq!(msg["jsonrpc"], "2.0", "{msg}");
    let id = msg.get("id").map(|i| i.to_string());
    match (msg["method"].as_str(), id) {
        (Some(methods::EVENT), None) => {
            let n: EventNotification = serde_json::from_value(msg["params"].clone())
                .unwrap_or_else(|e| panic!("{e}: {msg}"));
            assert_ne!(n.event, Event::Unknown, "{msg}");
            assert_eq!(serde_json::to_value(&n).unwrap(), msg["params"]);
            let check = seqs.observe(&n.session, n.seq);
            if !first.insert(n.session.clone()) {
                assert_eq!(check, SeqCheck::InOrder, "{msg}");
            }
            seen.events.insert(n.event.kind());
        }
        (Some("workspace/didChangeConfiguration"), None) => {
            let parsed = TandemConfig::from_settings(&msg["params"]["settings"]).unwrap();
            assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        }
        (Some(_), None) => {}
        (Some(method), Some(id)) => {
            match tandem_request(method, &msg["params"]) {
                Some(outcome) => {
                    seen.requests.insert(method.to_string());
                    // A request the README answers with -32602 must fail exactly so.
                    match (outcome, invalid.get(&id)) {
                        (Ok(()), None) => {}
                        (Err(e), Some(shown)) => {
                            assert_eq!(&serde_json::to_value(e).unwrap(), shown)
                        }
                        (outcome, shown) => panic!("{msg}: parsed {outcome:?}, shown {shown:?}"),
                    }
                }
                None => check_standard_request(method, &msg["params"]),
            }
            pending.insert(id, method.to_string());
        }
        (None, Some(id)) => {
            let method = pending
                .get(&id)
                .unwrap_or_else(|| panic!("response to an unknown request: {msg}"));
            if let Some(err) = msg.get("error") {
                let e: TandemError = serde_json::from_value(err.clone()).unwrap();
                assert!(e.kind().is_some(), "{msg}");
                assert_eq!(&serde_json::to_value(&e).unwrap(), err);
            } else if let Some(check) = result_checker(method) {
                check(&msg["result"]);
            } else {
                check_standard_result(method, &msg["result"]);
            }
            seen.answered.insert(method.clone());
        }
        (None, None) => panic!("neither a request, a response nor a notification: {msg}"),
    }
}

/// The result checker of a `tandem/...` method, without checking params.
fn result_checker(method: &str) -> Option<fn(&Value)> {
    fn result<R: Request>(result: &Value) {
        let parsed: R::Result = serde_json::from_value(result.clone())
            .unwrap_or_else(|e| panic!("{} result: {e}: {result}", R::METHOD));
        assert_covers(&parsed, result);
    }
    Some(match method {
        methods::PROMPT => result::<PromptParams>,
        methods::ABORT => result::<AbortParams>,
        methods::SESSIONS_NEW => result::<SessionsNewParams>,
        methods::SESSIONS_LIST => result::<SessionsListParams>,
        methods::SESSIONS_OPEN => result::<SessionsOpenParams>,
        methods::SESSIONS_FORK => result::<SessionsForkParams>,
        methods::SESSIONS_ENTRIES => result::<SessionsEntriesParams>,
        methods::STATE => result::<StateParams>,
        methods::MODELS_LIST => result::<ModelsListParams>,
        methods::MODELS_SET => result::<ModelsSetParams>,
        methods::THINKING_SET => result::<ThinkingSetParams>,
        methods::COMPACT => result::<CompactParams>,
        methods::UNDO => result::<UndoParams>,
        _ => return None,
    })
}

#[test]
fn every_readme_example_parses_and_the_examples_cover_the_protocol() {
    let blocks = example_blocks();
    assert!(blocks.len() >= 15, "found {} example blocks", blocks.len());
    let invalid: HashMap<String, Value> = blocks
        .iter()
        .flatten()
        .filter(|m| m["error"]["code"] == -32602)
        .map(|m| (m["id"].to_string(), m["error"].clone()))
        .collect();
    assert!(!invalid.is_empty());
    let mut pending = HashMap::new();
    let mut seen = Coverage::default();
    for block in &blocks {
        let mut seqs = SeqTracker::new();
        let mut first = BTreeSet::new();
        for msg in block {
            check_message(
                msg,
                &invalid,
                &mut pending,
                &mut seqs,
                &mut first,
                &mut seen,
            );
        }
    }
    let all_events = [
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "text_delta",
        "thinking_delta",
        "message_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "tool_start",
        "tool_update",
        "tool_end",
        "retry_start",
        "retry_end",
        "compaction_start",
        "compaction_end",
        "queue_update",
        "settled",
        "error",
    ];
    assert_eq!(seen.events, all_events.into_iter().collect::<BTreeSet<_>>());
    let all_requests: BTreeSet<String> = methods::REQUESTS.iter().map(|m| m.to_string()).collect();
    assert_eq!(seen.requests, all_requests);
    assert!(
        all_requests.is_subset(&seen.answered),
        "unanswered: {:?}",
        all_requests.difference(&seen.answered).collect::<Vec<_>>()
    );
}
