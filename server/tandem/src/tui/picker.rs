//! A list to pick from, drawn in the live area: the model and session pickers, the session
//! tree, questions. Typing filters it (every word must appear, case ignored); Up/Down move,
//! Enter picks, Esc dismisses.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};

use super::text::{sanitize, wrap};
use super::theme::Theme;

/// One choice: its label and a dimmed detail after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What is chosen.
    pub label: String,
    /// Said after it, dimmed.
    pub detail: String,
}

impl Item {
    /// A choice with no detail.
    pub fn new(label: impl Into<String>) -> Item {
        Item {
            label: label.into(),
            detail: String::new(),
        }
    }

    /// A choice with a detail.
    pub fn with_detail(label: impl Into<String>, detail: impl Into<String>) -> Item {
        Item {
            label: label.into(),
            detail: detail.into(),
        }
    }
}

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    /// Still open.
    Open,
    /// This item (its index in the full list) was picked.
    Chosen(usize),
    /// Dismissed.
    Dismissed,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct Picker {
    title: String,
    body: Vec<Line<'static>>,
    items: Vec<Item>,
    filter: String,
    /// Indexes of the items the filter keeps.
    shown: Vec<usize>,
    /// Position in `shown`.
    selected: usize,
    filterable: bool,
    /// When whoever asked stops waiting: the seconds left are shown after the title.
    deadline: Option<Instant>,
}

impl Picker {
    /// A picker titled `title` over `items`, the first selected.
    pub fn new(title: impl Into<String>, items: Vec<Item>) -> Picker {
        let shown = (0..items.len()).collect();
        Picker {
            title: title.into(),
            body: Vec::new(),
            items,
            filter: String::new(),
            shown,
            selected: 0,
            filterable: true,
            deadline: None,
        }
    }

    /// Lines shown between the title and the choices (a diff).
    pub fn with_body(mut self, body: Vec<Line<'static>>) -> Picker {
        self.body = body;
        self
    }

    /// Letters do not filter (a yes/no question: keys are not typed into it).
    pub fn unfiltered(mut self) -> Picker {
        self.filterable = false;
        self
    }

    /// Counts down to `deadline` after the title.
    pub fn with_deadline(mut self, deadline: Option<Instant>) -> Picker {
        self.deadline = deadline;
        self
    }

    /// When whoever asked stops waiting, if they do.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Starts with item `index` selected.
    pub fn select(mut self, index: usize) -> Picker {
        if let Some(pos) = self.shown.iter().position(|&i| i == index) {
            self.selected = pos;
        }
        self
    }

    /// The items.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Handles a key.
    pub fn key(&mut self, key: KeyEvent) -> Picked {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Picked::Dismissed,
            KeyCode::Char('c') if ctrl => return Picked::Dismissed,
            KeyCode::Enter => {
                return match self.shown.get(self.selected) {
                    Some(&i) => Picked::Chosen(i),
                    None => Picked::Open,
                }
            }
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.down(1),
            KeyCode::Char('n') if ctrl => self.down(1),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::PageDown => self.down(10),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = self.shown.len().saturating_sub(1),
            KeyCode::Backspace if self.filterable => {
                self.filter.pop();
                self.refilter();
            }
            KeyCode::Char(c) if self.filterable && !ctrl => {
                self.filter.push(c);
                self.refilter();
            }
            _ => {}
        }
        Picked::Open
    }

    fn down(&mut self, n: usize) {
        self.selected = (self.selected + n).min(self.shown.len().saturating_sub(1));
    }

    fn refilter(&mut self) {
        let words: Vec<String> = self
            .filter
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.shown = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, item)| {
                let text = format!("{} {}", item.label, item.detail).to_lowercase();
                words.iter().all(|w| text.contains(w.as_str()))
            })
            .map(|(i, _)| i)
            .collect();
        self.selected = 0;
    }

    /// The picker's lines at `width`, at most `rows` (the choices scrolled to the selection).
    pub fn render(&self, width: u16, rows: usize, theme: &Theme) -> Vec<Line<'static>> {
        // A title may have several lines (an extension's question quoting a command).
        let title = format!("{}{}", self.title, countdown(self.deadline));
        let mut out: Vec<Line<'static>> = sanitize(&title)
            .split('\n')
            .flat_map(|l| {
                wrap(
                    Line::from(Span::styled(l.to_string(), theme.tool_title)),
                    width,
                )
            })
            .collect();
        let hint = if self.filterable {
            if self.filter.is_empty() {
                "↑↓ move · Enter pick · Esc cancel · type to filter".to_string()
            } else {
                format!("filter: {}", self.filter)
            }
        } else {
            "↑↓ move · Enter pick · Esc cancel".to_string()
        };
        let room_for_items = rows.saturating_sub(out.len() + 1).max(3);
        let body_rows = rows
            .saturating_sub(out.len() + 1 + self.shown.len().min(room_for_items))
            .min(self.body.len());
        for line in self.body.iter().take(body_rows) {
            out.extend(wrap(line.clone(), width));
        }
        if body_rows < self.body.len() {
            out.push(Line::from(Span::styled(
                format!("… {} more lines", self.body.len() - body_rows),
                theme.dim,
            )));
        }
        let room = rows.saturating_sub(out.len() + 1).max(1);
        let start = self.selected.saturating_sub(room.saturating_sub(1));
        if self.shown.is_empty() {
            out.push(Line::from(Span::styled("  (nothing matches)", theme.dim)));
        }
        for (pos, &i) in self.shown.iter().enumerate().skip(start).take(room) {
            let item = &self.items[i];
            let selected = pos == self.selected;
            let marker = if selected { "› " } else { "  " };
            let label_style = if selected { theme.accent } else { theme.text };
            let mut spans = vec![
                Span::styled(marker, theme.accent),
                Span::styled(sanitize(&item.label).into_owned(), label_style),
            ];
            if !item.detail.is_empty() {
                spans.push(Span::styled(
                    format!("  {}", sanitize(&item.detail)),
                    theme.dim,
                ));
            }
            let mut line = wrap(Line::from(spans), width);
            line.truncate(1);
            out.extend(line);
        }
        out.push(Line::from(Span::styled(hint, theme.dim)));
        out
    }
}

/// ` (Ns)`: the whole seconds left until `deadline` (rounded up), or nothing without one.
pub fn countdown(deadline: Option<Instant>) -> String {
    match deadline {
        Some(deadline) => {
            let left = deadline.saturating_duration_since(Instant::now());
            format!(" ({}s)", left.as_millis().div_ceil(1000))
        }
        None => String::new(),
    }
}
