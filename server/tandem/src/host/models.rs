//! Choosing the model and thinking level of a run, in pi's order of precedence.
//!
//! Order: `--model` (with `--provider`), else the model of the session being resumed (when it
//! still exists and has a key), else the editor's `model` setting (the language server's
//! [`SessionOptions::default_model`]), else settings' `defaultProvider`/`defaultModel`, else the
//! first provider with a key (pi's provider preference). Nothing usable is an error that says what to
//! set ([`ModelError::NoModels`]): the scripted model never stands in for a real one (it runs
//! only where it is asked for: `tandem demo`, or a models.json provider with `"api":
//! "scripted"`). The thinking level is
//! `--thinking`, else a `:<level>` suffix of the model chosen by name, else the resumed
//! session's, else the editor's `thinkingLevel`, else (for a new session) settings'
//! `modelThinkingLevels` entry of the chosen model, else `defaultThinkingLevel`, else `medium`;
//! then clamped to what the model supports.
//!
//! `--model` (or an editor's `model` setting) is resolved by [`super::model_flag`]. Finding the key is a separate step,
//! [`require_key`].

use std::collections::BTreeMap;

use tandem_ai::registry::{KeyError, ModelRegistry};
use tandem_ai::{Api, Model, ThinkingLevel};

use super::model_flag::resolve_model_flag;
use super::model_scope::{resolve_scope, split_patterns};
use super::options::SessionOptions;
use super::suggest::closest;

/// The thinking level when nothing else sets one (pi's default).
pub const DEFAULT_THINKING: ThinkingLevel = ThinkingLevel::Medium;

/// pi's provider preference for the "first available" fallback, with its default model of each.
/// When that id is not in the catalog, the provider's first (flagship) model is used instead.
const PREFERRED: [(&str, &str); 16] = [
    ("amazon-bedrock", "us.anthropic.claude-opus-4-6-v1"),
    ("anthropic", "claude-opus-4-7"),
    ("openai", "gpt-5.4"),
    ("azure-openai-responses", "gpt-5.4"),
    ("openai-codex", "gpt-5.5"),
    ("deepseek", "deepseek-v4-pro"),
    ("google", "gemini-3.1-pro-preview"),
    ("google-vertex", "gemini-3.1-pro-preview"),
    ("github-copilot", "gpt-5.4"),
    ("openrouter", "moonshotai/kimi-k2.6"),
    ("vercel-ai-gateway", "zai/glm-5.1"),
    ("xai", "grok-4.20-0309-reasoning"),
    ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "zai-glm-4.7"),
    ("zai", "glm-5.1"),
    ("mistral", "devstral-medium-latest"),
];

/// What settings.json says about models (read by the settings loader, passed in here).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelDefaults {
    /// `defaultProvider`.
    pub provider: Option<String>,
    /// `defaultModel`.
    pub model: Option<String>,
    /// `defaultThinkingLevel`.
    pub thinking_level: Option<ThinkingLevel>,
    /// `modelThinkingLevels`: a new session's level per `provider/modelId`.
    pub model_thinking_levels: BTreeMap<String, ThinkingLevel>,
    /// `enabledModels`: the model scope when `--models` gives none.
    pub enabled_models: Option<Vec<String>>,
}

/// What a session being resumed recorded (only for sessions that already have messages).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResumedSession {
    /// The last `model_change`: provider and model id.
    pub model: Option<(String, String)>,
    /// The last `thinking_level_change`, if any.
    pub thinking_level: Option<ThinkingLevel>,
}

/// Where the chosen model came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// `--model` / `--provider`.
    CommandLine,
    /// The resumed session.
    Session,
    /// The editor's `model` setting.
    Editor,
    /// settings.json.
    Settings,
    /// The first provider with a key.
    FirstAvailable,
}

/// The model and thinking level for a run.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChoice {
    /// The model.
    pub model: Model,
    /// The thinking level, already clamped to the model.
    pub thinking_level: ThinkingLevel,
    /// Where the model came from.
    pub source: ModelSource,
    /// Notes for stderr (a custom model id, a session model that could not be restored, …).
    pub warnings: Vec<String>,
}

