//! Turning a tool's path argument into a checked absolute path.
//!
//! Like pi: a leading `@` (how users mention files) is stripped, unusual Unicode spaces become
//! plain spaces, `~` is the home directory, relative paths are relative to the working
//! directory. Unlike pi, Tandem knows where the workspace ends:
//!
//! - A path holding a NUL byte or another control character is refused, never cut short or
//!   passed on (no file system stores such a name, and a cut one names another file).
//! - Symlinks are resolved component by component ([`real_path`]), the way the operating system
//!   will when the file is opened — following a link even when its target does not exist yet,
//!   so a dangling link that points outside the workspace is outside, and a new file behind it
//!   lands where the link says.
//! - A path whose real location is outside every root is flagged for the caller to ask about,
//!   and a write to a file that makes tools run code ([`protected_reason`]) always asks.
//!
//! What was approved is checked again right before writing ([`verify_target`]), and the disk
//! write itself follows no symlink at all (`workspace::nofollow`).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// What the tool will do with the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read it.
    Read,
    /// Create or change it.
    Write,
}

/// A resolved path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute and normalized (no `.` or `..`), symlinks not resolved: what the user named.
    pub absolute: PathBuf,
    /// With every symlink resolved, dangling ones included: where it really is.
    pub real: PathBuf,
    /// True when `real` is inside a workspace root.
    pub inside: bool,
}

/// Why a path argument cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path holds a character no file name may hold here.
    #[error(
        "The path {shown} contains {what} at character {at}, which no file name may contain; \
         the path was not used. Give the file's real name."
    )]
    InvalidCharacter {
        /// The path with control characters escaped.
        shown: String,
        /// `a NUL byte`, `a control character (U+001B)`.
        what: String,
        /// 1-based character position.
        at: usize,
    },
    /// Symlinks that point at each other.
    #[error("The path {0} has too many levels of symbolic links (a loop?); it was not used.")]
    LinkLoop(String),
    /// The empty string.
    #[error("The path is empty; give a file or directory name.")]
    Empty,
}

fn normalize_spaces(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

/// Refuses NUL and other control characters (C0, DEL, C1): names no tool should create, and
/// that some layers would cut at (a C string ends at NUL).
pub fn check_characters(raw: &str) -> Result<(), PathError> {
    let bad = raw.chars().enumerate().find(|(_, c)| c.is_control());
    match bad {
        None if raw.is_empty() => Err(PathError::Empty),
        None => Ok(()),
        Some((index, c)) => Err(PathError::InvalidCharacter {
            shown: format!("{raw:?}"),
            what: if c == '\0' {
                "a NUL byte".to_string()
            } else {
                format!("a control character (U+{:04X})", u32::from(c))
            },
            at: index + 1,
        }),
    }
}

/// `@` stripped, spaces normalized, `~` expanded.
pub fn expand(raw: &str) -> PathBuf {
    let s = normalize_spaces(raw.strip_prefix('@').unwrap_or(raw));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (s.as_str(), home) {
        ("~", Some(home)) => home,
        (rest, Some(home)) if rest.starts_with("~/") => home.join(&rest[2..]),
        _ => PathBuf::from(s),
    }
}

/// Removes `.` and resolves `..` lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// How many symlinks one path may go through (Linux's limit).
const MAX_LINKS: usize = 40;

/// Where `path` (absolute) really is: every symlink on the way resolved, as the operating
/// system resolves it on open — including a final or intermediate link whose target does not
/// exist yet. Components after the first missing one are kept as they are (nothing below a
/// missing directory can be a link). A component that cannot be inspected (no permission) is
/// kept as it is.
pub fn real_path(path: &Path) -> Result<PathBuf, PathError> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            other => pending.push_back(other.as_os_str().to_os_string()),
        }
    }
    let mut links = 0;
    let mut missing = false;
    while let Some(part) = pending.pop_front() {
        if part == "." {
            continue;
        }
        if part == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&part);
        if missing {
            out = candidate;
            continue;
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(PathError::LinkLoop(path.display().to_string()));
                }
                let Ok(target) = std::fs::read_link(&candidate) else {
                    out = candidate;
                    continue;
                };
                if target.is_absolute() {
                    out = PathBuf::new();
                }
                for component in target.components().rev() {
                    match component {
                        Component::Prefix(_) | Component::RootDir => {
                            out.push(component.as_os_str())
                        }
                        other => pending.push_front(other.as_os_str().to_os_string()),
                    }
                }
            }
            Ok(_) => out = candidate,
            Err(e) => {
                missing = e.kind() == std::io::ErrorKind::NotFound;
                out = candidate;
            }
        }
    }
    Ok(out)
}

/// Resolves `raw` against `cwd` and checks it against `roots` (which must be real paths).
pub fn resolve(raw: &str, cwd: &Path, roots: &[PathBuf]) -> Result<ResolvedPath, PathError> {
    check_characters(raw)?;
    let expanded = expand(raw);
    let absolute = normalize(&if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    });
    let real = real_path(&absolute)?;
    let inside = roots.iter().any(|root| real.starts_with(root));
    Ok(ResolvedPath {
        absolute,
        real,
        inside,
    })
}

