use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::resources::ResourceSource;

fn tools(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn skill(name: &str) -> Skill {
    Skill {
        name: name.into(),
        description: format!("{name} things"),
        file_path: PathBuf::from(format!("/skills/{name}/SKILL.md")),
        base_dir: PathBuf::from(format!("/skills/{name}")),
        source: ResourceSource::User,
        disable_model_invocation: false,
    }
}

struct Inputs {
    tools: Vec<String>,
    snippets: BTreeMap<String, String>,
    guidelines: Vec<String>,
    context: Vec<ContextFile>,
    skills: Vec<Skill>,
}

impl Inputs {
    fn new(names: &[&str]) -> Inputs {
        Inputs {
            tools: tools(names),
            snippets: BTreeMap::new(),
            guidelines: Vec::new(),
            context: Vec::new(),
            skills: Vec::new(),
        }
    }

    fn build(&self, custom: Option<&str>, append: Option<&str>) -> String {
        build_system_prompt(&self.options(custom, append))
    }

    fn options<'a>(
        &'a self,
        custom: Option<&'a str>,
        append: Option<&'a str>,
    ) -> SystemPromptOptions<'a> {
        SystemPromptOptions {
            custom_prompt: custom,
            append,
            tools: &self.tools,
            tool_snippets: &self.snippets,
            guidelines: &self.guidelines,
            context_files: &self.context,
            skills: &self.skills,
            cwd: Path::new("/work/project"),
            date: "2026-03-04",
        }
    }
}

const TAIL: &str = "\n\nCurrent date: 2026-03-04\nCurrent working directory: /work/project";

#[test]
fn lists_exactly_the_active_tools() {
    let all = ["read", "bash", "edit", "write", "grep", "find", "ls"];
    for active in [
        &all[..4],
        &all[..],
        &["read", "grep", "find", "ls"][..],
        &["bash"][..],
    ] {
        let prompt = Inputs::new(active).build(None, None);
        for tool in all {
            let line = format!("\n- {tool}: ");
            assert_eq!(
                prompt.contains(&line),
                active.contains(&tool),
                "{tool} in {active:?}"
            );
        }
    }
    let prompt = Inputs::new(&[]).build(None, None);
    assert!(prompt.contains("Available tools:\n(none)\n"));
    assert!(prompt.contains("- Give the path of every file you mention or change."));
}

#[test]
fn the_full_default_prompt_for_the_default_tools() {
    let prompt = Inputs::new(&["read", "bash", "edit", "write"]).build(None, None);
    let expected = "You are Tandem, a coding assistant working in the user's project alongside \
        them. You read code, run commands, make changes and explain what you found and did.\n\n\
        Available tools:\n\
        - read: read the contents of a file (text, or an image to look at)\n\
        - bash: run a shell command in the working directory\n\
        - edit: change a file by replacing exact pieces of its text\n\
        - write: create a file, or replace a file's whole content\n\n\
        Other tools may be provided as well, depending on the project.\n\n\
        Guidelines:\n\
        - Explore the project with bash (ls, rg, find).\n\
        - Read a file before you edit it, and look at files with read, never with cat or sed.\n\
        - Use edit for targeted changes; its old text must match the file exactly, whitespace included.\n\
        - Use write only for new files or for rewriting a file completely.\n\
        - To report what you changed, write it in your answer; do not print files with bash.\n\
        - Keep your answers short and to the point.\n\
        - Give the path of every file you mention or change.";
    assert_eq!(prompt, format!("{expected}{TAIL}"));
}

#[test]
fn guidelines_follow_the_tools() {
    let read_only = Inputs::new(&["read", "grep", "find", "ls"]).build(None, None);
    assert!(!read_only.contains("Use edit"));
    assert!(!read_only.contains("Use write"));
    assert!(!read_only.contains("Read a file before you edit it"));
    assert!(!read_only.contains("bash"));
    let all =
        Inputs::new(&["read", "bash", "edit", "write", "grep", "find", "ls"]).build(None, None);
    assert!(all.contains("- Explore with grep, find and ls rather than bash"));
    assert!(!all.contains("Explore the project with bash"));
}

#[test]
fn custom_tool_lines_and_extra_guidelines() {
    let mut inputs = Inputs::new(&["read", "lookup", "bare"]);
    inputs
        .snippets
        .insert("lookup".into(), "look things up".into());
    inputs.guidelines = tools(&["Use lookup for facts.", "  Use lookup for facts.  ", "   "]);
    let prompt = inputs.build(None, None);
    assert!(prompt.contains("- lookup: look things up\n- bare\n"));
    assert_eq!(prompt.matches("- Use lookup for facts.").count(), 1);
    assert!(!prompt.contains("- \n"));
}

