//! The system prompt, assembled in pi's order: the base prompt (Tandem's default, or the text
//! of SYSTEM.md / `--system-prompt`), the APPEND_SYSTEM.md / `--append-system-prompt` text, the
//! project's context files, the skill listing (only when the model can read files), and last
//! the date and working directory.
//!
//! The default prompt is Tandem's own text. It lists only the tools that are active, each with
//! one line on what it is for, and adds usage guidelines that depend on which tools are there
//! (pi's conditions). Building is pure: the caller passes the date ([`today_utc`]).
//!
//! The prompt is built as named sections ([`SystemPrompt`]), so a session can record it the way
//! pi 1.6 does and patch only the sections that changed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::context_files::ContextFile;
use super::skills::{format_skills_for_prompt, Skill};

/// What goes into a system prompt.
#[derive(Debug, Clone, Copy)]
pub struct SystemPromptOptions<'a> {
    /// Replaces the default prompt (SYSTEM.md or `--system-prompt`).
    pub custom_prompt: Option<&'a str>,
    /// Added after the base prompt (APPEND_SYSTEM.md or `--append-system-prompt`).
    pub append: Option<&'a str>,
    /// The active tools, in the order to list them.
    pub tools: &'a [String],
    /// One-line descriptions for tools Tandem does not describe itself (extension or MCP
    /// tools), or to replace a built-in line.
    pub tool_snippets: &'a BTreeMap<String, String>,
    /// Extra guideline lines (from tools); trimmed, blank and repeated ones dropped.
    pub guidelines: &'a [String],
    /// Context files, in order.
    pub context_files: &'a [ContextFile],
    /// Loaded skills (listed only when `read` is active).
    pub skills: &'a [Skill],
    /// The working directory.
    pub cwd: &'a Path,
    /// Today as `YYYY-MM-DD`.
    pub date: &'a str,
}

/// Tandem's line for a built-in tool.
fn builtin_line(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "read" => "read the contents of a file (text, or an image to look at)",
        "bash" => "run a shell command in the working directory",
        "edit" => "change a file by replacing exact pieces of its text",
        "write" => "create a file, or replace a file's whole content",
        "grep" => "search file contents by pattern (skips files ignored by .gitignore)",
        "find" => "find files by glob pattern (skips files ignored by .gitignore)",
        "ls" => "list the entries of a directory",
        "diagnostics" => "list the errors and warnings the language servers report",
        "definition" => "find where the symbol at a position is defined (language servers)",
        "references" => "find every use of the symbol at a position (language servers)",
        "symbols" => "outline a file, or find symbols by name in the project",
        "hover" => "show the type and documentation of the symbol at a position",
        "rename" => "rename a symbol everywhere it is used, as one proposed edit",
        _ => return None,
    })
}

/// A system prompt as named sections, in order: what a session records in its `system`
/// messages ([`crate::session::system`]) and patches by name when a section changes. The
/// prompt's text is the non-empty sections joined by blank lines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SystemPrompt {
    sections: Vec<(String, String)>,
}

impl SystemPrompt {
    /// A prompt from `(name, text)` sections; a repeated name keeps its first place and last
    /// text, as a JavaScript object would.
    pub fn from_sections(sections: impl IntoIterator<Item = (String, String)>) -> SystemPrompt {
        let mut prompt = SystemPrompt::default();
        for (name, text) in sections {
            match prompt.sections.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = text,
                None => prompt.sections.push((name, text)),
            }
        }
        prompt
    }

    /// The sections, in order.
    pub fn sections(&self) -> &[(String, String)] {
        &self.sections
    }

    /// The prompt's text: the non-empty sections joined by blank lines.
    pub fn text(&self) -> String {
        join_parts(self.sections.iter().map(|(_, text)| text.as_str()))
    }
}

/// A whole prompt given as one text (tests, `--system-prompt` callers): one `preamble` section.
impl From<&str> for SystemPrompt {
    fn from(text: &str) -> SystemPrompt {
        SystemPrompt::from_sections([("preamble".to_string(), text.to_string())])
    }
}

impl From<String> for SystemPrompt {
    fn from(text: String) -> SystemPrompt {
        SystemPrompt::from_sections([("preamble".to_string(), text)])
    }
}

/// The non-empty `parts` joined by blank lines (pi's rendering of a system message).
pub(crate) fn join_parts<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Builds the system prompt's text.
pub fn build_system_prompt(options: &SystemPromptOptions<'_>) -> String {
    build_system_prompt_sections(options).text()
}

