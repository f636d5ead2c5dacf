//! Tool names as pi 1.6 gives them: `mcp__<server>__<tool>`, every character other than ASCII
//! letters, digits and `_` replaced by `_` (so `-` too: the name is also an identifier). A name
//! longer than 64 characters (the providers' limit), or one that another tool also sanitizes
//! to, gets a hash suffix: the first 55 characters, `_`, and 8 hex digits of SHA-256 over
//! `<server>\0<tool>`. Within one server, all tools whose names collide get the suffix, so which
//! keeps the plain name never depends on the order of the server's list.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

/// The longest tool name providers accept.
const MAX_LEN: usize = 64;
/// Hex digits of the hash suffix.
const HASH_LEN: usize = 8;

/// The names handed out so far, each with its owner (`<server>\0<tool>`).
#[derive(Debug, Default)]
pub(super) struct Taken {
    owners: HashMap<String, String>,
}

impl Taken {
    /// Names for the tools of one server, in the order given.
    pub(super) fn claim_server(&mut self, server: &str, tools: &[&str]) -> Vec<String> {
        let plain: Vec<String> = tools.iter().map(|tool| plain_name(server, tool)).collect();
        let mut names = Vec::with_capacity(tools.len());
        for (tool, candidate) in tools.iter().zip(&plain) {
            let owner = format!("{server}\0{tool}");
            let collides_here = plain.iter().filter(|p| *p == candidate).count() > 1;
            let taken_elsewhere = self
                .owners
                .get(candidate)
                .is_some_and(|other| *other != owner);
            let name = if candidate.len() <= MAX_LEN && !collides_here && !taken_elsewhere {
                candidate.clone()
            } else {
                hashed(candidate, server, tool)
            };
            self.owners.insert(name.clone(), owner);
            names.push(name);
        }
        names
    }
}

fn plain_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn hashed(plain: &str, server: &str, tool: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0u8]);
    hasher.update(tool.as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    // The plain name is ASCII, so any byte index is a character boundary.
    let keep = plain.len().min(MAX_LEN - HASH_LEN - 1);
    format!("{}_{}", &plain[..keep], &hex[..HASH_LEN])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_LEN).contains(&name.len())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }

    #[test]
    fn names_are_prefixed_and_sanitized_like_pi() {
        let mut taken = Taken::default();
        assert_eq!(
            taken.claim_server("fixture", &["add"]),
            ["mcp__fixture__add"]
        );
        assert_eq!(
            taken.claim_server("my-server", &["read.file/v2", "é"]),
            ["mcp__my_server__read_file_v2", "mcp__my_server___"]
        );
    }

    #[test]
    fn colliding_tools_of_one_server_all_get_the_hash_suffix() {
        let mut taken = Taken::default();
        let names = taken.claim_server("s", &["a-b", "a_b", "c"]);
        // The suffixes are what pi 1.6 computes (node's crypto over "s\0a-b" and "s\0a_b").
        assert_eq!(names[0], "mcp__s__a_b_ed3867d6");
        assert_eq!(names[1], "mcp__s__a_b_8d47d403");
        assert_eq!(names[2], "mcp__s__c");
    }

    #[test]
    fn a_name_taken_by_another_server_gets_the_hash_and_long_names_are_cut() {
        let mut taken = Taken::default();
        assert_eq!(taken.claim_server("a", &["b__c"]), ["mcp__a__b__c"]);
        // `a__b` + `c` sanitizes to the same name as `a` + `b__c`.
        let second = taken.claim_server("a__b", &["c"]);
        assert_eq!(second, ["mcp__a__b__c_a92700ce"]);

        let long = "x".repeat(100);
        let names = taken.claim_server("server", &[long.as_str()]);
        assert_eq!(names[0].len(), 64);
        assert!(names[0].starts_with("mcp__server__xxx"));
        assert_eq!(&names[0][55..56], "_");
        for name in taken.owners.keys() {
            assert!(valid(name), "{name}");
        }
    }
}
