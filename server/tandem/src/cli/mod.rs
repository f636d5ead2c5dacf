//! The `tandem` command line: pi's flags, the first prompt, and the two print-mode outputs
//! (final text, or pi's JSON event lines).
//!
//! Everything here is independent of the session layer: parsing yields a [`Command`] whose
//! [`RunArgs`] the run modes consume (the model is chosen by the host, [`crate::host::models`]);
//! [`input`] builds the prompts from `@file` arguments and piped stdin (read through a reader
//! parameter, so tests need no real stdin); [`json_output`] and [`text_output`] turn the agent's
//! events and final message into what pi prints.
//!
//! Usage errors exit with 1, as pi's do (clap's own default would be 2); `--help` and `--version`
//! exit with 0.

pub mod args;
pub mod command;
pub mod export;
pub mod extension_flags;
pub mod input;
pub mod json_output;
pub mod list_models;
pub mod packages;
pub mod text_output;
pub mod trust;
pub mod undo;

pub use args::{help_text, parse_args};
pub use command::{Command, OutputMode, RunArgs, TrustAction};

/// The process exit code for a clap outcome: 0 for `--help` / `--version`, 1 for usage errors.
pub fn clap_exit_code(err: &clap::Error) -> u8 {
    if err.use_stderr() {
        1
    } else {
        0
    }
}
