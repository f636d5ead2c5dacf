//! JSON as people write it in configuration files: `//` and `/* */` comments and trailing
//! commas, which pi accepts in models.json and which editors add to every `.json` they format as
//! JSONC.
//!
//! [`to_json`] blanks those out (comments and the stray commas become spaces, newlines stay), so
//! the result is plain JSON with every other byte, line and column where it was: serde_json's
//! error positions still point into the file the user wrote. Nothing else is relaxed — no
//! single quotes, no unquoted keys — so a file that is still broken gets serde_json's error.
//! Written by hand because the crates that parse JSONC produce their own value types and
//! positions; this keeps one parser (serde_json) for every configuration file.

/// Comments and trailing commas in `text` replaced by spaces (newlines kept), and a leading
/// byte-order mark dropped. Text inside strings is never touched; an unterminated comment or
/// string is left for the JSON parser to report.
pub fn to_json(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    // Where the last comma outside strings and comments is, while only blanks followed it.
    let mut pending_comma: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                pending_comma = None;
                i = skip_string(bytes, i);
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let Some(close) = find(bytes, i + 2, b"*/") else {
                    // Unterminated: leave it, so serde_json reports it where it starts.
                    return into_string(out, text);
                };
                blank(&mut out, i, close + 2);
                i = close + 2;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(comma) = pending_comma.take() {
                    out[comma] = b' ';
                }
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
    }
    into_string(out, text)
}

/// The index just past the string starting at `start` (a `"`), or the end of the text.
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|n| from + n)
}

/// Spaces over `range`, keeping line breaks so lines and columns stay where they were.
fn blank(out: &mut [u8], start: usize, end: usize) {
    for b in &mut out[start..end] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

fn into_string(out: Vec<u8>, original: &str) -> String {
    // Only ASCII bytes outside strings were replaced by ASCII spaces, and a comment is blanked
    // whole, so the bytes stay valid UTF-8; fall back to the original if that ever breaks.
    String::from_utf8(out).unwrap_or_else(|_| original.to_string())
}

/// Parses `text` as JSON with comments and trailing commas allowed.
pub fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    serde_json::from_str(&to_json(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn parse(text: &str) -> Value {
        from_str(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn comments_and_trailing_commas_are_accepted() {
        let text = r#"{
            // a line comment
            "providers": { /* a block
               comment */ "ollama": { "apiKey": "ollama", }, },
            "list": [1, 2, 3,],
        }"#;
        assert_eq!(
            parse(text),
            json!({"providers": {"ollama": {"apiKey": "ollama"}}, "list": [1, 2, 3]})
        );
    }

    #[test]
    fn strings_are_never_touched() {
        let text = r#"{"url": "http://x//y", "s": "a /* b */ c", "q": "\",}", "t": ",]"}"#;
        assert_eq!(
            parse(text),
            json!({"url": "http://x//y", "s": "a /* b */ c", "q": "\",}", "t": ",]"})
        );
    }

    #[test]
    fn errors_keep_the_files_lines_and_columns() {
        let text = "{\n  // comment\n  \"a\": 1,\n  \"b\": nope\n}";
        let err = from_str::<Value>(text).unwrap_err();
        assert_eq!((err.line(), err.column()), (4, 9), "{err}");
        assert_eq!(to_json(text).len(), text.len());
    }

    #[test]
    fn what_json_forbids_otherwise_stays_an_error() {
        for bad in ["{'a': 1}", "{a: 1}", "[1,,]", "{\"a\": 1 /* open"] {
            assert!(from_str::<Value>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_comma_followed_by_a_comment_then_a_bracket_is_trailing() {
        assert_eq!(parse("[1, // last\n]"), json!([1]));
        assert_eq!(parse("{\"a\": [\"x\",/*c*/],}"), json!({"a": ["x"]}));
    }

    #[test]
    fn a_byte_order_mark_is_dropped() {
        assert_eq!(parse("\u{feff}{\"a\": 1}"), json!({"a": 1}));
    }

    #[test]
    fn multibyte_text_survives() {
        assert_eq!(parse("{\"é\": \"ü\", // ß\n}"), json!({"é": "ü"}));
    }
}
