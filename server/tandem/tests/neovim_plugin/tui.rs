//! The plugin as a user sees it: Neovim's own TUI in a real terminal (a private tmux server,
//! `support::tmux`) at 80 and 120 columns, a user's init.lua (editors/neovim/tests/tui_init.lua:
//! the plugin set up, nothing else; Neovim's own vim.ui.select and vim.notify), against
//! `tandem lsp` and the mock model. The test types `:TandemAsk`, answers Neovim's own picker
//! (inputlist()) by typing the number of Apply, then of Allow, as a user does, and reads the
//! screen (capture-pane).
//!
//! The conversation (fixtures `tui-edit.sse`, `tui-bash.sse`, `tui-answer.sse`), in a project
//! whose file is deep in folders ([`FILE`], open in Neovim): the fix of that file, confirmed; a
//! long command that prints 34 lines with colours, a progress line rewritten with `\r` and a
//! long path, allowed; then an answer in markdown whose first line is a heading with emphasis,
//! code and a link.
//!
//! Every wait polls the screen until what it waits for is there; a hit-enter ("Press ENTER or
//! type command to continue") or more ("-- More --") prompt seen on the way is recorded with
//! its screen and answered with Enter, so that the conversation goes on and each test checks
//! its own part of it.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tandem_tests::wire::WireApi;

use crate::support::tmux::{Launch, Screen, Tmux};
use crate::support::{Sandbox, MODEL};
use crate::{fixture, nvim, BUGGY};

/// How long one wait may take (a guard; a loaded two-core machine is slow).
const WAIT: Duration = Duration::from_secs(90);

/// The prompts that stop Neovim until a key is pressed.
const HIT_ENTER: &str = "Press ENTER or type command to continue";
const MORE: &str = "-- More --";

/// What inputlist() (Neovim's own vim.ui.select) shows under its items.
const PICKER: &str = "Type number and <Enter>";

/// The file the model fixes (`tui-edit.sse`): its path is longer than the command line at 120
/// columns, as paths in real projects are.
pub const FILE: &str =
    "services/analytics/reporting/statistics/aggregations/rolling_windows/implementations/average.py";

/// The plugin under test: editors/neovim, or `TANDEM_NVIM_PLUGIN` (another copy of it, e.g. the
/// plugin of an earlier commit, to see these tests fail without a fix).
fn plugin() -> PathBuf {
    std::env::var_os("TANDEM_NVIM_PLUGIN")
        .map(PathBuf::from)
        .unwrap_or_else(crate::plugin_dir)
}

/// The command the model runs (`tui-bash.sse`): the arguments of its one tool call.
pub fn command() -> String {
    let sse = std::fs::read_to_string(fixture("tui-bash.sse")).expect("tui-bash.sse");
    let mut arguments = String::new();
    for line in sse.lines() {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        if let Some(piece) =
            chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
        {
            arguments.push_str(piece);
        }
    }
    let arguments: Value = serde_json::from_str(&arguments).expect("the call's arguments");
    arguments["command"]
        .as_str()
        .expect("a command")
        .to_string()
}

/// A conversation in Neovim in a terminal, and what the screen showed on the way.
pub struct Conversation {
    pub tmux: Tmux,
    pub width: u16,
    /// The screen while the picker asked to apply the edit.
    pub edit_question: Screen,
    /// The screen while the picker asked to run the command.
    pub command_question: Screen,
    /// The screen once the run ended (the command line says "Tandem: done").
    pub end: Screen,
    /// Every hit-enter or more prompt, with the step it came in.
    pub prompts: Vec<(String, Screen)>,
    _sandbox: Sandbox,
}

