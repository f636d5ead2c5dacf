//! The `skills` and `prompts` lists of settings.json: paths to load, and patterns choosing among
//! what was found (pi's rules).
//!
//! An entry is a pattern when it starts with `!` (exclude matches), `+` (force-include an exact
//! path), `-` (force-exclude an exact path), or holds `*` or `?` (include only matches); any
//! other entry is a file or directory to load, relative to the file's base directory (the agent
//! directory for the global file, `<cwd>/.pi` for the project's), with `~` for the home
//! directory. Discovered resources of the same scope obey the `!`, `+` and `-` entries.
//!
//! A pattern is tried against the path relative to the base directory, the file name and the
//! absolute path, and, for a `SKILL.md`, against its directory in the same three ways. Globs
//! use `globset` with `*` not crossing `/`.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use super::discovery::SKILL_FILE;

/// Whether `entry` selects rather than names a path.
pub fn is_pattern(entry: &str) -> bool {
    entry.starts_with(['!', '+', '-']) || entry.contains(['*', '?'])
}

/// `raw` as a path: trimmed, `~` expanded against `home`, relative ones joined to `base`.
pub fn resolve_entry(raw: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    let trimmed = raw.trim();
    let path = match (trimmed, home) {
        ("~", Some(home)) => home.to_path_buf(),
        (t, Some(home)) if t.starts_with('~') => {
            let rest = t[1..].trim_start_matches('/');
            home.join(rest)
        }
        (t, _) => PathBuf::from(t),
    };
    crate::paths::normalize(&base.join(path))
}

/// Which of `files` (found through plain entries) the patterns among `entries` keep.
pub fn apply_patterns(files: &[PathBuf], entries: &[String], base: &Path) -> HashSet<PathBuf> {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for entry in entries.iter().filter(|e| is_pattern(e)) {
        if let Some(p) = entry.strip_prefix('+') {
            force_in.push(p);
        } else if let Some(p) = entry.strip_prefix('-') {
            force_out.push(p);
        } else if let Some(p) = entry.strip_prefix('!') {
            excludes.push(p);
        } else {
            includes.push(entry.as_str());
        }
    }
    let includes = globs(&includes);
    let excludes = globs(&excludes);
    let mut kept: Vec<&PathBuf> = files
        .iter()
        .filter(|f| includes.is_empty() || matches_glob(f, &includes, base))
        .filter(|f| !matches_glob(f, &excludes, base))
        .collect();
    for file in files {
        if !kept.contains(&file) && matches_exact(file, &force_in, base) {
            kept.push(file);
        }
    }
    kept.into_iter()
        .filter(|f| !matches_exact(f, &force_out, base))
        .cloned()
        .collect()
}

/// Whether a discovered `file` stays enabled under the `!`, `+` and `-` entries.
pub fn enabled_by_overrides(file: &Path, entries: &[String], base: &Path) -> bool {
    let with = |prefix: char| -> Vec<&str> {
        entries
            .iter()
            .filter_map(|e| e.strip_prefix(prefix))
            .collect()
    };
    let excludes = globs(&with('!'));
    let mut enabled = !matches_glob(file, &excludes, base);
    if matches_exact(file, &with('+'), base) {
        enabled = true;
    }
    if matches_exact(file, &with('-'), base) {
        enabled = false;
    }
    enabled
}

fn globs(patterns: &[&str]) -> Vec<GlobMatcher> {
    patterns
        .iter()
        .filter_map(|p| {
            GlobBuilder::new(&p.replace('\\', "/"))
                .literal_separator(true)
                .build()
                .ok()
        })
        .map(|g| g.compile_matcher())
        .collect()
}

/// The strings a pattern is tried against.
fn candidates(file: &Path, base: &Path) -> Vec<String> {
    let mut out = forms(file, base);
    if file.file_name().and_then(|n| n.to_str()) == Some(SKILL_FILE) {
        if let Some(dir) = file.parent() {
            out.extend(forms(dir, base));
        }
    }
    out
}

fn forms(path: &Path, base: &Path) -> Vec<String> {
    let posix = |p: &Path| p.to_string_lossy().replace('\\', "/");
    vec![
        posix(&relative(base, path)),
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        posix(path),
    ]
}

fn matches_glob(file: &Path, globs: &[GlobMatcher], base: &Path) -> bool {
    if globs.is_empty() {
        return false;
    }
    let forms = candidates(file, base);
    globs.iter().any(|g| forms.iter().any(|f| g.is_match(f)))
}

