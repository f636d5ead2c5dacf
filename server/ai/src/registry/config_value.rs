//! Values in models.json and auth.json (API keys, header values) are indirections, as in pi:
//! `"!op read op://vault/key"` runs a shell command and uses its trimmed stdout; a value naming a
//! set environment variable uses that variable; anything else is the literal value. Commands let
//! users keep keys in a password manager instead of a plain file.
//!
//! Commands run synchronously with a deadline (pi: 10 s), in a process group of their own, so a
//! command that times out is stopped with everything it started (a password manager's helper
//! included). The registry runs each distinct command at most once per process and keeps its
//! result, failures included. Callers on an async runtime should call into the registry from
//! `spawn_blocking`.

use crate::process_group;
use crate::sync::lock;
use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// How long a `!command` may run before it is killed (pi's limit).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of a failed command's stderr an error message quotes.
const STDERR_EXCERPT_CHARS: usize = 300;

/// Why a `!command` value produced no value. Messages quote the command and its stderr, never
/// its stdout (which would be the secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The shell could not be started.
    #[error("the command `{command}` could not be started: {detail}")]
    Spawn {
        /// The command, without the leading `!`.
        command: String,
        /// The operating system's reason.
        detail: String,
    },
    /// The command exited unsuccessfully.
    #[error("the command `{command}` failed with {status}{}", excerpt_suffix(.stderr))]
    Failed {
        /// The command, without the leading `!`.
        command: String,
        /// `exit code N` or `a signal`.
        status: String,
        /// The start of what it wrote to stderr (trimmed; may be empty).
        stderr: String,
    },
    /// The command was still running at the deadline and was killed.
    #[error("the command `{command}` did not finish within {} ms and was stopped", .after.as_millis())]
    TimedOut {
        /// The command, without the leading `!`.
        command: String,
        /// The deadline it missed.
        after: Duration,
    },
    /// The command succeeded but printed nothing.
    #[error("the command `{command}` succeeded but printed nothing on stdout")]
    Empty {
        /// The command, without the leading `!`.
        command: String,
    },
}

fn excerpt_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr: {stderr}")
    }
}

/// Reads a variable from the process environment. Names that cannot be variable names (empty,
/// containing `=` or NUL, as literal keys often do) are never looked up.
pub fn process_env(name: &str) -> Option<String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return None;
    }
    std::env::var(name).ok()
}

/// Resolves one configuration value: `!command` → the command's trimmed stdout; the name of a
/// set, non-empty variable in `env` → its value; otherwise the value itself.
pub fn resolve_config_value(
    raw: &str,
    env: &dyn Fn(&str) -> Option<String>,
    timeout: Duration,
) -> Result<String, CommandError> {
    if let Some(command) = raw.strip_prefix('!') {
        return run_command_once(command, timeout);
    }
    Ok(env(raw)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| raw.to_string()))
}

/// Why a template value (pi 1.6's mcp.json `env` and `headers`) produced no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// Variables the value names are unset or empty.
    #[error("environment variable{} {} {} not set", if .0.len() == 1 { "" } else { "s" }, .0.join(", "), if .0.len() == 1 { "is" } else { "are" })]
    Unset(Vec<String>),
    /// The `!command` failed.
    #[error(transparent)]
    Command(#[from] CommandError),
}

