//! Context files: standing instructions (`AGENTS.md`, or `CLAUDE.md` where there is no
//! `AGENTS.md`) that go into the system prompt.
//!
//! pi's order: the agent directory's file first (the user's instructions for every project),
//! then one file per directory from the filesystem root down to the working directory, so the
//! most specific instructions come last, closest to the conversation. A file is listed once
//! even when the agent directory is itself on that path.

use std::path::{Path, PathBuf};

use super::{Diagnostics, ResourceDiagnostic};

/// The names looked for in each directory, preferred first.
pub const CONTEXT_FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// One context file and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its contents, as written.
    pub content: String,
}

/// The context files for `cwd`, in prompt order. Unreadable files are skipped with a warning
/// (and the next name in that directory is tried, as pi does). Blocking.
pub fn load_context_files(
    agent_dir: &Path,
    cwd: &Path,
    diagnostics: &mut Diagnostics,
) -> Vec<ContextFile> {
    let mut files = Vec::new();
    if let Some(global) = from_dir(agent_dir, diagnostics) {
        files.push(global);
    }
    let mut ancestors = Vec::new();
    for dir in cwd.ancestors() {
        if let Some(file) = from_dir(dir, diagnostics) {
            if !files.iter().any(|f: &ContextFile| f.path == file.path) {
                ancestors.push(file);
            }
        }
    }
    // `ancestors()` walks up from cwd; the prompt wants the root first.
    files.extend(ancestors.into_iter().rev());
    files
}

/// The preferred context file of one directory, if any can be read.
fn from_dir(dir: &Path, diagnostics: &mut Diagnostics) -> Option<ContextFile> {
    for name in CONTEXT_FILE_NAMES {
        let path = dir.join(name);
        if !path.exists() {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(content) => return Some(ContextFile { path, content }),
            Err(e) => diagnostics.push(ResourceDiagnostic::warning(
                format!("could not read context file: {e}"),
                &path,
            )),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn agent_dir_first_then_root_down_to_cwd_agents_md_preferred() {
        let root = tempfile::tempdir().expect("temp dir");
        let base = root.path();
        let agent = base.join("agent");
        let cwd = base.join("a/b/c");
        std::fs::create_dir_all(&cwd).expect("mkdir");
        write(&agent.join("CLAUDE.md"), "global");
        write(&base.join("a/AGENTS.md"), "a agents");
        write(&base.join("a/CLAUDE.md"), "a claude (not used)");
        write(&base.join("a/b/CLAUDE.md"), "b claude");
        write(&cwd.join("AGENTS.md"), "c agents");
        let mut diagnostics = Vec::new();
        let files = load_context_files(&agent, &cwd, &mut diagnostics);
        // Only files under the temp dir: the machine's own root is not ours to control.
        let got: Vec<(PathBuf, &str)> = files
            .iter()
            .filter(|f| f.path.starts_with(base))
            .map(|f| (f.path.clone(), f.content.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (agent.join("CLAUDE.md"), "global"),
                (base.join("a/AGENTS.md"), "a agents"),
                (base.join("a/b/CLAUDE.md"), "b claude"),
                (cwd.join("AGENTS.md"), "c agents"),
            ]
        );
        assert!(diagnostics.is_empty());
    }

    #[test]
    fn agent_dir_on_the_path_is_listed_once() {
        let root = tempfile::tempdir().expect("temp dir");
        let cwd = root.path().join("work");
        write(&cwd.join("AGENTS.md"), "both");
        let mut diagnostics = Vec::new();
        let files = load_context_files(&cwd, &cwd, &mut diagnostics);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, cwd.join("AGENTS.md"));
    }

    #[test]
    fn unreadable_agents_md_falls_back_to_claude_md_with_a_warning() {
        let root = tempfile::tempdir().expect("temp dir");
        let cwd = root.path().join("p");
        // A directory named AGENTS.md exists but cannot be read as a file.
        std::fs::create_dir_all(cwd.join("AGENTS.md")).expect("mkdir");
        write(&cwd.join("CLAUDE.md"), "fallback");
        let agent = root.path().join("agent");
        let mut diagnostics = Vec::new();
        let files = load_context_files(&agent, &cwd, &mut diagnostics);
        assert_eq!(files.last().map(|f| f.content.as_str()), Some("fallback"));
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(
            diagnostics[0].path.as_deref(),
            Some(cwd.join("AGENTS.md").as_path())
        );
        assert!(diagnostics[0]
            .message
            .starts_with("could not read context file: "));
    }
}
