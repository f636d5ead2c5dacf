//! The terminal harness of the interactive-mode tests (`support::tmux`), checked against small
//! programs whose screen shows exactly what reached them (`cat -vT` on a raw terminal, `stty
//! size`, `env`), and against a real TUI, pi 1.6's (installed by `scripts/install-pi16`),
//! talking to the mock LLM.
//!
//! Every wait polls the screen with a generous guard; nothing here is timed.

mod support;
// Only `pi16_bin` is used here; the rest serves pi_interop.
#[allow(dead_code)]
mod support_pi;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use support::tmux::{Launch, Screen, Tmux, WAIT};
use support::{Sandbox, MODEL};
use tandem_tests::wire::{Turn, WireApi};

/// `script` run by `/bin/sh -c` in an 80 × 24 pane.
fn sh(script: &str) -> Launch {
    Launch::new(["/bin/sh", "-c", script]).size(80, 24)
}

/// A program that puts its terminal in raw mode, says `ready`, then shows every byte it reads
/// as `cat -vT` writes it (`^[` for ESC, `^M` for CR, `^C` for Ctrl+C, `^I` for Tab), all on
/// the row below.
fn raw_echo(before: &str) -> Tmux {
    let tmux = sh(&format!(
        "{before} stty raw -echo; printf 'ready\\r\\n'; exec cat -vT"
    ))
    .start();
    tmux.wait_for_text("ready").unwrap();
    tmux
}

/// Waits until the row under `ready` ends with `END` and returns that row.
fn echoed_row(tmux: &Tmux) -> String {
    let screen = tmux
        .wait_for("the echoed input ending in END", WAIT, |s| {
            s.lines.get(1).is_some_and(|row| row.ends_with("END"))
        })
        .unwrap();
    screen.lines[1].clone()
}

#[test]
fn text_the_program_prints_appears_on_the_screen() {
    let tmux = sh("printf 'hello from the pane\\n'; exec cat").start();
    let screen = tmux.wait_for_text("hello from the pane").unwrap();
    assert_eq!(screen.lines[0], "hello from the pane");
    assert_eq!(screen.lines.len(), 24, "{screen}");
    assert_eq!(tmux.size(), (80, 24));
    assert_eq!(tmux.exit_status(), None, "cat is still running");
}

#[test]
fn keys_arrive_as_a_terminal_sends_them() {
    let tmux = raw_echo("");
    for key in [
        "Enter", "Escape", "C-c", "C-d", "Tab", "BSpace", "Up", "Down", "M-Enter", "S-Enter",
        "C-Enter", "M-x",
    ] {
        tmux.send_keys(&[key]);
        tmux.send_text("|");
    }
    tmux.send_text("END");
    assert_eq!(
        echoed_row(&tmux),
        // Enter, Escape, Ctrl+C, Ctrl+D, Tab, Backspace, Up, Down, Alt+Enter (ESC CR),
        // Shift+Enter and Ctrl+Enter (CSI-u, from `extended-keys always`), Alt+X.
        "^M|^[|^C|^D|^I|^?|^[[A|^[[B|^[^M|^[[13;2u|^[[13;5u|^[x|END"
    );
}

#[test]
fn text_is_typed_literally_whatever_tmux_would_parse_in_it() {
    let dir = tempfile::tempdir().unwrap();
    // Pieces tmux's command parser would otherwise eat: a lone `;` or a final `;` ends a
    // command, `\;` is an escaped one, a leading `-` looks like a flag.
    let pieces = [
        ";",
        "a;",
        "\\;",
        "-x",
        "--",
        " -- ;",
        "'single' \"double\" back\\slash $HOME `date` #{pane_id}",
        "é 漢字 🙂",
    ];
    // Longer than one send-keys command may carry, with multi-byte characters across the cuts.
    let long = "é;".repeat(5000);
    let expected: String = pieces.concat() + &long;
    let tmux = sh(&format!(
        "stty raw -echo; printf 'ready\\r\\n'; head -c {} > typed; printf 'got it\\r\\n'; exec cat",
        expected.len()
    ))
    .cwd(dir.path())
    .start();
    tmux.wait_for_text("ready").unwrap();
    for piece in pieces {
        tmux.send_text(piece);
    }
    tmux.send_text(&long);
    tmux.wait_for_text("got it").unwrap();
    let typed = std::fs::read_to_string(dir.path().join("typed")).unwrap();
    assert_eq!(typed, expected);
}

#[test]
fn a_paste_is_bracketed_when_the_program_asks_for_it() {
    let tmux = raw_echo("printf '\\033[?2004h';");
    tmux.paste("one\ntwo -x;");
    tmux.send_text("END");
    assert_eq!(echoed_row(&tmux), "^[[200~one^Mtwo -x;^[[201~END");
}

#[test]
fn a_paste_is_plain_text_when_the_program_did_not_ask_for_brackets() {
    let tmux = raw_echo("");
    tmux.paste("one\ntwo");
    tmux.send_text("END");
    assert_eq!(echoed_row(&tmux), "one^MtwoEND");
}

