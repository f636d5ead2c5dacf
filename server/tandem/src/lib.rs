//! Tandem's front doors: the language server, the ACP agent, print/JSON modes and the demo.
//!
//! Only this crate knows JSON-RPC, LSP and ACP. The binary (`main.rs`) calls [`entry::main`],
//! which parses the command line; the fuzz targets (`fuzz/`) reach the parsers through this library too.

pub mod acp;
mod child;
pub mod cli;
pub mod demo;
mod demo_editor;
pub mod entry;
pub mod extensions;
pub mod host;
pub mod langserver;
pub mod logging;
pub mod lsp;
pub mod mcp;
pub mod packages;
pub mod rpc;
pub mod run;
pub mod terminal_text;
pub mod transport;
pub mod tui;
pub mod uri;
