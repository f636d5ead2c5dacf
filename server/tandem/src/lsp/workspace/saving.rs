//! Saved before commands: a command the agent runs sees on disk what the user sees.
//!
//! Edits reach the editor's buffers, not the disk: after the user accepts one, the file on disk
//! is still the old text until someone saves. A command (`./check.sh`, the tests) would then
//! check the old file. So the workspace remembers every document an applied edit changed
//! ([`UnsavedEdits`]: forgotten when the editor reports it saved or closed it), and before a
//! command runs ([`LspWorkspace::before_command`]):
//!
//! - with `saveBeforeCommands` on (the default) and a client that declared
//!   `experimental.tandem.saveDocuments`, it asks the editor to save them
//!   (`tandem/saveDocuments`, within the edit timeout) and waits for the answer;
//! - a document the editor could not save, any document when the client cannot be asked
//!   (Helix), or every one when the setting is off, is named to the model in the command's
//!   result: the command saw the disk, not the buffer.
//!
//! Saving a document saves all of it, the user's own unsaved typing in it included: that is
//! what the user sees, and what the command should see.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tandem_ai::sync::lock;
use tandem_protocol::requests::SaveDocumentsParams;

use super::client::{with_timeout, ClientError};
use super::LspWorkspace;

/// `tandem/saveDocuments`, for timeouts' messages.
const SAVE_DOCUMENTS: &str = tandem_protocol::methods::SAVE_DOCUMENTS;

/// The documents Tandem's applied edits changed and the editor has not saved since, by URI.
#[derive(Debug, Default)]
pub struct UnsavedEdits {
    documents: Mutex<BTreeMap<String, PathBuf>>,
}

impl UnsavedEdits {
    /// None yet.
    pub fn new() -> Self {
        UnsavedEdits::default()
    }

    /// An edit to `path` (named `uri` to the editor) was applied.
    pub fn changed(&self, uri: &str, path: &Path) {
        lock(&self.documents).insert(uri.to_owned(), path.to_path_buf());
    }

    /// The editor saved `uri` (`didSave`) or closed it (`didClose`: saved or discarded, the
    /// disk is the truth again).
    pub fn settled(&self, uri: &str) {
        let mut documents = lock(&self.documents);
        if documents.remove(uri).is_none() {
            // The client may spell the URI differently from the server's edit.
            if let Some(path) = crate::uri::to_path(uri) {
                documents.retain(|_, p| *p != path);
            }
        }
    }

    /// The documents not saved yet.
    pub fn list(&self) -> Vec<(String, PathBuf)> {
        lock(&self.documents)
            .iter()
            .map(|(uri, path)| (uri.clone(), path.clone()))
            .collect()
    }
}

impl LspWorkspace {
    /// Before a command runs: has the editor save what Tandem changed, and notes for the model
    /// whatever stays unsaved.
    pub(super) async fn save_before_command(&self, command: &str) {
        let unsaved = self.unsaved.list();
        if unsaved.is_empty() {
            return;
        }
        let settings = self.settings();
        let caps = self.client.capabilities();
        let mut left: Vec<(PathBuf, String)> = Vec::new();
        if !settings.save_before_commands {
            left.extend(
                unsaved
                    .into_iter()
                    .map(|(_, path)| (path, "saveBeforeCommands is off".to_owned())),
            );
        } else if !caps.save_documents {
            left.extend(
                unsaved
                    .into_iter()
                    .map(|(_, path)| (path, "this editor cannot be asked to save".to_owned())),
            );
        } else {
            let params = SaveDocumentsParams {
                uris: unsaved.iter().map(|(uri, _)| uri.clone()).collect(),
                reason: Some(format!("before running `{command}`")),
            };
            let answer = with_timeout(
                SAVE_DOCUMENTS,
                settings.timeout,
                self.client.save_documents(params),
            )
            .await;
            match answer {
                Ok(result) => {
                    for uri in &result.saved {
                        self.unsaved.settled(uri);
                    }
                    let failed: BTreeMap<&str, &str> = result
                        .failed
                        .iter()
                        .map(|f| (f.uri.as_str(), f.message.as_str()))
                        .collect();
                    for (uri, path) in unsaved {
                        if let Some(message) = failed.get(uri.as_str()) {
                            left.push((path, (*message).to_owned()));
                        } else if !result.saved.contains(&uri) {
                            // Neither saved nor failed: nothing was unsaved there.
                            self.unsaved.settled(&uri);
                        }
                    }
                }
                Err(e) => {
                    let why = match e {
                        ClientError::Timeout { seconds, .. } => {
                            format!("the editor did not answer the save request within {seconds} s")
                        }
                        ClientError::Failed(detail) => format!("the save request failed: {detail}"),
                    };
                    left.extend(unsaved.into_iter().map(|(_, path)| (path, why.clone())));
                }
            }
        }
        if left.is_empty() {
            return;
        }
        let files: Vec<String> = left
            .iter()
            .map(|(path, why)| format!("{} ({why})", self.display_path(path)))
            .collect();
        let notice = format!(
            "Note: the editor has unsaved changes in {}; the command saw these files as they are \
             on disk, without Tandem's accepted edits. The read tool sees the editor's text.",
            files.join(", ")
        );
        tracing::info!("{notice}");
        lock(&self.notices).push(notice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_forgotten_once_saved_or_closed_whatever_the_uri_spelling() {
        let unsaved = UnsavedEdits::new();
        unsaved.changed("file:///w/a%20b.txt", Path::new("/w/a b.txt"));
        unsaved.changed("file:///w/c.txt", Path::new("/w/c.txt"));
        unsaved.settled("file:///w/%61%20b.txt");
        assert_eq!(
            unsaved.list(),
            vec![("file:///w/c.txt".to_owned(), PathBuf::from("/w/c.txt"))]
        );
        unsaved.settled("file:///w/c.txt");
        assert!(unsaved.list().is_empty());
    }
}
