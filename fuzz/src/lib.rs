//! Helpers shared by the fuzz targets: chunking an input with its own bytes, running a provider
//! decoder on events, and the models the decoders are fed with.

use std::sync::OnceLock;

use tandem_ai::http::EventSource;
use tandem_ai::sse::SseEvent;
use tandem_ai::{
    AssistantMessageEvent, AssistantStream, InputKind, Model, ModelCost, ProviderError, StopReason,
    StreamWriter,
};

/// Splits `data` into chunks whose sizes come from the input itself: the first byte says how
/// many size bytes follow (0–7); the sizes (each 0–63) are used in turn until the data is
/// consumed. No size bytes (or only zeros) means one chunk.
pub fn chunked(data: &[u8]) -> (Vec<&[u8]>, &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let n = usize::from(first % 8).min(rest.len());
    let (sizes, body) = rest.split_at(n);
    let sizes: Vec<usize> = sizes.iter().map(|b| usize::from(b % 64)).collect();
    let mut chunks = Vec::new();
    if sizes.iter().all(|&s| s == 0) {
        // Zero-sized chunks are legal input too: feed one before the body.
        if !sizes.is_empty() {
            chunks.push(&body[..0]);
        }
        chunks.push(body);
        return (chunks, body);
    }
    let mut at = 0;
    let mut i = 0;
    while at < body.len() {
        let size = sizes[i % sizes.len()].min(body.len() - at);
        chunks.push(&body[at..at + size]);
        at += size;
        i += 1;
    }
    (chunks, body)
}

/// Cuts `text` into pieces at char boundaries, sizes from `sizes` (as [`chunked`], in bytes,
/// rounded up to the next char boundary).
pub fn str_pieces<'a>(text: &'a str, sizes: &[u8]) -> Vec<&'a str> {
    let sizes: Vec<usize> = sizes.iter().map(|b| usize::from(b % 32)).collect();
    if sizes.iter().all(|&s| s == 0) {
        return vec![text];
    }
    let mut pieces = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < text.len() {
        let mut end = (at + sizes[i % sizes.len()]).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[at..end]);
        at = end;
        i += 1;
    }
    pieces
}

/// A one-thread runtime shared by every run of a target.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
    })
}

/// Events from memory, as the decoders' unit tests feed them.
pub struct Events(std::collections::VecDeque<SseEvent>);

impl EventSource for Events {
    async fn next_event(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        Ok(self.0.pop_front())
    }
}

/// The decoders' input format: one SSE event per line, `name\tdata` or just `data` (a tab
/// before any other tab names the event). Lines are split on `\n` only, so the data may hold
/// `\r`; invalid UTF-8 becomes U+FFFD, as the SSE decoder does.
pub fn events_from_lines(data: &[u8]) -> Vec<SseEvent> {
    let text = String::from_utf8_lossy(data);
    text.split('\n')
        .filter(|l| !l.is_empty())
        .map(|line| match line.split_once('\t') {
            Some((name, data)) => SseEvent {
                event: Some(name.to_string()).filter(|n| !n.is_empty()),
                data: data.to_string(),
                id: None,
            },
            None => SseEvent {
                event: None,
                data: line.to_string(),
                id: None,
            },
        })
        .collect()
}

/// What a decode produced.
pub struct Decoded {
    pub result: Result<StopReason, String>,
    pub events: Vec<AssistantMessageEvent>,
}

/// Runs `decode` on `events` the way the provider runner does (the writer finishes or fails
/// with the result), draining the stream concurrently, and checks the stream contract: one
/// `start` first, exactly one terminal event last.
pub fn run_decoder(
    model: &Model,
    events: Vec<SseEvent>,
    decode: impl AsyncFnOnce(Events, &mut StreamWriter, &Model) -> Result<StopReason, ProviderError>,
) -> Decoded {
    let (mut writer, mut stream) = AssistantStream::channel(model);
    runtime().block_on(async move {
        let produce = async {
            let result = decode(Events(events.into()), &mut writer, model).await;
            match &result {
                Ok(reason) => writer.finish(*reason).await,
                Err(e) => writer.fail(StopReason::Error, e.to_string()).await,
            }
            result.map_err(|e| e.to_string())
        };
        let consume = async {
            let mut out = Vec::new();
            while let Some(event) = stream.next().await {
                out.push(event);
            }
            out
        };
        let (result, events) = tokio::join!(produce, consume);
        check_contract(&events);
        Decoded { result, events }
    })
}

fn check_contract(events: &[AssistantMessageEvent]) {
    assert!(
        matches!(events.first(), Some(AssistantMessageEvent::Start { .. })),
        "the stream starts with start"
    );
    let terminals = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. }
            )
        })
        .count();
    assert_eq!(terminals, 1, "exactly one terminal event");
    assert!(
        matches!(
            events.last(),
            Some(AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. })
        ),
        "the terminal event is last"
    );
    check_deltas(events);
}

