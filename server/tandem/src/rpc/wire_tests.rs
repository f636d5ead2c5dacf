use serde_json::json;

use super::*;

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_without_an_id() {
    let Incoming::Refused(response) = parse("not json") else {
        panic!("accepted")
    };
    assert_eq!(response["type"], "response");
    assert_eq!(response["command"], "parse");
    assert_eq!(response["success"], false);
    assert!(response.get("id").is_none());
    assert!(response["error"]
        .as_str()
        .is_some_and(|e| e.starts_with("Failed to parse command: ")));
}

#[test]
fn json_that_is_not_a_command_is_an_unknown_command_as_pi_says() {
    for text in ["[1,2]", "42", "\"str\"", "null", "{}"] {
        assert_eq!(
            parse(text),
            Incoming::Refused(json!({"type": "response", "success": false,
                "error": "Unknown command: undefined"})),
            "{text}"
        );
    }
    assert_eq!(
        parse(r#"{"id":"3"}"#),
        Incoming::Refused(json!({"id": "3", "type": "response", "success": false,
            "error": "Unknown command: undefined"}))
    );
}

#[test]
fn commands_keep_their_id_as_sent() {
    let Incoming::Command { id, kind, .. } = parse(r#"{"id":29,"type":"get_state"}"#) else {
        panic!("not a command")
    };
    assert_eq!((id, kind.as_str()), (Some(json!(29)), "get_state"));
    let Incoming::Command { id, .. } = parse(r#"{"type":"get_state"}"#) else {
        panic!("not a command")
    };
    assert_eq!(id, None);
}

#[test]
fn dialog_answers_are_told_apart() {
    assert!(matches!(
        parse(r#"{"type":"extension_ui_response","id":"x","confirmed":true}"#),
        Incoming::DialogAnswer(_)
    ));
}

#[test]
fn responses_have_pis_shape() {
    assert_eq!(
        success(Some(json!("a")), "abort", None),
        json!({"id": "a", "type": "response", "command": "abort", "success": true})
    );
    assert_eq!(
        success(None, "get_last_assistant_text", Some(json!({}))),
        json!({"type": "response", "command": "get_last_assistant_text", "success": true,
            "data": {}})
    );
    assert_eq!(
        unknown(Some(json!("1")), Some("nope")),
        json!({"id": "1", "type": "response", "command": "nope", "success": false,
            "error": "Unknown command: nope"})
    );
}

#[test]
fn bad_arguments_name_the_field_and_what_it_must_be() {
    let body = json!({"type": "set_session_name", "name": 5});
    let body = body.as_object().expect("object");
    let args = Args::new("set_session_name", body);
    assert_eq!(
        args.string("name").unwrap_err(),
        "set_session_name: `name` must be a string, not a number"
    );
    assert_eq!(
        args.string("missing").unwrap_err(),
        "set_session_name: `missing` is required (a string)"
    );
    let body = json!({"mode": "x"});
    let args = Args::new("set_steering_mode", body.as_object().expect("object"));
    assert_eq!(
        args.one_of("mode", &["all", "one-at-a-time"]).unwrap_err(),
        "set_steering_mode: `mode` must be one of \"all\", \"one-at-a-time\", not \"x\""
    );
}
