//! Incremental parsing of JSON that arrives in pieces (tool-call arguments).
//!
//! pi re-parses the whole accumulated argument string after every delta, which is quadratic in
//! the argument size: a 1 MB `write` call in 5k pieces parses 2.5 GB. This parser keeps its
//! position between pieces and updates the target [`Value`] in place, so each piece costs time
//! proportional to its own length (plus the nesting depth). It is hand-written because the
//! crates we looked at (serde_json's streaming deserializer, `partial-json` ports) either need
//! complete values or re-parse from the start.
//!
//! What the partial value shows: every completed key/value; a string value being streamed as
//! its prefix; empty containers as soon as they open. Keys, numbers and literals appear once
//! they are complete. Invalid input stops updates and is reported by [`PartialJson::failed`];
//! the final strict parse happens at the end of the tool call.

use serde_json::{Map, Value};

#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

#[derive(Debug, Clone)]
enum Frame {
    /// An open object; `key` is the member currently being read.
    Object {
        seg: Option<Seg>,
        key: Option<String>,
    },
    /// An open array.
    Array { seg: Option<Seg> },
}

impl Frame {
    fn seg(&self) -> Option<&Seg> {
        match self {
            Frame::Object { seg, .. } | Frame::Array { seg } => seg.as_ref(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Expecting a value (start, after `:` or `,` in an array).
    #[default]
    Value,
    /// After `[`: a value or `]`.
    ArrayStart,
    /// After `{`: a key or `}`.
    ObjectStart,
    /// After `,` in an object: a key.
    Key,
    /// Inside a key string.
    InKey,
    /// After a key: `:`.
    Colon,
    /// Inside a string value.
    InString,
    /// Reading a number or literal.
    Scalar,
    /// After a value: `,`, a closer, or the end.
    AfterValue,
    /// The root value is complete.
    End,
}

/// Incremental JSON parser state; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct PartialJson {
    stack: Vec<Frame>,
    state: State,
    /// Pending scalar text, or the key being read.
    token: String,
    /// Pending escape sequence after a backslash (`u12` …); `None` when not in an escape.
    escape: Option<String>,
    /// A high surrogate waiting for its low half.
    high_surrogate: Option<u16>,
    failed: bool,
}

impl PartialJson {
    /// A parser at the start of a document.
    pub fn new() -> Self {
        PartialJson::default()
    }

    /// True once the input stopped being valid JSON (updates stop there).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// True when a complete root value was read.
    pub fn complete(&self) -> bool {
        self.state == State::End
    }

    /// Feeds the next piece of text, updating `target` (the root value) in place.
    pub fn feed(&mut self, target: &mut Value, piece: &str) {
        if self.failed {
            return;
        }
        let bytes = piece.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::InString | State::InKey if self.escape.is_none() => {
                    // Copy the run up to the next quote or backslash in one go.
                    let rest = &piece[i..];
                    let run = rest.find(['"', '\\']).unwrap_or(rest.len());
                    if run > 0 {
                        self.push_str(target, &rest[..run]);
                        i += run;
                        continue;
                    }
                    if bytes[i] == b'"' {
                        self.close_string(target);
                    } else {
                        self.escape = Some(String::new());
                    }
                    i += 1;
                }
                State::InString | State::InKey => {
                    let c = match piece[i..].chars().next() {
                        Some(c) => c,
                        None => break,
                    };
                    self.escape_char(target, c);
                    if self.failed {
                        // An invalid escape stops updates here, not at the next piece
                        // (found by the `partial_json` fuzz target).
                        return;
                    }
                    i += c.len_utf8();
                }
                _ => {
                    let c = match piece[i..].chars().next() {
                        Some(c) => c,
                        None => break,
                    };
                    let consumed = self.structural(target, c);
                    if self.failed {
                        return;
                    }
                    if consumed {
                        i += c.len_utf8();
                    }
                }
            }
        }
    }

