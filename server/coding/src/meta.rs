//! What a front end shows for a tool call before and while it runs: a human title, a kind, and
//! the file locations it touches (ACP's tool-call fields; the LSP extension uses the same).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::paths;

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

fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
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

/// Describes a call of `tool` with `args` (which may be partial while they stream).
pub fn describe_tool_call(tool: &str, args: &Value, cwd: &Path) -> ToolCallInfo {
    let path_arg = str_arg(args, "path");
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
    match tool {
        "read" => {
            let offset = args.get("offset").and_then(Value::as_u64);
            let limit = args.get("limit").and_then(Value::as_u64);
            let range = match (offset, limit) {
                (Some(o), Some(l)) => format!(" (lines {o}-{})", o + l.saturating_sub(1)),
                (Some(o), None) => format!(" (from line {o})"),
                (None, Some(l)) => format!(" (first {l} lines)"),
                (None, None) => String::new(),
            };
            ToolCallInfo {
                title: format!("Read {}{range}", shown("file")),
                kind: ToolKind::Read,
                locations: location(offset.or(Some(1))),
            }
        }
        "write" => ToolCallInfo {
            title: format!("Write {}", shown("file")),
            kind: ToolKind::Edit,
            locations: location(None),
        },
        "edit" => ToolCallInfo {
            title: format!("Edit {}", shown("file")),
            kind: ToolKind::Edit,
            locations: location(None),
        },
        "bash" => ToolCallInfo {
            title: match str_arg(args, "command") {
                Some(c) => format!("Run `{}`", short(c, 80)),
                None => "Run a command".to_string(),
            },
            kind: ToolKind::Execute,
            locations: Vec::new(),
        },
        "grep" => ToolCallInfo {
            title: match str_arg(args, "pattern") {
                Some(p) => format!("Search for `{}` in {}", short(p, 60), shown(".")),
                None => "Search".to_string(),
            },
            kind: ToolKind::Search,
            locations: location(None),
        },
        "find" => ToolCallInfo {
            title: match str_arg(args, "pattern") {
                Some(p) => format!("Find `{}` in {}", short(p, 60), shown(".")),
                None => "Find files".to_string(),
            },
            kind: ToolKind::Search,
            locations: location(None),
        },
        "ls" => ToolCallInfo {
            title: format!("List {}", shown(".")),
            kind: ToolKind::Read,
            locations: location(None),
        },
        other => ToolCallInfo {
            title: other.to_string(),
            kind: ToolKind::Other,
            locations: location(None),
        },
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
    }
}
