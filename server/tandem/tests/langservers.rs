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

use support::{Run, Sandbox, MODEL};

use tandem_coding::tools::LANGUAGE_TOOLS;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// PATH with the real servers first.
fn path_with_servers() -> OsString {
    tandem_tests::langservers::search_path()
}

fn langservers_bin() -> &'static Path {
    tandem_tests::langservers::bin()
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

/// The tools the model was offered in the mock's `index`th request.
fn offered_tools(sandbox: &Sandbox, index: usize) -> Vec<String> {
    sandbox.offered_tools(index)
}
