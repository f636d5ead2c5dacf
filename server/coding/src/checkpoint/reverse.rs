//! Reversing one recorded change against the text as it is now.
//!
//! A hunk is found again by content, not by line number: the user may have edited the file
//! since, above the hunk (moving it) or anywhere else. It is looked for as its "after" lines
//! between its context lines, at the start of a line; when several places match, the one
//! nearest where the hunk is expected wins (its recorded line, shifted as much as the previous
//! hunk was). Without its context (the user edited a neighbouring line, or a neighbouring hunk
//! was refused) a hunk that added or changed lines is looked for by its "after" lines alone.
//! A hunk found nowhere was changed since: it is refused and the rest still reverses.

use super::{Hunk, Step};

/// A hunk left as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedHunk {
    /// The file.
    pub path: String,
    /// Its first line in the file as the turn left it (1-based).
    pub line: usize,
    /// Why it was left.
    pub reason: String,
}

impl std::fmt::Display for RefusedHunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.reason)
    }
}

/// Why a hunk is refused when its text is not there any more.
pub const CHANGED_SINCE: &str = "changed since the turn; left as it is";

/// `current` with `step`'s hunks put back, and the hunks that could not be.
pub fn reverse_step(current: &str, step: &Step) -> (String, Vec<RefusedHunk>) {
    let starts = line_starts(current);
    let mut refused = Vec::new();
    let mut replacements: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
    let mut shift: isize = 0;
    let mut floor = 0;
    for hunk in &step.hunks {
        match locate(current, &starts, hunk, shift, floor) {
            Some(range) => {
                let found = line_of(&starts, range.start) as isize;
                shift = found - hunk.line as isize;
                floor = range.end;
                replacements.push((range, hunk.before.as_str()));
            }
            None => refused.push(RefusedHunk {
                path: step.path.clone(),
                line: hunk.line + 1,
                reason: CHANGED_SINCE.to_string(),
            }),
        }
    }
    let mut out = String::with_capacity(current.len());
    let mut at = 0;
    for (range, before) in replacements {
        out.push_str(&current[at..range.start]);
        out.push_str(before);
        at = range.end;
    }
    out.push_str(&current[at..]);
    (out, refused)
}

/// The byte range of `hunk.after` in `current`, at or after `floor`.
fn locate(
    current: &str,
    starts: &[usize],
    hunk: &Hunk,
    shift: isize,
    floor: usize,
) -> Option<std::ops::Range<usize>> {
    let needle = format!(
        "{}{}{}",
        hunk.context_before, hunk.after, hunk.context_after
    );
    if needle.is_empty() {
        // The change emptied the file: it reverses only while the file is still empty.
        return current.is_empty().then_some(0..0);
    }
    let context_lines = hunk.context_before.matches('\n').count() as isize;
    let expected = hunk.line as isize + shift - context_lines;
    let whole = nearest(current, starts, &needle, expected, |at| {
        at + hunk.context_before.len() >= floor
    })
    .map(|at| {
        let start = at + hunk.context_before.len();
        start..start + hunk.after.len()
    });
    if whole.is_some() || hunk.after.is_empty() {
        return whole;
    }
    nearest(
        current,
        starts,
        &hunk.after,
        hunk.line as isize + shift,
        |at| at >= floor,
    )
    .map(|at| at..at + hunk.after.len())
}

/// Where `needle` occurs in `current` as whole lines, nearest line `expected`, among the
/// places `allowed` accepts.
fn nearest(
    current: &str,
    starts: &[usize],
    needle: &str,
    expected: isize,
    allowed: impl Fn(usize) -> bool,
) -> Option<usize> {
    let ends_line = needle.ends_with('\n');
    current
        .match_indices(needle)
        .map(|(at, _)| at)
        .filter(|&at| at == 0 || current.as_bytes()[at - 1] == b'\n')
        .filter(|&at| ends_line || at + needle.len() == current.len())
        .filter(|&at| allowed(at))
        .min_by_key(|&at| (line_of(starts, at) as isize - expected).unsigned_abs())
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

fn line_of(starts: &[usize], at: usize) -> usize {
    starts.partition_point(|&s| s <= at).saturating_sub(1)
}
