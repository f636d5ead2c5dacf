//! Applies a checked models.json to the built-in models, with pi's rules:
//! - a provider entry's `baseUrl`, `headers` and `compat` change every built-in model of that
//!   provider; `modelOverrides` then change single models field by field (prices one by one,
//!   headers added, compat merged);
//! - custom `models` get pi's defaults (not reasoning, text input, free, 128000-token context,
//!   16384 output tokens) and replace a model with the same provider and id;
//! - header values are resolved now (`!command`, variable or literal), once, at load.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value;

use super::config_value::CommandError;
use super::errors::ConfigError;
use super::json_path::pointer;
use super::models_json::{ModelOverride, ModelsJson, PartialCost, ProviderConfig};
use crate::model::{Api, InputKind, Model, ModelCost, OpenAiCompat};

/// Context window of a custom model that does not give one (pi's default).
pub(crate) const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// Output limit of a custom model that does not give one (pi's default).
pub(crate) const DEFAULT_MAX_TOKENS: u64 = 16_384;

/// Header name → value.
type Headers = BTreeMap<String, String>;

/// Resolves a raw configuration value (see [`super::config_value`]).
pub(crate) type Resolve<'a> = &'a dyn Fn(&str) -> Result<String, CommandError>;

/// The merged model list and the problems met while resolving header values.
pub(crate) struct Merged {
    pub models: Vec<Model>,
    pub errors: Vec<ConfigError>,
}

pub(crate) fn merge(
    builtins: &[Model],
    config: &ModelsJson,
    file: &Path,
    resolve: Resolve,
) -> Merged {
    let mut errors = Vec::new();

    // Provider headers are resolved once per provider, not once per model.
    let providers: BTreeMap<&str, (&ProviderConfig, Option<Headers>)> = config
        .providers
        .iter()
        .map(|(name, p)| {
            let headers = p.headers.as_ref().and_then(|h| {
                resolve_headers(
                    h,
                    &["providers", name, "headers"],
                    file,
                    resolve,
                    &mut errors,
                )
            });
            (name.as_str(), (p, headers))
        })
        .collect();

    // Overrides by provider and model id: looked up once per model, so that the merge stays
    // linear in the number of models (a models.json can list tens of thousands).
    let overrides: HashMap<(&str, &str), &ModelOverride> = config
        .providers
        .iter()
        .flat_map(|(name, p)| {
            p.model_overrides
                .iter()
                .rev()
                .map(move |(id, o)| ((name.as_str(), id.as_str()), o))
        })
        .collect();
    let mut models: Vec<Model> = builtins.to_vec();
    for model in &mut models {
        let Some((p, headers)) = providers.get(model.provider.as_str()) else {
            continue;
        };
        if let Some(url) = &p.base_url {
            model.base_url = url.clone();
        }
        add_headers(model, headers.clone());
        model.compat = merge_compat(model.compat.as_ref(), p.compat.as_ref());
        if let Some(o) = overrides
            .get(&(model.provider.as_str(), model.id.as_str()))
            .copied()
        {
            let at = [
                "providers",
                &model.provider,
                "modelOverrides",
                &model.id,
                "headers",
            ];
            let headers = o
                .headers
                .as_ref()
                .and_then(|h| resolve_headers(h, &at, file, resolve, &mut errors));
            apply_override(model, o, headers);
        }
    }

    // Where each (provider, id) is in `models`: a custom model replaces the one it names.
    let mut place: HashMap<(String, String), usize> = models
        .iter()
        .enumerate()
        .map(|(i, m)| ((m.provider.clone(), m.id.clone()), i))
        .collect();
    for (name, p) in &config.providers {
        let provider_headers = providers.get(name.as_str()).and_then(|(_, h)| h.clone());
        let bearer = match (&p.api_key, p.auth_header && !p.models.is_empty()) {
            (Some(raw), true) => match resolve(raw) {
                Ok(key) => Some(format!("Bearer {key}")),
                Err(e) => {
                    errors.push(ConfigError {
                        file: file.to_path_buf(),
                        pointer: Some(pointer(&["providers", name, "apiKey"])),
                        message: format!("the key for \"authHeader\" could not be resolved: {e}"),
                    });
                    None
                }
            },
            _ => None,
        };
        for (i, def) in p.models.iter().enumerate() {
            let Some(api) = def.api.as_ref().or(p.api.as_ref()) else {
                continue;
            };
            let index = i.to_string();
            let at = ["providers", name, "models", &index, "headers"];
            let model_headers = def
                .headers
                .as_ref()
                .and_then(|h| resolve_headers(h, &at, file, resolve, &mut errors));
            let mut headers = match (provider_headers.clone(), model_headers) {
                (None, None) => None,
                (base, extra) => Some(
                    base.into_iter()
                        .chain(extra)
                        .flatten()
                        .collect::<BTreeMap<_, _>>(),
                ),
            };
            if let Some(bearer) = &bearer {
                headers
                    .get_or_insert_with(BTreeMap::new)
                    .insert("Authorization".to_string(), bearer.clone());
            }
            let model = Model {
                id: def.id.clone(),
                name: def.name.clone().unwrap_or_else(|| def.id.clone()),
                api: Api::parse(api),
                provider: name.clone(),
                base_url: def
                    .base_url
                    .clone()
                    .or_else(|| p.base_url.clone())
                    .unwrap_or_default(),
                reasoning: def.reasoning.unwrap_or(false),
                input: def.input.clone().unwrap_or_else(|| vec![InputKind::Text]),
                cost: def
                    .cost
                    .map(|c| with_prices(ModelCost::default(), c))
                    .unwrap_or_default(),
                context_window: def.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW),
                max_tokens: def.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
                headers,
                compat: merge_compat(p.compat.as_ref(), def.compat.as_ref()),
            };
            match place.get(&(model.provider.clone(), model.id.clone())) {
                Some(&i) => models[i] = model,
                None => {
                    place.insert((model.provider.clone(), model.id.clone()), models.len());
                    models.push(model);
                }
            }
        }
    }
    Merged { models, errors }
}

