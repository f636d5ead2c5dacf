//! Fault injection against the real `tandem` binary (issue 9, part 2): the provider (the mock
//! LLM) cuts, stalls, rate-limits, fails and sends garbage; the LSP client never answers,
//! names unknown documents and sessions, and goes away mid-run; an ACP client goes away
//! mid-turn; an MCP server crashes mid-call; an aborted command's processes that left its
//! process group (`faults/processes.rs`). Every case ends in a clear error or a clean
//! recovery: the process never hangs (hang guards only, no timing assertions), never panics
//! (stderr is checked), and the session file still loads with every entry written before the
//! fault (it is re-opened with Tandem's own loader).
//!
//! Provider fixtures are in `fixtures/faults/`. An ACP client cancelling during a permission
//! request is covered by `acp_rust.rs` (`a_cancel_while_a_permission_request_is_open_ends_the_turn_cancelled_and_untouched`).
//!
//! Malformed frames and lines on the wire, and the exit status, are `faults/transport.rs`
//! (issue 16, part 6); a client gone in the middle of a new session's first turn costs nothing
//! (part 7: `faults/lsp.rs` and `faults/acp.rs`).
//!
//! Run: `cargo test -p tandem --test faults`.

mod support;

#[path = "faults/acp.rs"]
mod acp;
#[path = "faults/harness.rs"]
mod harness;
#[path = "faults/lsp.rs"]
mod lsp;
#[path = "faults/mcp.rs"]
mod mcp;
#[path = "faults/processes.rs"]
mod processes;
#[path = "faults/provider.rs"]
mod provider;
#[path = "faults/transport.rs"]
mod transport;
