//! Matching a `--model` pattern against models, with pi's rules.
//!
//! A pattern is tried as an exact reference first (`provider/id` or a bare id, case-insensitive),
//! then as a substring of ids and names, where an alias (`claude-sonnet-4-5`) beats a dated
//! release (`claude-sonnet-4-5-20250929`) and the highest-sorting id wins. A trailing `:<level>`
//! names a thinking level; since some ids contain colons (OpenRouter's `:free`), the whole pattern
//! is tried before the suffix is split off.

use std::cmp::Ordering;

use tandem_ai::{Model, ThinkingLevel};

/// A pattern's match.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PatternMatch<'m> {
    /// The model.
    pub model: &'m Model,
    /// The thinking level named by a `:<level>` suffix.
    pub thinking: Option<ThinkingLevel>,
}

/// True for ids without a `-YYYYMMDD` date suffix (and for `-latest` ids).
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let bytes = id.as_bytes();
    let dated = bytes.len() >= 9
        && bytes[bytes.len() - 9] == b'-'
        && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

/// Orders ids roughly as JavaScript's `localeCompare` does: case-insensitively first.
pub fn compare_ids(a: &str, b: &str) -> Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| b.cmp(a))
}

/// `provider/id` or a bare id, case-insensitively; `None` when a bare id is ambiguous.
pub(crate) fn exact_reference<'m>(reference: &str, models: &[&'m Model]) -> Option<&'m Model> {
    let reference = reference.trim();
    if reference.is_empty() {
        return None;
    }
    let lower = reference.to_lowercase();
    let only = |found: Vec<&'m Model>| (found.len() == 1).then(|| found[0]);
    let canonical: Vec<&Model> = models
        .iter()
        .copied()
        .filter(|m| format!("{}/{}", m.provider, m.id).to_lowercase() == lower)
        .collect();
    if !canonical.is_empty() {
        return only(canonical);
    }
    if let Some((provider, id)) = reference.split_once('/') {
        let (provider, id) = (provider.trim(), id.trim());
        if !provider.is_empty() && !id.is_empty() {
            let found: Vec<&Model> = models
                .iter()
                .copied()
                .filter(|m| {
                    m.provider.eq_ignore_ascii_case(provider) && m.id.eq_ignore_ascii_case(id)
                })
                .collect();
            if !found.is_empty() {
                return only(found);
            }
        }
    }
    only(
        models
            .iter()
            .copied()
            .filter(|m| m.id.to_lowercase() == lower)
            .collect(),
    )
}

/// An exact reference, else the best substring match of ids and names.
fn try_match<'m>(pattern: &str, models: &[&'m Model]) -> Option<&'m Model> {
    if let Some(exact) = exact_reference(pattern, models) {
        return Some(exact);
    }
    let needle = pattern.to_lowercase();
    let matches: Vec<&Model> = models
        .iter()
        .copied()
        .filter(|m| {
            m.id.to_lowercase().contains(&needle) || m.name.to_lowercase().contains(&needle)
        })
        .collect();
    let aliases: Vec<&Model> = matches
        .iter()
        .copied()
        .filter(|m| is_alias(&m.id))
        .collect();
    let pool = if aliases.is_empty() { matches } else { aliases };
    pool.into_iter().max_by(|a, b| compare_ids(&a.id, &b.id))
}

/// Matches `pattern`, splitting `:<level>` suffixes off from the right when the whole does not
/// match. As in pi's command-line parsing, a suffix that is not a thinking level makes the
/// pattern fail rather than silently matching a different model.
pub(crate) fn match_pattern<'m>(pattern: &str, models: &[&'m Model]) -> Option<PatternMatch<'m>> {
    if let Some(model) = try_match(pattern, models) {
        return Some(PatternMatch {
            model,
            thinking: None,
        });
    }
    let (prefix, suffix) = pattern.rsplit_once(':')?;
    let level = ThinkingLevel::parse(suffix)?;
    let inner = match_pattern(prefix, models)?;
    Some(PatternMatch {
        model: inner.model,
        thinking: Some(level),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use tandem_ai::{Api, InputKind, ModelCost};

    pub(crate) fn model(provider: &str, id: &str, name: &str) -> Model {
        Model {
            id: id.into(),
            name: name.into(),
            api: Api::OpenAiCompletions,
            provider: provider.into(),
            base_url: String::new(),
            reasoning: true,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            headers: None,
            compat: None,
        }
    }

    fn ids(m: Option<PatternMatch<'_>>) -> Option<(String, Option<ThinkingLevel>)> {
        m.map(|m| (format!("{}/{}", m.model.provider, m.model.id), m.thinking))
    }

    #[test]
    fn aliases_beat_dated_releases_and_the_highest_id_wins() {
        let all = [
            model("a", "claude-sonnet-4-5-20250929", "Sonnet 4.5 (dated)"),
            model("a", "claude-sonnet-4-5", "Sonnet 4.5"),
            model("a", "claude-sonnet-4-0", "Sonnet 4"),
            model("b", "gpt-5", "GPT-5"),
        ];
        let refs: Vec<&Model> = all.iter().collect();
        assert_eq!(
            ids(match_pattern("sonnet", &refs)),
            Some(("a/claude-sonnet-4-5".into(), None))
        );
        assert_eq!(
            ids(match_pattern("20250929", &refs)),
            Some(("a/claude-sonnet-4-5-20250929".into(), None))
        );
        assert_eq!(
            ids(match_pattern("GPT-5", &refs)),
            Some(("b/gpt-5".into(), None))
        );
        assert!(is_alias("gemini-flash-latest") && !is_alias("x-20240101"));
    }

    #[test]
    fn thinking_suffixes_and_colons_in_ids() {
        let all = [
            model("openrouter", "qwen/qwen3-coder:free", "Qwen3 Coder (free)"),
            model("openai", "gpt-5", "GPT-5"),
        ];
        let refs: Vec<&Model> = all.iter().collect();
        assert_eq!(
            ids(match_pattern("gpt-5:high", &refs)),
            Some(("openai/gpt-5".into(), Some(ThinkingLevel::High)))
        );
        assert_eq!(
            ids(match_pattern("qwen/qwen3-coder:free", &refs)),
            Some(("openrouter/qwen/qwen3-coder:free".into(), None))
        );
        assert_eq!(
            ids(match_pattern("qwen3-coder:free:low", &refs)),
            Some((
                "openrouter/qwen/qwen3-coder:free".into(),
                Some(ThinkingLevel::Low)
            ))
        );
        // An unknown suffix is part of the id, so nothing matches.
        assert_eq!(ids(match_pattern("gpt-5:turbo", &refs)), None);
    }

    #[test]
    fn ambiguous_bare_ids_are_not_exact() {
        let all = [model("a", "m", "M"), model("b", "m", "M")];
        let refs: Vec<&Model> = all.iter().collect();
        assert!(exact_reference("m", &refs).is_none());
        assert_eq!(
            exact_reference("B/M", &refs).map(|m| m.provider.as_str()),
            Some("b")
        );
    }
}