    /// Handles one character outside strings; returns false when the character must be
    /// processed again in the new state (the terminator of a scalar).
    fn structural(&mut self, target: &mut Value, c: char) -> bool {
        if self.state == State::Scalar {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.') {
                self.token.push(c);
                return true;
            }
            self.finish_scalar(target);
            return false;
        }
        if c.is_ascii_whitespace() {
            return true;
        }
        match (self.state, c) {
            (State::ObjectStart, '}') | (State::AfterValue, '}') => self.close(target, true),
            (State::ArrayStart, ']') | (State::AfterValue, ']') => self.close(target, false),
            (State::ObjectStart | State::Key, '"') => {
                self.token.clear();
                self.state = State::InKey;
            }
            (State::Colon, ':') => {
                let key = std::mem::take(&mut self.token);
                if let Some(Frame::Object { key: slot, .. }) = self.stack.last_mut() {
                    *slot = Some(key);
                }
                self.state = State::Value;
            }
            (State::AfterValue, ',') => match self.stack.last() {
                Some(Frame::Object { .. }) => self.state = State::Key,
                Some(Frame::Array { .. }) => self.state = State::Value,
                None => self.failed = true,
            },
            (State::Value | State::ArrayStart, '{') => {
                self.insert(target, Value::Object(Map::new()));
                let seg = self.child_seg(target);
                self.stack.push(Frame::Object { seg, key: None });
                self.state = State::ObjectStart;
            }
            (State::Value | State::ArrayStart, '[') => {
                self.insert(target, Value::Array(Vec::new()));
                let seg = self.child_seg(target);
                self.stack.push(Frame::Array { seg });
                self.state = State::ArrayStart;
            }
            (State::Value | State::ArrayStart, '"') => {
                self.insert(target, Value::String(String::new()));
                self.state = State::InString;
            }
            (State::Value | State::ArrayStart, c) if c == '-' || c.is_ascii_alphanumeric() => {
                self.token.clear();
                self.token.push(c);
                self.state = State::Scalar;
            }
            _ => self.failed = true,
        }
        true
    }

    fn finish_scalar(&mut self, target: &mut Value) {
        let token = std::mem::take(&mut self.token);
        let value = match token.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            number => match serde_json::from_str::<serde_json::Number>(number) {
                Ok(n) => Value::Number(n),
                Err(_) => {
                    self.failed = true;
                    return;
                }
            },
        };
        self.insert(target, value);
        self.after_value();
    }

    fn after_value(&mut self) {
        self.state = if self.stack.is_empty() {
            State::End
        } else {
            State::AfterValue
        };
    }

    fn close(&mut self, _target: &mut Value, object: bool) {
        match self.stack.pop() {
            Some(Frame::Object { .. }) if object => self.after_value(),
            Some(Frame::Array { .. }) if !object => self.after_value(),
            _ => self.failed = true,
        }
    }

    fn close_string(&mut self, _target: &mut Value) {
        self.flush_surrogate(_target);
        if self.state == State::InKey {
            self.state = State::Colon;
        } else {
            self.after_value();
        }
    }

    fn escape_char(&mut self, target: &mut Value, c: char) {
        let Some(mut esc) = self.escape.take() else {
            return;
        };
        if esc.is_empty() {
            let mapped = match c {
                '"' => Some('"'),
                '\\' => Some('\\'),
                '/' => Some('/'),
                'b' => Some('\u{8}'),
                'f' => Some('\u{c}'),
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                'u' => None,
                _ => {
                    self.failed = true;
                    return;
                }
            };
            if let Some(m) = mapped {
                self.flush_surrogate(target);
                let mut buf = [0u8; 4];
                self.push_str(target, m.encode_utf8(&mut buf));
                return;
            }
            esc.push('u');
            self.escape = Some(esc);
            return;
        }
        if !c.is_ascii_hexdigit() {
            self.failed = true;
            return;
        }
        esc.push(c);
        if esc.len() < 5 {
            self.escape = Some(esc);
            return;
        }
        let unit = u16::from_str_radix(&esc[1..], 16).unwrap_or(0xFFFD);
        match (self.high_surrogate.take(), unit) {
            (Some(high), 0xDC00..=0xDFFF) => {
                let code =
                    0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                let ch = char::from_u32(code).unwrap_or('\u{FFFD}');
                let mut buf = [0u8; 4];
                self.push_str(target, ch.encode_utf8(&mut buf));
            }
            (prev, 0xD800..=0xDBFF) => {
                if prev.is_some() {
                    self.push_str(target, "\u{FFFD}");
                }
                self.high_surrogate = Some(unit);
            }
            (prev, _) => {
                if prev.is_some() {
                    self.push_str(target, "\u{FFFD}");
                }
                let ch = char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}');
                let mut buf = [0u8; 4];
                self.push_str(target, ch.encode_utf8(&mut buf));
            }
        }
    }

    /// An unpaired high surrogate becomes U+FFFD once it is clear no low half follows.
    fn flush_surrogate(&mut self, target: &mut Value) {
        if self.high_surrogate.take().is_some() {
            self.push_str(target, "\u{FFFD}");
        }
    }

    fn push_str(&mut self, target: &mut Value, s: &str) {
        if self.high_surrogate.is_some() && self.escape.is_none() {
            // Raw text after a lone high surrogate escape.
            self.high_surrogate = None;
            self.append(target, "\u{FFFD}");
        }
        self.append(target, s);
    }

    fn append(&mut self, target: &mut Value, s: &str) {
        if self.state == State::InKey {
            self.token.push_str(s);
            return;
        }
        if let Some(Value::String(current)) = self.slot(target) {
            current.push_str(s);
        }
    }

    /// The container at the top of the stack.
    fn container<'a>(&self, target: &'a mut Value) -> Option<&'a mut Value> {
        let mut node = target;
        for frame in self.stack.iter().skip(1) {
            node = match (frame.seg()?, node) {
                (Seg::Key(k), Value::Object(map)) => map.get_mut(k)?,
                (Seg::Index(i), Value::Array(items)) => items.get_mut(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The value currently being filled: the current member of the top container, or the root.
    fn slot<'a>(&self, target: &'a mut Value) -> Option<&'a mut Value> {
        let Some(top) = self.stack.last() else {
            return Some(target);
        };
        let key = match top {
            Frame::Object { key, .. } => key.clone(),
            Frame::Array { .. } => None,
        };
        match self.container(target)? {
            Value::Object(map) => map.get_mut(key.as_deref()?),
            Value::Array(items) => items.last_mut(),
            _ => None,
        }
    }

    fn insert(&mut self, target: &mut Value, value: Value) {
        let Some(top) = self.stack.last() else {
            *target = value;
            return;
        };
        let key = match top {
            Frame::Object { key, .. } => key.clone(),
            Frame::Array { .. } => None,
        };
        match self.container(target) {
            Some(Value::Object(map)) => {
                if let Some(k) = key {
                    map.insert(k, value);
                }
            }
            Some(Value::Array(items)) => items.push(value),
            _ => self.failed = true,
        }
    }

    /// Where a container just inserted lives inside its parent.
    fn child_seg(&self, target: &mut Value) -> Option<Seg> {
        let top = self.stack.last()?;
        match top {
            Frame::Object { key, .. } => key.clone().map(Seg::Key),
            Frame::Array { .. } => match self.container(target)? {
                Value::Array(items) => Some(Seg::Index(items.len().saturating_sub(1))),
                _ => None,
            },
        }
    }
}

