//! The command line's entry point: parses it and starts a front door (language server, ACP
//! agent, print/JSON modes, demo, trust). It lives in the library, and `main.rs` only calls it,
//! so that everything the front doors instantiate is compiled once, in this crate (a binary
//! crate of its own would compile its generic and async code again: BENCHMARKS.md, "Release
//! build").

use crate::{acp, cli, demo, logging, lsp, rpc, run};

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::host::SessionOptions;
use crate::transport::MessageLimit;
use cli::{Command, OutputMode, RunArgs};
use tandem_ai::registry::{AgentDir, ModelRegistry};

/// Runs `tandem` with this process's arguments; its exit status.
pub fn main() -> ExitCode {
    // pi's package commands come before the rest of the command line, as in pi.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = cli::packages::main(&args) {
        return code;
    }
    let parsed = match cli::parse_args(args) {
        Ok(parsed) => parsed,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(cli::clap_exit_code(&err));
        }
    };
    for warning in &parsed.warnings {
        crate::eprintln_safe!("Warning: {warning}");
    }
    // pi's rule: without -p or --mode, a run at a terminal (stdin and stdout both) is
    // interactive; the messages and @files given become its first prompt.
    let interactive = matches!(parsed.command, Command::Print(_))
        && !parsed.print_requested
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal();
    // Print and JSON modes report problems in plain words themselves; the log is for the rest.
    // The interactive mode owns the terminal: its log goes only to --log-file.
    let default_level = match &parsed.command {
        _ if interactive && parsed.log.file.is_none() => "off",
        Command::Print(_)
        | Command::Json(_)
        | Command::ListModels { .. }
        | Command::Export { .. } => "error",
        _ => "warn",
    };
    if let Err(e) = logging::init(&parsed.log, default_level) {
        crate::eprintln_safe!("Warning: {e}");
    }
    match parsed.command {
        Command::ListModels { search } => list_models(search.as_deref()),
        Command::Export { input, output } => export(&input, output.as_deref()),
        Command::Print(run) if interactive => crate::tui::run(run),
        Command::Print(run) => run_print(run),
        Command::Json(run) => run_json(run),
        Command::Rpc(run) => rpc::run(run),
        Command::Demo { real, mode, run } => run_demo(real, mode, run),
        Command::Lsp(options, limit) => run_lsp(options, limit),
        Command::Acp(options, limit) => run_acp(options, limit),
        Command::Trust { dir, action } => trust(dir, action),
        Command::Undo {
            session,
            session_dir,
            back_to,
        } => undo(session, session_dir, back_to),
    }
}

/// `--export`: the session as an HTML page; prints where it went.
fn export(input: &std::path::Path, output: Option<&std::path::Path>) -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            crate::eprintln_safe!("Error: cannot read the current directory: {e}");
            return ExitCode::from(1);
        }
    };
    match cli::export::export(input, output, &cwd) {
        Ok(path) => {
            println!("Exported to: {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            crate::eprintln_safe!("Error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// `tandem undo`: the last turn's changes taken back on disk.
fn undo(
    session: cli::command::SessionChoice,
    session_dir: Option<std::path::PathBuf>,
    back_to: Option<String>,
) -> ExitCode {
    let rt = match run::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            crate::eprintln_safe!("Error: {e:#}");
            return ExitCode::from(1);
        }
    };
    let request = cli::undo::UndoRequest {
        session,
        session_dir,
        back_to,
    };
    succeeded(rt.block_on(cli::undo::run(
        request,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )))
}

/// `tandem trust [--deny | --status] [DIR]`.
fn trust(dir: Option<std::path::PathBuf>, action: cli::TrustAction) -> ExitCode {
    let agent_dir = match AgentDir::from_env() {
        Ok(dir) => dir,
        Err(err) => {
            crate::eprintln_safe!("Error: {err}");
            return ExitCode::from(1);
        }
    };
    let dir = dir.unwrap_or_else(|| std::path::PathBuf::from("."));
    succeeded(cli::trust::run(
        &agent_dir,
        &dir,
        action,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}

/// The exit status of a command that reported its own outcome: 0 when it succeeded, else 1.
fn succeeded(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `--list-models [search]`: reads models.json and auth.json from the agent directory.
fn list_models(search: Option<&str>) -> ExitCode {
    let dir = match AgentDir::from_env() {
        Ok(dir) => dir,
        Err(err) => {
            crate::eprintln_safe!("Error: {err}");
            return ExitCode::from(1);
        }
    };
    let registry = ModelRegistry::load(dir);
    let result = cli::list_models::list_models(
        &registry,
        search,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            crate::eprintln_safe!("Error: could not write the model list: {err}");
            ExitCode::from(1)
        }
    }
}

/// `-p` / `--mode text`: run the prompts, print the final answer.
fn run_print(run: RunArgs) -> ExitCode {
    run::run(run, OutputMode::Text)
}

/// `--mode json`: run the prompts, print every event as a JSON line.
fn run_json(run: RunArgs) -> ExitCode {
    run::run(run, OutputMode::Json)
}

/// `tandem demo [--real]`.
fn run_demo(real: bool, mode: OutputMode, run: RunArgs) -> ExitCode {
    demo::run(real, mode, run)
}

/// The message size limit from `--max-message-bytes` or the environment; the error to print.
fn message_limit(command: &str, flag: Option<u64>) -> Result<MessageLimit, ExitCode> {
    MessageLimit::resolve(flag).map_err(|e| {
        crate::eprintln_safe!("tandem {command}: {e}");
        ExitCode::from(2)
    })
}

/// `tandem lsp`: the language server on stdin/stdout until the client sends `exit` or closes
/// stdin. Exit status 0 after `shutdown`, else 1 (LSP's rule for `exit`, and Tandem's for a
/// client gone without `shutdown`).
fn run_lsp(options: SessionOptions, limit: Option<u64>) -> ExitCode {
    let limit = match message_limit("lsp", limit) {
        Ok(limit) => limit,
        Err(code) => return code,
    };
    if std::io::stdin().is_terminal() {
        crate::eprintln_safe!(
            "tandem lsp: a language server, speaking LSP on stdin/stdout: start it from your \
             editor (cmd = {{\"tandem\", \"lsp\"}}), or try `tandem demo`. Ctrl-C ends it."
        );
    }
    let rt = match run::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            crate::eprintln_safe!("Error: {e:#}");
            return ExitCode::from(1);
        }
    };
    let status = rt.block_on(lsp::server::serve_stdio(options, limit));
    // Stdin is read on a blocking thread that never returns by itself; do not wait for it (or
    // for a tool still running after the abort).
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(status)
}

/// `tandem acp`: the ACP agent on stdin/stdout until stdin closes.
fn run_acp(options: SessionOptions, limit: Option<u64>) -> ExitCode {
    let limit = match message_limit("acp", limit) {
        Ok(limit) => limit,
        Err(code) => return code,
    };
    if std::io::stdin().is_terminal() {
        crate::eprintln_safe!(
            "tandem acp: an Agent Client Protocol agent on stdin/stdout: start it from an ACP \
             client (e.g. Zed's agent settings). Ctrl-C ends it."
        );
    }
    let rt = match run::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            crate::eprintln_safe!("Error: {e:#}");
            return ExitCode::from(1);
        }
    };
    let served = rt.block_on(acp::serve_stdio(options, limit));
    // Stdin is read on a blocking thread; do not wait for it, or for a tool still stopping.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::eprintln_safe!("tandem acp: {e}");
            ExitCode::from(1)
        }
    }
}
