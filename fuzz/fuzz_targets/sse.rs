//! The SSE decoder (`tandem_ai::sse`) on arbitrary bytes in arbitrary chunkings.
//!
//! Input: `[n][n size bytes][body]` (see `tandem_fuzz::chunked`). Checks: no panic; feeding the
//! body in those chunks gives exactly the events of feeding it whole, and both agree with a
//! small reference decoder written from the module's documented rules.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_ai::sse::{SseDecoder, SseEvent};

fn decode(chunks: &[&[u8]]) -> (Vec<SseEvent>, bool) {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    let mut pending = false;
    for chunk in chunks {
        decoder
            .feed(chunk, &mut out)
            .expect("lines are far below the limit");
        pending = decoder.has_pending();
    }
    decoder.finish(&mut out);
    (out, pending)
}

/// The rules of `sse.rs`'s module docs, on the whole body at once.
fn reference(body: &[u8]) -> Vec<SseEvent> {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\n' => {
                lines.push(&body[start..i]);
                i += 1;
                start = i;
            }
            b'\r' => {
                lines.push(&body[start..i]);
                i += if body.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            _ => i += 1,
        }
    }
    let tail = &body[start..];
    let (mut event, mut data, mut has_data, mut id) = (None::<String>, String::new(), false, None);
    let dispatch = |event: &mut Option<String>,
                    data: &mut String,
                    has_data: &mut bool,
                    id: &Option<String>,
                    out: &mut Vec<SseEvent>| {
        let name = event.take();
        if *has_data {
            *has_data = false;
            out.push(SseEvent {
                event: name,
                data: std::mem::take(data),
                id: id.clone(),
            });
        }
    };
    let all = lines
        .into_iter()
        .map(Some)
        .chain(std::iter::once((!tail.is_empty()).then_some(tail)))
        .flatten();
    for line in all {
        if line.is_empty() {
            dispatch(&mut event, &mut data, &mut has_data, &id, &mut out);
            continue;
        }
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if has_data {
                    data.push('\n');
                }
                data.push_str(value);
                has_data = true;
            }
            "event" => event = Some(value.to_string()),
            "id" if !value.contains('\0') => id = Some(value.to_string()),
            _ => {}
        }
    }
    dispatch(&mut event, &mut data, &mut has_data, &id, &mut out);
    out
}

fuzz_target!(|data: &[u8]| {
    let (chunks, body) = tandem_fuzz::chunked(data);
    let (chunked, _) = decode(&chunks);
    let (whole, _) = decode(&[body]);
    assert_eq!(chunked, whole, "chunking changed the events");
    assert_eq!(whole, reference(body), "differs from the reference decoder");
});
