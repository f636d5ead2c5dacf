//! LSP's base protocol read robustly: `Content-Length` frames out of a byte stream that may hold
//! anything.
//!
//! A frame is header lines (`Name: value`, each ended by `\r\n`; a bare `\n` is accepted), an
//! empty line, and exactly `Content-Length` bytes of body. What the reader tolerates: blank
//! lines between frames, unknown headers, any `Content-Type`, any case in header names. What it
//! refuses, each with one [`Refusal`] and then going on:
//! - a line in the header that is not a header (no colon, a name with characters a header name
//!   cannot have, such as a byte-order mark, or longer than [`MAX_HEADER_LINE`]): where a
//!   `Content-Length:` starts further along that line, the next frame starts there; otherwise
//!   the reader resynchronises;
//! - a header without a usable `Content-Length` (missing, not a number, negative): the body's
//!   length is unknown, so the reader resynchronises;
//! - a body longer than the limit: refused at once, without waiting for it (a client may
//!   declare a terabyte and send ten bytes), answered with its `id` when the bytes already
//!   received show it; then the reader resynchronises, so the body is skipped as it arrives and
//!   never held, and a frame that follows a lying header is still read.
//!
//! Resynchronising means skipping bytes up to the next `Content-Length:` (in any case), wherever
//! it is, with a constant amount of memory. A body that itself contains that text, after a
//! broken frame, is cut there; a well-formed stream never resynchronises.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

use super::envelope::{id_from_prefix, Refusal};

/// The longest header line read; a longer one is not a header.
pub const MAX_HEADER_LINE: usize = 8 * 1024;

/// How much of a refused, too large body is looked at to find its `id`.
pub const ID_PREFIX: usize = 4 * 1024;

/// How long a refused body's first bytes are waited for when none have arrived with its header.
const ID_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

const HEADER: &[u8] = b"content-length:";

/// What the reader found next.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// One frame's body, whole.
    Body(Vec<u8>),
    /// Bytes that are not a readable frame: answer with this, then read on.
    Refused(Refusal),
}

/// Bytes that begin the next header line, found while looking at earlier input.
enum Carry {
    /// A whole line.
    Line(Vec<u8>),
    /// The start of a line whose rest is still in the stream.
    Prefix(Vec<u8>),
}

/// One header line as read.
enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

/// One header line as understood.
enum Header<'a> {
    ContentLength(Result<u64, String>),
    Other(&'a str),
    Garbage,
}

/// Reads frames from `R`; see the module docs.
pub struct FrameReader<R> {
    input: BufReader<R>,
    limit: u64,
    carry: Option<Carry>,
    resync: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader refusing bodies longer than `limit` bytes.
    pub fn new(input: R, limit: u64) -> Self {
        FrameReader {
            input: BufReader::with_capacity(64 * 1024, input),
            limit,
            carry: None,
            resync: false,
        }
    }

