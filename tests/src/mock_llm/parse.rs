//! The fixture parser: header block, one empty line, body verbatim.
//!
//! Hand-written because the format is a dozen lines of grammar whose one hard rule (the body
//! is everything after the first empty line, byte for byte) no general-purpose format keeps.
//! Errors carry the fixture's name and the 1-based line number so a broken transcript is
//! found at once.

use std::time::Duration;

use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::StatusCode;

use super::fixture::{Ending, FixtureError, MockResponse};

/// The keys of the header block, as parsed so far. `None` means "not given yet".
#[derive(Default)]
struct HeaderBlock {
    status: Option<StatusCode>,
    headers: HeaderMap,
    chunk: Option<usize>,
    chunk_delay: Option<Duration>,
    cut: Option<bool>,
    stall: Option<bool>,
}

/// Parses a whole fixture. See the module docs and `tests/README.md` for the format.
pub(crate) fn parse(name: String, bytes: &[u8]) -> Result<MockResponse, FixtureError> {
    let mut block = HeaderBlock::default();
    let mut rest = bytes;
    let mut line_no = 0;
    let body = loop {
        line_no += 1;
        let Some(newline) = rest.iter().position(|&b| b == b'\n') else {
            // The file ends inside the header block. Report a bad last line first, since that
            // is the more precise complaint, then the missing separator.
            if !rest.is_empty() {
                block.line(&name, line_no, rest)?;
                line_no += 1;
            }
            return Err(FixtureError::MissingSeparator {
                name,
                line: line_no,
            });
        };
        let raw = &rest[..newline];
        rest = &rest[newline + 1..];
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.is_empty() {
            break rest;
        }
        block.line(&name, line_no, line)?;
    };
    block.finish(name, body)
}

impl HeaderBlock {
    /// Applies one non-empty line of the header block.
    fn line(&mut self, name: &str, line: usize, raw: &[u8]) -> Result<(), FixtureError> {
        if raw.starts_with(b"#") {
            return Ok(());
        }
        let malformed = || FixtureError::MalformedLine {
            name: name.to_owned(),
            line,
            text: String::from_utf8_lossy(raw).into_owned(),
        };
        let text = std::str::from_utf8(raw).map_err(|_| malformed())?;
        let (key, value) = text.split_once(':').ok_or_else(malformed)?;
        let (key, value) = (key.trim(), value.trim());
        let invalid = |expected: &'static str| FixtureError::InvalidValue {
            name: name.to_owned(),
            line,
            key: key.to_owned(),
            value: value.to_owned(),
            expected,
        };
        let conflict = || FixtureError::Conflict {
            name: name.to_owned(),
            line,
            key: key.to_owned(),
        };
        match key {
            "status" => {
                let status = value
                    .parse::<u16>()
                    .ok()
                    .and_then(|code| StatusCode::from_u16(code).ok())
                    .ok_or_else(|| invalid("an HTTP status code such as 200 or 429"))?;
                set_once(&mut self.status, status).map_err(|()| conflict())
            }
            "header" => {
                let expected = "`Name: value` with a valid HTTP header name and value";
                let (header, header_value) =
                    value.split_once(':').ok_or_else(|| invalid(expected))?;
                let header = HeaderName::from_bytes(header.trim().as_bytes())
                    .map_err(|_| invalid(expected))?;
                let header_value =
                    HeaderValue::from_str(header_value.trim()).map_err(|_| invalid(expected))?;
                self.headers.append(header, header_value);
                Ok(())
            }
            "chunk" => {
                let size = value
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| invalid("a piece size in bytes, at least 1"))?;
                set_once(&mut self.chunk, size).map_err(|()| conflict())
            }
            "chunk-delay-ms" => {
                let millis = value
                    .parse::<u64>()
                    .map_err(|_| invalid("a whole number of milliseconds"))?;
                set_once(&mut self.chunk_delay, Duration::from_millis(millis))
                    .map_err(|()| conflict())
            }
            "cut" | "stall" => {
                let on = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err(invalid("`true` or `false`")),
                };
                let (this, other) = if key == "cut" {
                    (&mut self.cut, self.stall)
                } else {
                    (&mut self.stall, self.cut)
                };
                if on && other == Some(true) {
                    return Err(conflict());
                }
                set_once(this, on).map_err(|()| conflict())
            }
            _ => Err(FixtureError::UnknownKey {
                name: name.to_owned(),
                line,
                key: key.to_owned(),
            }),
        }
    }

    /// Builds the response once the separator has been found.
    fn finish(self, name: String, body: &[u8]) -> Result<MockResponse, FixtureError> {
        let ending = match (self.cut, self.stall) {
            (Some(true), _) => Ending::Cut,
            (_, Some(true)) => Ending::Stall,
            _ => Ending::Complete,
        };
        let status = self.status.unwrap_or(StatusCode::OK);
        let mut response = MockResponse::from_parts(name, status, self.headers, body.to_vec());
        response.set_delivery(self.chunk, self.chunk_delay.unwrap_or_default(), ending);
        Ok(response)
    }
}

