use serde_json::json;

use super::*;
use crate::requests::{PromptParams, StateParams};

#[test]
fn codes_round_trip_and_are_distinct() {
    let numbers: Vec<i64> = ErrorCode::ALL.iter().map(|c| c.code()).collect();
    assert_eq!(
        numbers,
        [-32001, -32007, -32003, -32004, -32005, -32006, -32602, -32603, -32800]
    );
    for c in ErrorCode::ALL {
        assert_eq!(ErrorCode::from_code(c.code()), Some(c));
    }
    assert_eq!(ErrorCode::from_code(-32000), None);
}

#[test]
fn unknown_session_names_it() {
    let e = TandemError::unknown_session(&SessionId::from("s-9"));
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"code": -32001,
            "message": "unknown session `s-9`: no open session has this id; create one with \
                tandem/sessions/new or open its file with tandem/sessions/open",
            "data": {"session": "s-9"}})
    );
    assert_eq!(e.kind(), Some(ErrorCode::UnknownSession));
}

#[test]
fn other_constructors() {
    let s = SessionId::from("s1");
    let e = TandemError::busy(&s, "tandem/compact");
    assert_eq!(e.code, -32007);
    assert_eq!(
        e.message,
        "session `s1` is busy: tandem/compact cannot run during a run; wait for its `settled` \
         event or call tandem/abort first"
    );
    let e = TandemError::no_model("No API key for anthropic: set ANTHROPIC_API_KEY");
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"code": -32003, "message": "No API key for anthropic: set ANTHROPIC_API_KEY"})
    );
    let e = TandemError::unknown_model("openai", "gpt-9");
    assert_eq!(e.code, -32004);
    assert_eq!(e.data, Some(json!({"provider": "openai", "id": "gpt-9"})));
    assert!(e.message.starts_with("unknown model `openai/gpt-9`: "));
    let e = TandemError::session_file("/x.jsonl", "not a session file (no header)");
    assert_eq!(
        e.message,
        "cannot open session file /x.jsonl: not a session file (no header)"
    );
    assert_eq!(e.data, Some(json!({"path": "/x.jsonl"})));
    assert_eq!(TandemError::nothing_to_compact(&s).code, -32006);
    assert_eq!(TandemError::internal("disk full").code, -32603);
    let e = TandemError::cancelled("tandem/compact");
    assert_eq!(
        (e.code, e.message.as_str()),
        (-32800, "tandem/compact was cancelled")
    );
    assert_eq!(e.to_string(), "tandem/compact was cancelled (code -32800)");
}

#[test]
fn parse_params_names_the_method_and_field() {
    let e = parse_params::<StateParams>(json!({"sesion": "s1"})).unwrap_err();
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"code": -32602,
            "message": "invalid params for tandem/state: missing field `session`",
            "data": {"field": "session"}})
    );
    let e = parse_params::<PromptParams>(json!("hello")).unwrap_err();
    assert_eq!(e.code, -32602);
    assert_eq!(e.data, None);
    assert!(e.message.contains("invalid type: string \"hello\""), "{e}");
    let ok: StateParams = parse_params(json!({"session": "s1", "extra": [1]})).unwrap();
    assert_eq!(ok.session, SessionId::from("s1"));
}

#[test]
fn error_object_parses_with_and_without_data() {
    let e: TandemError = serde_json::from_value(json!({"code": -32099, "message": "x"})).unwrap();
    assert_eq!((e.kind(), e.data), (None, None));
}
