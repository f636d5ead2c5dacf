//! Finding skill and prompt-template files on disk, with pi's rules: names starting with `.`
//! and `node_modules` are skipped, `.gitignore` / `.ignore` / `.fdignore` files inside the
//! scanned tree are honoured, symlinks are followed, and entries are visited in name order.
//!
//! Ignore files are matched with the `ignore` crate's gitignore matcher, one matcher per
//! directory, the deepest deciding first (as git does).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// The skill file name that makes a directory a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// Ignore rules of the directories entered so far.
#[derive(Clone, Default)]
struct IgnoreRules(Vec<Arc<Gitignore>>);

impl IgnoreRules {
    /// These rules plus those of `dir`'s own ignore files.
    fn entering(&self, dir: &Path) -> IgnoreRules {
        let mut builder = GitignoreBuilder::new(dir);
        let mut any = false;
        for name in IGNORE_FILES {
            let file = dir.join(name);
            if file.is_file() {
                // A malformed line is skipped; the rest of the file still applies.
                let _ = builder.add(file);
                any = true;
            }
        }
        let mut rules = self.clone();
        if let (true, Ok(matcher)) = (any, builder.build()) {
            rules.0.push(Arc::new(matcher));
        }
        rules
    }

    fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        for matcher in self.0.iter().rev() {
            match matcher.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

/// A directory entry with symlinks resolved.
struct Entry {
    name: String,
    path: PathBuf,
    is_dir: bool,
    is_file: bool,
}

/// The entries of `dir` in name order, following symlinks (broken ones are skipped).
fn entries(dir: &Path) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Entry> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let path = e.path();
            let meta = std::fs::metadata(&path).ok()?;
            Some(Entry {
                name: e.file_name().to_string_lossy().into_owned(),
                path,
                is_dir: meta.is_dir(),
                is_file: meta.is_file(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The skill files under `dir`: a directory holding `SKILL.md` is one skill (nothing below it
/// is looked at); other directories are searched recursively; and `.md` files directly in `dir`
/// are skills of their own when `root_files` is set. Blocking.
pub fn skill_files(dir: &Path, root_files: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect_skills(dir, root_files, &IgnoreRules::default(), &mut out);
    out
}

fn collect_skills(dir: &Path, root_files: bool, rules: &IgnoreRules, out: &mut Vec<PathBuf>) {
    if !dir.is_dir() {
        return;
    }
    let rules = rules.entering(dir);
    let entries = entries(dir);
    if let Some(skill) = entries
        .iter()
        .find(|e| e.name == SKILL_FILE && e.is_file && !rules.ignores(&e.path, false))
    {
        out.push(skill.path.clone());
        return;
    }
    for entry in entries {
        if entry.name.starts_with('.') || entry.name == "node_modules" {
            continue;
        }
        if rules.ignores(&entry.path, entry.is_dir) {
            continue;
        }
        if entry.is_dir {
            collect_skills(&entry.path, false, &rules, out);
        } else if entry.is_file && root_files && entry.name.ends_with(".md") {
            out.push(entry.path);
        }
    }
}

/// The `.md` files directly in `dir` (pi's auto-discovered prompt directories). Blocking.
pub fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return out;
    }
    let rules = IgnoreRules::default().entering(dir);
    for entry in entries(dir) {
        if entry.name.starts_with('.') || entry.name == "node_modules" {
            continue;
        }
        if entry.is_file && entry.name.ends_with(".md") && !rules.ignores(&entry.path, false) {
            out.push(entry.path);
        }
    }
    out
}

/// The `.md` files anywhere under `dir` (a prompt directory named in settings). Blocking.
pub fn markdown_files_recursive(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect_markdown(dir, &IgnoreRules::default(), &mut out);
    out
}

fn collect_markdown(dir: &Path, rules: &IgnoreRules, out: &mut Vec<PathBuf>) {
    if !dir.is_dir() {
        return;
    }
    let rules = rules.entering(dir);
    for entry in entries(dir) {
        if entry.name.starts_with('.') || entry.name == "node_modules" {
            continue;
        }
        if rules.ignores(&entry.path, entry.is_dir) {
            continue;
        }
        if entry.is_dir {
            collect_markdown(&entry.path, &rules, out);
        } else if entry.is_file && entry.name.ends_with(".md") {
            out.push(entry.path);
        }
    }
}

/// The nearest directory at or above `start` that holds `.git` (a directory or a worktree's
/// file).
pub fn git_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// `.agents/skills` in `cwd` and each parent up to the git root (or the filesystem root outside
/// a repository), nearest first.
pub fn ancestor_agents_skill_dirs(cwd: &Path) -> Vec<PathBuf> {
    let stop = git_root(cwd);
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if stop.as_deref() == Some(dir) {
            break;
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "x").expect("write");
    }

    #[test]
    fn skill_dirs_stop_at_skill_md_and_honour_ignores() {
        let root = tempfile::tempdir().expect("temp dir");
        let d = root.path();
        touch(&d.join("top.md"));
        touch(&d.join("notes.txt"));
        touch(&d.join("a/SKILL.md"));
        touch(&d.join("a/nested/SKILL.md"));
        touch(&d.join("a/EXTRA.md"));
        touch(&d.join("group/b/SKILL.md"));
        touch(&d.join("group/loose.md"));
        touch(&d.join(".hidden/SKILL.md"));
        touch(&d.join("node_modules/m/SKILL.md"));
        touch(&d.join("skipped/SKILL.md"));
        std::fs::write(d.join(".gitignore"), "skipped/\n").expect("write");
        let got: Vec<String> = skill_files(d, true)
            .iter()
            .map(|p| p.strip_prefix(d).expect("under").display().to_string())
            .collect();
        assert_eq!(got, vec!["a/SKILL.md", "group/b/SKILL.md", "top.md"]);
        let got = skill_files(d, false);
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn prompt_dirs_flat_or_recursive() {
        let root = tempfile::tempdir().expect("temp dir");
        let d = root.path();
        touch(&d.join("b.md"));
        touch(&d.join("a.md"));
        touch(&d.join("c.txt"));
        touch(&d.join("sub/d.md"));
        touch(&d.join("ignored.md"));
        std::fs::write(d.join(".ignore"), "ignored.md\n").expect("write");
        let names = |v: Vec<PathBuf>| -> Vec<String> {
            v.iter()
                .map(|p| p.strip_prefix(d).expect("under").display().to_string())
                .collect()
        };
        assert_eq!(names(markdown_files(d)), vec!["a.md", "b.md"]);
        assert_eq!(
            names(markdown_files_recursive(d)),
            vec!["a.md", "b.md", "sub/d.md"]
        );
    }

    #[test]
    fn agents_skill_dirs_stop_at_the_git_root() {
        let root = tempfile::tempdir().expect("temp dir");
        let repo = root.path().join("repo");
        let cwd = repo.join("x/y");
        std::fs::create_dir_all(&cwd).expect("mkdir");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        assert_eq!(git_root(&cwd).as_deref(), Some(repo.as_path()));
        assert_eq!(
            ancestor_agents_skill_dirs(&cwd),
            vec![
                cwd.join(".agents/skills"),
                repo.join("x/.agents/skills"),
                repo.join(".agents/skills"),
            ]
        );
    }
}