/// Stores `value` unless the slot is already filled.
fn set_once<T>(slot: &mut Option<T>, value: T) -> Result<(), ()> {
    if slot.is_some() {
        return Err(());
    }
    *slot = Some(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<MockResponse, FixtureError> {
        parse("t.sse".into(), text.as_bytes())
    }

    #[test]
    fn defaults_apply_when_the_block_is_empty() {
        let response = parse_str("\nhello").expect("parses");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        assert_eq!(response.body().as_ref(), b"hello");
        assert_eq!(response.ending(), Ending::Complete);
        assert_eq!(response.chunk_size(), None);
    }

    #[test]
    fn error_statuses_default_to_json() {
        let response = parse_str("status: 429\n\n{}").expect("parses");
        assert_eq!(response.headers()["content-type"], "application/json");
    }

    #[test]
    fn header_lines_may_repeat_and_keep_colons_in_values() {
        let response =
            parse_str("header: x-a: 1\nheader: x-a: 2\nheader: x-url: http://h:1\n\n").unwrap();
        let values: Vec<_> = response.headers().get_all("x-a").iter().collect();
        assert_eq!(values, ["1", "2"]);
        assert_eq!(response.headers()["x-url"], "http://h:1");
    }

    #[test]
    fn last_line_without_newline_is_checked_before_the_separator() {
        let err = parse_str("status: 200\nbogus: 1").unwrap_err();
        assert!(
            matches!(err, FixtureError::UnknownKey { line: 2, .. }),
            "{err}"
        );
        let err = parse_str("status: 200\n").unwrap_err();
        assert!(
            matches!(err, FixtureError::MissingSeparator { line: 2, .. }),
            "{err}"
        );
    }

    #[test]
    fn bad_values_and_conflicts_are_rejected() {
        for (text, line) in [
            ("status: abc\n\n", 1),
            ("chunk: 0\n\n", 1),
            ("cut: yes\n\n", 1),
            ("header: no-colon\n\n", 1),
            ("#c\nchunk-delay-ms: -1\n\n", 2),
        ] {
            let err = parse_str(text).unwrap_err();
            assert!(
                matches!(err, FixtureError::InvalidValue { line: l, .. } if l == line),
                "{err}"
            );
        }
        for text in ["cut: true\nstall: true\n\n", "status: 200\nstatus: 201\n\n"] {
            let err = parse_str(text).unwrap_err();
            assert!(
                matches!(err, FixtureError::Conflict { line: 2, .. }),
                "{err}"
            );
        }
    }

    #[test]
    fn pieces_cover_the_body() {
        let response = parse_str("chunk: 3\n\nabcdefgh").unwrap();
        let pieces: Vec<_> = response.pieces().iter().map(|p| p.to_vec()).collect();
        assert_eq!(pieces, [b"abc".to_vec(), b"def".to_vec(), b"gh".to_vec()]);
        assert!(parse_str("\n").unwrap().pieces().is_empty());
    }
}
