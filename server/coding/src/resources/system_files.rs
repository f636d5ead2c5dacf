//! Replacing or extending the system prompt: `SYSTEM.md` replaces Tandem's default prompt and
//! `APPEND_SYSTEM.md` is added after it. Each is looked for in the project's `.pi/` first, then
//! in the agent directory; the first found is used (pi's precedence). The project's files are
//! skipped for a folder that is not trusted ([`crate::trust`]).
//!
//! The command-line equivalents (`--system-prompt`, `--append-system-prompt`) take precedence
//! over the files. As in pi, their value is a file to read when such a file exists (relative
//! paths start at the working directory), and the prompt text itself otherwise.

use std::path::{Path, PathBuf};

use super::ResourceDiagnostic;

/// The file that replaces the default prompt.
pub const SYSTEM_FILE: &str = "SYSTEM.md";
/// The file added after the prompt.
pub const APPEND_SYSTEM_FILE: &str = "APPEND_SYSTEM.md";

/// `<project>/.pi/<name>` if a project is given and the file exists, else `<agent_dir>/<name>`
/// if it exists.
pub fn discover(name: &str, project: Option<&Path>, agent_dir: &Path) -> Option<PathBuf> {
    let project = project.map(|cwd| cwd.join(".pi").join(name));
    project
        .into_iter()
        .chain([agent_dir.join(name)])
        .find(|p| p.exists())
}

/// The text of a `--system-prompt`-style value: the named file's contents when it exists,
/// else the value itself. `None` for an empty value, or (with a warning) an existing file that
/// cannot be read. Blocking.
pub fn resolve_input(
    value: &str,
    cwd: &Path,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    let path = cwd.join(value);
    if !path.exists() {
        return Some(value.to_string());
    }
    read(&path, diagnostics)
}

/// The replacement prompt and the appended texts: from the overrides when given, else from the
/// discovered files (the project's only when `project_trusted`). Blocking.
pub fn load_system_prompt_files(
    cwd: &Path,
    project_trusted: bool,
    agent_dir: &Path,
    system_override: Option<&str>,
    append_override: Option<&str>,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> (Option<String>, Vec<String>) {
    let mut pick = |value: Option<&str>, name: &str| match value {
        Some(value) => resolve_input(value, cwd, diagnostics),
        None => discover(name, project_trusted.then_some(cwd), agent_dir)
            .and_then(|p| read(&p, diagnostics)),
    };
    let system = pick(system_override, SYSTEM_FILE);
    let append = pick(append_override, APPEND_SYSTEM_FILE);
    (system, append.into_iter().collect())
}

fn read(path: &Path, diagnostics: &mut Vec<ResourceDiagnostic>) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) => {
            diagnostics.push(ResourceDiagnostic::warning(
                format!("could not read system prompt file: {e}"),
                path,
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    struct Dirs {
        _root: tempfile::TempDir,
        cwd: PathBuf,
        agent: PathBuf,
    }

    fn dirs() -> Dirs {
        let root = tempfile::tempdir().expect("temp dir");
        let cwd = root.path().join("project");
        let agent = root.path().join("agent");
        std::fs::create_dir_all(&cwd).expect("mkdir");
        std::fs::create_dir_all(&agent).expect("mkdir");
        Dirs {
            _root: root,
            cwd,
            agent,
        }
    }

    fn load(d: &Dirs, system: Option<&str>, append: Option<&str>) -> (Option<String>, Vec<String>) {
        let mut diagnostics = Vec::new();
        let out =
            load_system_prompt_files(&d.cwd, true, &d.agent, system, append, &mut diagnostics);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        out
    }

    #[test]
    fn project_files_win_over_agent_dir_files() {
        let d = dirs();
        assert_eq!(load(&d, None, None), (None, vec![]));
        write(&d.agent.join("SYSTEM.md"), "agent system");
        write(&d.agent.join("APPEND_SYSTEM.md"), "agent append");
        assert_eq!(
            load(&d, None, None),
            (Some("agent system".into()), vec!["agent append".into()])
        );
        write(&d.cwd.join(".pi/SYSTEM.md"), "project system");
        assert_eq!(
            load(&d, None, None),
            (Some("project system".into()), vec!["agent append".into()])
        );
        write(&d.cwd.join(".pi/APPEND_SYSTEM.md"), "project append");
        assert_eq!(
            load(&d, None, None),
            (Some("project system".into()), vec!["project append".into()])
        );
    }

    #[test]
    fn overrides_are_text_or_a_file_and_beat_the_files() {
        let d = dirs();
        write(&d.cwd.join(".pi/SYSTEM.md"), "project system");
        write(&d.cwd.join(".pi/APPEND_SYSTEM.md"), "project append");
        write(&d.cwd.join("prompts/mine.md"), "from a file");
        assert_eq!(
            load(&d, Some("Be brief."), Some("prompts/mine.md")),
            (Some("Be brief.".into()), vec!["from a file".into()])
        );
        let absolute = d.cwd.join("prompts/mine.md");
        assert_eq!(
            load(&d, absolute.to_str(), Some("")),
            (Some("from a file".into()), vec![])
        );
    }

    #[test]
    fn an_unreadable_file_is_a_warning() {
        let d = dirs();
        std::fs::create_dir_all(d.cwd.join(".pi/SYSTEM.md")).expect("mkdir");
        let mut diagnostics = Vec::new();
        let out = load_system_prompt_files(&d.cwd, true, &d.agent, None, None, &mut diagnostics);
        assert_eq!(out, (None, vec![]));
        assert_eq!(
            diagnostics[0].path.as_deref(),
            Some(d.cwd.join(".pi/SYSTEM.md").as_path())
        );
        assert!(diagnostics[0]
            .message
            .starts_with("could not read system prompt file: "));
    }
}
