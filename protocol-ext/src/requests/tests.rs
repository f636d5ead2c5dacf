use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::*;
use crate::errors::parse_params;
use crate::ids::SessionId;
use crate::methods::Request;
use crate::position::{Position, Range};

/// Asserts `value` serializes to exactly `wire` and parses back to `value`.
fn check<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: T, wire: Value) {
    assert_eq!(serde_json::to_value(&value).unwrap(), wire);
    assert_eq!(serde_json::from_value::<T>(wire).unwrap(), value);
}

/// Asserts that `R::METHOD` with `params` fails with -32602 naming `field`.
fn rejects<R: Request + std::fmt::Debug>(params: Value, field: &str) {
    let err = parse_params::<R>(params).unwrap_err();
    assert_eq!(err.code, -32602, "{err}");
    assert_eq!(err.data, Some(json!({ "field": field })), "{err}");
    assert!(err
        .message
        .starts_with(&format!("invalid params for {}: ", R::METHOD)));
}

fn s(id: &str) -> SessionId {
    SessionId::from(id)
}

#[test]
fn prompt_params_full_and_minimal() {
    check(
        PromptParams {
            session: Some(s("s1")),
            text: "Fix this".into(),
            context: Some(PromptContext {
                uri: "file:///p/src/lib.rs".into(),
                selection: Some(Range::new(Position::new(4, 0), Position::new(9, 1))),
                include_diagnostics: true,
                diagnostics: Some(vec![crate::Diagnostic {
                    range: Range::new(Position::new(5, 8), Position::new(5, 12)),
                    severity: Some(1),
                    code: Some(json!("E0308")),
                    source: Some("rustc".into()),
                    message: "mismatched types".into(),
                }]),
            }),
            images: vec![ImageInput {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
            }],
            when_busy: WhenBusy::FollowUp,
        },
        json!({"session": "s1", "text": "Fix this",
            "context": {"uri": "file:///p/src/lib.rs",
                "selection": {"start": {"line": 4, "character": 0}, "end": {"line": 9, "character": 1}},
                "includeDiagnostics": true,
                "diagnostics": [{"range": {"start": {"line": 5, "character": 8},
                    "end": {"line": 5, "character": 12}},
                    "severity": 1, "code": "E0308", "source": "rustc", "message": "mismatched types"}]},
            "images": [{"data": "iVBORw0KGgo=", "mimeType": "image/png"}],
            "whenBusy": "followUp"}),
    );
    let minimal: PromptParams = parse_params(json!({"text": "hi"})).unwrap();
    assert_eq!(minimal.session, None);
    assert_eq!(minimal.when_busy, WhenBusy::Steer);
    assert!(minimal.images.is_empty() && minimal.context.is_none());
    assert_eq!(
        serde_json::to_value(&minimal).unwrap(),
        json!({"text": "hi", "whenBusy": "steer"})
    );
    check(
        PromptResult {
            session: s("s1"),
            queued: true,
        },
        json!({"session": "s1", "queued": true}),
    );
}

