//! The programs packages are installed with: npm (or what settings.json's `npmCommand` names)
//! and git. Their output is captured; a failure is reported with the command and the last lines
//! it wrote, a program that is not there with what to install.

use std::path::Path;
use std::process::{Command, Stdio};

/// Lines of a failed command's output kept for its error.
const TAIL_LINES: usize = 15;

/// How commands run.
#[derive(Debug, Clone)]
pub struct Runner {
    /// npm's argv prefix: `["npm"]`, or settings.json's `npmCommand`.
    pub npm: Vec<String>,
    /// No terminal to ask on (a session starting): git and ssh fail instead of prompting.
    pub non_interactive: bool,
}

/// Which package manager `npmCommand` runs, for its argument spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    Npm,
    Pnpm,
    Bun,
    /// Something else: given npm's arguments for installs, a bare `install` for dependencies.
    Other,
}

impl Runner {
    /// The package manager behind the npm command: the program's name, the one after a `--`,
    /// or the one a wrapper's arguments name.
    pub fn manager(&self) -> Manager {
        let name = |s: &str| {
            let base = Path::new(s)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match base.trim_end_matches(".cmd").trim_end_matches(".exe") {
                "npm" => Manager::Npm,
                "pnpm" => Manager::Pnpm,
                "bun" => Manager::Bun,
                _ => Manager::Other,
            }
        };
        let Some((program, args)) = self.npm.split_first() else {
            return Manager::Npm;
        };
        if let Some(pos) = args.iter().rposition(|a| a == "--") {
            return args.get(pos + 1).map_or(name(program), |a| name(a));
        }
        match name(program) {
            Manager::Other => {
                let named: Vec<Manager> = args
                    .iter()
                    .map(|a| name(a))
                    .filter(|m| *m != Manager::Other)
                    .collect();
                match named.as_slice() {
                    [one] => *one,
                    [first, rest @ ..] if rest.iter().all(|m| m == first) => *first,
                    _ => Manager::Other,
                }
            }
            known => known,
        }
    }

    /// `npm install SPEC` into the install root `prefix`.
    pub fn npm_install_args(&self, spec: &str, prefix: &Path) -> Vec<String> {
        let prefix = prefix.display().to_string();
        let mut args = vec!["install".to_string(), spec.to_string()];
        match self.manager() {
            Manager::Bun => args.extend(["--cwd".into(), prefix, "--omit=peer".into()]),
            Manager::Pnpm => args.extend([
                "--prefix".into(),
                prefix,
                "--config.auto-install-peers=false".into(),
                "--config.strict-peer-dependencies=false".into(),
                "--config.strict-dep-builds=false".into(),
            ]),
            Manager::Npm | Manager::Other => args.extend([
                "--prefix".into(),
                prefix,
                "--legacy-peer-deps".into(),
                "--no-audit".into(),
                "--no-fund".into(),
            ]),
        }
        args
    }

    /// `npm uninstall NAME` from the install root `prefix`.
    pub fn npm_uninstall_args(&self, name: &str, prefix: &Path) -> Vec<String> {
        let prefix = prefix.display().to_string();
        let mut args = vec!["uninstall".to_string(), name.to_string()];
        match self.manager() {
            Manager::Bun => args.extend(["--cwd".into(), prefix]),
            Manager::Pnpm => args.extend(["--prefix".into(), prefix]),
            Manager::Npm | Manager::Other => args.extend([
                "--prefix".into(),
                prefix,
                "--legacy-peer-deps".into(),
                "--no-audit".into(),
                "--no-fund".into(),
            ]),
        }
        args
    }

    /// Installing a cloned package's runtime dependencies, in its directory.
    pub fn dependency_args(&self) -> Vec<String> {
        let args: &[&str] = match self.manager() {
            Manager::Npm => &[
                "install",
                "--omit=dev",
                "--legacy-peer-deps",
                "--no-audit",
                "--no-fund",
            ],
            Manager::Pnpm => &[
                "install",
                "--prod",
                "--config.auto-install-peers=false",
                "--config.strict-peer-dependencies=false",
                "--config.strict-dep-builds=false",
            ],
            Manager::Bun => &["install", "--omit=dev", "--omit=peer"],
            Manager::Other => &["install"],
        };
        args.iter().map(|s| s.to_string()).collect()
    }

