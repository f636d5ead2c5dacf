//! What can go wrong loading configuration and finding a key. Every message names the file (and
//! where in it) or the provider, and says what to do; none contains a key.

use std::fmt;
use std::path::PathBuf;

use super::config_value::CommandError;
use crate::keys;

/// A problem in models.json or auth.json, found while loading. The registry keeps serving what it
/// could load (for models.json: the built-in models only, as pi does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// Where in the file, as a JSON pointer (`/providers/ollama/models/0/contextWindow`); `None`
    /// for problems with the whole file (unreadable, not JSON).
    pub pointer: Option<String>,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pointer {
            Some(pointer) => write!(f, "{}: at {pointer}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Why no API key could be produced for a provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No source has a key. The message names the environment variable(s) and models.json.
    #[error("{message}")]
    Missing {
        /// Provider name.
        provider: String,
        /// What to set, and where.
        message: String,
    },
    /// A `!command` key value failed.
    #[error("Could not get the API key for provider {provider} from {origin}: {source}")]
    Command {
        /// Provider name.
        provider: String,
        /// Where the value came from, e.g. `auth.json (/home/u/.pi/agent/auth.json)`.
        origin: String,
        /// What the command did.
        source: CommandError,
    },
    /// auth.json holds an OAuth login whose access token has expired.
    #[error(
        "The OAuth login for provider {provider} in {} has expired, and Tandem cannot refresh \
         OAuth tokens. Log in again with pi (/login) to refresh it, or {}.",
        .file.display(), key_hint(.provider)
    )]
    OAuthExpired {
        /// Provider name.
        provider: String,
        /// The auth.json path.
        file: PathBuf,
    },
    /// auth.json holds a kind of credential Tandem cannot use.
    #[error(
        "{} holds a \"{kind}\" credential for provider {provider}, which Tandem cannot use; {}.",
        .file.display(), key_hint(.provider)
    )]
    Unsupported {
        /// Provider name.
        provider: String,
        /// The auth.json path.
        file: PathBuf,
        /// The entry's `type`.
        kind: String,
    },
}

fn key_hint(provider: &str) -> String {
    match keys::env_var_names(provider) {
        [] => "store an API key for it instead".to_string(),
        names => format!("set {} instead", names.join(" or ")),
    }
}

impl KeyError {
    /// The provider the key was for.
    pub fn provider(&self) -> &str {
        match self {
            KeyError::Missing { provider, .. }
            | KeyError::Command { provider, .. }
            | KeyError::OAuthExpired { provider, .. }
            | KeyError::Unsupported { provider, .. } => provider,
        }
    }
}
