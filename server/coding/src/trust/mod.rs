//! Project trust: nothing a cloned repository configures runs, or reaches the model's
//! instructions, until the user trusts the folder.
//!
//! Compatible with pi 1.6 both ways: the same protected resources ([`ProtectedResources`]), the
//! same saved decisions (`<agentDir>/trust.json`, [`TrustStore`]), the same order of precedence
//! ([`decide`]): a command-line `--approve` / `--no-approve`, then the nearest saved decision,
//! then `defaultProjectTrust` from the agent directory's settings (`ask`, `always`, `never`;
//! never from the project's own settings). A folder with no protected resource needs no
//! decision. `ask` is the front door's business: the editor's own trust, a question to the
//! user, or — where nobody can be asked (print and JSON modes) — not trusted, as in pi.
//!
//! An untrusted folder still gets its context files (AGENTS.md, CLAUDE.md), as in pi; its
//! `.pi/settings.json`, `.pi/mcp.json`, skills, prompt templates and system-prompt files are not
//! read (see [`crate::settings::load`] and [`crate::resources::Resources::load`]).

mod resources;
mod store;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use resources::ProtectedResources;
pub use store::{canonical, SavedDecision, TrustStore, TrustStoreError, TRUST_FILE};

/// `defaultProjectTrust`: what happens to a folder with protected resources and no saved
/// decision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultProjectTrust {
    /// Ask the user where possible; not trusted where nobody can be asked.
    #[default]
    Ask,
    /// Trust every folder.
    Always,
    /// Trust no folder that has no saved decision.
    Never,
}

/// Why a folder is trusted or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustSource {
    /// The folder has nothing that needs trust.
    NothingProtected,
    /// `--approve` / `--no-approve`.
    CommandLine,
    /// A decision saved in trust.json for this directory.
    Saved(PathBuf),
    /// `defaultProjectTrust` in the agent directory's settings.
    Default(DefaultProjectTrust),
    /// The editor's own workspace trust.
    Editor,
    /// The user's answer to the question.
    User,
    /// Nobody could be asked (print and JSON modes, a dismissed question).
    NoAnswer,
}

/// The outcome for a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustDecision {
    /// Decided.
    Decided {
        /// Whether the project's protected resources may be used.
        trusted: bool,
        /// Why.
        source: TrustSource,
    },
    /// The user must be asked about these resources.
    Ask(ProtectedResources),
}

impl TrustDecision {
    /// A decision.
    pub fn decided(trusted: bool, source: TrustSource) -> TrustDecision {
        TrustDecision::Decided { trusted, source }
    }

    /// Whether this is a decision to trust (a pending question is not).
    pub fn trusted(&self) -> bool {
        matches!(self, TrustDecision::Decided { trusted: true, .. })
    }

    /// The decision where nobody can be asked: a question means not trusted.
    pub fn or_untrusted(self) -> (bool, TrustSource) {
        match self {
            TrustDecision::Decided { trusted, source } => (trusted, source),
            TrustDecision::Ask(_) => (false, TrustSource::NoAnswer),
        }
    }
}

/// What [`decide`] reads.
#[derive(Debug, Clone)]
pub struct TrustInputs<'a> {
    /// The folder.
    pub dir: &'a Path,
    /// The agent directory (trust.json).
    pub agent_dir: &'a Path,
    /// `--approve` (`Some(true)`) / `--no-approve` (`Some(false)`).
    pub command_line: Option<bool>,
    /// `defaultProjectTrust` of the agent directory's settings.json.
    pub default: DefaultProjectTrust,
    /// The home directory (whose `.agents/skills` is the user's own).
    pub home: Option<&'a Path>,
}

/// Decides whether `inputs.dir` is trusted, in pi 1.6's order. A trust.json that cannot be read
/// is reported through `warn` and counts as no saved decision, so the default applies (with
/// `ask`, the user is asked again; nothing is trusted because a file is broken).
pub fn decide(inputs: &TrustInputs<'_>, warn: &mut dyn FnMut(String)) -> TrustDecision {
    if let Some(trusted) = inputs.command_line {
        return TrustDecision::decided(trusted, TrustSource::CommandLine);
    }
    let resources = ProtectedResources::find(inputs.dir, inputs.home);
    if resources.is_empty() {
        return TrustDecision::decided(true, TrustSource::NothingProtected);
    }
    match TrustStore::new(inputs.agent_dir).lookup(inputs.dir) {
        Ok(Some(saved)) => {
            return TrustDecision::decided(saved.trusted, TrustSource::Saved(saved.path))
        }
        Ok(None) => {}
        Err(e) => warn(e.to_string()),
    }
    match inputs.default {
        DefaultProjectTrust::Always => {
            TrustDecision::decided(true, TrustSource::Default(DefaultProjectTrust::Always))
        }
        DefaultProjectTrust::Never => {
            TrustDecision::decided(false, TrustSource::Default(DefaultProjectTrust::Never))
        }
        DefaultProjectTrust::Ask => TrustDecision::Ask(resources),
    }
}

/// The note for a folder that was not trusted: what was left out and how to trust it.
pub fn untrusted_note(dir: &Path, resources: &ProtectedResources) -> String {
    let mut note = format!(
        "{} is not trusted, so its project configuration was not loaded",
        dir.display()
    );
    let lines = resources.describe();
    if !lines.is_empty() {
        note.push_str(" (");
        note.push_str(&lines.join("; "));
        note.push(')');
    }
    note.push_str(
        ". To trust it, pass --approve for one run, or save the decision in trust.json \
         (pi's /trust, or \"Trust always\" when an editor asks).",
    );
    note
}

#[cfg(test)]
mod tests;
