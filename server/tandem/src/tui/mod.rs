//! Interactive terminal mode: `tandem` with no prompt at a terminal opens a conversation on the
//! host's session, as pi's interactive mode does.
//!
//! The screen has two parts. Finished output (prompts, answers, tool cards) is printed into the
//! terminal's own scrollback once, at the width of the moment, and never redrawn. Below it, the
//! live area — the tail of the answer being streamed, running tools, the queue, the input editor
//! and the footer — is drawn by ratatui, whose cell diff writes only what changed.

pub mod highlight;
pub mod markdown;
pub mod text;
pub mod theme;
