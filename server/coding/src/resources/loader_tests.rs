use std::path::{Path, PathBuf};

use super::*;
use crate::resources::DiagnosticKind;
use crate::settings::{self, Settings};

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
    path.to_path_buf()
}

fn skill_text(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\nBody of {name}.\n")
}

/// A temp tree: `agent/`, `home/`, and a git repository `repo/` with the working directory
/// `repo/app`.
struct World {
    _root: tempfile::TempDir,
    agent: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    cwd: PathBuf,
}

fn world() -> World {
    let root = tempfile::tempdir().expect("temp dir");
    let base = std::fs::canonicalize(root.path()).expect("canon");
    let w = World {
        agent: base.join("agent"),
        home: base.join("home"),
        repo: base.join("repo"),
        cwd: base.join("repo/app"),
        _root: root,
    };
    for dir in [&w.agent, &w.home, &w.cwd, &w.repo.join(".git")] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    w
}

impl World {
    fn options(&self) -> ResourceOptions {
        ResourceOptions {
            home: Some(self.home.clone()),
            ..ResourceOptions::default()
        }
    }

    fn load(&self, options: &ResourceOptions) -> Resources {
        let settings = settings::load(&self.agent, &self.cwd, true);
        assert!(settings.errors.is_empty(), "{:?}", settings.errors);
        Resources::load(&self.agent, &self.cwd, &settings, options)
    }
}

fn names_and_sources(r: &Resources) -> Vec<(String, ResourceSource)> {
    r.skills
        .iter()
        .map(|s| (s.name.clone(), s.source))
        .collect()
}

#[test]
fn skills_from_every_place_project_first() {
    let w = world();
    write(
        &w.agent.join("skills/user-only/SKILL.md"),
        &skill_text("user-only", "u"),
    );
    write(
        &w.agent.join("skills/shared/SKILL.md"),
        &skill_text("shared", "from user"),
    );
    write(
        &w.agent.join("skills/loose.md"),
        &skill_text("loose", "a root file"),
    );
    write(
        &w.cwd.join(".pi/skills/shared/SKILL.md"),
        &skill_text("shared", "from project"),
    );
    write(
        &w.cwd.join(".agents/skills/near/SKILL.md"),
        &skill_text("near", "n"),
    );
    write(
        &w.repo.join(".agents/skills/top/SKILL.md"),
        &skill_text("top", "t"),
    );
    // Above the git root: not searched.
    write(
        &w.repo
            .parent()
            .expect("parent")
            .join(".agents/skills/outside/SKILL.md"),
        &skill_text("outside", "o"),
    );
    write(
        &w.home.join(".agents/skills/home-skill/SKILL.md"),
        &skill_text("home-skill", "h"),
    );
    let r = w.load(&w.options());
    assert_eq!(
        names_and_sources(&r),
        vec![
            ("shared".into(), ResourceSource::Project),
            ("near".into(), ResourceSource::Path),
            ("top".into(), ResourceSource::Path),
            ("loose".into(), ResourceSource::User),
            ("user-only".into(), ResourceSource::User),
            ("home-skill".into(), ResourceSource::Path),
        ]
    );
    assert_eq!(r.skills[0].description, "from project");
    let collisions: Vec<&ResourceDiagnostic> = r
        .diagnostics
        .iter()
        .filter(|d| matches!(d.kind, DiagnosticKind::Collision(_)))
        .collect();
    assert_eq!(collisions.len(), 1);
    assert_eq!(
        collisions[0].to_string(),
        format!(
            "{}: name \"shared\" collision (using {})",
            w.agent.join("skills/shared/SKILL.md").display(),
            w.cwd.join(".pi/skills/shared/SKILL.md").display()
        )
    );
    // `loose.md` has no directory of its own: its name does not match "skills".
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.message == "name \"loose\" does not match parent directory \"skills\""));
}

