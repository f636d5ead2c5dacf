//! The input editor: ratatui-textarea (multi-line editing, words, undo, paste) plus what a
//! prompt needs around it — history on Up/Down at the first or last line, and completion of
//! `/commands` and `@files` under the text.

use std::path::Path;

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};
use ratatui::Frame;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use super::text::sanitize;
use super::theme::Theme;

/// Rows the editor grows to before it scrolls.
const MAX_ROWS: u16 = 10;
/// Completion rows shown.
const COMPLETION_ROWS: usize = 8;

/// A completion: what replaces the word, and what is said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The text that replaces the word being completed.
    pub replacement: String,
    /// A description.
    pub detail: String,
}

/// See the module docs.
pub struct Editor {
    area: TextArea<'static>,
    history: Vec<String>,
    /// Position in `history` while browsing it (`history.len()`: the draft).
    browsing: usize,
    draft: String,
    completions: Vec<Completion>,
    selected: usize,
}

impl Editor {
    /// An empty editor.
    pub fn new(theme: &Theme) -> Editor {
        Editor {
            area: fresh_area(theme),
            history: Vec::new(),
            browsing: 0,
            draft: String::new(),
            completions: Vec::new(),
            selected: 0,
        }
    }

    /// Adds past prompts (oldest first) to the history.
    pub fn add_history(&mut self, prompts: impl IntoIterator<Item = String>) {
        for prompt in prompts {
            self.remember(prompt);
        }
        self.browsing = self.history.len();
    }

    fn remember(&mut self, prompt: String) {
        if prompt.trim().is_empty() || self.history.last() == Some(&prompt) {
            return;
        }
        self.history.push(prompt);
    }

