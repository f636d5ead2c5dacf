//! Tests of the provider: request bodies, message conversion and stream decoding. Fixture
//! transcripts live in `fixtures/providers/openai-completions/`.

mod decode;
mod decode_edges;
mod decode_support;
mod messages;
mod request;
mod support;
