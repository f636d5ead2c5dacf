//! [`Resources::load`]: every resource for one agent directory and working directory.
//!
//! Skills and templates are gathered in precedence order and the first of a name wins:
//! command-line paths (`--skill`, `--prompt-template`), then the project settings' entries, the
//! global settings' entries, the project's own directories (`.pi/skills` and `.agents/skills`
//! up to the git root; `.pi/prompts`), and last the user's (`<agentDir>/skills` and
//! `~/.agents/skills`; `<agentDir>/prompts`). A folder that is not trusted ([`crate::trust`],
//! [`LoadedSettings::project_trusted`]) contributes no skill, template or system-prompt file:
//! only its context files load. Everything here reads files synchronously: call it at startup
//! or from a blocking task.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::discovery::{
    ancestor_agents_skill_dirs, markdown_files, markdown_files_recursive, skill_files,
};
use super::selection::{apply_patterns, enabled_by_overrides, is_pattern, resolve_entry};
use super::skills::{expand_skill_command, load_skill, Skill, SkillReadError, SkillSet};
use super::system_files::load_system_prompt_files;
use super::system_prompt::{build_system_prompt_sections, SystemPrompt, SystemPromptOptions};
use super::templates::{dedupe_templates, expand_prompt_template, load_template, PromptTemplate};
use super::{load_context_files, ContextFile, ResourceDiagnostic, ResourceSource};
use crate::settings::LoadedSettings;

/// Command-line choices about resources (pi's flags of the same names).
#[derive(Debug, Clone, Default)]
pub struct ResourceOptions {
    /// `--no-skills`: load only the skills named by `skill_paths`.
    pub no_skills: bool,
    /// `--no-prompt-templates`: load only the templates named by `prompt_paths`.
    pub no_prompt_templates: bool,
    /// `--no-context-files`: no AGENTS.md / CLAUDE.md.
    pub no_context_files: bool,
    /// `--skill <path>`: skill files or directories (relative to the working directory).
    pub skill_paths: Vec<String>,
    /// `--prompt-template <path>`: template files or directories.
    pub prompt_paths: Vec<String>,
    /// `--system-prompt <text or file>`.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt <text or file>`.
    pub append_system_prompt: Option<String>,
    /// The home directory for `~` and `~/.agents/skills`; `None` means `$HOME`.
    pub home: Option<PathBuf>,
    /// Skill files of installed packages (pi 1.6's `packages`): found after every other
    /// skill, so a skill of the user's or the project's wins a shared name.
    pub package_skills: Vec<PathBuf>,
    /// Prompt-template files of installed packages, likewise last.
    pub package_prompts: Vec<PathBuf>,
}

/// Everything loaded, and what went wrong.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// Context files, in prompt order.
    pub context_files: Vec<ContextFile>,
    /// Skills; the first of each name.
    pub skills: Vec<Skill>,
    /// Prompt templates; the first of each name.
    pub templates: Vec<PromptTemplate>,
    /// A replacement for the default system prompt.
    pub system_prompt: Option<String>,
    /// Texts to add after the system prompt.
    pub append_system_prompt: Vec<String>,
    /// Warnings and collisions; show them to the user.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

/// Where each scope's files live and how its settings entries read.
struct Scope<'a> {
    /// Base of relative entries: `<cwd>/.pi` or the agent directory.
    base: PathBuf,
    entries: &'a [String],
}

