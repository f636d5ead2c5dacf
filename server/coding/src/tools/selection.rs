//! Which built-in tools a session starts with: a front door's default set changed by lists in
//! pi 1.6's `defaultTools` form (the global settings', the project's, then `--tools`).
//!
//! A list holding a plain name (or nothing at all) replaces the selection with its plain names;
//! then its `+name` and `-name` entries add and remove, in order. A list of only `+name` /
//! `-name` entries changes the selection it inherits.

use super::{ALL_TOOLS, LANGUAGE_TOOLS};

/// A `defaultTools` / `--tools` entry whose tool Tandem does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTool(pub String);

impl std::fmt::Display for UnknownTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Unknown tool \"{}\". Valid tools: {}, {}",
            self.0,
            ALL_TOOLS.join(", "),
            LANGUAGE_TOOLS.join(", ")
        )
    }
}

/// The name an entry is about, without its `+` / `-`.
pub fn entry_name(entry: &str) -> &str {
    entry
        .strip_prefix('+')
        .or_else(|| entry.strip_prefix('-'))
        .unwrap_or(entry)
        .trim()
}

/// True when Tandem has a tool of this name (built-in or language tool).
pub fn is_tool(name: &str) -> bool {
    ALL_TOOLS.contains(&name) || LANGUAGE_TOOLS.contains(&name)
}

/// `base` changed by each list in turn. Entries naming no tool of Tandem's are left out and
/// returned, once each, for the user to hear about.
pub fn select_tools(base: &[&str], lists: &[&[String]]) -> (Vec<String>, Vec<UnknownTool>) {
    let mut selection: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    let mut unknown: Vec<UnknownTool> = Vec::new();
    for list in lists {
        let signed = |e: &String| e.starts_with('+') || e.starts_with('-');
        let (changes, plain): (Vec<&String>, Vec<&String>) = list.iter().partition(|e| signed(e));
        if list.is_empty() || !plain.is_empty() {
            selection.clear();
        }
        // The plain names first, then the changes in order.
        for entry in plain.into_iter().chain(changes) {
            let name = entry_name(entry);
            if !is_tool(name) {
                if !unknown.iter().any(|u| u.0 == name) {
                    unknown.push(UnknownTool(name.to_string()));
                }
                continue;
            }
            if entry.starts_with('-') {
                selection.retain(|n| n != name);
            } else if !selection.iter().any(|n| n == name) {
                selection.push(name.to_string());
            }
        }
    }
    (selection, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|s| s.to_string()).collect()
    }

    fn select(lists: &[Vec<String>]) -> Vec<String> {
        let refs: Vec<&[String]> = lists.iter().map(Vec::as_slice).collect();
        let (chosen, unknown) = select_tools(&["read", "bash", "edit", "write"], &refs);
        assert!(unknown.is_empty(), "{unknown:?}");
        chosen
    }

    #[test]
    fn plain_names_replace_and_signs_change_in_order() {
        assert_eq!(select(&[]), ["read", "bash", "edit", "write"]);
        assert_eq!(
            select(&[list(&["+grep"])]),
            ["read", "bash", "edit", "write", "grep"]
        );
        assert_eq!(
            select(&[list(&["-bash", "+grep", "+find"])]),
            ["read", "edit", "write", "grep", "find"]
        );
        // A plain name replaces; its list's signs then apply.
        assert_eq!(select(&[list(&["ls", "+read", "-ls"])]), ["read"]);
        assert_eq!(select(&[list(&["+read", "ls"])]), ["ls", "read"]);
        // An empty list turns every built-in tool off.
        assert_eq!(select(&[list(&[])]), Vec::<String>::new());
        // The project's signs change the user's list; its plain list replaces it.
        let user = list(&["read", "grep"]);
        assert_eq!(
            select(&[user.clone(), list(&["+ls"])]),
            ["read", "grep", "ls"]
        );
        assert_eq!(select(&[user.clone(), list(&["bash"])]), ["bash"]);
        // `--tools +x` changes what the settings chose.
        assert_eq!(
            select(&[user, list(&["-grep"]), list(&["+write"])]),
            ["read", "write"]
        );
        // Adding twice keeps one; removing what is not there is nothing.
        assert_eq!(
            select(&[list(&["+read", "-grep"])]),
            ["read", "bash", "edit", "write"]
        );
    }

    #[test]
    fn unknown_names_are_left_out_and_named_once() {
        let (chosen, unknown) = select_tools(
            &["read"],
            &[&list(&["+codemode", "read", "-codemode", "powershell"])],
        );
        assert_eq!(chosen, ["read"]);
        // Plain names are read first, then the changes.
        assert_eq!(
            unknown,
            [
                UnknownTool("powershell".into()),
                UnknownTool("codemode".into())
            ]
        );
        assert!(unknown[1]
            .to_string()
            .starts_with("Unknown tool \"codemode\". Valid tools: read,"));
    }
}
