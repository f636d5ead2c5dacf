//! "Did you mean …?" for mistyped model and provider names.
//!
//! The candidates nearest to what was typed (Levenshtein distance, via `strsim`) are offered, if
//! they are near enough to be a typo; for `provider/id` candidates the id alone is compared too,
//! so a typo in a bare id still finds its model.

/// At most `limit` of the candidates nearest to `query` (all at the same, smallest distance, in
/// candidate order), or none when nothing is within a typo's reach.
pub(crate) fn closest<'a, I>(query: &str, candidates: I, limit: usize) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let query = query.trim().to_lowercase();
    if query.is_empty() {
        return Vec::new();
    }
    let allowed = (query.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, usize, &str)> = Vec::new();
    for (order, candidate) in candidates.into_iter().enumerate() {
        if scored.iter().any(|(_, _, c)| *c == candidate) {
            continue;
        }
        let full = candidate.to_lowercase();
        let id = full.split_once('/').map_or(full.as_str(), |(_, id)| id);
        let distance = strsim::levenshtein(&query, &full).min(strsim::levenshtein(&query, id));
        if distance <= allowed {
            scored.push((distance, order, candidate));
        }
    }
    scored.sort();
    let best = scored.first().map(|(d, _, _)| *d);
    scored
        .into_iter()
        .take_while(|(d, _, _)| Some(*d) == best)
        .take(limit)
        .map(|(_, _, c)| c)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_come_first_and_far_ones_not_at_all() {
        let models = [
            "anthropic/claude-sonnet-4-5",
            "anthropic/claude-opus-4-6",
            "openai/gpt-5",
            "openai/gpt-4o",
        ];
        assert_eq!(
            closest("claude-sonet-4-5", models, 3),
            vec!["anthropic/claude-sonnet-4-5"]
        );
        assert_eq!(
            closest("gpt-4", models, 3),
            vec!["openai/gpt-5", "openai/gpt-4o"]
        );
        assert!(closest("llama", models, 3).is_empty());
        assert_eq!(
            closest("opnai", ["anthropic", "openai", "google"], 3),
            vec!["openai"]
        );
    }
}
