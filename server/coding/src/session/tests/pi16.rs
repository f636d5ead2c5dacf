//! pi 1.6's additions: `system` messages (prompt sections and tool declarations), context edits,
//! usage entries, the compaction's system checkpoint; and hostile versions of each.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tandem_agent::AgentMessage;
use tandem_ai::Tool;

use super::{assistant, roles_and_texts, tool_result, user};
use crate::messages::convert_to_llm;
use crate::resources::SystemPrompt;
use crate::session::json::to_js_line;
use crate::session::system::SystemState;
use crate::session::wire::parse_entry_line;
use crate::session::{load_session_file, EntryKind, SessionError, SessionManager};

/// pi 1.6's session file for its reference task.
fn pi16_reference_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/reference/pi-1.6.0-session.jsonl")
}

fn system(fields: Value) -> AgentMessage {
    serde_json::from_value(fields).expect("a message")
}

fn tool(name: &str, description: &str) -> Tool {
    Tool {
        name: name.to_string(),
        description: description.to_string(),
        parameters: json!({"type": "object", "properties": {}}),
    }
}

fn sections(pairs: &[(&str, &str)]) -> SystemPrompt {
    SystemPrompt::from_sections(pairs.iter().map(|(n, t)| (n.to_string(), t.to_string())))
}

#[test]
fn the_pi_16_reference_file_loads_with_its_system_message() {
    let loaded = load_session_file(&pi16_reference_path()).expect("loads");
    assert!(loaded.report.skipped.is_empty());
    assert_eq!(loaded.report.kept_verbatim, 0);
    assert_eq!(loaded.entries.len(), 9);

    let manager = SessionManager::open(pi16_reference_path()).expect("opens");
    let context = manager.build_context();
    let roles: Vec<&str> = context.messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            "assistant"
        ]
    );
    let state = SystemState::replay(&context.messages);
    let names: Vec<&str> = state.sections().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["preamble", "tools", "rules", "docs", "cwd"]);
    assert_eq!(state.tool_names(), ["read", "bash", "edit", "write"]);
    let text = state.text();
    assert!(
        text.starts_with("You are a coding assistant running inside pi"),
        "{text}"
    );
    assert!(
        text.ends_with("<cwd>\n/home/user/project\n</cwd>"),
        "{text}"
    );
    // The prompt goes to the model as its system prompt, not as a conversation message.
    assert_eq!(convert_to_llm(&context.messages).len(), 6);
    // The system message is typed as a message entry, and its line is the file's.
    let entry = &manager.entries().to_vec()[2];
    assert_eq!(entry.message().map(|m| m.role()), Some("system"));
    let line = manager.entry_line(&entry.id).expect("line");
    assert_eq!(to_js_line(entry).expect("serializes"), line);
}

#[test]
fn appending_to_a_pi_16_file_leaves_its_bytes_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.jsonl");
    let original = std::fs::read(pi16_reference_path()).expect("fixture");
    std::fs::write(&path, &original).expect("write");
    let mut s = SessionManager::open(&path).expect("opens");
    s.append_message(user("and now?", 5)).expect("append");
    let after = std::fs::read(&path).expect("read");
    assert!(after.starts_with(&original));
}

#[test]
fn system_messages_replay_in_order() {
    let messages = [
        system(
            json!({"role": "system", "content": "", "sections": {"a": "A", "b": "B"},
            "timestamp": 5, "toolsAdded": [{"name": "x", "description": "X"}, {"name": "y"}]}),
        ),
        user("u", 6).into(),
        system(
            json!({"role": "system", "content": [{"type": "text", "text": "extra"}],
            "sections": {"b": null, "c": "C", "a": "A2"}, "timestamp": 7,
            "toolsRemoved": [{"name": "x"}], "toolsAdded": [{"name": "x", "description": "X2"}]}),
        ),
        system(
            json!({"role": "system", "content": "more", "sections": {"b": "B again"},
            "timestamp": 8}),
        ),
    ];
    let state = SystemState::replay(&messages);
    let names: Vec<&str> = state.sections().iter().map(|(n, _)| n.as_str()).collect();
    // `a` keeps its place when set again; `b`, removed and set again, goes to the end.
    assert_eq!(names, ["a", "c", "b"]);
    assert_eq!(state.tool_names(), ["y", "x"]);
    assert_eq!(state.text(), "extra\n\nmore\n\nA2\n\nC\n\nB again");
    // The checkpoint a compaction records: pi's `getCurrentSystemMessage`, first timestamp
    // replaced by the compaction's.
    let checkpoint = state.checkpoint(99).expect("a checkpoint");
    assert_eq!(
        to_js_line(&checkpoint).expect("line"),
        r#"{"role":"system","content":"extra\n\nmore","sections":{"a":"A2","c":"C","b":"B again"},"toolsAdded":[{"name":"y"},{"name":"x","description":"X2"}],"timestamp":99}"#
    );
    assert!(SystemState::replay(&[user("u", 1).into()])
        .checkpoint(1)
        .is_none());
}