#[test]
fn resizing_changes_the_size_the_program_sees() {
    let tmux = sh("last=; while :; do s=$(stty size); \
         if [ \"$s\" != \"$last\" ]; then echo \"size $s\"; last=$s; fi; sleep 0.05; done")
    .start();
    tmux.wait_for_text("size 24 80").unwrap();
    tmux.resize(100, 30);
    let screen = tmux.wait_for_text("size 30 100").unwrap();
    assert_eq!(tmux.size(), (100, 30));
    assert_eq!(screen.lines.len(), 30, "{screen}");
    tmux.resize(50, 10);
    tmux.wait_for_text("size 10 50").unwrap();
}

#[test]
fn the_history_keeps_lines_scrolled_off_the_screen() {
    // Far more than tmux's default history-limit (2,000 lines).
    let tmux = sh("seq 1 10000; echo done; exec cat").start();
    let screen = tmux.wait_for_text("done").unwrap();
    assert!(!screen.lines.iter().any(|l| l == "1"), "{screen}");
    let history = tmux.capture_history();
    assert_eq!(history.lines[0], "1");
    assert_eq!(history.lines[9999], "10000");
    assert_eq!(history.lines[10000], "done");
}

#[test]
fn the_styled_capture_keeps_colours() {
    let tmux = sh("printf '\\033[1;31mred\\033[0m plain\\n'; exec cat").start();
    let screen = tmux.wait_for_text("red plain").unwrap();
    assert_eq!(screen.lines[0], "red plain");
    let styled = tmux.capture_styled();
    let row = &styled.lines[0];
    assert!(
        row.contains("\u{1b}[1m") && row.contains("31m") && row.contains("red"),
        "{row:?}"
    );
}

#[test]
fn the_cursor_position_is_the_programs() {
    let tmux = sh("printf 'ab\\ncde'; exec cat").start();
    tmux.wait_for_text("cde").unwrap();
    assert_eq!(tmux.cursor(), (3, 1));
}

#[test]
fn the_exit_status_is_readable_after_the_program_exits() {
    let tmux = sh("echo bye; exit 7").start();
    assert_eq!(tmux.wait_for_exit(WAIT), Ok(7));
    assert_eq!(tmux.exit_status(), Some(7));
    // The pane stays, with what the program left on it.
    assert_eq!(tmux.capture().lines[0], "bye");

    let killed = sh("kill -TERM $$").start();
    assert_eq!(killed.wait_for_exit(WAIT), Ok(128 + 15));
}

#[test]
fn everything_a_program_prints_before_it_exits_stays_on_the_screen() {
    // tmux 3.3a alone drops the tail of such output about one time in three; the pane's
    // wrapper keeps the terminal open until it is read. Several runs, to meet that race.
    for _ in 0..8 {
        let tmux = sh("seq 1 3000; exit 3").start();
        assert_eq!(tmux.wait_for_exit(WAIT), Ok(3));
        let last = tmux
            .wait_for("the last number", WAIT, |s| s.contains("3000"))
            .unwrap();
        assert_eq!(last.lines[22], "3000", "{last}");
        let history = tmux.capture_history();
        assert_eq!(history.lines[0], "1");
        assert_eq!(history.lines[2999], "3000");
    }
}

#[test]
fn ctrl_c_interrupts_a_program_on_a_cooked_terminal() {
    let tmux = sh("echo ready; exec cat").start();
    tmux.wait_for_text("ready").unwrap();
    tmux.send_keys(&["C-c"]);
    assert_eq!(tmux.wait_for_exit(WAIT), Ok(128 + 2));
}

#[test]
fn the_program_gets_only_the_environment_and_arguments_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let spaced = dir.path().join("dir with 'space'");
    std::fs::create_dir(&spaced).unwrap();
    let script = spaced.join("print args.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf '[%s]\\n' \"$@\"; pwd; env | sort; echo END; exec cat\n",
    )
    .unwrap();
    make_executable(&script);
    let tmux = Launch::new([
        script.as_os_str(),
        "a b".as_ref(),
        "it's".as_ref(),
        "$HOME".as_ref(),
        ";".as_ref(),
        "-x".as_ref(),
    ])
    .cwd(&spaced)
    .env("MARKER", "value with spaces")
    .env("PATH", "/usr/bin:/bin")
    .size(100, 40)
    .start();
    let screen = tmux.wait_for_text("END").unwrap();
    assert_eq!(
        screen.lines[..6],
        [
            "[a b]".to_string(),
            "[it's]".into(),
            "[$HOME]".into(),
            "[;]".into(),
            "[-x]".into(),
            spaced.to_str().unwrap().into(),
        ],
        "{screen}"
    );
    let env: Vec<&str> = screen.lines[6..]
        .iter()
        .take_while(|l| *l != "END")
        .map(String::as_str)
        .collect();
    assert!(env.contains(&"MARKER=value with spaces"), "{screen}");
    assert!(env.contains(&"TERM=tmux-256color"), "{screen}");
    assert!(env.contains(&"LANG=C.UTF-8"), "{screen}");
    let names: BTreeSet<&str> = env.iter().filter_map(|l| l.split('=').next()).collect();
    let allowed: BTreeSet<&str> = [
        "LANG",
        "MARKER",
        "PATH",
        "PWD",
        "SHELL",
        "TERM",
        "TERM_PROGRAM",
        "TERM_PROGRAM_VERSION",
        "TMUX",
        "TMUX_PANE",
    ]
    .into();
    assert!(
        names.is_subset(&allowed),
        "variables the launch did not name: {:?}",
        names.difference(&allowed).collect::<Vec<_>>()
    );
}

