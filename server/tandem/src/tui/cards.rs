//! Tool calls as compact cards: a title line with the call's state, then what the call did —
//! a read's range, a command's output tail, an edit's or write's diff with the file's own line
//! numbers, the first lines of anything else, or the error.

use std::path::Path;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;
use tandem_ai::UserBlock;
use tandem_coding::calls::ProposedChange;
use tandem_coding::meta::describe_tool_call;

use super::text::{sanitize, wrap_with_prefix};
use super::theme::Theme;

/// Output lines a finished command's card keeps (its end), unless expanded.
const BASH_LINES: usize = 12;
/// Output lines a running command's card shows (its end).
const LIVE_BASH_LINES: usize = 6;
/// Result lines of other tools, unless expanded.
const OTHER_LINES: usize = 6;
/// Diff lines of an edit's card, unless expanded.
const DIFF_LINES: usize = 60;

/// Where a call is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallState {
    /// The model is still writing its arguments.
    Streaming,
    /// It runs.
    Running,
    /// It finished.
    Done,
    /// It failed (or was refused).
    Failed,
}

/// One tool call, as a card.
#[derive(Debug, Clone)]
pub struct Card {
    /// The call id.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments (once complete).
    pub args: Value,
    /// Its state.
    pub state: CallState,
    /// Text output so far (a command's, as it runs) or the result's text.
    pub output: String,
    /// The change an edit or write proposed.
    pub change: Option<ProposedChange>,
}

impl Card {
    /// A call the model started writing.
    pub fn new(id: &str, tool: &str) -> Card {
        Card {
            id: id.to_string(),
            tool: tool.to_string(),
            args: Value::Null,
            state: CallState::Streaming,
            output: String::new(),
            change: None,
        }
    }

    /// The card's lines at `width`; `live` when it is drawn in the live area (a running
    /// command shows fewer lines), `expanded` to show everything.
    pub fn render(
        &self,
        width: u16,
        cwd: &Path,
        theme: &Theme,
        live: bool,
        expanded: bool,
    ) -> Vec<Line<'static>> {
        let info = describe_tool_call(&self.tool, &self.args, cwd);
        let (mark, mark_style) = match self.state {
            CallState::Streaming | CallState::Running => ("○ ", theme.accent),
            CallState::Done => ("● ", theme.success),
            CallState::Failed => ("✗ ", theme.error),
        };
        let mut title = info.title;
        if self.tool == "bash" {
            if let Some(command) = self.args.get("command").and_then(Value::as_str) {
                title = format!("$ {}", first_line(command));
            }
        }
        let mut out = wrap_with_prefix(
            Line::from(Span::styled(
                sanitize(&title).into_owned(),
                theme.tool_title,
            )),
            width,
            vec![Span::styled(mark, mark_style)],
            vec![Span::raw("  ")],
        );
        let body = match (&self.state, self.tool.as_str()) {
            (CallState::Streaming, _) => Vec::new(),
            (CallState::Failed, _) => self.error_lines(theme, expanded),
            (_, "bash") => {
                let keep = match (live, expanded) {
                    (_, true) => usize::MAX,
                    (true, false) => LIVE_BASH_LINES,
                    (false, false) => BASH_LINES,
                };
                tail_lines(&self.output, keep, theme.dim)
            }
            (CallState::Done, "edit" | "write") => match &self.change {
                Some(change) => diff_lines(
                    &change.diff,
                    theme,
                    if expanded { usize::MAX } else { DIFF_LINES },
                ),
                None => head_lines(&self.output, OTHER_LINES, theme.dim),
            },
            (CallState::Done, "read") => {
                let lines = self.output.lines().count();
                vec![Line::from(Span::styled(
                    format!("{lines} line{}", if lines == 1 { "" } else { "s" }),
                    theme.dim,
                ))]
            }
            (CallState::Done, _) => head_lines(
                &self.output,
                if expanded { usize::MAX } else { OTHER_LINES },
                theme.dim,
            ),
            (CallState::Running, _) => Vec::new(),
        };
        for line in body {
            out.extend(wrap_with_prefix(
                line,
                width,
                vec![Span::raw("  ")],
                vec![Span::raw("  ")],
            ));
        }
        out
    }

    fn error_lines(&self, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        let keep = if expanded { usize::MAX } else { OTHER_LINES };
        let mut lines = Vec::new();
        if self.tool == "bash" {
            lines = tail_lines(&self.output, keep, theme.error);
        } else {
            lines.extend(head_lines(&self.output, keep, theme.error));
        }
        lines
    }
}

