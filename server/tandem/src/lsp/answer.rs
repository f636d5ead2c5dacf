//! How a command's answer reaches a client without Tandem's events.
//!
//! Such a client (Helix, plain Neovim) has `window/showMessage` for it, and Helix draws that
//! message on its one status row, cut at the window's width (helix-term/src/ui/editor.rs: the
//! status message is one `set_string` on the last row). An explanation does not fit. So:
//!
//! - an answer that fits in a line or two ([`fits_in_a_message`]) is the message;
//! - a longer one is saved to a read-only markdown file ([`AnswerFiles`], in the user's cache
//!   directory), opened with `window/showDocument` when the client can ([`opens_documents`]),
//!   and the message says in one line where it is ([`pointer`]);
//! - when the editor does not open it (no support, `success: false`, an error, no answer in
//!   [`SHOW_DOCUMENT_TIMEOUT`]), the message carries the whole answer after that line (the
//!   line first, so a status row cut short still shows where the file is); when it cannot be
//!   saved, the message is the whole answer. Each failure is logged.
//!
//! A failure of the run ("Failed: …") stays a message (Error), whole: it is not an answer to
//! read but a problem to fix, and it is short.
//!
//! The editor is reached through [`AnswerClient`], so the choice between these is tested with
//! a fake one; the server passes tower-lsp-server's `Client`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tandem_agent::BoxFuture;
use tandem_protocol::SessionId;
use tower_lsp_server::ls_types::{ClientCapabilities, ClientInfo, MessageType, ShowDocumentParams};
use tower_lsp_server::Client;

use super::answer_files::AnswerFiles;
use super::progress::{first_line, Outcome};