/// Builds the system prompt as sections, named as pi 1.6 names its own: `preamble` (the base
/// prompt), `addendum` (the appended text), `project_context`, `skills`, and `cwd` (with the
/// date). Each section is trimmed at the end; absent parts have no section.
pub fn build_system_prompt_sections(options: &SystemPromptOptions<'_>) -> SystemPrompt {
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, text: String| {
        let text = text.trim_end().to_string();
        if !text.is_empty() {
            sections.push((name.to_string(), text));
        }
    };
    add(
        "preamble",
        match options.custom_prompt {
            Some(custom) => custom.to_string(),
            None => default_prompt(options),
        },
    );
    if let Some(append) = options.append.filter(|a| !a.is_empty()) {
        add("addendum", append.to_string());
    }
    if !options.context_files.is_empty() {
        let mut context = String::from(
            "# Project instructions\n\nThe files below hold instructions for this project and \
             its directories. Follow them.\n",
        );
        for file in options.context_files {
            context.push_str(&format!(
                "\n## {}\n\n{}\n",
                file.path.display(),
                file.content.trim_end()
            ));
        }
        add("project_context", context);
    }
    let has_read = options.tools.iter().any(|t| t == "read");
    if has_read {
        add("skills", format_skills_for_prompt(options.skills));
    }
    let cwd = options.cwd.to_string_lossy().replace('\\', "/");
    add(
        "cwd",
        format!(
            "Current date: {}\nCurrent working directory: {cwd}",
            options.date
        ),
    );
    SystemPrompt { sections }
}

fn default_prompt(options: &SystemPromptOptions<'_>) -> String {
    let tools = options.tools;
    let tool_lines = if tools.is_empty() {
        "(none)".to_string()
    } else {
        tools
            .iter()
            .map(|name| {
                let line = options
                    .tool_snippets
                    .get(name)
                    .map(String::as_str)
                    .or_else(|| builtin_line(name));
                match line {
                    Some(line) => format!("- {name}: {line}"),
                    None => format!("- {name}"),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let has = |name: &str| tools.iter().any(|t| t == name);
    let mut guidelines: Vec<String> = Vec::new();
    let mut add = |line: &str| {
        let line = line.trim();
        if !line.is_empty() && !guidelines.iter().any(|g| g == line) {
            guidelines.push(line.to_string());
        }
    };
    let explorers = has("grep") || has("find") || has("ls");
    if has("bash") && !explorers {
        add("Explore the project with bash (ls, rg, find).");
    } else if has("bash") {
        add("Explore with grep, find and ls rather than bash: they are faster and skip ignored files.");
    }
    if has("read") && has("edit") {
        add("Read a file before you edit it, and look at files with read, never with cat or sed.");
    }
    if has("edit") {
        add("Use edit for targeted changes; its old text must match the file exactly, whitespace included.");
    }
    if has("write") {
        add("Use write only for new files or for rewriting a file completely.");
    }
    if has("definition") || has("references") || has("rename") {
        add("To navigate code use definition and references, and rename symbols with rename: they follow the language's rules, which grep and edit do not.");
    }
    if (has("edit") || has("write")) && has("diagnostics") {
        add("After an edit or write, its result lists the errors and warnings it introduced: fix them before you go on.");
    }
    if has("edit") || has("write") {
        add("To report what you changed, write it in your answer; do not print files with bash.");
    }
    for line in options.guidelines {
        add(line);
    }
    add("Keep your answers short and to the point.");
    add("Give the path of every file you mention or change.");
    let guidelines: Vec<String> = guidelines.iter().map(|g| format!("- {g}")).collect();
    format!(
        "You are Tandem, a coding assistant working in the user's project alongside them. You \
         read code, run commands, make changes and explain what you found and did.\n\n\
         Available tools:\n{tool_lines}\n\n\
         Other tools may be provided as well, depending on the project.\n\n\
         Guidelines:\n{}",
        guidelines.join("\n")
    )
}

/// Today's date in UTC as `YYYY-MM-DD` (what pi puts in the prompt). Hand-written because it
/// is the only calendar arithmetic this crate needs.
pub fn today_utc() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    date_from_unix_days((secs / 86_400) as i64)
}

/// The civil date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn date_from_unix_days(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
#[path = "system_prompt_tests.rs"]
mod tests;
