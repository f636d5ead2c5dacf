use super::*;
use serde_json::json;

#[test]
fn each_built_in_tool_has_its_arguments_typed() {
    assert_eq!(
        ToolArgs::parse("read", &json!({"path": "a.txt", "offset": 3})),
        Some(Ok(ToolArgs::Read(ReadArgs {
            path: "a.txt".into(),
            offset: Some(3.0),
            limit: None
        })))
    );
    assert_eq!(
        ToolArgs::parse(
            "grep",
            &json!({"pattern": "x", "ignoreCase": true, "context": 2})
        ),
        Some(Ok(ToolArgs::Grep(GrepArgs {
            pattern: "x".into(),
            path: None,
            glob: None,
            ignore_case: Some(true),
            literal: None,
            context: Some(2.0),
            limit: None
        })))
    );
    let edit = ToolArgs::parse(
        "edit",
        &json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]}),
    );
    assert_eq!(
        edit.and_then(Result::ok).as_ref().and_then(ToolArgs::path),
        Some("p")
    );
    assert_eq!(ToolArgs::parse("mcp_tool", &json!({})), None);
}

#[test]
fn arguments_that_do_not_fit_name_the_tool_and_the_field() {
    let e = ToolArgs::parse("write", &json!({"path": "a"}))
        .expect("built in")
        .expect_err("no content");
    assert!(
        e.0.starts_with("Invalid arguments for write:") && e.0.contains("content"),
        "{e}"
    );
}
