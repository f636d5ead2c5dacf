//! What client and server announce about the extension at `initialize`, under
//! `capabilities.experimental.tandem` (LSP's place for capabilities outside the spec).
//!
//! Events are opt-in: a client that does not declare `events: true` gets no `tandem/event`
//! notifications. Clients without custom-notification support (Helix logs every unknown
//! notification) would otherwise pay for a stream they drop; they still get the whole loop
//! through code actions, progress, `workspace/applyEdit` and `window/showMessage`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::methods::PROTOCOL_VERSION;

/// The key under `experimental` in both the client's and the server's capabilities.
pub const EXPERIMENTAL_KEY: &str = "tandem";

/// The client's `capabilities.experimental.tandem`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapability {
    /// True → the client handles `tandem/event` and wants it sent.
    #[serde(default)]
    pub events: bool,
    /// True → the client answers `tandem/saveDocuments` (saves documents before commands).
    #[serde(default)]
    pub save_documents: bool,
    /// True → the client answers `tandem/diagnostics` (its diagnostics from all its language
    /// servers).
    #[serde(default)]
    pub diagnostics: bool,
    /// True → the client answers `tandem/languageRequest` (definition, references, symbols,
    /// hover, rename from its other language servers).
    #[serde(default)]
    pub language_requests: bool,
    /// True → the client answers `tandem/input` (text an extension asks the user for).
    #[serde(default)]
    pub input: bool,
}

impl ClientCapability {
    /// Reads it from the client's `capabilities.experimental` (absent or malformed → nothing
    /// declared).
    pub fn from_experimental(experimental: Option<&Value>) -> ClientCapability {
        experimental
            .and_then(|e| e.get(EXPERIMENTAL_KEY))
            .and_then(|t| serde_json::from_value(t.clone()).ok())
            .unwrap_or_default()
    }
}

/// The server's `capabilities.experimental.tandem`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCapability {
    /// The extension's version ([`PROTOCOL_VERSION`]).
    pub version: u32,
}

impl ServerCapability {
    /// What this version of the server announces.
    pub fn current() -> ServerCapability {
        ServerCapability {
            version: PROTOCOL_VERSION,
        }
    }

    /// The value for the server's `capabilities.experimental`: `{"tandem": {...}}`.
    pub fn to_experimental(self) -> Value {
        serde_json::json!({ EXPERIMENTAL_KEY: { "version": self.version } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn client_opts_in_to_events() {
        let exp = json!({"tandem": {"events": true}, "other": 1});
        assert!(ClientCapability::from_experimental(Some(&exp)).events);
        for exp in [
            json!({}),
            json!({"tandem": {}}),
            json!({"tandem": {"events": "yes"}}),
            json!({"tandem": true}),
        ] {
            assert!(
                !ClientCapability::from_experimental(Some(&exp)).events,
                "{exp}"
            );
        }
        assert!(!ClientCapability::from_experimental(None).events);
    }

    #[test]
    fn client_declares_saving_documents() {
        let exp = json!({"tandem": {"events": true, "saveDocuments": true}});
        let declared = ClientCapability::from_experimental(Some(&exp));
        assert!(declared.events && declared.save_documents);
        let exp = json!({"tandem": {"events": true}});
        assert!(!ClientCapability::from_experimental(Some(&exp)).save_documents);
    }

    #[test]
    fn server_announces_its_version() {
        assert_eq!(
            ServerCapability::current().to_experimental(),
            json!({"tandem": {"version": 1}})
        );
    }
}
