//! `tandem trust`: project trust from the command line, for editors that cannot ask (Helix) and
//! for scripts. It reads and writes the agent directory's trust.json, the file pi's `/trust`
//! writes, so a decision made here holds in pi and the other way round.
//!
//! `tandem trust [DIR]` saves "trusted", `--deny` saves "not trusted", `--status` only shows
//! the decision that applies (and from where) and what the folder would load.

use std::io::Write;
use std::path::Path;

use tandem_ai::registry::AgentDir;
use tandem_coding::trust::{canonical, ProtectedResources, TrustDecision, TrustSource, TrustStore};

use super::TrustAction;
use crate::host::setup::decide_trust;
use crate::terminal_text::Sanitizing;

/// Runs `tandem trust` for `dir`; the report goes to `out`, errors to `err`. Returns false on
/// failure.
pub fn run(
    agent_dir: &AgentDir,
    dir: &Path,
    action: TrustAction,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> bool {
    // Folder names and what the project would run come from the repository: shown with
    // stand-ins for escapes and controls, so the report cannot rewrite what the user reads.
    let (out, err) = (&mut Sanitizing(out), &mut Sanitizing(err));
    if !dir.is_dir() {
        let _ = writeln!(err, "Error: {} is not a directory", dir.display());
        return false;
    }
    let dir = canonical(dir);
    let store = TrustStore::new(agent_dir.path());
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let resources = ProtectedResources::find(&dir, home.as_deref());
    let trusted = match action {
        TrustAction::Trust => true,
        TrustAction::Deny => false,
        TrustAction::Show => {
            let decision = decide_trust(agent_dir, &dir, None, &mut |w| {
                let _ = writeln!(err, "Warning: {w}");
            });
            let line = match decision {
                TrustDecision::Ask(_) => format!(
                    "{}: no decision saved; pi and the editors ask, print and JSON modes do \
                     not trust it",
                    dir.display()
                ),
                TrustDecision::Decided { trusted, source } => {
                    let verdict = if trusted { "trusted" } else { "not trusted" };
                    let why = match source {
                        TrustSource::NothingProtected => "nothing in it needs trust".to_string(),
                        TrustSource::Saved(at) => {
                            format!("saved for {} in {}", at.display(), store.file().display())
                        }
                        TrustSource::Default(d) => {
                            format!("defaultProjectTrust is {}", serde_json::json!(d))
                        }
                        other => format!("{other:?}"),
                    };
                    format!("{}: {verdict} ({why})", dir.display())
                }
            };
            let _ = writeln!(out, "{line}");
            describe(&resources, out);
            return true;
        }
    };
    if let Err(e) = store.save(&dir, trusted) {
        let _ = writeln!(err, "Error: {e}");
        return false;
    }
    let verdict = if trusted { "Trusted" } else { "Not trusted" };
    let _ = writeln!(
        out,
        "{verdict}: {} (saved in {})",
        dir.display(),
        store.file().display()
    );
    describe(&resources, out);
    true
}

fn describe(resources: &ProtectedResources, out: &mut dyn Write) {
    let lines = resources.describe();
    if lines.is_empty() {
        let _ = writeln!(out, "It has no project configuration that needs trust.");
        return;
    }
    let _ = writeln!(out, "Its project configuration:");
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_deny_and_status_round_trip_through_trust_json() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = canonical(tmp.path());
        let agent = AgentDir::new(root.join("agent"));
        let project = root.join("project");
        std::fs::create_dir_all(project.join(".pi")).expect("mkdir");
        std::fs::write(
            project.join(".pi/mcp.json"),
            r#"{"mcpServers": {"x": {"command": "touch", "args": ["m"]}}}"#,
        )
        .expect("write");
        let go = |action| {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let ok = run(&agent, &project, action, &mut out, &mut err);
            (
                ok,
                String::from_utf8(out).expect("utf-8"),
                String::from_utf8(err).expect("utf-8"),
            )
        };
        let (ok, out, _) = go(TrustAction::Show);
        assert!(ok);
        assert!(out.contains("no decision saved"), "{out}");
        assert!(
            out.contains("MCP server \"x\" would start: touch m"),
            "{out}"
        );
        let (ok, out, _) = go(TrustAction::Trust);
        assert!(ok, "{out}");
        assert!(out.starts_with("Trusted: "), "{out}");
        let (_, out, _) = go(TrustAction::Show);
        assert!(out.contains(": trusted (saved for"), "{out}");
        let (ok, _, _) = go(TrustAction::Deny);
        assert!(ok);
        let saved = TrustStore::new(agent.path())
            .lookup(&project)
            .expect("read")
            .expect("saved");
        assert!(!saved.trusted);
        let (ok, _, err) = {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let ok = run(
                &agent,
                &root.join("nope"),
                TrustAction::Trust,
                &mut out,
                &mut err,
            );
            (ok, out, String::from_utf8(err).expect("utf-8"))
        };
        assert!(!ok);
        assert!(err.contains("is not a directory"), "{err}");
    }
}
