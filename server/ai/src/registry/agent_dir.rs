//! Where pi keeps its configuration, so Tandem reads the same files a pi user already has.

use std::path::{Path, PathBuf};

/// The environment variable that moves the agent directory (pi's name, kept for compatibility).
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// The agent configuration directory: `~/.pi/agent` unless `PI_CODING_AGENT_DIR` says otherwise.
/// It holds models.json, auth.json, settings.json, sessions and the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDir {
    root: PathBuf,
}

/// Neither the override variable nor a home directory was available.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Cannot locate the agent directory: neither {AGENT_DIR_ENV} nor HOME is set. \
     Set {AGENT_DIR_ENV} to the directory holding models.json and auth.json."
)]
pub struct NoAgentDir;

impl AgentDir {
    /// An agent directory at an explicit path.
    pub fn new(root: impl Into<PathBuf>) -> AgentDir {
        AgentDir { root: root.into() }
    }

    /// The directory the process environment selects.
    pub fn from_env() -> Result<AgentDir, NoAgentDir> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let home = var("HOME").or_else(|| var("USERPROFILE"));
        AgentDir::from_vars(var(AGENT_DIR_ENV).as_deref(), home.as_deref())
    }

    /// The directory selected by an override value (with `~` expanded) or else `<home>/.pi/agent`.
    pub fn from_vars(agent_dir: Option<&str>, home: Option<&str>) -> Result<AgentDir, NoAgentDir> {
        match (agent_dir.filter(|d| !d.is_empty()), home) {
            (Some("~"), Some(home)) => Ok(AgentDir::new(home)),
            (Some(dir), Some(home)) if dir.starts_with("~/") => {
                Ok(AgentDir::new(Path::new(home).join(&dir[2..])))
            }
            (Some(dir), _) => Ok(AgentDir::new(dir)),
            (None, Some(home)) => Ok(AgentDir::new(Path::new(home).join(".pi").join("agent"))),
            (None, None) => Err(NoAgentDir),
        }
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `<dir>/models.json`: custom providers, models and overrides.
    pub fn models_json(&self) -> PathBuf {
        self.root.join("models.json")
    }

    /// `<dir>/auth.json`: stored API keys and OAuth tokens.
    pub fn auth_json(&self) -> PathBuf {
        self.root.join("auth.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_to_dot_pi_agent_under_home() {
        let dir = AgentDir::from_vars(None, Some("/home/u")).unwrap();
        assert_eq!(dir.path(), Path::new("/home/u/.pi/agent"));
        assert_eq!(
            dir.models_json(),
            Path::new("/home/u/.pi/agent/models.json")
        );
        assert_eq!(dir.auth_json(), Path::new("/home/u/.pi/agent/auth.json"));
    }

    #[test]
    fn the_override_wins_and_expands_tilde() {
        let at = |v| AgentDir::from_vars(Some(v), Some("/home/u")).unwrap();
        assert_eq!(at("/etc/pi").path(), Path::new("/etc/pi"));
        assert_eq!(at("~/cfg/pi").path(), Path::new("/home/u/cfg/pi"));
        assert_eq!(at("~").path(), Path::new("/home/u"));
        assert_eq!(at("").path(), Path::new("/home/u/.pi/agent"));
        assert_eq!(
            AgentDir::from_vars(Some("/x"), None).unwrap().path(),
            Path::new("/x")
        );
    }

    #[test]
    fn no_home_and_no_override_is_an_error_that_says_what_to_set() {
        let err = AgentDir::from_vars(None, None).unwrap_err();
        assert!(err.to_string().contains("PI_CODING_AGENT_DIR"));
    }
}
