//! Questions asked from outside the loop: the workspace's (an outside path, a protected file,
//! an edit in confirm mode) and extensions' dialogs (`ctx.ui.select`, `confirm`, `input`,
//! `editor`). They wait in one queue and are shown one at a time, in the order asked; one that
//! arrives while a command's picker is open closes that picker (the run waits on the
//! question, the picker can be opened again). A select or confirm is a picker; an input or
//! editor dialog borrows the prompt editor, whose draft is put back once it is answered.
//!
//! Whoever asked may stop waiting (an extension's timeout, a run that was stopped): the loop
//! watches the open dialog's answer channel ([`abandoned`]) and closes it then, and skips
//! queued ones nobody waits for.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};
use tokio::sync::oneshot;

use super::app::{App, Modal};
use super::commands;
use super::extension_ui::Dialog;
use super::picker::{countdown, Item, Picked, Picker};
use super::text::{sanitize, wrap};
use super::theme::Theme;
use super::workspace::Question;

/// Something asked, waiting to be shown.
pub enum Asked {
    /// The workspace's question.
    Question(Question),
    /// An extension's dialog.
    Extension(Dialog),
}

impl Asked {
    /// Whether nobody waits for the answer any more.
    fn abandoned(&self) -> bool {
        match self {
            Asked::Question(q) => q.answer.is_closed(),
            Asked::Extension(d) => d.abandoned(),
        }
    }
}

/// An extension's picker: what its answer is.
pub enum Choice {
    /// `select`: one of these options.
    Select(Vec<String>, oneshot::Sender<Option<String>>),
    /// `confirm`: the first item is yes.
    Confirm(oneshot::Sender<bool>),
}

/// An extension's text entry, typed in the prompt editor.
pub struct TextEntry {
    /// The question.
    pub title: String,
    /// Several lines (Shift+Enter or Ctrl+J adds one) rather than one.
    pub multiline: bool,
    /// Where the text goes (`None`: cancelled).
    pub answer: oneshot::Sender<Option<String>>,
    /// The user's own draft, put back afterwards.
    pub draft: String,
    /// When the extension stops waiting (counted down after the title).
    pub deadline: Option<Instant>,
}

impl TextEntry {
    /// The lines shown above the editor.
    pub fn render(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let title = format!("{}{}", self.title, countdown(self.deadline));
        title_lines(&title, width, theme)
    }

    /// The editor's border title while it takes the answer.
    pub fn hint(&self) -> &'static str {
        if self.multiline {
            " Enter submits · Shift+Enter new line · Esc cancels "
        } else {
            " Enter submits · Esc cancels "
        }
    }
}

/// `title` (from an extension: sanitized) on as many rows as it needs.
pub fn title_lines(title: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    sanitize(title)
        .split('\n')
        .flat_map(|l| {
            wrap(
                Line::from(Span::styled(l.to_string(), theme.tool_title)),
                width,
            )
        })
        .collect()
}

/// When the open dialog's asker stops waiting, if it counts down.
pub fn deadline(modal: &Option<Modal>) -> Option<Instant> {
    match modal {
        Some(Modal::Choice(picker, _)) => picker.deadline(),
        Some(Modal::Text(entry)) => entry.deadline,
        _ => None,
    }
}

/// Waits until whoever asked the open dialog stops waiting for its answer (forever when no
/// dialog is open).
pub async fn abandoned(modal: &mut Option<Modal>) {
    match modal {
        Some(Modal::Question(_, answer)) => answer.closed().await,
        Some(Modal::Choice(_, Choice::Select(_, answer))) => answer.closed().await,
        Some(Modal::Choice(_, Choice::Confirm(answer))) => answer.closed().await,
        Some(Modal::Text(entry)) => entry.answer.closed().await,
        _ => std::future::pending().await,
    }
}

impl App {
    /// Queues `asked` and shows it when its turn comes.
    pub(super) fn ask(&mut self, asked: Asked) {
        self.waiting.push_back(asked);
        self.open_next();
    }

    /// Shows the next question still waited for, unless a question is open already (a
    /// command's picker is closed for it).
    pub(super) fn open_next(&mut self) {
        if matches!(
            self.modal,
            Some(Modal::Question(..) | Modal::Choice(..) | Modal::Text(..))
        ) {
            return;
        }
        while let Some(asked) = self.waiting.pop_front() {
            if asked.abandoned() {
                continue;
            }
            if let Some(Modal::Picker(_, pending)) = self.modal.take() {
                commands::picked(self, pending, None);
            }
            self.open(asked);
            break;
        }
    }