/// Resolves a template value as pi 1.6 does for mcp.json's `env` and `headers`: a value starting
/// with `!` runs the rest as a shell command (the whole value; its trimmed stdout is used);
/// otherwise `${NAME}` and `$NAME` are replaced by the variable's value, `$$` stands for `$` and
/// `$!` for `!`, and any other text is kept. A variable that is unset or empty is an error
/// naming it (every such variable, once each). Blocking when a command runs.
pub fn resolve_template(
    raw: &str,
    env: &dyn Fn(&str) -> Option<String>,
    timeout: Duration,
) -> Result<String, TemplateError> {
    if let Some(command) = raw.strip_prefix('!') {
        return Ok(run_command_once(command, timeout)?);
    }
    let is_start = |c: char| c.is_ascii_alphabetic() || c == '_';
    let is_rest = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut missing: Vec<String> = Vec::new();
    let mut lookup = |name: &str, out: &mut String| match env(name).filter(|v| !v.is_empty()) {
        Some(value) => out.push_str(&value),
        None => {
            if !missing.iter().any(|m| m == name) {
                missing.push(name.to_string());
            }
        }
    };
    let mut rest = raw;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.chars().next() {
            Some(c @ ('$' | '!')) => {
                out.push(c);
                rest = &after[1..];
            }
            Some('{') => match after.find('}') {
                Some(end) => {
                    let name = &after[1..end];
                    let valid =
                        name.chars().next().is_some_and(is_start) && name.chars().all(is_rest);
                    if valid {
                        lookup(name, &mut out);
                    } else {
                        out.push_str(&rest[at..at + 1 + end + 1]);
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    out.push('$');
                    rest = after;
                }
            },
            Some(c) if is_start(c) => {
                let len = after.find(|c: char| !is_rest(c)).unwrap_or(after.len());
                lookup(&after[..len], &mut out);
                rest = &after[len..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(TemplateError::Unset(missing))
    }
}

/// [`run_command`] once per process for each distinct command: later calls get the first
/// result, a failure included (a locked password manager is not asked again and again; restart
/// to retry).
pub fn run_command_once(command: &str, timeout: Duration) -> Result<String, CommandError> {
    type Results = Mutex<HashMap<String, Result<String, CommandError>>>;
    static RESULTS: OnceLock<Results> = OnceLock::new();
    let results = RESULTS.get_or_init(|| Mutex::new(HashMap::new()));
    let known = lock(results).get(command).cloned();
    if let Some(result) = known {
        return result;
    }
    let result = run_command(command, timeout);
    lock(results)
        .entry(command.to_string())
        .or_insert(result)
        .clone()
}

/// Runs `command` through the shell (`sh -c`; `cmd /C` on Windows) with no stdin and returns its
/// trimmed stdout. A non-zero exit, no output, or running past `timeout` is an error.
pub fn run_command(command: &str, timeout: Duration) -> Result<String, CommandError> {
    let spawn_error = |e: std::io::Error| CommandError::Spawn {
        command: command.to_string(),
        detail: e.to_string(),
    };
    let mut cmd = shell(command);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;

    // Pipes are drained on their own threads so a chatty command cannot block on a full pipe.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());

    let deadline = Instant::now() + timeout;
    let timed_out = || CommandError::TimedOut {
        command: command.to_string(),
        after: timeout,
    };
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(spawn_error)? {
            break status;
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(&mut child);
            return Err(timed_out());
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    };

    // A background process the command started may hold the pipes open; never wait past the
    // deadline for them.
    let remaining = deadline.saturating_duration_since(Instant::now());
    let out = stdout.recv_timeout(remaining).map_err(|_| timed_out())?;
    if !status.success() {
        let err = stderr
            .recv_timeout(Duration::from_millis(100))
            .unwrap_or_default();
        return Err(CommandError::Failed {
            command: command.to_string(),
            status: match status.code() {
                Some(code) => format!("exit code {code}"),
                None => "a signal".to_string(),
            },
            stderr: excerpt(&String::from_utf8_lossy(&err)),
        });
    }
    let value = String::from_utf8_lossy(&out).trim().to_string();
    if value.is_empty() {
        return Err(CommandError::Empty {
            command: command.to_string(),
        });
    }
    Ok(value)
}

/// Kills the command's whole process group (it leads its own), then reaps it.
fn kill_group(child: &mut std::process::Child) {
    process_group::signal(child.id(), process_group::Signal::Kill);
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(not(windows))]
fn shell(command: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command);
    cmd
}

#[cfg(windows)]
fn shell(command: &str) -> Command {
    let mut cmd = Command::new("cmd");
    cmd.arg("/C").arg(command);
    cmd
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        let _ = tx.send(buf);
    });
    rx
}

fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(STDERR_EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn some_env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("t0k".to_string()),
            "A_1" => Some("a".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn templates_expand_variables_like_pi() {
        let t = |raw: &str| resolve_template(raw, &some_env, DEFAULT_COMMAND_TIMEOUT);
        assert_eq!(t("Bearer ${TOKEN}").unwrap(), "Bearer t0k");
        assert_eq!(t("$TOKEN-$A_1/x").unwrap(), "t0k-a/x");
        assert_eq!(t("plain").unwrap(), "plain");
        assert_eq!(t("cost $$5, $!bang").unwrap(), "cost $5, !bang");
        // Not variable references: kept as written.
        assert_eq!(
            t("${not valid} $1 ${open").unwrap(),
            "${not valid} $1 ${open"
        );
        assert_eq!(t("end$").unwrap(), "end$");
        assert_eq!(
            t("${MISSING} ${EMPTY} $MISSING").unwrap_err().to_string(),
            "environment variables MISSING, EMPTY are not set"
        );
        assert_eq!(
            t("x${NOPE}").unwrap_err(),
            TemplateError::Unset(vec!["NOPE".to_string()])
        );
        assert_eq!(t("!printf ' cmd-out \\n'").unwrap(), "cmd-out");
        assert!(matches!(t("!exit 3"), Err(TemplateError::Command(_))));
    }

    #[test]
    fn a_command_value_yields_trimmed_stdout() {
        let v = resolve_config_value(
            "!printf '  sk-cmd \\n\\n'",
            &no_env,
            DEFAULT_COMMAND_TIMEOUT,
        );
        assert_eq!(v.unwrap(), "sk-cmd");
    }

    #[test]
    fn a_failing_command_reports_exit_code_and_stderr_but_not_stdout() {
        let err = run_command(
            "printf 'sk-%s' secret; echo 'vault locked' >&2; exit 1",
            DEFAULT_COMMAND_TIMEOUT,
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("exit code 1"), "{text}");
        assert!(text.contains("vault locked"), "{text}");
        assert!(!text.contains("sk-secret"), "{text}");
    }

    #[test]
    fn a_slow_command_is_stopped_at_the_deadline() {
        let started = Instant::now();
        let err = run_command("sleep 5", Duration::from_millis(200)).unwrap_err();
        assert!(matches!(err, CommandError::TimedOut { .. }), "{err}");
        assert!(err.to_string().contains("200 ms"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "waited for the command"
        );
    }

    #[test]
    fn a_timed_out_command_is_stopped_with_everything_it_started() {
        let dir = tempfile::tempdir().expect("temp dir");
        let pid_file = dir.path().join("pid");
        // The command starts a background sleeper, records its pid and keeps the pipes open.
        let command = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let err = run_command(&command, Duration::from_millis(300)).unwrap_err();
        assert!(matches!(err, CommandError::TimedOut { .. }), "{err}");
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .expect("pid file")
            .trim()
            .parse()
            .expect("a pid");
        let gone = (0..200).any(|_| {
            // SAFETY: signal 0 only checks whether the process exists.
            let alive = unsafe { libc::kill(pid, 0) } == 0
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| s.contains(") Z "));
            if alive {
                std::thread::sleep(Duration::from_millis(10));
            }
            !alive
        });
        assert!(gone, "the background process {pid} survived the timeout");
    }

    #[test]
    fn a_command_value_runs_once_per_process_even_when_it_fails() {
        let dir = tempfile::tempdir().expect("temp dir");
        let count = dir.path().join("count");
        let command = format!("echo run >> {}; exit 3", count.display());
        let raw = format!("!{command}");
        for _ in 0..3 {
            let err = resolve_config_value(&raw, &no_env, DEFAULT_COMMAND_TIMEOUT).unwrap_err();
            assert!(err.to_string().contains("exit code 3"), "{err}");
        }
        assert_eq!(std::fs::read_to_string(&count).expect("count"), "run\n");
    }

    #[test]
    fn a_silent_command_is_an_error() {
        let err = run_command("true", DEFAULT_COMMAND_TIMEOUT).unwrap_err();
        assert!(matches!(err, CommandError::Empty { .. }), "{err}");
    }

    #[test]
    fn a_variable_name_yields_its_value_and_anything_else_is_literal() {
        let env = |name: &str| match name {
            "MY_KEY_VAR" => Some("from-env".to_string()),
            "EMPTY_VAR" => Some(String::new()),
            _ => None,
        };
        let t = DEFAULT_COMMAND_TIMEOUT;
        assert_eq!(
            resolve_config_value("MY_KEY_VAR", &env, t).unwrap(),
            "from-env"
        );
        assert_eq!(
            resolve_config_value("EMPTY_VAR", &env, t).unwrap(),
            "EMPTY_VAR"
        );
        assert_eq!(
            resolve_config_value("sk-literal", &env, t).unwrap(),
            "sk-literal"
        );
    }

    #[test]
    fn keys_that_cannot_be_variable_names_are_not_looked_up() {
        assert_eq!(process_env("abc=="), None);
        assert_eq!(process_env(""), None);
        assert_eq!(process_env("a\0b"), None);
    }

    #[test]
    fn long_stderr_is_cut() {
        let long = "x".repeat(1000);
        assert_eq!(excerpt(&long).chars().count(), STDERR_EXCERPT_CHARS + 1);
    }
}
