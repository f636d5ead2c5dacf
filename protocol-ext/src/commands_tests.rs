use serde_json::json;

use super::*;
use crate::position::Position;

fn range() -> Range {
    Range::new(Position::new(2, 4), Position::new(2, 9))
}

#[test]
fn fix_diagnostic_wire_shape_and_round_trip() {
    let cmd = Command::FixDiagnostic(FixDiagnosticArgs {
        uri: "file:///p/src/main.rs".into(),
        range: range(),
        message: "cannot find value `x` in this scope".into(),
        severity: Some(1),
        source: Some("rustc".into()),
        code: Some(json!("E0425")),
        session: None,
    });
    let args = cmd.arguments();
    assert_eq!(
        args,
        vec![json!({"uri": "file:///p/src/main.rs",
            "range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 9}},
            "message": "cannot find value `x` in this scope", "severity": 1, "source": "rustc",
            "code": "E0425"})]
    );
    assert_eq!(Command::parse(FIX_DIAGNOSTIC, &args).unwrap(), cmd);
    assert_eq!(cmd.name(), "tandem.fixDiagnostic");
    assert_eq!(
        cmd.title(),
        "Ask Tandem to fix: cannot find value `x` in this scope"
    );
    assert_eq!(cmd.code_action_kind(), Some("quickfix"));
}

#[test]
fn target_commands() {
    let target = TargetArgs {
        uri: "file:///p/a.py".into(),
        range: range(),
        symbol: Some("parse".into()),
        session: Some(SessionId::from("s1")),
    };
    let wire = json!({"uri": "file:///p/a.py",
        "range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 9}},
        "symbol": "parse", "session": "s1"});
    for (name, cmd, title) in [
        (
            EXPLAIN,
            Command::Explain(target.clone()),
            "Ask Tandem to explain `parse`",
        ),
        (
            DOCUMENT,
            Command::Document(target.clone()),
            "Ask Tandem to document `parse`",
        ),
        (
            WRITE_TESTS,
            Command::WriteTests(target.clone()),
            "Ask Tandem to write tests for `parse`",
        ),
    ] {
        assert_eq!(cmd.arguments(), vec![wire.clone()]);
        assert_eq!(
            Command::parse(name, std::slice::from_ref(&wire)).unwrap(),
            cmd
        );
        assert_eq!((cmd.name(), cmd.title().as_str()), (name, title));
        assert_eq!(cmd.code_action_kind(), Some("refactor.tandem"));
    }
    let anonymous = Command::Explain(TargetArgs {
        symbol: None,
        ..target
    });
    assert_eq!(anonymous.title(), "Ask Tandem to explain the selection");
}

#[test]
fn abort_takes_an_optional_session() {
    assert_eq!(
        Command::parse(ABORT, &[]).unwrap(),
        Command::Abort(AbortArgs::default())
    );
    let cmd = Command::parse(ABORT, &[json!({"session": "s1"})]).unwrap();
    assert_eq!(cmd.arguments(), vec![json!({"session": "s1"})]);
    assert_eq!(cmd.code_action_kind(), None);
    assert_eq!(
        serde_json::to_value(CommandResult {
            session: SessionId::from("s1")
        })
        .unwrap(),
        json!({"session": "s1"})
    );
}

#[test]
fn bad_arguments_name_the_field() {
    let e = Command::parse(
        FIX_DIAGNOSTIC,
        &[json!({"uri": "file:///a", "message": "m"})],
    )
    .unwrap_err();
    assert_eq!(e.code, -32602);
    assert_eq!(e.data, Some(json!({"field": "arguments[0].range"})));
    assert_eq!(
        e.message,
        "invalid params for workspace/executeCommand tandem.fixDiagnostic: \
         missing field `arguments[0].range`"
    );
    let e = Command::parse(EXPLAIN, &[]).unwrap_err();
    assert_eq!(e.data, Some(json!({"field": "arguments[0].uri"})));
    let e = Command::parse(EXPLAIN, &[json!("file:///a")]).unwrap_err();
    assert_eq!(e.data, Some(json!({"field": "arguments[0]"})));
    let e = Command::parse(
        WRITE_TESTS,
        &[
            json!({"uri": "u", "range": {"start": {"line": 0, "character": 0},
            "end": {"line": "1", "character": 0}}}),
        ],
    )
    .unwrap_err();
    assert_eq!(
        e.data,
        Some(json!({"field": "arguments[0].range.end.line"}))
    );
    let e = Command::parse("tandem.refactor", &[]).unwrap_err();
    assert_eq!(e.data, Some(json!({"field": "command"})));
    assert_eq!(
        e.message,
        "invalid params for workspace/executeCommand: unknown command `tandem.refactor`; \
         Tandem's are tandem.fixDiagnostic, tandem.explain, tandem.document, \
         tandem.writeTests, tandem.abort"
    );
}

#[test]
fn long_or_multiline_messages_are_shortened_in_titles() {
    let mut args = FixDiagnosticArgs {
        uri: "u".into(),
        range: range(),
        message: "mismatched types\nexpected `u32`, found `String`".into(),
        severity: None,
        source: None,
        code: None,
        session: None,
    };
    assert_eq!(
        Command::FixDiagnostic(args.clone()).title(),
        "Ask Tandem to fix: mismatched types…"
    );
    args.message = "é".repeat(100);
    let title = Command::FixDiagnostic(args).title();
    assert_eq!(title.chars().count(), "Ask Tandem to fix: ".len() + 81);
    assert!(title.ends_with('…'));
}
