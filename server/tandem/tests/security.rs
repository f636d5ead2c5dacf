//! Security audit (issue 9, part 5), in every front door where it applies — the CLI's print and
//! JSON modes, `tandem lsp` and `tandem acp`, each the real binary over real stdio:
//!
//! - `keys`: API keys and auth headers never appear in stdout, stderr, LSP / ACP messages,
//!   session files or error messages, whatever the key's source, even when the provider echoes
//!   them back;
//! - `paths`: reads and writes outside the workspace (`..`, absolute paths, symlinks that
//!   escape) need permission; refused, nothing is read or written;
//! - `bash`: what "deny" means in each front door, and that it holds;
//! - `injection`: a file in the workspace tells the model to write `../outside.txt`, the model
//!   obeys, and the write still needs permission.
//!
//! The print mode allows everything, like pi: where that matters the tests pin the behaviour
//! down and show the CLI's way to restrict it (`--tools`).

mod support;

#[path = "security/harness.rs"]
mod harness;

#[path = "security/bash.rs"]
mod bash;
#[path = "security/injection.rs"]
mod injection;
#[path = "security/keys.rs"]
mod keys;
#[path = "security/paths.rs"]
mod paths;
