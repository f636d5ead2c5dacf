//! The command line, parsed with clap under pi's flag names, then checked and turned into a
//! [`Command`].
//!
//! The clap structs stay private: the rest of the binary sees [`Command`] and [`RunArgs`] (see
//! [`super::command`]), so the way flags are spelled never leaks into the code that runs them.
//! pi's own parser is hand-written and forgiving; where it only warns (an unknown `--mode`, a
//! bad `--thinking`), Tandem stops with an error that lists the valid values, because a silently
//! ignored flag makes a scripted run do something else.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{ArgAction, Args, CommandFactory, Parser, Subcommand};
use tandem_ai::ThinkingLevel;
use tandem_coding::tools::{entry_name, is_tool, UnknownTool};

use crate::host::{SessionOptions, ToolSelection};
use crate::logging::LogOptions;

use super::command::{Command, OutputMode, Parsed, RunArgs, SessionChoice, TrustAction};

const AFTER_HELP: &str = "\
Examples:
  tandem -p \"List the Rust files in src/\"
  tandem --mode json -p \"Fix the failing test\" > events.jsonl
  tandem @notes.md @screenshot.png -p \"What is wrong here?\"
  git diff | tandem -p \"Review this change\"
  tandem --model anthropic/claude-sonnet-4-6:high -p \"Refactor lib.rs\"
  tandem --tools read,grep,find,ls -p \"Explain the architecture\"
  tandem --continue -p \"And now the tests\"

Keys come from --api-key, auth.json, the provider's environment variable (OPENAI_API_KEY,
ANTHROPIC_API_KEY, GEMINI_API_KEY, ...) or models.json in the agent directory
(~/.pi/agent, or $PI_CODING_AGENT_DIR). Without a usable key Tandem says what to set and stops
(`tandem demo` runs on its built-in scripted model).