/// Events carry deltas: blocks open in order, deltas go to an open block of their kind and
/// none comes after its block's end, and the final message holds each block's text as the
/// events left it (the sum of its deltas, or the end event's text).
fn check_deltas(events: &[AssistantMessageEvent]) {
    use AssistantMessageEvent as E;
    // (kind, text so far, ended)
    let mut blocks: Vec<(&str, String, bool)> = Vec::new();
    let open = |blocks: &mut Vec<(&str, String, bool)>, index: usize, kind: &'static str| {
        assert_eq!(index, blocks.len(), "{kind} block opened out of order");
        blocks.push((kind, String::new(), false));
    };
    let mut final_message = None;
    for event in events {
        match event {
            E::Start { partial } => assert!(partial.content.is_empty()),
            E::TextStart { content_index } => open(&mut blocks, *content_index, "text"),
            E::ThinkingStart { content_index } => open(&mut blocks, *content_index, "thinking"),
            E::ToolcallStart { content_index, .. } => open(&mut blocks, *content_index, "tool"),
            E::TextDelta {
                content_index,
                delta,
            }
            | E::ThinkingDelta {
                content_index,
                delta,
            }
            | E::ToolcallDelta {
                content_index,
                delta,
            } => {
                let kind = match event {
                    E::TextDelta { .. } => "text",
                    E::ThinkingDelta { .. } => "thinking",
                    _ => "tool",
                };
                let block = blocks
                    .get_mut(*content_index)
                    .expect("delta to an opened block");
                assert_eq!(block.0, kind, "delta to a block of another kind");
                assert!(!block.2, "delta after the block's end");
                block.1.push_str(delta);
            }
            E::TextEnd {
                content_index,
                content,
                ..
            } => {
                let block = blocks
                    .get_mut(*content_index)
                    .expect("end of an opened block");
                assert_eq!(block.0, "text");
                // The end's text is the provider's final word: pi's providers take the
                // finished item's text over the deltas when a server sends both and they
                // differ, and so does Tandem. The final message must then hold it.
                block.1 = content.clone();
                block.2 = true;
            }
            E::ThinkingEnd {
                content_index,
                content,
                redacted,
                ..
            } => {
                let block = blocks
                    .get_mut(*content_index)
                    .expect("end of an opened block");
                assert_eq!(block.0, "thinking");
                let _ = redacted;
                block.1 = content.clone();
                block.2 = true;
            }
            E::ToolcallEnd { content_index, .. } => {
                let block = blocks
                    .get_mut(*content_index)
                    .expect("end of an opened block");
                assert_eq!(block.0, "tool");
                block.2 = true;
            }
            E::Done { message, .. } => final_message = Some(message),
            E::Error { error, .. } => final_message = Some(error),
        }
    }
    let message = final_message.expect("a terminal event");
    assert_eq!(
        message.content.len(),
        blocks.len(),
        "the final message's blocks"
    );
    for (block, (kind, text, _)) in message.content.iter().zip(&blocks) {
        match block {
            tandem_ai::AssistantBlock::Text(t) => {
                assert_eq!(*kind, "text");
                assert_eq!(&t.text, text, "the final text is not what the events said");
            }
            tandem_ai::AssistantBlock::Thinking(t) => {
                assert_eq!(*kind, "thinking");
                assert_eq!(
                    &t.thinking, text,
                    "the final thinking is not what the events said"
                );
            }
            tandem_ai::AssistantBlock::ToolCall(_) => assert_eq!(*kind, "tool"),
        }
    }
}

/// A model of `api` with prices (so cost is computed) and reasoning on.
pub fn model(api: tandem_ai::Api, provider: &str, id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api,
        provider: provider.into(),
        base_url: "https://example.invalid/v1".into(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: None,
        compat: None,
    }
}

/// Consumes `data` for a decoder target: the first byte picks one of `models`, the rest is
/// events (see [`events_from_lines`]).
pub fn fuzz_decoder(
    data: &[u8],
    models: &[Model],
    decode: impl AsyncFnOnce(Events, &mut StreamWriter, &Model) -> Result<StopReason, ProviderError>,
) {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let model = &models[usize::from(pick) % models.len()];
    let decoded = run_decoder(model, events_from_lines(body), decode);
    // The final message agrees with the result.
    let last = decoded.events.last().expect("a terminal event");
    match (&decoded.result, last) {
        (Ok(_), AssistantMessageEvent::Done { .. }) => {}
        (Ok(_), AssistantMessageEvent::Error { .. }) => {} // malformed tool-call arguments
        (Err(_), AssistantMessageEvent::Error { .. }) => {}
        (result, event) => panic!("result {result:?} ended in {event:?}"),
    }
}
