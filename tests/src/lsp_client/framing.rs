//! LSP base-protocol framing: `Content-Length: N\r\n\r\n` then N bytes of JSON.
//!
//! The reader is strict on purpose. An editor's reader (VS Code's, Neovim's) rejects a frame
//! whose headers do not end in `\r\n`, whose length is missing or wrong, or whose body is not
//! JSON; a test client that let those through would pass a server that no editor can talk to.
//! Each rejection names what was wrong.

use std::io::{self, BufRead, Read, Write};

use serde_json::Value;

/// The longest header line accepted, `\r\n` included. Real headers are under 100 bytes; the
/// limit keeps a stream of garbage without newlines from being buffered whole.
const MAX_HEADER_LINE: u64 = 1024;

/// The largest body accepted (64 MiB): far above any real message, low enough that a corrupt
/// length is reported instead of allocated.
const MAX_BODY: usize = 64 << 20;

/// Why the stream from the server is not a well-formed LSP message stream.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// Reading the stream failed.
    #[error("reading from the language server failed: {0}")]
    Io(#[from] io::Error),
    /// The stream ended inside a frame's headers.
    #[error("the stream ended inside a frame's headers")]
    EndInHeaders,
    /// A header line does not end in `\r\n`.
    #[error("a header line does not end in \\r\\n: {line:?}")]
    BareLineEnd {
        /// The line as read (lossy UTF-8).
        line: String,
    },
    /// A header line is longer than any real header.
    #[error("a header line is longer than {MAX_HEADER_LINE} bytes: {start:?}…")]
    LongHeader {
        /// Its first bytes (lossy UTF-8).
        start: String,
    },
    /// A header line is not `Name: value`.
    #[error("the header line {line:?} is not `Name: value`")]
    BadHeader {
        /// The line, without its line end.
        line: String,
    },
    /// The headers have no `Content-Length`.
    #[error("a frame's headers have no Content-Length")]
    NoLength,
    /// `Content-Length` appears twice.
    #[error("a frame has two Content-Length headers")]
    TwoLengths,
    /// `Content-Length` is not a byte count.
    #[error("Content-Length {value:?} is not a byte count")]
    BadLength {
        /// The header's value.
        value: String,
    },
    /// `Content-Length` is beyond any real message.
    #[error("Content-Length {0} is over the {MAX_BODY}-byte limit")]
    TooLarge(usize),
    /// The stream ended before the body's last byte.
    #[error("the stream ended {got} bytes into a {expected}-byte body")]
    ShortBody {
        /// `Content-Length`.
        expected: usize,
        /// The bytes that came.
        got: usize,
    },
    /// The body is not JSON.
    #[error("a frame's body is not JSON ({error}): {start:?}")]
    NotJson {
        /// The parser's complaint.
        error: serde_json::Error,
        /// The body's first bytes (lossy UTF-8).
        start: String,
    },
}

/// One frame read: the JSON body and how many bytes the frame took, headers included.
#[derive(Debug)]
pub struct Frame {
    /// The body.
    pub message: Value,
    /// Header and body bytes.
    pub bytes: usize,
}

/// Reads the next frame; `Ok(None)` when the stream ends cleanly between frames.
pub fn read_frame(reader: &mut impl BufRead) -> Result<Option<Frame>, FrameError> {
    let mut length = None;
    let mut bytes = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .by_ref()
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)?;
        bytes += n;
        if n == 0 {
            return match bytes {
                0 => Ok(None),
                _ => Err(FrameError::EndInHeaders),
            };
        }
        if line.last() != Some(&b'\n') {
            return Err(if n as u64 == MAX_HEADER_LINE {
                FrameError::LongHeader {
                    start: lossy(&line[..40]),
                }
            } else {
                FrameError::EndInHeaders
            });
        }
        let Some(text) = line.strip_suffix(b"\r\n") else {
            return Err(FrameError::BareLineEnd { line: lossy(&line) });
        };
        if text.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(text);
        let Some((name, value)) = text.split_once(':') else {
            return Err(FrameError::BadHeader {
                line: text.into_owned(),
            });
        };
        // Content-Type is the only other header LSP defines; its one value is the default.
        if name.trim().eq_ignore_ascii_case("content-length") {
            if length.is_some() {
                return Err(FrameError::TwoLengths);
            }
            let value = value.trim();
            let n = value.parse::<usize>().map_err(|_| FrameError::BadLength {
                value: value.to_string(),
            })?;
            length = Some(n);
        }
    }
    let length = length.ok_or(FrameError::NoLength)?;
    if length > MAX_BODY {
        return Err(FrameError::TooLarge(length));
    }
    let mut body = Vec::with_capacity(length);
    let got = reader.by_ref().take(length as u64).read_to_end(&mut body)?;
    if got < length {
        return Err(FrameError::ShortBody {
            expected: length,
            got,
        });
    }
    let message = serde_json::from_slice(&body).map_err(|error| FrameError::NotJson {
        error,
        start: lossy(&body[..body.len().min(80)]),
    })?;
    Ok(Some(Frame {
        message,
        bytes: bytes + length,
    }))
}