#[test]
fn templates_project_first_and_context_and_system_files() {
    let w = world();
    let project_commit = write(&w.cwd.join(".pi/prompts/commit.md"), "Project commit $1");
    write(&w.agent.join("prompts/commit.md"), "User commit");
    write(
        &w.agent.join("prompts/review.md"),
        "---\ndescription: Review\n---\nReview $@",
    );
    write(&w.agent.join("prompts/sub/deep.md"), "not auto-discovered");
    write(&w.repo.join("AGENTS.md"), "repo rules");
    write(&w.cwd.join("CLAUDE.md"), "app rules");
    write(&w.agent.join("APPEND_SYSTEM.md"), "appended");
    let r = w.load(&w.options());
    let names: Vec<(&str, ResourceSource)> = r
        .templates
        .iter()
        .map(|t| (t.name.as_str(), t.source))
        .collect();
    assert_eq!(
        names,
        vec![
            ("commit", ResourceSource::Project),
            ("review", ResourceSource::User)
        ]
    );
    assert_eq!(r.templates[0].file_path, project_commit);
    let context: Vec<&str> = r
        .context_files
        .iter()
        .filter(|f| f.path.starts_with(&w.repo))
        .map(|f| f.content.as_str())
        .collect();
    assert_eq!(context, ["repo rules", "app rules"]);
    assert_eq!(r.system_prompt, None);
    assert_eq!(r.append_system_prompt, ["appended"]);
    assert_eq!(
        r.expand_input("/commit fix").expect("ok"),
        "Project commit fix"
    );
    assert_eq!(
        r.expand_input("/review a \"b c\"").expect("ok"),
        "Review a b c"
    );
    assert_eq!(
        r.expand_input("hello /commit").expect("ok"),
        "hello /commit"
    );

    let prompt = r
        .system_prompt_for(&["read".to_string()], "2026-01-02")
        .text();
    assert!(prompt.contains("\n\nappended\n\n# Project instructions"));
    assert!(prompt.contains("repo rules") && prompt.contains("app rules"));
    assert!(prompt.ends_with(&format!(
        "Current date: 2026-01-02\nCurrent working directory: {}",
        w.cwd.display()
    )));
}

#[test]
fn the_no_flags_keep_only_command_line_paths() {
    let w = world();
    write(
        &w.agent.join("skills/auto/SKILL.md"),
        &skill_text("auto", "a"),
    );
    write(&w.agent.join("prompts/auto.md"), "auto");
    write(&w.cwd.join("AGENTS.md"), "rules");
    let cli_skill = write(
        &w.cwd.join("extra/cli-skill/SKILL.md"),
        &skill_text("cli-skill", "c"),
    );
    write(&w.cwd.join("extra/p/cli.md"), "cli template");
    let options = ResourceOptions {
        no_skills: true,
        no_prompt_templates: true,
        no_context_files: true,
        skill_paths: vec![
            "extra/cli-skill".into(),
            "missing-dir".into(),
            "extra/p/cli.md".into(),
        ],
        prompt_paths: vec!["extra/p".into()],
        system_prompt: Some("Custom prompt.".into()),
        ..w.options()
    };
    let r = w.load(&options);
    assert_eq!(r.skills.len(), 1, "{:?}", r.skills);
    assert_eq!(r.skills[0].file_path, cli_skill);
    assert_eq!(r.skills[0].source, ResourceSource::Path);
    let names: Vec<&str> = r.templates.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["cli"]);
    assert!(r.context_files.is_empty());
    assert_eq!(r.system_prompt.as_deref(), Some("Custom prompt."));
    let warnings: Vec<String> = r.diagnostics.iter().map(ToString::to_string).collect();
    assert!(warnings.contains(&format!(
        "{}: skill path does not exist",
        w.cwd.join("missing-dir").display()
    )));
    // The template file given as a skill loads as a skill named after its directory, with
    // pi's warnings.
    assert!(warnings
        .iter()
        .any(|t| t.ends_with("cli.md: description is required")));
}

#[test]
fn settings_entries_add_paths_and_patterns_disable_discovered_ones() {
    let w = world();
    write(
        &w.agent.join("skills/skip-skill/SKILL.md"),
        &skill_text("skip-skill", "s"),
    );
    write(
        &w.agent.join("skills/keep/SKILL.md"),
        &skill_text("keep", "k"),
    );
    write(&w.agent.join("prompts/skip.md"), "skip");
    write(&w.agent.join("prompts/kept.md"), "kept");
    write(
        &w.repo.join("shared/skills/extra/SKILL.md"),
        &skill_text("extra", "e"),
    );
    write(&w.repo.join("shared/prompts/a/deep.md"), "deep one");
    write(&w.repo.join("shared/prompts/b.md"), "b");
    write(
        &w.agent.join("settings.json"),
        r#"{"skills": ["-skills/skip-skill"], "prompts": ["-prompts/skip.md"]}"#,
    );
    write(
        &w.cwd.join(".pi/settings.json"),
        r#"{"skills": ["../../shared/skills"], "prompts": ["../../shared/prompts", "!b.md"]}"#,
    );
    let r = w.load(&w.options());
    let skills: Vec<&str> = r.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(skills, ["extra", "keep"]);
    let templates: Vec<&str> = r.templates.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(templates, ["deep", "kept"]);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);

    let mut loaded = settings::load(&w.agent, &w.cwd, true);
    loaded.global = Settings::default();
    let r = Resources::load(&w.agent, &w.cwd, &loaded, &w.options());
    assert!(r.skills.iter().any(|s| s.name == "skip-skill"));
}

