//! tandem-ai: every LLM provider behind one streaming event protocol.
//!
//! A model call is [`stream`]`(model, context, options)`; it returns an [`AssistantStream`] of
//! [`AssistantMessageEvent`]s ending in exactly one `done` or `error`, after which the final
//! [`AssistantMessage`] is available. Failures never escape as errors or panics: they are the
//! stream's `error` event. This crate knows nothing of tools' execution, files or editors.

pub mod catalog;
pub mod cost;
pub mod error;
pub mod event;
pub mod http;
pub mod jsonc;
pub mod keys;
pub mod model;
pub mod options;
pub mod overflow;
pub mod partial_json;
pub mod process_group;
pub mod providers;
pub mod registry;
pub mod sse;
pub mod stream;
pub mod sync;
pub mod transform;
pub mod types;

pub use error::ProviderError;
pub use event::{AssistantMessageEvent, PartialMessage};
pub use model::{Api, InputKind, Model, ModelCost, OpenAiCompat, ThinkingBudgets, ThinkingLevel};
pub use options::{
    HookFuture, ProviderHookSlot, ProviderHooks, StreamOptions, DEFAULT_IDLE_TIMEOUT,
};
pub use providers::stream;
pub use stream::{AssistantStream, BlockEnds, StreamWriter, ABORTED_MESSAGE};
pub use tokio_util::sync::CancellationToken;
pub use types::*;
