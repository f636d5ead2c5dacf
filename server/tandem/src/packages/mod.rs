//! pi 1.6's packages: extensions, skills and prompt templates bundled as one unit, installed
//! from npm or git or used from a local path, and named in settings.json's `packages` list
//! (strings, or `{"source": …, "extensions": [...], "skills": [...], "prompts": [...]}` objects
//! that narrow what loads).
//!
//! The layout is pi's, so that a package installed by either is used by both:
//!
//! - npm packages go under `<agentDir>/npm/` (the project's `.pi/npm/`), an npm project of its
//!   own (`package.json` `{"name": "pi-extensions", "private": true}`, a `.gitignore` ignoring
//!   it all), installed with `npm install SPEC --prefix ROOT --legacy-peer-deps --no-audit
//!   --no-fund` (settings.json's `npmCommand`, an argv list, replaces `npm`); the package is
//!   `ROOT/node_modules/NAME`.
//! - git packages are cloned to `<agentDir>/git/HOST/PATH` (the project's `.pi/git/…`), their
//!   ref checked out when one is given, and their runtime dependencies installed when their
//!   package.json lists any.
//! - `-e npm:…` / `-e git:…` for one run install under `<agentDir>/tmp/extensions/` in
//!   directories named by a hash, as pi names them.
//! - local paths are used where they are; relative ones resolve from the settings file's
//!   directory (the agent directory, or the project's `.pi/`).
//!
//! A package is identified by its npm name, its repository without the ref, or its absolute
//! path: one identity is installed and loaded once, the project's entry winning over the
//! user's. What a package holds is found by [`resources`]; the settings file is edited by
//! [`settings_file`] (only the `packages` value changes).
//!
//! Sessions call [`for_session`]: configured packages that are missing are installed then (as
//! pi does at startup), and one that cannot be is reported and skipped, never fatal. The
//! project's packages count only in a trusted folder. `tandem install` and its siblings
//! (`crate::cli::packages`) use [`Packages`].

mod commands;
pub mod resources;
pub mod settings_file;
pub mod source;

use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tandem_coding::settings::{LoadedSettings, Settings, SettingsPaths};

pub use commands::Runner;
pub use resources::{Contents, Filter};
pub use source::{identity, resolve_local, GitSource, NpmSource, Source};

use crate::extensions::Scope as ExtensionScope;

/// Where a package is configured and installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The agent directory's settings; installed under the agent directory.
    User,
    /// The project's `.pi/settings.json`; installed under `.pi/`.
    Project,
    /// `-e` for one run; installed under `<agentDir>/tmp/extensions/`.
    Temporary,
}

/// A `packages` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configured {
    /// The source as written.
    pub source: String,
    /// The entry's filters, when it is an object.
    pub filter: Option<Filter>,
    /// Which settings file it is in.
    pub scope: Scope,
}

/// The packages of one agent directory and working directory.
#[derive(Debug, Clone)]
pub struct Packages {
    agent_dir: PathBuf,
    cwd: PathBuf,
    runner: Runner,
}

/// Whether pi's offline mode is on (`PI_OFFLINE` = 1, true or yes): nothing is installed or
/// updated by itself.
pub fn offline() -> bool {
    std::env::var("PI_OFFLINE")
        .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
        .unwrap_or(false)
}

/// settings.json's `npmCommand`, when it is a list of strings.
pub fn npm_command(settings: &Settings) -> Option<Vec<String>> {
    let list = settings.extra.get("npmCommand")?.as_array()?;
    list.iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()
        .filter(|l| !l.is_empty())
}

