//! GFM tables laid out for a terminal: aligned columns when they fit, otherwise one
//! `header: value` row per cell (wrapped, with a hanging indent) and a blank row between rows.

use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{trim_end, trim_end_line};
use crate::tui::text::{hard_wrap_with_prefix, spans_width, wrap_with_prefix};
use crate::tui::theme::Theme;

/// A table's cells as the parser gave them.
pub(super) struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    /// How many of `rows` are the header (GFM has one).
    head_rows: usize,
    row: Vec<Vec<Span<'static>>>,
}

impl Table {
    pub(super) fn new(alignments: Vec<Alignment>) -> Self {
        Table {
            alignments,
            rows: Vec::new(),
            head_rows: 0,
            row: Vec::new(),
        }
    }

    pub(super) fn push_cell(&mut self, cell: Vec<Span<'static>>) {
        self.row.push(cell);
    }

    pub(super) fn end_row(&mut self, head: bool) {
        self.rows.push(std::mem::take(&mut self.row));
        if head {
            self.head_rows = self.rows.len();
        }
    }

    /// The table's rows at `width`, behind `first` (the first row) and `rest` (the others).
    pub(super) fn layout(
        self,
        width: u16,
        first: Vec<Span<'static>>,
        rest: Vec<Span<'static>>,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let room = usize::from(width.max(1)).saturating_sub(spans_width(&rest));
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![1usize; columns];
        for row in &self.rows {
            for (cell, column) in row.iter().zip(widths.iter_mut()) {
                *column = (*column).max(spans_width(cell));
            }
        }
        let total = widths.iter().sum::<usize>() + 3 * columns.saturating_sub(1);
        if total <= room {
            self.columns(&widths, width, first, rest, theme)
        } else {
            self.records(width, first, rest)
        }
    }

    /// Aligned columns separated by a dim ` │ `, a rule under the header.
    fn columns(
        &self,
        widths: &[usize],
        width: u16,
        first: Vec<Span<'static>>,
        rest: Vec<Span<'static>>,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let separator = Span::styled(" │ ", theme.dim);
        let mut out = Vec::new();
        let mut prefix = first;
        let mut emit = |line: Line<'static>, prefix: &mut Vec<Span<'static>>| {
            out.extend(hard_wrap_with_prefix(
                trim_end_line(line),
                width,
                std::mem::replace(prefix, rest.clone()),
                rest.clone(),
            ));
        };
        for (r, row) in self.rows.iter().enumerate() {
            let mut spans = Vec::new();
            for (i, cell_width) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(separator.clone());
                }
                let cell = row.get(i).cloned().unwrap_or_default();
                let alignment = self.alignments.get(i).copied().unwrap_or(Alignment::None);
                spans.extend(pad(cell, *cell_width, alignment));
            }
            emit(Line::from(spans), &mut prefix);
            if r + 1 == self.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                emit(
                    Line::from(Span::styled(rule.join("─┼─"), theme.dim)),
                    &mut prefix,
                );
            }
        }
        out
    }

    /// Too wide for columns: each body row as `header: value` rows, a blank row between.
    fn records(
        &self,
        width: u16,
        first: Vec<Span<'static>>,
        rest: Vec<Span<'static>>,
    ) -> Vec<Line<'static>> {
        let (head, body) = match self.rows.get(self.head_rows..) {
            Some(body) if self.head_rows > 0 && !body.is_empty() => {
                (self.rows.get(self.head_rows - 1), body)
            }
            _ => (None, self.rows.as_slice()),
        };
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let mut hanging = rest.clone();
        hanging.push(Span::raw("  "));
        let mut out = Vec::new();
        let mut prefix = first;
        for (r, row) in body.iter().enumerate() {
            if r > 0 {
                out.push(trim_end(rest.clone()));
            }
            for (i, cell) in row.iter().enumerate() {
                let mut spans = Vec::new();
                if let Some(name) = head.and_then(|head| head.get(i)) {
                    spans.extend(name.iter().map(|s| s.clone().patch_style(bold)));
                    spans.push(Span::styled(": ", bold));
                }
                spans.extend(cell.iter().cloned());
                out.extend(wrap_with_prefix(
                    Line::from(spans),
                    width,
                    std::mem::replace(&mut prefix, rest.clone()),
                    hanging.clone(),
                ));
            }
        }
        out
    }
}

/// `cell` padded to `width` columns as the column is aligned.
fn pad(cell: Vec<Span<'static>>, width: usize, alignment: Alignment) -> Vec<Span<'static>> {
    let gap = width.saturating_sub(spans_width(&cell));
    let (left, right) = match alignment {
        Alignment::Right => (gap, 0),
        Alignment::Center => (gap / 2, gap - gap / 2),
        Alignment::Left | Alignment::None => (0, gap),
    };
    let mut spans = Vec::with_capacity(cell.len() + 2);
    if left > 0 {
        spans.push(Span::raw(" ".repeat(left)));
    }
    spans.extend(cell);
    if right > 0 {
        spans.push(Span::raw(" ".repeat(right)));
    }
    spans
}