    fn open(&mut self, asked: Asked) {
        let theme = self.transcript.theme().clone();
        self.transcript.dirty = true;
        let modal = match asked {
            Asked::Question(question) => {
                let body = question
                    .diff
                    .as_deref()
                    .map(|d| super::cards::diff_lines(d, &theme, usize::MAX))
                    .unwrap_or_default();
                let items = question.choices.iter().map(Item::new).collect();
                let picker = Picker::new(question.title, items)
                    .with_body(body)
                    .unfiltered();
                Modal::Question(Box::new(picker), question.answer)
            }
            Asked::Extension(Dialog::Select {
                title,
                options,
                deadline,
                answer,
            }) => {
                let items = options.iter().map(Item::new).collect();
                let picker = Picker::new(title, items)
                    .unfiltered()
                    .with_deadline(deadline);
                Modal::Choice(Box::new(picker), Choice::Select(options, answer))
            }
            Asked::Extension(Dialog::Confirm {
                title,
                message,
                deadline,
                answer,
            }) => {
                let body = sanitize(&message)
                    .split('\n')
                    .map(|l| Line::from(Span::styled(l.to_string(), theme.text)))
                    .collect();
                let items = vec![Item::new("Yes"), Item::new("No")];
                let picker = Picker::new(title, items)
                    .with_body(body)
                    .unfiltered()
                    .with_deadline(deadline);
                Modal::Choice(Box::new(picker), Choice::Confirm(answer))
            }
            Asked::Extension(Dialog::Text {
                title,
                placeholder,
                prefill,
                multiline,
                deadline,
                answer,
            }) => {
                let draft = self.editor.text();
                self.editor
                    .set_text(prefill.as_deref().unwrap_or(""), &theme);
                if let Some(placeholder) = placeholder {
                    self.editor.set_placeholder(&placeholder, &theme);
                }
                self.editor.dismiss_completions();
                Modal::Text(Box::new(TextEntry {
                    title,
                    multiline,
                    answer,
                    draft,
                    deadline,
                }))
            }
        };
        self.modal = Some(modal);
    }

    /// The open dialog's asker stopped waiting: it is closed.
    pub(super) fn dialog_abandoned(&mut self) {
        if let Some(Modal::Text(entry)) = &self.modal {
            let draft = entry.draft.clone();
            let theme = self.transcript.theme().clone();
            self.editor.set_text(&draft, &theme);
        }
        if matches!(
            self.modal,
            Some(Modal::Question(..) | Modal::Choice(..) | Modal::Text(..))
        ) {
            self.modal = None;
        }
        self.transcript.dirty = true;
        self.open_next();
    }

    /// A key while an extension's picker is open.
    pub(super) fn choice_key(&mut self, mut picker: Box<Picker>, choice: Choice, key: KeyEvent) {
        match (picker.key(key), choice) {
            (Picked::Open, choice) => self.modal = Some(Modal::Choice(picker, choice)),
            (Picked::Chosen(i), Choice::Select(options, answer)) => {
                let _ = answer.send(options.get(i).cloned());
            }
            (Picked::Dismissed, Choice::Select(_, answer)) => {
                let _ = answer.send(None);
            }
            (picked, Choice::Confirm(answer)) => {
                let _ = answer.send(picked == Picked::Chosen(0));
            }
        }
        self.open_next();
    }

    /// A key while an extension's text entry has the editor.
    pub(super) fn text_key(&mut self, entry: Box<TextEntry>, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let theme = self.transcript.theme().clone();
        let answer = match key.code {
            KeyCode::Esc => None,
            KeyCode::Char('c') if ctrl => None,
            KeyCode::Enter if shift || alt => {
                if entry.multiline {
                    self.editor.newline();
                }
                self.modal = Some(Modal::Text(entry));
                return;
            }
            KeyCode::Char('j') if ctrl => {
                if entry.multiline {
                    self.editor.newline();
                }
                self.modal = Some(Modal::Text(entry));
                return;
            }
            KeyCode::Enter => Some(self.editor.text()),
            _ => {
                self.editor.area().input(key);
                self.modal = Some(Modal::Text(entry));
                return;
            }
        };
        let TextEntry {
            answer: to, draft, ..
        } = *entry;
        let _ = to.send(answer);
        self.editor.set_text(&draft, &theme);
        self.open_next();
    }
}
