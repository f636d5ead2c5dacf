//! Which key a request uses, in pi's order: the runtime key (`--api-key`) > auth.json > the
//! provider's environment variables > `apiKey` in models.json.

use std::time::{SystemTime, UNIX_EPOCH};

use super::auth::Credential;
use super::errors::KeyError;
use super::ModelRegistry;
use crate::keys;

impl ModelRegistry {
    /// The key for `provider`, or `Ok(None)` when no source has one. `runtime` is a key given for
    /// this run (a command-line flag) and wins over everything stored. An error means a source
    /// had a value that could not be used (a failing `!command`, an expired OAuth login); it
    /// never contains the key. May run a shell command: see the module docs.
    pub fn resolve_api_key(
        &self,
        provider: &str,
        runtime: Option<&str>,
    ) -> Result<Option<String>, KeyError> {
        if let Some(key) = runtime.filter(|k| !k.trim().is_empty()) {
            return Ok(Some(key.to_string()));
        }
        if let Some(cred) = self.auth.get(provider) {
            return self.auth_key(provider, cred).map(Some);
        }
        if let Some(key) = self.env_key(provider) {
            return Ok(Some(key));
        }
        if let Some(raw) = self.models_json_keys.get(provider) {
            let origin = format!("\"apiKey\" in {}", self.dir.models_json().display());
            return self.resolve_for(provider, raw, origin).map(Some);
        }
        Ok(None)
    }

    /// Like [`ModelRegistry::resolve_api_key`], but a missing key is a [`KeyError::Missing`]
    /// whose message names the environment variable to set and this registry's models.json.
    pub fn require_api_key(
        &self,
        provider: &str,
        runtime: Option<&str>,
    ) -> Result<String, KeyError> {
        self.resolve_api_key(provider, runtime)?
            .ok_or_else(|| KeyError::Missing {
                provider: provider.to_string(),
                message: keys::missing_key_message_at(provider, &self.dir.models_json()),
            })
    }

    fn auth_key(&self, provider: &str, cred: &Credential) -> Result<String, KeyError> {
        let file = self.dir.auth_json();
        match cred {
            Credential::ApiKey(raw) => {
                self.resolve_for(provider, raw, format!("auth.json ({})", file.display()))
            }
            Credential::OAuth { access, expires_ms } => {
                if now_ms() < *expires_ms {
                    Ok(access.clone())
                } else {
                    Err(KeyError::OAuthExpired {
                        provider: provider.to_string(),
                        file,
                    })
                }
            }
            Credential::Unsupported(kind) => Err(KeyError::Unsupported {
                provider: provider.to_string(),
                file,
                kind: kind.clone(),
            }),
        }
    }

    fn resolve_for(&self, provider: &str, raw: &str, origin: String) -> Result<String, KeyError> {
        self.resolve_value(raw).map_err(|source| KeyError::Command {
            provider: provider.to_string(),
            origin,
            source,
        })
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
