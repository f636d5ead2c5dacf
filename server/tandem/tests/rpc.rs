//! `tandem --mode rpc`, the real binary over real stdio, against the mock LLM server: every
//! command of pi 1.6's RPC mode with its exact response and the events it causes (`commands`,
//! `sessions`), bad input and framing (`bad_input`), shutdown (`lifecycle`), and pi 1.6's own
//! `RpcClient` driving Tandem, compared with the same script against pi 1.6 (`pi_client`), and
//! with pi 1.6's example extensions loaded, their dialogs answered by that client (`extensions`).
//!
//! The client (`client`) is our own: it reads stdout as strict JSONL (LF only) and waits on
//! lines with a hang guard, never on sleeps.

mod support;

#[path = "rpc/bad_input.rs"]
mod bad_input;
#[path = "rpc/client.rs"]
mod client;
#[path = "rpc/commands.rs"]
mod commands;
#[path = "rpc/extensions.rs"]
mod extensions;
#[path = "rpc/lifecycle.rs"]
mod lifecycle;
#[path = "rpc/pi_client.rs"]
mod pi_client;
#[path = "rpc/sessions.rs"]
mod sessions;