impl Conversation {
    /// Starts Neovim `width` × `height` on [`FILE`] and goes through the whole conversation.
    pub fn run(width: u16, height: u16) -> Conversation {
        let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
        let file = sandbox.cwd.join(FILE);
        std::fs::create_dir_all(file.parent().expect("a folder")).unwrap();
        std::fs::write(&file, BUGGY).unwrap();
        for name in ["tui-edit.sse", "tui-bash.sse", "tui-answer.sse"] {
            sandbox.mock.enqueue_file(fixture(name)).unwrap();
        }
        let plugin = plugin();
        let tmux = Launch::in_sandbox(
            &sandbox,
            [
                nvim().into_os_string(),
                "--clean".into(),
                "-u".into(),
                plugin.join("tests/tui_init.lua").into_os_string(),
                FILE.into(),
            ],
        )
        .env("XDG_CONFIG_HOME", sandbox.home.join("config"))
        .env("XDG_DATA_HOME", sandbox.home.join("data"))
        .env("XDG_STATE_HOME", sandbox.home.join("state"))
        .env("XDG_CACHE_HOME", sandbox.home.join("cache"))
        .env("TANDEM_PLUGIN", &plugin)
        .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
        .env("TANDEM_AGENT_DIR", &sandbox.agent_dir)
        .env("TANDEM_MODEL", MODEL)
        .size(width, height)
        .start();
        let mut c = Conversation {
            tmux,
            width,
            edit_question: Screen { lines: Vec::new() },
            command_question: Screen { lines: Vec::new() },
            end: Screen { lines: Vec::new() },
            prompts: Vec::new(),
            _sandbox: sandbox,
        };
        c.wait("the file open", |s| s.contains("len(valus)"));
        c.tmux
            .send_text(":TandemAsk Fix the typo, then run the checks");
        c.tmux.send_keys(&["Enter"]);

        c.edit_question = c.wait("the picker asking to apply the edit", |s| {
            s.contains(PICKER) && s.contains("1: Apply")
        });
        c.choose("Apply");
        c.command_question = c.wait("the picker asking to run the command", |s| {
            s.contains(PICKER) && s.contains("1: Allow")
        });
        c.choose("Allow");
        // The progress end (the command line) and the chat's events are separate streams:
        // the chat may draw the call's end a moment after the command line says done.
        c.end = c.wait("the end of the run in the command line and the chat", |s| {
            s.lines
                .last()
                .is_some_and(|l| l.starts_with("Tandem: done"))
                && s.contains("✓ Run")
        });
        c
    }

    /// Polls the screen until `ready` holds; a hit-enter or more prompt on the way is recorded
    /// and answered with Enter. Panics with the screen after [`WAIT`].
    pub fn wait(&mut self, what: &str, mut ready: impl FnMut(&Screen) -> bool) -> Screen {
        let mut prompts = Vec::new();
        let result = self.tmux.wait_for(what, WAIT, |s| {
            if s.contains(HIT_ENTER) || s.contains(MORE) {
                if prompts.last() != Some(s) {
                    prompts.push(s.clone());
                }
                self.tmux.send_keys(&["Enter"]);
                return false;
            }
            ready(s)
        });
        self.prompts
            .extend(prompts.into_iter().map(|s| (what.to_string(), s)));
        result.unwrap_or_else(|e| panic!("{e}\nprompts on the way: {:#?}", self.prompts))
    }

    /// Types the number of the picker's item `title` and Enter.
    fn choose(&self, title: &str) {
        let screen = self.tmux.capture();
        let number = screen
            .lines
            .iter()
            .find_map(|l| {
                let (n, rest) = l.split_once(": ")?;
                (rest == title && n.parse::<u32>().is_ok()).then(|| n.to_string())
            })
            .unwrap_or_else(|| panic!("no item {title:?} in the picker\n{screen}"));
        self.tmux.send_text(&number);
        self.tmux.send_keys(&["Enter"]);
    }

    /// The chat's part of `screen`: each row's text right of the vertical separator between
    /// the file's window and the chat (the column where most rows have `│`).
    pub fn chat_rows(screen: &Screen) -> Vec<String> {
        let rows: Vec<Vec<char>> = screen.lines.iter().map(|l| l.chars().collect()).collect();
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        let separator = (0..width)
            .max_by_key(|&c| rows.iter().filter(|r| r.get(c) == Some(&'│')).count())
            .unwrap_or(0);
        rows.iter()
            .filter(|r| r.get(separator) == Some(&'│'))
            .map(|r| r[separator + 1..].iter().collect::<String>())
            .collect()
    }
}

/// Both sizes the tests run at: 80 and 120 columns, tall enough for the whole conversation.
pub const SIZES: [(u16, u16); 2] = [(80, 60), (120, 60)];

/// Prints what the screen showed (with --nocapture), for the reader of a failure.
fn show(c: &Conversation) {
    println!(
        "--- {} columns: the edit's question\n{}",
        c.width, c.edit_question
    );
    println!(
        "--- {} columns: the command's question\n{}",
        c.width, c.command_question
    );
    println!("--- {} columns: the end\n{}", c.width, c.end);
    for (step, screen) in &c.prompts {
        println!(
            "--- {} columns: a prompt while waiting for {step}\n{screen}",
            c.width
        );
    }
}