/// The entries of a `packages` list, each with its filters; `problems` hears the ones that are
/// neither a string nor an object with a `source`.
pub fn entries(
    list: &[Value],
    scope: Scope,
    file: &Path,
    problems: &mut Vec<String>,
) -> Vec<Configured> {
    let mut out = Vec::new();
    for (index, item) in list.iter().enumerate() {
        match item {
            Value::String(source) => out.push(Configured {
                source: source.clone(),
                filter: None,
                scope,
            }),
            Value::Object(map) => match map.get("source").and_then(Value::as_str) {
                Some(source) => {
                    if map.get("autoload") == Some(&Value::Bool(false)) {
                        problems.push(format!(
                            "{}: packages[{index}] ({source}) has \"autoload\": false, which \
                             Tandem does not support; it loads as an ordinary entry",
                            file.display()
                        ));
                    }
                    out.push(Configured {
                        source: source.to_string(),
                        filter: Some(Filter::from_entry(map)),
                        scope,
                    })
                }
                None => problems.push(format!(
                    "{}: packages[{index}] has no \"source\"; it was skipped",
                    file.display()
                )),
            },
            other => problems.push(format!(
                "{}: packages[{index}] is {other}, not a source or an object with \"source\"; \
                 it was skipped",
                file.display()
            )),
        }
    }
    out
}

impl Packages {
    /// Packages for `agent_dir` seen from `cwd`; `npm_command` replaces `npm`;
    /// `non_interactive`: git and ssh may not prompt (no terminal to answer).
    pub fn new(
        agent_dir: &Path,
        cwd: &Path,
        npm_command: Option<Vec<String>>,
        non_interactive: bool,
    ) -> Packages {
        Packages {
            agent_dir: agent_dir.to_path_buf(),
            cwd: cwd.to_path_buf(),
            runner: Runner {
                npm: npm_command.unwrap_or_else(|| vec!["npm".to_string()]),
                non_interactive,
            },
        }
    }

    /// The settings file of `scope` (the user's for [`Scope::Temporary`]).
    pub fn settings_path(&self, scope: Scope) -> PathBuf {
        let paths = SettingsPaths::new(&self.agent_dir, &self.cwd);
        match scope {
            Scope::Project => paths.project,
            Scope::User | Scope::Temporary => paths.global,
        }
    }

