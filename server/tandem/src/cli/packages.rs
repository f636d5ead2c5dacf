//! `tandem install`, `remove` (`uninstall`), `update` and `list`: pi 1.6's package commands,
//! writing the same settings.json entries and install directories as pi's, so a package
//! installed by either is used by both ([`crate::packages`]).
//!
//! They are read before the rest of the command line, as pi reads them: `tandem install x` is
//! never a prompt. `-l`/`--local` uses the project's `.pi/settings.json`, which only a trusted
//! folder's commands may change (`tandem trust`, or `-a`/`--approve` for one command).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use tandem_ai::registry::AgentDir;
use tandem_coding::settings;
use tandem_coding::trust::TrustDecision;

use crate::host::setup::decide_trust;
use crate::packages::{self, offline, Configured, Packages, Scope, Source};
use crate::terminal_text::Sanitizing;

/// A package command, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageCommand {
    /// `install SOURCE [-l]`.
    Install {
        /// What to install.
        source: String,
        /// Into the project's settings.
        local: bool,
    },
    /// `remove SOURCE [-l]` (and `uninstall`).
    Remove {
        /// What to remove.
        source: String,
        /// From the project's settings.
        local: bool,
    },
    /// `update [SOURCE]`: one package, or all.
    Update {
        /// The package; `None`: every configured package.
        source: Option<String>,
    },
    /// `list`.
    List,
}

/// A command line for one of the package commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageArgs {
    /// The command.
    pub command: PackageCommand,
    /// `-a`/`--approve` (`Some(true)`) or `-na`/`--no-approve` (`Some(false)`).
    pub approve: Option<bool>,
}

const COMMANDS: [&str; 5] = ["install", "remove", "uninstall", "update", "list"];

/// How each command is used.
fn usage(command: &str) -> &'static str {
    match command {
        "install" => "tandem install <source> [-l] [-a|-na]",
        "remove" | "uninstall" => "tandem remove <source> [-l] [-a|-na]",
        "update" => "tandem update [source] [-a|-na]",
        _ => "tandem list [-a|-na]",
    }
}

fn help(command: &str) -> String {
    let what = match command {
        "install" => {
            "Install a package (extensions, skills and prompt templates) and add it to settings.\n\
             \n\
             Sources:\n\
             \x20 npm:@scope/name[@version]     from npm (installed under <agent dir>/npm/)\n\
             \x20 git:host/user/repo[@ref]      from git, also https://…, ssh://…, git:git@host:path\n\
             \x20 ./path                        a local directory or file, used where it is\n\
             \n\
             Options:\n\
             \x20 -l, --local       the project's .pi/settings.json (a trusted folder's)\n\
             \x20 -a, --approve     trust the folder's project files for this command\n\
             \x20 -na, --no-approve ignore the folder's project files for this command"
        }
        "remove" | "uninstall" => {
            "Remove a package and its settings entry (alias: tandem uninstall).\n\
             \n\
             Options:\n\
             \x20 -l, --local       from the project's .pi/settings.json\n\
             \x20 -a, --approve     trust the folder's project files for this command\n\
             \x20 -na, --no-approve ignore the folder's project files for this command"
        }
        "update" => {
            "Update one installed package, or all of them: npm packages not pinned to a version\n\
             to their newest release, git packages to their ref or branch.\n\
             (Tandem does not update itself: update it the way you installed it.)"
        }
        _ => "List the packages of the user's settings and, in a trusted folder, the project's.",
    };
    format!("Usage: {}\n\n{what}\n", usage(command))
}

/// What a package command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Run the command.
    Run(PackageArgs),
    /// `--help`: print this.
    Help(String),
    /// A usage error to print.
    Usage(String),
}

