//! OpenAI Responses API (`POST {baseUrl}/responses` with `stream: true`).
//!
//! [`request`] turns the conversation into Responses input items (messages, reasoning items,
//! function calls and their outputs) and picks the body fields; [`decode`](self::decode) folds
//! the typed `response.*` events back into the [`StreamWriter`](crate::stream::StreamWriter).
//!
//! Both halves share one piece of state that outlives a call: the identity of output items.
//! The API wants a replayed assistant turn to carry the ids it produced (`msg_…`, `rs_…`,
//! `fc_…`), and reasoning must come back as the exact item, encrypted content included, or the
//! model loses its chain of thought. Tandem's message types have no room for that, so it rides in
//! the signatures as pi stores it:
//! - a tool call's id is `call_id|item_id`;
//! - a text block's `textSignature` is `{"v":1,"id":…,"phase":…}` (or, from older sessions, the
//!   bare message id);
//! - a thinking block's `thinkingSignature` is the whole reasoning item as JSON.
//!
//! The helpers below encode and decode those forms for both halves.

mod decode;
mod request;

use crate::providers::hash::short_hash;
use serde::Serialize;
use serde_json::Value;

use crate::model::Model;

pub use decode::decode;
pub use request::build_request;

/// Providers whose tool-call ids are Responses `call_id|item_id` pairs that need normalizing
/// when replayed from another model (pi's list).
const PAIRED_ID_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];

/// The longest call id or item id the API accepts.
const MAX_ID_LEN: usize = 64;

/// A text block's signature: the output message's id and, on models that label their
/// messages, its phase (`commentary` or `final_answer`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct TextSignature {
    /// Format version; always 1.
    v: u8,
    /// The `msg_…` item id.
    id: String,
    /// The message phase, when the model sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<String>,
}

impl TextSignature {
    /// The signature for a finished output message.
    fn new(id: &str, phase: Option<&str>) -> Self {
        TextSignature {
            v: 1,
            id: id.to_string(),
            phase: phase.map(str::to_string),
        }
    }

    /// The JSON string stored in `textSignature`.
    fn encode(&self) -> String {
        // A struct of strings always serializes; the fallback only keeps this total.
        serde_json::to_string(self).unwrap_or_else(|_| self.id.clone())
    }

    /// Reads a stored signature: the versioned JSON form, or a legacy bare id. Only the two
    /// phases the API defines are kept. An empty signature means none.
    fn parse(signature: Option<&str>) -> Option<TextSignature> {
        let signature = signature.filter(|s| !s.is_empty())?;
        if signature.starts_with('{') {
            if let Ok(value) = serde_json::from_str::<Value>(signature) {
                let id = value.get("id").and_then(Value::as_str);
                if let (Some(1), Some(id)) = (value.get("v").and_then(Value::as_u64), id) {
                    let phase = value
                        .get("phase")
                        .and_then(Value::as_str)
                        .filter(|p| matches!(*p, "commentary" | "final_answer"));
                    return Some(TextSignature::new(id, phase));
                }
            }
        }
        Some(TextSignature::new(signature, None))
    }
}

/// Rewrites a `call_id|item_id` tool-call id recorded by another model so the API accepts it:
/// both halves restricted to `[A-Za-z0-9_-]`, the item id prefixed `fc_` unless it starts with
/// `fc`, each cut to 64 characters without trailing underscores. Ids without `|`, and every id
/// for providers outside [`PAIRED_ID_PROVIDERS`], pass unchanged.
fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    if !PAIRED_ID_PROVIDERS.contains(&model.provider.as_str()) || !id.contains('|') {
        return id.to_string();
    }
    let mut parts = id.split('|');
    let call_id = sanitize_id(parts.next().unwrap_or(""));
    let mut item_id = sanitize_id(parts.next().unwrap_or(""));
    if !item_id.starts_with("fc") {
        item_id = format!("fc_{item_id}");
    }
    format!("{}|{}", cut_id(&call_id), cut_id(&item_id))
}

/// Replaces every character outside `[A-Za-z0-9_-]` with `_`, one per UTF-16 unit as pi's
/// JavaScript does, so the two produce the same ids.
fn sanitize_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    out
}

