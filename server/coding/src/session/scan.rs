//! Reading a session file line by line, in bounded memory, with each line's place in the file.
//!
//! Loading used to read the whole file into one string; a 331 MB session then needed the
//! string, a parsed entry per line and more (4.9 GB at peak). The scanner reads through a
//! fixed buffer instead and hands out one line at a time, with the byte offset and length of
//! its text in the file, so the session can keep an index of where each entry is and read it
//! back when it is needed (`index.rs`).
//!
//! Lines are what `split('\n')` of the file's text gives, numbered from 1 (blank ones count),
//! each trimmed of surrounding whitespace; invalid UTF-8 reads as U+FFFD, as
//! `String::from_utf8_lossy` makes it. The span given is that of the trimmed text in the file's
//! bytes (whitespace is valid UTF-8, so trimming the lossy text and the bytes agree). A line
//! longer than [`MAX_LINE`] is not kept: its bytes are skipped as they are read, so a hostile
//! file with one endless line costs no more memory than any other.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};

/// The longest line loaded: 64 MiB. No provider takes a request this large, so no real entry
/// is longer; a longer line is skipped (and reported) rather than read into memory.
pub const MAX_LINE: usize = 64 << 20;

/// One line of the file.
#[derive(Debug)]
pub(super) struct ScannedLine<'a> {
    /// 1-based line number.
    pub number: usize,
    /// Offset of the trimmed text's first byte in the file.
    pub start: u64,
    /// Length of the trimmed text in the file's bytes.
    pub len: u32,
    /// The trimmed text (lossy UTF-8); `None` for a line longer than [`MAX_LINE`].
    pub text: Option<Cow<'a, str>>,
}

/// Reads lines from a session file (or any reader).
pub(super) struct Scanner<R> {
    reader: BufReader<R>,
    /// Bytes consumed so far: the offset of the next line.
    offset: u64,
    number: usize,
    buf: Vec<u8>,
    done: bool,
    /// The last byte read was `\n` (true for an empty input).
    ends_with_newline: bool,
}

impl<R: Read> Scanner<R> {
    /// A scanner over `reader`.
    pub fn new(reader: R) -> Scanner<R> {
        Scanner {
            reader: BufReader::with_capacity(256 << 10, reader),
            offset: 0,
            number: 0,
            buf: Vec::new(),
            done: false,
            ends_with_newline: true,
        }
    }

    /// The bytes read so far (all of them once [`Scanner::next_line`] returned `None`).
    pub fn bytes_read(&self) -> u64 {
        self.offset
    }

    /// Whether the input read so far ends with `\n` (or is empty).
    pub fn ends_with_newline(&self) -> bool {
        self.ends_with_newline
    }

    /// The next line (blank lines included), `None` at the end.
    pub fn next_line(&mut self) -> std::io::Result<Option<ScannedLine<'_>>> {
        if self.done {
            return Ok(None);
        }
        self.buf.clear();
        let start = self.offset;
        let mut too_long = false;
        let mut line_bytes = 0u64;
        let mut newline = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break;
            }
            let (take, found) = match memchr::memchr(b'\n', available) {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            if !too_long {
                if self.buf.len() + take > MAX_LINE {
                    too_long = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(&available[..take]);
                }
            }
            line_bytes += take as u64;
            let consumed = take + usize::from(found);
            self.reader.consume(consumed);
            self.offset += consumed as u64;
            if found {
                newline = true;
                break;
            }
        }
        if !newline {
            // The last piece of the file (empty when it ends with `\n`).
            self.done = true;
            if line_bytes == 0 {
                return Ok(None);
            }
            self.ends_with_newline = false;
        } else {
            self.ends_with_newline = true;
        }
        self.number += 1;
        if too_long {
            return Ok(Some(ScannedLine {
                number: self.number,
                start,
                len: 0,
                text: None,
            }));
        }
        let lossy = String::from_utf8_lossy(&self.buf);
        let trimmed = lossy.trim();
        let lead = trimmed.as_ptr() as usize - lossy.as_ptr() as usize;
        let trail = lossy.len() - lead - trimmed.len();
        let len = self.buf.len() - lead - trail;
        let text = match lossy {
            Cow::Borrowed(all) => Cow::Borrowed(&all[lead..lead + trimmed.len()]),
            Cow::Owned(ref all) => Cow::Owned(all[lead..lead + trimmed.len()].to_string()),
        };
        Ok(Some(ScannedLine {
            number: self.number,
            start: start + lead as u64,
            // MAX_LINE < u32::MAX.
            len: len as u32,
            text: Some(text),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (number, start, len, text) of a line.
    type Line = (usize, u64, u32, Option<String>);

    fn lines(input: &[u8]) -> (Vec<Line>, bool, u64) {
        let mut scanner = Scanner::new(input);
        let mut out = Vec::new();
        while let Some(line) = scanner.next_line().expect("reads") {
            out.push((
                line.number,
                line.start,
                line.len,
                line.text.map(|t| t.into_owned()),
            ));
        }
        (out, scanner.ends_with_newline(), scanner.bytes_read())
    }

    #[test]
    fn lines_come_with_their_number_and_trimmed_span() {
        let (got, newline, read) = lines(b"a\n\n  bc \r\nd");
        assert_eq!(
            got,
            vec![
                (1, 0, 1, Some("a".into())),
                (2, 2, 0, Some("".into())),
                (3, 5, 2, Some("bc".into())),
                (4, 10, 1, Some("d".into())),
            ]
        );
        assert!(!newline);
        assert_eq!(read, 11);
        let (got, newline, _) = lines(b"a\n");
        assert_eq!(got.len(), 1);
        assert!(newline);
        let (got, newline, _) = lines(b"");
        assert!(got.is_empty() && newline);
    }

    #[test]
    fn invalid_utf8_reads_lossily_with_the_span_of_the_bytes() {
        let (got, _, _) = lines(b" x\xffy \n");
        assert_eq!(got, vec![(1, 1, 3, Some("x\u{fffd}y".into()))]);
    }

    #[test]
    fn an_overlong_line_is_skipped_without_being_kept() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.extend_from_slice(b"\nok\n");
        let (got, _, _) = lines(&input);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].3, None);
        assert_eq!(got[1], (2, MAX_LINE as u64 + 11, 2, Some("ok".into())));
    }
}