impl Resources {
    /// Loads every resource. Blocking.
    pub fn load(
        agent_dir: &Path,
        cwd: &Path,
        settings: &LoadedSettings,
        options: &ResourceOptions,
    ) -> Resources {
        let cwd = absolute(cwd);
        let home = options
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
        let project = Scope {
            base: cwd.join(".pi"),
            entries: settings.project.skill_entries(),
        };
        let global = Scope {
            base: agent_dir.to_path_buf(),
            entries: settings.global.skill_entries(),
        };
        let mut diagnostics = Vec::new();
        let context_files = if options.no_context_files {
            Vec::new()
        } else {
            load_context_files(agent_dir, &cwd, &mut diagnostics)
        };
        let trusted = settings.project_trusted;
        let skills = load_skills(
            agent_dir,
            &cwd,
            home.as_deref(),
            [&project, &global],
            (trusted, options),
            &mut diagnostics,
        );
        let project = Scope {
            entries: settings.project.prompt_entries(),
            ..project
        };
        let global = Scope {
            entries: settings.global.prompt_entries(),
            ..global
        };
        let templates = load_templates(
            agent_dir,
            &cwd,
            home.as_deref(),
            [&project, &global],
            (trusted, options),
            &mut diagnostics,
        );
        let (system_prompt, append_system_prompt) = load_system_prompt_files(
            &cwd,
            settings.project_trusted,
            agent_dir,
            options.system_prompt.as_deref(),
            options.append_system_prompt.as_deref(),
            &mut diagnostics,
        );
        Resources {
            cwd,
            context_files,
            skills,
            templates,
            system_prompt,
            append_system_prompt,
            diagnostics,
        }
    }

    /// Expands a user prompt: `/skill:name args` into the skill, else `/name args` into a
    /// template; any other text is returned as it is. Blocking (reads the skill file).
    pub fn expand_input(&self, text: &str) -> Result<String, SkillReadError> {
        if let Some(expanded) = expand_skill_command(text, &self.skills)? {
            return Ok(expanded);
        }
        Ok(expand_prompt_template(text, &self.templates).unwrap_or_else(|| text.to_string()))
    }

    /// The system prompt for these resources and the active `tools`, dated `date`. Use
    /// [`build_system_prompt_sections`] directly to add lines for non-built-in tools.
    pub fn system_prompt_for(&self, tools: &[String], date: &str) -> SystemPrompt {
        let append = self.append_system_prompt.join("\n\n");
        build_system_prompt_sections(&SystemPromptOptions {
            custom_prompt: self.system_prompt.as_deref(),
            append: (!append.is_empty()).then_some(append.as_str()),
            tools,
            tool_snippets: &BTreeMap::new(),
            guidelines: &[],
            context_files: &self.context_files,
            skills: &self.skills,
            cwd: &self.cwd,
            date,
        })
    }
}

fn absolute(path: &Path) -> PathBuf {
    let joined = match std::env::current_dir() {
        Ok(current) if path.is_relative() => current.join(path),
        _ => path.to_path_buf(),
    };
    crate::paths::normalize(&joined)
}

/// Files in precedence order, each once, with whether it is enabled (its first sighting
/// decides, as in pi).
#[derive(Default)]
struct Candidates {
    files: Vec<PathBuf>,
    seen: HashSet<PathBuf>,
}

impl Candidates {
    fn add(&mut self, file: PathBuf, enabled: bool) {
        if self.seen.insert(file.clone()) && enabled {
            self.files.push(file);
        }
    }

    /// A scope's plain entries (collected with `collect`), filtered by its patterns.
    fn add_entries(
        &mut self,
        scope: &Scope<'_>,
        home: Option<&Path>,
        collect: impl Fn(&Path) -> Vec<PathBuf>,
    ) {
        let mut found = Vec::new();
        for entry in scope.entries.iter().filter(|e| !is_pattern(e)) {
            let path = resolve_entry(entry, &scope.base, home);
            if path.is_dir() {
                found.extend(collect(&path));
            } else if path.is_file() {
                found.push(path);
            }
        }
        let enabled = apply_patterns(&found, scope.entries, &scope.base);
        for file in found {
            let on = enabled.contains(&file);
            self.add(file, on);
        }
    }

    /// Discovered files, subject to the scope's override patterns.
    fn add_discovered(&mut self, scope: &Scope<'_>, files: Vec<PathBuf>) {
        for file in files {
            let on = enabled_by_overrides(&file, scope.entries, &scope.base);
            self.add(file, on);
        }
    }
}