Editors start `tandem lsp` (see `tandem lsp --help`); ACP clients start `tandem acp`.
pi's packages: `tandem install <source> [-l]`, `tandem remove <source> [-l]`, `tandem update
[source]`, `tandem list` (see `tandem install --help`).";

#[derive(Debug, Parser)]
#[command(
    name = "tandem",
    version,
    disable_version_flag = true,
    args_override_self = true,
    disable_help_subcommand = true,
    about = "Tandem: a coding agent inside your language server, with pi's command line.",
    after_help = AFTER_HELP
)]
struct Cli {
    /// Print the version and exit
    #[arg(short = 'v', long, action = ArgAction::Version, visible_short_alias = 'V')]
    version: Option<bool>,

    /// Run once and print the final answer, then exit
    #[arg(short = 'p', long)]
    print: bool,

    /// Output: text (the final answer), json (every event as a JSON line) or rpc (commands
    /// on stdin, responses and events on stdout, one JSON line each)
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    mode: Option<ModeFlag>,

    /// List the models you have keys for (with an optional fuzzy search) and exit
    #[arg(long = "list-models", value_name = "SEARCH", num_args = 0..=1)]
    list_models: Option<Option<String>>,

    /// Export a session file to one HTML page and exit (default output:
    /// tandem-session-<name>.html here)
    #[arg(long, value_names = ["SESSION", "OUTPUT"], num_args = 1..=2)]
    export: Option<Vec<String>>,

    #[command(flatten)]
    options: SessionArgs,

    #[command(flatten)]
    history: HistoryArgs,

    #[command(flatten)]
    log: LogArgs,

    /// Messages to send; `@path` includes a file (text inline, images attached)
    #[arg(value_name = "MESSAGE")]
    messages: Vec<String>,

    #[command(subcommand)]
    command: Option<Sub>,
}

/// The options of a session, for every way of running that has sessions: given before a
/// subcommand or after it (`tandem --model x lsp` and `tandem lsp --model x`).
#[derive(Debug, Args, Default)]
struct SessionArgs {
    /// Provider name (e.g. openai, anthropic, or one from models.json)
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,

    /// Model: provider/id, a bare id or a pattern, optionally with :<thinking>
    #[arg(long, value_name = "PATTERN")]
    model: Option<String>,

    /// Thinking level: off, minimal, low, medium, high, xhigh
    #[arg(long, value_name = "LEVEL", value_parser = parse_thinking)]
    thinking: Option<ThinkingLevel>,

    /// Model scope: comma-separated ids, patterns or globs (`anthropic/*`, `*sonnet*`), each
    /// optionally with :<thinking>; a new session without --model starts on the first match
    #[arg(long, value_name = "PATTERNS")]
    models: Option<String>,

    /// API key for the chosen model's provider (this process only)
    #[arg(long, value_name = "KEY")]
    api_key: Option<String>,

    /// Comma-separated tools to enable (default: read,bash,edit,write; in `tandem lsp` and
    /// `tandem acp` also grep,find,ls)
    #[arg(short = 't', long, value_name = "TOOLS")]
    tools: Option<String>,

    /// Disable all tools (--tools can add some back) [alias: -nt]
    #[arg(long)]
    no_tools: bool,

    /// Directory for session files
    #[arg(long, value_name = "DIR")]
    session_dir: Option<PathBuf>,

    /// Replace the default system prompt
    #[arg(long, value_name = "TEXT")]
    system_prompt: Option<String>,

    /// Append text to the system prompt (repeatable)
    #[arg(long, value_name = "TEXT", action = ArgAction::Append)]
    append_system_prompt: Vec<String>,

    /// Do not load AGENTS.md / CLAUDE.md context files [alias: -nc]
    #[arg(long)]
    no_context_files: bool,

    /// Trust this folder's project configuration (.pi/settings.json, mcp.json, skills,
    /// prompts, SYSTEM.md) for this process
    #[arg(short = 'a', long, conflicts_with = "no_approve")]
    approve: bool,

    /// Ignore this folder's project configuration for this process [alias: -na]
    #[arg(long)]
    no_approve: bool,

    /// Load an extension (a TypeScript or JavaScript module, a directory, or an executable
    /// speaking Tandem's extension protocol) for this run (repeatable)
    #[arg(short = 'e', long = "extension", value_name = "PATH", action = ArgAction::Append)]
    extension: Vec<String>,

    /// Discover no extensions (the agent directory's, the project's, the settings'); -e
    /// still loads [alias: -ne]
    #[arg(long)]
    no_extensions: bool,
}

impl SessionArgs {
    /// These options, completed by `earlier` (the ones given before the subcommand).
    fn or(self, earlier: SessionArgs) -> SessionArgs {
        let mut append_system_prompt = earlier.append_system_prompt;
        append_system_prompt.extend(self.append_system_prompt);
        SessionArgs {
            provider: self.provider.or(earlier.provider),
            model: self.model.or(earlier.model),
            models: self.models.or(earlier.models),
            thinking: self.thinking.or(earlier.thinking),
            api_key: self.api_key.or(earlier.api_key),
            tools: self.tools.or(earlier.tools),
            no_tools: self.no_tools || earlier.no_tools,
            session_dir: self.session_dir.or(earlier.session_dir),
            system_prompt: self.system_prompt.or(earlier.system_prompt),
            append_system_prompt,
            no_context_files: self.no_context_files || earlier.no_context_files,
            approve: self.approve || earlier.approve,
            no_approve: self.no_approve || earlier.no_approve,
            extension: [earlier.extension, self.extension].concat(),
            no_extensions: self.no_extensions || earlier.no_extensions,
        }
    }
}

/// Which session a run writes to (print and JSON modes only).
#[derive(Debug, Args)]
struct HistoryArgs {
    /// Continue the most recent session of this directory
    #[arg(short = 'c', long = "continue")]
    continue_session: bool,

    /// Use this session: a file path or a session id prefix
    #[arg(long, value_name = "PATH|ID")]
    session: Option<String>,

    /// Resume this session (path or id prefix), as --session; without one, the interactive
    /// mode opens with the picker of this folder's sessions
    #[arg(short = 'r', long, value_name = "PATH|ID", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,

    /// Copy this session (path or id prefix) into a new one and continue there
    #[arg(long, value_name = "PATH|ID")]
    fork: Option<String>,

    /// Do not save the session
    #[arg(long)]
    no_session: bool,

    /// Use this directory's session with this id, or create it with this id (letters,
    /// digits, `.`, `_`, `-`; starting and ending with a letter or digit)
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,

    /// The session's display name
    #[arg(short = 'n', long, value_name = "NAME")]
    name: Option<String>,

    /// Accepted as pi's (it shows startup details in pi's terminal interface; Tandem's
    /// terminal mode shows its one title line unless `quietStartup` is set)
    #[arg(long)]
    verbose: bool,

    /// Accepted as pi's: Tandem makes no network requests of its own besides the model's
    #[arg(long)]
    offline: bool,
}

/// Logging, for every command.
#[derive(Debug, Args)]
struct LogArgs {
    /// How much to log (off, error, warn, info, debug, trace, or target=level directives);
    /// default: $TANDEM_LOG, else warn (error in print and JSON modes)
    #[arg(long, value_name = "LEVEL", global = true)]
    log_level: Option<String>,

    /// Append the log to this file instead of stderr
    #[arg(long, value_name = "PATH", global = true)]
    log_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Run as a language server on stdin/stdout (editors start this)
    Lsp {
        /// Accepted for LSP clients that pass it (vscode-languageclient); stdio is the only
        /// transport
        #[arg(long)]
        stdio: bool,

        /// Refuse (and skip) messages larger than this many bytes; default:
        /// $TANDEM_MAX_MESSAGE_BYTES, else 67108864 (64 MiB)
        #[arg(long, value_name = "BYTES")]
        max_message_bytes: Option<u64>,

        #[command(flatten)]
        options: SessionArgs,
    },
    /// Run as an Agent Client Protocol agent on stdin/stdout
    Acp {
        /// Refuse (and skip) messages larger than this many bytes; default:
        /// $TANDEM_MAX_MESSAGE_BYTES, else 67108864 (64 MiB)
        #[arg(long, value_name = "BYTES")]
        max_message_bytes: Option<u64>,

        /// The display name (title) of every session the client creates
        #[arg(short = 'n', long, value_name = "NAME")]
        name: Option<String>,

        #[command(flatten)]
        options: SessionArgs,
    },
    /// Run the built-in demo task and show what happens
    Demo {
        /// Use a real model (from --model, settings, or the first with a key)
        #[arg(long)]
        real: bool,

        #[command(flatten)]
        options: SessionArgs,
    },
    /// Undo the file changes of a session's last turn (or of every turn after --back-to),
    /// on disk; hunks changed since are left as they are and listed
    Undo {
        /// The most recent session of this directory (the default)
        #[arg(short = 'c', long = "continue", conflicts_with = "session")]
        continue_session: bool,

        /// The session: a file path or a session id prefix
        #[arg(long, value_name = "PATH|ID")]
        session: Option<String>,

        /// Where the sessions are (default: the agent directory's sessions for this directory)
        #[arg(long, value_name = "DIR")]
        session_dir: Option<PathBuf>,

        /// Undo every turn after this one: a prompt's entry id in the session file
        #[arg(long, value_name = "ENTRY")]
        back_to: Option<String>,
    },
    /// Show or save whether a folder's project configuration (.pi/settings.json, mcp.json,
    /// skills, prompts, SYSTEM.md) is trusted; decisions go to the agent directory's trust.json,
    /// shared with pi
    Trust {
        /// The folder (default: the current directory)
        dir: Option<PathBuf>,
        /// Save "not trusted" instead
        #[arg(long, conflicts_with = "status")]
        deny: bool,
        /// Only show the decision that applies and what the folder would load
        #[arg(long)]
        status: bool,
    },
}

/// pi's multi-letter short flags that Tandem also has, rewritten to their long form before clap
/// sees them (clap reads `-nt` as `-n -t`).
const PI_SHORT_ALIASES: [(&str, &str); 4] = [
    ("-nt", "--no-tools"),
    ("-nc", "--no-context-files"),
    ("-na", "--no-approve"),
    ("-ne", "--no-extensions"),
];

/// Parses a full command line (program name first).
pub fn parse_args<I, T>(args: I) -> Result<Parsed, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let mut rewritten = Vec::new();
    let mut after_separator = false;
    for arg in args {
        let arg: OsString = arg.into();
        after_separator |= arg == "--";
        let alias = PI_SHORT_ALIASES.iter().find(|(short, _)| arg == *short);
        match alias {
            Some((_, long)) if !after_separator => rewritten.push(OsString::from(long)),
            _ => rewritten.push(arg),
        }
    }
    let known = long_flags();
    let (rewritten, extension_flags) = super::extension_flags::split(rewritten, &known);
    let cli = Cli::try_parse_from(rewritten)?;
    let mut parsed = finish(cli)?;
    if let Some(options) = parsed.command.session_options_mut() {
        options.extension_flags = extension_flags;
    } else if let Some((name, _)) = extension_flags.first() {
        return Err(usage_error(format!(
            "unknown option --{name}: this command takes no extension flags"
        )));
    }
    Ok(parsed)
}

/// Every long flag of Tandem's own command line and its subcommands, without `--`.
pub fn long_flags() -> Vec<String> {
    fn collect(command: &clap::Command, into: &mut Vec<String>) {
        for arg in command.get_arguments() {
            into.extend(arg.get_long().map(str::to_string));
            into.extend(
                arg.get_all_aliases()
                    .into_iter()
                    .flatten()
                    .map(str::to_string),
            );
        }
        for sub in command.get_subcommands() {
            collect(sub, into);
        }
    }
    let mut all = vec!["help".to_string(), "version".to_string()];
    collect(&<Cli as clap::CommandFactory>::command(), &mut all);
    all.sort();
    all.dedup();
    all
}

/// The full help text, as `tandem --help` prints it.
pub fn help_text() -> String {
    Cli::command().render_help().to_string()
}

fn usage_error(message: String) -> clap::Error {
    Cli::command().error(ErrorKind::ArgumentConflict, message)
}

fn finish(mut cli: Cli) -> Result<Parsed, clap::Error> {
    let mut warnings = Vec::new();
    // A subcommand's own session options complete those given before it.
    let later = match cli.command.as_mut() {
        Some(Sub::Lsp { options, .. } | Sub::Acp { options, .. } | Sub::Demo { options, .. }) => {
            std::mem::take(options)
        }
        Some(Sub::Trust { .. } | Sub::Undo { .. }) | None => SessionArgs::default(),
    };
    let o = later.or(std::mem::take(&mut cli.options));
    let h = &cli.history;
    if h.fork.is_some() {
        let conflicts: Vec<&str> = named(&[
            (h.session.is_some(), "--session"),
            (h.continue_session, "--continue"),
            (h.no_session, "--no-session"),
        ]);
        if !conflicts.is_empty() {
            return Err(usage_error(format!(
                "--fork cannot be combined with {}",
                conflicts.join(", ")
            )));
        }
    }
    if h.resume.is_some() && (h.session.is_some() || h.fork.is_some() || h.continue_session) {
        return Err(usage_error(
            "-r/--resume cannot be combined with --session, --fork or --continue".to_string(),
        ));
    }
    if let Some(id) = &h.session_id {
        let conflicts: Vec<&str> = named(&[
            (h.session.is_some(), "--session"),
            (h.continue_session, "--continue"),
            (h.resume.is_some(), "--resume"),
            (h.fork.is_some(), "--fork"),
            (h.no_session, "--no-session"),
        ]);
        if !conflicts.is_empty() {
            return Err(usage_error(format!(
                "--session-id cannot be combined with {}",
                conflicts.join(", ")
            )));
        }
        if !valid_session_id(id) {
            return Err(usage_error(format!(
                "--session-id {id:?}: an id holds letters, digits, `.`, `_` and `-`, and starts \
                 and ends with a letter or digit"
            )));
        }
    }
    if h.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        return Err(usage_error(
            "--name needs a name that is not blank".to_string(),
        ));
    }
    let tools = tool_selection(o.tools.as_deref(), o.no_tools, &mut warnings);
    // What a protocol server or `tandem trust` cannot use, to refuse by name.
    let session_flags: Vec<&str> = named(&[
        (h.continue_session, "--continue"),
        (h.session.is_some(), "--session"),
        (h.fork.is_some(), "--fork"),
        (h.no_session, "--no-session"),
        (h.session_id.is_some(), "--session-id"),
        (h.name.is_some(), "--name"),
        (h.resume.is_some(), "--resume"),
    ]);
    let option_flags: Vec<&str> = named(&[
        (o.provider.is_some(), "--provider"),
        (o.model.is_some(), "--model"),
        (o.thinking.is_some(), "--thinking"),
        (o.models.is_some(), "--models"),
        (o.api_key.is_some(), "--api-key"),
        (o.tools.is_some(), "--tools"),
        (o.no_tools, "--no-tools"),
        (o.session_dir.is_some(), "--session-dir"),
        (o.system_prompt.is_some(), "--system-prompt"),
        (!o.append_system_prompt.is_empty(), "--append-system-prompt"),
        (o.no_context_files, "--no-context-files"),
        (o.approve, "--approve"),
        (o.no_approve, "--no-approve"),
        (!o.extension.is_empty(), "--extension"),
        (o.no_extensions, "--no-extensions"),
    ]);
    let has_messages = !cli.messages.is_empty();
    let session = if h.no_session {
        SessionChoice::InMemory
    } else if let Some(fork) = h.fork.clone() {
        SessionChoice::Fork(fork)
    } else if h.resume.as_deref().is_some_and(|r| r.trim().is_empty()) {
        SessionChoice::Pick
    } else if let Some(path) = h.session.clone().or_else(|| h.resume.clone()) {
        SessionChoice::Open(path)
    } else if h.continue_session {
        SessionChoice::Continue
    } else if let Some(id) = h.session_id.clone() {
        SessionChoice::WithId(id)
    } else {
        SessionChoice::New
    };
    let (file_args, messages) = split_file_args(cli.messages);
    let run = RunArgs {
        options: SessionOptions {
            provider: o.provider,
            model: o.model,
            thinking: o.thinking,
            models: o.models.map(|list| vec![list]),
            api_key: o.api_key,
            tools,
            session_dir: o.session_dir,
            system_prompt: o.system_prompt,
            append_system_prompt: o.append_system_prompt,
            no_context_files: o.no_context_files,
            approve: match (o.approve, o.no_approve) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            extensions: o.extension,
            no_extensions: o.no_extensions,
            ..SessionOptions::default()
        },
        session,
        name: h.name.clone(),
        messages,
        file_args,
    };
    let rpc = cli.mode == Some(ModeFlag::Rpc);
    let mode = match cli.mode {
        Some(ModeFlag::Output(mode)) => mode,
        Some(ModeFlag::Rpc) | None => OutputMode::default(),
    };
    let command =
        match cli.command {
            Some(sub) => {
                let name = match sub {
                    Sub::Lsp { .. } => "lsp",
                    Sub::Acp { .. } => "acp",
                    Sub::Demo { .. } => "demo",
                    Sub::Trust { .. } => "trust",
                    Sub::Undo { .. } => "undo",
                };
                if cli.list_models.is_some() {
                    return Err(usage_error(format!(
                        "--list-models cannot be used with `tandem {name}`"
                    )));
                }
                if !matches!(sub, Sub::Demo { .. }) && (cli.print || cli.mode.is_some()) {
                    return Err(usage_error(format!(
                        "-p/--print and --mode cannot be used with `tandem {name}`: \
                     it speaks its protocol on stdin/stdout"
                    )));
                }
                let serves = matches!(sub, Sub::Lsp { .. } | Sub::Acp { .. });
                // `tandem acp --name` names every session the client creates.
                let refused: Vec<&str> = session_flags
                    .iter()
                    .copied()
                    .filter(|f| !(*f == "--name" && matches!(sub, Sub::Acp { .. })))
                    .collect();
                if serves && (has_messages || !refused.is_empty()) {
                    let given = if has_messages {
                        "messages".to_string()
                    } else {
                        refused.join(", ")
                    };
                    return Err(usage_error(format!(
                    "{given} cannot be used with `tandem {name}`: the client sends the prompts \
                     and opens the sessions"
                )));
                }
                if matches!(sub, Sub::Trust { .. } | Sub::Undo { .. })
                    && (has_messages || !session_flags.is_empty() || !option_flags.is_empty())
                {
                    let mut given: Vec<&str> = session_flags.clone();
                    given.extend(&option_flags);
                    if has_messages {
                        given.push("messages");
                    }
                    let what = match sub {
                        Sub::Undo { .. } => {
                            "`tandem undo`: give the session after it (tandem undo --session ID)"
                        }
                        _ => "`tandem trust`: it only saves or shows a folder's trust",
                    };
                    return Err(usage_error(format!(
                        "{} cannot be used with {what}",
                        given.join(", ")
                    )));
                }
                match sub {
                    Sub::Lsp {
                        max_message_bytes, ..
                    } => Command::Lsp(run.options.in_editor(), max_message_bytes),
                    Sub::Acp {
                        max_message_bytes,
                        name,
                        ..
                    } => {
                        let name = name.or_else(|| h.name.clone());
                        if name.as_deref().is_some_and(|n| n.trim().is_empty()) {
                            return Err(usage_error(
                                "--name needs a name that is not blank".to_string(),
                            ));
                        }
                        let mut options = run.options.in_editor();
                        options.new_session_name = name.map(|n| n.trim().to_string());
                        Command::Acp(options, max_message_bytes)
                    }
                    Sub::Demo { .. } if rpc => return Err(usage_error(
                        "`tandem demo` prints text or JSON; --mode rpc is for a session driven \
                         by a client (`tandem --mode rpc`)"
                            .to_string(),
                    )),
                    Sub::Demo { real, .. } => Command::Demo { real, mode, run },
                    Sub::Undo {
                        session,
                        session_dir,
                        back_to,
                        ..
                    } => Command::Undo {
                        session: match session {
                            Some(reference) => SessionChoice::Open(reference),
                            None => SessionChoice::Continue,
                        },
                        session_dir,
                        back_to,
                    },
                    Sub::Trust { dir, deny, status } => Command::Trust {
                        dir,
                        action: match (deny, status) {
                            (_, true) => TrustAction::Show,
                            (true, _) => TrustAction::Deny,
                            _ => TrustAction::Trust,
                        },
                    },
                }
            }
            None if cli.export.is_some() => {
                let mut paths = cli
                    .export
                    .unwrap_or_default()
                    .into_iter()
                    .map(PathBuf::from);
                match paths.next() {
                    Some(input) => Command::Export {
                        input,
                        output: paths.next(),
                    },
                    None => return Err(usage_error("--export needs a session file".to_string())),
                }
            }
            None => match cli.list_models {
                Some(search) => Command::ListModels {
                    search: search.filter(|s| !s.trim().is_empty()),
                },
                None if rpc => {
                    if !run.file_args.is_empty() {
                        return Err(usage_error(
                            "@file arguments are not supported in RPC mode".to_string(),
                        ));
                    }
                    if !run.messages.is_empty() {
                        warnings.push(
                            "messages on the command line are ignored in RPC mode: send them as \
                         `prompt` commands"
                                .to_string(),
                        );
                    }
                    Command::Rpc(run)
                }
                None if mode == OutputMode::Json => Command::Json(run),
                None => Command::Print(run),
            },
        };
    let log = LogOptions {
        level: cli.log.log_level,
        file: cli.log.log_file,
    };
    Ok(Parsed {
        command,
        warnings,
        log,
        print_requested: cli.print || cli.mode.is_some(),
    })
}

/// `@path` arguments apart from messages (pi: any argument starting with `@`).
fn split_file_args(args: Vec<String>) -> (Vec<String>, Vec<String>) {
    let mut files = Vec::new();
    let mut messages = Vec::new();
    for arg in args {
        match arg.strip_prefix('@') {
            Some(path) => files.push(path.to_string()),
            None => messages.push(arg),
        }
    }
    (files, messages)
}

/// pi's rules: `--tools` is an allow-list (names trimmed, empty ones dropped), `--no-tools` alone
/// means none. Unknown names are dropped with a warning listing the valid ones.
fn tool_selection(
    tools: Option<&str>,
    no_tools: bool,
    warnings: &mut Vec<String>,
) -> ToolSelection {
    match tools {
        Some(list) => {
            let mut names = Vec::new();
            // Plain names, or `+name` / `-name` changes to the default set (pi 1.6).
            for entry in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let name = entry_name(entry);
                if is_tool(name) {
                    names.push(entry.to_string());
                } else {
                    warnings.push(UnknownTool(name.to_string()).to_string());
                }
            }
            let mut entries = list.split(',').map(str::trim).filter(|n| !n.is_empty());
            let changes_only =
                entries.clone().next().is_some() && entries.all(|e| e.starts_with(['+', '-']));
            if names.is_empty() && changes_only {
                // Only changes, none valid: nothing changes.
                return ToolSelection::Default;
            }
            ToolSelection::Only(names)
        }
        None if no_tools => ToolSelection::Only(Vec::new()),
        None => ToolSelection::Default,
    }
}

/// Parses a thinking level, naming the valid ones on failure.
pub fn parse_thinking(value: &str) -> Result<ThinkingLevel, String> {
    ThinkingLevel::parse(value).ok_or_else(|| {
        let valid: Vec<&str> = ThinkingLevel::ALL.iter().map(|l| l.as_str()).collect();
        format!(
            "Invalid thinking level \"{value}\". Valid values: {}",
            valid.join(", ")
        )
    })
}

/// `--mode`: an output of a run, or RPC mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ModeFlag {
    Output(OutputMode),
    Rpc,
}

fn parse_mode(value: &str) -> Result<ModeFlag, String> {
    match value {
        "text" => Ok(ModeFlag::Output(OutputMode::Text)),
        "json" => Ok(ModeFlag::Output(OutputMode::Json)),
        "rpc" => Ok(ModeFlag::Rpc),
        other => Err(format!(
            "Invalid mode \"{other}\". Valid values: text, json, rpc"
        )),
    }
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;

/// pi's rule for a chosen session id: letters, digits, `.`, `_`, `-`, starting and ending with
/// a letter or digit.
fn valid_session_id(id: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    edge(id.chars().next())
        && edge(id.chars().last())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The names whose flag is set, in order.
fn named<'a>(flags: &[(bool, &'a str)]) -> Vec<&'a str> {
    flags
        .iter()
        .filter_map(|&(set, name)| set.then_some(name))
        .collect()
}