    /// What relative local sources of `scope` resolve from.
    pub fn base_dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.agent_dir.clone(),
            Scope::Project => self.cwd.join(".pi"),
            Scope::Temporary => self.cwd.clone(),
        }
    }

    /// The npm project packages of `scope` are installed into.
    fn npm_root(&self, scope: Scope) -> Result<PathBuf, String> {
        match scope {
            Scope::User => Ok(self.agent_dir.join("npm")),
            Scope::Project => Ok(self.cwd.join(".pi").join("npm")),
            Scope::Temporary => self.temp_dir("npm", None, None),
        }
    }

    fn git_root(&self, scope: Scope) -> Option<PathBuf> {
        match scope {
            Scope::User => Some(self.agent_dir.join("git")),
            Scope::Project => Some(self.cwd.join(".pi").join("git")),
            Scope::Temporary => None,
        }
    }

    /// pi's directory for one-run installs: `tmp/extensions/PREFIX/HASH/SUFFIX`, the hash
    /// over the prefix, the suffix and the ref.
    fn temp_dir(
        &self,
        prefix: &str,
        suffix: Option<&str>,
        git_ref: Option<&str>,
    ) -> Result<PathBuf, String> {
        let root = self.agent_dir.join("tmp").join("extensions");
        let key = format!(
            "{prefix}-{}{}",
            suffix.unwrap_or(""),
            git_ref.map(|r| format!("@{r}")).unwrap_or_default()
        );
        let digest = Sha256::digest(key.as_bytes());
        let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let under = root.join(prefix);
        inside(&under, &under.join(hash).join(suffix.unwrap_or("")))
    }

    /// Where `source` is (or would be) installed for `scope`: an npm package's directory, a
    /// clone, or a local path.
    pub fn install_dir(&self, source: &Source, scope: Scope) -> Result<PathBuf, String> {
        match source {
            Source::Npm(npm) => inside(
                &self.npm_root(scope)?.join("node_modules"),
                &self.npm_root(scope)?.join("node_modules").join(&npm.name),
            ),
            Source::Git(git) => match self.git_root(scope) {
                Some(root) => inside(&root, &root.join(&git.host).join(&git.path)),
                None => self.temp_dir(
                    &format!("git-{}", git.host),
                    Some(&git.path),
                    git.git_ref.as_deref(),
                ),
            },
            Source::Local { path } => Ok(resolve_local(path, &self.base_dir(scope))),
        }
    }

    /// Where a configured `source` of `scope` is, when it is there.
    pub fn installed_dir(&self, source: &str, scope: Scope) -> Option<PathBuf> {
        self.install_dir(&Source::parse(source), scope)
            .ok()
            .filter(|p| p.exists())
    }

    /// Installs `source` for `scope` (nothing to install for a local path, which must exist;
    /// relative ones are taken from the working directory).
    pub fn install(&self, source: &str, scope: Scope) -> Result<(), String> {
        match Source::parse(source) {
            Source::Npm(npm) => self.install_npm(&npm, scope),
            Source::Git(git) => self.install_git(&git, scope),
            Source::Local { path } => {
                let resolved = resolve_local(&path, &self.cwd);
                if resolved.exists() {
                    Ok(())
                } else {
                    Err(format!("{} does not exist", resolved.display()))
                }
            }
        }
    }

    /// Removes what installing `source` for `scope` put on disk (nothing for a local path).
    pub fn uninstall(&self, source: &str, scope: Scope) -> Result<(), String> {
        match Source::parse(source) {
            Source::Npm(npm) => {
                let root = self.npm_root(scope)?;
                if !root.exists() {
                    return Ok(());
                }
                let real = std::fs::canonicalize(&root).unwrap_or(root);
                let args = self.runner.npm_uninstall_args(&npm.name, &real);
                self.runner.npm(&args, None).map(drop)
            }
            Source::Git(git) => {
                let dir = self.install_dir(&Source::Git(git), scope)?;
                if dir.exists() {
                    std::fs::remove_dir_all(&dir)
                        .map_err(|e| format!("could not remove {}: {e}", dir.display()))?;
                }
                if let Some(root) = self.git_root(scope) {
                    prune_empty_parents(&dir, &root);
                }
                Ok(())
            }
            Source::Local { .. } => Ok(()),
        }
    }

    /// Brings an installed `source` up to date: an npm package not pinned to one version to
    /// its newest release (or the range's), a clone to its ref or its branch's head. Returns
    /// `from -> to` when something changed.
    pub fn update(&self, source: &str, scope: Scope) -> Result<Option<String>, String> {
        match Source::parse(source) {
            Source::Npm(npm) => {
                let dir = self.install_dir(&Source::Npm(npm.clone()), scope)?;
                let before = installed_version(&dir);
                if npm.pinned && before.is_some() {
                    return Ok(None);
                }
                let spec = match &npm.version {
                    Some(_) => npm.spec.clone(),
                    None => format!("{}@latest", npm.name),
                };
                self.install_npm(
                    &NpmSource {
                        spec,
                        ..npm.clone()
                    },
                    scope,
                )?;
                let after = installed_version(&dir);
                Ok((before != after).then(|| {
                    format!(
                        "{} -> {}",
                        before.as_deref().unwrap_or("(none)"),
                        after.as_deref().unwrap_or("(none)")
                    )
                }))
            }
            Source::Git(git) => {
                let dir = self.install_dir(&Source::Git(git.clone()), scope)?;
                let before = self.head(&dir);
                self.update_git(&git, scope)?;
                let after = self.head(&dir);
                let short = |h: &Option<String>| {
                    h.as_deref()
                        .map(|h| h.chars().take(7).collect())
                        .unwrap_or_else(|| "(none)".to_string())
                };
                Ok((before != after).then(|| format!("{} -> {}", short(&before), short(&after))))
            }
            Source::Local { .. } => Ok(None),
        }
    }

    fn install_npm(&self, npm: &NpmSource, scope: Scope) -> Result<(), String> {
        let root = self.npm_root(scope)?;
        if scope == Scope::Temporary {
            make_temp_root(&self.agent_dir)?;
        }
        ensure_npm_project(&root)?;
        // npm writes broken lock-file paths when --prefix goes through a symlink.
        let real = std::fs::canonicalize(&root).unwrap_or(root);
        let args = self.runner.npm_install_args(&npm.spec, &real);
        self.runner.npm(&args, None)?;
        let dir = real.join("node_modules").join(&npm.name);
        if dir.exists() {
            Ok(())
        } else {
            Err(format!(
                "the package manager finished, but {} is not there",
                dir.display()
            ))
        }
    }

    fn install_git(&self, git: &GitSource, scope: Scope) -> Result<(), String> {
        let dir = self.install_dir(&Source::Git(git.clone()), scope)?;
        if dir.exists() {
            return self.update_git(git, scope);
        }
        let root = self.git_root(scope);
        if let Some(root) = &root {
            ensure_gitignore(root)?;
        } else {
            make_temp_root(&self.agent_dir)?;
        }
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("could not create {}: {e}", parent.display()))?;
        }
        let result = (|| {
            let target = dir.display().to_string();
            self.runner.git(&["clone", &git.repo, &target], None)?;
            if let Some(git_ref) = &git.git_ref {
                self.runner.git(&["checkout", git_ref], Some(&dir))?;
            }
            self.install_dependencies(&dir)
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&dir);
            if let Some(root) = &root {
                prune_empty_parents(&dir, root);
            }
            return Err(e);
        }
        Ok(())
    }

    fn update_git(&self, git: &GitSource, scope: Scope) -> Result<(), String> {
        let dir = self.install_dir(&Source::Git(git.clone()), scope)?;
        if !dir.exists() {
            return self.install_git(git, scope);
        }
        let (fetch, target): (Vec<String>, String) = match &git.git_ref {
            Some(git_ref) => (
                vec!["fetch".into(), "origin".into(), git_ref.clone()],
                "FETCH_HEAD".into(),
            ),
            None => self.branch_target(&dir),
        };
        let fetch: Vec<&str> = fetch.iter().map(String::as_str).collect();
        self.runner.git(&fetch, Some(&dir))?;
        let commit = format!("{target}^{{commit}}");
        let head = self.runner.git(&["rev-parse", "HEAD"], Some(&dir))?;
        let wanted = self.runner.git(&["rev-parse", &commit], Some(&dir))?;
        if head.trim() == wanted.trim() {
            return self.install_missing_dependencies(&dir);
        }
        self.runner.git(&["reset", "--hard", &commit], Some(&dir))?;
        self.runner.git(&["clean", "-fdx"], Some(&dir))?;
        self.install_dependencies(&dir)
    }

    /// What to fetch and reset to for a clone without a ref: its upstream branch, else the
    /// remote's default branch.
    fn branch_target(&self, dir: &Path) -> (Vec<String>, String) {
        let fetch = |branch: &str| {
            vec![
                "fetch".to_string(),
                "--prune".into(),
                "--no-tags".into(),
                "origin".into(),
                format!("+refs/heads/{branch}:refs/remotes/origin/{branch}"),
            ]
        };
        if let Ok(upstream) = self
            .runner
            .git(&["rev-parse", "--abbrev-ref", "@{upstream}"], Some(dir))
        {
            if let Some(branch) = upstream
                .trim()
                .strip_prefix("origin/")
                .filter(|b| !b.is_empty())
            {
                return (fetch(branch), "@{upstream}".to_string());
            }
        }
        let _ = self
            .runner
            .git(&["remote", "set-head", "origin", "-a"], Some(dir));
        let head = self
            .runner
            .git(&["symbolic-ref", "refs/remotes/origin/HEAD"], Some(dir))
            .unwrap_or_default();
        match head.trim().strip_prefix("refs/remotes/origin/") {
            Some(branch) if !branch.is_empty() => (fetch(branch), "origin/HEAD".to_string()),
            _ => (
                vec![
                    "fetch".into(),
                    "--prune".into(),
                    "--no-tags".into(),
                    "origin".into(),
                    "+HEAD:refs/remotes/origin/HEAD".into(),
                ],
                "origin/HEAD".to_string(),
            ),
        }
    }

    fn head(&self, dir: &Path) -> Option<String> {
        if !dir.exists() {
            return None;
        }
        self.runner.git(&["rev-parse", "HEAD"], Some(dir)).ok()
    }

    /// A clone's runtime dependencies, when its package.json lists any.
    fn install_dependencies(&self, dir: &Path) -> Result<(), String> {
        if dependencies(dir).is_empty() {
            return Ok(());
        }
        self.runner
            .npm(&self.runner.dependency_args(), Some(dir))
            .map(drop)
    }

    fn install_missing_dependencies(&self, dir: &Path) -> Result<(), String> {
        let modules = dir.join("node_modules");
        if dependencies(dir)
            .iter()
            .any(|name| !modules.join(name).exists())
        {
            return self.install_dependencies(dir);
        }
        Ok(())
    }

    /// The entries of `scope`'s settings file (read from disk; for the commands).
    pub fn configured(&self, scope: Scope) -> Result<Vec<Configured>, String> {
        let path = self.settings_path(scope);
        let list = settings_file::read(&path)?;
        let mut ignored = Vec::new();
        Ok(entries(&list, scope, &path, &mut ignored))
    }

    /// `source` as it is written into `scope`'s settings: a local path relative to the
    /// settings file's directory, anything else as given.
    pub fn settings_source(&self, source: &str, scope: Scope) -> String {
        match Source::parse(source) {
            Source::Local { path } => {
                let resolved = resolve_local(&path, &self.cwd);
                let rel = relative(&self.base_dir(scope), &resolved);
                if rel.as_os_str().is_empty() {
                    ".".to_string()
                } else {
                    rel.display().to_string()
                }
            }
            _ => source.to_string(),
        }
    }

    /// Adds `source` to `scope`'s settings, or updates the entry of the same package (keeping
    /// its filters). Returns whether the file changed.
    pub fn add_to_settings(&self, source: &str, scope: Scope) -> Result<bool, String> {
        let path = self.settings_path(scope);
        let mut list = settings_file::read(&path)?;
        let written = self.settings_source(source, scope);
        let wanted = identity(source, &self.cwd);
        let base = self.base_dir(scope);
        let found = list
            .iter()
            .position(|entry| entry_source(entry).is_some_and(|s| identity(s, &base) == wanted));
        match found {
            Some(index) => {
                if entry_source(&list[index]) == Some(written.as_str()) {
                    return Ok(false);
                }
                match &mut list[index] {
                    Value::Object(map) => {
                        map.insert("source".to_string(), Value::String(written));
                    }
                    other => *other = Value::String(written),
                }
            }
            None => list.push(Value::String(written)),
        }
        settings_file::write(&path, &list)?;
        Ok(true)
    }

    /// Removes every entry of `source`'s package from `scope`'s settings. Returns whether one
    /// was there.
    pub fn remove_from_settings(&self, source: &str, scope: Scope) -> Result<bool, String> {
        let path = self.settings_path(scope);
        let list = settings_file::read(&path)?;
        let wanted = identity(source, &self.cwd);
        let base = self.base_dir(scope);
        let kept: Vec<Value> = list
            .iter()
            .filter(|entry| entry_source(entry).is_none_or(|s| identity(s, &base) != wanted))
            .cloned()
            .collect();
        if kept.len() == list.len() {
            return Ok(false);
        }
        settings_file::write(&path, &kept)?;
        Ok(true)
    }

    /// Whether `input` names `entry` (same package), the entry being of `scope`.
    pub fn same_package(&self, entry: &str, scope: Scope, input: &str) -> bool {
        identity(entry, &self.base_dir(scope)) == identity(input, &self.cwd)
    }

    /// An entry among `configured` that `input` probably meant (an npm name without `npm:`, a
    /// git path without `git:`).
    pub fn suggestion<'a>(&self, input: &str, configured: &'a [Configured]) -> Option<&'a str> {
        let input = input.trim();
        configured
            .iter()
            .map(|c| c.source.as_str())
            .find(|source| match Source::parse(source) {
                Source::Npm(npm) => input == npm.name || input == npm.spec,
                Source::Git(git) => {
                    let short = format!("{}/{}", git.host, git.path);
                    input == short
                        || git
                            .git_ref
                            .as_ref()
                            .is_some_and(|r| input == format!("{short}@{r}"))
                }
                Source::Local { .. } => false,
            })
    }
}

