//! Lines read and written byte for byte like pi's.

use serde_json::json;
use tandem_ai::{ThinkingLevel, UserContent};

use super::{assistant, lines_of, reference_path, reference_text, user};
use crate::session::json::to_js_line;
use crate::session::wire::parse_entry_line;
use crate::session::{load_session_file, EntryKind, SessionEntry, SessionHeader, SessionManager};

#[test]
fn every_reference_line_round_trips_exactly() {
    let text = reference_text();
    let mut lines = text.lines();
    let header_line = lines.next().expect("header");
    let header: SessionHeader = serde_json::from_str(header_line).expect("header parses");
    assert_eq!(to_js_line(&header).expect("serializes"), header_line);
    let mut count = 0;
    for line in lines {
        let entry = parse_entry_line(line).expect("entry parses");
        assert!(
            !matches!(entry.kind, EntryKind::Unknown(_)),
            "typed: {line}"
        );
        assert_eq!(to_js_line(&entry).expect("serializes"), line);
        // The generic Deserialize agrees with the fast path.
        let again: SessionEntry = serde_json::from_str(line).expect("deserializes");
        assert_eq!(again, entry);
        count += 1;
    }
    assert_eq!(count, 8);
}

#[test]
fn the_reference_file_loads_without_loss() {
    let loaded = load_session_file(&reference_path()).expect("loads");
    assert!(loaded.report.skipped.is_empty());
    assert_eq!(loaded.report.kept_verbatim, 0);
    assert_eq!(loaded.entries.len(), 8);
    assert_eq!(loaded.header.id, "01a22b4d-25d5-77de-8d60-df9ef5711e8b");
    let manager = SessionManager::open(reference_path()).expect("opens");
    assert_eq!(manager.leaf(), Some("1388a736"));
    assert_eq!(manager.cwd(), std::path::Path::new("/home/user/project"));
    let context = manager.build_context();
    assert_eq!(context.messages.len(), 6);
    assert_eq!(context.thinking_level, ThinkingLevel::Off);
    let model = context.model.expect("model");
    assert_eq!(
        (model.provider.as_str(), model.model_id.as_str()),
        ("mock", "mock-model")
    );
}