#[test]
fn a_system_message_with_wrong_typed_fields_keeps_what_it_can() {
    let messages = [system(json!({"role": "system", "content": 7,
        "sections": {"ok": "fine", "bad": 3, "list": ["x"]}, "timestamp": "soon",
        "toolsAdded": [{"description": "no name"}, "read", {"name": 5}, {"name": "kept"}],
        "toolsRemoved": "everything"}))];
    let state = SystemState::replay(&messages);
    assert_eq!(state.text(), "fine");
    assert_eq!(state.tool_names(), ["kept"]);
    // Sections, tools, anything of the wrong type: never a panic.
    let odd = [system(
        json!({"role": "system", "sections": "nope", "toolsAdded": {"name": "x"}}),
    )];
    let state = SystemState::replay(&odd);
    assert_eq!(state.text(), "");
    assert!(state.tool_names().is_empty());
    assert!(!state.is_empty(), "a system message was seen");
}

#[test]
fn an_update_records_only_what_changed_in_pi_16s_shape() {
    let prompt = sections(&[("preamble", "P"), ("cwd", "C")]);
    let tools = [tool("read", "R"), tool("bash", "B")];
    let first = SystemState::default()
        .update_to(&prompt, &tools, 10)
        .expect("a first declaration");
    assert_eq!(
        to_js_line(&first).expect("line"),
        r#"{"role":"system","content":"","sections":{"preamble":"P","cwd":"C"},"timestamp":10,"toolsAdded":[{"name":"read","description":"R","parameters":{"type":"object","properties":{}}},{"name":"bash","description":"B","parameters":{"type":"object","properties":{}}}]}"#
    );
    let state = SystemState::replay(std::slice::from_ref(&first));
    assert_eq!(state.text(), "P\n\nC");
    assert!(
        state.update_to(&prompt, &tools, 11).is_none(),
        "nothing changed"
    );

    // A changed section, a section gone, a changed tool, a tool gone.
    let prompt = sections(&[("preamble", "P2")]);
    let tools = [tool("read", "R2")];
    let update = state.update_to(&prompt, &tools, 12).expect("an update");
    assert_eq!(
        to_js_line(&update).expect("line"),
        r#"{"role":"system","content":"","sections":{"preamble":"P2","cwd":null},"timestamp":12,"toolsAdded":[{"name":"read","description":"R2","parameters":{"type":"object","properties":{}}}],"toolsRemoved":[{"name":"read"},{"name":"bash"}]}"#
    );
    // Tools only: no `sections` key.
    let same_prompt = sections(&[("preamble", "P"), ("cwd", "C")]);
    let update = state
        .update_to(&same_prompt, &[tool("read", "R")], 13)
        .expect("bash removed");
    assert_eq!(
        to_js_line(&update).expect("line"),
        r#"{"role":"system","content":"","timestamp":13,"toolsRemoved":[{"name":"bash"}]}"#
    );
}

/// A session with a tool call, its result and an answer, for the context edit tests.
fn edited_session() -> (SessionManager, [String; 4]) {
    let mut s = SessionManager::in_memory("/p");
    let u = s.append_message(user("u1", 1)).expect("u1");
    let a = s.append_message(assistant("a1", 2)).expect("a1");
    let r = s.append_message(tool_result("long output", 3)).expect("r1");
    let a2 = s.append_message(assistant("a2", 4)).expect("a2");
    (s, [u, a, r, a2])
}

