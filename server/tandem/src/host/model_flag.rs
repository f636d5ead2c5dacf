//! Resolving `--model` (with `--provider`), as pi does.
//!
//! An explicit provider narrows the search; without one, a `provider/` prefix naming a known
//! provider is read as the provider (so `zai/glm-5` is Z.ai's model, not a gateway model whose id
//! happens to be `zai/glm-5`), and only when that finds nothing is the whole input tried as an id
//! of any provider. An unknown id of a known provider is used as a custom model id, based on the
//! provider's default model, with a warning naming the closest known models; an unknown model of
//! no known provider is an error with suggestions. Every model is searched, not only those with
//! keys, so `--api-key` works for a first run.

use tandem_ai::registry::ModelRegistry;
use tandem_ai::{Model, ThinkingLevel};

use super::model_pattern::{match_pattern, PatternMatch};
use super::models::{canonical_provider, provider_default, ModelError};
use super::suggest::closest;

/// `--model` resolved: the model, a `:<level>` suffix, and a warning for custom ids.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedFlag {
    /// The model.
    pub model: Model,
    /// Thinking level from the pattern's suffix.
    pub thinking: Option<ThinkingLevel>,
    /// Set when the id is not a known model and is used as a custom id of its provider.
    pub warning: Option<String>,
}

fn exact_anywhere<'m>(models: &[&'m Model], input: &str) -> Option<&'m Model> {
    let lower = input.to_lowercase();
    models.iter().copied().find(|m| {
        m.id.to_lowercase() == lower || format!("{}/{}", m.provider, m.id).to_lowercase() == lower
    })
}

/// Resolves `--model` (with `--provider` when given), as pi does: an explicit provider narrows
/// the search, a `provider/` prefix naming a known provider is read as one, and an unknown id of
/// a known provider is used as a custom model id (with a warning) based on that provider's
/// default model.
pub fn resolve_model_flag(
    registry: &ModelRegistry,
    provider: Option<&str>,
    pattern: &str,
) -> Result<ResolvedFlag, ModelError> {
    let pool = registry.all();
    let all: Vec<&Model> = pool.iter().collect();
    let found = |m: PatternMatch<'_>| ResolvedFlag {
        model: m.model.clone(),
        thinking: m.thinking,
        warning: None,
    };
    let explicit = provider.map(|p| canonical_provider(pool, p)).transpose()?;
    let mut chosen = explicit.clone();
    let mut rest = pattern.to_string();
    let mut inferred = false;
    if chosen.is_none() {
        if let Some((prefix, tail)) = pattern.split_once('/') {
            if let Ok(p) = canonical_provider(pool, prefix) {
                chosen = Some(p);
                rest = tail.to_string();
                inferred = true;
            }
        }
    }
    if chosen.is_none() {
        if let Some(m) = exact_anywhere(&all, pattern) {
            return Ok(found(PatternMatch {
                model: m,
                thinking: None,
            }));
        }
    }
    if let Some(p) = &explicit {
        // `--provider openai --model openai/gpt-4o`: the prefix is redundant.
        let prefix = format!("{p}/");
        let (head, tail) = (pattern.get(..prefix.len()), pattern.get(prefix.len()..));
        if let (Some(head), Some(tail)) = (head, tail) {
            if head.eq_ignore_ascii_case(&prefix) {
                rest = tail.to_string();
            }
        }
    }
    let candidates: Vec<&Model> = match &chosen {
        Some(p) => all.iter().copied().filter(|m| &m.provider == p).collect(),
        None => all.clone(),
    };
    if let Some(m) = match_pattern(&rest, &candidates) {
        return Ok(found(m));
    }
    if inferred {
        if let Some(m) = exact_anywhere(&all, pattern) {
            return Ok(found(PatternMatch {
                model: m,
                thinking: None,
            }));
        }
        if let Some(m) = match_pattern(pattern, &all) {
            return Ok(found(m));
        }
    }
    let suggestions = suggest_models(pool, chosen.as_deref(), &rest);
    if let Some(p) = &chosen {
        if let Some(base) = provider_default(&all, p) {
            return Ok(custom_model(base, p, &rest, &suggestions));
        }
    }
    Err(ModelError::UnknownModel {
        model: match &chosen {
            Some(p) => format!("{p}/{rest}"),
            None => pattern.to_string(),
        },
        suggestions,
    })
}

/// Known `provider/id` names close to `typed` (a `:<level>` suffix ignored), within `provider`.
fn suggest_models(pool: &[Model], provider: Option<&str>, typed: &str) -> Vec<String> {
    let typed = match typed.rsplit_once(':') {
        Some((id, level)) if ThinkingLevel::parse(level).is_some() => id,
        _ => typed,
    };
    let names: Vec<String> = pool
        .iter()
        .filter(|m| provider.is_none_or(|p| m.provider == p))
        .map(|m| format!("{}/{}", m.provider, m.id))
        .collect();
    closest(typed, names.iter().map(String::as_str), 3)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// An unknown id of a known provider, used as-is on top of the provider's default model. A
/// trailing `:<level>` is read as a thinking level (pi would keep it in the id).
fn custom_model(base: &Model, provider: &str, rest: &str, suggestions: &[String]) -> ResolvedFlag {
    let (id, thinking) = match rest.rsplit_once(':') {
        Some((id, level)) if ThinkingLevel::parse(level).is_some() => {
            (id, ThinkingLevel::parse(level))
        }
        _ => (rest, None),
    };
    let mut model = base.clone();
    model.id = id.to_string();
    model.name = id.to_string();
    let mut warning =
        format!("Model \"{id}\" not found for provider \"{provider}\". Using custom model id.");
    if !suggestions.is_empty() {
        warning.push_str(&format!(
            " Known models close to it: {}.",
            suggestions.join(", ")
        ));
    }
    ResolvedFlag {
        model,
        thinking,
        warning: Some(warning),
    }
}
