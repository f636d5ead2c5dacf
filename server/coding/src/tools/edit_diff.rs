//! The edit result's `details`: pi's compact line diff and the first changed line.
//!
//! Not a unified diff: every shown line carries its own number (`+N` new file, `-N` old file,
//! ` N` context, numbered in the old file), padded to the width of the longest file's line
//! count, with up to four lines of context around each change and ` ...` where lines were
//! skipped. UIs render it as is, and pi's session files store it, so the format is pi's to the
//! character. The line diff itself comes from `similar` (Myers, like pi's `diff` package),
//! with a pass that places changes among identical lines where pi's library does.

use std::fmt::Write as _;
use std::ops::Range;

use similar::{capture_diff_slices, Algorithm, DiffOp};

/// Context lines shown before and after each change.
pub(crate) const CONTEXT_LINES: usize = 4;

/// What the edit tool reports about a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffDetails {
    /// The diff text.
    pub diff: String,
    /// The first changed line, numbered in the new file; `None` when nothing changed.
    pub first_changed_line: Option<usize>,
}

/// What the diff does with a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// In both files.
    Same,
    /// Only in the old file.
    Removed,
    /// Only in the new file.
    Added,
}

/// One run of the line diff, as ranges of old-file and new-file lines (`Removed` has an empty
/// new range, `Added` an empty old range).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    kind: Kind,
    old: Range<usize>,
    new: Range<usize>,
}

/// Diffs `old` against `new` (both with LF line endings) in pi's format.
pub(crate) fn diff_details(old: &str, new: &str) -> DiffDetails {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut script = edit_script(&old_lines, &new_lines);
    settle_late(&mut script, &old_lines, &new_lines);
    let parts = group(&script);
    // pi counts `text.split("\n")` pieces: one more than the newlines.
    let line_count = |text: &str| text.bytes().filter(|&b| b == b'\n').count() + 1;
    let width = line_count(old).max(line_count(new)).to_string().len();
    render(&parts, &old_lines, &new_lines, width)
}

