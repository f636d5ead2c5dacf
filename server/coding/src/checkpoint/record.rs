//! From a run's applied changes to its [`Checkpoint`]: each change's changed lines as hunks.

use std::time::Duration;

use similar::{Algorithm, DiffTag, TextDiff};

use super::{Checkpoint, Hunk, Step, CONTEXT_LINES, DATA_VERSION};
use crate::calls::AppliedChange;

/// A diff of a large file stops refining after this long; its hunks are then coarser (more
/// lines each) but still exact.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest prompt text a checkpoint keeps for listings.
const PROMPT_CHARS: usize = 80;

/// The checkpoint of a run that applied `applied` (oldest first), for the prompt entry `turn`
/// whose text is `prompt`; `None` when nothing was applied.
pub fn checkpoint_of(
    applied: &[AppliedChange],
    turn: Option<String>,
    prompt: &str,
) -> Option<Checkpoint> {
    if applied.is_empty() {
        return None;
    }
    let changes = applied
        .iter()
        .filter(|c| c.old_text.as_deref() != Some(c.new_text.as_str()))
        .map(|c| Step {
            path: c.path.to_string_lossy().into_owned(),
            created: c.old_text.is_none(),
            hunks: match &c.old_text {
                Some(old) => hunks_of(old, &c.new_text),
                None => vec![Hunk {
                    line: 0,
                    before: String::new(),
                    after: c.new_text.clone(),
                    context_before: String::new(),
                    context_after: String::new(),
                }],
            },
        })
        .collect::<Vec<_>>();
    if changes.is_empty() {
        return None;
    }
    Some(Checkpoint {
        version: DATA_VERSION,
        turn,
        prompt: short_prompt(prompt),
        changes,
    })
}

/// The prompt's first non-empty line, at most [`PROMPT_CHARS`] characters.
fn short_prompt(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= PROMPT_CHARS {
        return line.to_string();
    }
    let mut short: String = line.chars().take(PROMPT_CHARS - 1).collect();
    short.push('…');
    short
}

/// The hunks that turn `old` into `new`: each run of changed lines, with up to
/// [`CONTEXT_LINES`] unchanged lines of `new` on each side.
pub fn hunks_of(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let old_lines = diff.old_slices();
    let new_lines = diff.new_slices();
    // Each changed run: old lines a..b become new lines c..d.
    let mut runs: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut pending: Option<(usize, usize, usize, usize)> = None;
    for op in diff.ops() {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            runs.extend(pending.take());
            continue;
        }
        pending = Some(match pending {
            None => (o.start, o.end, n.start, n.end),
            Some((a, _, c, _)) => (a, o.end, c, n.end),
        });
    }
    runs.extend(pending);
    runs.into_iter()
        .map(|(a, b, c, d)| Hunk {
            line: c,
            before: old_lines[a..b].concat(),
            after: new_lines[c..d].concat(),
            context_before: new_lines[c.saturating_sub(CONTEXT_LINES)..c].concat(),
            context_after: new_lines[d..(d + CONTEXT_LINES).min(new_lines.len())].concat(),
        })
        .collect()
}
