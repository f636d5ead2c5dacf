//! models.json, in pi's schema: custom providers and models, provider-wide changes to built-in
//! providers (`baseUrl`, `apiKey`, `headers`, `compat`) and per-model `modelOverrides`.
//!
//! The file is read into a `serde_json::Value` and checked field by field rather than through a
//! derived `Deserialize`, so that every problem is reported at once, each with its JSON pointer
//! and a plain description ("expected a positive whole number, found a string"). Unknown fields
//! are ignored, as pi ignores them. This module only reads; [`super::merge`] applies the result.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::errors::ConfigError;
use super::json_path::{describe, pointer};
use crate::model::{InputKind, OpenAiCompat};

/// A valid models.json.
#[derive(Debug, Default)]
pub(crate) struct ModelsJson {
    /// Providers in file order.
    pub providers: Vec<(String, ProviderConfig)>,
}

/// One entry of `providers`.
#[derive(Debug, Default)]
pub(crate) struct ProviderConfig {
    pub base_url: Option<String>,
    /// The raw key value (`!command`, variable name or literal).
    pub api_key: Option<String>,
    pub api: Option<String>,
    /// Raw header values.
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<OpenAiCompat>,
    /// Send the key as `Authorization: Bearer` on custom models.
    pub auth_header: bool,
    pub models: Vec<ModelDef>,
    /// Model id → changes, in file order.
    pub model_overrides: Vec<(String, ModelOverride)>,
}

/// A custom model; absent fields take pi's defaults when merged.
#[derive(Debug, Default)]
pub(crate) struct ModelDef {
    pub id: String,
    pub name: Option<String>,
    pub api: Option<String>,
    pub base_url: Option<String>,
    pub reasoning: Option<bool>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<PartialCost>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<OpenAiCompat>,
}

/// Changes to one built-in model; only the fields given change.
#[derive(Debug, Default)]
pub(crate) struct ModelOverride {
    pub name: Option<String>,
    pub reasoning: Option<bool>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<PartialCost>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<OpenAiCompat>,
}

/// Prices where each may be absent (all four are required on a custom model, as in pi).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PartialCost {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

const COST_FIELDS: [&str; 4] = ["input", "output", "cacheRead", "cacheWrite"];

/// Reads `file`: `Ok(None)` when it does not exist, `Err` with every problem found otherwise.
pub(crate) fn load(file: &Path) -> Result<Option<ModelsJson>, Vec<ConfigError>> {
    match std::fs::read_to_string(file) {
        Ok(text) => parse(&text, file).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(vec![ConfigError {
            file: file.to_path_buf(),
            pointer: None,
            message: format!("cannot be read: {e}"),
        }]),
    }
}

/// Parses and checks models.json text; `file` is only used in error messages.
pub(crate) fn parse(text: &str, file: &Path) -> Result<ModelsJson, Vec<ConfigError>> {
    let mut reader = Reader {
        file,
        errors: Vec::new(),
    };
    let root: Value = match crate::jsonc::from_str(text) {
        Ok(root) => root,
        Err(e) => {
            reader.errors.push(ConfigError {
                file: file.to_path_buf(),
                pointer: None,
                message: format!("is not valid JSON: {e}"),
            });
            return Err(reader.errors);
        }
    };
    let config = reader.root(&root);
    if reader.errors.is_empty() {
        Ok(config)
    } else {
        Err(reader.errors)
    }
}

/// `at` extended by one key.
fn child(at: &str, key: &str) -> String {
    format!("{at}{}", pointer(&[key]))
}

struct Reader<'f> {
    file: &'f Path,
    errors: Vec<ConfigError>,
}

