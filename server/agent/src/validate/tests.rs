use super::validate_tool_arguments;
use serde_json::{json, Value};

fn read_schema() -> Value {
    json!({"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string"},
        "offset": {"type": "integer", "minimum": 1},
        "limit": {"type": "number", "exclusiveMinimum": 0}}})
}

fn edit_schema() -> Value {
    json!({"type": "object", "required": ["path", "edits"], "properties": {
        "path": {"type": "string"},
        "edits": {"type": "array", "items": {"type": "object", "required": ["oldText", "newText"],
            "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}}}})
}

fn error(name: &str, schema: Value, args: Value) -> String {
    validate_tool_arguments(name, &schema, &args).expect_err("arguments should be rejected")
}

/// The messages for `value` checked against the property schema `v` (each line's `  - v: ` cut).
fn messages(v: Value, value: Value) -> Vec<String> {
    let text = error(
        "t",
        json!({"type": "object", "properties": {"v": v}}),
        json!({"v": value}),
    );
    let lines = text.lines().skip(1).take_while(|l| !l.is_empty());
    lines
        .map(|l| l.trim_start_matches("  - v: ").to_owned())
        .collect()
}

fn coerced(v: Value, value: Value) -> Value {
    let schema = json!({"type": "object", "properties": {"v": v}});
    let args = validate_tool_arguments("t", &schema, &json!({"v": value}));
    args.expect("arguments should pass")["v"].clone()
}

#[test]
fn missing_required_property_at_root() {
    let expected =
        "Validation failed for tool \"read\":\n  - path: must have required properties path\
        \n\nReceived arguments:\n{}";
    assert_eq!(error("read", read_schema(), json!({})), expected);
}

#[test]
fn wrong_type_nested_shows_full_path() {
    let args = json!({"path": "a.rs", "edits": [{"oldText": {}, "newText": "x"}]});
    let expected = "Validation failed for tool \"edit\":\n  - edits.0.oldText: must be string\n\n\
        Received arguments:\n{\n  \"path\": \"a.rs\",\n  \"edits\": [\n    {\n      \"oldText\": {},\
        \n      \"newText\": \"x\"\n    }\n  ]\n}";
    assert_eq!(error("edit", edit_schema(), args), expected);
}

#[test]
fn several_errors_in_ajv_order() {
    let expected =
        "Validation failed for tool \"read\":\n  - path: must have required properties path\
        \n  - offset: must be integer\n  - limit: must be > 0\n\n\
        Received arguments:\n{\n  \"offset\": \"abc\",\n  \"limit\": \"0\"\n}";
    assert_eq!(
        error(
            "read",
            read_schema(),
            json!({"offset": "abc", "limit": "0"})
        ),
        expected
    );
}

#[test]
fn every_additional_property_is_an_error_and_keys_print_in_js_order() {
    let schema =
        json!({"type": "object", "properties": {"path": {}}, "additionalProperties": false});
    let args = json!({"path": ".", "b": [], "10": {}, "2": 1.5e-7});
    let line = "\n  - root: must NOT have additional properties";
    let expected = format!(
        "Validation failed for tool \"ls\":{line}{line}{line}\n\nReceived arguments:\n\
        {{\n  \"2\": 1.5e-7,\n  \"10\": {{}},\n  \"path\": \".\",\n  \"b\": []\n}}"
    );
    assert_eq!(error("ls", schema, args), expected);
}

#[test]
fn nested_missing_property_shows_its_full_path() {
    let text = error(
        "edit",
        edit_schema(),
        json!({"path": "a", "edits": [{"newText": "x"}]}),
    );
    assert!(
        text.contains("\n  - edits.0.oldText: must have required properties oldText\n\n"),
        "{text}"
    );
}

#[test]
fn non_object_arguments_and_boolean_schemas() {
    let text = error("read", read_schema(), json!([1, 2]));
    assert!(text.starts_with("Validation failed for tool \"read\":\n  - root: must be object\n\n"));
    assert!(
        text.ends_with("Received arguments:\n[\n  1,\n  2\n]"),
        "{text}"
    );
    assert_eq!(
        validate_tool_arguments("t", &json!(true), &json!("x")),
        Ok(json!("x"))
    );
    assert!(error("t", json!(false), json!({})).contains("  - root: boolean schema is false"));
}

#[test]
fn coercion_to_the_schema_type() {
    // [type, value, coerced value]
    let cases = json!([
        ["integer", "5", 5],
        ["integer", " 1.0 ", 1],
        ["number", "1.5e1", 15],
        ["number", "0x1A", 26],
        ["number", true, 1],
        ["number", null, 0],
        ["string", 5, "5"],
        ["string", 1e21, "1e+21"],
        ["string", false, "false"],
        ["string", null, ""],
        ["boolean", "true", true],
        ["boolean", 0, false],
        ["boolean", null, false],
        ["null", "", null]
    ]);
    for case in cases.as_array().into_iter().flatten() {
        assert_eq!(
            coerced(json!({"type": case[0]}), case[1].clone()),
            case[2],
            "{case}"
        );
    }
    assert_eq!(
        coerced(json!({"type": "string", "enum": ["1", "2"]}), json!(1)),
        json!("1")
    );
}

#[test]
fn type_arrays_match_any_then_coerce_in_order() {
    assert_eq!(
        coerced(json!({"type": ["string", "number"]}), json!(5)),
        json!(5)
    );
    assert_eq!(
        coerced(json!({"type": ["string", "number"]}), json!(true)),
        json!("true")
    );
    assert_eq!(
        coerced(json!({"type": ["boolean", "integer"]}), json!("1")),
        json!(1)
    );
    assert_eq!(
        messages(json!({"type": ["string", "number"]}), json!({})),
        ["must be string,number"]
    );
}

#[test]
fn message_forms() {
    // [property schema, value, expected messages]
    let cases = json!([
        [{"type": "integer"}, "abc", ["must be integer"]],
        [{"type": "integer"}, "1.5", ["must be integer"]],
        [{"type": "number"}, "", ["must be number"]],
        [{"type": "boolean"}, "yes", ["must be boolean"]],
        [{"type": "null"}, 1, ["must be null"]],
        [{"type": "array"}, "[]", ["must be array"]],
        [{"type": "object"}, [], ["must be object"]],
        [{"type": "integer", "maximum": 10, "minimum": 20}, "15", ["must be <= 10", "must be >= 20"]],
        [{"exclusiveMaximum": 0.5, "exclusiveMinimum": 3}, 1, ["must be < 0.5", "must be > 3"]],
        [{"maxLength": 1}, "😀é", ["must NOT have more than 1 characters"]],
        [{"minLength": 3}, "😀é", ["must NOT have fewer than 3 characters"]],
        [{"maxItems": 1}, [1, 2], ["must NOT have more than 1 items"]],
        [{"minItems": 1}, [], ["must NOT have fewer than 1 items"]],
        [{"enum": ["a", 1]}, "b", ["must be equal to one of the allowed values"]],
        [{"const": {"a": 1}}, {"a": 2}, ["must be equal to constant"]],
        [{"pattern": "^a"}, "ba", ["must match pattern \"^a\""]],
        [{"pattern": "^\\d+$"}, "١٢", ["must match pattern \"^\\d+$\""]],
        [{"not": {"type": "string"}}, "x", ["must NOT be valid"]],
        [{"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 1, ["must match exactly one schema in oneOf"]],
        [{"oneOf": [{"type": "integer"}, {"type": "number"}, {"minimum": 0}]}, -1,
            ["must match exactly one schema in oneOf"]],
        [{"additionalProperties": false}, {"a": 1}, ["must NOT have additional properties"]]
    ]);
    for case in cases.as_array().into_iter().flatten() {
        let expected = case[2]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        assert_eq!(
            messages(case[0].clone(), case[1].clone()),
            expected.collect::<Vec<_>>(),
            "{case}"
        );
    }
    assert_eq!(
        coerced(json!({"maxLength": 2, "enum": ["😀é", 1]}), json!("😀é")),
        json!("😀é")
    );
    assert_eq!(coerced(json!({"enum": ["a", 1]}), json!(1.0)), json!(1.0));
}

#[test]
fn any_of_reports_each_branch_then_its_own_error() {
    let v = json!({"anyOf": [{"type": "integer", "minimum": 10}, {"type": "boolean"}]});
    let expected = [
        "must be >= 10",
        "must be boolean",
        "must match a schema in anyOf",
    ];
    assert_eq!(messages(v.clone(), json!("5")), expected);
    assert_eq!(coerced(v, json!("12")), json!(12));
}

#[test]
fn invalid_pattern_fails_the_call_without_panicking() {
    let text = error(
        "t",
        json!({"properties": {"v": {"pattern": "("}}}),
        json!({}),
    );
    assert!(
        text.starts_with("Invalid regular expression: /(/u: "),
        "{text}"
    );
    assert!(validate_tool_arguments("t", &json!({"pattern": "^(?!a)"}), &json!("x")).is_ok());
}

#[test]
fn refs_tuples_and_escaped_paths() {
    let schema = json!({"type": "object", "definitions": {"pos": {"type": "integer", "minimum": 1}},
        "properties": {"a/b": {"$ref": "#/definitions/pos"},
            "t": {"items": [{"type": "string"}], "additionalItems": false}}});
    let text = error("t", schema, json!({"a/b": "0", "t": [{}, 2]}));
    let expected = "  - a/b: must be >= 1\n  - t: must NOT have more than 1 items\n  - t.0: must be string\n\n";
    assert!(text.contains(expected), "{text}");
}

#[test]
fn every_missing_property_is_named_in_one_line() {
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"]});
    let text = error("write", schema, json!({}));
    assert!(
        text.contains("\n  - path: must have required properties path, content\n\n"),
        "{text}"
    );
}
