//! Newline-delimited JSON-RPC (ACP's stdio framing) read with a bound.
//!
//! The ACP crate reads stdin with `lines()`: an endless line is buffered without bound, and one
//! line that is not UTF-8 is an I/O error that ends the connection. This reader hands the crate
//! only UTF-8 lines within the limit (the crate answers what is not JSON-RPC itself: -32700 for
//! invalid JSON, -32600 for a batch or a bad envelope) and refuses the rest with a
//! [`Refusal`]: a line that is not UTF-8 is a Parse error; a line longer than the limit is
//! skipped to its newline without being held (its first bytes are kept to find its `id`).
//! Blank lines are skipped.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use super::envelope::{id_from_prefix, Refusal};
use super::frames::ID_PREFIX;

/// What the reader found next.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// One line, without its line ending.
    Text(String),
    /// A line that cannot be passed on: answer with this, then read on.
    Refused(Refusal),
}

/// Reads lines from `R`; see the module docs.
pub struct LineReader<R> {
    input: BufReader<R>,
    limit: usize,
    /// The protocol and how its limit is set, for the refusals' text.
    protocol: &'static str,
    limit_setting: &'static str,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader refusing lines longer than `limit` bytes.
    pub fn new(input: R, limit: usize) -> Self {
        LineReader {
            input: BufReader::with_capacity(64 * 1024, input),
            limit,
            protocol: "ACP",
            limit_setting: "`tandem acp --max-message-bytes` or TANDEM_MAX_MESSAGE_BYTES",
        }
    }

    /// Names the protocol (`ACP` by default) and how its limit is set, in the refusals.
    pub fn named(mut self, protocol: &'static str, limit_setting: &'static str) -> Self {
        self.protocol = protocol;
        self.limit_setting = limit_setting;
        self
    }

    /// The next line or refusal; `None` at the end of the input.
    pub async fn next(&mut self) -> io::Result<Option<Line>> {
        loop {
            let mut line = Vec::new();
            let mut too_long = false;
            let mut length = 0usize;
            let ended = loop {
                let buf = self.input.fill_buf().await?;
                if buf.is_empty() {
                    break false;
                }
                let end = buf.iter().position(|b| *b == b'\n');
                let take = end.unwrap_or(buf.len());
                length = length.saturating_add(take);
                if too_long || length > self.limit {
                    // Keep only the start, for the id; drop the rest as it comes.
                    too_long = true;
                    let keep = take.min(ID_PREFIX.saturating_sub(line.len()));
                    line.extend_from_slice(&buf[..keep]);
                } else {
                    line.extend_from_slice(&buf[..take]);
                }
                match end {
                    Some(end) => {
                        self.input.consume(end + 1);
                        break true;
                    }
                    None => self.input.consume(take),
                }
            };
            if !ended && line.is_empty() {
                return Ok(None);
            }
            if too_long {
                return Ok(Some(Line::Refused(Refusal::invalid_request(
                    id_from_prefix(&line),
                    format!(
                        "a line of {length} bytes is longer than the limit of {} bytes; it was \
                         skipped (the limit is {})",
                        self.limit, self.limit_setting
                    ),
                ))));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            match String::from_utf8(line) {
                Ok(text) if text.trim().is_empty() => {
                    if !ended {
                        return Ok(None);
                    }
                }
                Ok(text) => return Ok(Some(Line::Text(text))),
                Err(e) => {
                    return Ok(Some(Line::Refused(Refusal::parse_error(format!(
                        "the line is not valid UTF-8 (at byte {}): {} messages are UTF-8 JSON, \
                         one per line",
                        e.utf8_error().valid_up_to(),
                        self.protocol
                    )))))
                }
            }
        }
    }
}