/// Why no model could be chosen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// `--provider` (or a settings default) names no known provider.
    #[error(
        "Unknown provider \"{provider}\".{} Known providers: {}. Use --list-models to see \
         available providers/models.",
        did_you_mean(.suggestions), .known.join(", ")
    )]
    UnknownProvider {
        /// What was asked for.
        provider: String,
        /// Close names.
        suggestions: Vec<String>,
        /// Every provider name.
        known: Vec<String>,
    },
    /// `--model` matched nothing and named no known provider.
    #[error(
        "Model \"{model}\" not found.{} Use --list-models to see available models.",
        did_you_mean(.suggestions)
    )]
    UnknownModel {
        /// What was asked for.
        model: String,
        /// Close `provider/id` names.
        suggestions: Vec<String>,
    },
    /// `--api-key` without a model to give it to.
    #[error("--api-key requires a model: pass --model (or --provider) as well")]
    ApiKeyWithoutModel,
    /// The chosen model's provider has no usable key.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// No provider has a usable key (and no model was asked for).
    #[error("{0}")]
    NoModels(String),
}

fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!(" Did you mean {one}?"),
        many => format!(" Did you mean one of: {}?", many.join(", ")),
    }
}

/// True when `model` can be called now: scripted models need no key.
pub fn is_available(registry: &ModelRegistry, model: &Model) -> bool {
    model.api == Api::Scripted || registry.has_key(&model.provider)
}

/// The key for `model` (`runtime` is `--api-key`); `None` for scripted models. A missing key is
/// the registry's error, naming the environment variable and the models.json path. May run a
/// `!command` key (blocking): call at startup.
pub fn require_key(
    registry: &ModelRegistry,
    model: &Model,
    runtime: Option<&str>,
) -> Result<Option<String>, ModelError> {
    if model.api == Api::Scripted {
        return Ok(None);
    }
    Ok(Some(registry.require_api_key(&model.provider, runtime)?))
}

fn providers(pool: &[Model]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for m in pool {
        if !names.contains(&m.provider) {
            names.push(m.provider.clone());
        }
    }
    names
}

pub(super) fn canonical_provider(pool: &[Model], name: &str) -> Result<String, ModelError> {
    let known = providers(pool);
    if let Some(found) = known.iter().find(|p| p.eq_ignore_ascii_case(name)) {
        return Ok(found.clone());
    }
    let suggestions = closest(name, known.iter().map(String::as_str), 3)
        .into_iter()
        .map(|s| format!("\"{s}\""))
        .collect();
    Err(ModelError::UnknownProvider {
        provider: name.to_string(),
        suggestions,
        known,
    })
}

/// pi's default model for `provider` if present, else the provider's first model.
pub(super) fn provider_default<'m>(models: &[&'m Model], provider: &str) -> Option<&'m Model> {
    let of_provider = || models.iter().copied().filter(|m| m.provider == provider);
    let preferred = PREFERRED.iter().find(|(p, _)| *p == provider);
    preferred
        .and_then(|(_, id)| of_provider().find(|m| m.id == *id))
        .or_else(|| of_provider().next())
}

