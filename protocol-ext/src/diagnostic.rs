//! The part of an LSP `Diagnostic` Tandem reads.
//!
//! A language server does not see the diagnostics other servers publish to the editor, so a
//! prompt that wants them in its context carries them (see
//! [`crate::requests::PromptContext::diagnostics`]). Clients may send whole LSP diagnostics:
//! the fields not listed here (`relatedInformation`, `tags`, `data`, ...) are ignored.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::position::Range;

/// A diagnostic as the editor shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Where.
    pub range: Range,
    /// LSP severity: 1 error, 2 warning, 3 information, 4 hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<u8>,
    /// The diagnostic's code (a number or a string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Value>,
    /// Who reported it (`rustc`, `eslint`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// What it says.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Position;
    use serde_json::json;

    #[test]
    fn reads_an_lsp_diagnostic_and_ignores_the_rest() {
        let wire = json!({"range": {"start": {"line": 2, "character": 4},
            "end": {"line": 2, "character": 9}}, "severity": 1, "code": 425,
            "source": "rustc", "message": "cannot find value",
            "relatedInformation": [], "tags": [1]});
        let d: Diagnostic = serde_json::from_value(wire).unwrap();
        assert_eq!(
            d,
            Diagnostic {
                range: Range::new(Position::new(2, 4), Position::new(2, 9)),
                severity: Some(1),
                code: Some(json!(425)),
                source: Some("rustc".into()),
                message: "cannot find value".into(),
            }
        );
        let minimal = Diagnostic {
            severity: None,
            code: None,
            source: None,
            ..d
        };
        assert_eq!(
            serde_json::to_value(&minimal).unwrap(),
            json!({"range": {"start": {"line": 2, "character": 4},
                "end": {"line": 2, "character": 9}}, "message": "cannot find value"})
        );
        let err = serde_json::from_value::<Diagnostic>(json!({"message": "m"})).unwrap_err();
        assert_eq!(err.to_string(), "missing field `range`");
    }
}