/// The Myers edit script, one entry per line. The common head and tail are set aside first:
/// Myers would skip them anyway, and `similar`'s text API would hash every line of both files
/// before getting there (the bulk of the time for one edit in a large file).
fn edit_script(old_lines: &[&str], new_lines: &[&str]) -> Vec<Kind> {
    let head = old_lines
        .iter()
        .zip(new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let tail = old_lines[head..]
        .iter()
        .rev()
        .zip(new_lines[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let old_middle = &old_lines[head..old_lines.len() - tail];
    let new_middle = &new_lines[head..new_lines.len() - tail];
    let mut script = Vec::with_capacity(old_lines.len().max(new_lines.len()));
    script.extend(std::iter::repeat_n(Kind::Same, head));
    for op in capture_diff_slices(Algorithm::Myers, old_middle, new_middle) {
        let (old_len, new_len) = (op.old_range().len(), op.new_range().len());
        match op {
            DiffOp::Equal { .. } => script.extend(std::iter::repeat_n(Kind::Same, old_len)),
            _ => {
                script.extend(std::iter::repeat_n(Kind::Removed, old_len));
                script.extend(std::iter::repeat_n(Kind::Added, new_len));
            }
        }
    }
    script.extend(std::iter::repeat_n(Kind::Same, tail));
    script
}

/// Moves the changes of the edit script (one entry per line) as late as identical lines allow.
///
/// Where a change could sit at several places among identical lines, Myers variants choose
/// differently; pi's diff library matches common lines as early as possible, leaving changes
/// as late as possible. This moves `similar`'s choice there: a common line right after a run
/// of removals (insertions) takes the place of the run's earliest line equal to it, and a run
/// trades places with a run of the other kind after it.
fn settle_late(script: &mut [Kind], old_lines: &[&str], new_lines: &[&str]) {
    // Change runs with their first line in both files, last first, so that a run moving down
    // meets the ones after it already settled.
    let mut runs = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    for (at, kind) in script.iter().enumerate() {
        if *kind != Kind::Same && (at == 0 || script[at - 1] != *kind) {
            runs.push((at, old_at, new_at));
        }
        old_at += usize::from(*kind != Kind::Added);
        new_at += usize::from(*kind != Kind::Removed);
    }
    for &(mut start, mut old_at, mut new_at) in runs.iter().rev() {
        let kind = script[start];
        let mut end = run_end(script, start);
        while end < script.len() {
            let next = script[end];
            if next == kind {
                end = run_end(script, end);
                continue;
            }
            if next != Kind::Same {
                // Trade places with the run of the other kind.
                let other_end = run_end(script, end);
                let passed = other_end - end;
                script[start..other_end].rotate_left(end - start);
                if next == Kind::Added {
                    new_at += passed;
                } else {
                    old_at += passed;
                }
                (start, end) = (start + passed, other_end);
                continue;
            }
            // The run's lines, in the file it changes.
            let (lines, first) = match kind {
                Kind::Removed => (old_lines, old_at),
                _ => (new_lines, new_at),
            };
            let len = end - start;
            let common = lines[first + len];
            let Some(offset) = lines[first..first + len].iter().position(|l| *l == common) else {
                break;
            };
            script.swap(start + offset, end);
            // The run now starts after the line that became common.
            start += offset + 1;
            end += 1;
            match kind {
                Kind::Removed => (old_at, new_at) = (old_at + offset + 1, new_at + 1),
                _ => (old_at, new_at) = (old_at + 1, new_at + offset + 1),
            }
        }
    }
}

/// The end of the run of one kind starting at `start`.
fn run_end(script: &[Kind], start: usize) -> usize {
    let kind = script[start];
    start + script[start..].iter().take_while(|k| **k == kind).count()
}

/// Runs of the script: common lines, and each change as its removals then its insertions (the
/// order pi's diff library reports them in).
fn group(script: &[Kind]) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    let mut at = 0;
    while at < script.len() {
        let same = script[at] == Kind::Same;
        let len = script[at..]
            .iter()
            .take_while(|k| (**k == Kind::Same) == same)
            .count();
        let run = &script[at..at + len];
        if same {
            parts.push(Part {
                kind: Kind::Same,
                old: old_at..old_at + len,
                new: new_at..new_at + len,
            });
            old_at += len;
            new_at += len;
        } else {
            let removed = run.iter().filter(|k| **k == Kind::Removed).count();
            let added = len - removed;
            if removed > 0 {
                parts.push(Part {
                    kind: Kind::Removed,
                    old: old_at..old_at + removed,
                    new: new_at..new_at,
                });
            }
            if added > 0 {
                parts.push(Part {
                    kind: Kind::Added,
                    old: old_at + removed..old_at + removed,
                    new: new_at..new_at + added,
                });
            }
            old_at += removed;
            new_at += added;
        }
        at += len;
    }
    parts
}

/// Formats the runs with numbers and context.
fn render(parts: &[Part], old_lines: &[&str], new_lines: &[&str], width: usize) -> DiffDetails {
    let mut out = Lines {
        text: String::new(),
        width,
    };
    let (mut old_no, mut new_no) = (1usize, 1usize);
    let mut first_changed_line = None;
    let mut last_was_change = false;
    for (i, part) in parts.iter().enumerate() {
        match part.kind {
            Kind::Removed => {
                first_changed_line.get_or_insert(new_no);
                for line in &old_lines[part.old.clone()] {
                    out.line('-', old_no, line);
                    old_no += 1;
                }
                last_was_change = true;
            }
            Kind::Added => {
                first_changed_line.get_or_insert(new_no);
                for line in &new_lines[part.new.clone()] {
                    out.line('+', new_no, line);
                    new_no += 1;
                }
                last_was_change = true;
            }
            Kind::Same => {
                let next_is_change = parts.get(i + 1).is_some_and(|p| p.kind != Kind::Same);
                let lines = &old_lines[part.old.clone()];
                let n = lines.len();
                // The lines to show: a head after a change, a tail before one, or both.
                let (head, tail) = match (last_was_change, next_is_change) {
                    (true, true) if n <= 2 * CONTEXT_LINES => (n, 0),
                    (true, true) => (CONTEXT_LINES, CONTEXT_LINES),
                    (true, false) => (n.min(CONTEXT_LINES), 0),
                    (false, true) => (0, n.min(CONTEXT_LINES)),
                    (false, false) => (0, 0),
                };
                let skipped = n - head - tail;
                for line in &lines[..head] {
                    out.line(' ', old_no, line);
                    old_no += 1;
                    new_no += 1;
                }
                if skipped > 0 && (last_was_change || next_is_change) {
                    out.ellipsis();
                }
                old_no += skipped;
                new_no += skipped;
                for line in &lines[n - tail..] {
                    out.line(' ', old_no, line);
                    old_no += 1;
                    new_no += 1;
                }
                last_was_change = false;
            }
        }
    }
    DiffDetails {
        diff: out.text,
        first_changed_line,
    }
}

/// The diff text being written.
struct Lines {
    text: String,
    width: usize,
}

impl Lines {
    fn line(&mut self, sign: char, number: usize, line: &str) {
        let line = line.strip_suffix('\n').unwrap_or(line);
        self.start_line();
        self.text.push(sign);
        let _ = write!(self.text, "{number:>width$} {line}", width = self.width);
    }

    fn ellipsis(&mut self) {
        self.start_line();
        let _ = write!(self.text, " {:>width$} ...", "", width = self.width);
    }

    fn start_line(&mut self) {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
    }
}

#[cfg(test)]
#[path = "edit_diff_tests.rs"]
mod tests;
