//! Interactive terminal mode: `tandem` with no prompt at a terminal opens a conversation on the
//! host's session, as pi's interactive mode does.
//!
//! The screen has two parts. Finished output (prompts, answers, tool cards) is printed into the
//! terminal's own scrollback once, at the width of the moment, and never redrawn. Below it, the
//! live area — the tail of the answer being streamed, running tools, the queue, the input editor
//! and the footer — is drawn by ratatui, whose cell diff writes only what changed.
//!
//! - [`app`]: the loop (keys, session events, frames) and the live area's layout.
//! - [`transcript`]: session events → finished lines and the live part; [`cards`]: tool calls.
//! - [`markdown`], [`highlight`], [`text`]: answers rendered, code highlighted, every printed
//!   string made terminal-safe and wrapped.
//! - [`editor`]: the input; [`picker`]: lists to pick from; [`commands`]: slash commands.
//! - [`dialogs`]: questions from outside the loop (the workspace's, extensions'), one at a
//!   time; [`extension_ui`]: the terminal's `ctx.ui` for extensions, whose calls reach the
//!   loop as messages; [`extensions`]: what extensions show (notices, statuses, widgets, the
//!   title) and their commands.
//! - [`session`]: the session held (replaced whole for `/new`, `/resume`, `/fork`);
//!   [`workspace`]: the disk, with questions (and confirm mode) asked in the terminal.
//! - [`screen`]: raw mode, printing into the scrollback, the live area's place; [`outside`]:
//!   the terminal handed to an external editor (Ctrl+G) or the shell (Ctrl+Z) and taken back.

pub mod app;
pub mod cards;
pub mod commands;
pub mod dialogs;
pub mod editor;
pub mod extension_ui;
pub mod extensions;
pub mod highlight;
pub mod markdown;
pub mod outside;
pub mod picker;
pub mod screen;
pub mod session;
pub mod text;
pub mod theme;
pub mod transcript;
pub mod workspace;

use std::process::ExitCode;

use crate::cli::RunArgs;

/// Runs the interactive mode until the user leaves; the exit status.
pub fn run(args: RunArgs) -> ExitCode {
    let outcome = (|| -> anyhow::Result<()> {
        let cwd = crate::run::current_dir()?;
        let rt = crate::run::runtime()?;
        screen::restore_on_panic();
        let result = rt.block_on(app::serve(args, cwd));
        rt.shutdown_timeout(std::time::Duration::from_secs(2));
        result
    })();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::eprintln_safe!("Error: {e:#}");
            ExitCode::from(1)
        }
    }
}