/// Reads a package command from the whole command line (program name first): `None` when the
/// first argument is not one.
pub fn parse(args: &[OsString]) -> Option<Parsed> {
    let first = args.get(1)?.to_str()?;
    if !COMMANDS.contains(&first) {
        return None;
    }
    let mut rest = Vec::new();
    for arg in &args[2..] {
        match arg.to_str() {
            Some(a) => rest.push(a.to_string()),
            None => {
                return Some(Parsed::Usage(format!(
                    "tandem {first}: an argument is not valid UTF-8: {}",
                    arg.to_string_lossy()
                )))
            }
        }
    }
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        return Some(Parsed::Help(help(first)));
    }
    Some(match parse_rest(first, &rest) {
        Ok(args) => Parsed::Run(args),
        Err(usage) => Parsed::Usage(usage),
    })
}

fn parse_rest(command: &str, rest: &[String]) -> Result<PackageArgs, String> {
    let wrong = |why: String| format!("{why}\nUsage: {}", usage(command));
    let mut local = false;
    let mut approve = None;
    let mut all = false;
    let mut sources = Vec::new();
    let mut iter = rest.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-l" | "--local" if matches!(command, "install" | "remove" | "uninstall") => {
                local = true
            }
            "-a" | "--approve" => approve = Some(true),
            "-na" | "--no-approve" => approve = Some(false),
            "--extensions" if command == "update" => all = true,
            "--extension" if command == "update" => match iter.next() {
                Some(source) if !source.starts_with('-') => sources.push(source.clone()),
                _ => return Err(wrong("--extension needs a package source".to_string())),
            },
            "--self" | "--models" | "--all" | "--force" | "self" | "pi" if command == "update" => {
                return Err(wrong(format!(
                    "{arg}: Tandem does not update itself or model catalogs; update Tandem the \
                     way you installed it. `tandem update` updates packages."
                )))
            }
            other if other.starts_with('-') => {
                return Err(wrong(format!(
                    "unknown option {other} for `tandem {command}`"
                )))
            }
            other => sources.push(other.to_string()),
        }
    }
    if sources.len() > 1 {
        return Err(wrong(format!("unexpected argument {}", sources[1])));
    }
    let source = sources.pop();
    let command = match command {
        "install" | "remove" | "uninstall" => {
            let Some(source) = source else {
                return Err(wrong(format!("`tandem {command}` needs a package source")));
            };
            if command == "install" {
                PackageCommand::Install { source, local }
            } else {
                PackageCommand::Remove { source, local }
            }
        }
        "update" => {
            if all && source.is_some() {
                return Err(wrong(
                    "--extensions updates every package: give no source with it".into(),
                ));
            }
            PackageCommand::Update { source }
        }
        _ => match source {
            Some(extra) => return Err(wrong(format!("unexpected argument {extra}"))),
            None => PackageCommand::List,
        },
    };
    Ok(PackageArgs { command, approve })
}

