//! Where session files live and how they are named, exactly as pi lays them out, so `--continue`
//! and `--resume` in either program find the other's sessions.
//!
//! - all sessions: `<agentDir>/sessions/`
//! - one working directory's: `<agentDir>/sessions/--<encoded cwd>--/`, where the encoding drops
//!   one leading `/` or `\` and turns every `/`, `\` and `:` into `-` (`/home/u/p` →
//!   `--home-u-p--`, `C:\w\p` → `--C--w-p--`); nothing else is escaped
//! - one session: `<header timestamp with ':' and '.' turned into '-'>_<session id>.jsonl`

use std::path::{Path, PathBuf};

use tandem_ai::registry::AgentDir;

/// `<agentDir>/sessions`: the parent of every working directory's session folder.
pub fn sessions_root(agent_dir: &AgentDir) -> PathBuf {
    agent_dir.path().join("sessions")
}

/// The folder name pi uses for `cwd`'s sessions: `--<cwd encoded>--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let encoded: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{encoded}--")
}

/// The default session folder of `cwd`: `<agentDir>/sessions/--<cwd encoded>--`. It is not
/// created here; the first write creates it.
pub fn default_session_dir(agent_dir: &AgentDir, cwd: &Path) -> PathBuf {
    sessions_root(agent_dir).join(encode_cwd(&cwd.to_string_lossy()))
}

/// The environment variable that chooses the session folder (pi 1.6), over the settings.
pub const SESSION_DIR_ENV: &str = "PI_CODING_AGENT_SESSION_DIR";

/// The folder of `cwd`'s session files, in pi 1.6's order: `--session-dir` (`flag`), else
/// `PI_CODING_AGENT_SESSION_DIR` (`env`), else the settings' `sessionDir` (`setting`; relative
/// paths from `cwd`, a leading `~/` from the home folder), else [`default_session_dir`].
pub fn resolve_session_dir(
    flag: Option<&Path>,
    env: Option<&str>,
    setting: Option<&str>,
    agent_dir: &AgentDir,
    cwd: &Path,
) -> PathBuf {
    let chosen = flag.map(Path::to_path_buf).or_else(|| {
        let named = [env, setting]
            .into_iter()
            .flatten()
            .map(str::trim)
            .find(|s| !s.is_empty())?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Some(match (named.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => cwd.join(named),
        })
    });
    chosen.unwrap_or_else(|| default_session_dir(agent_dir, cwd))
}

/// A session file's name: the header's ISO timestamp with `:` and `.` replaced by `-`, an
/// underscore, the session id, `.jsonl`.
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    let stamp: String = timestamp
        .chars()
        .map(|c| if matches!(c, ':' | '.') { '-' } else { c })
        .collect();
    format!("{stamp}_{session_id}.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_then_the_environment_then_the_setting_then_the_default() {
        let agent = AgentDir::new("/agent");
        let cwd = Path::new("/work/p");
        let dir = |flag: Option<&str>, env: Option<&str>, setting: Option<&str>| {
            resolve_session_dir(flag.map(Path::new), env, setting, &agent, cwd)
        };
        assert_eq!(
            dir(None, None, None),
            Path::new("/agent/sessions/--work-p--")
        );
        assert_eq!(dir(None, None, Some("s")), Path::new("/work/p/s"));
        assert_eq!(dir(None, None, Some("/abs")), Path::new("/abs"));
        assert_eq!(dir(None, Some("/env"), Some("/abs")), Path::new("/env"));
        assert_eq!(dir(None, Some(" "), Some("/abs")), Path::new("/abs"));
        assert_eq!(
            dir(Some("/flag"), Some("/env"), Some("/abs")),
            Path::new("/flag")
        );
        if let Some(home) = std::env::var_os("HOME") {
            assert_eq!(dir(None, None, Some("~/x")), Path::new(&home).join("x"));
        }
    }

    #[test]
    fn cwd_encoding_matches_pi() {
        assert_eq!(encode_cwd("/home/user/project"), "--home-user-project--");
        assert_eq!(encode_cwd("C:\\work\\pi"), "--C--work-pi--");
        assert_eq!(encode_cwd("\\\\server\\share"), "---server-share--");
        assert_eq!(encode_cwd("//double"), "---double--");
        assert_eq!(encode_cwd("/a b/ü.x"), "--a b-ü.x--");
        assert_eq!(encode_cwd("/"), "----");
    }

    #[test]
    fn default_dir_and_file_name() {
        let agent = AgentDir::new("/home/u/.pi/agent");
        assert_eq!(
            default_session_dir(&agent, Path::new("/home/user/project")),
            PathBuf::from("/home/u/.pi/agent/sessions/--home-user-project--")
        );
        assert_eq!(
            session_file_name(
                "2026-11-30T07:13:25.974Z",
                "01a22b4d-25d5-77de-8d60-df9ef5711e8b"
            ),
            "2026-11-30T07-13-25-974Z_01a22b4d-25d5-77de-8d60-df9ef5711e8b.jsonl"
        );
    }
}