impl Reader<'_> {
    fn fail(&mut self, at: String, message: impl Into<String>) {
        self.errors.push(ConfigError {
            file: self.file.to_path_buf(),
            pointer: Some(if at.is_empty() { "/".to_string() } else { at }),
            message: message.into(),
        });
    }

    fn expected(&mut self, at: String, what: &str, found: &Value) {
        self.fail(at, format!("expected {what}, found {}", describe(found)));
    }

    fn object<'v>(
        &mut self,
        value: &'v Value,
        at: &str,
        what: &str,
    ) -> Option<&'v Map<String, Value>> {
        match value {
            Value::Object(obj) => Some(obj),
            other => {
                self.expected(at.to_string(), what, other);
                None
            }
        }
    }

    fn root(&mut self, root: &Value) -> ModelsJson {
        let mut config = ModelsJson::default();
        let Some(obj) = self.object(root, "", "an object with \"providers\"") else {
            return config;
        };
        let Some(providers) = obj.get("providers") else {
            self.fail(String::new(), "\"providers\" is missing");
            return config;
        };
        let Some(providers) = self.object(providers, "/providers", "an object of providers") else {
            return config;
        };
        for (name, value) in providers {
            if let Some(provider) = self.provider(value, &child("/providers", name)) {
                config.providers.push((name.clone(), provider));
            }
        }
        config
    }

    fn provider(&mut self, value: &Value, at: &str) -> Option<ProviderConfig> {
        let obj = self.object(value, at, "an object")?;
        let mut p = ProviderConfig {
            base_url: self.string(obj, at, "baseUrl"),
            api_key: self.string(obj, at, "apiKey"),
            api: self.string(obj, at, "api"),
            headers: self.headers(obj, at),
            compat: self.compat(obj, at),
            auth_header: self.boolean(obj, at, "authHeader").unwrap_or(false),
            ..ProviderConfig::default()
        };
        match obj.get("models") {
            None => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let item_at = child(&child(at, "models"), &i.to_string());
                    if let Some(def) = self.model_def(item, &item_at, p.api.is_some()) {
                        p.models.push(def);
                    }
                }
            }
            Some(other) => self.expected(child(at, "models"), "an array of models", other),
        }
        match obj.get("modelOverrides") {
            None => {}
            Some(Value::Object(overrides)) => {
                for (id, item) in overrides {
                    let item_at = child(&child(at, "modelOverrides"), id);
                    if let Some(o) = self.model_override(item, &item_at) {
                        p.model_overrides.push((id.clone(), o));
                    }
                }
            }
            Some(other) => {
                self.expected(child(at, "modelOverrides"), "an object of model ids", other)
            }
        }
        let defines_models = matches!(obj.get("models"), Some(Value::Array(m)) if !m.is_empty());
        if defines_models {
            if !obj.contains_key("baseUrl") {
                self.fail(
                    at.to_string(),
                    "\"baseUrl\" is required when the provider defines \"models\"",
                );
            }
            if !obj.contains_key("apiKey") {
                self.fail(at.to_string(), "\"apiKey\" is required when the provider defines \"models\" (a literal, an environment variable name, or \"!command\")");
            }
        }
        let known = [
            "baseUrl",
            "apiKey",
            "headers",
            "compat",
            "modelOverrides",
            "models",
        ];
        if !known.iter().any(|k| obj.contains_key(*k)) {
            self.fail(at.to_string(), "sets nothing: give \"baseUrl\", \"apiKey\", \"headers\", \"compat\", \"modelOverrides\" or \"models\"");
        }
        Some(p)
    }

    fn model_def(&mut self, value: &Value, at: &str, provider_has_api: bool) -> Option<ModelDef> {
        let obj = self.object(value, at, "a model object")?;
        let id = self.string(obj, at, "id");
        if !obj.contains_key("id") {
            self.fail(child(at, "id"), "is missing");
        }
        let def = ModelDef {
            id: id.unwrap_or_default(),
            name: self.string(obj, at, "name"),
            api: self.string(obj, at, "api"),
            base_url: self.string(obj, at, "baseUrl"),
            reasoning: self.boolean(obj, at, "reasoning"),
            input: self.input(obj, at),
            cost: self.cost(obj, at, true),
            context_window: self.count(obj, at, "contextWindow"),
            max_tokens: self.count(obj, at, "maxTokens"),
            headers: self.headers(obj, at),
            compat: self.compat(obj, at),
        };
        if !provider_has_api && !obj.contains_key("api") {
            self.fail(
                at.to_string(),
                "no \"api\": set it on the model or on its provider (e.g. \"openai-completions\")",
            );
        }
        Some(def)
    }

    fn model_override(&mut self, value: &Value, at: &str) -> Option<ModelOverride> {
        let obj = self.object(value, at, "an object of changes")?;
        Some(ModelOverride {
            name: self.string(obj, at, "name"),
            reasoning: self.boolean(obj, at, "reasoning"),
            input: self.input(obj, at),
            cost: self.cost(obj, at, false),
            context_window: self.count(obj, at, "contextWindow"),
            max_tokens: self.count(obj, at, "maxTokens"),
            headers: self.headers(obj, at),
            compat: self.compat(obj, at),
        })
    }

    fn string(&mut self, obj: &Map<String, Value>, at: &str, key: &str) -> Option<String> {
        match obj.get(key)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::String(_) => {
                self.fail(child(at, key), "must not be empty");
                None
            }
            other => {
                self.expected(child(at, key), "a string", other);
                None
            }
        }
    }

    fn boolean(&mut self, obj: &Map<String, Value>, at: &str, key: &str) -> Option<bool> {
        match obj.get(key)? {
            Value::Bool(b) => Some(*b),
            other => {
                self.expected(child(at, key), "true or false", other);
                None
            }
        }
    }

    /// A positive whole number (a token count).
    fn count(&mut self, obj: &Map<String, Value>, at: &str, key: &str) -> Option<u64> {
        let value = obj.get(key)?;
        let n = match value {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            }),
            _ => None,
        };
        match n {
            Some(n) if n > 0 => Some(n),
            _ => {
                self.expected(child(at, key), "a positive whole number", value);
                None
            }
        }
    }

    fn price(&mut self, obj: &Map<String, Value>, at: &str, key: &str) -> Option<f64> {
        let value = obj.get(key)?;
        match value.as_f64() {
            Some(p) if p >= 0.0 => Some(p),
            _ => {
                self.expected(
                    child(at, key),
                    "a price (a number of dollars per million tokens, 0 or more)",
                    value,
                );
                None
            }
        }
    }

    fn input(&mut self, obj: &Map<String, Value>, at: &str) -> Option<Vec<InputKind>> {
        let value = obj.get("input")?;
        let at = child(at, "input");
        let Value::Array(items) = value else {
            self.expected(at, "an array such as [\"text\", \"image\"]", value);
            return None;
        };
        let mut kinds = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item.as_str() {
                Some("text") => kinds.push(InputKind::Text),
                Some("image") => kinds.push(InputKind::Image),
                _ => self.expected(child(&at, &i.to_string()), "\"text\" or \"image\"", item),
            }
        }
        Some(kinds)
    }

    fn cost(
        &mut self,
        obj: &Map<String, Value>,
        at: &str,
        all_required: bool,
    ) -> Option<PartialCost> {
        let value = obj.get("cost")?;
        let at = child(at, "cost");
        let fields = self.object(value, &at, "an object of prices")?;
        if all_required {
            for key in COST_FIELDS.into_iter().filter(|k| !fields.contains_key(*k)) {
                self.fail(child(&at, key), "is missing (a custom model's cost needs input, output, cacheRead and cacheWrite)");
            }
        }
        Some(PartialCost {
            input: self.price(fields, &at, "input"),
            output: self.price(fields, &at, "output"),
            cache_read: self.price(fields, &at, "cacheRead"),
            cache_write: self.price(fields, &at, "cacheWrite"),
        })
    }

    fn headers(&mut self, obj: &Map<String, Value>, at: &str) -> Option<BTreeMap<String, String>> {
        let value = obj.get("headers")?;
        let at = child(at, "headers");
        let fields = self.object(value, &at, "an object of header names to values")?;
        let mut headers = BTreeMap::new();
        for (name, value) in fields {
            match value {
                Value::String(v) => {
                    headers.insert(name.clone(), v.clone());
                }
                other => self.expected(child(&at, name), "a string", other),
            }
        }
        Some(headers)
    }

    /// `compat` is checked by the shared [`OpenAiCompat`] type; a failure is located by trying
    /// each field alone (every field is optional, so only the faulty one fails).
    fn compat(&mut self, obj: &Map<String, Value>, at: &str) -> Option<OpenAiCompat> {
        let value = obj.get("compat")?;
        let at = child(at, "compat");
        let fields = self.object(value, &at, "an object")?;
        match serde_json::from_value::<OpenAiCompat>(value.clone()) {
            Ok(compat) => Some(compat),
            Err(whole) => {
                let before = self.errors.len();
                for (key, field) in fields {
                    let alone = Value::Object(Map::from_iter([(key.clone(), field.clone())]));
                    if let Err(e) = serde_json::from_value::<OpenAiCompat>(alone) {
                        self.fail(child(&at, key), e.to_string());
                    }
                }
                if self.errors.len() == before {
                    self.fail(at, whole.to_string());
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        match parse(text, Path::new("/cfg/models.json")) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn the_top_level_must_hold_providers() {
        assert_eq!(
            errors("[]"),
            ["/cfg/models.json: at /: expected an object with \"providers\", found an array"]
        );
        assert_eq!(
            errors("{}"),
            ["/cfg/models.json: at /: \"providers\" is missing"]
        );
        assert!(errors(r#"{"providers": {}}"#).is_empty());
    }

    #[test]
    fn pointers_escape_model_ids_with_slashes() {
        let found = errors(
            r#"{"providers": {"groq": {"modelOverrides": {"qwen/qwen3-32b": {"reasoning": "yes"}}}}}"#,
        );
        assert_eq!(
            found,
            ["/cfg/models.json: at /providers/groq/modelOverrides/qwen~1qwen3-32b/reasoning: expected true or false, found a string"]
        );
    }

    #[test]
    fn an_entry_that_sets_nothing_is_reported() {
        let found = errors(r#"{"providers": {"openai": {"baseURL": "typo"}}}"#);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains("/providers/openai: sets nothing"),
            "{found:?}"
        );
    }

    #[test]
    fn custom_costs_need_all_four_prices_and_overrides_do_not() {
        let custom = errors(
            r#"{"providers": {"x": {"baseUrl": "http://x", "apiKey": "k", "api": "openai-completions",
                "models": [{"id": "m", "cost": {"input": 1, "output": -2}}]}}}"#,
        );
        assert!(
            custom
                .iter()
                .any(|e| e.contains("/models/0/cost/cacheRead: is missing")),
            "{custom:?}"
        );
        assert!(
            custom
                .iter()
                .any(|e| e.contains("/models/0/cost/output: expected a price")),
            "{custom:?}"
        );
        let over = errors(
            r#"{"providers": {"openai": {"modelOverrides": {"gpt-4o": {"cost": {"input": 1}}}}}}"#,
        );
        assert!(over.is_empty(), "{over:?}");
    }

    #[test]
    fn whole_number_floats_are_counts() {
        let config = parse(
            r#"{"providers": {"x": {"baseUrl": "http://x", "apiKey": "k", "api": "openai-completions",
                "models": [{"id": "m", "contextWindow": 32768.0}]}}}"#,
            Path::new("models.json"),
        )
        .expect("valid");
        assert_eq!(config.providers[0].1.models[0].context_window, Some(32768));
        assert!(
            !errors(r#"{"providers": {"x": {"modelOverrides": {"m": {"maxTokens": 0}}}}}"#)
                .is_empty()
        );
    }
}
