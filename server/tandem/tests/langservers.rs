//! Tandem's own language servers through the real binary (`tandem -p`): only a trusted folder
//! starts them, never a cloned repository's planted entry; with the language tools, the model
//! gets real diagnostics from ruff and basedpyright.
//!
//! The real servers come from `scripts/install-language-servers` (or `TANDEM_LANGSERVERS`);
//! their folder is put first on the PATH of the `tandem` process, as a user's PATH would have
//! them.

mod support;

#[path = "langservers/edits.rs"]
mod edits;
#[path = "langservers/front_doors.rs"]
mod front_doors;
#[path = "langservers/tools.rs"]
mod tools;
#[path = "langservers/trust.rs"]
mod trust;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use support::{Run, Sandbox, MODEL};

/// The language tools' names (`tandem_coding::tools::LANGUAGE_TOOLS`).
const LANGUAGE_TOOLS: [&str; 6] = [
    "diagnostics",
    "definition",
    "references",
    "symbols",
    "hover",
    "rename",
];

/// The folder holding the real servers' programs: `TANDEM_LANGSERVERS`, else what
/// `scripts/install-language-servers` prints last.
fn langservers_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(dir) = std::env::var_os("TANDEM_LANGSERVERS") {
            return PathBuf::from(dir);
        }
        let script = repo().join("scripts/install-language-servers");
        let out = Command::new(&script)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().unwrap_or_default().trim().to_string();
        assert!(
            out.status.success() && Path::new(&last).is_dir(),
            "the real language servers are missing: run scripts/install-language-servers (it \
             said: {stdout}{})",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(last)
    })
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// PATH with the real servers first.
fn path_with_servers() -> OsString {
    let mut dirs = vec![langservers_bin().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).expect("joinable PATH")
}

/// Copies `fixtures/langservers/<name>`'s files into the sandbox's project.
fn copy_fixture(sandbox: &Sandbox, name: &str) {
    let from = repo().join("fixtures/langservers").join(name);
    for entry in std::fs::read_dir(from).expect("fixture") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), sandbox.cwd.join(entry.file_name())).expect("copy");
    }
}

/// `tandem --model mock/mock-model <args>` in the sandbox, with `path` as PATH.
fn run(sandbox: &Sandbox, args: &[&str], path: &OsString) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--model")
        .arg(MODEL)
        .args(args)
        .current_dir(&sandbox.cwd)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &sandbox.home)
        .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir)
        .stdin(Stdio::null())
        .output()
        .expect("runs tandem");
    Run {
        code: output.status.code().expect("tandem exited normally"),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

/// The tool names offered in the mock's request `index`.
fn offered_tools(sandbox: &Sandbox, index: usize) -> Vec<String> {
    let body = sandbox.requests()[index].json().expect("a JSON request");
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
