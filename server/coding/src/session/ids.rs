//! Identifiers: session ids (UUID v7, as pi 0.73 writes them) and entry ids (8 hex digits).
//!
//! An entry id is the first 8 hex digits of a random UUID, retried until it is unused in the
//! file. pi does the same, and falls back to a whole UUID after 100 collisions; so does Tandem,
//! so a full-UUID id in a file is legal too.

use uuid::Uuid;

/// A new session id: a time-ordered UUID (v7), lowercase and hyphenated.
pub fn new_session_id() -> String {
    Uuid::now_v7().to_string()
}

/// A new entry id for which `taken` is false: 8 lowercase hex digits (a full UUID in the
/// astronomically unlikely case of 100 collisions in a row).
pub fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let uuid = Uuid::new_v4();
        let mut buf = Uuid::encode_buffer();
        let id = &uuid.simple().encode_lower(&mut buf)[..8];
        if !taken(id) {
            return id.to_string();
        }
    }
    Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn entry_ids_are_eight_hex_and_avoid_taken_ones() {
        let mut seen = HashSet::new();
        for _ in 0..1000 {
            let id = new_entry_id(|id| seen.contains(id));
            assert_eq!(id.len(), 8);
            assert!(id
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            assert!(seen.insert(id));
        }
    }

    #[test]
    fn everything_taken_falls_back_to_a_uuid() {
        assert_eq!(new_entry_id(|_| true).len(), 36);
    }

    #[test]
    fn session_ids_are_v7() {
        let id = new_session_id();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "7");
    }
}