#[test]
fn prompt_params_name_bad_fields() {
    rejects::<PromptParams>(json!({}), "text");
    rejects::<PromptParams>(Value::Null, "text");
    rejects::<PromptParams>(json!({"text": "x", "context": {}}), "context.uri");
    rejects::<PromptParams>(
        json!({"text": "x", "context": {"uri": "u", "diagnostics": [{"range": {
            "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}]}}),
        "context.diagnostics[0].message",
    );
    rejects::<PromptParams>(json!({"text": "x", "whenBusy": "later"}), "whenBusy");
    rejects::<PromptParams>(
        json!({"text": "x", "images": [{"data": "A"}]}),
        "images[0].mimeType",
    );
    let err = parse_params::<PromptParams>(json!({"session": 3, "text": "x"})).unwrap_err();
    assert_eq!(
        err.message,
        "invalid params for tandem/prompt: `session`: invalid type: integer `3`, expected a string"
    );
    let err = parse_params::<PromptParams>(json!({"text": "x", "context": {"selection": null}}))
        .unwrap_err();
    assert_eq!(
        err.message,
        "invalid params for tandem/prompt: missing field `context.uri`"
    );
}

#[test]
fn abort_and_compact() {
    check(AbortParams { session: s("s1") }, json!({"session": "s1"}));
    rejects::<AbortParams>(json!({}), "session");
    assert_eq!(serde_json::to_value(()).unwrap(), Value::Null);
    check(
        CompactParams {
            session: s("s1"),
            instructions: Some("keep the API decisions".into()),
        },
        json!({"session": "s1", "instructions": "keep the API decisions"}),
    );
    check(
        CompactParams {
            session: s("s1"),
            instructions: None,
        },
        json!({"session": "s1"}),
    );
    check(
        CompactResult {
            summary: "## Goal".into(),
            tokens_before: 51234,
        },
        json!({"summary": "## Goal", "tokensBefore": 51234}),
    );
}

#[test]
fn session_requests() {
    check(
        SessionsNewParams {
            cwd: Some("/p".into()),
        },
        json!({"cwd": "/p"}),
    );
    assert_eq!(
        parse_params::<SessionsNewParams>(Value::Null).unwrap(),
        SessionsNewParams::default()
    );
    check(SessionResult { session: s("s2") }, json!({"session": "s2"}));
    check(
        SessionsListParams {
            cwd: None,
            all: true,
        },
        json!({"all": true}),
    );
    check(SessionsListParams::default(), json!({}));
    check(
        SessionInfo {
            id: "0197".into(),
            path: "/home/u/.pi/agent/sessions/--p--/2025-06-01T09-30-00-000Z_0197.jsonl".into(),
            cwd: "/p".into(),
            name: Some("refactor".into()),
            parent_session_path: None,
            created: "2025-06-01T09:30:00.000Z".into(),
            modified: "2025-06-01T10:02:11.512Z".into(),
            message_count: 14,
            first_message: "Rename Foo to Bar".into(),
        },
        json!({"id": "0197",
            "path": "/home/u/.pi/agent/sessions/--p--/2025-06-01T09-30-00-000Z_0197.jsonl",
            "cwd": "/p", "name": "refactor", "created": "2025-06-01T09:30:00.000Z",
            "modified": "2025-06-01T10:02:11.512Z", "messageCount": 14,
            "firstMessage": "Rename Foo to Bar"}),
    );
    check(
        SessionsOpenParams {
            path: "/x.jsonl".into(),
        },
        json!({"path": "/x.jsonl"}),
    );
    rejects::<SessionsOpenParams>(json!({"file": "/x.jsonl"}), "path");
    check(
        SessionsForkParams {
            session: s("s1"),
            entry_id: Some("a1b2c3d4".into()),
        },
        json!({"session": "s1", "entryId": "a1b2c3d4"}),
    );
    rejects::<SessionsForkParams>(json!({"entryId": "a"}), "session");
}

#[test]
fn state_request() {
    check(StateParams { session: s("s1") }, json!({"session": "s1"}));
    check(
        StateResult {
            session: s("s1"),
            model: Some(ModelInfo {
                provider: "anthropic".into(),
                id: "claude-sonnet-4-5".into(),
                name: "Claude Sonnet 4.5".into(),
                context_window: 200_000,
            }),
            thinking_level: ThinkingLevel::Medium,
            running: true,
            queued: QueueState {
                steering: vec!["stop".into()],
                follow_up: vec![],
            },
            message_count: 6,
            session_file: Some("/s.jsonl".into()),
            tokens: Some(TokenStats {
                input: 1200,
                output: 340,
                cache_read: 0,
                cache_write: 0,
                context_tokens: Some(1540),
                cost: 0.0087,
            }),
            trust: TrustState::Pending,
            config_problems: vec!["/a/models.json: is not valid JSON".into()],
            extensions: Vec::new(),
        },
        json!({"session": "s1",
            "model": {"provider": "anthropic", "id": "claude-sonnet-4-5",
                "name": "Claude Sonnet 4.5", "contextWindow": 200000},
            "thinkingLevel": "medium", "running": true,
            "queued": {"steering": ["stop"], "followUp": []},
            "messageCount": 6, "sessionFile": "/s.jsonl",
            "tokens": {"input": 1200, "output": 340, "cacheRead": 0, "cacheWrite": 0,
                "contextTokens": 1540, "cost": 0.0087},
            "trust": "pending", "configProblems": ["/a/models.json: is not valid JSON"]}),
    );
    check(
        StateResult {
            session: s("s1"),
            model: None,
            thinking_level: ThinkingLevel::Off,
            running: false,
            queued: QueueState::default(),
            message_count: 0,
            session_file: None,
            tokens: None,
            trust: TrustState::Trusted,
            config_problems: Vec::new(),
            extensions: Vec::new(),
        },
        json!({"session": "s1", "model": null, "thinkingLevel": "off", "running": false,
            "queued": {"steering": [], "followUp": []}, "messageCount": 0,
            "trust": "trusted"}),
    );
}

#[test]
fn model_requests() {
    assert_eq!(
        parse_params::<ModelsListParams>(Value::Null).unwrap(),
        ModelsListParams {}
    );
    assert_eq!(
        parse_params::<ModelsListParams>(json!({"future": 1})).unwrap(),
        ModelsListParams {}
    );
    assert_eq!(
        serde_json::to_value(ModelsListParams {}).unwrap(),
        json!({})
    );
    check(
        vec![ModelEntry {
            provider: "openai".into(),
            id: "gpt-5".into(),
            name: "GPT-5".into(),
            reasoning: true,
            context_window: 400_000,
            available: false,
            key_env: vec!["OPENAI_API_KEY".into()],
        }],
        json!([{"provider": "openai", "id": "gpt-5", "name": "GPT-5", "reasoning": true,
            "contextWindow": 400000, "available": false, "keyEnv": ["OPENAI_API_KEY"]}]),
    );
    // A provider keyed only in models.json or auth.json: no `keyEnv` on the wire.
    check(
        vec![ModelEntry {
            provider: "local".into(),
            id: "m".into(),
            name: "m".into(),
            reasoning: false,
            context_window: 8192,
            available: true,
            key_env: vec![],
        }],
        json!([{"provider": "local", "id": "m", "name": "m", "reasoning": false,
            "contextWindow": 8192, "available": true}]),
    );
    check(
        ModelsSetParams {
            session: s("s1"),
            provider: "openai".into(),
            id: "gpt-5".into(),
        },
        json!({"session": "s1", "provider": "openai", "id": "gpt-5"}),
    );
    rejects::<ModelsSetParams>(json!({"session": "s1", "provider": "openai"}), "id");
    check(
        ThinkingSetParams {
            session: s("s1"),
            level: ThinkingLevel::Xhigh,
        },
        json!({"session": "s1", "level": "xhigh"}),
    );
    rejects::<ThinkingSetParams>(json!({"session": "s1", "level": "maximum"}), "level");
    check(
        ThinkingSetResult {
            level: ThinkingLevel::High,
        },
        json!({"level": "high"}),
    );
    for l in ThinkingLevel::ALL {
        assert_eq!(ThinkingLevel::parse(l.as_str()), Some(l));
        assert_eq!(serde_json::to_value(l).unwrap(), json!(l.as_str()));
    }
}

#[test]
fn undo_params_and_result() {
    check(
        UndoParams {
            session: s("s1"),
            back_to: None,
        },
        json!({"session": "s1"}),
    );
    check(
        UndoParams {
            session: s("s1"),
            back_to: Some("5a0f9d12".into()),
        },
        json!({"session": "s1", "backTo": "5a0f9d12"}),
    );
    rejects::<UndoParams>(json!({"backTo": "x"}), "session");
    check(
        UndoResult {
            status: UndoStatus::NothingToApply,
            turns: vec![UndoneTurn {
                checkpoint: "c".into(),
                turn: None,
                prompt: "p".into(),
            }],
            changed: vec![],
            deleted: vec![],
            refused: vec![RefusedHunk {
                uri: "file:///p/a".into(),
                line: 3,
                reason: "r".into(),
            }],
            message: "m".into(),
        },
        json!({"status": "nothingToApply", "turns": [{"checkpoint": "c", "prompt": "p"}],
               "changed": [], "deleted": [],
               "refused": [{"uri": "file:///p/a", "line": 3, "reason": "r"}], "message": "m"}),
    );
}

#[test]
fn every_request_type_has_its_method() {
    let methods = [
        PromptParams::METHOD,
        AbortParams::METHOD,
        SessionsNewParams::METHOD,
        SessionsListParams::METHOD,
        SessionsOpenParams::METHOD,
        SessionsForkParams::METHOD,
        SessionsEntriesParams::METHOD,
        StateParams::METHOD,
        ModelsListParams::METHOD,
        ModelsSetParams::METHOD,
        ThinkingSetParams::METHOD,
        CompactParams::METHOD,
        UndoParams::METHOD,
    ];
    assert_eq!(methods, crate::methods::REQUESTS);
}

#[test]
fn serde_json_alone_names_missing_fields() {
    // What an LSP library reports when it deserializes params with serde_json directly.
    let cases = [
        (
            serde_json::from_value::<PromptParams>(json!({})).map(|_| ()),
            "text",
        ),
        (
            serde_json::from_value::<StateParams>(json!({})).map(|_| ()),
            "session",
        ),
        (
            serde_json::from_value::<ModelsSetParams>(json!({"session": "s", "id": "m"}))
                .map(|_| ()),
            "provider",
        ),
        (
            serde_json::from_value::<SessionsOpenParams>(json!({})).map(|_| ()),
            "path",
        ),
        (
            serde_json::from_value::<ThinkingSetParams>(json!({"session": "s"})).map(|_| ()),
            "level",
        ),
        (
            serde_json::from_value::<CompactResult>(json!({"summary": ""})).map(|_| ()),
            "tokensBefore",
        ),
    ];
    for (result, field) in cases {
        assert_eq!(
            result.unwrap_err().to_string(),
            format!("missing field `{field}`")
        );
    }
}