/// Command-line paths: directories are searched, `.md` files taken, others reported.
fn add_cli_paths(
    candidates: &mut Candidates,
    paths: &[String],
    cwd: &Path,
    home: Option<&Path>,
    what: &str,
    collect: impl Fn(&Path) -> Vec<PathBuf>,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) {
    for raw in paths {
        let path = resolve_entry(raw, cwd, home);
        if path.is_dir() {
            for file in collect(&path) {
                candidates.add(file, true);
            }
        } else if path.is_file() && path.extension().is_some_and(|e| e == "md") {
            candidates.add(path, true);
        } else if path.exists() {
            diagnostics.push(ResourceDiagnostic::warning(
                format!("{what} path is not a markdown file"),
                &path,
            ));
        } else {
            diagnostics.push(ResourceDiagnostic::warning(
                format!("{what} path does not exist"),
                &path,
            ));
        }
    }
}

fn source_of(file: &Path, user_dir: &Path, project_dir: &Path) -> ResourceSource {
    if file.starts_with(user_dir) {
        ResourceSource::User
    } else if file.starts_with(project_dir) {
        ResourceSource::Project
    } else {
        ResourceSource::Path
    }
}

fn load_skills(
    agent_dir: &Path,
    cwd: &Path,
    home: Option<&Path>,
    [project, global]: [&Scope<'_>; 2],
    (project_trusted, options): (bool, &ResourceOptions),
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Vec<Skill> {
    let dir_skills = |dir: &Path| skill_files(dir, true);
    let mut candidates = Candidates::default();
    add_cli_paths(
        &mut candidates,
        &options.skill_paths,
        cwd,
        home,
        "skill",
        dir_skills,
        diagnostics,
    );
    let user_dir = agent_dir.join("skills");
    let project_dir = cwd.join(".pi").join("skills");
    if !options.no_skills {
        candidates.add_entries(project, home, dir_skills);
        candidates.add_entries(global, home, dir_skills);
        let home_agents = home.map(|h| h.join(".agents").join("skills"));
        if project_trusted {
            let mut project_found = skill_files(&project_dir, true);
            for dir in ancestor_agents_skill_dirs(cwd) {
                if Some(&dir) != home_agents.as_ref() {
                    project_found.extend(skill_files(&dir, true));
                }
            }
            candidates.add_discovered(project, project_found);
        }
        let mut user_found = skill_files(&user_dir, true);
        if let Some(dir) = &home_agents {
            user_found.extend(skill_files(dir, true));
        }
        candidates.add_discovered(global, user_found);
        for file in &options.package_skills {
            candidates.add(file.clone(), true);
        }
    }
    let mut set = SkillSet::default();
    for file in candidates.files {
        let source = source_of(&file, &user_dir, &project_dir);
        if let Some(skill) = load_skill(&file, source, diagnostics) {
            set.add(skill);
        }
    }
    diagnostics.extend(set.collisions);
    set.skills
}

fn load_templates(
    agent_dir: &Path,
    cwd: &Path,
    home: Option<&Path>,
    [project, global]: [&Scope<'_>; 2],
    (project_trusted, options): (bool, &ResourceOptions),
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Vec<PromptTemplate> {
    let mut candidates = Candidates::default();
    add_cli_paths(
        &mut candidates,
        &options.prompt_paths,
        cwd,
        home,
        "prompt template",
        markdown_files,
        diagnostics,
    );
    let user_dir = agent_dir.join("prompts");
    let project_dir = cwd.join(".pi").join("prompts");
    if !options.no_prompt_templates {
        candidates.add_entries(project, home, markdown_files_recursive);
        candidates.add_entries(global, home, markdown_files_recursive);
        if project_trusted {
            candidates.add_discovered(project, markdown_files(&project_dir));
        }
        candidates.add_discovered(global, markdown_files(&user_dir));
        for file in &options.package_prompts {
            candidates.add(file.clone(), true);
        }
    }
    let loaded: Vec<PromptTemplate> = candidates
        .files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
        .filter_map(|f| load_template(f, source_of(f, &user_dir, &project_dir), diagnostics))
        .collect();
    dedupe_templates(loaded, diagnostics)
}

#[cfg(test)]
#[path = "loader_tests.rs"]
mod tests;