    /// The next frame or refusal; `None` at the end of the input.
    pub async fn next(&mut self) -> io::Result<Option<Incoming>> {
        if self.resync {
            self.resync = false;
            if !self.skip_to_header().await? {
                return Ok(None);
            }
        }
        let mut length: Option<Result<u64, String>> = None;
        let mut lines = 0usize;
        loop {
            let line = match self.read_line().await? {
                Line::Eof => {
                    if lines > 0 {
                        tracing::warn!("the input ended inside a frame's header");
                    }
                    return Ok(None);
                }
                Line::TooLong => {
                    self.resync = true;
                    return Ok(Some(Incoming::Refused(Refusal::parse_error(format!(
                        "a header line longer than {MAX_HEADER_LINE} bytes: frames start with \
                         `Content-Length: <bytes>\\r\\n\\r\\n`"
                    )))));
                }
                Line::Text(line) => line,
            };
            if line.is_empty() {
                if lines == 0 {
                    continue;
                }
                break;
            }
            lines += 1;
            match parse_header(&line) {
                Header::ContentLength(value) => length = Some(value),
                Header::Other(name) => {
                    // Content-Type is LSP's own; anything else is tolerated as well.
                    if !name.eq_ignore_ascii_case("content-type") {
                        tracing::debug!("ignored an unknown header `{name}`");
                    }
                }
                Header::Garbage => {
                    let message = format!(
                        "`{}` is not a header line: frames start with `Content-Length: \
                         <bytes>\\r\\n\\r\\n`",
                        excerpt(&line)
                    );
                    match find_header(&line[1..]) {
                        Some(at) => self.carry = Some(Carry::Line(line[1 + at..].to_vec())),
                        None => self.resync = true,
                    }
                    return Ok(Some(Incoming::Refused(Refusal::parse_error(message))));
                }
            }
        }
        let length = match length {
            Some(Ok(length)) => length,
            Some(Err(value)) => {
                self.resync = true;
                return Ok(Some(Incoming::Refused(Refusal::parse_error(format!(
                    "`Content-Length: {value}` is not a byte count: send the body's length in \
                     bytes"
                )))));
            }
            None => {
                self.resync = true;
                return Ok(Some(Incoming::Refused(Refusal::parse_error(
                    "a frame without a `Content-Length` header: send `Content-Length: <bytes>` \
                     before the empty line",
                ))));
            }
        };
        if length > self.limit {
            let id = id_from_prefix(&self.received_prefix().await?);
            self.resync = true;
            return Ok(Some(Incoming::Refused(Refusal::invalid_request(
                id,
                format!(
                    "a message of {length} bytes is larger than the limit of {} bytes; it was \
                     skipped (the limit is `tandem lsp --max-message-bytes` or \
                     TANDEM_MAX_MESSAGE_BYTES)",
                    self.limit
                ),
            ))));
        }
        // Within the limit, which is a usize on every platform Tandem builds for.
        let mut body = vec![0u8; usize::try_from(length).unwrap_or(usize::MAX)];
        match self.input.read_exact(&mut body).await {
            Ok(_) => Ok(Some(Incoming::Body(body))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                tracing::warn!("the input ended inside a frame of {length} bytes");
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// One header line without its line ending, at most [`MAX_HEADER_LINE`] bytes.
    async fn read_line(&mut self) -> io::Result<Line> {
        let mut line = match self.carry.take() {
            Some(Carry::Line(line)) => return Ok(Line::Text(line)),
            Some(Carry::Prefix(prefix)) => prefix,
            None => Vec::new(),
        };
        loop {
            let buf = self.input.fill_buf().await?;
            if buf.is_empty() {
                // A last line without its ending is no frame anyway.
                return Ok(Line::Eof);
            }
            let end = buf.iter().position(|b| *b == b'\n');
            let take = end.unwrap_or(buf.len());
            if line.len() + take > MAX_HEADER_LINE {
                let room = MAX_HEADER_LINE.saturating_sub(line.len()).min(take);
                self.input.consume(room);
                return Ok(Line::TooLong);
            }
            line.extend_from_slice(&buf[..take]);
            match end {
                Some(end) => {
                    self.input.consume(end + 1);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    return Ok(Line::Text(line));
                }
                None => self.input.consume(take),
            }
        }
    }

    /// Skips to the next `Content-Length:` and leaves it as the start of the next line; false at
    /// the end of the input.
    async fn skip_to_header(&mut self) -> io::Result<bool> {
        let mut matched = 0usize;
        let mut skipped = 0u64;
        loop {
            let buf = self.input.fill_buf().await?;
            if buf.is_empty() {
                tracing::debug!("skipped {skipped} bytes to the end of the input");
                return Ok(false);
            }
            let mut found = None;
            for (i, b) in buf.iter().enumerate() {
                let b = b.to_ascii_lowercase();
                // `content-length:` has no prefix that is also its suffix, so a mismatch only
                // needs to check the byte against the start again.
                if b == HEADER[matched] {
                    matched += 1;
                } else {
                    matched = usize::from(b == HEADER[0]);
                }
                if matched == HEADER.len() {
                    found = Some(i + 1);
                    break;
                }
            }
            let used = found.unwrap_or(buf.len());
            self.input.consume(used);
            skipped += used as u64;
            if found.is_some() {
                tracing::debug!("skipped {skipped} bytes to the next Content-Length header");
                self.carry = Some(Carry::Prefix(b"Content-Length:".to_vec()));
                return Ok(true);
            }
        }
    }

    /// The first bytes of a body that will not be read (at most [`ID_PREFIX`]), to find its
    /// `id`: what is buffered already, else what arrives within [`ID_WAIT`]. Nothing is
    /// consumed: resynchronising skips these bytes.
    async fn received_prefix(&mut self) -> io::Result<Vec<u8>> {
        if self.input.buffer().is_empty() {
            // `fill_buf` keeps what it read when the wait ends first (cancel-safe).
            if let Ok(filled) = tokio::time::timeout(ID_WAIT, self.input.fill_buf()).await {
                filled?;
            }
        }
        let buffered = self.input.buffer();
        Ok(buffered[..buffered.len().min(ID_PREFIX)].to_vec())
    }
}

/// Where `Content-Length:` (any case) starts in `bytes`.
fn find_header(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(HEADER.len())
        .position(|w| w.eq_ignore_ascii_case(HEADER))
}

/// A header name's characters (RFC 9110's `token`).
fn is_token(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

fn parse_header(line: &[u8]) -> Header<'_> {
    let Some(colon) = line.iter().position(|b| *b == b':') else {
        return Header::Garbage;
    };
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if name.is_empty() || !name.iter().all(|b| is_token(*b)) {
        return Header::Garbage;
    }
    // Tokens are ASCII.
    let name = std::str::from_utf8(name).unwrap_or_default();
    if !name.eq_ignore_ascii_case("content-length") {
        return Header::Other(name);
    }
    let value = String::from_utf8_lossy(value);
    let value = value.trim_matches([' ', '\t']);
    let parsed = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        value.parse::<u64>().map_err(|_| excerpt(value.as_bytes()))
    } else {
        Err(excerpt(value.as_bytes()))
    };
    Header::ContentLength(parsed)
}

/// At most 40 characters of `bytes`, lossily, for messages.
fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(160)]);
    let mut chars = text.chars();
    let short: String = chars.by_ref().take(40).collect();
    if chars.next().is_some() {
        format!("{short}…")
    } else {
        short
    }
}
