//! Tool names the providers accept: `mcp__<server>__<tool>`, matching `^[a-zA-Z0-9_-]{1,64}$`
//! (OpenAI's and Anthropic's rule), unique across all MCP tools.

use std::collections::HashSet;

/// The longest tool name providers accept.
const MAX_LEN: usize = 64;

/// The names handed out so far.
#[derive(Debug, Default)]
pub(super) struct Taken {
    names: HashSet<String>,
}

impl Taken {
    /// A free name for `tool` of `server`: invalid characters become `_`, a name too long is
    /// cut, and a name already taken gets `_2`, `_3`, … (cut further to stay within 64).
    pub(super) fn claim(&mut self, server: &str, tool: &str) -> String {
        let base = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
        let mut name = cut(&base, MAX_LEN).to_string();
        let mut n = 2;
        while self.names.contains(&name) {
            let suffix = format!("_{n}");
            name = format!("{}{suffix}", cut(&base, MAX_LEN - suffix.len()));
            n += 1;
        }
        self.names.insert(name.clone());
        name
    }
}

/// Each character outside `[a-zA-Z0-9_-]` becomes `_`; an empty part becomes `_`.
fn sanitize(part: &str) -> String {
    let cleaned: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".to_string()
    } else {
        cleaned
    }
}

/// The first `max` bytes (the text is ASCII after [`sanitize`]).
fn cut(text: &str, max: usize) -> &str {
    &text[..text.len().min(max)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_LEN).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn names_are_prefixed_sanitized_cut_and_unique() {
        let mut taken = Taken::default();
        assert_eq!(taken.claim("fixture", "add"), "mcp__fixture__add");
        assert_eq!(
            taken.claim("my server", "read.file/v2"),
            "mcp__my_server__read_file_v2"
        );
        assert_eq!(taken.claim("é", ""), "mcp______");
        // Two servers whose names differ only in characters that get replaced.
        assert_eq!(taken.claim("a.b", "t"), "mcp__a_b__t");
        assert_eq!(taken.claim("a b", "t"), "mcp__a_b__t_2");
        assert_eq!(taken.claim("a/b", "t"), "mcp__a_b__t_3");

        let long = "x".repeat(100);
        let first = taken.claim("server", &long);
        let second = taken.claim("server", &long);
        assert_eq!(first.len(), 64);
        assert_eq!(second.len(), 64);
        assert!(second.ends_with("_2"));
        assert_ne!(first, second);
        for name in taken.names.iter() {
            assert!(valid(name), "{name}");
        }
    }
}
