//! A real terminal for black-box tests of full-screen programs: each [`Tmux`] is a private tmux
//! server (its own socket in a temp directory, no config file) holding one detached session
//! with one pane, which runs the program under test. Tests type into the pane (`send-keys`),
//! read what it shows (`capture-pane`) and wait for the screen to reach a state; nothing is
//! timed, every wait polls the screen until a predicate holds or a generous guard runs out,
//! and a failed wait reports the whole screen.
//!
//! Why tmux: it is a complete terminal emulator that can be driven and inspected from outside
//! with no display, it answers the queries TUIs send at start-up (device attributes, cursor
//! position), and every key a user can press has a name its `send-keys` accepts. One server
//! per test keeps tests that run in parallel apart and makes cleanup one `kill-server`.
//!
//! The server is set up before its session exists: `history-limit` (200,000 lines, so a long
//! answer scrolled off the screen is still in the pane's history), `default-terminal` (the
//! pane's `TERM`) and `extended-keys always`. `window-size manual` is set right after
//! `new-session`: tmux 3.3a's server crashes when that option is set before any session exists.
//!
//! # The program's exit
//!
//! The pane's own process is a small `/bin/sh` wrapper, not the program: it runs the program
//! as its child, writes its exit status to a file beside the socket and then sleeps, so the
//! pane never dies by itself. tmux 3.3a (Debian's) mishandles a pane whose process exits:
//! measured here, it drops the output the program wrote just before exiting in about one run
//! in three (it closes the terminal on SIGCHLD without reading what is left), and sometimes
//! never collects the exit status at all (`#{pane_dead}` is 1, `#{pane_dead_status}` stays
//! empty, the process a zombie). With the wrapper, the last screen a program leaves is always
//! there to check, and [`Tmux::exit_status`] reads the file. The program is in the wrapper's
//! process group, the terminal's foreground group, so Ctrl+C reaches it as usual; the wrapper
//! catches SIGINT and SIGQUIT (a caught signal is reset to the default in the program, unlike
//! an ignored one) and outlives it. [`Tmux::pane_pid`] is the program's process id.
//!
//! # Keys
//!
//! [`Tmux::send_keys`] takes tmux key names: `Enter`, `Escape`, `Tab`, `BSpace`, `Up`, `Down`,
//! `Left`, `Right`, `Home`, `End`, `PPage`, `NPage`, `F1`..., `C-c`, `C-d`, `M-x`, and
//! modifiers on any key: `C-`, `M-` (Alt/Meta), `S-` (Shift).
//!
//! - Alt+Enter: `M-Enter`; it reaches the program as ESC CR (`\e\r`), which is what terminals
//!   send for Alt+Enter without any keyboard protocol.
//! - Shift+Enter: `S-Enter`. A plain terminal has no byte sequence for it (it sends CR, like
//!   Enter); it needs an extended key encoding. This server sets `extended-keys always`
//!   (tmux ≥ 3.2), so tmux sends every key that has no legacy encoding in the CSI-u form:
//!   Shift+Enter arrives as `\e[13;2u`, Ctrl+Enter as `\e[13;5u`, whatever the program asked
//!   for. pi's TUI reads that as Shift+Enter (newline in its editor), and crossterm's parser as
//!   `KeyCode::Enter` with `KeyModifiers::SHIFT`. With `extended-keys on` instead, tmux 3.3
//!   sends those sequences only after the program turns on xterm's modifyOtherKeys
//!   (`\e[>4;1m` or `\e[>4;2m`), as pi does; tmux 3.3 ignores the kitty keyboard protocol's
//!   push (`\e[>1u`), the only request crossterm makes. Keys that have a legacy encoding keep it
//!   (Enter is `\r`, Ctrl+C is `\x03`, Escape is `\e`, Up is `\e[A`).
//! - Ctrl+J (`C-j`, or a line feed inside [`Tmux::send_text`]) is the newline key that needs no
//!   extended keys at all; pi binds it to "new line" beside Shift+Enter (and Alt+Enter to
//!   "queue a follow-up").
//!
//! Text goes through [`Tmux::send_text`] (`send-keys -l`: each character as a key press, in
//! chunks under tmux's command size limit) and [`Tmux::paste`] (a bracketed paste, as a
//! terminal pastes: the markers are sent only when the program turned bracketed paste on, and
//! line feeds become carriage returns as in a terminal).
//!
//! # Environment
//!
//! The pane's environment is exactly what the test gives ([`Launch::env`]; by default `PATH`
//! and `LANG=C.UTF-8`), plus what tmux itself sets in every pane: `TERM` (from
//! [`Launch::term`]), `TERM_PROGRAM=tmux`, `TERM_PROGRAM_VERSION`, `TMUX` (the socket),
//! `TMUX_PANE`, `SHELL` (the shell tmux runs commands with, `/bin/sh`) and `PWD`. Every
//! argument reaches the program unchanged (the command tmux gives its shell quotes each one),
//! paths with spaces or quotes included.

