//! Tandem's Node extension host: its files are part of the binary (`extension-host/src/`,
//! embedded by `build.rs`) and written, once per version, to a cache directory Node runs them
//! from; Node itself is the user's, found on PATH (or `TANDEM_NODE`).

use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/extension_host.rs"));
}

/// What to tell a user without Node.
pub const NODE_MISSING: &str = "TypeScript and JavaScript extensions need Node.js 22.13 or newer \
    on PATH (or its path in TANDEM_NODE): install it from https://nodejs.org or with your \
    package manager";

/// The `node` to run: `TANDEM_NODE`, else the first on PATH.
pub fn find_node() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TANDEM_NODE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("node"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The host's entry file, written to the cache directory first when this version's files are
/// not there yet (written into a fresh directory, then renamed into place, so a half-written
/// copy is never run).
pub fn host_entry() -> Result<PathBuf, String> {
    if embedded::FILES.is_empty() {
        return Err("this Tandem was built without its extension host (extension-host/src)".into());
    }
    let base = cache_dir().join("extension-host");
    let dir = base.join(embedded::HASH);
    let entry = dir.join("main.mjs");
    if entry.is_file() {
        return Ok(entry);
    }
    std::fs::create_dir_all(&base)
        .map_err(|e| format!("could not create {}: {e}", base.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(&base)
        .map_err(|e| {
            format!(
                "could not write the extension host into {}: {e}",
                base.display()
            )
        })?;
    for (name, text) in embedded::FILES {
        let path = staging.path().join(name);
        std::fs::write(&path, text)
            .map_err(|e| format!("could not write {}: {e}", path.display()))?;
    }
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, &dir) {
        let _ = std::fs::remove_dir_all(&staged);
        // Another Tandem may have put the same files there meanwhile.
        if !entry.is_file() {
            return Err(format!(
                "could not write the extension host to {}: {e}",
                dir.display()
            ));
        }
    }
    Ok(entry)
}

/// `$XDG_CACHE_HOME/tandem`, else `~/.cache/tandem`, else the temporary directory.
fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("tandem");
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home).join(".cache").join("tandem"),
        None => std::env::temp_dir().join("tandem-cache"),
    }
}