/// The text of a tool result's blocks (images named).
pub fn result_text(content: &[UserBlock]) -> String {
    let mut out = String::new();
    for block in content {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        match block {
            UserBlock::Text(t) => out.push_str(&t.text),
            UserBlock::Image(i) => out.push_str(&format!("[image {}]", i.mime_type)),
        }
    }
    out
}

fn first_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").to_string();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}

/// The last `keep` lines of `text`, with a count of those left out first.
fn tail_lines(text: &str, keep: usize, style: Style) -> Vec<Line<'static>> {
    let text = sanitize(text.trim_end_matches('\n'));
    if text.is_empty() {
        return Vec::new();
    }
    let all: Vec<&str> = text.split('\n').collect();
    let skipped = all.len().saturating_sub(keep);
    let mut out = Vec::new();
    if skipped > 0 {
        out.push(Line::from(Span::styled(
            format!(
                "… {skipped} earlier line{}",
                if skipped == 1 { "" } else { "s" }
            ),
            style,
        )));
    }
    out.extend(
        all[skipped..]
            .iter()
            .map(|l| Line::from(Span::styled(l.to_string(), style))),
    );
    out
}

/// The first `keep` lines of `text`, with a count of those left out after.
fn head_lines(text: &str, keep: usize, style: Style) -> Vec<Line<'static>> {
    let text = sanitize(text.trim_end_matches('\n'));
    if text.is_empty() {
        return Vec::new();
    }
    let all: Vec<&str> = text.split('\n').collect();
    let mut out: Vec<Line<'static>> = all
        .iter()
        .take(keep)
        .map(|l| Line::from(Span::styled(l.to_string(), style)))
        .collect();
    let more = all.len().saturating_sub(keep);
    if more > 0 {
        out.push(Line::from(Span::styled(
            format!("… {more} more line{}", if more == 1 { "" } else { "s" }),
            style,
        )));
    }
    out
}

/// A unified diff's lines with the file's line numbers (the new file's for added and context
/// lines, the old file's for removed ones), headers left out, at most `keep` lines.
pub fn diff_lines(diff: &str, theme: &Theme, keep: usize) -> Vec<Line<'static>> {
    let diff = sanitize(diff);
    let (mut old, mut new) = (0u64, 0u64);
    let mut rows: Vec<(Option<u64>, char, &str)> = Vec::new();
    let mut hunks = 0;
    for line in diff.split('\n') {
        if line.starts_with("--- ") || line.starts_with("+++ ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("@@ ") {
            if let Some((o, n)) = hunk_starts(rest) {
                if hunks > 0 {
                    rows.push((None, '…', ""));
                }
                hunks += 1;
                old = o;
                new = n;
            }
            continue;
        }
        let mut chars = line.chars();
        match chars.next() {
            Some('+') => {
                rows.push((Some(new), '+', chars.as_str()));
                new += 1;
            }
            Some('-') => {
                rows.push((Some(old), '-', chars.as_str()));
                old += 1;
            }
            Some(' ') => {
                rows.push((Some(new), ' ', chars.as_str()));
                old += 1;
                new += 1;
            }
            _ => {}
        }
    }
    let digits = rows
        .iter()
        .filter_map(|(n, _, _)| *n)
        .max()
        .unwrap_or(1)
        .to_string()
        .len();
    let mut out: Vec<Line<'static>> = rows
        .iter()
        .take(keep)
        .map(|(number, sign, text)| {
            let style = match sign {
                '+' => theme.diff_added,
                '-' => theme.diff_removed,
                _ => theme.diff_context,
            };
            let number = match number {
                Some(n) => format!("{n:>digits$} "),
                None => format!("{:>digits$} ", "⋮"),
            };
            Line::from(vec![
                Span::styled(number, theme.line_number),
                Span::styled(format!("{sign}{text}"), style),
            ])
        })
        .collect();
    if rows.len() > keep {
        out.push(Line::from(Span::styled(
            format!("… {} more diff lines (Ctrl+O shows all)", rows.len() - keep),
            theme.dim,
        )));
    }
    out
}

/// The old and new start lines of a hunk header's rest (`-a,b +c,d @@`).
fn hunk_starts(rest: &str) -> Option<(u64, u64)> {
    let mut parts = rest.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let start = |s: &str| s.split(',').next()?.parse::<u64>().ok();
    Some((start(old)?, start(new)?))
}

#[cfg(test)]
#[path = "cards_tests.rs"]
mod tests;
