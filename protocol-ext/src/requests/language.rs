//! The editor's language intelligence, asked by the server (server → client), each behind a
//! client capability. One language server never sees another's diagnostics or answers; the
//! editor runs them all, so the agent asks the editor.
//!
//! - `tandem/diagnostics` (`experimental.tandem.diagnostics: true`): the diagnostics the editor
//!   shows for some documents (or all), optionally once newer ones have come and settled.
//! - `tandem/languageRequest` (`experimental.tandem.languageRequests: true`): one standard LSP
//!   request (definition, references, document and workspace symbols, hover, rename) sent by
//!   the editor to its other language servers, the answers merged.
//!
//! Positions are in the position encoding negotiated at `initialize`, as everywhere else in
//! the protocol.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::methods::{self, Request};

/// `tandem/diagnostics` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsParams {
    /// The documents (`file://` URIs); absent: every document the editor has diagnostics for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uris: Option<Vec<String>>,
    /// Wait for newer diagnostics: each URI's generation as the server last saw it. The editor
    /// answers once every one of these documents has a higher generation (or is not analyzed)
    /// and no diagnostics change came for any of them during `quietMs`, or when `waitMs` ran
    /// out (then `settled` is false). Absent: answer at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<BTreeMap<String, u64>>,
    /// The longest wait, in milliseconds (with `after`; default 1500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
    /// The quiet time that counts as settled, in milliseconds (with `after`; default 250).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
}

/// One document's diagnostics in a `tandem/diagnostics` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentDiagnostics {
    /// The document.
    pub uri: String,
    /// How many times the document's diagnostics changed since the editor started (0: never
    /// reported). Any counter works that only goes up.
    #[serde(default)]
    pub generation: u64,
    /// False when the editor knows that no language server looks at the document (then the
    /// server does not wait for it); absent when it cannot tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analyzed: Option<bool>,
    /// Every diagnostic the editor shows for it, from all its language servers (Tandem's own
    /// excepted), with `source` set when the server gave one.
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
}

/// `tandem/diagnostics` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsResult {
    /// The documents asked for (a requested URI the editor knows nothing of is present with
    /// generation 0 and no diagnostics), or every document with diagnostics.
    #[serde(default)]
    pub files: Vec<DocumentDiagnostics>,
    /// False when an `after` wait ran out before every document settled.
    #[serde(default = "yes")]
    pub settled: bool,
}

fn yes() -> bool {
    true
}

impl Request for DiagnosticsParams {
    const METHOD: &'static str = methods::DIAGNOSTICS;
    type Result = DiagnosticsResult;
}

/// The LSP methods `tandem/languageRequest` forwards.
pub const LANGUAGE_METHODS: [&str; 6] = [
    "textDocument/definition",
    "textDocument/references",
    "textDocument/documentSymbol",
    "workspace/symbol",
    "textDocument/hover",
    "textDocument/rename",
];

/// `tandem/languageRequest` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanguageRequestParams {
    /// One of [`LANGUAGE_METHODS`].
    pub method: String,
    /// The standard LSP params of that method.
    pub params: Value,
}

/// `tandem/languageRequest` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanguageRequestResult {
    /// How many language servers the editor asked (0: none handles the document, or none
    /// supports the method).
    pub servers: u32,
    /// The standard LSP result of the method, merged: lists concatenated (definitions,
    /// references, symbols), hovers' contents joined into one `MarkupContent`, the first
    /// rename's `WorkspaceEdit`; `null` when there is none.
    #[serde(default)]
    pub result: Value,
}

impl Request for LanguageRequestParams {
    const METHOD: &'static str = methods::LANGUAGE_REQUEST;
    type Result = LanguageRequestResult;
}