#[test]
fn sections_in_order_with_date_and_cwd_last() {
    let mut inputs = Inputs::new(&["read", "bash"]);
    inputs.context = vec![
        ContextFile {
            path: PathBuf::from("/home/u/.pi/agent/AGENTS.md"),
            content: "Global rules.\n".into(),
        },
        ContextFile {
            path: PathBuf::from("/work/project/AGENTS.md"),
            content: "Project rules.".into(),
        },
    ];
    inputs.skills = vec![skill("deploy")];
    let prompt = inputs.build(None, Some("Appended text."));
    let order = [
        "Guidelines:",
        "Appended text.",
        "# Project instructions",
        "## /home/u/.pi/agent/AGENTS.md\n\nGlobal rules.\n",
        "## /work/project/AGENTS.md\n\nProject rules.\n",
        "<available_skills>",
        "<name>deploy</name>",
        "<location>/skills/deploy/SKILL.md</location>",
        "</available_skills>",
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|s| prompt.find(s).unwrap_or_else(|| panic!("{s} missing")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert!(prompt.ends_with(&format!("</available_skills>{TAIL}")));
}

#[test]
fn skills_only_with_the_read_tool() {
    let mut inputs = Inputs::new(&["bash", "edit"]);
    inputs.skills = vec![skill("deploy")];
    assert!(!inputs.build(None, None).contains("available_skills"));
    assert!(!inputs
        .build(Some("Custom."), None)
        .contains("available_skills"));
    inputs.tools = tools(&["read"]);
    assert!(inputs.build(None, None).contains("available_skills"));
    assert!(inputs
        .build(Some("Custom."), None)
        .contains("available_skills"));
    inputs.skills[0].disable_model_invocation = true;
    assert!(!inputs.build(None, None).contains("available_skills"));
}

#[test]
fn a_custom_prompt_replaces_the_default_but_keeps_the_rest() {
    let mut inputs = Inputs::new(&["read"]);
    inputs.context = vec![ContextFile {
        path: PathBuf::from("/work/project/CLAUDE.md"),
        content: "Rules.".into(),
    }];
    let prompt = inputs.build(Some("You are a pirate.\n"), Some("Arr."));
    // Each part is a section of its own, trimmed at the end, joined by one blank line.
    assert!(prompt.starts_with("You are a pirate.\n\nArr.\n\n# Project instructions"));
    assert!(!prompt.contains("Available tools"));
    assert!(prompt.ends_with(&format!("## /work/project/CLAUDE.md\n\nRules.{TAIL}")));
    let bare = Inputs::new(&[]).build(Some("Only this."), None);
    assert_eq!(bare, format!("Only this.{TAIL}"));
}

#[test]
fn dates_from_day_counts() {
    assert_eq!(date_from_unix_days(0), "1970-01-01");
    assert_eq!(date_from_unix_days(11_016), "2000-02-29");
    assert_eq!(date_from_unix_days(20_513), "2026-03-01");
    assert_eq!(date_from_unix_days(-1), "1969-12-31");
    let today = today_utc();
    assert_eq!(today.len(), 10);
    assert_eq!(&today[4..5], "-");
}

#[test]
fn the_prompt_is_named_sections_joined_by_blank_lines() {
    let mut inputs = Inputs::new(&["read"]);
    inputs.context = vec![ContextFile {
        path: PathBuf::from("/work/project/AGENTS.md"),
        content: "Rules.\n".into(),
    }];
    inputs.skills = vec![skill("lint")];
    let options = inputs.options(Some("Custom.\n\n"), Some("More."));
    let sections = build_system_prompt_sections(&options);
    let names: Vec<&str> = sections
        .sections()
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        names,
        ["preamble", "addendum", "project_context", "skills", "cwd"]
    );
    assert_eq!(sections.sections()[0].1, "Custom.");
    assert_eq!(sections.text(), build_system_prompt(&options));
    let texts: Vec<&str> = sections
        .sections()
        .iter()
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(sections.text(), texts.join("\n\n"));
    // A whole prompt given as text is one `preamble` section.
    let whole = SystemPrompt::from("Just this.");
    assert_eq!(
        whole.sections(),
        [("preamble".to_string(), "Just this.".to_string())]
    );
    assert_eq!(whole.text(), "Just this.");
}
