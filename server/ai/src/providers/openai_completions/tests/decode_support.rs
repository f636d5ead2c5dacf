//! Running the decoder the way the provider runner does, on fixture files and inline bodies.

use std::collections::VecDeque;

use super::super::decode;
use crate::error::ProviderError;
use crate::event::AssistantMessageEvent;
use crate::http::{EventSource, VecSource};
use crate::model::{Api, InputKind, Model, ModelCost};
use crate::sse::{SseDecoder, SseEvent};
use crate::stream::AssistantStream;
use crate::types::{AssistantBlock, AssistantMessage, StopReason};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/providers/openai-completions/"
);

/// The whole fixture file (header block and body).
pub fn fixture_file(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}{name}"))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// The body of a fixture: everything after the first empty line.
pub fn fixture(name: &str) -> String {
    let file = fixture_file(name);
    match file.find("\n\n") {
        Some(i) => file[i + 2..].to_string(),
        None => panic!("fixture {name} has no empty line after its header block"),
    }
}

/// An OpenAI model with prices, so cost is checked too.
pub fn model() -> Model {
    Model {
        id: "gpt-4.1-mini".into(),
        name: "GPT-4.1 mini".into(),
        api: Api::OpenAiCompletions,
        provider: "openai".into(),
        base_url: "https://api.openai.com/v1".into(),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost {
            input: 0.4,
            output: 1.6,
            cache_read: 0.1,
            cache_write: 0.0,
        },
        context_window: 1_000_000,
        max_tokens: 32_768,
        headers: None,
        compat: None,
    }
}

/// What a decode produced: its result, every event and the final message.
pub struct Outcome {
    pub result: Result<StopReason, ProviderError>,
    pub events: Vec<AssistantMessageEvent>,
    pub message: AssistantMessage,
}

impl Outcome {
    /// How many events of `kind` were emitted.
    pub fn kinds(&self, kind: &str) -> usize {
        self.events.iter().filter(|e| e.kind() == kind).count()
    }
}

/// Decodes `source` like the runner does, collecting every event and the final message.
pub async fn run_source(source: impl EventSource) -> Outcome {
    let model = model();
    let (mut writer, mut stream) = AssistantStream::channel(&model);
    let collector = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    });
    let result = decode(source, &mut writer, &model).await;
    match &result {
        Ok(reason) => writer.finish(*reason).await,
        Err(e) => writer.fail(StopReason::Error, e.to_string()).await,
    }
    let events = collector.await.expect("collector");
    let message = match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => message.clone(),
        Some(AssistantMessageEvent::Error { error, .. }) => error.clone(),
        other => panic!("no terminal event: {other:?}"),
    };
    Outcome {
        result,
        events,
        message,
    }
}

/// Decodes an in-memory body.
pub async fn run(body: &str) -> Outcome {
    run_source(VecSource::from_body(body)).await
}

/// Events decoded from `body` fed in `size`-byte pieces, as a slow network delivers them.
pub struct Chunked(VecDeque<SseEvent>);

impl Chunked {
    /// Decodes `body` fed in `size`-byte pieces.
    pub fn new(body: &str, size: usize) -> Self {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::new();
        for piece in body.as_bytes().chunks(size) {
            decoder.feed(piece, &mut out).expect("decodes");
        }
        decoder.finish(&mut out);
        Chunked(out.into())
    }
}

impl EventSource for Chunked {
    async fn next_event(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        Ok(self.0.pop_front())
    }
}

/// The thinking blocks' texts and signatures.
pub fn thinking(message: &AssistantMessage) -> Vec<(String, Option<String>)> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Thinking(t) => Some((t.thinking.clone(), t.thinking_signature.clone())),
            _ => None,
        })
        .collect()
}
