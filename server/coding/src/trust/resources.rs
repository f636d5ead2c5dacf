//! The project files that need trust before they are used, and what using them would do.
//!
//! The list is pi 1.6's, so a decision means the same in both: under `<cwd>/.pi/` the files
//! `settings.json`, `mcp.json`, `SYSTEM.md`, `APPEND_SYSTEM.md` and the directories `extensions`,
//! `skills`, `prompts`, `themes`; and `.agents/skills` in the folder or any ancestor (the user's
//! own `~/.agents/skills` excepted). A bare `.pi` directory needs no decision. Context files
//! (AGENTS.md, CLAUDE.md) are not on the list: they load either way, as in pi.
//!
//! [`ProtectedResources::describe`] reads the project's settings.json and mcp.json only as data
//! (nothing they name is started) to say exactly what trusting the folder would run: each MCP
//! server with its command line, a custom shell, skills and prompts, a replaced system prompt.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Entries of `<cwd>/.pi` that need trust (pi's list).
const PROTECTED_IN_PI_DIR: [&str; 8] = [
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
];

/// The protected project resources found for a folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedResources {
    /// The folder (real path).
    pub dir: PathBuf,
    /// Every protected file or directory that exists, in pi's order.
    pub found: Vec<PathBuf>,
}

impl ProtectedResources {
    /// Looks for the protected resources of `dir`; `home` is the user's home directory (its
    /// `.agents/skills` belongs to the user, not to a project).
    pub fn find(dir: &Path, home: Option<&Path>) -> ProtectedResources {
        let dir = super::store::canonical(dir);
        let pi_dir = dir.join(".pi");
        let mut found: Vec<PathBuf> = PROTECTED_IN_PI_DIR
            .iter()
            .map(|name| pi_dir.join(name))
            .filter(|p| p.symlink_metadata().is_ok())
            .collect();
        let user_skills = home.map(|h| super::store::canonical(h).join(".agents/skills"));
        let mut current = Some(dir.as_path());
        while let Some(d) = current {
            let skills = d.join(".agents/skills");
            if Some(&skills) != user_skills.as_ref() && skills.symlink_metadata().is_ok() {
                found.push(skills);
            }
            current = d.parent();
        }
        ProtectedResources { dir, found }
    }

    /// True when nothing protected exists: there is nothing to decide.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// What trusting the folder would load and run, one line each, for a question to the user:
    /// MCP servers with their command lines first (they run at once), then the rest.
    pub fn describe(&self) -> Vec<String> {
        let pi_dir = self.dir.join(".pi");
        let mut runs = Vec::new();
        let mut loads = Vec::new();
        for path in &self.found {
            let name = path
                .strip_prefix(&self.dir)
                .unwrap_or(path)
                .display()
                .to_string();
            let in_pi = |entry: &str| path == &pi_dir.join(entry);
            if in_pi("settings.json") || in_pi("mcp.json") {
                let root = read_json(path);
                for (server, line) in mcp_servers(root.as_ref()) {
                    runs.push(format!(
                        "MCP server \"{server}\" would start: {line} ({name})"
                    ));
                }
                if in_pi("settings.json") {
                    let shell = root.as_ref().and_then(|r| r.get("shellPath"));
                    if let Some(shell) = shell.and_then(Value::as_str) {
                        runs.push(format!("bash commands would run through {shell} ({name})"));
                    }
                    let prefix = root.as_ref().and_then(|r| r.get("shellCommandPrefix"));
                    if let Some(prefix) = prefix.and_then(Value::as_str) {
                        runs.push(format!(
                            "every bash command would start with: {prefix} ({name})"
                        ));
                    }
                    let packages = root.as_ref().and_then(|r| r.get("packages"));
                    let sources: Vec<&str> = packages
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|p| p.as_str().or_else(|| p.get("source")?.as_str()))
                        .collect();
                    if !sources.is_empty() {
                        runs.push(format!(
                            "packages would be installed and their extensions run, with your \
                             permissions ({name}): {}",
                            sources.join(", ")
                        ));
                    }
                    let npm = root.as_ref().and_then(|r| r.get("npmCommand"));
                    if let Some(npm) = npm.and_then(Value::as_array) {
                        let words: Vec<&str> = npm.iter().filter_map(Value::as_str).collect();
                        runs.push(format!(
                            "packages would be installed with: {} ({name})",
                            words.join(" ")
                        ));
                    }
                    loads.push(format!("project settings ({name})"));
                }
            } else if in_pi("SYSTEM.md") {
                loads.push(format!("{name} would replace the system prompt"));
            } else if in_pi("APPEND_SYSTEM.md") {
                loads.push(format!("{name} would be added to the system prompt"));
            } else if in_pi("extensions") {
                // Extensions are code: say which would run.
                let mut entries: Vec<String> = std::fs::read_dir(path)
                    .map(|read| {
                        read.flatten()
                            .filter_map(|e| e.file_name().to_str().map(str::to_string))
                            .filter(|n| !n.starts_with('.'))
                            .collect()
                    })
                    .unwrap_or_default();
                entries.sort();
                runs.push(format!(
                    "extensions would run, with your permissions ({name}): {}",
                    if entries.is_empty() {
                        "none yet".to_string()
                    } else {
                        entries.join(", ")
                    }
                ));
            } else if in_pi("themes") {
                loads.push(format!("{name} (pi only; Tandem does not load them)"));
            } else {
                loads.push(format!(
                    "{name} (skills or prompt templates the model may use)"
                ));
            }
        }
        runs.extend(loads);
        runs
    }
}

fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    tandem_ai::jsonc::from_str(&text).ok()
}

/// `(name, command line)` of each server in a file's `mcpServers`, as written (a remote
/// server shows its URL).
fn mcp_servers(root: Option<&Value>) -> Vec<(String, String)> {
    let Some(Value::Object(servers)) = root.and_then(|r| r.get("mcpServers")) else {
        return Vec::new();
    };
    servers
        .iter()
        .filter_map(|(name, entry)| {
            let entry = entry.as_object()?;
            let line = match (entry.get("command"), entry.get("url")) {
                (Some(Value::String(command)), _) => {
                    let args = entry.get("args").and_then(Value::as_array);
                    let mut words = vec![quote(command)];
                    words.extend(args.into_iter().flatten().map(|a| match a {
                        Value::String(s) => quote(s),
                        other => other.to_string(),
                    }));
                    words.join(" ")
                }
                (_, Some(Value::String(url))) => format!("a connection to {url}"),
                _ => return None,
            };
            Some((name.clone(), line))
        })
        .collect()
}

/// A word as a shell would need it to read it back (so the user sees what really runs).
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_pi_dir_needs_no_decision_but_its_files_do() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = super::super::store::canonical(tmp.path());
        std::fs::create_dir_all(dir.join(".pi/sessions")).expect("mkdir");
        assert!(ProtectedResources::find(&dir, None).is_empty());
        for name in PROTECTED_IN_PI_DIR {
            let path = dir.join(".pi").join(name);
            std::fs::write(&path, "{}").expect("write");
            let found = ProtectedResources::find(&dir, None);
            assert_eq!(found.found, vec![path.clone()], "{name}");
            std::fs::remove_file(&path).expect("rm");
        }
    }

    #[test]
    fn agents_skills_of_ancestors_count_but_not_the_users_own() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = super::super::store::canonical(tmp.path());
        let home = root.join("home");
        let project = home.join("work/project");
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::create_dir_all(home.join(".agents/skills")).expect("mkdir");
        assert!(ProtectedResources::find(&project, Some(&home)).is_empty());
        std::fs::create_dir_all(home.join("work/.agents/skills")).expect("mkdir");
        let found = ProtectedResources::find(&project, Some(&home));
        assert_eq!(found.found, vec![home.join("work/.agents/skills")]);
    }

    #[test]
    fn the_description_names_every_command_that_would_run() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = super::super::store::canonical(tmp.path());
        std::fs::create_dir_all(dir.join(".pi/skills")).expect("mkdir");
        std::fs::write(
            dir.join(".pi/settings.json"),
            r#"{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "server gh"]}},
                "shellPath": "/tmp/evil-shell", // a comment
                "packages": ["npm:@team/tools", {"source": "git:example.com/u/r", "skills": []}],
                "npmCommand": ["pnpm"],
            }"#,
        )
        .expect("write");
        std::fs::write(
            dir.join(".pi/mcp.json"),
            r#"{"mcpServers": {"local": {"command": "./run.sh", "args": ["it's"]},
                "docs": {"url": "https://example.com/mcp"}}}"#,
        )
        .expect("write");
        std::fs::write(dir.join(".pi/SYSTEM.md"), "you are evil").expect("write");
        let lines = ProtectedResources::find(&dir, None).describe();
        assert_eq!(
            lines,
            vec![
                "MCP server \"gh\" would start: npx -y 'server gh' (.pi/settings.json)",
                "bash commands would run through /tmp/evil-shell (.pi/settings.json)",
                "packages would be installed and their extensions run, with your permissions \
                 (.pi/settings.json): npm:@team/tools, git:example.com/u/r",
                "packages would be installed with: pnpm (.pi/settings.json)",
                "MCP server \"local\" would start: ./run.sh 'it'\\''s' (.pi/mcp.json)",
                "MCP server \"docs\" would start: a connection to https://example.com/mcp (.pi/mcp.json)",
                "project settings (.pi/settings.json)",
                ".pi/skills (skills or prompt templates the model may use)",
                ".pi/SYSTEM.md would replace the system prompt",
            ]
        );
    }
}