#[test]
fn skill_commands_expand_through_resources() {
    let w = world();
    let file = write(
        &w.cwd.join(".pi/skills/fmt/SKILL.md"),
        &skill_text("fmt", "Formats."),
    );
    let r = w.load(&w.options());
    let expanded = r.expand_input("/skill:fmt src/").expect("reads");
    assert_eq!(
        expanded,
        format!(
            "<skill name=\"fmt\" location=\"{}\">\nRelative paths in this skill start at {}.\n\n\
             Body of fmt.\n</skill>\n\nsrc/",
            file.display(),
            w.cwd.join(".pi/skills/fmt").display()
        )
    );
    let prompt = r
        .system_prompt_for(&["read".to_string()], "2026-01-02")
        .text();
    assert!(prompt.contains(&format!("<location>{}</location>", file.display())));
    let prompt = r
        .system_prompt_for(&["bash".to_string()], "2026-01-02")
        .text();
    assert!(!prompt.contains("<available_skills>"));
}

#[test]
fn an_untrusted_project_keeps_its_context_files_and_nothing_else() {
    let w = world();
    write(&w.cwd.join("AGENTS.md"), "project rules");
    write(
        &w.cwd.join(".pi/skills/evil/SKILL.md"),
        &skill_text("evil", "Planted."),
    );
    write(
        &w.repo.join(".agents/skills/also/SKILL.md"),
        &skill_text("also", "Planted too."),
    );
    write(&w.cwd.join(".pi/prompts/fix.md"), "planted prompt");
    write(&w.cwd.join(".pi/SYSTEM.md"), "planted system prompt");
    write(&w.cwd.join(".pi/APPEND_SYSTEM.md"), "planted addition");
    write(
        &w.agent.join("skills/mine/SKILL.md"),
        &skill_text("mine", "The user's own."),
    );
    write(&w.agent.join("APPEND_SYSTEM.md"), "the user's addition");
    let untrusted = settings::load(&w.agent, &w.cwd, false);
    let r = Resources::load(&w.agent, &w.cwd, &untrusted, &w.options());
    let skills: Vec<&str> = r.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(skills, ["mine"]);
    assert!(r.templates.is_empty());
    assert_eq!(r.system_prompt, None);
    assert_eq!(r.append_system_prompt, ["the user's addition"]);
    assert!(r.context_files.iter().any(|f| f.content == "project rules"));
    let prompt = r
        .system_prompt_for(&["read".to_string()], "2026-12-01")
        .text();
    assert!(!prompt.contains("planted"), "{prompt}");

    let trusted = settings::load(&w.agent, &w.cwd, true);
    let r = Resources::load(&w.agent, &w.cwd, &trusted, &w.options());
    let mut skills: Vec<&str> = r.skills.iter().map(|s| s.name.as_str()).collect();
    skills.sort();
    assert_eq!(skills, ["also", "evil", "mine"]);
    assert_eq!(r.system_prompt.as_deref(), Some("planted system prompt"));
}

#[test]
fn package_skills_and_templates_load_last() {
    let w = world();
    write(
        &w.agent.join("skills/shared/SKILL.md"),
        &skill_text("shared", "mine"),
    );
    let pkg = w.home.join("pkg");
    let own = write(
        &pkg.join("skills/shared/SKILL.md"),
        &skill_text("shared", "pkg"),
    );
    let extra = write(
        &pkg.join("skills/extra/SKILL.md"),
        &skill_text("extra", "pkg"),
    );
    let template = write(&pkg.join("prompts/review.md"), "review it");
    let options = ResourceOptions {
        package_skills: vec![own, extra],
        package_prompts: vec![template],
        ..w.options()
    };
    let r = w.load(&options);
    let names: Vec<&str> = r.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["shared", "extra"]);
    assert_eq!(
        r.skills[0].source,
        ResourceSource::User,
        "the user's skill wins"
    );
    assert!(r.templates.iter().any(|t| t.name == "review"));
}