#[test]
fn a_failed_wait_reports_the_screen() {
    let tmux = sh("echo something else; exec cat").start();
    tmux.wait_for_text("something else").unwrap();
    let error = tmux
        .wait_for("a word that never comes", Duration::from_millis(100), |s| {
            s.contains("never")
        })
        .unwrap_err();
    assert!(error.contains("a word that never comes"), "{error}");
    assert!(error.contains("the program is still running"), "{error}");
    assert!(error.contains("  0|something else"), "{error}");
}

/// Waits until no process has `socket` on its command line and `pid` is gone.
fn assert_all_gone(socket: &Path, pid: i32) {
    assert!(!socket.exists(), "the socket {socket:?} is still there");
    let deadline = Instant::now() + WAIT;
    loop {
        let server = std::process::Command::new("pgrep")
            .arg("-f")
            .arg(socket)
            .output()
            .expect("runs pgrep");
        let pane_alive = Path::new(&format!("/proc/{pid}")).exists();
        if server.stdout.is_empty() && !pane_alive {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "left behind: tmux server pids {:?}, pane process {pid} alive: {pane_alive}",
            String::from_utf8_lossy(&server.stdout)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn dropping_the_harness_ends_the_server_the_program_and_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    // The program ignores hangups, and starts a job in a process group of its own (`set -m`),
    // as an agent runs a tool.
    let tmux = sh("trap '' HUP; set -m; sleep 1000 & echo $! > job; echo ready; exec sleep 1000")
        .cwd(dir.path())
        .start();
    tmux.wait_for_text("ready").unwrap();
    let job: i32 = std::fs::read_to_string(dir.path().join("job"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let (socket, pid) = (tmux.socket().to_path_buf(), tmux.pane_pid());
    drop(tmux);
    assert_all_gone(&socket, pid);
    assert_all_gone(&socket, job);
}

#[test]
fn a_test_that_panics_leaves_no_tmux_behind() {
    let mut started = None;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let tmux = sh("echo ready; exec cat").start();
        started = Some((tmux.socket().to_path_buf(), tmux.pane_pid()));
        tmux.wait_for_text("ready").unwrap();
        panic!("the test failed");
    }));
    assert!(result.is_err());
    let (socket, pid) = started.expect("the session started");
    assert_all_gone(&socket, pid);
}

/// pi's TUI is ready: its editor (between two rules) and its footer naming the model.
fn pi_ready(screen: &Screen) -> bool {
    let rules = screen
        .lines
        .iter()
        .filter(|l| l.starts_with("────"))
        .count();
    rules >= 2 && screen.lines.iter().any(|l| l.ends_with("mock-model"))
}

#[test]
fn pi_16s_tui_takes_shift_enter_as_a_newline_and_shows_the_answer() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("The answer.\n\nLAST LINE OF THE ANSWER"));
    let pi = support_pi::pi16_bin();
    let tmux = Launch::in_sandbox(
        &sandbox,
        [pi.as_os_str(), "--model".as_ref(), MODEL.as_ref()],
    )
    .start();
    tmux.wait_for("pi's editor and footer", WAIT, pi_ready)
        .unwrap();

    tmux.send_text("first line");
    tmux.send_keys(&["S-Enter"]);
    tmux.send_text("second line");
    tmux.wait_for("two lines in pi's editor", WAIT, |s| {
        s.find("second line")
            .is_some_and(|row| row > 0 && s.lines[row - 1].contains("first line"))
    })
    .unwrap();
    tmux.send_keys(&["Enter"]);
    tmux.wait_for_text("LAST LINE OF THE ANSWER").unwrap();

    let requests = sandbox.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].json().unwrap();
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(
        support::content_text(&last["content"], ""),
        "first line\nsecond line"
    );

    // Ctrl+D on an empty editor quits.
    tmux.wait_for("pi idle again", WAIT, pi_ready).unwrap();
    tmux.send_keys(&["C-d"]);
    assert_eq!(tmux.wait_for_exit(WAIT), Ok(0));
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    permissions.set_mode(0o755);
    std::fs::set_permissions(path, permissions).unwrap();
}
