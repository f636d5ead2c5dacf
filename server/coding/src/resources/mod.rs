//! Resources: everything read from disk that shapes what the model is told — context files
//! (AGENTS.md / CLAUDE.md), SYSTEM.md and APPEND_SYSTEM.md, skills and prompt templates — and
//! the system prompt built from them.
//!
//! Locations and precedence are pi's, so a pi user's files work unchanged. Loading never
//! fails: anything unreadable or malformed becomes a [`ResourceDiagnostic`] for the user to
//! see, and the rest loads. [`Resources::load`] does it all; the submodules hold each piece
//! and stay usable on their own.

pub mod context_files;
pub mod discovery;
pub mod frontmatter;
mod loader;
pub mod selection;
pub mod skills;
pub mod system_files;
pub mod system_prompt;
pub mod template_args;
pub mod templates;

use std::fmt;
use std::path::{Path, PathBuf};

pub use context_files::{load_context_files, ContextFile};
pub use loader::{ResourceOptions, Resources};
pub use skills::{expand_skill_command, format_skills_for_prompt, Skill, SkillReadError};
pub use system_prompt::{
    build_system_prompt, build_system_prompt_sections, today_utc, SystemPrompt, SystemPromptOptions,
};
pub use template_args::{parse_command_args, substitute_args};
pub use templates::{expand_prompt_template, PromptTemplate};

/// Diagnostics collected while loading.
pub type Diagnostics = Vec<ResourceDiagnostic>;

/// Where a skill or template was found (pi's `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceSource {
    /// The agent directory's `skills/` or `prompts/`.
    User,
    /// The project's `.pi/skills/` or `.pi/prompts/`.
    Project,
    /// Anywhere else: settings entries, command-line paths, `.agents/skills`.
    Path,
}

/// The kind of resource in a collision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    /// A skill.
    Skill,
    /// A prompt template.
    PromptTemplate,
}

/// Two resources with one name: the first found is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    /// Skill or template.
    pub resource: ResourceKind,
    /// The shared name.
    pub name: String,
    /// The file used.
    pub winner: PathBuf,
    /// The file ignored.
    pub loser: PathBuf,
}

/// What a diagnostic reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// Something was wrong with a file; it may still have loaded.
    Warning,
    /// A name was taken twice.
    Collision(Collision),
}

/// A problem found while loading resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDiagnostic {
    /// Warning or collision.
    pub kind: DiagnosticKind,
    /// What was wrong (pi's wording where pi has one).
    pub message: String,
    /// The file concerned.
    pub path: Option<PathBuf>,
}

impl ResourceDiagnostic {
    /// A warning about `path`.
    pub fn warning(message: impl Into<String>, path: &Path) -> ResourceDiagnostic {
        ResourceDiagnostic {
            kind: DiagnosticKind::Warning,
            message: message.into(),
            path: Some(path.to_path_buf()),
        }
    }

    /// A collision, reported at the file that lost.
    pub fn collision(message: impl Into<String>, collision: Collision) -> ResourceDiagnostic {
        ResourceDiagnostic {
            path: Some(collision.loser.clone()),
            kind: DiagnosticKind::Collision(collision),
            message: message.into(),
        }
    }
}

impl fmt::Display for ResourceDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}: ", path.display())?;
        }
        f.write_str(&self.message)?;
        if let DiagnosticKind::Collision(c) = &self.kind {
            write!(f, " (using {})", c.winner.display())?;
        }
        Ok(())
    }
}
