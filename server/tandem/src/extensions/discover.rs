//! Which extensions a session loads, found as pi finds them: `-e PATH` for this run, the agent
//! directory's `extensions/`, the settings' `extensions` lists, and — only in a trusted folder —
//! the project's `.pi/extensions/` and project settings; then the extensions of packages
//! ([`discover_with`], found by `crate::packages`). A directory is an extension when it holds
//! `index.ts` / `index.js` or a `package.json` naming its entry points (`pi.extensions`).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where an extension came from (the protocol's `scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `-e` on the command line.
    Cli,
    /// The agent directory or the user's settings.
    User,
    /// The project (trusted folders only).
    Project,
}

impl Scope {
    /// The protocol's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Cli => "cli",
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Who runs an extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// Tandem's Node host (TypeScript and JavaScript modules).
    Node,
    /// The file itself: an executable that speaks the protocol.
    Executable,
}

/// One extension to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its entry file.
    pub path: PathBuf,
    /// Where it came from.
    pub scope: Scope,
    /// Who runs it.
    pub runner: Runner,
}

/// What to look through.
pub struct Sources<'a> {
    /// `-e` paths, relative to `cwd`.
    pub cli: &'a [String],
    /// `--no-extensions`: only `-e` paths load.
    pub no_discovery: bool,
    /// pi's agent directory.
    pub agent_dir: &'a Path,
    /// The working directory.
    pub cwd: &'a Path,
    /// Whether the folder is trusted (its `.pi/extensions/` and settings count).
    pub trusted: bool,
    /// The user's settings' `extensions`.
    pub user_settings: &'a [String],
    /// The project settings' `extensions` (already empty for an untrusted folder).
    pub project_settings: &'a [String],
}

/// The extensions to load in load order, and a problem line for each path that is not one.
pub fn discover(sources: &Sources<'_>) -> (Vec<Found>, Vec<String>) {
    discover_with(sources, &[])
}

/// [`discover`] with the extension entry points of packages (`crate::packages`): those of `-e`
/// packages ([`Scope::Cli`]) load right after the `-e` paths, the configured packages'
/// (project, then user) after everything else, as pi loads package resources last; without
/// discovery only the `-e` ones load.
pub fn discover_with(
    sources: &Sources<'_>,
    packages: &[(PathBuf, Scope)],
) -> (Vec<Found>, Vec<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let mut add =
        |path: &Path, scope: Scope, named: bool, found: &mut Vec<Found>| match entries(path) {
            Ok(list) => {
                for path in list {
                    let canonical = std::fs::canonicalize(&path).unwrap_or(path);
                    if found.iter().any(|f: &Found| f.path == canonical) {
                        continue;
                    }
                    match runner(&canonical) {
                        Some(runner) => found.push(Found {
                            path: canonical,
                            scope,
                            runner,
                        }),
                        None if named => problems.push(format!(
                            "Extension {} was not loaded: it is neither a TypeScript or \
                             JavaScript module nor an executable file.",
                            canonical.display()
                        )),
                        None => {}
                    }
                }
            }
            Err(why) if named => problems.push(why),
            Err(_) => {}
        };
    for path in sources.cli {
        add(
            &sources.cwd.join(expand_home(path)),
            Scope::Cli,
            true,
            &mut found,
        );
    }
    for (path, scope) in packages.iter().filter(|(_, s)| *s == Scope::Cli) {
        add(path, *scope, true, &mut found);
    }
    if !sources.no_discovery {
        for path in in_directory(&sources.agent_dir.join("extensions")) {
            add(&path, Scope::User, false, &mut found);
        }
        for path in sources.user_settings {
            add(
                &sources.agent_dir.join(expand_home(path)),
                Scope::User,
                true,
                &mut found,
            );
        }
        if sources.trusted {
            let dir = sources.cwd.join(".pi");
            for path in in_directory(&dir.join("extensions")) {
                add(&path, Scope::Project, false, &mut found);
            }
            for path in sources.project_settings {
                add(
                    &dir.join(expand_home(path)),
                    Scope::Project,
                    true,
                    &mut found,
                );
            }
        }
        for (path, scope) in packages.iter().filter(|(_, s)| *s != Scope::Cli) {
            if *scope == Scope::User || sources.trusted {
                add(path, *scope, true, &mut found);
            }
        }
    }
    (found, problems)
}

/// `~/…` as a path under the home directory.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The candidates one level down in a discovery directory, sorted by name.
fn in_directory(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with('.') && (p.is_dir() || is_module(p))
        })
        .collect();
    paths.sort();
    paths
}

/// The entry files of `path`: the file itself, or a directory's entry points.
fn entries(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("Extension {} was not loaded: {e}.", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let manifest = path.join("package.json");
    if let Ok(text) = std::fs::read_to_string(&manifest) {
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            if let Some(list) = value.pointer("/pi/extensions").and_then(Value::as_array) {
                let listed: Vec<PathBuf> = list
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|p| path.join(p))
                    .collect();
                if !listed.is_empty() {
                    return Ok(listed);
                }
            }
        }
    }
    for index in ["index.ts", "index.js", "index.mts", "index.mjs"] {
        if path.join(index).is_file() {
            return Ok(vec![path.join(index)]);
        }
    }
    Err(format!(
        "Extension directory {} was not loaded: it has no index.ts or index.js and no \
         package.json listing \"pi\": {{\"extensions\": [...]}}.",
        path.display()
    ))
}

fn is_module(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("ts" | "mts" | "cts" | "js" | "mjs" | "cjs")
    )
}

fn runner(path: &Path) -> Option<Runner> {
    if is_module(path) {
        return Some(Runner::Node);
    }
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(Runner::Executable)
}

#[cfg(test)]
#[path = "discover_tests.rs"]
mod tests;
