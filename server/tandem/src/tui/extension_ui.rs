//! What an extension's `ctx.ui` does in the terminal: [`TerminalUi`] is the terminal mode's
//! [`ExtensionUi`]. Extensions call it from the session's tasks, never from the app's loop, so
//! every call becomes a [`FromExtension`] message the loop applies as it applies session
//! events; a dialog carries the sender its answer goes back on (the model is the workspace's
//! questions, [`super::workspace`]). The loop draws the dialogs, notices, statuses and widgets
//! ([`super::extension_view`]).
//!
//! Each session has its own `TerminalUi`, numbered ([`TerminalUi::generation`]), so a status
//! or widget an ended session's extensions set can be told from the new session's.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tandem_agent::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::extensions::{ExtensionUi, Level};

/// Messages waiting for the loop; past this, notices are dropped (an extension flooding the
/// screen must not grow memory without bound).
pub const CHANNEL_SIZE: usize = 1024;

/// A dialog an extension opened, with where its answer goes.
pub enum Dialog {
    /// Choose one of the options (`None`: dismissed).
    Select {
        /// The question.
        title: String,
        /// The choices.
        options: Vec<String>,
        /// When the extension stops waiting (counted down on screen).
        deadline: Option<Instant>,
        /// The answer.
        answer: oneshot::Sender<Option<String>>,
    },
    /// Yes or no (dismissed: no).
    Confirm {
        /// The question.
        title: String,
        /// Said under it.
        message: String,
        /// When the extension stops waiting (counted down on screen).
        deadline: Option<Instant>,
        /// The answer.
        answer: oneshot::Sender<bool>,
    },
    /// Text typed in the prompt editor (`None`: cancelled).
    Text {
        /// The question.
        title: String,
        /// Shown while the editor is empty.
        placeholder: Option<String>,
        /// The editor's text to start from.
        prefill: Option<String>,
        /// Several lines (`ctx.ui.editor`) rather than one (`ctx.ui.input`).
        multiline: bool,
        /// When the extension stops waiting (counted down on screen).
        deadline: Option<Instant>,
        /// The answer.
        answer: oneshot::Sender<Option<String>>,
    },
}

impl Dialog {
    /// Whether nobody waits for the answer any more (the extension's timeout passed, or its
    /// host stopped).
    pub fn abandoned(&self) -> bool {
        match self {
            Dialog::Select { answer, .. } | Dialog::Text { answer, .. } => answer.is_closed(),
            Dialog::Confirm { answer, .. } => answer.is_closed(),
        }
    }
}

/// What reaches the app's loop from extensions.
pub enum FromExtension {
    /// A dialog to show.
    Dialog(Dialog),
    /// A notice for the transcript.
    Notify(String, Level),
    /// A keyed status for the footer (`None` clears it), from session `generation`.
    Status {
        /// The session's [`TerminalUi::generation`].
        generation: u64,
        /// Whose status.
        key: String,
        /// The text.
        text: Option<String>,
    },
    /// Keyed lines by the editor (`None` clears them), from session `generation`.
    Widget {
        /// The session's [`TerminalUi::generation`].
        generation: u64,
        /// Whose lines.
        key: String,
        /// The lines.
        lines: Option<Vec<String>>,
        /// Under the editor (pi's `belowEditor`) rather than above it.
        below: bool,
    },
    /// The terminal's title.
    Title(String),
    /// Text for the prompt editor.
    EditorText(String),
    /// A problem with an extension, shown as a warning.
    Problem(String),
}

/// The way from every session's extensions to the loop, and whether the loop runs yet.
#[derive(Clone)]
pub struct ExtensionLink {
    sender: mpsc::Sender<FromExtension>,
    running: Arc<AtomicBool>,
    generations: Arc<AtomicU64>,
}

impl ExtensionLink {
    /// A link and the receiving end the loop reads.
    pub fn new() -> (ExtensionLink, mpsc::Receiver<FromExtension>) {
        let (sender, receiver) = mpsc::channel(CHANNEL_SIZE);
        let link = ExtensionLink {
            sender,
            running: Arc::new(AtomicBool::new(false)),
            generations: Arc::new(AtomicU64::new(0)),
        };
        (link, receiver)
    }

    /// The loop runs: dialogs can be answered from now on.
    pub fn loop_running(&self) {
        self.running.store(true, Ordering::Release);
    }

    /// The user interface for a new session's extensions.
    pub fn session_ui(&self) -> Arc<TerminalUi> {
        Arc::new(TerminalUi {
            link: self.clone(),
            generation: self.generations.fetch_add(1, Ordering::AcqRel) + 1,
        })
    }
}

/// One session's extensions' user interface; see the module docs.
pub struct TerminalUi {
    link: ExtensionLink,
    generation: u64,
}

