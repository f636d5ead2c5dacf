use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::events::Event;
use crate::ids::SessionId;
use crate::position::Range;

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Ctx {
    uri: String,
    selection: Option<Range>,
    #[serde(default)]
    include_diagnostics: bool,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Steer,
    Follow,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Img {
    data: String,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct P {
    session: Option<SessionId>,
    text: String,
    context: Option<Ctx>,
    #[serde(default)]
    images: Vec<Img>,
    mode: Option<Mode>,
    extra: Option<serde_json::Value>,
}

fn err(v: serde_json::Value) -> ParamsError {
    from_value::<P>(v).unwrap_err()
}

#[test]
fn parses_like_serde_json() {
    let v = json!({"session": "s", "text": "hi", "mode": "follow", "unknownKey": 1,
        "context": {"uri": "file:///a", "selection": {"start": {"line": 1, "character": 2},
        "end": {"line": 1, "character": 5}}}, "images": [{"data": "AA=="}],
        "extra": {"nested": [1, "two", null, {"k": true}], "n": -3.5}});
    let via_path: P = from_value(v.clone()).unwrap();
    let direct: P = serde_json::from_value(v).unwrap();
    assert_eq!(via_path, direct);
    assert_eq!(via_path.mode, Some(Mode::Follow));
    assert_eq!(
        via_path.context.unwrap().selection.unwrap().end.character,
        5
    );
}

#[test]
fn null_options_and_absent_defaults() {
    let p: P = from_value(json!({"text": "x", "session": null, "context": null})).unwrap();
    assert_eq!(p.session, None);
    assert!(p.images.is_empty());
}

#[test]
fn missing_fields_name_their_full_path() {
    let e = err(json!({}));
    assert_eq!(e.field.as_deref(), Some("text"));
    assert_eq!(e.to_string(), "missing field `text`");
    let e = err(json!({"text": "x", "context": {"selection": null}}));
    assert_eq!(e.to_string(), "missing field `context.uri`");
    let e = err(json!({"text": "x", "context": {"uri": "u",
        "selection": {"start": {"line": 0, "character": 0}, "end": {"line": 0}}}}));
    assert_eq!(e.field.as_deref(), Some("context.selection.end.character"));
    let e = err(json!({"text": "x", "images": [{"data": "A"}, {}]}));
    assert_eq!(e.to_string(), "missing field `images[1].data`");
}

#[test]
fn wrong_types_name_their_field() {
    let e = err(json!({"text": 1}));
    assert_eq!(e.field.as_deref(), Some("text"));
    assert_eq!(
        e.to_string(),
        "`text`: invalid type: integer `1`, expected a string"
    );
    let e = err(json!({"text": "x", "context": {"uri": "u", "includeDiagnostics": "yes"}}));
    assert_eq!(e.field.as_deref(), Some("context.includeDiagnostics"));
    let e = err(json!({"text": "x", "context": {"uri": "u",
        "selection": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}}}));
    assert_eq!(e.field.as_deref(), Some("context.selection.start.line"));
    let e = err(json!({"text": "x", "mode": "sideways"}));
    assert_eq!(e.field.as_deref(), Some("mode"));
    assert!(e.message.contains("unknown variant `sideways`"), "{e}");
    let e = err(json!({"text": "x", "session": 5}));
    assert_eq!(e.field.as_deref(), Some("session"));
}

#[test]
fn whole_params_of_the_wrong_shape_have_no_field() {
    let e = err(json!(["text"]));
    assert_eq!(e.field, None);
    assert!(e.message.starts_with("invalid type: sequence"), "{e}");
}

#[test]
fn tagged_enums_go_through_too() {
    let e: Event =
        from_value(json!({"type": "text_delta", "contentIndex": 0, "delta": "d"})).unwrap();
    assert_eq!(e.kind(), "text_delta");
    let e = from_value::<Event>(json!({"type": "text_delta", "contentIndex": 0})).unwrap_err();
    assert_eq!(e.to_string(), "missing field `delta`");
    let e = from_value::<Event>(json!({"contentIndex": 0})).unwrap_err();
    assert_eq!(e.to_string(), "missing field `type`");
}