use std::cell::OnceCell;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::Sandbox;

/// How long a wait may take before the test fails: generous, for a loaded two-core CI machine
/// where a Node program can take seconds to start. A guard only; nothing asserts speed.
pub const WAIT: Duration = Duration::from_secs(30);

/// How often a wait looks at the screen.
const POLL: Duration = Duration::from_millis(25);

/// Lines of scrollback each pane keeps.
pub const HISTORY_LIMIT: u32 = 200_000;

/// The session's name; with one session and one pane, it is also the pane's target.
const SESSION: &str = "harness";

/// The paste buffer [`Tmux::paste`] uses.
const PASTE_BUFFER: &str = "harness-paste";

/// Longest text one `send-keys -l` carries: tmux refuses commands over about 16 KiB.
const SEND_CHUNK: usize = 4096;

/// What a pane shows: one string per row, trailing spaces trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    /// The rows, top to bottom.
    pub lines: Vec<String>,
}

impl Screen {
    fn parse(stdout: &[u8]) -> Screen {
        let text = String::from_utf8_lossy(stdout);
        // capture-pane ends every row with a line feed.
        let lines = text.lines().map(|l| l.trim_end().to_string()).collect();
        Screen { lines }
    }

    /// The rows joined with line feeds.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// True when some row contains `needle` (a needle spanning rows is not found).
    pub fn contains(&self, needle: &str) -> bool {
        self.lines.iter().any(|line| line.contains(needle))
    }

    /// The index of the first row containing `needle`.
    pub fn find(&self, needle: &str) -> Option<usize> {
        self.lines.iter().position(|line| line.contains(needle))
    }
}

impl fmt::Display for Screen {
    /// The rows numbered, between rulers, so a dump shows where the screen starts and ends.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "----- screen ({} rows) -----", self.lines.len())?;
        for (n, line) in self.lines.iter().enumerate() {
            writeln!(f, "{n:>3}|{line}")?;
        }
        write!(f, "----- end of screen -----")
    }
}

/// What to run in the pane and how; [`Launch::start`] starts it.
#[derive(Debug, Clone)]
pub struct Launch {
    argv: Vec<OsString>,
    cwd: PathBuf,
    env: Vec<(OsString, OsString)>,
    width: u16,
    height: u16,
    term: String,
}

