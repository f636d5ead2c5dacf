//! Package sources as pi 1.6 writes them: `npm:NAME[@VERSION]`, git (`git:host/path[@ref]`,
//! `git:git@host:path`, `https://…`, `http://…`, `ssh://…`), anything else a local path. The
//! rules follow pi's so that a settings.json written by either reads the same in both: a
//! `git@host:path` without the `git:` prefix is a local path in pi, and so it is here.

use std::path::{Path, PathBuf};

/// One parsed source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An npm package.
    Npm(NpmSource),
    /// A git repository.
    Git(GitSource),
    /// A file or directory used where it is.
    Local {
        /// The path as written (`~`, `file://` and relative forms resolved later).
        path: String,
    },
}

/// `npm:SPEC`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmSource {
    /// What npm is given: `name`, `name@1.2.3`, `@scope/name@^2`.
    pub spec: String,
    /// The package name.
    pub name: String,
    /// The version or range after the name, when one is given.
    pub version: Option<String>,
    /// Whether the version is one exact version (never updated).
    pub pinned: bool,
}

/// A git repository and, optionally, the ref to check out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// What `git clone` is given.
    pub repo: String,
    /// The host (lower case, without port or user).
    pub host: String,
    /// The repository's path on the host, without `.git`: `user/repo`.
    pub path: String,
    /// The branch, tag or commit after `@`.
    pub git_ref: Option<String>,
}

impl Source {
    /// Parses `source` as pi does.
    pub fn parse(source: &str) -> Source {
        if let Some(spec) = source.strip_prefix("npm:") {
            return Source::Npm(NpmSource::parse(spec.trim()));
        }
        if is_local(source) {
            return Source::Local {
                path: source.to_string(),
            };
        }
        match parse_git(source) {
            Some(git) => Source::Git(git),
            None => Source::Local {
                path: source.to_string(),
            },
        }
    }

    /// Whether this source is installed (npm or git) rather than used in place.
    pub fn is_installed_kind(&self) -> bool {
        !matches!(self, Source::Local { .. })
    }
}

impl NpmSource {
    fn parse(spec: &str) -> NpmSource {
        // The name runs to the first `@` that does not open a scope.
        let split = spec
            .char_indices()
            .skip(1)
            .find(|(_, c)| *c == '@')
            .map(|(i, _)| i);
        let (name, version) = match split {
            Some(i) if i + 1 < spec.len() => {
                (spec[..i].to_string(), Some(spec[i + 1..].to_string()))
            }
            _ => (spec.to_string(), None),
        };
        let pinned = version.as_deref().is_some_and(is_exact_version);
        NpmSource {
            spec: spec.to_string(),
            name,
            version,
            pinned,
        }
    }
}

/// Whether `source` is a path (pi's rule: not one of the known non-path prefixes).
fn is_local(source: &str) -> bool {
    let trimmed = source.trim();
    ![
        "npm:", "git:", "github:", "http:", "https:", "ssh:", "builtin:",
    ]
    .iter()
    .any(|prefix| trimmed.starts_with(prefix))
}

/// One exact semantic version (`1.2.3`, `v1.2.3-beta.1+build`): what npm never updates.
fn is_exact_version(version: &str) -> bool {
    let v = version.trim();
    let v = v
        .strip_prefix('=')
        .or_else(|| v.strip_prefix('v'))
        .unwrap_or(v);
    let core_end = v.find(['-', '+']).unwrap_or(v.len());
    let parts: Vec<&str> = v[..core_end].split('.').collect();
    let numeric = |p: &&str| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit())
            && (p.len() == 1 || !p.starts_with('0'))
    };
    let suffix_ok = v[core_end..]
        .trim_start_matches(['-', '+'])
        .split(['.', '-', '+'])
        .all(|s| s.bytes().all(|b| b.is_ascii_alphanumeric()));
    parts.len() == 3 && parts.iter().all(numeric) && suffix_ok
}

