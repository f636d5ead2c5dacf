//! The model scope, as pi 1.6 reads `--models` and the `enabledModels` setting: comma-separated
//! patterns, each an exact or fuzzy reference (see [`super::model_pattern`]) or a
//! case-insensitive glob (`*`, `?`, `[…]`) over `provider/id` or the id, with an optional
//! `:<thinking>` suffix. A new session starts on the scope's first model; a pattern that matches
//! nothing is a warning.

use globset::GlobBuilder;
use tandem_ai::{Model, ThinkingLevel};

use super::model_pattern::match_pattern;

/// A model in the scope, with the thinking level its pattern named.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoped {
    /// The model.
    pub model: Model,
    /// From a `:<level>` suffix.
    pub thinking: Option<ThinkingLevel>,
}

/// The models `patterns` select among `models` (the available ones), in pattern order, each
/// once; and a warning per pattern that matched nothing or is not a valid glob.
pub fn resolve_scope(patterns: &[String], models: &[&Model]) -> (Vec<Scoped>, Vec<String>) {
    let mut scoped: Vec<Scoped> = Vec::new();
    let mut warnings = Vec::new();
    let mut add = |model: &Model, thinking: Option<ThinkingLevel>| {
        if !scoped
            .iter()
            .any(|s| s.model.provider == model.provider && s.model.id == model.id)
        {
            scoped.push(Scoped {
                model: model.clone(),
                thinking,
            });
        }
    };
    for pattern in patterns.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let matched: Vec<(&Model, Option<ThinkingLevel>)> = if pattern.contains(['*', '?', '[']) {
            let (glob, thinking) = match pattern.rsplit_once(':') {
                Some((base, suffix)) => match ThinkingLevel::parse(suffix) {
                    Some(level) => (base, Some(level)),
                    None => (pattern, None),
                },
                None => (pattern, None),
            };
            // As minimatch: `*` and `?` stop at `/`.
            match GlobBuilder::new(glob)
                .case_insensitive(true)
                .literal_separator(true)
                .build()
            {
                Ok(glob) => {
                    let glob = glob.compile_matcher();
                    models
                        .iter()
                        .filter(|m| {
                            glob.is_match(format!("{}/{}", m.provider, m.id))
                                || glob.is_match(&m.id)
                        })
                        .map(|m| (*m, thinking))
                        .collect()
                }
                Err(e) => {
                    warnings.push(format!(
                        "Model pattern \"{pattern}\" is not a valid glob: {e}"
                    ));
                    continue;
                }
            }
        } else {
            match_pattern(pattern, models)
                .map(|m| vec![(m.model, m.thinking)])
                .unwrap_or_default()
        };
        if matched.is_empty() {
            warnings.push(format!("No models match pattern \"{pattern}\""));
        }
        for (model, thinking) in matched {
            add(model, thinking);
        }
    }
    (scoped, warnings)
}

/// `--models a,b` or `enabledModels` as one list of patterns.
pub fn split_patterns(list: &[String]) -> Vec<String> {
    list.iter()
        .flat_map(|item| item.split(','))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, id: &str) -> Model {
        crate::host::model_pattern::tests::model(provider, id, id)
    }

    #[test]
    fn globs_references_and_suffixes_in_pattern_order_each_model_once() {
        let pool = [
            model("anthropic", "claude-sonnet-4-5"),
            model("anthropic", "claude-opus-4-6"),
            model("openai", "gpt-4o"),
            model("openrouter", "anthropic/claude-sonnet-4-5"),
        ];
        let models: Vec<&Model> = pool.iter().collect();
        let patterns = split_patterns(&["gpt-4o:high, ANTHROPIC/*:low".into(), "*sonnet*".into()]);
        let (scoped, warnings) = resolve_scope(&patterns, &models);
        let got: Vec<(String, Option<ThinkingLevel>)> = scoped
            .iter()
            .map(|s| (format!("{}/{}", s.model.provider, s.model.id), s.thinking))
            .collect();
        assert_eq!(
            got,
            [
                ("openai/gpt-4o".to_string(), Some(ThinkingLevel::High)),
                (
                    "anthropic/claude-sonnet-4-5".to_string(),
                    Some(ThinkingLevel::Low)
                ),
                (
                    "anthropic/claude-opus-4-6".to_string(),
                    Some(ThinkingLevel::Low)
                ),
                // Its id is `anthropic/…`: the glob matches ids too, as pi's does.
                (
                    "openrouter/anthropic/claude-sonnet-4-5".to_string(),
                    Some(ThinkingLevel::Low)
                ),
            ]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let (none, warnings) = resolve_scope(&split_patterns(&["nothing-like-it".into()]), &models);
        assert!(none.is_empty());
        assert_eq!(warnings, ["No models match pattern \"nothing-like-it\""]);
    }
}
