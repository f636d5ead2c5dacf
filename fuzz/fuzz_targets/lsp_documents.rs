//! LSP document sync (`tandem::lsp::documents::DocumentStore`): random incremental changes in
//! UTF-8, UTF-16 and UTF-32 positions, compared with a plain reference on a `String`.
//!
//! Input: an encoding byte (0 UTF-8, 1 UTF-16, 2 UTF-32), a little-endian u16 length, the
//! initial text (lossy UTF-8), then changes: a kind byte (`% 8 == 1`: replace the whole
//! document; bit 0x80: starts a new `didChange`, otherwise the change joins the current one),
//! four little-endian u16 (start line, start character, end line, end character), a length
//! byte and the new text. Checks: after every notification the store's text equals the
//! reference's; `text_in` and `offset_to_position` agree with the reference too. The reference
//! follows the LSP rules the server documents: line breaks are `\n`, `\r\n` and `\r`; a line
//! past the end means the end of the document; a character past the line's content means its
//! end; a position inside a character (UTF-8 byte, UTF-16 surrogate half) means its start; a
//! reversed range is swapped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::lsp::documents::{DocumentStore, TextChange};
use tandem::lsp::position::{Position, PositionEncoding, Range};

const URI: &str = "file:///fuzz.txt";

fn units(c: char, encoding: PositionEncoding) -> usize {
    match encoding {
        PositionEncoding::Utf8 => c.len_utf8(),
        PositionEncoding::Utf16 => c.len_utf16(),
        PositionEncoding::Utf32 => 1,
    }
}

/// (start, content end) byte offsets of each line.
fn lines(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push((start, i));
                i += 1;
                start = i;
            }
            b'\r' => {
                out.push((start, i));
                i += if bytes.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push((start, bytes.len()));
    out
}

fn to_offset(text: &str, p: Position, encoding: PositionEncoding) -> usize {
    let lines = lines(text);
    let Some(&(start, end)) = lines.get(p.line as usize) else {
        return text.len();
    };
    let mut acc = 0;
    for (i, c) in text[start..end].char_indices() {
        if acc + units(c, encoding) > p.character as usize {
            return start + i;
        }
        acc += units(c, encoding);
    }
    end
}

fn to_position(text: &str, offset: usize, encoding: PositionEncoding) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let lines = lines(text);
    let line = lines
        .iter()
        .rposition(|&(start, _)| start <= offset)
        .unwrap_or(0);
    let start = lines[line].0;
    let character = text[start..offset]
        .chars()
        .map(|c| units(c, encoding))
        .sum::<usize>();
    Position::new(line as u32, character as u32)
}

fn to_range(text: &str, r: Range, encoding: PositionEncoding) -> std::ops::Range<usize> {
    let a = to_offset(text, r.start, encoding);
    let b = to_offset(text, r.end, encoding);
    a.min(b)..a.max(b)
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }
    fn text(&mut self, len: usize) -> String {
        let len = len.min(self.0.len());
        let (text, rest) = self.0.split_at(len);
        self.0 = rest;
        String::from_utf8_lossy(text).into_owned()
    }
}

fuzz_target!(|data: &[u8]| {
    assert!(tandem::lsp::position::ropey_counts_lsp_lines());
    let mut input = Reader(data);
    let (Some(enc), Some(len)) = (input.byte(), input.u16()) else {
        return;
    };
    let encoding = match enc % 3 {
        0 => PositionEncoding::Utf8,
        1 => PositionEncoding::Utf16,
        _ => PositionEncoding::Utf32,
    };
    let mut reference = input.text(usize::from(len));
    let mut store = DocumentStore::new(encoding);
    store.open(URI, "plaintext", 0, &reference);

    let mut version = 0;
    let mut batch: Vec<TextChange> = Vec::new();
    let mut flush = |store: &mut DocumentStore, batch: &mut Vec<TextChange>, reference: &str| {
        version += 1;
        store.change(URI, version, batch).expect("open");
        batch.clear();
        let doc = store.get(URI).expect("open");
        assert_eq!(
            doc.text().to_string(),
            reference,
            "the store and the reference differ"
        );
        assert_eq!(doc.version(), version);
    };
    while let Some(kind) = input.byte() {
        let (Some(sl), Some(sc), Some(el), Some(ec), Some(n)) = (
            input.u16(),
            input.u16(),
            input.u16(),
            input.u16(),
            input.byte(),
        ) else {
            break;
        };
        let text = input.text(usize::from(n));
        if kind & 0x80 != 0 && !batch.is_empty() {
            flush(&mut store, &mut batch, &reference);
        }
        let range = Range::new(
            Position::new(u32::from(sl), u32::from(sc)),
            Position::new(u32::from(el), u32::from(ec)),
        );
        // Reads before the change, on the text the store holds after the last flush.
        if batch.is_empty() {
            let r = to_range(&reference, range, encoding);
            assert_eq!(
                store.text_in(URI, range).expect("open"),
                reference[r.clone()]
            );
            assert_eq!(
                store.offset_to_position(URI, r.start).expect("open"),
                to_position(&reference, r.start, encoding),
                "offset {} of {reference:?}",
                r.start
            );
            let odd = usize::from(sc) % (reference.len() + 2);
            assert_eq!(
                store.offset_to_position(URI, odd).expect("open"),
                to_position(&reference, odd, encoding),
                "offset {odd} of {reference:?}"
            );
        }
        if kind % 8 == 1 {
            reference = text.clone();
            batch.push(TextChange::full(text));
        } else {
            let r = to_range(&reference, range, encoding);
            reference.replace_range(r, &text);
            batch.push(TextChange::replace(range, text));
        }
    }
    if !batch.is_empty() {
        flush(&mut store, &mut batch, &reference);
    }
    let closed = store.close(URI).expect("open");
    assert_eq!(closed.text().to_string(), reference);
});
