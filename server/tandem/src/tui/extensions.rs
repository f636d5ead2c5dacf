//! Extensions as the terminal shows them: what their `ctx.ui` sent ([`FromExtension`]) applied
//! by the loop — notices in the transcript, keyed statuses in the footer, keyed widgets above
//! the editor (or under it), the window's title, the editor's text — plus the loaded extensions listed at
//! start-up and their commands, completed after the built-in ones and run when typed (pi
//! looks extension commands up after its own, and runs them even while a run goes on).
//!
//! Everything an extension sends is text from outside: it is sanitized before it reaches the
//! terminal ([`super::text::sanitize`]).

use std::collections::BTreeMap;
use std::path::Path;

use ratatui::text::{Line, Span};
use tandem_coding::extensions::SessionExtensions;

use super::app::{App, Done, Modal};
use super::editor::Completion;
use super::extension_ui::FromExtension;
use super::text::{sanitize, wrap};
use super::theme::Theme;
use crate::extensions::{Extensions, Level};

/// Rows one widget may take.
const WIDGET_ROWS: usize = 10;

/// What the extensions put on screen besides the transcript.
#[derive(Default)]
pub struct ExtensionView {
    /// The held session's number ([`super::extension_ui::TerminalUi::generation`]).
    generation: u64,
    /// Statuses by key, with the session that set them.
    statuses: BTreeMap<String, (u64, String)>,
    /// Widgets in the order first set, with the session that set them.
    widgets: Vec<Widget>,
}

/// An extension's lines by the editor.
struct Widget {
    key: String,
    generation: u64,
    lines: Vec<String>,
    /// Under the editor rather than above it.
    below: bool,
}

impl ExtensionView {
    /// The held session is now number `generation`: what earlier sessions' extensions set
    /// goes, and what they still send is ignored.
    pub fn session_replaced(&mut self, generation: u64) {
        self.generation = generation;
        self.statuses.retain(|_, (g, _)| *g >= generation);
        self.widgets.retain(|w| w.generation >= generation);
    }

    fn status(&mut self, generation: u64, key: String, text: Option<String>) {
        if generation < self.generation {
            return;
        }
        match text {
            Some(text) => {
                self.statuses.insert(key, (generation, text));
            }
            None => {
                self.statuses.remove(&key);
            }
        }
    }

    fn widget(&mut self, generation: u64, key: String, lines: Option<Vec<String>>, below: bool) {
        if generation < self.generation {
            return;
        }
        let Some(lines) = lines else {
            self.widgets.retain(|w| w.key != key);
            return;
        };
        let widget = Widget {
            key,
            generation,
            lines,
            below,
        };
        match self.widgets.iter_mut().find(|w| w.key == widget.key) {
            Some(slot) => *slot = widget,
            None => self.widgets.push(widget),
        }
    }

    /// The statuses on one line (by key), for the footer; `None` without any.
    pub fn status_line(&self) -> Option<String> {
        if self.statuses.is_empty() {
            return None;
        }
        let texts: Vec<String> = self
            .statuses
            .values()
            .map(|(_, text)| one_line(text))
            .collect();
        Some(texts.join("  "))
    }