/// `message` framed: its header, then its JSON.
pub fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Writes `message` framed and flushes.
pub fn write_frame(writer: &mut impl Write, message: &Value) -> io::Result<()> {
    writer.write_all(&frame(message))?;
    writer.flush()
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_all(bytes: &[u8]) -> Vec<Result<Value, String>> {
        let mut reader = io::Cursor::new(bytes.to_vec());
        let mut out = Vec::new();
        loop {
            match read_frame(&mut reader) {
                Ok(Some(frame)) => out.push(Ok(frame.message)),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    #[test]
    fn frames_round_trip_with_multibyte_text() {
        let first = json!({"jsonrpc": "2.0", "id": 1, "result": {"é": "😀"}});
        let bytes = [frame(&first), frame(&json!({"a": 1}))].concat();
        assert_eq!(read_all(&bytes), [Ok(first), Ok(json!({"a": 1}))]);
    }

    #[test]
    fn a_frame_counts_its_header_and_body_bytes() {
        let bytes = frame(&json!({"a": "é"}));
        let mut reader = io::Cursor::new(bytes.clone());
        let frame = read_frame(&mut reader).unwrap().unwrap();
        assert_eq!(frame.bytes, bytes.len());
    }

    #[test]
    fn other_headers_are_allowed_and_names_are_case_insensitive() {
        let bytes = b"content-type: application/vscode-jsonrpc; charset=utf-8\r\n\
            content-length: 2\r\n\r\n{}";
        assert_eq!(read_all(bytes), [Ok(json!({}))]);
    }

    #[test]
    fn malformed_frames_are_rejected_saying_what_is_wrong() {
        let cases: [(&[u8], &str); 9] = [
            (
                b"Content-Length: 2\n\n{}",
                r#"does not end in \r\n: "Content-Length: 2\n""#,
            ),
            (b"Content-Length 2\r\n\r\n{}", "is not `Name: value`"),
            (b"Content-Type: x\r\n\r\n{}", "have no Content-Length"),
            (
                b"Content-Length: two\r\n\r\n{}",
                r#"Content-Length "two" is not"#,
            ),
            (
                b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
                "two Content-Length headers",
            ),
            (b"Content-Length: 99999999999\r\n\r\n", "over the"),
            (
                b"Content-Length: 10\r\n\r\n{}",
                "ended 2 bytes into a 10-byte body",
            ),
            (b"Content-Length: 3\r\n\r\nnot", "body is not JSON"),
            (b"Content-Length: 2\r\n", "ended inside a frame's headers"),
        ];
        for (bytes, expected) in cases {
            let got = read_all(bytes);
            let Some(Err(message)) = got.last() else {
                panic!("{:?} was accepted: {got:?}", lossy(bytes));
            };
            assert!(message.contains(expected), "{:?}: {message}", lossy(bytes));
        }
    }

    #[test]
    fn an_endless_header_line_is_cut_short() {
        let bytes = vec![b'x'; 5000];
        let got = read_all(&bytes);
        let Some(Err(message)) = got.last() else {
            panic!("accepted: {got:?}");
        };
        assert!(message.contains("longer than 1024 bytes"), "{message}");
    }
}
