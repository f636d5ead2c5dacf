//! What a package holds, found as pi 1.6 finds it: the `pi` key of its package.json
//! (`extensions`, `skills`, `prompts`, `themes`: paths or globs relative to the package root,
//! `!`/`+`/`-` entries choosing among them), else the conventional directories `extensions/`,
//! `skills/`, `prompts/` and `themes/`. A settings entry's filters (`{"source": …, "skills":
//! []}`) then narrow what loads; they never add what the package does not declare.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;
use tandem_coding::resources::discovery::{markdown_files_recursive, skill_files};

/// The resource kinds Tandem loads (pi's themes are for its terminal interface).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Extension entry points.
    Extensions,
    /// Skill files.
    Skills,
    /// Prompt templates.
    Prompts,
}

impl Kind {
    /// The key in package.json's `pi` object and in a settings filter.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Extensions => "extensions",
            Kind::Skills => "skills",
            Kind::Prompts => "prompts",
        }
    }

    const ALL: [Kind; 3] = [Kind::Extensions, Kind::Skills, Kind::Prompts];
}

/// A settings entry's filters: `None` for a kind loads everything the package declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `extensions` patterns.
    pub extensions: Option<Vec<String>>,
    /// `skills` patterns.
    pub skills: Option<Vec<String>>,
    /// `prompts` patterns.
    pub prompts: Option<Vec<String>>,
}

impl Filter {
    /// The filters of a settings entry object (`{"source": …, "skills": [...]}`).
    pub fn from_entry(entry: &serde_json::Map<String, Value>) -> Filter {
        let list = |key: &str| {
            entry.get(key).and_then(Value::as_array).map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
        };
        Filter {
            extensions: list("extensions"),
            skills: list("skills"),
            prompts: list("prompts"),
        }
    }

    fn get(&self, kind: Kind) -> Option<&[String]> {
        match kind {
            Kind::Extensions => self.extensions.as_deref(),
            Kind::Skills => self.skills.as_deref(),
            Kind::Prompts => self.prompts.as_deref(),
        }
    }
}

/// What loads from one package.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contents {
    /// Extension entry files (or directories the extension discovery resolves).
    pub extensions: Vec<PathBuf>,
    /// Skill files.
    pub skills: Vec<PathBuf>,
    /// Prompt-template files.
    pub prompts: Vec<PathBuf>,
}

impl Contents {
    fn list(&mut self, kind: Kind) -> &mut Vec<PathBuf> {
        match kind {
            Kind::Extensions => &mut self.extensions,
            Kind::Skills => &mut self.skills,
            Kind::Prompts => &mut self.prompts,
        }
    }
}

/// The resources of the package at `root` that `filter` lets through. A directory that
/// declares nothing (no `pi` resource key, no conventional directory) is one extension itself
/// (its `index.ts`), as in pi.
pub fn contents(root: &Path, filter: Option<&Filter>) -> Contents {
    let manifest = manifest(root);
    let declares = manifest.as_ref().is_some_and(|m| {
        ["extensions", "skills", "prompts", "themes"]
            .iter()
            .any(|k| m.get(*k).is_some())
    });
    let conventional = ["extensions", "skills", "prompts", "themes"]
        .iter()
        .any(|d| root.join(d).exists());
    let mut out = Contents::default();
    if filter.is_none() && !declares && !conventional {
        out.extensions.push(root.to_path_buf());
        return out;
    }
    for kind in Kind::ALL {
        let declared = declared(root, manifest.as_ref(), kind, filter.is_none() && declares);
        let chosen = match filter.and_then(|f| f.get(kind)) {
            None => declared,
            Some([]) => Vec::new(),
            Some(patterns) => {
                let keep = select(&declared, patterns, root);
                declared.into_iter().filter(|f| keep.contains(f)).collect()
            }
        };
        *out.list(kind) = chosen;
    }
    out
}

