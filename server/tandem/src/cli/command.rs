//! What the command line asks for, as plain data: a [`Command`] and the [`RunArgs`] of a run.
//!
//! These types say nothing about how flags are spelled (that is [`super::args`]); choices are
//! typed ([`SessionChoice`], [`OutputMode`], the host's `ToolSelection`) so run modes match on meaning.

use std::path::PathBuf;

use crate::host::SessionOptions;

/// What the output of a run looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputMode {
    /// Only the final answer's text (pi's `-p` / `--mode text`).
    #[default]
    Text,
    /// The session header, then every event as one JSON line (pi's `--mode json`).
    Json,
}

/// Which session a run writes to, in pi's precedence: `--no-session`, then `--fork`, then
/// `--session`, then `--continue`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SessionChoice {
    /// A new session file.
    #[default]
    New,
    /// The most recent session of this directory (`--continue`).
    Continue,
    /// An existing session: a file path or a session id prefix (`--session`).
    Open(String),
    /// A new session copied from this one: a file path or id prefix (`--fork`).
    Fork(String),
    /// Nothing written to disk (`--no-session`).
    InMemory,
    /// This directory's session with this id, created with it when there is none
    /// (`--session-id`).
    WithId(String),
    /// One the user picks from this directory's sessions (`-r` without a session): the
    /// interactive mode's picker; anywhere else an error.
    Pick,
}

/// Everything a run needs from the command line, checked.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunArgs {
    /// The session's options: `--provider`, `--model`, `--thinking`, `--api-key`, `--tools`,
    /// `--session-dir`, `--system-prompt`, `--append-system-prompt`, `--no-context-files`,
    /// `--approve` / `--no-approve`.
    pub options: SessionOptions,
    /// `--session`, `--fork`, `--continue`, `--no-session`, `--session-id`.
    pub session: SessionChoice,
    /// `--name`: the session's display name (a `session_info` entry, as pi writes).
    pub name: Option<String>,
    /// Message arguments, in order (the first becomes part of the initial prompt).
    pub messages: Vec<String>,
    /// `@file` arguments without their `@`, in order.
    pub file_args: Vec<String>,
}

/// What the binary was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Run once and print the final answer (`-p`, `--mode text`, or just messages).
    Print(RunArgs),
    /// Run once and print every event as a JSON line (`--mode json`).
    Json(RunArgs),
    /// pi's RPC mode (`--mode rpc`): commands on stdin, responses and events on stdout.
    Rpc(RunArgs),
    /// `--export <session> [output]`: the session as an HTML page.
    Export {
        /// The session file.
        input: PathBuf,
        /// Where the page goes (default: `tandem-session-<name>.html` here).
        output: Option<PathBuf>,
    },
    /// `--list-models [search]`.
    ListModels {
        /// The fuzzy search, when one was given.
        search: Option<String>,
    },
    /// `tandem demo [--real]`.
    Demo {
        /// Use a real model instead of the scripted one.
        real: bool,
        /// How to show the run.
        mode: OutputMode,
        /// Model, session and tool options.
        run: RunArgs,
    },
    /// `tandem lsp`: the language server on stdin/stdout, with the sessions' default options
    /// and `--max-message-bytes`.
    Lsp(SessionOptions, Option<u64>),
    /// `tandem acp`: the Agent Client Protocol agent on stdin/stdout, with the sessions'
    /// options and `--max-message-bytes`.
    Acp(SessionOptions, Option<u64>),
    /// `tandem undo [-c | --session REF] [--session-dir DIR] [--back-to ENTRY]`.
    Undo {
        /// The session: [`SessionChoice::Continue`] or [`SessionChoice::Open`].
        session: SessionChoice,
        /// Where sessions are, when not the default.
        session_dir: Option<PathBuf>,
        /// Undo every turn after this entry.
        back_to: Option<String>,
    },
    /// `tandem trust [--deny | --status] [DIR]`.
    Trust {
        /// The folder; the current directory when absent.
        dir: Option<PathBuf>,
        /// What to do.
        action: TrustAction,
    },
}

impl Command {
    /// The session options of a command that runs sessions.
    pub fn session_options_mut(&mut self) -> Option<&mut SessionOptions> {
        match self {
            Command::Print(run) | Command::Json(run) | Command::Rpc(run) => Some(&mut run.options),
            Command::Demo { run, .. } => Some(&mut run.options),
            Command::Lsp(options, _) | Command::Acp(options, _) => Some(options),
            _ => None,
        }
    }
}

/// What `tandem trust` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAction {
    /// Save "trusted".
    Trust,
    /// Save "not trusted".
    Deny,
    /// Show the decision that applies.
    Show,
}

/// A parsed command line: the command plus warnings to print to stderr (never fatal).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The command.
    pub command: Command,
    /// Things that were ignored, e.g. unknown tool names.
    pub warnings: Vec<String>,
    /// `--log-level`, `--log-file`.
    pub log: crate::logging::LogOptions,
    /// `-p`/`--print` or `--mode` was given: a run prints even at a terminal (without them, a
    /// run whose stdin and stdout are a terminal opens the interactive mode, as pi's does).
    pub print_requested: bool,
}
