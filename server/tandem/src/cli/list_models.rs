//! `--list-models [search]`: pi's table of the models that can be used now.
//!
//! As in pi, only models whose provider has a key are listed, sorted by provider then id, with
//! a fuzzy search over `provider id` (every whitespace-separated token must appear as an
//! in-order subsequence). Tandem adds its scripted models, which need no key, so the table is
//! never empty; when they are all there is, a note on stderr says how to add a real provider.

use std::io::{self, Write};

use tandem_ai::registry::ModelRegistry;
use tandem_ai::Model;

use crate::host::compare_ids;
use crate::host::models::{is_available, no_models_message};

/// pi's compact token counts: `200K`, `1M`, `16.4K`, `512`.
pub fn format_token_count(count: u64) -> String {
    let scaled = |unit: u64, suffix: &str| {
        if count.is_multiple_of(unit) {
            format!("{}{suffix}", count / unit)
        } else {
            format!("{:.1}{suffix}", count as f64 / unit as f64)
        }
    };
    if count >= 1_000_000 {
        scaled(1_000_000, "M")
    } else if count >= 1_000 {
        scaled(1_000, "K")
    } else {
        count.to_string()
    }
}

fn is_subsequence(query: &[char], text: &[char]) -> bool {
    let mut wanted = query.iter().peekable();
    for c in text {
        if wanted.peek() == Some(&c) {
            wanted.next();
        }
    }
    wanted.peek().is_none()
}

/// pi's fuzzy token match: `token` appears in order in `text` (case-insensitive); a token of
/// letters then digits (or digits then letters) also matches with the two parts swapped.
fn token_matches(token: &str, text: &[char]) -> bool {
    let token: Vec<char> = token.to_lowercase().chars().collect();
    if is_subsequence(&token, text) {
        return true;
    }
    let split = token
        .iter()
        .position(|c| c.is_ascii_digit() != token[0].is_ascii_digit());
    let Some(split) = split else {
        return false;
    };
    let (head, tail) = token.split_at(split);
    let homogeneous = |part: &[char], digits: bool| {
        part.iter().all(|c| {
            if digits {
                c.is_ascii_digit()
            } else {
                c.is_ascii_lowercase()
            }
        })
    };
    let head_digits = head[0].is_ascii_digit();
    if !homogeneous(head, head_digits) || !homogeneous(tail, !head_digits) {
        return false;
    }
    let swapped: Vec<char> = tail.iter().chain(head).copied().collect();
    is_subsequence(&swapped, text)
}

/// True when every whitespace-separated token of `query` fuzzily matches `text`.
pub fn fuzzy_matches(query: &str, text: &str) -> bool {
    let text: Vec<char> = text.to_lowercase().chars().collect();
    query.split_whitespace().all(|t| token_matches(t, &text))
}

/// The table: a header line and one line per model, columns two spaces apart and padded to
/// their widest cell (trailing spaces included, as pi prints them).
pub fn render_table(models: &[&Model]) -> String {
    let header = [
        "provider", "model", "context", "max-out", "thinking", "images",
    ];
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                format_token_count(m.context_window),
                format_token_count(m.max_tokens),
                yes_no(m.reasoning),
                yes_no(m.accepts_images()),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 6]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ")
    };
    let mut out = line(header);
    out.push('\n');
    for row in &rows {
        out.push_str(&line(row.each_ref().map(String::as_str)));
        out.push('\n');
    }
    out
}

/// Writes the listing to `out`, and to `err` the load problems and, when nothing can be used,
/// what to set.
pub fn list_models(
    registry: &ModelRegistry,
    search: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<()> {
    let problems = registry.load_errors();
    if !problems.is_empty() {
        writeln!(err, "Warning: problems loading models.json or auth.json:")?;
        for problem in problems {
            writeln!(err, "  {problem}")?;
        }
    }
    let mut models: Vec<&Model> = registry
        .all()
        .iter()
        .filter(|m| is_available(registry, m))
        .collect();
    if models.is_empty() {
        writeln!(err, "{}", no_models_message(registry))?;
        return Ok(());
    }
    if let Some(search) = search.filter(|s| !s.trim().is_empty()) {
        models.retain(|m| fuzzy_matches(search, &format!("{} {}", m.provider, m.id)));
        if models.is_empty() {
            writeln!(out, "No models matching \"{search}\"")?;
            return Ok(());
        }
    }
    models.sort_by(|a, b| compare_ids(&a.provider, &b.provider).then(compare_ids(&a.id, &b.id)));
    out.write_all(render_table(&models).as_bytes())
}

#[cfg(test)]
#[path = "list_models_tests.rs"]
mod tests;
