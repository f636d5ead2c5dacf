//! Consent that cannot be bypassed (issue 13), in every front door — the CLI's print and JSON
//! modes, `tandem lsp`, `tandem acp`, each the real binary over real stdio:
//!
//! - `trust`: a cloned repository's project configuration (MCP servers in `.pi/settings.json`
//!   and `.pi/mcp.json`) runs nothing until the folder is trusted — by `--approve`, trust.json,
//!   `defaultProjectTrust`, the editor's own trust or the user's answer to the question — and the
//!   run still answers; a dismissed question means not trusted.
//! - `pi16`: trust.json written by Tandem is read by pi 1.6 and the other way round.
//! - `guards`: writes through a dangling symlink, a folder swapped for a symlink while a
//!   question is open, protected paths in auto mode, NUL bytes in paths.
//! - `failures`: no usable model, broken configuration, and HTTP 400 / 401 / 429 / 503, each
//!   with its exit status and the exact message the user sees.
//!
//! A marker file proves whether a configured MCP server ran: its command appends its name to
//! the marker before starting the fixture MCP server (`fixtures/mcp`).

mod support;

#[path = "consent/common.rs"]
mod common;

#[path = "consent/failures.rs"]
mod failures;
#[path = "consent/guards.rs"]
mod guards;
#[path = "consent/pi16.rs"]
mod pi16;
#[path = "consent/trust.rs"]
mod trust;