/// Parses `text` (possibly incomplete) in one go; `{}` when nothing usable is there.
pub fn parse_partial(text: &str) -> Value {
    let mut value = Value::Object(Map::new());
    let mut parser = PartialJson::new();
    parser.feed(&mut value, text);
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed_pieces(pieces: &[&str]) -> (Value, PartialJson) {
        let mut v = Value::Object(Map::new());
        let mut p = PartialJson::new();
        for piece in pieces {
            p.feed(&mut v, piece);
        }
        (v, p)
    }

    #[test]
    fn prefixes_show_completed_members_and_string_prefixes() {
        assert_eq!(parse_partial(""), json!({}));
        assert_eq!(parse_partial("{"), json!({}));
        assert_eq!(parse_partial("{\"pa"), json!({}));
        assert_eq!(parse_partial("{\"path\""), json!({}));
        assert_eq!(
            parse_partial("{\"path\": \"src/ma"),
            json!({"path": "src/ma"})
        );
        assert_eq!(parse_partial("{\"n\": 12"), json!({}));
        assert_eq!(parse_partial("{\"n\": 12,"), json!({"n": 12}));
        assert_eq!(
            parse_partial("{\"a\": [1, {\"b\": tr"),
            json!({"a": [1, {}]})
        );
        assert_eq!(
            parse_partial("{\"a\": [1, {\"b\": true}], \"c\": null}"),
            json!({"a": [1, {"b": true}], "c": null})
        );
    }

    #[test]
    fn every_split_of_a_document_gives_the_same_result() {
        let doc = r#"{"path":"a\"b\\c\u00e9\ud83d\ude00","edits":[{"oldText":"x\n","newText":"y\t"}],"n":-1.5e3,"ok":false,"z":null,"unicode":"héllo wörld 😀"}"#;
        let expected: Value = serde_json::from_str(doc).expect("valid");
        let chars: Vec<(usize, char)> = doc.char_indices().collect();
        for &(split, _) in &chars {
            let (v, p) = feed_pieces(&[&doc[..split], &doc[split..]]);
            assert!(!p.failed(), "split at {split} failed");
            assert!(p.complete(), "split at {split} incomplete");
            assert_eq!(v, expected, "split at {split}");
        }
        let one_by_one: Vec<String> = doc.chars().map(String::from).collect();
        let refs: Vec<&str> = one_by_one.iter().map(String::as_str).collect();
        assert_eq!(feed_pieces(&refs).0, expected);
    }

    #[test]
    fn invalid_input_stops_updates() {
        let (v, p) = feed_pieces(&["{\"a\": 1,", " oops", "\"b\": 2}"]);
        assert!(p.failed());
        assert_eq!(v, json!({"a": 1}));
        let (_, p) = feed_pieces(&["{\"a\": 1}}"]);
        assert!(p.failed());
        let (_, p) = feed_pieces(&["{\"a\": 01x}"]);
        assert!(p.failed());
    }

    #[test]
    fn an_invalid_escape_stops_updates_within_the_piece() {
        // Regression (fuzz/regressions/partial_json): the text after a bad escape was still
        // appended when it came in the same piece.
        let whole = feed_pieces(&[r#"{"path":"a\u00\9e","n":1}"#]);
        let split = feed_pieces(&[r#"{"path":"a\u00\"#, r#"9e","n":1}"#]);
        assert!(whole.1.failed() && split.1.failed());
        assert_eq!(whole.0, json!({"path": "a"}));
        assert_eq!(whole.0, split.0);
        assert_eq!(parse_partial(r#"{"s":"x\qyz"}"#), json!({"s": "x"}));
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(
            parse_partial(r#"{"s":"a\ud800b\udc00"}"#),
            json!({"s": "a\u{FFFD}b\u{FFFD}"})
        );
    }

    #[test]
    fn non_object_roots_are_parsed() {
        assert_eq!(parse_partial("[1,2"), json!([1]));
        assert_eq!(parse_partial("\"abc"), json!("abc"));
    }
}
