//! Scripted provider stub.

use crate::error::ProviderError;
use crate::model::Model;
use crate::options::StreamOptions;
use crate::stream::StreamWriter;
use crate::types::{Context, StopReason};

/// Replays the script turn for this context.
pub async fn run(
    _writer: &mut StreamWriter,
    _model: &Model,
    _context: &Context,
    _options: &StreamOptions,
) -> Result<StopReason, ProviderError> {
    Err(ProviderError::Request("not implemented".into()))
}
