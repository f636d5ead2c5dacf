//! Incremental tool-argument parsing (`tandem_ai::partial_json`) on text in arbitrary pieces.
//!
//! Input: `[n][n size bytes][text]`; the text (lossy UTF-8) is fed in pieces of those sizes
//! (rounded to char boundaries). Checks: no panic; the result does not depend on the pieces;
//! when the whole text is valid JSON (as serde_json reads it) the parser neither fails nor
//! disagrees with serde_json on the final value. (Invalid JSON may still show a partial value:
//! the parser is lenient inside strings, e.g. lone surrogates, and the strict parse at the end
//! of the tool call decides.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use tandem_ai::partial_json::PartialJson;

fn feed(pieces: &[&str]) -> (Value, PartialJson) {
    let mut value = Value::Object(Map::new());
    let mut parser = PartialJson::new();
    for piece in pieces {
        parser.feed(&mut value, piece);
    }
    (value, parser)
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 8).min(rest.len());
    let (sizes, body) = rest.split_at(n);
    let text = String::from_utf8_lossy(body);
    let pieces = tandem_fuzz::str_pieces(&text, sizes);

    let (value, parser) = feed(&pieces);
    let (whole_value, whole) = feed(&[&text]);
    assert_eq!(parser.failed(), whole.failed(), "pieces changed failure");
    assert_eq!(
        parser.complete(),
        whole.complete(),
        "pieces changed completion"
    );
    assert_eq!(value, whole_value, "pieces changed the value");

    match serde_json::from_str::<Value>(&text) {
        Ok(expected) => {
            assert!(!parser.failed(), "valid JSON reported as failed: {text:?}");
            let (value, parser) = if parser.complete() {
                (value, parser)
            } else {
                // A root number or literal ends only at a terminator.
                assert!(
                    matches!(expected, Value::Number(_) | Value::Bool(_) | Value::Null),
                    "valid JSON {text:?} not complete"
                );
                let mut pieces = pieces.clone();
                pieces.push(" ");
                feed(&pieces)
            };
            assert!(parser.complete() && !parser.failed(), "{text:?}");
            assert_eq!(value, expected, "differs from serde_json on {text:?}");
        }
        Err(_) => {}
    }
});