/// Chooses the model and thinking level for a run (see the module docs for the order).
/// `defaults` come from settings.json; `resumed` is the session being continued, if it has
/// messages. Does not look up the key: see [`require_key`].
pub fn choose_model(
    registry: &ModelRegistry,
    run: &SessionOptions,
    defaults: &ModelDefaults,
    resumed: Option<&ResumedSession>,
) -> Result<ModelChoice, ModelError> {
    let pool = registry.all();
    let all: Vec<&Model> = pool.iter().collect();
    let mut warnings = Vec::new();
    let mut pattern_thinking = None;
    let picked: Option<(Model, ModelSource)> = if let Some(pattern) = &run.model {
        let resolved = resolve_model_flag(registry, run.provider.as_deref(), pattern)?;
        warnings.extend(resolved.warning);
        pattern_thinking = resolved.thinking;
        Some((resolved.model, ModelSource::CommandLine))
    } else if let Some(provider) = &run.provider {
        let provider = canonical_provider(pool, provider)?;
        let settings_id = defaults
            .model
            .as_deref()
            .filter(|_| defaults.provider.as_deref() == Some(provider.as_str()));
        let from_settings = settings_id.and_then(|id| {
            all.iter()
                .copied()
                .find(|m| m.provider == provider && m.id == id)
        });
        from_settings
            .or_else(|| provider_default(&all, &provider))
            .map(|m| (m.clone(), ModelSource::CommandLine))
    } else {
        None
    };
    if picked.is_none() && run.api_key.is_some() && run.models.is_none() {
        return Err(ModelError::ApiKeyWithoutModel);
    }
    let mut not_restored = None;
    let picked = picked.or_else(|| {
        let (provider, id) = resumed?.model.as_ref()?;
        let found = all
            .iter()
            .find(|m| &m.provider == provider && &m.id == id && is_available(registry, m));
        if found.is_none() {
            not_restored = Some(format!("{provider}/{id}"));
        }
        found.map(|m| ((*m).clone(), ModelSource::Session))
    });
    // The editor's model: for a session without one of its own.
    let picked = match (picked, &run.default_model) {
        (Some(found), _) => Some(found),
        (None, Some(pattern)) => {
            let resolved = resolve_model_flag(registry, run.default_provider.as_deref(), pattern)?;
            warnings.extend(resolved.warning);
            pattern_thinking = resolved.thinking;
            Some((resolved.model, ModelSource::Editor))
        }
        (None, None) => None,
    };
    // The scope's first model, for a new session (`--models`, else `enabledModels`).
    let picked = match (picked, resumed, scope_patterns(run, defaults)) {
        (Some(found), _, _) => Some(found),
        (None, None, Some((patterns, source))) => {
            let available: Vec<&Model> = all
                .iter()
                .copied()
                .filter(|m| is_available(registry, m))
                .collect();
            let (scoped, scope_warnings) = resolve_scope(&patterns, &available);
            warnings.extend(scope_warnings);
            scoped.into_iter().next().map(|first| {
                pattern_thinking = first.thinking;
                (first.model, source)
            })
        }
        (None, _, _) => None,
    };
    let picked = picked
        .or_else(|| {
            let (provider, id) = (defaults.provider.as_ref()?, defaults.model.as_ref()?);
            let found = all
                .iter()
                .find(|m| &m.provider == provider && &m.id == id)?;
            Some(((*found).clone(), ModelSource::Settings))
        })
        .or_else(|| {
            first_available(registry, &all).map(|m| (m.clone(), ModelSource::FirstAvailable))
        });
    let (model, source) = match picked {
        Some(found) => {
            if let Some(old) = not_restored {
                let new = format!("{}/{}", found.0.provider, found.0.id);
                warnings.push(format!("Could not restore model {old}. Using {new}"));
            }
            found
        }
        None => return Err(ModelError::NoModels(no_models_message(registry))),
    };
    let requested = run
        .thinking
        .or(pattern_thinking)
        .or_else(|| resumed.and_then(|r| r.thinking_level))
        .or(run.default_thinking)
        .or_else(|| {
            let key = format!("{}/{}", model.provider, model.id);
            resumed
                .is_none()
                .then(|| defaults.model_thinking_levels.get(&key).copied())
                .flatten()
        })
        .or(defaults.thinking_level)
        .unwrap_or(DEFAULT_THINKING);
    Ok(ModelChoice {
        thinking_level: model.effective_thinking(requested),
        model,
        source,
        warnings,
    })
}

/// The scope's patterns and where they come from: `--models`, else `enabledModels`.
fn scope_patterns(
    run: &SessionOptions,
    defaults: &ModelDefaults,
) -> Option<(Vec<String>, ModelSource)> {
    let (list, source) = match (&run.models, &defaults.enabled_models) {
        (Some(list), _) => (list, ModelSource::CommandLine),
        (None, Some(list)) => (list, ModelSource::Settings),
        (None, None) => return None,
    };
    let patterns = split_patterns(list);
    (!patterns.is_empty()).then_some((patterns, source))
}

/// pi's "No models available", with what to set and where, and every key that is configured but
/// cannot be used (a failing `!command`, an expired login). A broken models.json is added by
/// the caller ([`super::setup::choose_model`]) to every model error. May run key commands (once
/// per process).
pub fn no_models_message(registry: &ModelRegistry) -> String {
    let dir = registry.agent_dir();
    let mut text = format!(
        "No models available: no provider has a usable API key. Set a provider's key in the \
         environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY), store one in \
         {} (pi's /login writes it), or add a provider with its \"apiKey\" to {}; then \
         `tandem --list-models` shows what can be used.",
        dir.auth_json().display(),
        dir.models_json().display()
    );
    for problem in registry.key_problems() {
        text.push_str(&format!("\nUnusable key: {problem}"));
    }
    text
}

/// The first model with a key, by pi's provider preference, else in registry order.
fn first_available<'m>(registry: &ModelRegistry, all: &[&'m Model]) -> Option<&'m Model> {
    let available: Vec<&Model> = all
        .iter()
        .copied()
        .filter(|m| m.api != Api::Scripted && is_available(registry, m))
        .collect();
    PREFERRED
        .iter()
        .find_map(|(provider, _)| provider_default(&available, provider))
        .or_else(|| available.first().copied())
}

#[cfg(test)]
#[path = "models_tests.rs"]
mod tests;