    /// Runs the npm command with `args` (in `cwd` when given).
    pub fn npm(&self, args: &[String], cwd: Option<&Path>) -> Result<String, String> {
        let Some((program, prefix)) = self.npm.split_first() else {
            return Err(
                "settings.json's npmCommand is empty: give the program first, e.g. \
                        [\"pnpm\"], or remove the setting"
                    .to_string(),
            );
        };
        let mut all: Vec<String> = prefix.to_vec();
        all.extend_from_slice(args);
        self.run(program, &all, cwd)
    }

    /// Runs git with `args` (in `cwd` when given).
    pub fn git(&self, args: &[&str], cwd: Option<&Path>) -> Result<String, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        self.run("git", &args, cwd)
    }

    /// Runs `program args`; its standard output when it succeeds.
    fn run(&self, program: &str, args: &[String], cwd: Option<&Path>) -> Result<String, String> {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        if self.non_interactive {
            command.env("GIT_TERMINAL_PROMPT", "0");
            if std::env::var_os("GIT_SSH_COMMAND").is_none() {
                command.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
            }
        }
        let shown = std::iter::once(program)
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        tracing::debug!(target: "tandem::packages", "running {shown}");
        let output = command.output().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => missing(program),
            _ => format!("could not run `{shown}`: {e}"),
        })?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).trim().to_string());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let text = if stderr.trim().is_empty() {
            stdout
        } else {
            stderr
        };
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n  ");
        let status = match output.status.code() {
            Some(code) => format!("exit code {code}"),
            None => "killed by a signal".to_string(),
        };
        let mut message = format!("`{shown}` failed ({status})");
        if !tail.is_empty() {
            message.push_str(":\n  ");
            message.push_str(&tail);
        }
        if program == "git" && self.non_interactive && asks_for_credentials(&text) {
            message.push_str(
                "\n  git cannot ask for a password or passphrase here: set up a credential \
                 helper or an ssh agent, or run `tandem install` from a terminal",
            );
        }
        Err(message)
    }
}

/// What to install when `program` is not on PATH.
fn missing(program: &str) -> String {
    match program {
        "git" => "git was not found on PATH: install git (https://git-scm.com/downloads) to use \
                  git packages"
            .to_string(),
        "npm" => "npm was not found on PATH: install Node.js with npm (https://nodejs.org) to \
                  use npm packages, or name another package manager in settings.json's \
                  npmCommand (e.g. [\"pnpm\"])"
            .to_string(),
        other => format!(
            "{other} (settings.json's npmCommand) was not found: install it, or change \
             npmCommand"
        ),
    }
}

fn asks_for_credentials(output: &str) -> bool {
    let lower = output.to_ascii_lowercase();
    [
        "terminal prompts disabled",
        "could not read username",
        "could not read password",
        "permission denied (publickey",
        "host key verification failed",
        "passphrase",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner(npm: &[&str]) -> Runner {
        Runner {
            npm: npm.iter().map(|s| s.to_string()).collect(),
            non_interactive: true,
        }
    }

    #[test]
    fn the_package_manager_is_read_from_the_command() {
        assert_eq!(runner(&["npm"]).manager(), Manager::Npm);
        assert_eq!(runner(&["/usr/bin/pnpm"]).manager(), Manager::Pnpm);
        assert_eq!(
            runner(&["mise", "exec", "--", "bun"]).manager(),
            Manager::Bun
        );
        assert_eq!(runner(&["corepack", "pnpm"]).manager(), Manager::Pnpm);
        assert_eq!(runner(&["./fake-npm"]).manager(), Manager::Other);
        let args = runner(&["npm"]).npm_install_args("x@1", Path::new("/r"));
        assert_eq!(
            args,
            [
                "install",
                "x@1",
                "--prefix",
                "/r",
                "--legacy-peer-deps",
                "--no-audit",
                "--no-fund"
            ]
        );
    }

    #[test]
    fn a_missing_program_says_what_to_install_and_a_failure_shows_its_last_lines() {
        let r = runner(&["/nonexistent/npm-xyz"]);
        let err = r.npm(&["install".into()], None).expect_err("missing");
        assert!(err.contains("was not found"), "{err}");
        let err = r
            .run(
                "sh",
                &["-c".into(), "echo one >&2; echo two >&2; exit 3".into()],
                None,
            )
            .expect_err("fails");
        assert!(err.contains("exit code 3"), "{err}");
        assert!(err.ends_with("one\n  two"), "{err}");
    }
}
