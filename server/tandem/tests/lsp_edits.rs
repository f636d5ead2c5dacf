//! `tandem lsp`'s edit flow and robustness, black-box: the real binary over stdio on
//! tandem-tests' LSP client, a scripted model (a script file as the model's baseUrl in a temp
//! agent dir), and a test client that answers the server's `workspace/applyEdit` and
//! `window/showMessageRequest` itself — or, on purpose, late or never.

mod support;

#[path = "lsp_edits/consent.rs"]
mod consent;
#[path = "lsp_edits/harness.rs"]
mod harness;
#[path = "lsp_edits/proposals.rs"]
mod proposals;
#[path = "lsp_edits/races.rs"]
mod races;
#[path = "lsp_edits/robustness.rs"]
mod robustness;
#[path = "lsp_edits/saving.rs"]
mod saving;
#[path = "lsp_edits/undo.rs"]
mod undo;
