//! Re-basing a change onto a document the user changed after the tool read it.
//!
//! A tool computes its change against the text it read. By the time the change reaches the
//! user's document (a question answered, an edit in flight), the user may have typed. Sending
//! the old positions would put the agent's text in the wrong place and overwrite keystrokes, so
//! a front door that finds the document changed calls [`rebase`]: every replaced region is
//! found again *by its content* in the current text and, when it is there exactly once, the
//! replacement lands there; everything the user typed outside those regions is kept.
//!
//! Each region is identified by an *anchor*: the replaced text itself (for the edit tool, the
//! model's `oldText`) with the character on each side of it, widened to whole lines and then line by line while it is empty or not
//! unique in the text the tool read. A region whose anchor is gone (the user edited inside
//! it) or now appears more than once is a [`Conflict`]: nothing is applied, and the message
//! shows the current text around the region so the model can try again from the truth.
//!
//! A whole-file write is re-based the same way, hunk by hunk (its line diff against the text
//! the tool read), so a write never reverts lines the user changed elsewhere.

use std::ops::Range;

use similar::{Algorithm, DiffTag, TextDiff};

use super::{apply_edits, FileChange, TextEdit};

/// How many lines an anchor may grow on each side before a region is called ambiguous.
const MAX_CONTEXT_LINES: usize = 8;

/// Lines of the current text shown around a region that could not be placed.
const SHOWN_CONTEXT_LINES: usize = 2;

/// The change, placed on the current text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebased {
    /// The replaced ranges of the current text, in order.
    pub edits: Vec<TextEdit>,
    /// The current text with the edits applied.
    pub new_text: String,
}

/// The change no longer fits the document: the user changed what it replaces.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct Conflict {
    /// What happened, with the current text of the region, for the model.
    pub detail: String,
}

/// The replaced ranges of `change` in its `old_text`: the tool's own ranges for an edit, the
/// line diff's hunks for a whole-file write. Empty when `old_text` is `None`.
pub fn change_edits(change: &FileChange) -> Vec<TextEdit> {
    match &change.old_text {
        None => Vec::new(),
        Some(_) if !change.edits.is_empty() => change.edits.clone(),
        Some(old) => line_hunks(old, &change.new_text),
    }
}

/// Places `change` on `current` (the document as it is now; `None` when there is no such
/// file). `shown` names the file in messages.
pub fn rebase(
    change: &FileChange,
    current: Option<&str>,
    shown: &str,
) -> Result<Rebased, Conflict> {
    let base = match (change.old_text.as_deref(), current) {
        (None, None) => {
            return Ok(Rebased {
                edits: vec![TextEdit {
                    range: 0..0,
                    new_text: change.new_text.clone(),
                }],
                new_text: change.new_text.clone(),
            })
        }
        (None, Some(_)) => {
            return Err(Conflict {
                detail: format!(
                    "{shown} was created while the change was pending (by the user or another \
                     program); read it before writing it"
                ),
            })
        }
        (Some(_), None) => {
            return Err(Conflict {
                detail: format!(
                    "{shown} was deleted while the change was pending; nothing was written"
                ),
            })
        }
        (Some(base), Some(current)) => (base, current),
    };
    let (base, current) = base;
    let edits = change_edits(change);
    if !fits(base, &edits) {
        return Err(Conflict {
            detail: format!(
                "The change to {shown} does not fit the text it was computed against (its \
                 ranges overlap or fall outside it); nothing was applied. Read the file again."
            ),
        });
    }
    if base == current {
        let new_text = apply_edits(current, &edits);
        return Ok(Rebased { edits, new_text });
    }
    let mut placed: Vec<TextEdit> = Vec::with_capacity(edits.len());
    for edit in &edits {
        let range = place(base, current, &edit.range).map_err(|why| Conflict {
            detail: describe(why, shown, base, current, &edit.range),
        })?;
        if placed
            .last()
            .is_some_and(|last| last.range.end > range.start)
        {
            return Err(Conflict {
                detail: describe(Misplaced::Reordered, shown, base, current, &edit.range),
            });
        }
        placed.push(TextEdit {
            range,
            new_text: edit.new_text.clone(),
        });
    }
    let new_text = apply_edits(current, &placed);
    Ok(Rebased {
        edits: placed,
        new_text,
    })
}

/// Whether `edits` are sorted, disjoint ranges of `text` on character boundaries.
fn fits(text: &str, edits: &[TextEdit]) -> bool {
    let mut previous_end = 0;
    edits.iter().all(|edit| {
        let ok = previous_end <= edit.range.start
            && edit.range.start <= edit.range.end
            && text.is_char_boundary(edit.range.start)
            && text.is_char_boundary(edit.range.end);
        previous_end = edit.range.end;
        ok
    })
}

/// Why a region could not be placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Misplaced {
    /// Its text is not in the current document.
    Gone,
    /// Its text is there more than once.
    Ambiguous,
    /// Regions would land out of order or overlap.
    Reordered,
}

