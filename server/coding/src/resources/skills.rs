//! Skills (the Agent Skills format pi follows): a `SKILL.md` whose frontmatter gives a `name`
//! and a `description`. The system prompt lists each skill's name, description and file; the
//! model reads the file when a task calls for it. The user can also pull a skill into a prompt
//! with `/skill:name args`.
//!
//! Problems are warnings, never fatal, with pi's texts: a skill with a bad name still loads; a
//! skill without a description does not (the model could not know when to use it).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::frontmatter;
use super::{Collision, ResourceDiagnostic, ResourceKind, ResourceSource};

/// Longest allowed name.
pub const MAX_NAME_LENGTH: usize = 64;
/// Longest allowed description.
pub const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (frontmatter `name`, else the directory's name).
    pub name: String,
    /// When to use it.
    pub description: String,
    /// The skill file.
    pub file_path: PathBuf,
    /// The directory holding the file; the skill's relative paths start here.
    pub base_dir: PathBuf,
    /// Where it was found.
    pub source: ResourceSource,
    /// `disable-model-invocation: true`: not listed in the system prompt, only `/skill:name`.
    pub disable_model_invocation: bool,
}

/// Reads one skill file. `None` (with the reasons in `diagnostics`) when it has no usable
/// description or cannot be read or parsed. Blocking.
pub fn load_skill(
    path: &Path,
    source: ResourceSource,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Option<Skill> {
    let warn = |diagnostics: &mut Vec<ResourceDiagnostic>, message: String| {
        diagnostics.push(ResourceDiagnostic::warning(message, path));
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            warn(diagnostics, format!("could not read skill file: {e}"));
            return None;
        }
    };
    let header = match frontmatter::parse(&text) {
        Ok(header) => header,
        Err(e) => {
            warn(diagnostics, e.to_string());
            return None;
        }
    };
    let base_dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let dir_name = base_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let description = header.string("description").map(str::to_string);
    for problem in description_problems(description.as_deref()) {
        warn(diagnostics, problem);
    }
    let name = match header.string("name") {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => dir_name.clone(),
    };
    for problem in name_problems(&name, &dir_name) {
        warn(diagnostics, problem);
    }
    let description = description.filter(|d| !d.trim().is_empty())?;
    Some(Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir,
        source,
        disable_model_invocation: header.fields.get("disable-model-invocation")
            == Some(&serde_json::Value::Bool(true)),
    })
}

/// Every skill under `dir` (see [`super::discovery::skill_files`]; `.md` files directly in
/// `dir` count as skills too, as in pi). Blocking.
pub fn load_skills_from_dir(
    dir: &Path,
    source: ResourceSource,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Vec<Skill> {
    super::discovery::skill_files(dir, true)
        .iter()
        .filter_map(|file| load_skill(file, source, diagnostics))
        .collect()
}

/// What is wrong with a name, per the Agent Skills rules (pi's texts).
pub fn name_problems(name: &str, dir_name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name != dir_name {
        problems.push(format!(
            "name \"{name}\" does not match parent directory \"{dir_name}\""
        ));
    }
    let length = name.encode_utf16().count();
    if length > MAX_NAME_LENGTH {
        problems.push(format!(
            "name exceeds {MAX_NAME_LENGTH} characters ({length})"
        ));
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        problems.push(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
                .to_string(),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("name must not start or end with a hyphen".to_string());
    }
    if name.contains("--") {
        problems.push("name must not contain consecutive hyphens".to_string());
    }
    problems
}

/// What is wrong with a description (pi's texts).
pub fn description_problems(description: Option<&str>) -> Vec<String> {
    match description {
        None => vec!["description is required".to_string()],
        Some(d) if d.trim().is_empty() => vec!["description is required".to_string()],
        Some(d) if d.encode_utf16().count() > MAX_DESCRIPTION_LENGTH => vec![format!(
            "description exceeds {MAX_DESCRIPTION_LENGTH} characters ({})",
            d.encode_utf16().count()
        )],
        Some(_) => Vec::new(),
    }
}

/// Skills gathered from several places: the first of a name wins, a later one is reported as a
/// collision, and the same file reached twice (through a symlink) is taken once, silently.
#[derive(Debug, Default)]
pub struct SkillSet {
    /// Winners, in discovery order.
    pub skills: Vec<Skill>,
    /// Collision reports, in discovery order.
    pub collisions: Vec<ResourceDiagnostic>,
    real_paths: HashSet<PathBuf>,
}

impl SkillSet {
    /// Adds `skill` unless its file or its name is already taken.
    pub fn add(&mut self, skill: Skill) {
        let real = std::fs::canonicalize(&skill.file_path).unwrap_or(skill.file_path.clone());
        if self.real_paths.contains(&real) {
            return;
        }
        if let Some(winner) = self.skills.iter().find(|s| s.name == skill.name) {
            self.collisions.push(ResourceDiagnostic::collision(
                format!("name \"{}\" collision", skill.name),
                Collision {
                    resource: ResourceKind::Skill,
                    name: skill.name.clone(),
                    winner: winner.file_path.clone(),
                    loser: skill.file_path.clone(),
                },
            ));
            return;
        }
        self.real_paths.insert(real);
        self.skills.push(skill);
    }
}

/// The system prompt's skill listing: a short explanation, then pi's `<available_skills>`
/// block (models are trained on that shape). Skills with `disable_model_invocation` are left
/// out; an empty string when none remain.
pub fn format_skills_for_prompt(skills: &[Skill]) -> String {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|s| !s.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "Skills hold instructions for particular kinds of task. When the task at hand matches a \
         skill's description, load the skill's file with the read tool and follow it. Paths \
         written in a skill are relative to the directory holding its file: turn them into \
         absolute paths before using them in tool calls.\n\n<available_skills>\n",
    );
    for skill in visible {
        out.push_str("  <skill>\n");
        out.push_str(&format!("    <name>{}</name>\n", escape_xml(&skill.name)));
        out.push_str(&format!(
            "    <description>{}</description>\n",
            escape_xml(&skill.description)
        ));
        out.push_str(&format!(
            "    <location>{}</location>\n",
            escape_xml(&skill.file_path.to_string_lossy())
        ));
        out.push_str("  </skill>\n");
    }
    out.push_str("</available_skills>");
    out
}

fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// A `/skill:name` command whose skill file could not be read.
#[derive(Debug, thiserror::Error)]
#[error("Cannot read skill \"{name}\" from {}: {source}", .path.display())]
pub struct SkillReadError {
    /// The skill's name.
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Expands `/skill:name args` into the skill's body wrapped in pi's
/// `<skill name=".." location="..">` block, followed by the arguments (trimmed) after a blank
/// line. `Ok(None)` when `text` is not a skill command or names no known skill (the text is
/// then sent as it is). Blocking: reads the skill file.
pub fn expand_skill_command(
    text: &str,
    skills: &[Skill],
) -> Result<Option<String>, SkillReadError> {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return Ok(None);
    };
    let (name, args) = match rest.find(' ') {
        Some(i) => (&rest[..i], rest[i + 1..].trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return Ok(None);
    };
    let content = std::fs::read_to_string(&skill.file_path).map_err(|source| SkillReadError {
        name: skill.name.clone(),
        path: skill.file_path.clone(),
        source,
    })?;
    let body = frontmatter::strip(&content);
    let block = format!(
        "<skill name=\"{}\" location=\"{}\">\nRelative paths in this skill start at {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    Ok(Some(if args.is_empty() {
        block
    } else {
        format!("{block}\n\n{args}")
    }))
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
