//! What the model reads about diagnostics: the lines of the `diagnostics` tool, and the report
//! that ends an applied edit's result — only the errors and warnings that are new or changed
//! since just before the edit, and the ones it fixed.
//!
//! An edit moves the lines below it, so diagnostics are matched by what they say (severity,
//! source, code, message), not where they are: a diagnostic is new when the file has more of
//! that kind after the edit than before, and fixed when it has fewer.

use std::collections::HashMap;
use std::time::Duration;

use crate::settings::DiagnosticsConfig;

use super::{Diagnostic, DiagnosticsAnswer, Severity};

/// The longest message kept on a diagnostic's line (characters); the rest is cut with `…`.
const MESSAGE_CHARS: usize = 300;

/// One diagnostic as a line: `app.py:5:12: error [Pyright reportAttributeAccessIssue] msg`.
/// `shown` is the file's display path and `text` its current text (for the column in
/// characters; `None`: UTF-16 columns are shown as they are).
pub fn line(shown: &str, text: Option<&str>, diagnostic: &Diagnostic) -> String {
    let (line, column) = diagnostic.span.start.to_user(text);
    format!("{shown}:{line}:{column}: {}", described(diagnostic))
}

/// `error [basedpyright reportAssignmentType] Type …`: severity, origin and message.
fn described(diagnostic: &Diagnostic) -> String {
    let origin = match (&diagnostic.source, &diagnostic.code) {
        (Some(source), Some(code)) => format!(" [{source} {code}]"),
        (Some(source), None) => format!(" [{source}]"),
        (None, Some(code)) => format!(" [{code}]"),
        (None, None) => String::new(),
    };
    format!(
        "{}{origin} {}",
        diagnostic.severity.word(),
        one_line(&diagnostic.message)
    )
}

/// A message on one line, at most [`MESSAGE_CHARS`] characters.
fn one_line(message: &str) -> String {
    let joined = message.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}

/// Whether the after-edit report and the tool show `diagnostic` under `config`.
pub fn wanted(config: &DiagnosticsConfig, diagnostic: &Diagnostic) -> bool {
    let severe = match diagnostic.severity {
        Severity::Error => true,
        Severity::Warning => config.warnings,
        Severity::Information | Severity::Hint => false,
    };
    severe && config.wants_source(diagnostic.source.as_deref())
}

type Kind<'a> = (Severity, Option<&'a str>, Option<&'a str>, &'a str);

fn kind(d: &Diagnostic) -> Kind<'_> {
    (
        d.severity,
        d.source.as_deref(),
        d.code.as_deref(),
        d.message.as_str(),
    )
}

/// The diagnostics of `after` that `before` did not have (by kind and count), and those of
/// `before` that `after` no longer has, each in its list's order.
pub fn compare<'a>(
    before: &[&'a Diagnostic],
    after: &[&'a Diagnostic],
) -> (Vec<&'a Diagnostic>, Vec<&'a Diagnostic>) {
    // Per kind: how many before, how many after; then each list keeps its surplus.
    let mut counts: HashMap<Kind<'a>, (usize, usize)> = HashMap::with_capacity(before.len());
    for d in before {
        counts.entry(kind(d)).or_default().0 += 1;
    }
    for d in after {
        counts.entry(kind(d)).or_default().1 += 1;
    }
    let surplus = |list: &[&'a Diagnostic],
                   mine: fn(&(usize, usize)) -> usize,
                   theirs: fn(&(usize, usize)) -> usize| {
        let mut seen: HashMap<Kind<'a>, usize> = HashMap::new();
        list.iter()
            .filter(|d| {
                let k = kind(d);
                let (own, other) = counts.get(&k).map_or((0, 0), |c| (mine(c), theirs(c)));
                let n = seen.entry(k).or_default();
                *n += 1;
                // The first `other` of this kind are matched; the rest (own - other) are not.
                own > other && *n > other
            })
            .copied()
            .collect::<Vec<_>>()
    };
    let new = surplus(after, |c| c.1, |c| c.0);
    let gone = surplus(before, |c| c.0, |c| c.1);
    (new, gone)
}

/// What the report says about one edited file.
pub struct EditedFile<'a> {
    /// Its display path.
    pub shown: &'a str,
    /// Its text after the edit.
    pub text: &'a str,
    /// Its diagnostics just before the edit.
    pub before: &'a [Diagnostic],
    /// The answer after the edit (for this file).
    pub after: &'a DiagnosticsAnswer,
    /// Who answered ("the editor").
    pub source: &'a str,
    /// How long the wait was allowed to be.
    pub waited: Duration,
}

/// The paragraph that ends an applied edit's result, or `None` when there is nothing to say
/// (the file is not analyzed by any language server).
pub fn after_edit(config: &DiagnosticsConfig, file: &EditedFile<'_>) -> Option<String> {
    let now = file.after.files.first()?;
    if !now.analyzed {
        return None;
    }
    let before: Vec<&Diagnostic> = file.before.iter().filter(|d| wanted(config, d)).collect();
    let after: Vec<&Diagnostic> = now
        .diagnostics
        .iter()
        .filter(|d| wanted(config, d))
        .collect();
    let (new, gone) = compare(&before, &after);
    let mut out = String::new();
    if new.is_empty() {
        out.push_str(&format!(
            "No new errors or warnings in {} ({}).",
            file.shown,
            standing(&after)
        ));
    } else {
        out.push_str(&format!(
            "New diagnostics in {} after this change, from {}:",
            file.shown, file.source
        ));
        for d in new.iter().take(config.max_items) {
            out.push('\n');
            out.push_str(&line(file.shown, Some(file.text), d));
        }
        if new.len() > config.max_items {
            out.push_str(&format!(
                "\n… and {} more (the diagnostics tool lists them all)",
                new.len() - config.max_items
            ));
        }
    }
    if !gone.is_empty() {
        let fixed: Vec<String> = gone
            .iter()
            .take(config.max_items)
            .map(|d| described(d))
            .collect();
        out.push_str(&format!(
            "\nFixed by this change ({}): {}",
            gone.len(),
            fixed.join("; ")
        ));
        if gone.len() > config.max_items {
            out.push_str(" …");
        }
    }
    if !file.after.settled {
        out.push_str(&format!(
            "\n(Stopped waiting for the language servers after {}; this may be incomplete.)",
            seconds(file.waited)
        ));
    }
    Some(out)
}

/// "2 errors, 1 warning remain" or "none remain".
fn standing(diagnostics: &[&Diagnostic]) -> String {
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    match (errors, warnings) {
        (0, 0) => "none in the file".into(),
        _ => format!(
            "{} and {} already there",
            count(errors, "error"),
            count(warnings, "warning")
        ),
    }
}

/// `1 error`, `3 errors`.
pub fn count(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `1.5 s`, `300 ms`.
pub fn seconds(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else {
        let tenths = d.as_millis() / 100;
        if tenths.is_multiple_of(10) {
            format!("{} s", tenths / 10)
        } else {
            format!("{}.{} s", tenths / 10, tenths % 10)
        }
    }
}

/// The report when the diagnostics could not be read: said, never silent.
pub fn unavailable(shown: &str, error: &str) -> String {
    format!("The diagnostics of {shown} could not be read after this change: {error}.")
}
