//! The `tandem` binary: the front doors (language server, ACP agent, print/JSON modes).
//!
//! Only this crate knows JSON-RPC, LSP and ACP. The front doors arrive with issues 5–7; until
//! then the binary answers `--version` and `--help`.

use std::process::ExitCode;

const HELP: &str = "tandem — a coding agent inside your language server

Usage:
  tandem --version     print the version
  tandem --help        print this help

The language server (`tandem lsp`), the ACP agent (`tandem acp`) and print/JSON modes
(`tandem -p`) are being built; see README.md.";

fn main() -> ExitCode {
    let arg = std::env::args().nth(1);
    match arg.as_deref() {
        Some("--version") | Some("-V") => {
            println!("tandem {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        None | Some("--help") | Some("-h") => {
            println!("{HELP}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("tandem: unknown argument {other:?}; run `tandem --help`");
            ExitCode::from(2)
        }
    }
}