impl TerminalUi {
    /// This session's number (a later session has a larger one).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Sends a message that has no answer; dropped (and logged) when the loop is far behind
    /// or gone.
    fn tell(&self, message: FromExtension) {
        if let Err(e) = self.link.sender.try_send(message) {
            tracing::warn!(target: "tandem::extensions", "an extension's message to the terminal was dropped: {e}");
        }
    }

    /// Opens `dialog` (made with the sender of `heard`) and waits for its answer; `default`
    /// when nobody can answer. Before the loop runs (a `session_start` handler of the first
    /// session asks while the terminal is not drawn yet), waiting would hold up the start
    /// itself: the default is given at once and the user told why.
    fn ask<T: Send + 'static>(
        &self,
        title: &str,
        default: T,
        dialog: Dialog,
        heard: oneshot::Receiver<T>,
    ) -> BoxFuture<'static, T> {
        if !self.link.running.load(Ordering::Acquire) {
            self.tell(FromExtension::Problem(format!(
                "An extension asked {title:?} before the terminal was ready; it was given no answer."
            )));
            return Box::pin(std::future::ready(default));
        }
        let sender = self.link.sender.clone();
        Box::pin(async move {
            if sender.send(FromExtension::Dialog(dialog)).await.is_err() {
                return default;
            }
            heard.await.unwrap_or(default)
        })
    }
}

/// When a dialog with `timeout` opened now ends.
fn deadline(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| Instant::now().checked_add(t))
}

impl ExtensionUi for TerminalUi {
    fn has_ui(&self) -> bool {
        true
    }

    fn select(&self, title: String, options: Vec<String>) -> BoxFuture<'static, Option<String>> {
        self.select_within(title, options, None)
    }

    fn select_within(
        &self,
        title: String,
        options: Vec<String>,
        timeout: Option<Duration>,
    ) -> BoxFuture<'static, Option<String>> {
        let (answer, heard) = oneshot::channel();
        let shown = title.clone();
        let dialog = Dialog::Select {
            title,
            options,
            deadline: deadline(timeout),
            answer,
        };
        self.ask(&shown, None, dialog, heard)
    }

    fn confirm(&self, title: String, message: String) -> BoxFuture<'static, bool> {
        self.confirm_within(title, message, None)
    }

    fn confirm_within(
        &self,
        title: String,
        message: String,
        timeout: Option<Duration>,
    ) -> BoxFuture<'static, bool> {
        let (answer, heard) = oneshot::channel();
        let shown = title.clone();
        let dialog = Dialog::Confirm {
            title,
            message,
            deadline: deadline(timeout),
            answer,
        };
        self.ask(&shown, false, dialog, heard)
    }

    fn input(
        &self,
        title: String,
        placeholder: Option<String>,
    ) -> BoxFuture<'static, Option<String>> {
        self.input_within(title, placeholder, None)
    }

    fn input_within(
        &self,
        title: String,
        placeholder: Option<String>,
        timeout: Option<Duration>,
    ) -> BoxFuture<'static, Option<String>> {
        let (answer, heard) = oneshot::channel();
        let shown = title.clone();
        let dialog = Dialog::Text {
            title,
            placeholder,
            prefill: None,
            multiline: false,
            deadline: deadline(timeout),
            answer,
        };
        self.ask(&shown, None, dialog, heard)
    }

    fn editor(&self, title: String, prefill: Option<String>) -> BoxFuture<'static, Option<String>> {
        let (answer, heard) = oneshot::channel();
        let shown = title.clone();
        let dialog = Dialog::Text {
            title,
            placeholder: None,
            prefill,
            multiline: true,
            deadline: None,
            answer,
        };
        self.ask(&shown, None, dialog, heard)
    }

    fn notify(&self, message: &str, level: Level) {
        self.tell(FromExtension::Notify(message.to_string(), level));
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        self.tell(FromExtension::Status {
            generation: self.generation,
            key: key.to_string(),
            text: text.map(str::to_string),
        });
    }

    fn set_widget(&self, key: &str, lines: Option<Vec<String>>) {
        self.set_widget_placed(key, lines, None);
    }

    fn set_widget_placed(&self, key: &str, lines: Option<Vec<String>>, placement: Option<&str>) {
        self.tell(FromExtension::Widget {
            generation: self.generation,
            key: key.to_string(),
            lines,
            below: placement == Some("belowEditor"),
        });
    }

    fn set_title(&self, title: &str) {
        self.tell(FromExtension::Title(title.to_string()));
    }

    fn set_editor_text(&self, text: &str) {
        self.tell(FromExtension::EditorText(text.to_string()));
    }

    fn problem(&self, line: &str) {
        self.tell(FromExtension::Problem(line.to_string()));
    }
}
