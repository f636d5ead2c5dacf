//! Locating the text each edit replaces: exact first, then pi's fuzzy matching, every match
//! reported as a byte range of the file's own text.
//!
//! The fuzzy side compares both texts after pi's normalization ([`Normalized`], in
//! [`super::edit_normalize`]) and maps each match back to the original bytes, so a fuzzy edit
//! replaces only what it covers.
//!
//! The rules (all edits matched against the original, uniqueness counted on normalized text, no
//! overlaps) and the error texts are pi's.

use std::ops::Range;

use serde::Deserialize;

use super::edit_normalize::Normalized;
use crate::workspace::TextEdit;

/// One replacement as the model asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditRequest {
    /// The text to find; must occur exactly once.
    pub old_text: String,
    /// What replaces it.
    pub new_text: String,
}

/// A located edit: its index in the request, the matched range of the text it was found in
/// (the file or its normalized form), and the replacement.
struct Found<'a> {
    index: usize,
    range: Range<usize>,
    new_text: &'a str,
}

/// Finds every edit in `content` (LF line endings, no BOM) and returns the replacements as byte
/// ranges of `content`, sorted and disjoint. `path` only appears in the error messages.
pub(crate) fn locate_edits(
    content: &str,
    requests: &[EditRequest],
    path: &str,
) -> Result<Vec<TextEdit>, String> {
    let total = requests.len();
    let requests: Vec<(String, String)> = requests
        .iter()
        .map(|r| (to_lf(&r.old_text), to_lf(&r.new_text)))
        .collect();
    if let Some(index) = requests.iter().position(|(old, _)| old.is_empty()) {
        return Err(empty_old_text(path, index, total));
    }

    // Uniqueness is judged on normalized text even for exact matches, as pi does.
    let normalized = Normalized::new(content);
    // One edit that needs fuzzy matching moves every edit into normalized space (pi's rule).
    let fuzzy = requests
        .iter()
        .any(|(old, _)| !content.contains(old.as_str()));
    let base = if fuzzy { normalized.as_str() } else { content };

    let mut found = Vec::with_capacity(total);
    for (index, (old, new)) in requests.iter().enumerate() {
        let fuzzy_old = Normalized::new(old).into_string();
        let range = match base.find(old.as_str()) {
            Some(at) => Some(at..at + old.len()),
            None if fuzzy => base
                .find(fuzzy_old.as_str())
                .map(|at| at..at + fuzzy_old.len()),
            None => None,
        };
        let Some(range) = range else {
            return Err(not_found(path, index, total));
        };
        let occurrences = count_occurrences(normalized.as_str(), &fuzzy_old);
        if occurrences > 1 {
            return Err(duplicate(path, index, total, occurrences));
        }
        found.push(Found {
            index,
            range,
            new_text: new,
        });
    }

    found.sort_by_key(|f| f.range.start);
    check_disjoint(found.iter().map(|f| (f.index, &f.range)), path)?;
    if found.iter().all(|f| &base[f.range.clone()] == f.new_text) {
        return Err(no_change(path, total));
    }

    let located: Vec<(usize, TextEdit)> = found
        .into_iter()
        .map(|f| {
            let edit = if fuzzy {
                let mapped = normalized.to_original(f.range);
                TextEdit {
                    range: mapped.range,
                    new_text: format!("{}{}{}", mapped.prefix, f.new_text, mapped.suffix),
                }
            } else {
                TextEdit {
                    range: f.range,
                    new_text: f.new_text.to_string(),
                }
            };
            (f.index, edit)
        })
        .collect();
    // Widening a fuzzy match to whole normalization pieces could make two edits meet.
    check_disjoint(located.iter().map(|(i, e)| (*i, &e.range)), path)?;
    Ok(located.into_iter().map(|(_, edit)| edit).collect())
}

/// Fails with pi's overlap message when two of the sorted ranges overlap.
fn check_disjoint<'r>(
    sorted: impl Iterator<Item = (usize, &'r Range<usize>)>,
    path: &str,
) -> Result<(), String> {
    let mut previous: Option<(usize, &Range<usize>)> = None;
    for (index, range) in sorted {
        if let Some((before, earlier)) = previous {
            if earlier.end > range.start {
                return Err(format!(
                    "edits[{before}] and edits[{index}] overlap in {path}. Merge them into one \
                     edit or target disjoint regions."
                ));
            }
        }
        previous = Some((index, range));
    }
    Ok(())
}

/// CRLF and lone CR become LF.
pub(crate) fn to_lf(text: &str) -> String {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_string()
    }
}

/// Occurrences the way pi counts them (`split(needle).length - 1`, so an empty needle counts
/// the gaps between UTF-16 units).
fn count_occurrences(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        haystack.encode_utf16().count().saturating_sub(1)
    } else {
        haystack.matches(needle).count()
    }
}

fn not_found(path: &str, index: usize, total: usize) -> String {
    if total == 1 {
        format!(
            "Could not find the exact text in {path}. The old text must match exactly including \
             all whitespace and newlines."
        )
    } else {
        format!(
            "Could not find edits[{index}] in {path}. The oldText must match exactly including \
             all whitespace and newlines."
        )
    }
}

fn duplicate(path: &str, index: usize, total: usize, occurrences: usize) -> String {
    if total == 1 {
        format!(
            "Found {occurrences} occurrences of the text in {path}. The text must be unique. \
             Please provide more context to make it unique."
        )
    } else {
        format!(
            "Found {occurrences} occurrences of edits[{index}] in {path}. Each oldText must be \
             unique. Please provide more context to make it unique."
        )
    }
}

fn empty_old_text(path: &str, index: usize, total: usize) -> String {
    if total == 1 {
        format!("oldText must not be empty in {path}.")
    } else {
        format!("edits[{index}].oldText must not be empty in {path}.")
    }
}

/// pi's message for edits that would leave the file as it is.
pub(crate) fn no_change(path: &str, total: usize) -> String {
    if total == 1 {
        format!(
            "No changes made to {path}. The replacement produced identical content. This might \
             indicate an issue with special characters or the text not existing as expected."
        )
    } else {
        format!("No changes made to {path}. The replacements produced identical content.")
    }
}

#[cfg(test)]
#[path = "edit_match_tests.rs"]
mod tests;