/// The source of a `packages` entry.
fn entry_source(entry: &Value) -> Option<&str> {
    match entry {
        Value::String(s) => Some(s),
        Value::Object(map) => map.get("source").and_then(Value::as_str),
        _ => None,
    }
}

/// `path` when it stays under `root` (a source cannot climb out of its install directory).
fn inside(root: &Path, path: &Path) -> Result<PathBuf, String> {
    let (root, path) = (
        tandem_coding::paths::normalize(root),
        tandem_coding::paths::normalize(path),
    );
    if path.starts_with(&root) {
        Ok(path)
    } else {
        Err(format!(
            "refusing to use {} (outside the package directory {})",
            path.display(),
            root.display()
        ))
    }
}

/// `to` relative to `from` (both absolute and normalized).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let (from, to) = (
        tandem_coding::paths::normalize(from),
        tandem_coding::paths::normalize(to),
    );
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to[common..] {
        out.push(part.as_os_str());
    }
    out
}

/// An npm install root: the directory, a `.gitignore` ignoring it all, and the package.json
/// pi writes.
fn ensure_npm_project(root: &Path) -> Result<(), String> {
    ensure_gitignore(root)?;
    let manifest = root.join("package.json");
    if !manifest.exists() {
        std::fs::write(
            &manifest,
            "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}",
        )
        .map_err(|e| format!("could not write {}: {e}", manifest.display()))?;
    }
    Ok(())
}