#[test]
fn context_edits_omit_or_replace_their_targets() {
    let (mut s, [u, a, r, _]) = edited_session();
    s.append_context_edit(&r, Some(json!("short")))
        .expect("edit");
    s.append_context_edit(&a, None).expect("omit");
    s.append_context_edit(&u, Some(json!([{"type": "text", "text": "first"}])))
        .expect("edit");
    s.append_context_edit(&u, Some(json!("second, latest wins")))
        .expect("edit");
    let messages = s.build_context().messages;
    assert_eq!(
        roles_and_texts(&messages),
        [
            "user:second, latest wins",
            "toolResult:short",
            "assistant:a2"
        ]
    );
    // The string became one text block; the rest of the tool result is as written.
    let result = serde_json::to_value(&messages[1]).expect("json");
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "short"}])
    );
    assert_eq!(result["toolCallId"], "call_1");
    // The edits are lines pi writes: target and replacement only.
    let last = s.leaf().expect("leaf").to_string();
    let line = s.entry_line(&last).expect("line");
    assert!(
        line.starts_with(r#"{"type":"context_edit","id":""#),
        "{line}"
    );
    assert!(
        line.ends_with(&format!(
            r#","targetId":"{u}","replacement":{{"content":"second, latest wins"}}}}"#
        )),
        "{line}"
    );
    let tool_edit = s
        .entries()
        .iter()
        .find(|e| matches!(&e.kind, EntryKind::ContextEdit { target_id, .. } if *target_id == r))
        .expect("the tool result's edit");
    let line = s.entry_line(&tool_edit.id).expect("line");
    assert!(
        line.ends_with(r#""replacement":{"content":[{"type":"text","text":"short"}]}}"#),
        "{line}"
    );
    // The edited entries themselves are unchanged.
    assert_eq!(
        s.entry(&r)
            .and_then(|e| e.message().map(|m| m.role().to_string()))
            .as_deref(),
        Some("toolResult")
    );
}

#[test]
fn context_edits_are_branch_relative() {
    let (mut s, [u, _, r, a2]) = edited_session();
    s.append_context_edit(&r, None).expect("omit");
    s.append_message(user("u2", 5)).expect("u2");
    assert_eq!(
        roles_and_texts(&s.build_context().messages),
        ["user:u1", "assistant:a1", "assistant:a2", "user:u2"]
    );
    // Back before the edit: the result is there again.
    s.branch(&a2).expect("branch");
    assert_eq!(
        roles_and_texts(&s.build_context().messages),
        [
            "user:u1",
            "assistant:a1",
            "toolResult:long output",
            "assistant:a2"
        ]
    );
    // Refused: a target off the branch, a missing one, an entry that is not a message, an odd
    // replacement.
    s.branch(&u).expect("branch");
    assert!(matches!(
        s.append_context_edit(&r, None),
        Err(SessionError::NotEditable { .. })
    ));
    assert!(matches!(
        s.append_context_edit("nope", None),
        Err(SessionError::EntryNotFound { .. })
    ));
    let name = s.append_session_info("named").expect("name");
    assert!(matches!(
        s.append_context_edit(&name, None),
        Err(SessionError::NotEditable { .. })
    ));
    assert!(matches!(
        s.append_context_edit(&u, Some(json!(42))),
        Err(SessionError::NotEditable { .. })
    ));
}

#[test]
fn a_compaction_records_and_restores_the_system_checkpoint() {
    let mut s = SessionManager::in_memory("/p");
    let first = SystemState::default()
        .update_to(
            &sections(&[("preamble", "P"), ("cwd", "C")]),
            &[tool("read", "R")],
            1,
        )
        .expect("declaration");
    s.append_message(first).expect("system");
    s.append_message(user("u1", 2)).expect("u1");
    s.append_message(assistant("a1", 3)).expect("a1");
    let u2 = s.append_message(user("u2", 4)).expect("u2");
    let patch = SystemState::replay(&s.build_context().messages)
        .update_to(
            &sections(&[("preamble", "P"), ("cwd", "C2")]),
            &[tool("read", "R")],
            5,
        )
        .expect("patch");
    s.append_message(patch).expect("patch");
    s.append_message(assistant("a2", 6)).expect("a2");
    let before = SystemState::replay(&s.build_context().messages);

    let c = s
        .append_compaction("summary", u2.as_str(), 100, None, None, None)
        .expect("compaction");
    let entry = s.entry(&c).expect("entry");
    let EntryKind::Compaction {
        system_message: Some(checkpoint),
        ..
    } = &entry.kind
    else {
        panic!("no checkpoint: {entry:?}");
    };
    let millis = crate::session::time::parse_iso(&entry.timestamp).expect("iso");
    assert_eq!(checkpoint["timestamp"], json!(millis));
    let line = s.entry_line(&c).expect("line");
    assert!(line.contains(r#""tokensBefore":100,"systemMessage":{"role":"system","content":"","sections":{"preamble":"P","cwd":"C2"},"toolsAdded":[{"name":"read""#), "{line}");

    // The checkpoint leads; the patch inside the kept range is left out in its favour.
    let messages = s.build_context().messages;
    assert_eq!(
        roles_and_texts(&messages),
        [
            "system:",
            "compactionSummary:summary",
            "user:u2",
            "assistant:a2"
        ]
    );
    let after = SystemState::replay(&messages);
    assert_eq!(after.text(), before.text());
    assert_eq!(after.tool_names(), before.tool_names());
}

/// Lines a newer pi or a hostile hand could write: each is kept as written, none panics, and
/// the context is what pi would build or a documented skip.
#[test]
fn hostile_pi_16_lines_are_kept_and_never_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.jsonl");
    let huge = "x".repeat(4 * 1024 * 1024);
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
        r#"{"type":"message","id":"a0000001","parentId":null,"timestamp":"2026-12-01T00:00:01.000Z","message":{"role":"system","content":{"odd":true},"sections":{"preamble":"P","bad":1},"toolsAdded":"read","timestamp":1}}"#.to_string(),
        format!(r#"{{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2026-12-01T00:00:02.000Z","message":{{"role":"user","content":"{huge}","timestamp":2}}}}"#),
        r#"{"type":"future_kind","id":"a0000003","parentId":"a0000002","timestamp":"2026-12-01T00:00:03.000Z","payload":{"z":1,"a":[1.50,2e3]}}"#.to_string(),
        r#"{"type":"context_edit","id":"a0000004","parentId":"a0000003","timestamp":"2026-12-01T00:00:04.000Z","targetId":"gone0000","replacement":null}"#.to_string(),
        r#"{"type":"context_edit","id":"a0000005","parentId":"a0000004","timestamp":"2026-12-01T00:00:05.000Z","targetId":"a0000002","replacement":42}"#.to_string(),
        r#"{"type":"usage","id":"a0000006","parentId":"a0000005","timestamp":"2026-12-01T00:00:06.000Z","kind":"cache_warm","provider":"anthropic","model":"m","usage":{"input":0},"note":"warm"}"#.to_string(),
        r#"{"type":"usage","id":"a0000007","parentId":"a0000006","timestamp":"2026-12-01T00:00:07.000Z","kind":"cache_warm"}"#.to_string(),
        r#"{"type":"message","id":"a0000008","parentId":"a0000007","timestamp":"2026-12-01T00:00:08.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":8}}"#.to_string(),
        r#"{"type":"context_edit","id":"a0000009","parentId":"a0000008","timestamp":"2026-12-01T00:00:09.000Z","targetId":"a0000008","replacement":{"content":[{"type":"mystery"}]}}"#.to_string(),
        r#"{"type":"compaction","id":"a0000010","parentId":"a0000009","timestamp":"2026-12-01T00:00:10.000Z","summary":"S","firstKeptEntryId":"a0000001","tokensBefore":5,"systemMessage":"not a message"}"#.to_string(),
    ];
    let text = format!("{}\n", lines.join("\n"));
    std::fs::write(&path, &text).expect("write");

    let mut s = SessionManager::open(&path).expect("opens");
    assert!(s.load_report().skipped.is_empty());
    assert_eq!(s.entries().len(), lines.len() - 1);
    // Every line is kept as written, whether typed or not.
    for (entry, line) in s.entries().iter().zip(&lines[1..]) {
        assert_eq!(s.entry_line(&entry.id).as_deref(), Some(line.as_str()));
    }
    let kinds: Vec<String> = s
        .entries()
        .iter()
        .map(|e| e.kind.type_name().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "future_kind",
            "context_edit",
            "context_edit",
            "usage",
            "usage",
            "message",
            "context_edit",
            "compaction"
        ]
    );
    // Typed: the edit of a missing target, the well-formed usage. Verbatim: the unknown kind,
    // the edit whose replacement is not pi's shape, the usage without its fields.
    let unknown: Vec<String> = s
        .entries()
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Unknown(_)))
        .map(|e| e.id)
        .collect();
    assert_eq!(unknown, ["a0000003", "a0000005", "a0000007"]);
    assert!(
        matches!(&s.entries().to_vec()[5].kind, EntryKind::Usage { kind, .. } if kind == "cache_warm")
    );

    // The context: the compaction's odd checkpoint is left out, its summary leads; the system
    // message in the kept range is dropped; the edit of a missing target edits nothing; the
    // assistant edit whose blocks do not fit is skipped, so the answer is sent as written.
    let messages = s.build_context().messages;
    let roles: Vec<&str> = messages.iter().map(|m| m.role()).collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant"]);
    assert_eq!(roles_and_texts(&messages)[2], "assistant:ok");

    // Without the compaction, the wrong-typed system message still gives its good section.
    s.branch("a0000009").expect("branch");
    let messages = s.build_context().messages;
    assert_eq!(SystemState::replay(&messages).text(), "P");
    assert_eq!(
        roles_and_texts(&messages)[1].len(),
        "user:".len() + huge.len()
    );

    // Appending leaves every byte alone.
    s.append_message(user("more", 11)).expect("append");
    let after = std::fs::read_to_string(&path).expect("read");
    assert!(after.starts_with(&text));
}

