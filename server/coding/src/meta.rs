//! What a front end shows for a tool call before and while it runs: a human title, a kind, and
//! the file locations it touches (ACP's tool-call fields; the LSP extension uses the same).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::paths;
use crate::tools::args::{LanguageArgs, ToolArgs};

/// The kind of a tool call (ACP's set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// Reads files.
    Read,
    /// Changes files.
    Edit,
    /// Deletes files.
    Delete,
    /// Moves files.
    Move,
    /// Searches.
    Search,
    /// Runs commands.
    Execute,
    /// Thinks.
    Think,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    Other,
}

/// A file a call touches, with a 1-based line when known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolLocation {
    /// Absolute path.
    pub path: PathBuf,
    /// 1-based line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// How a call is presented.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCallInfo {
    /// E.g. "Edit src/main.rs".
    pub title: String,
    /// Its kind.
    pub kind: ToolKind,
    /// Files it touches.
    pub locations: Vec<ToolLocation>,
}

/// Shortens `text` to `max` characters with an ellipsis.
fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

/// Describes a call of `tool` with `args`, read as the tool reads them ([`ToolArgs`]); arguments
/// that do not fit (still streaming, or wrong) give the tool's generic title.
pub fn describe_tool_call(tool: &str, args: &Value, cwd: &Path) -> ToolCallInfo {
    let parsed = ToolArgs::parse(tool, args).and_then(Result::ok);
    // Tools that are not built in (an MCP server's) may still name a file.
    let path_arg = match &parsed {
        Some(parsed) => parsed.path(),
        None => args.get("path").and_then(Value::as_str),
    }
    .filter(|p| !p.is_empty());
    let location = |line: Option<u64>| {
        path_arg
            .map(|p| {
                vec![ToolLocation {
                    path: paths::normalize(&cwd.join(paths::expand(p))),
                    line,
                }]
            })
            .unwrap_or_default()
    };
    let shown = |default: &str| {
        path_arg
            .map(|p| {
                let abs = paths::normalize(&cwd.join(paths::expand(p)));
                paths::display(&abs, cwd)
            })
            .unwrap_or_else(|| default.to_string())
    };
    let info = |title: String, kind: ToolKind, locations: Vec<ToolLocation>| ToolCallInfo {
        title,
        kind,
        locations,
    };
    match (tool, &parsed) {
        (_, Some(ToolArgs::Read(a))) => {
            let (offset, limit) = (a.offset.map(|o| o as u64), a.limit.map(|l| l as u64));
            let range = match (offset, limit) {
                (Some(o), Some(l)) => format!(" (lines {o}-{})", o + l.saturating_sub(1)),
                (Some(o), None) => format!(" (from line {o})"),
                (None, Some(l)) => format!(" (first {l} lines)"),
                (None, None) => String::new(),
            };
            info(
                format!("Read {}{range}", shown("file")),
                ToolKind::Read,
                location(offset.or(Some(1))),
            )
        }
        (_, Some(ToolArgs::Write(_))) | ("write", None) => info(
            format!("Write {}", shown("file")),
            ToolKind::Edit,
            location(None),
        ),
        (_, Some(ToolArgs::Edit(_))) | ("edit", None) => info(
            format!("Edit {}", shown("file")),
            ToolKind::Edit,
            location(None),
        ),
        (_, Some(ToolArgs::Bash(a))) => info(
            format!("Run `{}`", short(&a.command, 80)),
            ToolKind::Execute,
            Vec::new(),
        ),
        ("bash", None) => info("Run a command".into(), ToolKind::Execute, Vec::new()),
        (_, Some(ToolArgs::Grep(a))) => info(
            format!("Search for `{}` in {}", short(&a.pattern, 60), shown(".")),
            ToolKind::Search,
            location(None),
        ),
        ("grep", None) => info("Search".into(), ToolKind::Search, location(None)),
        (_, Some(ToolArgs::Find(a))) => info(
            format!("Find `{}` in {}", short(&a.pattern, 60), shown(".")),
            ToolKind::Search,
            location(None),
        ),
        ("find", None) => info("Find files".into(), ToolKind::Search, location(None)),
        (_, Some(ToolArgs::Ls(_))) | ("ls", None) => info(
            format!("List {}", shown(".")),
            ToolKind::Read,
            location(None),
        ),
        (_, Some(ToolArgs::Language(LanguageArgs::At(a)))) => {
            let at = format!("{}:{}:{}", shown("file"), a.line, a.column);
            let (title, kind) = match tool {
                "definition" => (format!("Definition at {at}"), ToolKind::Search),
                "references" => (format!("References at {at}"), ToolKind::Search),
                "rename" => (
                    format!(
                        "Rename at {at} to `{}`",
                        short(a.new_name.as_deref().unwrap_or_default(), 60)
                    ),
                    ToolKind::Edit,
                ),
                _ => (format!("Hover at {at}"), ToolKind::Read),
            };
            info(title, kind, location(Some(a.line.max(1.0) as u64)))
        }
        (_, Some(ToolArgs::Language(LanguageArgs::Symbols(a)))) => {
            let title = match (&a.query, path_arg) {
                (Some(q), None) => format!("Symbols matching `{}`", short(q, 60)),
                (Some(q), Some(_)) => {
                    format!("Symbols matching `{}` in {}", short(q, 60), shown("."))
                }
                (None, _) => format!("Symbols in {}", shown("the workspace")),
            };
            info(title, ToolKind::Search, location(None))
        }
        (_, Some(ToolArgs::Language(LanguageArgs::Diagnostics(_)))) => info(
            format!("Diagnostics of {}", shown("the workspace")),
            ToolKind::Read,
            location(None),
        ),
        ("rename", None) => info("Rename".into(), ToolKind::Edit, location(None)),
        ("read", None) => info("Read file".into(), ToolKind::Read, location(Some(1))),
        (other, None) => info(other.to_string(), ToolKind::Other, location(None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn titles_kinds_and_locations() {
        let cwd = Path::new("/p");
        let i = describe_tool_call("edit", &json!({"path": "src/main.rs"}), cwd);
        assert_eq!(i.title, "Edit src/main.rs");
        assert_eq!(i.kind, ToolKind::Edit);
        assert_eq!(i.locations[0].path, PathBuf::from("/p/src/main.rs"));
        let i = describe_tool_call(
            "read",
            &json!({"path": "a.txt", "offset": 10, "limit": 5}),
            cwd,
        );
        assert_eq!(i.title, "Read a.txt (lines 10-14)");
        assert_eq!(i.locations[0].line, Some(10));
        let i = describe_tool_call("bash", &json!({"command": "cargo test\necho done"}), cwd);
        assert_eq!(i.title, "Run `cargo test…`");
        assert_eq!(i.kind, ToolKind::Execute);
        assert_eq!(
            describe_tool_call("grep", &json!({"pattern": "fn main"}), cwd).title,
            "Search for `fn main` in ."
        );
        assert_eq!(describe_tool_call("ls", &json!({}), cwd).title, "List .");
        assert_eq!(
            describe_tool_call("mcp_x", &json!({}), cwd).kind,
            ToolKind::Other
        );
        // Arguments that do not fit (still streaming) give the generic title.
        assert_eq!(
            describe_tool_call("edit", &Value::Null, cwd).title,
            "Edit file"
        );
        assert_eq!(
            describe_tool_call("bash", &json!({"timeout": 3}), cwd).title,
            "Run a command"
        );
    }
}