/// Cuts a sanitized (ASCII) id to [`MAX_ID_LEN`] and drops trailing underscores, which some
/// OpenAI endpoints reject.
fn cut_id(id: &str) -> String {
    let cut = &id[..id.len().min(MAX_ID_LEN)];
    cut.trim_end_matches('_').to_string()
}

/// The number of UTF-16 units in `text`: the length JavaScript reports, which is what the API's
/// 64-character limit on ids was checked against in pi.
fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

#[cfg(test)]
mod test_support {
    use crate::model::{Api, InputKind, Model, ModelCost};

    /// An OpenAI reasoning model as the built-in catalogue describes it (display name `GPT-5`
    /// for `gpt-5`).
    pub(super) fn model(id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.replacen("gpt", "GPT", 1),
            api: Api::OpenAiResponses,
            provider: "openai".into(),
            base_url: "https://api.openai.com/v1".into(),
            reasoning: true,
            input: vec![InputKind::Text, InputKind::Image],
            cost: ModelCost {
                input: 1.25,
                output: 10.0,
                cache_read: 0.125,
                cache_write: 0.0,
            },
            context_window: 400_000,
            max_tokens: 128_000,
            headers: None,
            compat: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::model;
    use super::*;

    #[test]
    fn text_signatures_round_trip_and_accept_legacy_ids() {
        let sig = TextSignature::new("msg_1", Some("final_answer")).encode();
        assert_eq!(sig, r#"{"v":1,"id":"msg_1","phase":"final_answer"}"#);
        assert_eq!(
            TextSignature::parse(Some(&sig)),
            Some(TextSignature::new("msg_1", Some("final_answer")))
        );
        assert_eq!(
            TextSignature::new("msg_2", None).encode(),
            r#"{"v":1,"id":"msg_2"}"#
        );
        assert_eq!(
            TextSignature::parse(Some("msg_legacy")),
            Some(TextSignature::new("msg_legacy", None))
        );
        // An unknown phase is dropped; a JSON object of another shape is a legacy id.
        assert_eq!(
            TextSignature::parse(Some(r#"{"v":1,"id":"m","phase":"other"}"#)),
            Some(TextSignature::new("m", None))
        );
        assert_eq!(
            TextSignature::parse(Some(r#"{"id":"m"}"#)),
            Some(TextSignature::new(r#"{"id":"m"}"#, None))
        );
        assert_eq!(TextSignature::parse(Some("")), None);
        assert_eq!(TextSignature::parse(None), None);
    }

    #[test]
    fn paired_ids_from_other_models_are_normalized() {
        let openai = model("gpt-5");
        assert_eq!(
            normalize_tool_call_id(&openai, "call_a.b|item+1"),
            "call_a_b|fc_item_1"
        );
        assert_eq!(
            normalize_tool_call_id(&openai, "call_1|fc_9"),
            "call_1|fc_9"
        );
        assert_eq!(normalize_tool_call_id(&openai, "toolu_01"), "toolu_01");
        let long = format!("call_{}|fc_{}.", "x".repeat(80), "y".repeat(59));
        let normalized = normalize_tool_call_id(&openai, &long);
        let (call, item) = normalized.split_once('|').expect("pair");
        assert_eq!(call.len(), 64);
        // The 64-character cut leaves `fc_` + 59 `y` + `_`, and the trailing `_` goes.
        assert_eq!(item, format!("fc_{}", "y".repeat(59)));
        // Emoji are two UTF-16 units, so two underscores, as in pi.
        assert_eq!(normalize_tool_call_id(&openai, "a🦀b|fc"), "a__b|fc");

        let mut other = model("gpt-5");
        other.provider = "azure".into();
        assert_eq!(normalize_tool_call_id(&other, "a.b|c"), "a.b|c");
    }

    #[test]
    fn short_hash_matches_pi() {
        // Values computed with pi's shortHash in Node.
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("msg_abc"), "6piae0s8vela");
        assert_eq!(
            short_hash(&format!("msg_{}", "z".repeat(70))),
            "1ogi8jrelwokn"
        );
        assert_eq!(short_hash("é🦀"), "ptmvnd1m37f8j");
    }
}