/// Runs a package command line when `args` is one: its exit status, else `None`.
pub fn main(args: &[OsString]) -> Option<ExitCode> {
    let parsed = parse(args)?;
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let args = match parsed {
        Parsed::Help(help) => {
            let _ = write!(stdout, "{help}");
            return Some(ExitCode::SUCCESS);
        }
        Parsed::Usage(usage) => {
            let _ = writeln!(stderr, "Error: {usage}");
            return Some(ExitCode::from(1));
        }
        Parsed::Run(args) => args,
    };
    let agent_dir = match AgentDir::from_env() {
        Ok(dir) => dir,
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e}");
            return Some(ExitCode::from(1));
        }
    };
    let cwd = match crate::run::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e:#}");
            return Some(ExitCode::from(1));
        }
    };
    let ok = run(&args, &agent_dir, &cwd, &mut stdout, &mut stderr);
    Some(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Runs a parsed package command for `cwd`; the report goes to `out`, errors to `err`.
/// Returns false on failure.
pub fn run(
    args: &PackageArgs,
    agent_dir: &AgentDir,
    cwd: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> bool {
    // Sources and paths come from the user and from repositories: shown with stand-ins for
    // escapes and controls.
    let (out, err) = (&mut Sanitizing(out), &mut Sanitizing(err));
    let trusted = match decide_trust(agent_dir, cwd, args.approve, &mut |w| {
        let _ = writeln!(err, "Warning: {w}");
    }) {
        TrustDecision::Decided { trusted, .. } => trusted,
        TrustDecision::Ask(_) => false,
    };
    let loaded = settings::load(agent_dir.path(), cwd, trusted);
    let manager = Packages::new(
        agent_dir.path(),
        cwd,
        packages::npm_command(&loaded.merged),
        false,
    );
    let result = match &args.command {
        PackageCommand::Install { source, local } => {
            let scope = scope_of(*local, trusted, cwd).and_then(|scope| {
                let _ = writeln!(out, "Installing {source}...");
                manager.install(source, scope)?;
                manager.add_to_settings(source, scope)?;
                let _ = writeln!(out, "Installed {source}");
                Ok(scope)
            });
            if let Ok(Scope::Project) = scope {
                note_untrusted(agent_dir, cwd, out);
            }
            scope.map(drop)
        }
        PackageCommand::Remove { source, local } => {
            scope_of(*local, trusted, cwd).and_then(|scope| remove(&manager, source, scope, out))
        }
        PackageCommand::Update { source } => update(&manager, source.as_deref(), trusted, out, err),
        PackageCommand::List => list(&manager, trusted, out),
    };
    match result {
        Ok(()) => true,
        Err(e) => {
            let _ = writeln!(err, "Error: {e}");
            false
        }
    }
}

/// The settings scope of `-l`, refused for a folder that is not trusted.
fn scope_of(local: bool, trusted: bool, cwd: &Path) -> Result<Scope, String> {
    match (local, trusted) {
        (false, _) => Ok(Scope::User),
        (true, true) => Ok(Scope::Project),
        (true, false) => Err(format!(
            "{} is not trusted, so its project settings are not changed. Trust it first \
             (`tandem trust`), or add --approve to trust it for this command.",
            cwd.display()
        )),
    }
}

/// After `install -l`: the project's packages load only in a trusted folder.
fn note_untrusted(agent_dir: &AgentDir, cwd: &Path, out: &mut dyn Write) {
    let decision = decide_trust(agent_dir, cwd, None, &mut |_| {});
    if !matches!(decision, TrustDecision::Decided { trusted: true, .. }) {
        let _ = writeln!(
            out,
            "Note: the project's packages load in sessions once {} is trusted (`tandem trust`).",
            cwd.display()
        );
    }
}

fn remove(
    manager: &Packages,
    source: &str,
    scope: Scope,
    out: &mut dyn Write,
) -> Result<(), String> {
    let configured = manager.configured(scope)?;
    if !configured
        .iter()
        .any(|c| manager.same_package(&c.source, scope, source))
    {
        return Err(no_match(manager, source, &configured));
    }
    let _ = writeln!(out, "Removing {source}...");
    manager.uninstall(source, scope)?;
    manager.remove_from_settings(source, scope)?;
    let _ = writeln!(out, "Removed {source}");
    Ok(())
}

fn no_match(manager: &Packages, source: &str, configured: &[Configured]) -> String {
    match manager.suggestion(source, configured) {
        Some(suggestion) => {
            format!("No matching package found for {source}. Did you mean {suggestion}?")
        }
        None => format!(
            "No matching package found for {source} (`tandem list` shows the configured ones)"
        ),
    }
}

fn update(
    manager: &Packages,
    source: Option<&str>,
    trusted: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let mut configured = manager.configured(Scope::User)?;
    if trusted {
        configured.extend(manager.configured(Scope::Project)?);
    }
    if let Some(source) = source {
        let all = configured.clone();
        configured.retain(|c| manager.same_package(&c.source, c.scope, source));
        if configured.is_empty() {
            return Err(no_match(manager, source, &all));
        }
    }
    if offline() {
        let _ = writeln!(out, "Skipped package updates (offline mode)");
        return Ok(());
    }
    let mut updated = Vec::new();
    let mut failed = 0;
    for entry in configured
        .iter()
        .filter(|c| Source::parse(&c.source).is_installed_kind())
    {
        let _ = writeln!(out, "Updating {}...", entry.source);
        match manager.update(&entry.source, entry.scope) {
            Ok(Some(change)) => {
                let scope = if entry.scope == Scope::Project {
                    " (project)"
                } else {
                    ""
                };
                updated.push(format!("{}{scope} {change}", entry.source));
            }
            Ok(None) => {}
            Err(e) => {
                failed += 1;
                let _ = writeln!(err, "Error: could not update {}: {e}", entry.source);
            }
        }
    }
    if updated.is_empty() {
        let what = source.map_or("Packages are".to_string(), |s| format!("{s} is"));
        if failed == 0 {
            let _ = writeln!(out, "{what} already up to date");
        }
    } else {
        let n = updated.len();
        let _ = writeln!(out, "Updated {n} package{}:", if n == 1 { "" } else { "s" });
        for line in updated {
            let _ = writeln!(out, "  {line}");
        }
    }
    if failed > 0 {
        return Err(format!(
            "{failed} package{} could not be updated",
            if failed == 1 { "" } else { "s" }
        ));
    }
    Ok(())
}

fn list(manager: &Packages, trusted: bool, out: &mut dyn Write) -> Result<(), String> {
    let user = manager.configured(Scope::User)?;
    let project = if trusted {
        manager.configured(Scope::Project)?
    } else {
        Vec::new()
    };
    if user.is_empty() && project.is_empty() {
        let _ = writeln!(out, "No packages installed.");
    }
    let show = |title: &str, list: &[Configured], out: &mut dyn Write| {
        let _ = writeln!(out, "{title}");
        for entry in list {
            let filtered = if entry.filter.is_some() {
                " (filtered)"
            } else {
                ""
            };
            match manager.installed_dir(&entry.source, entry.scope) {
                Some(dir) => {
                    let _ = writeln!(out, "  {}{filtered}\n    {}", entry.source, dir.display());
                }
                None => {
                    let _ = writeln!(out, "  {}{filtered} (not installed)", entry.source);
                }
            }
        }
    };
    if !user.is_empty() {
        show("User packages:", &user, out);
    }
    if !project.is_empty() {
        if !user.is_empty() {
            let _ = writeln!(out);
        }
        show("Project packages:", &project, out);
    }
    if !trusted {
        let path = manager.settings_path(Scope::Project);
        if packages::settings_file::read(&path).is_ok_and(|l| !l.is_empty()) {
            let _ = writeln!(
                out,
                "Note: the project's packages ({}) are not listed: the folder is not trusted \
                 (`tandem trust`, or --approve for this command).",
                path.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &[&str]) -> Option<Parsed> {
        let args: Vec<OsString> = std::iter::once("tandem")
            .chain(line.iter().copied())
            .map(OsString::from)
            .collect();
        parse(&args)
    }

    fn command(line: &[&str]) -> PackageArgs {
        match parsed(line) {
            Some(Parsed::Run(args)) => args,
            other => panic!("{line:?}: {other:?}"),
        }
    }

    #[test]
    fn package_commands_are_read_as_pi_reads_them() {
        assert!(parsed(&["-p", "install"]).is_none());
        assert!(parsed(&["fix", "it"]).is_none());
        assert_eq!(
            command(&["install", "npm:x", "-l"]).command,
            PackageCommand::Install {
                source: "npm:x".into(),
                local: true
            }
        );
        assert_eq!(
            command(&["uninstall", "./p", "-a"]),
            PackageArgs {
                command: PackageCommand::Remove {
                    source: "./p".into(),
                    local: false
                },
                approve: Some(true)
            }
        );
        assert_eq!(
            command(&["update"]).command,
            PackageCommand::Update { source: None }
        );
        assert_eq!(
            command(&["update", "--extension", "npm:x"]).command,
            PackageCommand::Update {
                source: Some("npm:x".into())
            }
        );
        assert_eq!(command(&["list", "-na"]).approve, Some(false));
        assert!(matches!(
            parsed(&["install", "--help"]),
            Some(Parsed::Help(_))
        ));
        for wrong in [
            &["install"][..],
            &["install", "a", "b"],
            &["list", "-l"],
            &["update", "--self"],
            &["remove", "--bogus", "x"],
        ] {
            assert!(matches!(parsed(wrong), Some(Parsed::Usage(_))), "{wrong:?}");
        }
    }
}