#[test]
fn pi_16_entry_lines_round_trip_exactly() {
    for line in [
        r#"{"type":"context_edit","id":"g6h7i8j9","parentId":"f6g7h8i9","timestamp":"2024-12-03T14:11:00.000Z","targetId":"c3d4e5f6","replacement":null}"#,
        r#"{"type":"context_edit","id":"g6h7i8j9","parentId":"f6g7h8i9","timestamp":"2024-12-03T14:11:00.000Z","targetId":"c3d4e5f6","replacement":{"content":[{"type":"text","text":"t"}]}}"#,
        r#"{"type":"usage","id":"f6g7h8i9","parentId":"e5f6g7h8","timestamp":"2024-12-03T14:08:00.000Z","kind":"cache_warm","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0,"cacheRead":50000,"cacheWrite":0,"totalTokens":50000,"cost":{"input":0,"output":0,"cacheRead":0.015,"cacheWrite":0,"total":0.015}}}"#,
        r#"{"type":"compaction","id":"f6g7h8i9","parentId":"e5f6g7h8","timestamp":"2024-12-03T14:10:00.000Z","summary":"User discussed X","firstKeptEntryId":"c3d4e5f6","tokensBefore":50000,"details":{"readFiles":[],"modifiedFiles":[]},"usage":{"input":1},"fromHook":false,"systemMessage":{"role":"system","content":"You are a coding assistant.","toolsAdded":[],"timestamp":1733235000000}}"#,
        r#"{"type":"branch_summary","id":"g7h8i9j0","parentId":"a1b2c3d4","timestamp":"2024-12-03T14:15:00.000Z","fromId":"f6g7h8i9","summary":"Branch explored approach A","details":{},"usage":{"input":2}}"#,
    ] {
        let entry = parse_entry_line(line).expect("parses");
        assert!(
            !matches!(entry.kind, EntryKind::Unknown(_)),
            "typed: {line}"
        );
        assert_eq!(to_js_line(&entry).expect("serializes"), line);
    }
}

