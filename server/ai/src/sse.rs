//! Server-sent events framing, decoded incrementally from arbitrary byte chunks.
//!
//! Written by hand (about a hundred lines) rather than taken from a crate because providers need
//! exact control: chunks split anywhere (inside a CRLF, inside a UTF-8 character), malformed
//! lines must become clear errors instead of panics, and the decoder is a fuzz target. It follows
//! the WHATWG event-stream rules: lines end in CRLF, LF or CR; `:` starts a comment; `data`
//! lines of one event are joined with `\n`; a blank line dispatches; an event without data is
//! dropped. At end of stream a last event without its blank line is still dispatched, as the
//! providers' own SDKs do; whether the response as a whole was complete is the provider's call.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` name, if any.
    pub event: Option<String>,
    /// The joined `data:` lines.
    pub data: String,
    /// The last `id:` seen.
    pub id: Option<String>,
}

/// A line longer than this is refused (a misbehaving server must not exhaust memory).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// A framing failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A single line exceeded [`MAX_LINE_BYTES`].
    #[error("server-sent event line longer than {MAX_LINE_BYTES} bytes")]
    LineTooLong,
}

/// Incremental decoder: feed chunks, take events.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line in progress.
    line: Vec<u8>,
    /// The previous chunk ended in CR, so a leading LF belongs to that line ending.
    skip_lf: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    last_id: Option<String>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        SseDecoder::default()
    }

    /// Decodes `chunk`, appending every event it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = chunk;
        // An empty chunk must not forget a pending CR (found by the `sse` fuzz target).
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            if let [b'\n', tail @ ..] = rest {
                rest = tail;
            }
        }
        while !rest.is_empty() {
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(pos) => {
                    let ending = rest[pos];
                    if self.line.is_empty() {
                        self.process_line(&rest[..pos], out);
                    } else {
                        self.line.extend_from_slice(&rest[..pos]);
                        let line = std::mem::take(&mut self.line);
                        self.process_line(&line, out);
                    }
                    rest = &rest[pos + 1..];
                    if ending == b'\r' {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => self.skip_lf = true,
                        }
                    }
                }
                None => {
                    if self.line.len() + rest.len() > MAX_LINE_BYTES {
                        self.line.clear();
                        return Err(SseError::LineTooLong);
                    }
                    self.line.extend_from_slice(rest);
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    /// True when bytes of an unfinished line or event are pending (a stream that ends here was
    /// cut off mid-event).
    pub fn has_pending(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    /// Ends the stream. A final line without its terminator is processed (servers often omit the
    /// last newline); an event without its blank line is dispatched as well, as providers' own
    /// SDKs do, so a complete last event is not lost.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, out);
        }
        self.dispatch(out);
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        // A complete line never ends inside a UTF-8 sequence (LF and CR are ASCII), so decoding
        // per line is safe; invalid bytes become U+FFFD rather than an error.
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out).expect("decodes");
        }
        d.finish(&mut out);
        out
    }

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn lf_crlf_and_cr_line_endings() {
        assert_eq!(data(&decode(&[b"data: a\n\ndata: b\n\n"])), ["a", "b"]);
        assert_eq!(
            data(&decode(&[b"data: a\r\n\r\ndata: b\r\n\r\n"])),
            ["a", "b"]
        );
        assert_eq!(data(&decode(&[b"data: a\r\rdata: b\r\r"])), ["a", "b"]);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_ending() {
        let events = decode(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"]);
        assert_eq!(data(&events), ["a", "b"]);
    }

    #[test]
    fn multi_line_data_comments_names_and_ids() {
        let events = decode(&[
            b": keep-alive\nevent: message_start\nid: 7\ndata: {\"a\":\ndata: 1}\n\n",
            b"data:nospace\n\n",
        ]);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event.as_deref(), Some("message_start"));
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].data, "{\"a\":\n1}");
        assert_eq!(events[1].data, "nospace");
        assert_eq!(events[1].event, None);
    }

    #[test]
    fn utf8_character_split_across_chunks() {
        let text = "data: héllo 😀\n\n".as_bytes();
        for split in 0..text.len() {
            let events = decode(&[&text[..split], &text[split..]]);
            assert_eq!(data(&events), ["héllo 😀"], "split at {split}");
        }
    }

    #[test]
    fn events_without_data_are_dropped_and_unknown_fields_ignored() {
        let events = decode(&[b"event: ping\n\nretry: 10\nfoo: bar\ndata: x\n\n"]);
        assert_eq!(data(&events), ["x"]);
    }

    #[test]
    fn a_last_event_without_blank_line_is_kept() {
        assert_eq!(data(&decode(&[b"data: [DONE]"])), ["[DONE]"]);
    }

    #[test]
    fn invalid_utf8_does_not_panic() {
        assert_eq!(
            data(&decode(&[b"data: \xff\xfe\n\n"])),
            ["\u{FFFD}\u{FFFD}"]
        );
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_keeps_the_crlf_whole() {
        // Regression (fuzz/regressions/sse): the empty chunk made the LF a second line ending,
        // so a blank line dispatched the event early.
        let events = decode(&[b"data: a\r", b"", b"\ndata: b\n\n"]);
        assert_eq!(data(&events), ["a\nb"]);
    }

    #[test]
    fn pending_reports_a_cut_event() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(b"data: {\"cho", &mut out).expect("decodes");
        assert!(d.has_pending());
        assert!(out.is_empty());
    }
}
