//! Tool-call ids rewritten for the target server when history from another model is replayed.
//!
//! Ids are opaque to the model but servers validate them: OpenAI allows `[A-Za-z0-9_-]` up to 40
//! characters, while the Responses API produces `call_id|item_id` pairs hundreds of characters
//! long. Mistral accepts exactly nine alphanumerics. The rewrite must be deterministic within one
//! request so a call and its result keep matching, and must not make two calls collide.

use crate::providers::hash::short_hash;
use std::cell::RefCell;
use std::collections::HashMap;

use crate::transform::sanitize_tool_call_id;

use super::compat::ToolIdStyle;

/// OpenAI's limit on tool-call id length.
const OPENAI_ID_MAX: usize = 40;
/// Mistral's exact tool-call id length.
const MISTRAL_ID_LEN: usize = 9;

/// Rewrites ids for one request; create one per request.
#[derive(Debug)]
pub struct IdNormalizer {
    style: ToolIdStyle,
    /// Mistral only: original id → assigned id, and the reverse, to avoid collisions.
    assigned: RefCell<HashMap<String, String>>,
    owners: RefCell<HashMap<String, String>>,
}

impl IdNormalizer {
    /// A normalizer for servers following `style`.
    pub fn new(style: ToolIdStyle) -> Self {
        IdNormalizer {
            style,
            assigned: RefCell::new(HashMap::new()),
            owners: RefCell::new(HashMap::new()),
        }
    }

    /// The id to send for the recorded `id`.
    pub fn normalize(&self, id: &str) -> String {
        match self.style {
            ToolIdStyle::OpenAi => openai_id(id),
            ToolIdStyle::Mistral => self.mistral_id(id),
        }
    }

    fn mistral_id(&self, id: &str) -> String {
        if let Some(known) = self.assigned.borrow().get(id) {
            return known.clone();
        }
        let mut owners = self.owners.borrow_mut();
        let mut attempt = 0u32;
        let candidate = loop {
            let candidate = derive_mistral_id(id, attempt);
            match owners.get(&candidate) {
                Some(owner) if owner != id => attempt += 1,
                _ => break candidate,
            }
        };
        owners.insert(candidate.clone(), id.to_string());
        self.assigned
            .borrow_mut()
            .insert(id.to_string(), candidate.clone());
        candidate
    }
}

/// The part before `|` (Responses ids), restricted to `[A-Za-z0-9_-]`, at most 40 characters.
pub fn openai_id(id: &str) -> String {
    let call_id = id.split('|').next().unwrap_or(id);
    sanitize_tool_call_id(call_id, OPENAI_ID_MAX)
}

/// An id that is already nine alphanumerics is kept; anything else becomes nine characters of a
/// hash of it (the same hash pi uses, so both produce the same ids for the same history).
fn derive_mistral_id(id: &str, attempt: u32) -> String {
    let alnum: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && alnum.len() == MISTRAL_ID_LEN {
        return alnum;
    }
    let base = if alnum.is_empty() { id } else { &alnum };
    let seed = if attempt == 0 {
        base.to_string()
    } else {
        format!("{base}:{attempt}")
    };
    let mut out: String = short_hash(&seed).chars().take(MISTRAL_ID_LEN).collect();
    // Two small hash halves can print shorter than nine digits; Mistral wants exactly nine.
    while out.len() < MISTRAL_ID_LEN {
        out.push('0');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_ids_take_the_call_part_and_fit_the_limit() {
        assert_eq!(openai_id("call_abc|fc_0123+/="), "call_abc");
        assert_eq!(openai_id("toolu_01A.b"), "toolu_01A_b");
        assert_eq!(openai_id(&"x".repeat(60)).len(), 40);
        assert_eq!(openai_id("plain_id-1"), "plain_id-1");
    }

    #[test]
    fn mistral_ids_are_nine_alphanumerics_and_stable() {
        let n = IdNormalizer::new(ToolIdStyle::Mistral);
        assert_eq!(n.normalize("abcDEF123"), "abcDEF123");
        for id in [
            "call_0_57c7c3",
            "toolu_01ABCDEFGHIJKLMNOP",
            "x",
            "|||",
            "a|b",
        ] {
            let out = n.normalize(id);
            assert_eq!(out.len(), 9, "{id} -> {out}");
            assert!(out.chars().all(|c| c.is_ascii_alphanumeric()), "{out}");
            assert_eq!(n.normalize(id), out, "stable for {id}");
        }
    }

    #[test]
    fn mistral_ids_do_not_collide() {
        let n = IdNormalizer::new(ToolIdStyle::Mistral);
        // Both reduce to the same alphanumerics, so the second gets a fresh hash.
        let a = n.normalize("call_1");
        let b = n.normalize("call-1");
        assert_ne!(a, b);
    }

    #[test]
    fn hash_matches_pi() {
        // Values computed with pi's shortHash in Node.
        assert_eq!(short_hash("call057c7c3"), "l6q6ag1ik67cj");
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("h\u{e9}llo\u{1f600}"), "1olj6nu1frhbfw");
    }
}