#[test]
fn summaries_and_usage_entries_count_in_the_totals() {
    let usage = |line: &str| parse_entry_line(line).expect("parses").recorded_usage();
    let warm = usage(
        r#"{"type":"usage","id":"u1","parentId":null,"timestamp":"2024-12-03T14:08:00.000Z","kind":"cache_warm","provider":"anthropic","model":"m","usage":{"input":0,"output":0,"cacheRead":50000,"cacheWrite":0,"totalTokens":50000,"cost":{"input":0,"output":0,"cacheRead":0.015,"cacheWrite":0,"total":0.015}}}"#,
    )
    .expect("a usage entry counts");
    assert_eq!((warm.cache_read, warm.cost.total), (50_000, 0.015));
    // An unknown kind is usage like any other.
    assert!(usage(r#"{"type":"usage","id":"u2","parentId":null,"timestamp":"2024-12-03T14:08:00.000Z","kind":"something_new","provider":"p","model":"m","usage":{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}"#).is_some_and(|u| u.input == 3));
    let summary = usage(
        r#"{"type":"compaction","id":"c1","parentId":null,"timestamp":"2024-12-03T14:10:00.000Z","summary":"S","firstKeptEntryId":"c1","tokensBefore":5,"usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}}}"#,
    )
    .expect("a compaction's summary call counts");
    assert_eq!((summary.input, summary.cost.total), (10, 0.5));
    // Without usage, or with a usage that is not one, nothing counts.
    assert_eq!(
        usage(
            r#"{"type":"branch_summary","id":"b1","parentId":null,"timestamp":"2024-12-03T14:15:00.000Z","fromId":"root","summary":"B"}"#
        ),
        None
    );
    assert_eq!(
        usage(
            r#"{"type":"branch_summary","id":"b1","parentId":null,"timestamp":"2024-12-03T14:15:00.000Z","fromId":"root","summary":"B","usage":"lots"}"#
        ),
        None
    );
}
