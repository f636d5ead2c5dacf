//! Google Generative AI: `GenerateContentResponse` chunks, each with a candidate's new parts and
//! the usage so far; function calls arrive whole (with an `id`, which Gemini may send and Tandem
//! keeps) and the last chunk carries `finishReason`.

use serde_json::{json, Value};

use super::{event, pieces, Finish, Turn, MODEL};

/// The body for `t`.
pub(super) fn encode(t: &Turn) -> String {
    let mut out = String::new();
    let u = t.usage;
    let mut parts: Vec<Vec<Value>> = t
        .text_part()
        .map(|text| {
            pieces(text, 12)
                .into_iter()
                .map(|p| vec![json!({"text": p})])
                .collect()
        })
        .unwrap_or_default();
    let calls: Vec<Value> = t
        .tool_calls
        .iter()
        .map(|c| json!({"functionCall": {"id": c.id, "name": c.name, "args": c.args}}))
        .collect();
    match parts.last_mut() {
        Some(last) => last.extend(calls),
        None => parts.push(calls),
    }
    let finish = match t.effective_finish() {
        Finish::Stop | Finish::ToolUse => "STOP",
        Finish::Length => "MAX_TOKENS",
    };
    let chunks = parts.len();
    for (n, chunk_parts) in parts.into_iter().enumerate() {
        // Every chunk reports usage so far; the last one counts.
        let output = u.output * (n as u64 + 1) / chunks as u64;
        let mut candidate = json!({"content": {"parts": chunk_parts, "role": "model"}, "index": 0});
        if n + 1 == chunks {
            candidate["finishReason"] = json!(finish);
        }
        let mut usage = json!({"promptTokenCount": u.input + u.cache_read,
            "candidatesTokenCount": output, "totalTokenCount": u.input + u.cache_read + output});
        if u.cache_read > 0 {
            usage["cachedContentTokenCount"] = json!(u.cache_read);
        }
        event(
            &mut out,
            None,
            &json!({"candidates": [candidate], "usageMetadata": usage,
            "modelVersion": MODEL, "responseId": t.tag()}),
        );
    }
    out
}
