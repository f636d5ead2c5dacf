//! The agent's language tools and after-edit diagnostics answered by Neovim, end to end: the
//! real `tandem lsp` started by the plugin asks Neovim (`tandem/diagnostics`,
//! `tandem/languageRequest`), which asks ruff and basedpyright; the scripted model's next
//! request holds each tool's result (`agent_language.lua`, on the Python project of
//! `neovim_plugin/python/`).
//!
//! Positions in the tool calls and results are what the read tool shows: 1-based lines and
//! 1-based columns in characters. The fixture has `ë` before the symbols used, so a byte column
//! (what Neovim counts) or a UTF-16 one in the wrong place would show.

use serde_json::{json, Value};
use tandem_tests::mock_llm::MockLlm;
use tandem_tests::wire::{response, Turn, WireApi};

use super::language::run_with;
use super::strings;

/// The text of the result of tool call `call` in the mock's request `index`.
fn tool_result(mock: &MockLlm, index: usize, call: &str) -> String {
    let requests = mock.requests();
    let body = requests
        .get(index)
        .and_then(|r| r.json().ok())
        .unwrap_or_else(|| panic!("no request {index}"));
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["tool_call_id"] == call))
        .map(|m| crate::support::content_text(&m["content"], "\n"))
        .unwrap_or_else(|| panic!("request {index} has no result of {call}"))
}

/// The model breaks app.py (`zoë.nme`: basedpyright's attribute error), looks up `User`'s
/// definition and references, fixes its error, and renames `User` to `Person`; each next
/// request carries what Neovim's language servers said, and the rename lands in Neovim's
/// buffers of both files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_uses_neovims_language_servers_through_the_real_server() {
    let mock = MockLlm::start().await.expect("mock LLM");
    let api = WireApi::OpenAiCompletions;
    // app.py line 4 is `zoë = User("Zoë"); print("é", total)`: `User` at column 7.
    let at_user = |extra: Value| {
        let mut args = json!({"path": "app.py", "line": 4, "column": 7});
        if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra) {
            args.extend(extra);
        }
        args
    };
    let edit = |old: &str, new: &str| json!({"path": "app.py", "edits": [{"oldText": old, "newText": new}]});
    let turns = [
        Turn::tool_call(
            "call_break",
            "edit",
            edit("print(zoë.name)", "print(zoë.nme)"),
        ),
        Turn::tool_call("call_definition", "definition", at_user(json!({}))),
        Turn::tool_call(
            "call_references",
            "references",
            at_user(json!({"includeDeclaration": true})),
        ),
        Turn::tool_call(
            "call_fix",
            "edit",
            edit("print(zoë.nme)", "print(zoë.name)"),
        ),
        Turn::tool_call(
            "call_rename",
            "rename",
            at_user(json!({"newName": "Person"})),
        ),
        Turn::text("Done."),
    ];
    for turn in &turns {
        mock.enqueue(response(api, turn));
    }
    let out = run_with("agent_language", &[], &mock).await;
    let r = &out.result;
    let ctx = &out.context;
    assert_eq!(mock.requests().len(), turns.len(), "{ctx}");
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();

    // 1. The edit's result ends with basedpyright's new error, from Neovim, at the column in
    // characters; what was there before (ruff's, basedpyright's on line 1) is not news.
    let broke = tool_result(&mock, 1, "call_break");
    let report = broke
        .split_once("\n\n")
        .map(|(_, report)| report)
        .unwrap_or_default();
    assert_eq!(
        lines(report),
        [
            "New diagnostics in app.py after this change, from the editor:",
            "app.py:5:11: error [basedpyright reportAttributeAccessIssue] Cannot access \
             attribute \"nme\" for class \"User\" Attribute \"nme\" is unknown",
        ],
        "{broke}\n{ctx}"
    );

    // 2. `User` is defined in models.py, line 4, column 7.
    let definition = tool_result(&mock, 2, "call_definition");
    assert_eq!(definition, "models.py:4:7: class User:", "{ctx}");

    // 3. Its references in both files, the declaration included.
    let references = tool_result(&mock, 3, "call_references");
    let mut found = lines(&references);
    assert_eq!(
        found.first().map(String::as_str),
        Some("3 references in 2 files:"),
        "{references}\n{ctx}"
    );
    found.remove(0);
    found.sort();
    assert_eq!(
        found,
        [
            "app.py:2:20: from models import User, total",
            "app.py:4:7: zoë = User(\"Zoë\"); print(\"é\", total)",
            "models.py:4:7: class User:",
        ],
        "{references}\n{ctx}"
    );

    // 4. The fix: the error it made is gone, and said so.
    let fixed = tool_result(&mock, 4, "call_fix");
    assert!(
        fixed.ends_with(
            "Fixed by this change (1): error [basedpyright reportAttributeAccessIssue] Cannot \
             access attribute \"nme\" for class \"User\" Attribute \"nme\" is unknown"
        ),
        "{fixed}\n{ctx}"
    );
    assert!(!fixed.contains("New diagnostics"), "{fixed}\n{ctx}");

    // 5. The rename: basedpyright's workspace edit, applied by Neovim to both buffers.
    let renamed = tool_result(&mock, 5, "call_rename");
    assert_eq!(
        renamed, "Renamed `User` to `Person`: 3 edits in 2 files (app.py, models.py).",
        "{ctx}"
    );
    let app = strings(&r["app"]["buffer"]);
    assert_eq!(
        app,
        [
            "import os; naïve: int = \"été\"",
            "from models import Person, total",
            "",
            "zoë = Person(\"Zoë\"); print(\"é\", total)",
            "print(zoë.name)",
        ],
        "app.py's buffer\n{ctx}"
    );
    let models = strings(&r["models"]["buffer"]);
    assert_eq!(
        models,
        [
            "café = \"crème\"; total = 42",
            "",
            "",
            "class Person:",
            "    def __init__(self, name: str) -> None:",
            "        self.name = name",
        ],
        "models.py's buffer\n{ctx}"
    );
}