/// Where `range` of `base` is in `current`, found by its anchor.
fn place(base: &str, current: &str, range: &Range<usize>) -> Result<Range<usize>, Misplaced> {
    let anchor = anchor(base, range).ok_or(Misplaced::Ambiguous)?;
    let text = &base[anchor.clone()];
    let found = find_unique(current, text)?;
    let start = found + (range.start - anchor.start);
    let end = found + (range.end - anchor.start);
    Ok(start..end)
}

/// The smallest region around `range` whose text is non-empty and appears once in `base`:
/// the range itself, then its whole lines, then one more line on each side at a time.
fn anchor(base: &str, range: &Range<usize>) -> Option<Range<usize>> {
    // One character on each side: the user typing right against the region changed it too
    // ("1" in `x = 1;` is not the "1" of `x = 10;`).
    let before = base[..range.start]
        .chars()
        .next_back()
        .map_or(0, char::len_utf8);
    let after = base[range.end..].chars().next().map_or(0, char::len_utf8);
    let mut at = range.start - before..range.end + after;
    if at.start < at.end && find_unique(base, &base[at.clone()]).is_ok() {
        return Some(at);
    }
    at = line_start(base, at.start)..line_end(base, at.end);
    for _ in 0..=MAX_CONTEXT_LINES {
        if at.start < at.end && find_unique(base, &base[at.clone()]).is_ok() {
            return Some(at);
        }
        if at.start == 0 && at.end == base.len() {
            return None;
        }
        let start = if at.start == 0 {
            0
        } else {
            line_start(base, at.start - 1)
        };
        let end = base[at.end..]
            .find('\n')
            .map_or(base.len(), |i| at.end + i + 1);
        at = start..end;
    }
    None
}

/// The byte offset of the only occurrence of `needle` in `haystack`.
fn find_unique(haystack: &str, needle: &str) -> Result<usize, Misplaced> {
    let first = haystack.find(needle).ok_or(Misplaced::Gone)?;
    let next = first + needle.chars().next().map_or(1, char::len_utf8);
    match haystack.get(next..).and_then(|rest| rest.find(needle)) {
        Some(_) => Err(Misplaced::Ambiguous),
        None => Ok(first),
    }
}

/// The start of the line holding byte `at`.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the line holding byte `at` (after its newline), or `at` itself when it already
/// ends a line.
fn line_end(text: &str, at: usize) -> usize {
    if at > 0 && text.as_bytes()[at - 1] == b'\n' {
        return at;
    }
    text[at..].find('\n').map_or(text.len(), |i| at + i + 1)
}

/// The conflict message: what happened to the region and the current text around it.
fn describe(
    why: Misplaced,
    shown: &str,
    base: &str,
    current: &str,
    range: &Range<usize>,
) -> String {
    let what = match why {
        Misplaced::Gone => "the text it replaces is no longer there",
        Misplaced::Ambiguous => "the text it replaces now appears more than once",
        Misplaced::Reordered => "its parts no longer fit together",
    };
    let first = base[..range.start].matches('\n').count();
    let last = first + base[range.clone()].matches('\n').count();
    let lines: Vec<&str> = current.lines().collect();
    let from = first.saturating_sub(SHOWN_CONTEXT_LINES);
    let to = (last + SHOWN_CONTEXT_LINES + 1).min(lines.len());
    let region = if from < to {
        format!(
            " Lines {}-{} of {shown} now read:\n{}",
            from + 1,
            to,
            lines[from..to].join("\n")
        )
    } else {
        String::new()
    };
    format!(
        "The user changed {shown} while the change was pending and {what}, so nothing was \
         applied. Read the file again before changing it.{region}"
    )
}

/// Line-level hunks turning `old` into `new`, as replaced byte ranges of `old`.
pub fn line_hunks(old: &str, new: &str) -> Vec<TextEdit> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(old, new);
    let old_at = offsets(diff.old_slices());
    let new_at = offsets(diff.new_slices());
    let mut edits = Vec::new();
    let mut pending: Option<(usize, usize, usize, usize)> = None;
    let mut flush = |pending: &mut Option<(usize, usize, usize, usize)>| {
        if let Some((a, b, c, d)) = pending.take() {
            edits.push(TextEdit {
                range: old_at[a]..old_at[b],
                new_text: new[new_at[c]..new_at[d]].to_owned(),
            });
        }
    };
    for op in diff.ops() {
        let (tag, old_lines, new_lines) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            flush(&mut pending);
            continue;
        }
        pending = Some(match pending {
            None => (
                old_lines.start,
                old_lines.end,
                new_lines.start,
                new_lines.end,
            ),
            Some((a, _, c, _)) => (a, old_lines.end, c, new_lines.end),
        });
    }
    flush(&mut pending);
    edits
}

/// Byte offset of each line start, plus the end.
fn offsets(lines: &[&str]) -> Vec<usize> {
    let mut at = Vec::with_capacity(lines.len() + 1);
    let mut sum = 0;
    at.push(0);
    for line in lines {
        sum += line.len();
        at.push(sum);
    }
    at
}

#[cfg(test)]
#[path = "rebase_tests.rs"]
mod tests;