    /// The lines of the widgets above the editor (`below`: under it) at `width`.
    pub fn widget_lines(&self, below: bool, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for widget in self.widgets.iter().filter(|w| w.below == below) {
            let mut rows: Vec<Line<'static>> = widget
                .lines
                .iter()
                .flat_map(|l| {
                    sanitize(l)
                        .split('\n')
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .flat_map(|l| wrap(Line::from(Span::styled(l, theme.text)), width))
                .collect();
            if rows.len() > WIDGET_ROWS {
                let more = rows.len() - (WIDGET_ROWS - 1);
                rows.truncate(WIDGET_ROWS - 1);
                rows.push(Line::from(Span::styled(
                    format!("… {more} more lines"),
                    theme.dim,
                )));
            }
            out.extend(rows);
        }
        out
    }
}

/// `text` on one line, sanitized.
fn one_line(text: &str) -> String {
    sanitize(text)
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the start-up listing calls an extension: its file's name, or its folder's for an
/// `index` file.
fn label(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem == "index" {
        if let Some(folder) = path.parent().and_then(Path::file_name) {
            return folder.to_string_lossy().into_owned();
        }
    }
    name
}

/// The extensions' line of the start-up listing, when there are any.
pub fn loaded_line(extensions: &Extensions) -> Option<String> {
    let labels: Vec<String> = extensions.loaded().iter().map(|p| label(p)).collect();
    (!labels.is_empty()).then(|| format!("Extensions: {}", labels.join(", ")))
}

impl App {
    /// Applies what an extension sent.
    pub(super) fn extension_said(&mut self, message: FromExtension) {
        let theme = self.transcript.theme().clone();
        self.transcript.dirty = true;
        match message {
            FromExtension::Dialog(dialog) => self.ask(super::dialogs::Asked::Extension(dialog)),
            FromExtension::Notify(text, Level::Info) => self.transcript.note(&text, theme.dim),
            FromExtension::Notify(text, Level::Warning) => self
                .transcript
                .note(&format!("Warning: {text}"), theme.warning),
            FromExtension::Notify(text, Level::Error) => self.transcript.error(&text),
            FromExtension::Problem(text) => self
                .transcript
                .note(&format!("Warning: {text}"), theme.warning),
            FromExtension::Status {
                generation,
                key,
                text,
            } => {
                self.extension_view.status(generation, key, text);
                self.footer_stale = true;
            }
            FromExtension::Widget {
                generation,
                key,
                lines,
                below,
            } => self.extension_view.widget(generation, key, lines, below),
            FromExtension::Title(title) => {
                if let Err(e) = self.screen.set_title(&one_line(&title)) {
                    tracing::warn!("setting the terminal's title failed: {e}");
                }
            }
            FromExtension::EditorText(text) => match &mut self.modal {
                // The editor answers a dialog now: the text is the draft it gives back.
                Some(Modal::Text(entry)) => entry.draft = text,
                _ => self.editor.set_text(&text, &theme),
            },
        }
    }

    /// Completions for `/word` among the extensions' commands (a name a built-in command
    /// has is left out: the built-in one runs).
    pub(super) fn extension_completions(&self, typed: &str) -> Vec<Completion> {
        let Some(extensions) = &self.held.extensions else {
            return Vec::new();
        };
        extensions
            .commands()
            .into_iter()
            .filter(|(name, _)| name.to_lowercase().starts_with(typed))
            .filter(|(name, _)| !super::commands::is_builtin(name))
            .map(|(name, description)| Completion {
                replacement: format!("/{name}"),
                detail: description,
            })
            .collect()
    }

    /// The extensions that registered the command `text` starts with, if one did.
    pub(super) fn extension_command(&self, text: &str) -> Option<Extensions> {
        let extensions = self.held.extensions.as_ref()?;
        extensions.is_command(text).then(|| extensions.clone())
    }

    /// Runs an extension's command (in a task: its handler may open dialogs the loop shows).
    pub(super) fn run_extension_command(&mut self, extensions: Extensions, text: String) {
        let done = self.done_tx.clone();
        tokio::spawn(async move {
            if let Some(Err(e)) = extensions.command(&text).await {
                let _ = done.send(Done::Error(e));
            }
        });
    }

    /// Says at start-up which extensions are loaded.
    pub(super) fn list_extensions(&mut self) {
        let Some(line) = self.held.extensions.as_ref().and_then(loaded_line) else {
            return;
        };
        let theme = self.transcript.theme().clone();
        self.transcript.note(&line, theme.dim);
    }

    /// Warns about extension commands a built-in command of the same name hides.
    pub(super) fn warn_hidden_commands(&mut self) {
        let Some(extensions) = &self.held.extensions else {
            return;
        };
        let hidden: Vec<String> = extensions
            .commands()
            .into_iter()
            .filter(|(name, _)| super::commands::is_builtin(name))
            .map(|(name, _)| format!("/{name}"))
            .collect();
        if !hidden.is_empty() {
            let theme = self.transcript.theme().clone();
            self.transcript.note(
                &format!(
                    "Warning: extension commands {} have the name of a built-in command; the \
                     built-in one runs.",
                    hidden.join(", ")
                ),
                theme.warning,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_file_is_named_after_its_folder() {
        assert_eq!(label(Path::new("/x/ext/gate/index.ts")), "gate");
        assert_eq!(label(Path::new("/x/ext/pirate.ts")), "pirate.ts");
    }

    #[test]
    fn statuses_of_an_ended_session_go_and_stay_gone() {
        let mut view = ExtensionView::default();
        view.session_replaced(1);
        view.status(1, "b".into(), Some("old".into()));
        view.status(2, "a".into(), Some("new\x1b[31m".into()));
        view.session_replaced(2);
        assert_eq!(view.status_line().as_deref(), Some("new␛[31m"));
        view.status(1, "c".into(), Some("late".into()));
        assert_eq!(view.status_line().as_deref(), Some("new␛[31m"));
        view.status(2, "a".into(), None);
        assert_eq!(view.status_line(), None);
    }

    #[test]
    fn a_long_widget_is_cut() {
        let mut view = ExtensionView::default();
        let lines: Vec<String> = (0..30).map(|i| format!("line {i}")).collect();
        view.widget(0, "w".into(), Some(lines), false);
        assert!(view.widget_lines(true, 80, &Theme::default()).is_empty());
        let shown = view.widget_lines(false, 80, &Theme::default());
        assert_eq!(shown.len(), WIDGET_ROWS);
        assert!(super::super::text::plain(&shown[WIDGET_ROWS - 1]).contains("21 more lines"));
        view.widget(0, "w".into(), None, false);
        assert!(view.widget_lines(false, 80, &Theme::default()).is_empty());
    }
}