/// The rows of the question that starts with `first`: from the last row that starts with it to
/// the first after it that is empty, `~` (past the end of a window's text), an answer (`→ …`)
/// or a picker's item (`1: …`).
fn question_rows(rows: &[String], first: &str) -> Vec<String> {
    let start = rows
        .iter()
        .rposition(|r| r.starts_with(first))
        .unwrap_or_else(|| panic!("no row starts with {first:?}: {rows:#?}"));
    rows[start..]
        .iter()
        .take_while(|r| !(r.is_empty() || *r == "~" || r.starts_with("→ ") || r.starts_with("1: ")))
        .cloned()
        .collect()
}

/// Checks that `rows` show `text` wrapped at word boundaries for `width` cells: the rows' words,
/// in order, are the text's words; a word is cut across rows only when it is longer than the
/// width, and then each of its pieces but the last fills its row (or all of it but one cell: in
/// the chat, markdown, a cut is moved back one character rather than start a row with `_`).
fn assert_wrapped_at_words(rows: &[String], text: &str, width: usize, what: &str) {
    let shown = rows.join("\n");
    let mut tokens = rows.iter().flat_map(|r| {
        let words: Vec<&str> = r.split_whitespace().collect();
        let last = words.len().saturating_sub(1);
        words.into_iter().enumerate().map(move |(i, w)| {
            (
                w.to_string(),
                i == last && r.trim_end().chars().count() + 1 >= width,
            )
        })
    });
    for word in text.split_whitespace() {
        let (mut got, mut fills) = tokens
            .next()
            .unwrap_or_else(|| panic!("{what}: {word:?} is missing:\n{shown}"));
        while got != word {
            assert!(
                word.chars().count() > width && fills && word.starts_with(&got),
                "{what}: {word:?} is broken across rows (as {got:?}…) although it fits in {width} \
                 columns, or a long word was cut before the row's end:\n{shown}"
            );
            let (next, next_fills) = tokens
                .next()
                .unwrap_or_else(|| panic!("{what}: the end of {word:?} is missing:\n{shown}"));
            got.push_str(&next);
            fills = next_fills;
        }
    }
    let rest: Vec<String> = tokens.map(|(t, _)| t).collect();
    assert!(
        rest.is_empty(),
        "{what}: more than the text: {rest:?}\n{shown}"
    );
}

/// Issue 29 (a): confirming an edit in Neovim's own picker (inputlist()) never leaves Neovim at
/// "Press ENTER or type command to continue" — nor does anything else in the run (the command's
/// question, the answer). Neovim's own workspace/applyEdit handler printed "Workspace edit
/// Tandem: edit <path>" right after the Apply: longer than the command line (a path deep in
/// folders) it asked for ENTER at any width, and under the picker's list still on the screen it
/// could at any length.
#[test]
fn confirming_an_edit_in_a_real_terminal_never_asks_to_press_enter() {
    for (width, height) in SIZES {
        let c = Conversation::run(width, height);
        show(&c);
        let prompts: Vec<String> = c
            .prompts
            .iter()
            .map(|(step, screen)| format!("while waiting for {step}:\n{screen}"))
            .collect();
        assert!(
            prompts.is_empty(),
            "{width} columns: Neovim asked to press ENTER {} time(s):\n{}",
            prompts.len(),
            prompts.join("\n")
        );
        assert!(
            c.end.lines[1].contains("return sum(values) / len(values)"),
            "{width} columns: the fix is not in the file's window:\n{}",
            c.end
        );
    }
}