/// Exact entries match the relative or absolute path of the file (or of a skill's directory);
/// a leading `./` is ignored.
fn matches_exact(file: &Path, entries: &[&str], base: &Path) -> bool {
    if entries.is_empty() {
        return false;
    }
    let mut forms = vec![
        relative(base, file).to_string_lossy().replace('\\', "/"),
        file.to_string_lossy().replace('\\', "/"),
    ];
    if file.file_name().and_then(|n| n.to_str()) == Some(SKILL_FILE) {
        if let Some(dir) = file.parent() {
            forms.push(relative(base, dir).to_string_lossy().replace('\\', "/"));
            forms.push(dir.to_string_lossy().replace('\\', "/"));
        }
    }
    entries.iter().any(|e| {
        let e = e.strip_prefix("./").unwrap_or(e).replace('\\', "/");
        forms.contains(&e)
    })
}

/// `path` relative to `base`, with `..` where needed (both absolute and normalized).
fn relative(base: &Path, path: &Path) -> PathBuf {
    let base: Vec<Component> = base.components().collect();
    let path_parts: Vec<Component> = path.components().collect();
    let common = base
        .iter()
        .zip(&path_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in common..base.len() {
        out.push("..");
    }
    for part in &path_parts[common..] {
        out.push(part.as_os_str());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn entries_resolve_against_base_and_home() {
        let home = Path::new("/home/u");
        let base = Path::new("/p/.pi");
        assert_eq!(
            resolve_entry(" skills/x ", base, Some(home)),
            PathBuf::from("/p/.pi/skills/x")
        );
        assert_eq!(
            resolve_entry("../s", base, Some(home)),
            PathBuf::from("/p/s")
        );
        assert_eq!(
            resolve_entry("~/s", base, Some(home)),
            PathBuf::from("/home/u/s")
        );
        assert_eq!(
            resolve_entry("~", base, Some(home)),
            PathBuf::from("/home/u")
        );
        assert_eq!(
            resolve_entry("/abs", base, Some(home)),
            PathBuf::from("/abs")
        );
        assert!(is_pattern("!x") && is_pattern("+x") && is_pattern("-x") && is_pattern("a/*.md"));
        assert!(!is_pattern("dir/file.md"));
    }

    #[test]
    fn patterns_include_exclude_and_force() {
        let base = Path::new("/a");
        let files: Vec<PathBuf> = [
            "/a/p/one.md",
            "/a/p/two.md",
            "/a/p/sub/three.md",
            "/a/s/k/SKILL.md",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let kept = |entries: &[&str]| {
            let set = apply_patterns(&files, &strings(entries), base);
            let mut v: Vec<String> = files
                .iter()
                .filter(|f| set.contains(*f))
                .map(|f| f.display().to_string())
                .collect();
            v.sort();
            v
        };
        assert_eq!(kept(&["p"]).len(), 4);
        assert_eq!(kept(&["p/*.md"]), vec!["/a/p/one.md", "/a/p/two.md"]);
        assert_eq!(kept(&["!two.md"]).len(), 3);
        assert_eq!(
            kept(&["!p/**", "+p/two.md"]),
            vec!["/a/p/two.md", "/a/s/k/SKILL.md"]
        );
        assert_eq!(kept(&["-s/k"]).len(), 3);
        assert_eq!(kept(&["!k"]).len(), 3);
        assert_eq!(kept(&["+./p/one.md", "-p/one.md"]).len(), 3);
    }

    #[test]
    fn overrides_for_discovered_files() {
        let base = Path::new("/agent");
        let skill = Path::new("/agent/skills/skip-skill/SKILL.md");
        assert!(enabled_by_overrides(skill, &strings(&["some/dir"]), base));
        assert!(!enabled_by_overrides(
            skill,
            &strings(&["-skills/skip-skill"]),
            base
        ));
        assert!(!enabled_by_overrides(skill, &strings(&["!skip-*"]), base));
        assert!(enabled_by_overrides(
            skill,
            &strings(&["!skip-*", "+skills/skip-skill"]),
            base
        ));
        let prompt = Path::new("/agent/prompts/skip.md");
        assert!(!enabled_by_overrides(
            prompt,
            &strings(&["-prompts/skip.md"]),
            base
        ));
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/c/d")),
            PathBuf::from("../c/d")
        );
    }
}
