//! auth.json: the keys and OAuth logins pi stores per provider
//! (`{"anthropic": {"type": "api_key", "key": "..."}}`). Tandem reads it and never writes it.
//!
//! OAuth logins are usable while their access token is valid; refreshing them needs each
//! provider's OAuth flow, which Tandem leaves to pi.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde_json::Value;

use super::errors::ConfigError;
use super::json_path::{describe, pointer};

/// One stored credential. Its `Debug` output never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Credential {
    /// `{"type": "api_key", "key": ...}`: the raw value (may be `!command` or a variable name).
    ApiKey(String),
    /// `{"type": "oauth", "access": ..., "expires": ms}`.
    OAuth {
        /// The access token.
        access: String,
        /// Expiry, milliseconds since the Unix epoch.
        expires_ms: u64,
    },
    /// Any other `type`.
    Unsupported(String),
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::ApiKey(_) => f.write_str("ApiKey(<redacted>)"),
            Credential::OAuth { expires_ms, .. } => {
                write!(
                    f,
                    "OAuth {{ access: <redacted>, expires_ms: {expires_ms} }}"
                )
            }
            Credential::Unsupported(kind) => write!(f, "Unsupported({kind:?})"),
        }
    }
}

/// The credentials in `file` by provider, and the problems found. A missing file is empty; a
/// broken entry is skipped and reported, the others are kept.
pub(crate) fn load(file: &Path) -> (BTreeMap<String, Credential>, Vec<ConfigError>) {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Default::default(),
        Err(e) => {
            return (
                BTreeMap::new(),
                vec![whole_file(file, format!("cannot be read: {e}"))],
            )
        }
    };
    parse(&text, file)
}

pub(crate) fn parse(text: &str, file: &Path) -> (BTreeMap<String, Credential>, Vec<ConfigError>) {
    let mut creds = BTreeMap::new();
    let mut errors = Vec::new();
    let root: Value = match crate::jsonc::from_str(text) {
        Ok(root) => root,
        Err(e) => {
            let message =
                format!("is not valid JSON: {e}; its stored keys are ignored until it is fixed");
            return (creds, vec![whole_file(file, message)]);
        }
    };
    let Value::Object(entries) = root else {
        let message = format!("expected an object of providers, found {}", describe(&root));
        return (creds, vec![whole_file(file, message)]);
    };
    for (provider, entry) in &entries {
        let at = pointer(&[provider]);
        match credential(entry) {
            Ok(cred) => {
                creds.insert(provider.clone(), cred);
            }
            Err((field, message)) => errors.push(ConfigError {
                file: file.to_path_buf(),
                pointer: Some(match field {
                    Some(field) => pointer(&[provider, field]),
                    None => at,
                }),
                message,
            }),
        }
    }
    (creds, errors)
}

/// One entry, or the field at fault and what was wrong.
fn credential(entry: &Value) -> Result<Credential, (Option<&'static str>, String)> {
    let Value::Object(fields) = entry else {
        return Err((
            None,
            format!(
                "expected an object with a \"type\", found {}",
                describe(entry)
            ),
        ));
    };
    let text = |name: &'static str| match fields.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(other) => Err((
            Some(name),
            format!("expected a non-empty string, found {}", describe(other)),
        )),
        None => Err((Some(name), "is missing".to_string())),
    };
    match text("type")?.as_str() {
        "api_key" => Ok(Credential::ApiKey(text("key")?)),
        "oauth" => {
            let access = text("access")?;
            let expires_ms = match fields.get("expires") {
                Some(Value::Number(n)) => {
                    n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
                }
                _ => None,
            }
            .ok_or((
                Some("expires"),
                "expected the expiry time in milliseconds".to_string(),
            ))?;
            Ok(Credential::OAuth { access, expires_ms })
        }
        other => Ok(Credential::Unsupported(other.to_string())),
    }
}

fn whole_file(file: &Path, message: String) -> ConfigError {
    ConfigError {
        file: file.to_path_buf(),
        pointer: None,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> (BTreeMap<String, Credential>, Vec<ConfigError>) {
        parse(text, Path::new("/cfg/auth.json"))
    }

    #[test]
    fn reads_api_keys_oauth_and_unknown_kinds() {
        let (creds, errors) = parse_str(
            r#"{
              "openai": {"type": "api_key", "key": "!op read x"},
              "anthropic": {"type": "oauth", "refresh": "r", "access": "tok", "expires": 1700000000000},
              "other": {"type": "session_cookie", "value": "c"}
            }"#,
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(creds["openai"], Credential::ApiKey("!op read x".into()));
        assert_eq!(
            creds["anthropic"],
            Credential::OAuth {
                access: "tok".into(),
                expires_ms: 1_700_000_000_000
            }
        );
        assert_eq!(
            creds["other"],
            Credential::Unsupported("session_cookie".into())
        );
    }

    #[test]
    fn a_broken_entry_is_reported_with_its_path_and_the_rest_kept() {
        let (creds, errors) = parse_str(
            r#"{"openai": {"type": "api_key"}, "groq": {"type": "api_key", "key": "gsk"}}"#,
        );
        assert_eq!(creds.len(), 1);
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0].to_string(),
            "/cfg/auth.json: at /openai/key: is missing"
        );
    }

    #[test]
    fn invalid_json_names_the_file() {
        let (creds, errors) = parse_str("{ nope");
        assert!(creds.is_empty());
        let text = errors[0].to_string();
        assert!(
            text.starts_with("/cfg/auth.json: is not valid JSON"),
            "{text}"
        );
    }

    #[test]
    fn debug_output_hides_secrets() {
        let shown = format!(
            "{:?} {:?}",
            Credential::ApiKey("sk-secret".into()),
            Credential::OAuth {
                access: "tok-secret".into(),
                expires_ms: 1
            }
        );
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn a_missing_file_is_empty() {
        let (creds, errors) = load(Path::new("/nonexistent/dir/auth.json"));
        assert!(creds.is_empty() && errors.is_empty());
    }
}