/// Every kind, appended through the manager, then checked against the exact line pi writes
/// (ids and timestamps substituted).
#[test]
fn every_entry_kind_serializes_in_pis_field_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut s = SessionManager::create("/p", dir.path());
    let u = s.append_message(user("hi", 1)).expect("user");
    s.append_message(assistant("hello", 2)).expect("assistant");
    s.append_thinking_level_change(ThinkingLevel::High)
        .expect("level");
    s.append_model_change("openai", "gpt-x").expect("model");
    s.append_compaction(
        "sum",
        u.as_str(),
        1234,
        Some(json!({"readFiles": ["a"]})),
        None,
        None,
    )
    .expect("compaction");
    s.append_compaction("sum2", u.as_str(), 5, None, None, Some(true))
        .expect("compaction 2");
    s.append_branch_summary(u.as_str(), "left", None, None)
        .expect("branch summary");
    s.append_custom("ext", Some(json!({"k": 1})))
        .expect("custom");
    s.append_custom("ext", None).expect("custom without data");
    s.append_custom_message("ext", UserContent::Text("note".into()), true, None)
        .expect("custom message");
    s.append_custom_message("ext", UserContent::Text("x".into()), false, Some(json!(7)))
        .expect("custom message with details");
    s.append_label(&u, Some("start".into())).expect("label");
    s.append_label(&u, None).expect("label cleared");
    s.append_session_info("  name ").expect("info");

    let path = s.session_file().expect("file").to_path_buf();
    let lines = lines_of(&path);
    assert_eq!(lines.len(), s.entries().len() + 1);
    let expected = |e: &SessionEntry| -> String {
        let base = format!(
            r#""id":"{}","parentId":{},"timestamp":"{}""#,
            e.id,
            e.parent_id
                .as_ref()
                .map_or("null".to_string(), |p| format!("\"{p}\"")),
            e.timestamp
        );
        let (ty, fields, fields_first) = match &e.kind {
            EntryKind::Message { message } => (
                "message",
                format!(r#""message":{}"#, to_js_line(message).expect("json")),
                false,
            ),
            EntryKind::ThinkingLevelChange { .. } => (
                "thinking_level_change",
                r#""thinkingLevel":"high""#.into(),
                false,
            ),
            EntryKind::ModelChange { .. } => (
                "model_change",
                r#""provider":"openai","modelId":"gpt-x""#.into(),
                false,
            ),
            EntryKind::Compaction {
                from_hook: None, ..
            } => (
                "compaction",
                format!(
                    r#""summary":"sum","firstKeptEntryId":"{u}","tokensBefore":1234,"details":{{"readFiles":["a"]}}"#
                ),
                false,
            ),
            EntryKind::Compaction { .. } => (
                "compaction",
                format!(
                    r#""summary":"sum2","firstKeptEntryId":"{u}","tokensBefore":5,"fromHook":true"#
                ),
                false,
            ),
            EntryKind::BranchSummary { .. } => (
                "branch_summary",
                format!(r#""fromId":"{u}","summary":"left""#),
                false,
            ),
            EntryKind::ContextEdit { .. } | EntryKind::Usage { .. } => {
                unreachable!("not appended here (see tests/pi16.rs)")
            }
            EntryKind::Custom { data: Some(_), .. } => (
                "custom",
                r#""customType":"ext","data":{"k":1}"#.into(),
                true,
            ),
            EntryKind::Custom { .. } => ("custom", r#""customType":"ext""#.into(), true),
            EntryKind::CustomMessage { details: None, .. } => (
                "custom_message",
                r#""customType":"ext","content":"note","display":true"#.into(),
                true,
            ),
            EntryKind::CustomMessage { .. } => (
                "custom_message",
                r#""customType":"ext","content":"x","display":false,"details":7"#.into(),
                true,
            ),
            EntryKind::Label { label: Some(_), .. } => (
                "label",
                format!(r#""targetId":"{u}","label":"start""#),
                false,
            ),
            EntryKind::Label { .. } => ("label", format!(r#""targetId":"{u}""#), false),
            EntryKind::SessionInfo { .. } => ("session_info", r#""name":"name""#.into(), false),
            EntryKind::Unknown(_) => unreachable!(),
        };
        if fields_first {
            format!(r#"{{"type":"{ty}",{fields},{base}}}"#)
        } else {
            format!(r#"{{"type":"{ty}",{base},{fields}}}"#)
        }
    };
    for (entry, line) in s.entries().iter().zip(&lines[1..]) {
        assert_eq!(*line, expected(&entry));
        assert_eq!(parse_entry_line(line).expect("parses"), entry);
    }
    // Costs are written as JavaScript writes them.
    assert!(lines[2]
        .contains(r#""cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}"#));
}

#[test]
fn unknown_entry_types_are_kept_verbatim() {
    let line = r#"{"type":"future_thing","id":"abcd1234","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","x":[1,2.5,{"y":null}],"a":"é"}"#;
    let entry = parse_entry_line(line).expect("parses");
    assert_eq!(entry.kind.type_name(), "future_thing");
    assert_eq!(entry.id, "abcd1234");
    assert_eq!(to_js_line(&entry).expect("serializes"), line);
    // A known type in a shape Tandem cannot read is kept the same way.
    let odd = r#"{"type":"model_change","id":"abcd1235","parentId":"abcd1234","timestamp":"t","provider":5}"#;
    let entry = parse_entry_line(odd).expect("parses");
    assert!(matches!(entry.kind, EntryKind::Unknown(_)));
    assert_eq!(entry.parent_id.as_deref(), Some("abcd1234"));
    assert_eq!(to_js_line(&entry).expect("serializes"), odd);
}
