//! The unified diff an edit or write call proposes, for `tool_end.diff`.
//!
//! It is built from the call's own arguments, so it exists whether or not the editor applied
//! the change: each `{oldText, newText}` of an edit becomes a hunk, a write shows its whole new
//! content. Hunks carry no line numbers (the arguments do not say where the text sits); the
//! applied result's `details.diff` (pi's numbered format) has them.

use std::path::Path;

use serde_json::Value;
use similar::TextDiff;

/// `a/<path>` / `b/<path>` headers with the path relative to `cwd`.
fn headers(path: &str, cwd: &Path) -> (String, String) {
    let shown = tandem_coding::paths::display(
        &tandem_coding::paths::normalize(&cwd.join(tandem_coding::paths::expand(path))),
        cwd,
    );
    (format!("a/{shown}"), format!("b/{shown}"))
}

/// The unified diff of an `edit` or `write` call's arguments; `None` for other tools or
/// arguments without a path.
pub fn proposed(tool: &str, args: &Value, cwd: &Path) -> Option<String> {
    let path = args.get("path")?.as_str()?;
    let (old_name, new_name) = headers(path, cwd);
    match tool {
        "edit" => {
            let mut out = format!("--- {old_name}\n+++ {new_name}\n");
            for edit in args.get("edits")?.as_array()? {
                let old = edit.get("oldText").and_then(Value::as_str).unwrap_or("");
                let new = edit.get("newText").and_then(Value::as_str).unwrap_or("");
                let diff = TextDiff::from_lines(old, new);
                let body = diff.unified_diff().context_radius(3).to_string();
                // `similar` numbers hunks from line 1 of the snippet; keep its lines.
                out.push_str(&body);
                if !body.ends_with('\n') {
                    out.push('\n');
                }
            }
            Some(out)
        }
        "write" => {
            let content = args.get("content").and_then(Value::as_str).unwrap_or("");
            let diff = TextDiff::from_lines("", content);
            Some(diff.unified_diff().header(&old_name, &new_name).to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_becomes_a_unified_diff_of_its_replacements() {
        let diff = proposed(
            "edit",
            &json!({"path": "src/a.rs", "edits": [{"oldText": "one\ntwo", "newText": "one\n2"}]}),
            Path::new("/p"),
        )
        .expect("diff");
        assert!(
            diff.starts_with("--- a/src/a.rs\n+++ b/src/a.rs\n"),
            "{diff}"
        );
        assert!(diff.contains("-two"), "{diff}");
        assert!(diff.contains("+2"), "{diff}");
        assert!(diff.contains(" one"), "{diff}");
    }

    #[test]
    fn a_write_shows_its_content_and_other_tools_have_none() {
        let diff = proposed(
            "write",
            &json!({"path": "n.txt", "content": "x\ny\n"}),
            Path::new("/p"),
        )
        .expect("diff");
        assert!(
            diff.contains("+++ b/n.txt") && diff.contains("+x\n+y\n"),
            "{diff}"
        );
        assert_eq!(
            proposed("read", &json!({"path": "n.txt"}), Path::new("/p")),
            None
        );
    }
}