fn ensure_gitignore(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(&ignore, "*\n!.gitignore\n")
            .map_err(|e| format!("could not write {}: {e}", ignore.display()))?;
    }
    Ok(())
}

/// `<agentDir>/tmp/extensions`, readable by its owner only (as pi makes it).
fn make_temp_root(agent_dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = agent_dir.join("tmp").join("extensions");
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("could not restrict {}: {e}", dir.display()))
}

/// Removes the empty directories between a removed clone and its install root.
fn prune_empty_parents(dir: &Path, root: &Path) {
    let mut current = dir.parent();
    while let Some(parent) = current {
        if !parent.starts_with(root) || parent == root {
            break;
        }
        if std::fs::remove_dir(parent).is_err() && parent.exists() {
            break;
        }
        current = parent.parent();
    }
}

/// The `dependencies` a package.json names.
fn dependencies(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')) else {
        return Vec::new();
    };
    value
        .get("dependencies")
        .and_then(Value::as_object)
        .map(|deps| {
            deps.keys()
                .filter(|name| !name.split('/').any(|p| p == ".." || p.is_empty()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The `version` of an installed package's package.json.
fn installed_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    value.get("version")?.as_str().map(str::to_string)
}

/// What a session's packages give it.
#[derive(Debug, Default)]
pub struct SessionPackages {
    /// The `-e` entries that are plain paths, for the extension discovery as they were given.
    pub cli_paths: Vec<String>,
    /// Packages' extension entry points in load order (`-e` packages first, then the project's
    /// and the user's configured packages), with the scope they load in.
    pub extensions: Vec<(PathBuf, ExtensionScope)>,
    /// Packages' skill files.
    pub skills: Vec<PathBuf>,
    /// Packages' prompt-template files.
    pub prompts: Vec<PathBuf>,
    /// Packages that were not loaded, and why (one line each).
    pub problems: Vec<String>,
}

impl SessionPackages {
    fn add(&mut self, contents: Contents, scope: ExtensionScope) {
        let extensions = contents.extensions.into_iter().map(|p| (p, scope));
        self.extensions.extend(extensions);
        self.skills.extend(contents.skills);
        self.prompts.extend(contents.prompts);
    }
}

/// What [`for_session`] looks at.
pub struct SessionRequest<'a> {
    /// pi's agent directory.
    pub agent_dir: &'a Path,
    /// The working directory.
    pub cwd: &'a Path,
    /// The session's settings (the project's are read only when `trusted`).
    pub settings: &'a LoadedSettings,
    /// Whether the folder is trusted: its packages count.
    pub trusted: bool,
    /// `-e` arguments.
    pub cli: &'a [String],
    /// Install what is missing (a session starting); otherwise what is not installed is
    /// silently left out.
    pub install: bool,
}

/// The packages of a session: `-e` package sources (installed for this run), then the
/// project's packages (trusted folders only) and the user's, each identity once. Missing ones
/// are installed when `request.install` is set (not in offline mode); one that cannot be is
/// reported in [`SessionPackages::problems`] and skipped. Blocking (may run npm and git).
pub fn for_session(request: &SessionRequest<'_>) -> SessionPackages {
    let settings = request.settings;
    let npm = npm_command(&settings.merged);
    let packages = Packages::new(request.agent_dir, request.cwd, npm, true);
    let mut out = SessionPackages::default();
    for raw in request.cli {
        let source = Source::parse(raw);
        if let Source::Local { path } = &source {
            // A directory holding packaged resources loads as a package; a plain extension
            // directory, a file, or a path that is not there goes to the extension discovery
            // as given (which says what is wrong with it).
            match packaged(&resolve_local(path, request.cwd)) {
                Some(contents) => out.add(contents, ExtensionScope::Cli),
                None => out.cli_paths.push(raw.clone()),
            }
            continue;
        }
        match ensure(&packages, raw, &source, Scope::Temporary, request.install) {
            Ok(Some(dir)) => out.add(resources::contents(&dir, None), ExtensionScope::Cli),
            Ok(None) => {}
            Err(why) => out.problems.push(format!("-e {raw} was not loaded: {why}")),
        }
    }
    let paths = SettingsPaths::new(request.agent_dir, request.cwd);
    let mut configured = Vec::new();
    let list = |s: &Settings| {
        s.extra
            .get("packages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if request.trusted {
        configured.extend(entries(
            &list(&settings.project),
            Scope::Project,
            &paths.project,
            &mut out.problems,
        ));
    }
    configured.extend(entries(
        &list(&settings.global),
        Scope::User,
        &paths.global,
        &mut out.problems,
    ));
    let mut seen = std::collections::HashSet::new();
    for entry in configured {
        if !seen.insert(identity(&entry.source, &packages.base_dir(entry.scope))) {
            continue;
        }
        let scope = match entry.scope {
            Scope::Project => ExtensionScope::Project,
            _ => ExtensionScope::User,
        };
        let source = Source::parse(&entry.source);
        if let Source::Local { path } = &source {
            let resolved = resolve_local(path, &packages.base_dir(entry.scope));
            if resolved.is_file() {
                out.extensions.push((resolved, scope));
            } else if resolved.is_dir() {
                out.add(resources::contents(&resolved, entry.filter.as_ref()), scope);
            } else if request.install {
                out.problems.push(format!(
                    "Package {} ({}) was not loaded: {} does not exist",
                    entry.source,
                    packages.settings_path(entry.scope).display(),
                    resolved.display()
                ));
            }
            continue;
        }
        match ensure(
            &packages,
            &entry.source,
            &source,
            entry.scope,
            request.install,
        ) {
            Ok(Some(dir)) => out.add(resources::contents(&dir, entry.filter.as_ref()), scope),
            Ok(None) => {}
            Err(why) => out.problems.push(format!(
                "Package {} ({}) was skipped: {why}",
                entry.source,
                packages.settings_path(entry.scope).display()
            )),
        }
    }
    out
}

/// What the directory `dir` holds as a package: `None` for anything else (a file, a path that
/// is not there, a plain extension directory, a package whose manifest names nothing there).
fn packaged(dir: &Path) -> Option<Contents> {
    if !dir.is_dir() {
        return None;
    }
    let contents = resources::contents(dir, None);
    let plain = contents.extensions == [dir.to_path_buf()];
    let empty =
        contents.extensions.is_empty() && contents.skills.is_empty() && contents.prompts.is_empty();
    (!plain && !empty).then_some(contents)
}

/// Whether packages could add extensions to a session with these settings and `-e`
/// arguments (before anything is installed): a `-e` npm or git source, a `-e` directory
/// holding packaged extensions, or a configured package.
pub fn could_add_extensions(settings: &LoadedSettings, cwd: &Path, cli: &[String]) -> bool {
    let configured = |s: &Settings| {
        s.extra
            .get("packages")
            .and_then(Value::as_array)
            .is_some_and(|l| !l.is_empty())
    };
    configured(&settings.global)
        || configured(&settings.project)
        || cli.iter().any(|raw| match Source::parse(raw) {
            Source::Local { path } => {
                packaged(&resolve_local(&path, cwd)).is_some_and(|c| !c.extensions.is_empty())
            }
            _ => true,
        })
}

/// [`for_session`] for a session starting, on a blocking thread: missing packages are
/// installed.
pub async fn resolve_for_session(
    agent_dir: &Path,
    cwd: &Path,
    settings: &LoadedSettings,
    trusted: bool,
    cli: &[String],
) -> SessionPackages {
    let (agent_dir, cwd, settings, given) = (
        agent_dir.to_path_buf(),
        cwd.to_path_buf(),
        settings.clone(),
        cli.to_vec(),
    );
    let task = tokio::task::spawn_blocking(move || {
        for_session(&SessionRequest {
            agent_dir: &agent_dir,
            cwd: &cwd,
            settings: &settings,
            trusted,
            cli: &given,
            install: true,
        })
    });
    task.await.unwrap_or_else(|e| SessionPackages {
        cli_paths: cli.to_vec(),
        problems: vec![format!("the packages could not be looked at: {e}")],
        ..SessionPackages::default()
    })
}

/// The directory of an npm or git `source`, installing it first when it is missing and
/// `install` is set; `None` when it is missing and may not be installed now.
fn ensure(
    packages: &Packages,
    raw: &str,
    source: &Source,
    scope: Scope,
    install: bool,
) -> Result<Option<PathBuf>, String> {
    let dir = packages.install_dir(source, scope)?;
    if dir.exists() {
        return Ok(Some(dir));
    }
    if !install {
        return Ok(None);
    }
    if offline() {
        return Err("it is not installed, and offline mode (PI_OFFLINE) is on".to_string());
    }
    tracing::info!(target: "tandem::packages", "installing {raw}");
    packages.install(raw, scope).map_err(|e| {
        format!("it could not be installed (Tandem tries again at the next start): {e}")
    })?;
    Ok(Some(dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn local_sources_are_written_relative_to_their_settings_file() {
        let p = Packages::new(
            Path::new("/home/u/.pi/agent"),
            Path::new("/work/proj"),
            None,
            true,
        );
        assert_eq!(
            p.settings_source("./pkg", Scope::User),
            "../../../../work/proj/pkg"
        );
        assert_eq!(p.settings_source("./pkg", Scope::Project), "../pkg");
        assert_eq!(p.settings_source(".", Scope::Project), "..");
        assert_eq!(p.settings_source("npm:x@1", Scope::User), "npm:x@1");
    }

    #[test]
    fn install_dirs_follow_pis_layout() {
        let p = Packages::new(Path::new("/a"), Path::new("/w"), None, true);
        let dir = |s: &str, scope| p.install_dir(&Source::parse(s), scope).expect("dir");
        assert_eq!(
            dir("npm:@s/x@1", Scope::User),
            Path::new("/a/npm/node_modules/@s/x")
        );
        assert_eq!(
            dir("npm:x", Scope::Project),
            Path::new("/w/.pi/npm/node_modules/x")
        );
        assert_eq!(
            dir("git:github.com/u/r@v1", Scope::User),
            Path::new("/a/git/github.com/u/r")
        );
        // pi's temporary directories: sha256("npm-") and sha256("git-github.com-u/r@v1").
        assert_eq!(
            dir("npm:x", Scope::Temporary),
            Path::new("/a/tmp/extensions/npm/f35b2129/node_modules/x")
        );
        assert_eq!(
            dir("git:github.com/u/r@v1", Scope::Temporary),
            Path::new("/a/tmp/extensions/git-github.com/8dd28ea3/u/r")
        );
    }

    #[test]
    fn entries_read_strings_and_objects_and_report_the_rest() {
        let mut problems = Vec::new();
        let list = [
            json!("npm:a"),
            json!({"source": "./b", "skills": []}),
            json!(3),
            json!({}),
        ];
        let got = entries(&list, Scope::User, Path::new("s.json"), &mut problems);
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[1].filter.as_ref().and_then(|f| f.skills.clone()),
            Some(vec![])
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
    }
}
