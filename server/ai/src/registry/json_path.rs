//! Small helpers for locating and describing problems in JSON configuration files: JSON pointers
//! (RFC 6901) for "where" and a short description of the value found for "what".

use serde_json::Value;

/// A JSON pointer to `segments` (`/providers/ollama/models/0`), with `~` and `/` escaped.
pub(crate) fn pointer(segments: &[&str]) -> String {
    segments
        .iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// What a value is, for "expected X, found Y" messages: its kind, and its value for numbers and
/// booleans.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        // Never quoted: a misplaced string may well be a key.
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_slashes_and_tildes() {
        assert_eq!(
            pointer(&["providers", "groq", "modelOverrides", "qwen/qwen3-32b"]),
            "/providers/groq/modelOverrides/qwen~1qwen3-32b"
        );
        assert_eq!(pointer(&["a~b"]), "/a~0b");
        assert_eq!(pointer(&[]), "");
    }

    #[test]
    fn descriptions_name_the_kind() {
        assert_eq!(describe(&serde_json::json!(42)), "a number (42)");
        assert_eq!(describe(&serde_json::json!("sk-secret")), "a string");
        assert_eq!(describe(&serde_json::json!([1])), "an array");
    }
}