/// Issue 29 (b): a command's output is in the chat, under its call: its last 12 lines (the
/// terminal mode's tool card keeps as many) after a line counting the earlier ones, with no
/// escape sequence or control character on the screen (colours removed, a progress line
/// rewritten with \r shown as its last version); Enter on it shows all of it, Enter again only
/// its end.
#[test]
fn a_commands_output_shows_in_the_chat_collapsed_to_its_end_and_enter_expands_it() {
    for (width, height) in SIZES {
        let mut c = Conversation::run(width, height);
        show(&c);
        let rows = Conversation::chat_rows(&c.end);
        let at = |text: &str| rows.iter().position(|r| r == text);
        let earlier = at("  … 22 earlier lines (Enter: show all)");
        let fence = at("  ```text");
        let last = at("  finished: all 30 checks passed");
        assert!(
            earlier.is_some()
                && earlier < fence
                && fence < at("  output line 21 of the checks")
                && at("  output line 30 of the checks") < last,
            "{width} columns: the output's end is not in the chat:\n{}",
            c.end
        );
        assert_eq!(
            at("  output line 20 of the checks"),
            None,
            "{width} columns: collapsed:\n{}",
            c.end
        );
        for screen in [&c.command_question, &c.end] {
            for bad in ["␛", "^[", "\u{1b}", "^M", "␍"] {
                assert!(
                    !screen.contains(bad),
                    "{width} columns: {bad:?} on the screen:\n{screen}"
                );
            }
        }

        // Enter on the output (in the chat window, on its first line) shows all of it.
        c.tmux.send_keys(&["C-w", "l"]);
        c.tmux.send_text("/earlier lines");
        c.tmux.send_keys(&["Enter", "Enter"]);
        let expanded = c.wait("all of the output", |s| {
            s.contains("34 lines (Enter: show the last 12)")
        });
        println!("--- {width} columns: expanded\n{expanded}");
        let rows = Conversation::chat_rows(&expanded);
        let at = |text: &str| rows.iter().position(|r| r == text);
        let head = at("  34 lines (Enter: show the last 12)");
        assert!(
            head < at("  ```text")
                && at("  ```text") < at("  build log")
                && at("  build log") < at("  progress 100%")
                && at("  progress 100%") < at("  output line 1 of the checks"),
            "{width} columns: the whole output, colours removed, the progress line's last \
             version:\n{expanded}"
        );
        for bad in ["␛", "^[", "[1;31mbuild", "progress 10%\u{20}"] {
            assert!(
                !rows.iter().any(|r| r.starts_with("  ") && r.contains(bad)),
                "{width} columns: {bad:?}:\n{expanded}"
            );
        }
        c.tmux.send_keys(&["Enter"]);
        c.wait("the output collapsed again", |s| {
            s.contains("… 22 earlier lines (Enter: show all)")
        });
        assert!(c.prompts.is_empty(), "{width} columns: {:#?}", c.prompts);
    }
}

/// Issue 29 (c): the questions to apply an edit of a file deep in folders and to run a long
/// command, at 80 and 120 columns, wrap at word boundaries in Neovim's own picker (the message
/// area cut them at any character: "seq 1 3" / "0)") and in the chat (whose 'linebreak' cut at
/// every "/", "." or "-"); a path longer than the width is cut only where the width ends.
#[test]
fn approval_questions_wrap_at_word_boundaries_in_the_picker_and_the_chat() {
    let questions = [
        format!("Tandem wants to edit {FILE} (+1/-1 lines)"),
        format!("Tandem wants to run: {}", command()),
    ];
    for (width, height) in SIZES {
        let c = Conversation::run(width, height);
        show(&c);
        for (question, screen) in questions
            .iter()
            .zip([&c.edit_question, &c.command_question])
        {
            let start: String = question.chars().take(20).collect();
            let picker = question_rows(&screen.lines, &start);
            // The message area's last column is left free (a row that fills it wraps in some
            // terminals).
            assert_wrapped_at_words(
                &picker,
                question,
                width as usize - 1,
                &format!("{width} columns, the picker"),
            );
            // In the chat as the run left it (the picker covers the end of the chat while it asks).
            let chat = Conversation::chat_rows(&c.end);
            let chat_width = chat.iter().map(|r| r.chars().count()).max().unwrap_or(0);
            let asked = question_rows(&chat, &format!("Tandem asks: {start}"));
            // The question's label is bold: its ** markers are concealed.
            assert_wrapped_at_words(
                &asked,
                &format!("Tandem asks: {question}"),
                chat_width,
                &format!("{width} columns, the chat"),
            );
        }
    }
}

/// Issue 29 (d): when the run ends, the command line sums up the answer's first line as plain
/// text ("Tandem: done: Quick overview: the typo in main.py…", not "# Quick overview: the
/// **typo** in `main.py`…"), on one line within the width (cut with "…" at 80 columns), never a
/// hit-enter prompt.
#[test]
fn the_command_line_sums_up_the_answer_in_plain_text_on_one_line() {
    let plain =
        "Tandem: done: Quick overview: the typo in main.py is fixed, and the checks all pass now";
    for (width, height) in SIZES {
        let c = Conversation::run(width, height);
        show(&c);
        let echo = c.end.lines.last().cloned().unwrap_or_default();
        for markdown in ["#", "*", "`", "](", "https://"] {
            assert!(
                !echo.contains(markdown),
                "{width} columns: {markdown:?} in {echo:?}"
            );
        }
        if plain.chars().count() < width as usize - 12 {
            assert_eq!(echo, plain, "{width} columns");
        } else {
            let kept = echo
                .strip_suffix('…')
                .unwrap_or_else(|| panic!("{width} columns: not cut: {echo:?}"));
            assert!(
                plain.starts_with(kept) && kept.len() > 40,
                "{width} columns: {echo:?}"
            );
            assert!(
                echo.chars().count() < width as usize,
                "{width} columns: {echo:?}"
            );
        }
        assert!(c.prompts.is_empty(), "{width} columns: {:#?}", c.prompts);
    }
}