impl Launch {
    /// `argv` (program first) in a 120 × 40 pane, in the test's working directory, with `PATH`
    /// and `LANG=C.UTF-8` as its only environment and `TERM=tmux-256color`.
    pub fn new<I, S>(argv: I) -> Launch
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
        assert!(!argv.is_empty(), "Launch::new needs a program to run");
        Launch {
            argv,
            cwd: std::env::current_dir().expect("the test's working directory"),
            env: vec![
                ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
                ("LANG".into(), "C.UTF-8".into()),
            ],
            width: 120,
            height: 40,
            term: "tmux-256color".to_string(),
        }
    }

    /// `argv` in `sandbox`: its project as the working directory, its home as `HOME` and its
    /// agent directory as `PI_CODING_AGENT_DIR` (whose models.json points at the sandbox's mock
    /// LLM), with pi's network features off (`PI_OFFLINE=1`, `PI_TELEMETRY=0`), so Tandem and
    /// pi run against the same world.
    pub fn in_sandbox<I, S>(sandbox: &Sandbox, argv: I) -> Launch
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Launch::new(argv)
            .cwd(&sandbox.cwd)
            .env("HOME", &sandbox.home)
            .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir)
            .env("PI_OFFLINE", "1")
            .env("PI_TELEMETRY", "0")
    }

    /// The `tandem` binary under test with `args`, in `sandbox` (see [`Launch::in_sandbox`]).
    pub fn tandem(sandbox: &Sandbox, args: &[&str]) -> Launch {
        let mut argv = vec![OsString::from(env!("CARGO_BIN_EXE_tandem"))];
        argv.extend(args.iter().map(OsString::from));
        Launch::in_sandbox(sandbox, argv)
    }

    /// The pane's size in columns and rows.
    pub fn size(mut self, width: u16, height: u16) -> Launch {
        self.width = width;
        self.height = height;
        self
    }

    /// The program's working directory.
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Launch {
        self.cwd = dir.as_ref().to_path_buf();
        self
    }

    /// Sets (or replaces) one environment variable of the program.
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Launch {
        let name = name.as_ref().to_os_string();
        self.env.retain(|(n, _)| *n != name);
        self.env.push((name, value.as_ref().to_os_string()));
        self
    }

    /// Removes one environment variable (e.g. `PATH`) from the program's environment.
    pub fn env_remove(mut self, name: impl AsRef<OsStr>) -> Launch {
        self.env.retain(|(n, _)| n != name.as_ref());
        self
    }

    /// The pane's `TERM` (tmux's `default-terminal`): `tmux-256color` unless set.
    pub fn term(mut self, term: &str) -> Launch {
        self.term = term.to_string();
        self
    }

    /// Starts a private tmux server whose one pane runs the program; panics when tmux cannot
    /// start (not installed: run `scripts/install-tmux`).
    pub fn start(self) -> Tmux {
        let dir = tempfile::Builder::new()
            .prefix("tmux-harness")
            .tempdir()
            .expect("a temp directory for the tmux socket");
        let socket = dir.path().join("sock");
        let status_file = dir.path().join("exit-status");
        let mut tmux = Tmux {
            socket,
            status_file,
            wrapper: None,
            program: OnceCell::new(),
            _dir: dir,
        };
        let width = self.width.to_string();
        let height = self.height.to_string();
        let history = HISTORY_LIMIT.to_string();
        let mut wrapper_argv: Vec<OsString> = vec![
            "/bin/sh".into(),
            "-c".into(),
            WRAPPER.into(),
            "tmux-harness".into(),
            tmux.status_file.clone().into_os_string(),
        ];
        wrapper_argv.extend(self.argv.iter().cloned());
        let command = shell_command(&wrapper_argv);
        let mut args: Vec<OsString> = Vec::new();
        for part in [
            &["start-server", ";"][..],
            &["set", "-g", "history-limit", &history, ";"],
            &["set", "-g", "default-shell", "/bin/sh", ";"],
            &["set", "-g", "default-terminal", &self.term, ";"],
            &["set", "-g", "escape-time", "0", ";"],
            &["set", "-s", "extended-keys", "always", ";"],
            &[
                "new-session",
                "-d",
                "-s",
                SESSION,
                "-x",
                &width,
                "-y",
                &height,
                "-c",
            ],
        ] {
            args.extend(part.iter().map(OsString::from));
        }
        args.push(self.cwd.clone().into_os_string());
        args.push("--".into());
        args.push(command);
        for part in [";", "set", "-wg", "window-size", "manual"] {
            args.push(part.into());
        }
        // The server's own environment becomes the pane's: only what the launch names.
        let mut cmd = tmux.command();
        cmd.args(&args).envs(self.env.iter().map(|(n, v)| (n, v)));
        let output = run(cmd, None);
        if !output.status.success() {
            panic!(
                "tmux could not start {:?} in {} (is tmux ≥ 3.2 installed? scripts/install-tmux \
                 installs it): {}",
                self.argv,
                self.cwd.display(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        tmux.wrapper = tmux
            .format("#{pane_pid}")
            .parse()
            .ok()
            .filter(|&pid: &i32| pid > 0)
            .and_then(|pid| Some((pid, proc_stat(pid)?.start_time)));
        tmux
    }
}

/// The pane's process: runs the program (`$2...`), writes its exit status to the file `$1`
/// (128 + the signal number when a signal ended it), then sleeps until the server ends.
const WRAPPER: &str = "status_file=$1; shift; trap : INT QUIT; \"$@\"; \
                       echo $? >\"$status_file\"; exec sleep 2147483647";

/// One private tmux server and the pane of the program under test. Dropping it kills the
/// pane's session (the wrapper, the program and whatever they started) and the server, and
/// removes the socket.
pub struct Tmux {
    socket: PathBuf,
    status_file: PathBuf,
    /// The pane's process (the wrapper) and its start time, which tells it from a later
    /// process given the same id.
    wrapper: Option<(i32, u64)>,
    /// The program's process id, once found.
    program: OnceCell<i32>,
    // Holds the socket; removed on drop, after the server is gone.
    _dir: tempfile::TempDir,
}

impl Tmux {
    /// The server's socket (each test's own, under a temp directory).
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Presses keys, given by tmux key names (`Enter`, `C-c`, `M-Enter`, `S-Enter`, `Up`...;
    /// see the module docs).
    pub fn send_keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys".to_string(), "-t".into(), SESSION.into()];
        args.extend(keys.iter().map(|k| escape_final_semicolon(k)));
        self.tmux_ok(&args);
    }

    /// Types `text` literally, character by character (`send-keys -l`): `-`, `;`, quotes,
    /// backslashes and any Unicode arrive as themselves; a line feed arrives as a line feed
    /// (Ctrl+J), not as Enter.
    pub fn send_text(&self, text: &str) {
        for chunk in chunks(text, SEND_CHUNK) {
            let args = [
                "send-keys".to_string(),
                "-t".into(),
                SESSION.into(),
                "-l".into(),
                "--".into(),
                escape_final_semicolon(chunk),
            ];
            self.tmux_ok(&args);
        }
    }

    /// Pastes `text` as a terminal does: wrapped in bracketed-paste markers when the program
    /// turned bracketed paste on (`\e[?2004h`), with line feeds sent as carriage returns.
    pub fn paste(&self, text: &str) {
        let load = ["load-buffer", "-b", PASTE_BUFFER, "-"];
        let mut cmd = self.command();
        cmd.args(load);
        let output = run(cmd, Some(text.as_bytes()));
        self.check(&load.map(String::from), &output);
        self.tmux_ok(&[
            "paste-buffer",
            "-d",
            "-p",
            "-b",
            PASTE_BUFFER,
            "-t",
            SESSION,
        ]);
    }

    /// Resizes the pane (the program gets SIGWINCH).
    pub fn resize(&self, width: u16, height: u16) {
        self.tmux_ok(&[
            "resize-window",
            "-t",
            SESSION,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    /// The visible screen.
    pub fn capture(&self) -> Screen {
        self.capture_with(&[])
    }

    /// The visible screen with its escape sequences (colours and attributes as SGR sequences),
    /// for assertions on style.
    pub fn capture_styled(&self) -> Screen {
        self.capture_with(&["-e"])
    }

    /// The whole pane: every line of its scrollback (up to [`HISTORY_LIMIT`]), then the screen.
    /// A line the program wrapped at the pane's width is several rows.
    pub fn capture_history(&self) -> Screen {
        self.capture_with(&["-S", "-", "-E", "-"])
    }

    fn capture_with(&self, extra: &[&str]) -> Screen {
        let mut args = vec!["capture-pane", "-p", "-t", SESSION];
        args.extend_from_slice(extra);
        Screen::parse(&self.tmux_ok(&args).stdout)
    }

    /// The cursor's column and row, from 0 at the top left of the screen.
    pub fn cursor(&self) -> (u16, u16) {
        let text = self.format("#{cursor_x} #{cursor_y}");
        let parse = |s: Option<&str>| s.and_then(|s| s.parse().ok());
        let mut parts = text.split(' ');
        match (parse(parts.next()), parse(parts.next())) {
            (Some(x), Some(y)) => (x, y),
            _ => panic!("tmux gave no cursor position: {text:?}"),
        }
    }

    /// The pane's size in columns and rows.
    pub fn size(&self) -> (u16, u16) {
        let text = self.format("#{pane_width} #{pane_height}");
        let mut parts = text.split(' ').map(|s| s.parse().ok());
        match (parts.next().flatten(), parts.next().flatten()) {
            (Some(w), Some(h)) => (w, h),
            _ => panic!("tmux gave no pane size: {text:?}"),
        }
    }

    /// The program's process id (the wrapper's child); waits for the wrapper to start it, and
    /// panics when the program has already exited before it was looked up.
    pub fn pane_pid(&self) -> i32 {
        *self.program.get_or_init(|| {
            let (wrapper, _) = self
                .wrapper
                .unwrap_or_else(|| panic!("tmux gave no pane pid (socket {:?})", self.socket));
            let deadline = Instant::now() + WAIT;
            loop {
                let child = pids().find(|&pid| proc_stat(pid).is_some_and(|s| s.ppid == wrapper));
                // The wrapper writes the status file before its `exec sleep`, and has no other
                // child: a child seen while the file is absent is the program.
                if self.status_file.exists() {
                    panic!("the program exited before its pid was looked up");
                }
                if let Some(pid) = child {
                    return pid;
                }
                assert!(
                    Instant::now() < deadline,
                    "the pane's wrapper (pid {wrapper}) started no program within {WAIT:?}"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    }

    /// `None` while the program runs; once it has exited, its exit code, or 128 + the signal
    /// number when a signal ended it (as shells report it).
    pub fn exit_status(&self) -> Option<i32> {
        let text = std::fs::read_to_string(&self.status_file).ok()?;
        // The wrapper's `echo` may be half-written: only a whole line counts.
        text.strip_suffix('\n')?.parse().ok()
    }

    /// Polls the screen until `ready` holds for it and returns that screen; after `timeout`,
    /// an error naming `what` with the last screen and, if the program has exited, its status.
    pub fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        mut ready: impl FnMut(&Screen) -> bool,
    ) -> Result<Screen, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.capture();
            if ready(&screen) {
                return Ok(screen);
            }
            if Instant::now() >= deadline {
                let status = match self.exit_status() {
                    Some(code) => format!("the program exited with status {code}"),
                    None => "the program is still running".to_string(),
                };
                return Err(format!(
                    "timed out after {timeout:?} waiting for {what} ({status})\n{screen}"
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// [`Tmux::wait_for`] some row containing `needle`, within [`WAIT`].
    pub fn wait_for_text(&self, needle: &str) -> Result<Screen, String> {
        self.wait_for(&format!("{needle:?} on the screen"), WAIT, |s| {
            s.contains(needle)
        })
    }

    /// Waits (within `timeout`) for the program to exit; its status as [`Tmux::exit_status`]
    /// gives it, or an error with the screen.
    pub fn wait_for_exit(&self, timeout: Duration) -> Result<i32, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(code) = self.exit_status() {
                return Ok(code);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "timed out after {timeout:?} waiting for the program to exit\n{}",
                    self.capture()
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// A tmux format (`#{...}`) expanded for the pane, e.g. `#{pane_current_command}`.
    pub fn format(&self, format: &str) -> String {
        let output = self.tmux_ok(&["display-message", "-p", "-t", SESSION, format]);
        String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_string()
    }

    /// A tmux client command on this server, with an empty environment.
    fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.env_clear()
            .arg("-u")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg("/dev/null");
        cmd
    }

    /// Runs one tmux command; panics with tmux's message when it fails.
    fn tmux_ok<S: AsRef<str>>(&self, args: &[S]) -> Output {
        let mut cmd = self.command();
        cmd.args(args.iter().map(AsRef::as_ref));
        let output = run(cmd, None);
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
        self.check(&args, &output);
        output
    }

    fn check(&self, args: &[String], output: &Output) {
        if !output.status.success() {
            panic!(
                "tmux {args:?} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // SIGKILL to every process of the pane's session first (the wrapper, the program and
        // whatever they started, in any process group): the wrapper never exits by itself, so
        // while its start time matches, the session id is still that session's. Then
        // kill-server ends the server.
        if let Some((wrapper, started)) = self.wrapper {
            if proc_stat(wrapper).map(|s| s.start_time) == Some(started) {
                for pid in
                    pids().filter(|&pid| proc_stat(pid).is_some_and(|s| s.session == wrapper))
                {
                    // SAFETY: kill(2) on a process of the session this harness created.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
        let mut cmd = self.command();
        cmd.arg("kill-server");
        let _ = run(cmd, None);
    }
}

/// What the harness reads of `/proc/<pid>/stat`.
struct ProcStat {
    ppid: i32,
    session: i32,
    /// Clock ticks after boot.
    start_time: u64,
}

fn proc_stat(pid: i32) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end. Field 3
    // (the state) is then the first.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    Some(ProcStat {
        ppid: fields.get(1)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

/// Every process id in `/proc`.
fn pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
}

/// Runs a tmux client, feeding `stdin` when given.
fn run(mut cmd: Command, stdin: Option<&[u8]>) -> Output {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run tmux ({e}): install it with scripts/install-tmux"));
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(bytes).expect("writes tmux's stdin");
    }
    child.wait_with_output().expect("waits for tmux")
}

/// `exec 'arg0' 'arg1' ...` for tmux's `/bin/sh -c`: every argument single-quoted (a quote inside
/// becomes `'\''`), so spaces, quotes, `$` and `;` reach the program unchanged.
fn shell_command(argv: &[OsString]) -> OsString {
    let mut out = b"exec".to_vec();
    for arg in argv {
        out.extend_from_slice(b" '");
        for &byte in arg.as_bytes() {
            if byte == b'\'' {
                out.extend_from_slice(b"'\\''");
            } else {
                out.push(byte);
            }
        }
        out.push(b'\'');
    }
    OsString::from_vec(out)
}

/// tmux reads an argument ending in `;` as the end of a command (and drops the `;`); ending it
/// with `\;` instead keeps the `;` as text.
fn escape_final_semicolon(arg: &str) -> String {
    match arg.strip_suffix(';') {
        Some(rest) => format!("{rest}\\;"),
        None => arg.to_string(),
    }
}

/// `text` cut into pieces of at most `max` bytes, on character boundaries.
fn chunks(text: &str, max: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(max);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}
