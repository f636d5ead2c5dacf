//! Turning a tool's path argument into a checked absolute path.
//!
//! Like pi: a leading `@` (how users mention files) is stripped, unusual Unicode spaces become
//! plain spaces, `~` is the home directory, relative paths are relative to the working
//! directory. Unlike pi, Tandem knows where the workspace ends: the path is normalized, its
//! symlinks are resolved (for the part that exists), and a path whose real location is outside
//! every root is flagged so the caller can ask the user.

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
    /// With symlinks resolved as far as the path exists: where it really is.
    pub real: PathBuf,
    /// True when `real` is inside a workspace root.
    pub inside: bool,
}

fn normalize_spaces(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
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

/// Resolves symlinks of the longest existing prefix of `path`, keeping the rest as is.
pub fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Resolves `raw` against `cwd` and checks it against `roots` (which must be real paths).
pub fn resolve(raw: &str, cwd: &Path, roots: &[PathBuf]) -> ResolvedPath {
    let expanded = expand(raw);
    let absolute = normalize(&if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    });
    let real = real_path(&absolute);
    let inside = roots.iter().any(|root| real.starts_with(root));
    ResolvedPath {
        absolute,
        real,
        inside,
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
mod tests {
    use super::*;

    #[test]
    fn at_prefix_tilde_dots_and_unicode_spaces() {
        let cwd = Path::new("/work/project");
        let roots = vec![PathBuf::from("/work/project")];
        let r = resolve("@src/./lib/../main.rs", cwd, &roots);
        assert_eq!(r.absolute, PathBuf::from("/work/project/src/main.rs"));
        assert!(r.inside);
        let r = resolve("../other/x.txt", cwd, &roots);
        assert_eq!(r.absolute, PathBuf::from("/work/other/x.txt"));
        assert!(!r.inside);
        assert_eq!(expand("a\u{202F}b"), PathBuf::from("a b"));
        if let Some(home) = std::env::var_os("HOME") {
            assert_eq!(expand("~/x"), PathBuf::from(home).join("x"));
        }
    }

    #[test]
    fn symlinks_that_escape_are_outside() {
        let root = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let root_real = std::fs::canonicalize(root.path()).expect("canon");
        std::os::unix::fs::symlink(outside.path(), root_real.join("link")).expect("symlink");
        let roots = vec![root_real.clone()];
        let r = resolve("link/secret.txt", &root_real, &roots);
        assert!(!r.inside, "{r:?}");
        assert!(r
            .real
            .starts_with(std::fs::canonicalize(outside.path()).expect("canon")));
        let r = resolve("new/dir/file.txt", &root_real, &roots);
        assert!(r.inside);
        assert_eq!(display(&r.absolute, &root_real), "new/dir/file.txt");
    }
}