/// A git source, or `None` when `source` is not one. Without `git:`, only URLs with a scheme
/// (`https`, `http`, `ssh`, `git`) count.
fn parse_git(source: &str) -> Option<GitSource> {
    let trimmed = source.trim();
    let (prefixed, url) = match trimmed.strip_prefix("git:") {
        Some(rest) => (true, rest.trim()),
        None => (false, trimmed),
    };
    if !prefixed && !has_scheme(url, &["https", "http", "ssh", "git"]) {
        return None;
    }
    let (repo, git_ref) = split_ref(url);
    let (repo, host, path) = if let Some((host, path)) = scp_like(&repo) {
        let (host, path) = (host.to_string(), path.to_string());
        (repo, host, path)
    } else if has_scheme(&repo, &["https", "http", "ssh", "git"]) {
        let url = Url::parse(&repo)?;
        (
            repo.clone(),
            url.host,
            url.path.trim_start_matches('/').to_string(),
        )
    } else {
        let (host, path) = repo.split_once('/')?;
        if !host.contains('.') && host != "localhost" {
            return None;
        }
        let (host, path) = (host.to_string(), path.to_string());
        (format!("https://{repo}"), host, path)
    };
    build(repo, host, path, git_ref)
}

fn has_scheme(url: &str, schemes: &[&str]) -> bool {
    schemes.iter().any(|s| {
        url.len() > s.len() + 3
            && url[..s.len()].eq_ignore_ascii_case(s)
            && url[s.len()..].starts_with("://")
    })
}

/// `git@host:path`: the host and the path.
fn scp_like(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("git@")?;
    let (host, path) = rest.split_once(':')?;
    (!host.is_empty() && !path.is_empty()).then_some((host, path))
}

/// The repository without its `@ref`, and the ref.
fn split_ref(url: &str) -> (String, Option<String>) {
    let split_path = |path: &str| -> Option<(String, String)> {
        let (repo, git_ref) = path.split_once('@')?;
        (!repo.is_empty() && !git_ref.is_empty()).then(|| (repo.to_string(), git_ref.to_string()))
    };
    if let Some((host, path)) = scp_like(url) {
        return match split_path(path) {
            Some((repo, git_ref)) => (format!("git@{host}:{repo}"), Some(git_ref)),
            None => (url.to_string(), None),
        };
    }
    if url.contains("://") {
        let Some(parsed) = Url::parse(url) else {
            return (url.to_string(), None);
        };
        return match split_path(parsed.path.trim_start_matches('/')) {
            Some((repo, git_ref)) => (
                format!("{}://{}/{}", parsed.scheme, parsed.authority, repo)
                    .trim_end_matches('/')
                    .to_string(),
                Some(git_ref),
            ),
            None => (url.to_string(), None),
        };
    }
    let Some((host, path)) = url.split_once('/') else {
        return (url.to_string(), None);
    };
    match split_path(path) {
        Some((repo, git_ref)) => (format!("{host}/{repo}"), Some(git_ref)),
        None => (url.to_string(), None),
    }
}

/// The checks pi makes before a repository becomes a directory under `git/`: a host and a
/// path of at least two parts, nothing that climbs out (`..`), no backslash or NUL.
fn build(repo: String, host: String, path: String, git_ref: Option<String>) -> Option<GitSource> {
    if path.starts_with('/') {
        return None;
    }
    let path = path.trim_start_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).to_string();
    if host.is_empty() || path.is_empty() || path.split('/').count() < 2 {
        return None;
    }
    if unsafe_part(&host, false) || unsafe_part(&path, true) {
        return None;
    }
    Some(GitSource {
        repo,
        host,
        path,
        git_ref,
    })
}

fn unsafe_part(value: &str, allow_slash: bool) -> bool {
    let Some(decoded) = percent_decode(value) else {
        return true;
    };
    [value, decoded.as_str()].iter().any(|candidate| {
        candidate.contains(['\0', '\\'])
            || candidate.starts_with('/')
            || (!allow_slash && candidate.contains('/'))
            || candidate.split('/').any(|part| part == "..")
    })
}

/// `%XX` escapes decoded; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The parts of a `scheme://[user@]host[:port]/path` URL this module needs.
struct Url {
    scheme: String,
    /// `[user@]host[:port]` as written.
    authority: String,
    /// The host, lower case.
    host: String,
    /// The path from its `/`, without query or fragment.
    path: String,
}

impl Url {
    fn parse(url: &str) -> Option<Url> {
        let (scheme, rest) = url.split_once("://")?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..end];
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = match host_port.strip_prefix('[') {
            Some(v6) => v6.split_once(']')?.0,
            None => host_port.split(':').next().unwrap_or(""),
        };
        if host.is_empty() {
            return None;
        }
        let tail = &rest[end..];
        let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
        Some(Url {
            scheme: scheme.to_ascii_lowercase(),
            authority: authority.to_string(),
            host: host.to_ascii_lowercase(),
            path: tail[..path_end].to_string(),
        })
    }
}