/// Resolves each header value; a value that cannot be resolved is reported and left out.
fn resolve_headers(
    raw: &BTreeMap<String, String>,
    at: &[&str],
    file: &Path,
    resolve: Resolve,
    errors: &mut Vec<ConfigError>,
) -> Option<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (name, value) in raw {
        match resolve(value) {
            Ok(v) if !v.is_empty() => {
                out.insert(name.clone(), v);
            }
            Ok(_) => {}
            Err(e) => {
                let mut path = at.to_vec();
                path.push(name);
                errors.push(ConfigError {
                    file: file.to_path_buf(),
                    pointer: Some(pointer(&path)),
                    message: format!(
                        "the header value could not be resolved, so the header is not sent: {e}"
                    ),
                });
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

fn add_headers(model: &mut Model, extra: Option<BTreeMap<String, String>>) {
    if let Some(extra) = extra {
        model
            .headers
            .get_or_insert_with(BTreeMap::new)
            .extend(extra);
    }
}

fn apply_override(model: &mut Model, o: &ModelOverride, headers: Option<BTreeMap<String, String>>) {
    if let Some(name) = &o.name {
        model.name = name.clone();
    }
    if let Some(reasoning) = o.reasoning {
        model.reasoning = reasoning;
    }
    if let Some(input) = &o.input {
        model.input = input.clone();
    }
    if let Some(cost) = o.cost {
        model.cost = with_prices(model.cost, cost);
    }
    if let Some(n) = o.context_window {
        model.context_window = n;
    }
    if let Some(n) = o.max_tokens {
        model.max_tokens = n;
    }
    add_headers(model, headers);
    model.compat = merge_compat(model.compat.as_ref(), o.compat.as_ref());
}

fn with_prices(base: ModelCost, p: PartialCost) -> ModelCost {
    ModelCost {
        input: p.input.unwrap_or(base.input),
        output: p.output.unwrap_or(base.output),
        cache_read: p.cache_read.unwrap_or(base.cache_read),
        cache_write: p.cache_write.unwrap_or(base.cache_write),
    }
}

/// Fields set in `over` win; OpenRouter routing is merged one level deeper, as in pi. Done on
/// the JSON form so fields added to [`OpenAiCompat`] later merge without changes here.
pub(crate) fn merge_compat(
    base: Option<&OpenAiCompat>,
    over: Option<&OpenAiCompat>,
) -> Option<OpenAiCompat> {
    let (base, over) = match (base, over) {
        (base, None) => return base.cloned(),
        (None, Some(over)) => return Some(over.clone()),
        (Some(base), Some(over)) => (base, over),
    };
    let (Ok(Value::Object(mut merged)), Ok(Value::Object(top))) =
        (serde_json::to_value(base), serde_json::to_value(over))
    else {
        return Some(over.clone());
    };
    for (key, value) in top {
        match (merged.get_mut(&key), value) {
            (Some(Value::Object(inner)), Value::Object(add)) if key == "openRouterRouting" => {
                inner.extend(add);
            }
            (_, value) => {
                merged.insert(key, value);
            }
        }
    }
    serde_json::from_value(Value::Object(merged))
        .ok()
        .or_else(|| Some(over.clone()))
}