    /// The text.
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.area.is_empty()
    }

    /// Takes the text out (remembered in the history), leaving the editor empty.
    pub fn take(&mut self, theme: &Theme) -> String {
        let text = self.text();
        self.remember(text.clone());
        self.browsing = self.history.len();
        self.draft.clear();
        self.area = fresh_area(theme);
        self.completions.clear();
        text
    }

    /// Replaces the text (the cursor at its end).
    pub fn set_text(&mut self, text: &str, theme: &Theme) {
        let mut area = fresh_area(theme);
        area.insert_str(text);
        self.area = area;
    }

    /// Shows `text` while the editor is empty (an extension's input dialog; the next
    /// [`Editor::set_text`] or [`Editor::take`] brings the usual one back).
    pub fn set_placeholder(&mut self, text: &str, theme: &Theme) {
        self.area
            .set_placeholder_text(sanitize(text).replace('\n', " "));
        self.area.set_placeholder_style(theme.dim);
    }

    /// Clears the text (kept in the history, as a shell does).
    pub fn clear(&mut self, theme: &Theme) {
        let _ = self.take(theme);
    }

    /// The textarea, for keys it handles itself.
    pub fn area(&mut self) -> &mut TextArea<'static> {
        &mut self.area
    }

    /// Inserts pasted text as it is (newlines kept, carriage returns dropped).
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.area.insert_str(text);
    }

    /// A new line at the cursor.
    pub fn newline(&mut self) {
        self.area.insert_newline();
    }

    /// Up: the previous prompt when the cursor is on the first line; `false` otherwise.
    pub fn history_up(&mut self, theme: &Theme) -> bool {
        if self.area.cursor().0 != 0 || self.browsing == 0 {
            return false;
        }
        if self.browsing == self.history.len() {
            self.draft = self.text();
        }
        self.browsing -= 1;
        let text = self.history[self.browsing].clone();
        self.set_text(&text, theme);
        true
    }

    /// Down: the next prompt (then the draft) when the cursor is on the last line.
    pub fn history_down(&mut self, theme: &Theme) -> bool {
        let last = self.area.lines().len().saturating_sub(1);
        if self.area.cursor().0 != last || self.browsing >= self.history.len() {
            return false;
        }
        self.browsing += 1;
        let text = if self.browsing == self.history.len() {
            std::mem::take(&mut self.draft)
        } else {
            self.history[self.browsing].clone()
        };
        self.set_text(&text, theme);
        true
    }

    /// The word being typed at the cursor, when it can be completed: a `/command` at the start
    /// of the text, or an `@path`.
    pub fn completing(&self) -> Option<String> {
        let ratatui_textarea::DataCursor(row, col) = self.area.cursor();
        let line = self.area.lines().get(row)?;
        let before: String = line.chars().take(col).collect();
        let word = before.rsplit(char::is_whitespace).next()?;
        if row == 0 && word.starts_with('/') && before == word {
            return Some(word.to_string());
        }
        if word.starts_with('@') {
            return Some(word.to_string());
        }
        None
    }

    /// Sets the completions offered for the current word.
    pub fn offer(&mut self, completions: Vec<Completion>) {
        if completions != self.completions {
            self.selected = 0;
        }
        self.completions = completions;
    }

    /// Whether completions are shown.
    pub fn has_completions(&self) -> bool {
        !self.completions.is_empty()
    }

    /// Moves the completion selection.
    pub fn move_completion(&mut self, down: bool) {
        let n = self.completions.len();
        if n == 0 {
            return;
        }
        self.selected = if down {
            (self.selected + 1) % n
        } else {
            (self.selected + n - 1) % n
        };
    }

    /// Hides the completions.
    pub fn dismiss_completions(&mut self) {
        self.completions.clear();
    }

    /// Replaces the word being completed with the selected completion; whether there was one.
    pub fn accept_completion(&mut self) -> bool {
        let Some(choice) = self.completions.get(self.selected).cloned() else {
            return false;
        };
        let Some(word) = self.completing() else {
            return false;
        };
        for _ in 0..word.chars().count() {
            self.area.delete_char();
        }
        self.area.insert_str(&choice.replacement);
        self.completions.clear();
        true
    }

    /// Rows the editor needs at `width` (its border included), and the completions under it.
    pub fn height(&self, width: u16) -> u16 {
        let inner = width.saturating_sub(2).max(1) as usize;
        let rows: usize = self
            .area
            .lines()
            .iter()
            .map(|l| super::text::width(l) / inner + 1)
            .sum();
        (rows as u16).clamp(1, MAX_ROWS) + 2 + self.completions.len().min(COMPLETION_ROWS) as u16
    }

    /// Draws the editor (and its completions under it) in `area`, `title` on its top border.
    pub fn render(&self, frame: &mut Frame<'_>, area: Rect, theme: &Theme, title: &'static str) {
        let shown = self.completions.len().min(COMPLETION_ROWS) as u16;
        let box_height = area.height.saturating_sub(shown);
        let mut text_area = self.area.clone();
        text_area.set_block(
            Block::default()
                .borders(Borders::TOP | Borders::BOTTOM)
                .border_style(theme.dim)
                .title(Span::styled(title, theme.dim)),
        );
        frame.render_widget(
            &text_area,
            Rect {
                height: box_height,
                ..area
            },
        );
        if shown > 0 {
            let start = self.selected.saturating_sub(COMPLETION_ROWS - 1);
            let lines: Vec<Line<'static>> = self
                .completions
                .iter()
                .enumerate()
                .skip(start)
                .take(COMPLETION_ROWS)
                .map(|(i, c)| {
                    let style = if i == self.selected {
                        theme.accent
                    } else {
                        theme.text
                    };
                    // A file name or a template's description comes from the repository.
                    Line::from(vec![
                        Span::styled(format!(" {} ", sanitize(&c.replacement)), style),
                        Span::styled(sanitize(&c.detail).into_owned(), theme.dim),
                    ])
                })
                .collect();
            frame.render_widget(
                ratatui::widgets::Paragraph::new(lines),
                Rect {
                    y: area.y + box_height,
                    height: shown,
                    ..area
                },
            );
        }
    }
}

fn fresh_area(theme: &Theme) -> TextArea<'static> {
    let mut area = TextArea::default();
    area.set_cursor_line_style(Style::default());
    area.set_wrap_mode(WrapMode::WordOrGlyph);
    area.set_placeholder_text("Ask anything · / for commands · @ for files");
    area.set_placeholder_style(theme.dim);
    area.move_cursor(CursorMove::End);
    area
}

/// Files under `cwd` whose relative path contains `query` (case ignored), for `@`
/// completion: a bounded walk that skips hidden folders and build output.
pub fn file_completions(cwd: &Path, query: &str, limit: usize) -> Vec<Completion> {
    const SKIP: &[&str] = &["node_modules", "target", "dist", "build", "__pycache__"];
    const MAX_VISITED: usize = 20_000;
    let query = query.to_lowercase();
    let mut out = Vec::new();
    let mut stack = vec![cwd.to_path_buf()];
    let mut visited = 0;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            visited += 1;
            if visited > MAX_VISITED || out.len() >= limit {
                return out;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let relative = path
                .strip_prefix(cwd)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if kind.is_dir() {
                if !SKIP.contains(&name.as_str()) {
                    stack.push(path);
                }
                continue;
            }
            if relative.to_lowercase().contains(&query) {
                let replacement = if relative.contains(char::is_whitespace) {
                    format!("@\"{relative}\"")
                } else {
                    format!("@{relative}")
                };
                out.push(Completion {
                    replacement,
                    detail: String::new(),
                });
            }
        }
    }
    out
}
