//! Requests the server sends the editor (server → client), each behind a client capability.
//!
//! - `tandem/saveDocuments` (`experimental.tandem.saveDocuments: true`): before the agent runs
//!   a command, the editor saves the documents Tandem changed and the user accepted, so the
//!   command sees on disk what the user sees.
//! - `tandem/input` (`experimental.tandem.input: true`): an extension asks the user for text
//!   (pi's `ctx.ui.input` and `ctx.ui.editor`).

use serde::{Deserialize, Serialize};

use crate::methods::{self, Request};

/// `tandem/saveDocuments` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveDocumentsParams {
    /// The documents to save (`file://` URIs, as the server names them in its edits).
    pub uris: Vec<String>,
    /// Why, for the editor's log or status line ("before running `npm test`").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A document the editor could not save.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveFailure {
    /// The document.
    pub uri: String,
    /// Why, in words for the model ("permission denied", "the file changed on disk").
    pub message: String,
}

/// `tandem/saveDocuments` result: every requested URI is in exactly one of the lists, or in
/// neither when it had nothing unsaved (not open, or already saved).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveDocumentsResult {
    /// Saved now.
    #[serde(default)]
    pub saved: Vec<String>,
    /// Not saved, with the reason.
    #[serde(default)]
    pub failed: Vec<SaveFailure>,
}

impl Request for SaveDocumentsParams {
    const METHOD: &'static str = methods::SAVE_DOCUMENTS;
    type Result = SaveDocumentsResult;
}

/// `tandem/input` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputParams {
    /// The question.
    pub title: String,
    /// A hint shown in the empty field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Text the field starts with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
    /// True: several lines (an editor), false: one line.
    #[serde(default)]
    pub multiline: bool,
    /// Which extension asks (its file name), for the dialog's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// `tandem/input` result: the text, or `null` when the user cancelled.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputResult {
    /// What the user entered (`null`: cancelled).
    pub value: Option<String>,
}

impl Request for InputParams {
    const METHOD: &'static str = methods::INPUT;
    type Result = InputResult;
}
