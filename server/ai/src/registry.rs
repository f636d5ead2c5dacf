//! The models a user can pick and the keys to call them: the built-in catalog plus pi's
//! models.json, and API keys from the command line, auth.json, the environment and models.json.
//!
//! Tandem reads pi's own files from pi's agent directory ([`AgentDir`]), so a pi user's custom
//! providers and stored keys work unchanged. Loading never fails: a broken models.json leaves the
//! built-in models in place (as in pi), a broken auth.json entry is skipped, and every problem is
//! kept in [`ModelRegistry::load_errors`] for the caller to show.
//!
//! Everything here is synchronous and may run shell commands (`!command` values, up to the
//! command timeout each, once per process). Load the registry at startup; callers on an async
//! runtime wrap [`ModelRegistry::load`], key checks and key resolution in
//! `tokio::task::spawn_blocking`.

mod agent_dir;
mod api_key;
mod auth;
pub mod config_value;
mod errors;
mod json_path;
mod merge;
mod models_json;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use agent_dir::{AgentDir, NoAgentDir, AGENT_DIR_ENV};
pub use errors::{ConfigError, KeyError};

use crate::catalog;
use crate::keys;
use crate::model::Model;
use auth::Credential;
use config_value::{CommandError, DEFAULT_COMMAND_TIMEOUT};

/// Looks up an environment variable by name.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How the registry reaches the outside world. The defaults read the process environment and
/// give commands pi's 10 s; tests and embedders substitute their own.
#[derive(Clone)]
pub struct LoadOptions {
    /// Environment variable lookup (for provider key variables and variable-name values).
    pub env: EnvLookup,
    /// How long a `!command` value may run.
    pub command_timeout: Duration,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            env: Arc::new(config_value::process_env),
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
        }
    }
}

impl fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadOptions")
            .field("command_timeout", &self.command_timeout)
            .finish_non_exhaustive()
    }
}

/// All known models (built-in and from models.json) and the stored keys for their providers.
pub struct ModelRegistry {
    dir: AgentDir,
    options: LoadOptions,
    models: Vec<Model>,
    /// Provider → raw `apiKey` value from models.json.
    models_json_keys: BTreeMap<String, String>,
    /// Provider → credential from auth.json.
    auth: BTreeMap<String, Credential>,
    errors: Vec<ConfigError>,
}

impl ModelRegistry {
    /// Loads models.json and auth.json from `dir`, with the process environment.
    pub fn load(dir: AgentDir) -> ModelRegistry {
        ModelRegistry::load_with(dir, LoadOptions::default())
    }

    /// Loads models.json and auth.json from `dir` with explicit [`LoadOptions`].
    pub fn load_with(dir: AgentDir, options: LoadOptions) -> ModelRegistry {
        let mut registry = ModelRegistry {
            dir,
            options,
            models: catalog::builtin_models().to_vec(),
            models_json_keys: BTreeMap::new(),
            auth: BTreeMap::new(),
            errors: Vec::new(),
        };
        let (auth, auth_errors) = auth::load(&registry.dir.auth_json());
        registry.auth = auth;
        registry.errors.extend(auth_errors);

        let file = registry.dir.models_json();
        match models_json::load(&file) {
            Ok(None) => {}
            Ok(Some(config)) => {
                let resolve = |raw: &str| registry.resolve_value(raw);
                let merged = merge::merge(catalog::builtin_models(), &config, &file, &resolve);
                registry.models = merged.models;
                registry.errors.extend(merged.errors);
                registry.models_json_keys = config
                    .providers
                    .into_iter()
                    .filter_map(|(name, p)| Some((name, p.api_key?)))
                    .collect();
            }
            Err(errors) => registry.errors.extend(errors),
        }
        registry
    }

    /// Reads the files again (after the user edited them).
    pub fn reload(&mut self) {
        *self = ModelRegistry::load_with(self.dir.clone(), self.options.clone());
    }

    /// The agent directory the registry reads.
    pub fn agent_dir(&self) -> &AgentDir {
        &self.dir
    }

    /// Problems found in models.json and auth.json while loading, in file order. When
    /// models.json itself is invalid, none of it was applied: only built-in models are listed.
    pub fn load_errors(&self) -> &[ConfigError] {
        &self.errors
    }

    /// Every model: built-ins (with models.json changes applied), then custom models.
    pub fn all(&self) -> &[Model] {
        &self.models
    }

    /// The model `id` of `provider`.
    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        self.models
            .iter()
            .find(|m| m.provider == provider && m.id == id)
    }

    /// The models whose provider has a usable key (see [`ModelRegistry::has_key`]).
    pub fn available(&self) -> Vec<&Model> {
        self.models
            .iter()
            .filter(|m| self.has_key(&m.provider))
            .collect()
    }

    /// True when `provider` has a usable key: one from auth.json, the environment or
    /// models.json that resolves. A failing `!command` or an expired login is not usable (see
    /// [`ModelRegistry::key_problems`] for why). May run the provider's `!command` (once per
    /// process).
    pub fn has_key(&self, provider: &str) -> bool {
        matches!(self.resolve_api_key(provider, None), Ok(Some(_)))
    }

    /// Every provider whose configured key cannot be used, with the reason (a failing
    /// `!command`, an expired OAuth login, an unsupported credential). May run commands.
    pub fn key_problems(&self) -> Vec<KeyError> {
        let mut providers: Vec<&str> = self.auth.keys().map(String::as_str).collect();
        providers.extend(self.models_json_keys.keys().map(String::as_str));
        providers.sort_unstable();
        providers.dedup();
        providers
            .into_iter()
            .filter_map(|p| self.resolve_api_key(p, None).err())
            .collect()
    }

    /// The first non-empty provider key variable (`keys::env_var_names`) in the environment.
    fn env_key(&self, provider: &str) -> Option<String> {
        keys::env_var_names(provider)
            .iter()
            .filter_map(|name| (self.options.env)(name))
            .find(|v| !v.trim().is_empty())
    }

    /// Resolves a raw value (a `!command` runs once per process; its result is kept).
    fn resolve_value(&self, raw: &str) -> Result<String, CommandError> {
        config_value::resolve_config_value(raw, &*self.options.env, self.options.command_timeout)
    }
}

impl fmt::Debug for ModelRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Deliberately no keys or credentials.
        f.debug_struct("ModelRegistry")
            .field("dir", &self.dir)
            .field("models", &self.models.len())
            .field("errors", &self.errors)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