/// What makes two sources the same package: the npm name, the repository without its ref, or
/// the absolute path (local paths resolved against `base`).
pub fn identity(source: &str, base: &Path) -> String {
    match Source::parse(source) {
        Source::Npm(npm) => format!("npm:{}", npm.name),
        Source::Git(git) => format!("git:{}/{}", git.host, git.path),
        Source::Local { path } => format!("local:{}", resolve_local(&path, base).display()),
    }
}

/// A local source's path: trimmed, `~` and `file://` expanded, relative ones joined to `base`,
/// `.` and `..` resolved.
pub fn resolve_local(path: &str, base: &Path) -> PathBuf {
    let trimmed = path.trim();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let expanded = match (trimmed, &home) {
        ("~", Some(home)) => home.clone(),
        (t, Some(home)) if t.starts_with("~/") => home.join(&t[2..]),
        (t, _) => match t.strip_prefix("file://") {
            Some(rest) => PathBuf::from(percent_decode(rest).unwrap_or_else(|| rest.to_string())),
            None => PathBuf::from(t),
        },
    };
    tandem_coding::paths::normalize(&base.join(expanded))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(source: &str) -> GitSource {
        match Source::parse(source) {
            Source::Git(git) => git,
            other => panic!("{source}: {other:?}"),
        }
    }

    #[test]
    fn npm_specs_split_name_and_version() {
        let Source::Npm(npm) = Source::parse("npm:@scope/tools@^1.2") else {
            panic!("npm")
        };
        assert_eq!(npm.name, "@scope/tools");
        assert_eq!(npm.version.as_deref(), Some("^1.2"));
        assert!(!npm.pinned);
        let Source::Npm(npm) = Source::parse("npm:tools@1.2.3") else {
            panic!("npm")
        };
        assert_eq!((npm.name.as_str(), npm.pinned), ("tools", true));
        let Source::Npm(npm) = Source::parse("npm: tools") else {
            panic!("npm")
        };
        assert_eq!((npm.name.as_str(), npm.version), ("tools", None));
    }

    #[test]
    fn git_sources_in_every_form_pi_accepts() {
        let g = git("git:github.com/user/repo@v1");
        assert_eq!(g.repo, "https://github.com/user/repo");
        assert_eq!(
            (g.host.as_str(), g.path.as_str()),
            ("github.com", "user/repo")
        );
        assert_eq!(g.git_ref.as_deref(), Some("v1"));
        let g = git("https://gitlab.example.com/group/sub/repo.git");
        assert_eq!(g.path, "group/sub/repo");
        assert_eq!(g.repo, "https://gitlab.example.com/group/sub/repo.git");
        let g = git("ssh://git@Host.example:2222/user/repo@main");
        assert_eq!(g.repo, "ssh://git@Host.example:2222/user/repo");
        assert_eq!(
            (g.host.as_str(), g.git_ref.as_deref()),
            ("host.example", Some("main"))
        );
        let g = git("git:git@github.com:user/repo@abc123");
        assert_eq!(g.repo, "git@github.com:user/repo");
        assert_eq!(g.git_ref.as_deref(), Some("abc123"));
        let g = git("git:localhost/a/b");
        assert_eq!(g.repo, "https://localhost/a/b");
    }

    #[test]
    fn what_pi_reads_as_a_path_is_a_path() {
        for s in [
            "./pkg",
            "../pkg",
            "/abs/pkg",
            "~/pkg",
            "git@github.com:user/repo",
            "git:nodot/user/repo",
            "git:file:///tmp/repo",
            "git:github.com/onlyone",
            "git:example.com/../etc",
        ] {
            assert!(matches!(Source::parse(s), Source::Local { .. }), "{s}");
        }
    }

    #[test]
    fn identities_ignore_versions_refs_and_spelling_of_paths() {
        let base = Path::new("/home/u/.pi/agent");
        assert_eq!(identity("npm:x@1.0.0", base), identity("npm:x", base));
        assert_eq!(
            identity("git:github.com/u/r@v2", base),
            identity("https://github.com/u/r", base)
        );
        assert_eq!(
            identity("../p/./pkg", base),
            identity("/home/u/.pi/p/pkg", base)
        );
        assert_eq!(
            identity("file:///home/u/.pi/p/pkg", base),
            identity("/home/u/.pi/p/pkg", base)
        );
    }
}
