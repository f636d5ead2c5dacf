//! The built-in model catalog: the current major models of each well-known provider.
//!
//! The facts (ids, limits, prices) live in `data/models.json`, a data file compiled into the
//! binary, so refreshing prices is a data change reviewed as a table rather than a code change.
//! The file groups models by provider; the provider's `api`, `baseUrl` and optional `compat` /
//! `headers` apply to each of its models unless a model sets its own. It is parsed once, on first
//! use. Users add models or override these through models.json (see [`crate::registry`]).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::model::{Api, InputKind, Model, ModelCost, OpenAiCompat};

/// The catalog's source text, embedded at build time.
const CATALOG_JSON: &str = include_str!("../data/models.json");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    /// Provenance note for readers of the data file.
    #[serde(rename = "about")]
    _about: String,
    providers: BTreeMap<String, CatalogProvider>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CatalogProvider {
    api: Api,
    base_url: String,
    #[serde(default)]
    compat: Option<OpenAiCompat>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    models: Vec<CatalogModel>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CatalogModel {
    id: String,
    name: String,
    reasoning: bool,
    input: Vec<InputKind>,
    cost: ModelCost,
    context_window: u64,
    max_tokens: u64,
    #[serde(default)]
    compat: Option<OpenAiCompat>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
}

fn parse(text: &str) -> Result<Vec<Model>, serde_json::Error> {
    let file: CatalogFile = serde_json::from_str(text)?;
    let mut models = Vec::new();
    for (provider, entry) in file.providers {
        for m in entry.models {
            models.push(Model {
                id: m.id,
                name: m.name,
                api: entry.api.clone(),
                provider: provider.clone(),
                base_url: entry.base_url.clone(),
                reasoning: m.reasoning,
                input: m.input,
                cost: m.cost,
                context_window: m.context_window,
                max_tokens: m.max_tokens,
                headers: m.headers.or_else(|| entry.headers.clone()),
                compat: m.compat.or_else(|| entry.compat.clone()),
            });
        }
    }
    Ok(models)
}

/// Every built-in model, grouped by provider (providers in alphabetical order, models in the
/// catalog's order: flagship first).
pub fn builtin_models() -> &'static [Model] {
    static MODELS: OnceLock<Vec<Model>> = OnceLock::new();
    MODELS.get_or_init(|| {
        // The file is part of the source tree and checked by the unit tests below, so a failure
        // here is a build defect, not bad user input.
        parse(CATALOG_JSON).unwrap_or_else(|e| panic!("server/ai/data/models.json is invalid: {e}"))
    })
}

/// The built-in model `id` of `provider`, if the catalog has it.
pub fn find(provider: &str, id: &str) -> Option<&'static Model> {
    builtin_models()
        .iter()
        .find(|m| m.provider == provider && m.id == id)
}

/// The names of the providers the catalog knows, alphabetically.
pub fn builtin_providers() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = builtin_models()
        .iter()
        .map(|m| m.provider.as_str())
        .collect();
    names.dedup();
    names
}

/// True when `provider` is one of the catalog's providers.
pub fn is_builtin_provider(provider: &str) -> bool {
    builtin_models().iter().any(|m| m.provider == provider)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::keys;

    #[test]
    fn the_catalog_parses_and_every_entry_is_sane() {
        let models = parse(CATALOG_JSON).expect("data/models.json parses");
        assert!(models.len() >= 40, "only {} models", models.len());
        let mut seen = HashSet::new();
        for m in &models {
            let what = format!("{}/{}", m.provider, m.id);
            assert!(seen.insert((&m.provider, &m.id)), "{what} appears twice");
            assert!(
                !m.id.trim().is_empty() && !m.name.trim().is_empty(),
                "{what}: empty id or name"
            );
            assert!(
                !matches!(m.api, Api::Other(_) | Api::Scripted),
                "{what}: api {} is not one Tandem implements",
                m.api
            );
            assert!(
                m.base_url.starts_with("https://"),
                "{what}: base URL {}",
                m.base_url
            );
            assert!(
                m.context_window > 0 && m.max_tokens > 0,
                "{what}: zero limit"
            );
            assert!(
                m.max_tokens <= m.context_window,
                "{what}: maxTokens > contextWindow"
            );
            assert!(m.input.contains(&InputKind::Text), "{what}: no text input");
            let c = m.cost;
            for price in [c.input, c.output, c.cache_read, c.cache_write] {
                assert!(price.is_finite() && price >= 0.0, "{what}: price {price}");
            }
            assert!(
                !keys::env_var_names(&m.provider).is_empty(),
                "{what}: no environment variable is known for the provider"
            );
        }
    }

    #[test]
    fn every_required_provider_is_present_with_its_api() {
        let expect = [
            ("openai", Api::OpenAiResponses),
            ("anthropic", Api::AnthropicMessages),
            ("google", Api::GoogleGenerativeAi),
            ("openrouter", Api::OpenAiCompletions),
            ("groq", Api::OpenAiCompletions),
            ("xai", Api::OpenAiCompletions),
            ("mistral", Api::OpenAiCompletions),
            ("deepseek", Api::OpenAiCompletions),
        ];
        for (provider, api) in &expect {
            let models: Vec<_> = builtin_models()
                .iter()
                .filter(|m| m.provider == *provider)
                .collect();
            assert!(models.len() >= 2, "{provider}: {} models", models.len());
            assert!(
                models.iter().all(|m| &m.api == api),
                "{provider}: wrong api"
            );
        }
        assert_eq!(builtin_providers().len(), expect.len());
    }

    #[test]
    fn find_returns_catalog_facts() {
        let m = find("anthropic", "claude-sonnet-4-5").expect("in the catalog");
        assert_eq!(m.base_url, "https://api.anthropic.com");
        assert_eq!((m.context_window, m.max_tokens), (200_000, 64_000));
        assert_eq!(m.cost.input, 3.0);
        assert!(m.reasoning && m.accepts_images());
        assert!(find("anthropic", "no-such-model").is_none());
        assert!(find("nobody", "claude-sonnet-4-5").is_none());
        assert!(is_builtin_provider("deepseek") && !is_builtin_provider("ollama"));
    }

    #[test]
    fn provider_level_compat_reaches_each_model() {
        let m = find("mistral", "mistral-large-latest").expect("in the catalog");
        assert_eq!(m.base_url, "https://api.mistral.ai/v1");
        let compat = m.compat.as_ref().expect("mistral carries compat");
        assert_eq!(compat.supports_developer_role, Some(false));
        assert_eq!(compat.requires_tool_result_name, Some(true));
        assert!(find("openai", "gpt-4.1").is_some_and(|m| m.compat.is_none()));
    }
}
