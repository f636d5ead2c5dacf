//! The real language servers the tests run (ruff, basedpyright, typescript-language-server):
//! installed by `scripts/install-language-servers` into a cache outside the clone.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The folder holding the servers' programs: `TANDEM_LANGSERVERS`, else what
/// `scripts/install-language-servers` prints last (it installs them once, then only checks).
/// Panics, saying what to run, when they cannot be had.
pub fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let bin = match std::env::var_os("TANDEM_LANGSERVERS") {
            Some(dir) => PathBuf::from(dir),
            None => {
                let script = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../scripts/install-language-servers");
                let out = Command::new(&script)
                    .output()
                    .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
                let stdout = String::from_utf8_lossy(&out.stdout);
                let last = stdout.lines().last().unwrap_or_default().trim().to_string();
                assert!(
                    out.status.success() && Path::new(&last).is_dir(),
                    "the real language servers are missing: run scripts/install-language-servers \
                     (it said: {stdout}{})",
                    String::from_utf8_lossy(&out.stderr)
                );
                PathBuf::from(last)
            }
        };
        for exe in ["ruff", "basedpyright-langserver"] {
            assert!(
                bin.join(exe).is_file(),
                "{exe} is not installed in {}: run scripts/install-language-servers (scripts/test \
                 does)",
                bin.display()
            );
        }
        bin
    })
}

/// `PATH` with [`bin`] first, as a user's PATH would have the servers.
pub fn search_path() -> OsString {
    let mut dirs = vec![bin().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).expect("joinable PATH")
}
