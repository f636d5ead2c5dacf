//! Provider stub, replaced by the real implementation.

use crate::error::ProviderError;
use crate::http::{EventSource, HttpRequest};
use crate::model::Model;
use crate::options::StreamOptions;
use crate::stream::StreamWriter;
use crate::types::{Context, StopReason};

/// Builds the HTTP request for one call.
pub fn build_request(
    model: &Model,
    _context: &Context,
    _options: &StreamOptions,
    _api_key: &str,
) -> Result<HttpRequest, ProviderError> {
    Err(ProviderError::Request(format!(
        "{} is not implemented yet",
        model.api
    )))
}

/// Decodes the response events into the writer.
pub async fn decode(
    _source: impl EventSource,
    _writer: &mut StreamWriter,
    _model: &Model,
) -> Result<StopReason, ProviderError> {
    Err(ProviderError::Request("not implemented".into()))
}
