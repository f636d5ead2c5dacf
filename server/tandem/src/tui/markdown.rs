//! Markdown to styled terminal lines (pulldown-cmark), for answers as they stream.
//! TEMPORARY plain-text stand-in until the markdown renderer lands.

use ratatui::text::{Line, Span};

use super::text::{sanitize, wrap};
use super::theme::Theme;

/// Renders `text` at `width`.
pub fn render(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    sanitize(text)
        .split('\n')
        .flat_map(|l| wrap(Line::from(Span::styled(l.to_string(), theme.text)), width))
        .collect()
}

/// A streamed answer.
#[derive(Default)]
pub struct MarkdownStream {
    text: String,
    done: usize,
}

impl MarkdownStream {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a delta.
    pub fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
    }
    /// Finished lines.
    pub fn take_finished(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let Some(end) = self.text[self.done..].rfind('\n') else {
            return Vec::new();
        };
        let end = self.done + end;
        let out = render(&self.text[self.done..end], width, theme);
        self.done = end + 1;
        out
    }
    /// The tail.
    pub fn tail(&self, width: u16, max_lines: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = render(&self.text[self.done..], width, theme);
        let skip = out.len().saturating_sub(max_lines);
        out.drain(..skip);
        out
    }
    /// The rest.
    pub fn finish(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let out = render(&self.text[self.done..], width, theme);
        self.done = self.text.len();
        out
    }
    /// Everything pushed.
    pub fn text(&self) -> &str {
        &self.text
    }
}