/// How long the client may take to answer `window/showDocument`.
pub const SHOW_DOCUMENT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest answer kept as a message alone, in characters (about a line or two of a
/// status bar).
pub const SHORT_CHARS: usize = 200;
/// The most lines an answer kept as a message alone has.
pub const SHORT_LINES: usize = 2;
/// The longest excerpt of the answer's first line in the one-line [`pointer`], in characters.
pub const POINTER_CHARS: usize = 72;

/// The editor, as delivering an answer needs it.
pub trait AnswerClient: Send + Sync {
    /// Sends `window/showMessage`.
    fn show_message(&self, typ: MessageType, text: String) -> BoxFuture<'_, ()>;

    /// Sends `window/showDocument`; the client's `success`, or why there is none.
    fn show_document(&self, params: ShowDocumentParams) -> BoxFuture<'_, Result<bool, String>>;
}

impl AnswerClient for Client {
    fn show_message(&self, typ: MessageType, text: String) -> BoxFuture<'_, ()> {
        Box::pin(async move { Client::show_message(self, typ, text).await })
    }

    fn show_document(&self, params: ShowDocumentParams) -> BoxFuture<'_, Result<bool, String>> {
        Box::pin(async move {
            Client::show_document(self, params)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// Whether the client that sent `capabilities` and `info` in `initialize` is asked to open an
/// answer file with `window/showDocument`: it declares `window.showDocument.support`, or it is
/// Helix. Helix handles the request since 24.03 (helix commit c60ba4ba0, #8865,
/// helix-term/src/application.rs `handle_show_document`) but declares it only after 25.07.1
/// (commit aedff4cab, #14892, in no release as of 25.07.1); a Helix older than 24.03 answers
/// MethodNotFound, and the answer then goes in the message.
pub fn opens_documents(capabilities: &ClientCapabilities, info: Option<&ClientInfo>) -> bool {
    let declared = capabilities
        .window
        .as_ref()
        .and_then(|w| w.show_document.as_ref())
        .is_some_and(|s| s.support);
    declared || info.is_some_and(|i| i.name == "helix")
}

/// Whether `answer` is short enough to be the message itself: at most [`SHORT_LINES`]
/// non-empty lines and [`SHORT_CHARS`] characters.
pub fn fits_in_a_message(answer: &str) -> bool {
    let lines = answer.lines().filter(|l| !l.trim().is_empty()).count();
    lines <= SHORT_LINES && answer.chars().count() <= SHORT_CHARS
}

/// The message for an answer that fits in one: its non-empty lines, trimmed.
pub fn short_message(answer: &str) -> String {
    let lines: Vec<&str> = answer
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    format!("Tandem: {}", lines.join("\n"))
}

/// The one line saying where the whole answer is: the start of its first line (a markdown
/// heading's `#`s dropped, at most [`POINTER_CHARS`] characters; left out when nothing is
/// left), then the path.
pub fn pointer(answer: &str, path: &Path) -> String {
    let first = first_line(answer).trim_start_matches('#').trim();
    let mut excerpt: String = first.chars().take(POINTER_CHARS).collect();
    if first.chars().count() > POINTER_CHARS {
        excerpt.push('…');
    }
    if excerpt.is_empty() {
        return format!("Tandem: the answer is in {}", path.display());
    }
    format!("Tandem: {excerpt} — full answer in {}", path.display())
}

/// `window/showDocument` for a saved answer: inside the editor (not `external`), no
/// selection, `takeFocus: false`, so the code stays in view where the editor can manage it:
/// Helix 24.03–25.07.1 open the file in a vertical split beside the code (with focus, in place
/// of it); later Helix (commit 462c98e03, #15490) opens it in the current view either way,
/// unless a popup is up, where it only loads it rather than interrupt; Neovim shows it in a
/// new window without moving the cursor (runtime/lua/vim/lsp/util.lua, `show_document`).
/// `None` for a path without a file URI (a relative one).
pub fn show_params(path: &Path) -> Option<ShowDocumentParams> {
    Some(ShowDocumentParams {
        uri: crate::uri::from_path(path)?,
        external: Some(false),
        take_focus: Some(false),
        selection: None,
    })
}

/// The closing message of commands run by a client without events.
pub struct Answers {
    client: Arc<dyn AnswerClient>,
    files: AnswerFiles,
    opens_documents: AtomicBool,
}

impl Answers {
    /// Answers to `client`, long ones saved in `files`; no `window/showDocument` until
    /// [`Answers::set_opens_documents`].
    pub fn new(client: Arc<dyn AnswerClient>, files: AnswerFiles) -> Self {
        Answers {
            client,
            files,
            opens_documents: AtomicBool::new(false),
        }
    }

    /// Whether the client is asked to open answer files ([`opens_documents`] of its
    /// `initialize`).
    pub fn set_opens_documents(&self, opens: bool) {
        self.opens_documents.store(opens, Ordering::Release);
    }

    /// Tells the user how the run of `session` ended, as the module doc says.
    pub async fn deliver(&self, session: &SessionId, outcome: &Outcome) {
        let answer = match outcome {
            Outcome::Answer(text) if !fits_in_a_message(text) => text,
            Outcome::Answer(text) => {
                return self.say(MessageType::INFO, short_message(text)).await;
            }
            Outcome::Failed(_) => {
                let text = format!("Tandem: {}", outcome.text());
                return self.say(MessageType::ERROR, text).await;
            }
            Outcome::Done | Outcome::Stopped | Outcome::NoAnswer => {
                let text = format!("Tandem: {}", outcome.text());
                return self.say(MessageType::INFO, text).await;
            }
        };
        let (files, id, text) = (self.files.clone(), session.clone(), answer.clone());
        let saved = match tokio::task::spawn_blocking(move || files.save(&id, &text)).await {
            Ok(saved) => saved.map_err(|e| e.to_string()),
            Err(e) => Err(format!("the task saving it failed: {e}")),
        };
        let path = match saved {
            Ok(path) => path,
            Err(e) => {
                tracing::warn!(
                    "the answer of session {session} was not saved ({e}); it is in the message"
                );
                let text = format!("Tandem: {answer}");
                return self.say(MessageType::INFO, text).await;
            }
        };
        let line = pointer(answer, &path);
        let text = if self.open(&path).await {
            line
        } else {
            format!("{line}\n\n{answer}")
        };
        self.say(MessageType::INFO, text).await;
    }

    /// Asks the editor to open `path`; whether it did. Failures are logged.
    async fn open(&self, path: &Path) -> bool {
        if !self.opens_documents.load(Ordering::Acquire) {
            return false;
        }
        let Some(params) = show_params(path) else {
            tracing::warn!("the answer file {} has no file URI", path.display());
            return false;
        };
        let shown = self.client.show_document(params);
        match tokio::time::timeout(SHOW_DOCUMENT_TIMEOUT, shown).await {
            Ok(Ok(true)) => true,
            Ok(Ok(false)) => {
                tracing::warn!(
                    "the editor did not open {} (window/showDocument: success false); the answer is in the message",
                    path.display()
                );
                false
            }
            Ok(Err(e)) => {
                tracing::warn!(
                    "window/showDocument for {} failed: {e}; the answer is in the message",
                    path.display()
                );
                false
            }
            Err(_) => {
                tracing::warn!(
                    "no answer to window/showDocument for {} within {SHOW_DOCUMENT_TIMEOUT:?}; the answer is in the message",
                    path.display()
                );
                false
            }
        }
    }

    async fn say(&self, typ: MessageType, text: String) {
        self.client.show_message(typ, text).await;
    }
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