/// The package.json's `pi` object, keeping only string arrays.
fn manifest(root: &Path) -> Option<serde_json::Map<String, Value>> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let pi = value.get("pi")?.as_object()?;
    Some(
        pi.iter()
            .filter(|(_, v)| {
                v.as_array()
                    .is_some_and(|items| items.iter().all(Value::is_string))
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
}

/// Everything of `kind` the package declares: its manifest's entries (when the manifest
/// declares any kind, a kind it leaves out is empty — `strict`), else the kind's directory.
fn declared(
    root: &Path,
    manifest: Option<&serde_json::Map<String, Value>>,
    kind: Kind,
    strict: bool,
) -> Vec<PathBuf> {
    match strings(manifest.and_then(|m| m.get(kind.key()))) {
        Some(entries) => {
            let (patterns, sources): (Vec<String>, Vec<String>) = entries
                .into_iter()
                .partition(|e| e.starts_with(['!', '+', '-']));
            let mut files = Vec::new();
            for entry in &sources {
                if entry.contains(['*', '?']) {
                    for path in glob(root, entry) {
                        files.extend(collect(&path, kind));
                    }
                } else {
                    files.extend(collect(
                        &tandem_coding::paths::normalize(&root.join(entry)),
                        kind,
                    ));
                }
            }
            if patterns.is_empty() {
                return files;
            }
            let keep = select(&files, &patterns, root);
            files.into_iter().filter(|f| keep.contains(f)).collect()
        }
        None if strict => Vec::new(),
        None => {
            let dir = root.join(kind.key());
            if dir.is_dir() {
                in_directory(&dir, kind)
            } else {
                Vec::new()
            }
        }
    }
}

/// A file is itself; a directory is searched the way its kind's directory is.
fn collect(path: &Path, kind: Kind) -> Vec<PathBuf> {
    if path.is_file() {
        vec![path.to_path_buf()]
    } else if path.is_dir() {
        in_directory(path, kind)
    } else {
        Vec::new()
    }
}

fn in_directory(dir: &Path, kind: Kind) -> Vec<PathBuf> {
    match kind {
        Kind::Extensions => extension_entries(dir),
        Kind::Skills => skill_files(dir, true),
        Kind::Prompts => markdown_files_recursive(dir),
    }
}

/// A directory's extensions, as pi finds them in a package: the directory itself when it
/// names its entry points (package.json `pi.extensions`, `index.ts`, `index.js`), else its
/// `.ts` and `.js` files and the entry points of its subdirectories.
fn extension_entries(dir: &Path) -> Vec<PathBuf> {
    if let Some(entries) = entry_points(dir) {
        return entries;
    }
    let mut out = Vec::new();
    for path in visible_children(dir) {
        if path.is_dir() {
            out.extend(entry_points(&path).unwrap_or_default());
        } else if path.extension().is_some_and(|e| e == "ts" || e == "js") {
            out.push(path);
        }
    }
    out
}

fn entry_points(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Some(listed) = manifest(dir).and_then(|m| strings(m.get("extensions"))) {
        let found: Vec<PathBuf> = listed
            .iter()
            .map(|e| tandem_coding::paths::normalize(&dir.join(e)))
            .filter(|p| p.exists())
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.exists())
        .map(|p| vec![p])
}

/// A directory's entries, sorted, without dot files and `node_modules`.
fn visible_children(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name != "node_modules"
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The paths under `root` a manifest glob matches (`*` stays within one directory), sorted;
/// nothing under a dot directory, and `node_modules` only when the glob names it.
fn glob(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let pattern = pattern.trim_start_matches("./");
    let Some(matcher) = matcher(pattern) else {
        return Vec::new();
    };
    let into_modules = pattern.contains("node_modules");
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in read.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || (name == "node_modules" && !into_modules) {
                continue;
            }
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            if matcher.is_match(rel) {
                out.push(path.clone());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

fn matcher(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// Which of `files` a list of filter entries keeps (pi's rules): plain entries and globs
/// include (none: all), `!glob` excludes, `+path` adds back an exact path, `-path` removes one.
/// A glob is tried against the path relative to `root`, the file name and the absolute path,
/// and for a `SKILL.md` against its directory the same three ways.
pub fn select(files: &[PathBuf], entries: &[String], root: &Path) -> Vec<PathBuf> {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for entry in entries {
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
    let globs = |list: &[&str]| -> Vec<GlobMatcher> {
        list.iter()
            .filter_map(|p| matcher(p.trim_start_matches("./")))
            .collect()
    };
    let (includes, excludes) = (globs(&includes), globs(&excludes));
    let mut kept: Vec<PathBuf> = files
        .iter()
        .filter(|f| includes.is_empty() || matches_glob(f, &includes, root))
        .filter(|f| !matches_glob(f, &excludes, root))
        .cloned()
        .collect();
    for file in files {
        if !kept.contains(file) && matches_exact(file, &force_in, root) {
            kept.push(file.clone());
        }
    }
    kept.retain(|f| !matches_exact(f, &force_out, root));
    kept
}

/// The forms a pattern is tried against.
fn forms(file: &Path, root: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap_or(file);
    let mut out = vec![
        rel.to_string_lossy().into_owned(),
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        file.to_string_lossy().into_owned(),
    ];
    if file.file_name().is_some_and(|n| n == "SKILL.md") {
        if let Some(dir) = file.parent() {
            out.extend(forms(dir, root));
        }
    }
    out
}

fn matches_glob(file: &Path, globs: &[GlobMatcher], root: &Path) -> bool {
    let forms = forms(file, root);
    globs
        .iter()
        .any(|g| forms.iter().any(|f| g.is_match(f.as_str())))
}

fn matches_exact(file: &Path, entries: &[&str], root: &Path) -> bool {
    let rel = file.strip_prefix(root).unwrap_or(file);
    let dir_rel = (file.file_name().is_some_and(|n| n == "SKILL.md"))
        .then(|| file.parent())
        .flatten();
    entries.iter().any(|entry| {
        let entry = Path::new(entry.strip_prefix("./").unwrap_or(entry));
        entry == rel
            || entry == file
            || dir_rel.is_some_and(|d| entry == d || entry == d.strip_prefix(root).unwrap_or(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("write");
    }

    fn rel(root: &Path, list: &[PathBuf]) -> Vec<String> {
        list.iter()
            .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
            .collect()
    }

    #[test]
    fn conventional_directories_are_found_without_a_manifest() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        write(&root.join("package.json"), r#"{"name": "p"}"#);
        write(&root.join("extensions/a.ts"), "");
        write(&root.join("extensions/sub/index.ts"), "");
        write(&root.join("extensions/notes.md"), "");
        write(&root.join("skills/review/SKILL.md"), "");
        write(&root.join("prompts/deep/fix.md"), "");
        let c = contents(root, None);
        assert_eq!(
            rel(root, &c.extensions),
            ["extensions/a.ts", "extensions/sub/index.ts"]
        );
        assert_eq!(rel(root, &c.skills), ["skills/review/SKILL.md"]);
        assert_eq!(rel(root, &c.prompts), ["prompts/deep/fix.md"]);
    }

    #[test]
    fn a_manifest_replaces_the_conventions_and_its_globs_and_exclusions_apply() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        write(
            &root.join("package.json"),
            r#"{"pi": {"extensions": ["./src/*.ts", "!src/legacy.ts"], "prompts": ["./res/prompts"]}}"#,
        );
        write(&root.join("src/main.ts"), "");
        write(&root.join("src/legacy.ts"), "");
        write(&root.join("res/prompts/a.md"), "");
        write(&root.join("skills/s/SKILL.md"), "");
        let c = contents(root, None);
        assert_eq!(rel(root, &c.extensions), ["src/main.ts"]);
        assert_eq!(rel(root, &c.prompts), ["res/prompts/a.md"]);
        assert!(
            c.skills.is_empty(),
            "a manifest that omits skills declares none"
        );
    }

    #[test]
    fn settings_filters_narrow_what_loads() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        write(&root.join("extensions/a.ts"), "");
        write(&root.join("extensions/b.ts"), "");
        write(&root.join("skills/s/SKILL.md"), "");
        write(&root.join("prompts/one.md"), "");
        write(&root.join("prompts/two.md"), "");
        let filter = Filter {
            extensions: Some(vec!["extensions/*.ts".into(), "!b.ts".into()]),
            skills: Some(vec![]),
            prompts: Some(vec!["prompts/two.md".into()]),
        };
        let c = contents(root, Some(&filter));
        assert_eq!(rel(root, &c.extensions), ["extensions/a.ts"]);
        assert!(c.skills.is_empty());
        assert_eq!(rel(root, &c.prompts), ["prompts/two.md"]);
    }

    #[test]
    fn a_directory_declaring_nothing_is_one_extension() {
        let dir = tempfile::tempdir().expect("tmp");
        write(&dir.path().join("index.ts"), "");
        let c = contents(dir.path(), None);
        assert_eq!(c.extensions, [dir.path().to_path_buf()]);
    }
}