/// Directories whose files make tools run code or shape the agent, and what writing there
/// risks. Matched on any component of the path inside its root (a `/`-separated entry on that
/// many consecutive components), case-insensitively (a case-insensitive file system treats
/// `.GIT` as `.git`).
const PROTECTED_DIRS: &[(&str, &str)] = &[
    (
        ".git",
        "files under .git/ control git: hooks and settings such as core.fsmonitor run commands \
         the next time git (or an editor's git integration) runs",
    ),
    (
        ".pi",
        "files under .pi/ configure pi and Tandem: MCP servers, shell settings, skills and \
         system prompts that take effect in the next session",
    ),
    (
        ".agents",
        "files under .agents/ are skills the next agent session loads",
    ),
    (
        ".tandem",
        "files under .tandem/ configure Tandem for the next session",
    ),
    (
        ".vscode",
        "files under .vscode/ configure the editor: tasks, launch configurations and settings \
         can run commands when the folder is opened",
    ),
    (
        ".zed",
        "files under .zed/ configure the Zed editor: tasks and language-server commands",
    ),
    (
        ".helix",
        "files under .helix/ configure Helix: language servers it starts",
    ),
    (
        ".idea",
        "files under .idea/ configure JetBrains IDEs: run configurations and tools",
    ),
    (
        ".devcontainer",
        "files under .devcontainer/ say what runs when the project is opened in a container",
    ),
    (
        ".husky",
        "files under .husky/ are git hooks run on commit and push",
    ),
    (
        ".claude",
        "files under .claude/ configure Claude Code: hooks and MCP servers",
    ),
    (
        ".cursor",
        "files under .cursor/ configure Cursor: rules and MCP servers",
    ),
    (
        ".gemini",
        "files under .gemini/ configure Gemini CLI: MCP servers and commands it runs",
    ),
    (
        ".cargo",
        "files under .cargo/ configure cargo: runners, linkers and aliases run on the next \
         build, test or run",
    ),
    (
        ".mise",
        "files under .mise/ are mise tasks and hooks run when a shell enters the folder",
    ),
    (
        ".github/workflows",
        "files under .github/workflows/ are CI jobs that run with the repository's secrets \
         once pushed",
    ),
];

/// Single files that run code when a tool or editor meets them.
const PROTECTED_FILES: &[(&str, &str)] = &[
    (
        ".envrc",
        ".envrc is run by direnv whenever a shell enters the folder",
    ),
    (
        ".nvim.lua",
        ".nvim.lua is run by Neovim (with 'exrc') when it starts in the folder",
    ),
    (
        ".nvimrc",
        ".nvimrc is run by Neovim (with 'exrc') when it starts in the folder",
    ),
    (
        ".exrc",
        ".exrc is run by Vim and Neovim (with 'exrc') when they start in the folder",
    ),
    (
        ".mcp.json",
        ".mcp.json lists MCP servers other agents start in the folder",
    ),
    (
        ".gitmodules",
        ".gitmodules says which repositories git fetches and checks out",
    ),
    (
        ".pre-commit-config.yaml",
        ".pre-commit-config.yaml says which programs run on every commit",
    ),
    (
        "mise.toml",
        "mise.toml sets environment, hooks and tasks mise runs when a shell enters the folder",
    ),
    (
        ".mise.toml",
        ".mise.toml sets environment, hooks and tasks mise runs when a shell enters the folder",
    ),
    (
        "mise.local.toml",
        "mise.local.toml sets environment, hooks and tasks mise runs when a shell enters the \
         folder",
    ),
    (
        ".npmrc",
        ".npmrc configures npm: script-shell, node-options and registries used by the next npm \
         command",
    ),
    (
        ".yarnrc",
        ".yarnrc configures yarn: the yarn binary and registries used by the next yarn command",
    ),
    (
        ".yarnrc.yml",
        ".yarnrc.yml configures yarn: yarnPath names a script the next yarn command runs",
    ),
    (
        ".pnpmfile.cjs",
        ".pnpmfile.cjs is code pnpm runs on every install",
    ),
    (
        "bunfig.toml",
        "bunfig.toml configures bun: preload scripts run by the next bun command",
    ),
    (
        ".gitlab-ci.yml",
        ".gitlab-ci.yml is CI jobs that run with the repository's secrets once pushed",
    ),
];

/// Why writing `real` (a resolved path) needs the user's consent whatever the edit mode: it is
/// in a directory or is a file that makes tools run code ([`PROTECTED_DIRS`],
/// [`PROTECTED_FILES`]). `None` for ordinary files. Only the part inside a root is looked at, so
/// a workspace that itself lives under a `.git` or `.pi` directory is not all protected.
pub fn protected_reason(real: &Path, roots: &[PathBuf]) -> Option<&'static str> {
    let inside = roots
        .iter()
        .filter_map(|root| real.strip_prefix(root).ok())
        .min_by_key(|rel| rel.components().count())
        .unwrap_or(real);
    let names: Vec<String> = inside
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().to_lowercase()),
            _ => None,
        })
        .collect();
    // The name itself counts too: a `.git` *file* points git at another directory.
    for (dir, why) in PROTECTED_DIRS {
        let parts: Vec<&str> = dir.split('/').collect();
        if names
            .windows(parts.len())
            .any(|window| window.iter().zip(&parts).all(|(name, part)| name == part))
        {
            return Some(why);
        }
    }
    let last = names.last()?;
    PROTECTED_FILES
        .iter()
        .find(|(file, _)| file == last)
        .map(|(_, why)| *why)
}

/// Checks that `absolute` still resolves to `approved` (the real path the user and the tool
/// agreed on), right before writing: a directory swapped for a symlink, or a link created or
/// retargeted meanwhile, makes it fail instead of writing elsewhere.
pub fn verify_target(absolute: &Path, approved: &Path) -> Result<(), String> {
    match real_path(absolute) {
        Ok(now) if now == approved => Ok(()),
        Ok(now) => Err(format!(
            "{} changed while the change was being confirmed: it now leads to {} instead of {}; \
             nothing was written",
            absolute.display(),
            now.display(),
            approved.display()
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// `path` relative to `cwd` when inside it (POSIX separators), else absolute.
pub fn display(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;
