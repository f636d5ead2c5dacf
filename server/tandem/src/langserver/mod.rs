//! Tandem's own language-server clients: language intelligence where no editor provides it
//! (the CLI, ACP, Helix and plain LSP clients), as [`LanguageIntel`].
//!
//! **Which servers.** Built-in entries for common servers — basedpyright (else pyright) and
//! ruff for Python, typescript-language-server for TypeScript and JavaScript, rust-analyzer,
//! clangd, gopls — each used only when its program is on PATH; settings.json's
//! `languageServers` adds entries or replaces one by name, and `null` or `enabled: false`
//! removes one ([`spec`]). Several servers may handle a file type: diagnostics merge all of
//! theirs, definitions, references and symbols are concatenated without duplicates, hover
//! texts are joined, and a rename goes to the first server that offers renames.
//!
//! **Trust.** Language servers read the project, and several run its code (rust-analyzer runs
//! build scripts and proc macros, tsserver loads plugins, clangd reads `.clangd`), so they are
//! started only for a trusted folder ([`LanguageServers::for_session`]); an untrusted session
//! has no own intelligence at all, and a project's `languageServers` is read only once it is
//! trusted (settings are loaded under the trust decision). Files outside the workspace are not
//! given to any server.
//!
//! **Lifecycle.** Nothing starts with the session: the first request about a file starts the
//! servers for its type, in the folder its root markers point to (the nearest ancestor inside
//! the workspace, else the workspace root), and keeps them warm for the session ([`pool`]).
//! Each runs in its own process group with its stderr in the log ([`process`]); one that exits
//! is started again on the next request (twice at most), one that cannot start is reported
//! and not tried again. [`LanguageServers::shutdown`] sends `shutdown` and `exit` with a short
//! timeout and then kills each group; dropping the object kills them at once.
//!
//! **Bounds.** `initialize` may take 30 s, every other request 10 s; a server that does not
//! answer, crashes or is missing is an [`IntelError`] naming it (its exit status and last
//! stderr lines, or the setting to fix): the tool says so and the run goes on.
//!
//! **Documents and diagnostics.** The caller's text is what the server gets (`didOpen`, then a
//! whole-text `didChange` when it differs; versions counted per server) ([`state`]).
//! Diagnostics are the servers' pushed `textDocument/publishDiagnostics`, counted per file
//! (the generation); pull diagnostics are not used (Tandem does not announce them, so the
//! servers push: basedpyright, ruff, tsserver, rust-analyzer, clangd and gopls all do). A
//! report is about the text last sent when its version says so (or, without a version, when
//! it came after the last change); diagnostics wait for such a report from every server of
//! the file, within the settle wait, and then for `diagnostics.quietMs` without a new one only
//! where more may follow: after a document was opened, and for a server seen reporting twice
//! on one text (basedpyright does, a partial report then the full one). So a change costs no
//! quiet wait with ruff or tsserver. Without a settle wait (the report before an edit) a server
//! being started gets its start's bound, then 5 s for its first report (a cold basedpyright
//! takes ~1 s on a quiet machine, several under load). The read tool warms them: a file the
//! agent reads is opened in its servers at once ([`LanguageIntel::prepare`]), so the first
//! edit rarely waits.
//!
//! **The crate.** The client runs on async-lsp (its main loop: framing, request ids, the
//! server's requests and notifications routed to handlers), without its server-side features.
//! Its typed requests name lsp-types' traits, but the payloads are tower-lsp-server's
//! `ls_types` that the rest of Tandem uses (one URI and position vocabulary, `crate::uri`);
//! both describe the same JSON, so [`client`] adapts each `ls_types` request to async-lsp's
//! trait rather than converting between two type crates. lsp-types is compiled (async-lsp
//! needs it) but its types never appear here. Positions are UTF-16, the only encoding offered.

mod client;
pub(crate) mod convert;
mod intel;
mod pool;
mod process;
pub mod spec;
mod state;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tandem_coding::intel::LanguageIntel;
use tandem_coding::settings::LoadedSettings;

use pool::Pool;
use spec::ServerTable;

/// How long the client waits, and how often a server is started again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Start and `initialize`.
    pub initialize: Duration,
    /// Any other request.
    pub request: Duration,
    /// A file's first report, when diagnostics are asked without a settle wait.
    pub first_report: Duration,
    /// `shutdown`, then the exit after `exit`.
    pub shutdown: Duration,
    /// Starts after an exit, per server and root.
    pub restarts: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            initialize: Duration::from_secs(30),
            request: Duration::from_secs(10),
            first_report: Duration::from_secs(5),
            shutdown: Duration::from_secs(2),
            restarts: 2,
        }
    }
}

/// A session's own language servers.
pub struct LanguageServers {
    workspace: PathBuf,
    table: ServerTable,
    pool: Arc<Pool>,
    limits: Limits,
}

/// What a session gets: its servers (none when the folder is untrusted or no server is
/// available), and problems for the user.
pub struct OwnServers {
    /// The servers, when any may start.
    pub servers: Option<Arc<LanguageServers>>,
    /// Settings entries that cannot be used; the untrusted folder's note.
    pub problems: Vec<String>,
}

impl LanguageServers {
    /// The servers of `table` for files inside `workspace`, found on and started with the
    /// search path `path`. Nothing starts yet.
    pub fn new(workspace: PathBuf, table: ServerTable, path: OsString, limits: Limits) -> Self {
        LanguageServers {
            workspace,
            table,
            pool: Arc::new(Pool::new(path, limits)),
            limits,
        }
    }

    /// The servers of a session in `workspace` with `settings` (loaded under the folder's
    /// trust): none for an untrusted folder — with a one-line note when some server would have
    /// been available — and none when no server is configured or found on PATH. Blocking
    /// (looks programs up on PATH).
    pub fn for_session(settings: &LoadedSettings, workspace: &Path, trusted: bool) -> OwnServers {
        let path = spec::search_path();
        let table = ServerTable::new(settings.merged.language_servers.as_ref(), &path);
        let mut problems = table.problems.clone();
        if !trusted {
            if !table.specs.is_empty() {
                let names: Vec<&str> = table.specs.iter().map(|s| s.name.as_str()).collect();
                problems.push(format!(
                    "Tandem's own language servers ({}) are not started: {} is not trusted, and \
                     they read (some run) the project's code. Trust the folder to use them.",
                    names.join(", "),
                    workspace.display()
                ));
            }
            return OwnServers {
                servers: None,
                problems,
            };
        }
        let servers = (!table.specs.is_empty()).then(|| {
            Arc::new(LanguageServers::new(
                workspace.to_path_buf(),
                table,
                path,
                Limits::default(),
            ))
        });
        OwnServers { servers, problems }
    }

    /// The names of the servers that may start, in merge order.
    pub fn names(&self) -> Vec<&str> {
        self.table.specs.iter().map(|s| s.name.as_str()).collect()
    }

    /// Stops every server: `shutdown` and `exit`, then the process group killed. Requests
    /// after this fail.
    pub async fn shutdown(&self) {
        self.pool.shutdown().await;
    }

    /// As the language intelligence of a session.
    pub fn intel(self: &Arc<Self>) -> Arc<dyn LanguageIntel> {
        self.clone()
    }
}
