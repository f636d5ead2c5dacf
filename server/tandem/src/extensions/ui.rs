//! How an extension's `ctx.ui` reaches the user: each front door gives its own
//! [`ExtensionUi`] (the terminal's dialogs, the editor's, RPC's `extension_ui_request`);
//! print and JSON mode have [`NoUi`], which answers every dialog with its default at once.

use std::time::Duration;

use tandem_agent::BoxFuture;

/// A notice's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Information.
    Info,
    /// Something to look at.
    Warning,
    /// Something failed.
    Error,
}

impl Level {
    /// pi's name for it; anything else is `info`.
    pub fn parse(text: &str) -> Level {
        match text {
            "warning" => Level::Warning,
            "error" => Level::Error,
            _ => Level::Info,
        }
    }
}

/// A front door's user interface for extensions. Dialogs return `None` (or `false`) when the
/// user cancels; the caller bounds them by the extension's own timeout.
pub trait ExtensionUi: Send + Sync {
    /// Whether there is anyone to ask (`ctx.hasUI`).
    fn has_ui(&self) -> bool;
    /// Choose one of `options`.
    fn select(&self, title: String, options: Vec<String>) -> BoxFuture<'static, Option<String>>;
    /// Yes or no.
    fn confirm(&self, title: String, message: String) -> BoxFuture<'static, bool>;
    /// One line of text.
    fn input(
        &self,
        title: String,
        placeholder: Option<String>,
    ) -> BoxFuture<'static, Option<String>>;
    /// Longer text, starting from `prefill`.
    fn editor(&self, title: String, prefill: Option<String>) -> BoxFuture<'static, Option<String>>;
    /// A notice.
    fn notify(&self, message: &str, level: Level);
    /// A status line keyed by `key` (`None` clears it).
    fn set_status(&self, _key: &str, _text: Option<&str>) {}
    /// Lines shown near the prompt, keyed by `key` (`None` clears them).
    fn set_widget(&self, _key: &str, _lines: Option<Vec<String>>) {}
    /// The window's title.
    fn set_title(&self, _title: &str) {}
    /// The prompt editor's text.
    fn set_editor_text(&self, _text: &str) {}
    /// A problem with an extension (a handler that threw, a host that stopped), once the
    /// session runs; the log by default (it is logged either way).
    fn problem(&self, _line: &str) {}

    /// [`ExtensionUi::select`] with the extension's time limit, for a front door that tells
    /// its client about it (RPC's `timeout` field); the runner enforces the limit either way.
    fn select_within(
        &self,
        title: String,
        options: Vec<String>,
        _timeout: Option<Duration>,
    ) -> BoxFuture<'static, Option<String>> {
        self.select(title, options)
    }
    /// [`ExtensionUi::confirm`] with the extension's time limit (see `select_within`).
    fn confirm_within(
        &self,
        title: String,
        message: String,
        _timeout: Option<Duration>,
    ) -> BoxFuture<'static, bool> {
        self.confirm(title, message)
    }
    /// [`ExtensionUi::input`] with the extension's time limit (see `select_within`).
    fn input_within(
        &self,
        title: String,
        placeholder: Option<String>,
        _timeout: Option<Duration>,
    ) -> BoxFuture<'static, Option<String>> {
        self.input(title, placeholder)
    }
    /// [`ExtensionUi::set_widget`] with pi's placement (`"aboveEditor"`, `"belowEditor"`) when
    /// the extension gave one.
    fn set_widget_placed(&self, key: &str, lines: Option<Vec<String>>, _placement: Option<&str>) {
        self.set_widget(key, lines)
    }
    /// A handler that threw, for a front door that reports it in a form of its own (RPC's
    /// `extension_error` event): `true` when it did, and the problem line is then only logged;
    /// `false` (the default) sends it to [`ExtensionUi::problem`] as one line.
    fn handler_failed(&self, _failure: &HandlerFailure<'_>) -> bool {
        false
    }
}

/// A handler that threw (or a command that failed), as pi's RPC mode reports it.
#[derive(Debug, Clone, Copy)]
pub struct HandlerFailure<'a> {
    /// The extension's file (`command:<name>` for a command, as pi names it).
    pub extension_path: &'a str,
    /// The event the handler ran for (`"command"` for a command).
    pub event: &'a str,
    /// What it threw.
    pub error: &'a str,
}

/// No one to ask: dialogs get their defaults, notices go nowhere, as in pi's print mode.
pub struct NoUi;

/// Print and JSON mode: [`NoUi`], with problems on stderr (as warnings, sanitized).
pub struct StderrUi;

impl ExtensionUi for StderrUi {
    fn has_ui(&self) -> bool {
        false
    }
    fn select(&self, title: String, options: Vec<String>) -> BoxFuture<'static, Option<String>> {
        NoUi.select(title, options)
    }
    fn confirm(&self, title: String, message: String) -> BoxFuture<'static, bool> {
        NoUi.confirm(title, message)
    }
    fn input(
        &self,
        title: String,
        placeholder: Option<String>,
    ) -> BoxFuture<'static, Option<String>> {
        NoUi.input(title, placeholder)
    }
    fn editor(&self, title: String, prefill: Option<String>) -> BoxFuture<'static, Option<String>> {
        NoUi.editor(title, prefill)
    }
    fn notify(&self, _: &str, _: Level) {}
    fn problem(&self, line: &str) {
        crate::eprintln_safe!("Warning: {line}");
    }
}

impl ExtensionUi for NoUi {
    fn has_ui(&self) -> bool {
        false
    }
    fn select(&self, _: String, _: Vec<String>) -> BoxFuture<'static, Option<String>> {
        Box::pin(std::future::ready(None))
    }
    fn confirm(&self, _: String, _: String) -> BoxFuture<'static, bool> {
        Box::pin(std::future::ready(false))
    }
    fn input(&self, _: String, _: Option<String>) -> BoxFuture<'static, Option<String>> {
        Box::pin(std::future::ready(None))
    }
    fn editor(&self, _: String, _: Option<String>) -> BoxFuture<'static, Option<String>> {
        Box::pin(std::future::ready(None))
    }
    fn notify(&self, _: &str, _: Level) {}
}
