//! The store against a reference: a plain `String` edited through an independent, slow
//! position conversion that scans the text, compared after every random notification.

use super::*;

use PositionEncoding::{Utf16, Utf32, Utf8};

const URI: &str = "file:///work/src/main.rs";

fn at(line: u32, character: u32) -> Position {
    Position::new(line, character)
}

fn range(start: (u32, u32), end: (u32, u32)) -> Range {
    Range::new(at(start.0, start.1), at(end.0, end.1))
}

/// Xorshift64*: a seeded generator, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// The reference: LSP lines as (content start, content end) byte offsets, by scanning.
fn reference_lines(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                lines.push((start, i));
                i += 2;
                start = i;
            }
            b'\r' | b'\n' => {
                lines.push((start, i));
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    lines.push((start, bytes.len()));
    lines
}

fn units(c: char, encoding: PositionEncoding) -> usize {
    match encoding {
        Utf8 => c.len_utf8(),
        Utf16 => c.len_utf16(),
        Utf32 => 1,
    }
}

fn reference_offset(
    text: &str,
    lines: &[(usize, usize)],
    p: Position,
    e: PositionEncoding,
) -> usize {
    let Some(&(start, end)) = lines.get(p.line as usize) else {
        return text.len();
    };
    let mut counted = 0;
    for (i, c) in text[start..end].char_indices() {
        if counted + units(c, e) > p.character as usize {
            return start + i;
        }
        counted += units(c, e);
    }
    end
}

fn reference_position(
    text: &str,
    lines: &[(usize, usize)],
    offset: usize,
    e: PositionEncoding,
) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line = lines
        .iter()
        .rposition(|&(start, _)| start <= offset)
        .unwrap_or(0);
    let character = text[lines[line].0..offset]
        .chars()
        .map(|c| units(c, e))
        .sum::<usize>();
    at(line as u32, character as u32)
}

const FRAGMENTS: &[&str] = &[
    "a",
    "xyz",
    " ",
    "fn ",
    "😀",
    "👍🏽",
    "🇫🇷",
    "中文",
    "日本語",
    "é",
    "e\u{301}",
    "ñ",
    "\u{1F600}x",
    "\n",
    "\r\n",
    "\r",
    "\r\n\r\n",
    "\n\r",
    "\u{2028}",
    "\u{85}",
    "\u{b}",
    "\t",
    "Ω",
];

fn random_text(rng: &mut Rng, max_fragments: usize) -> String {
    (0..rng.below(max_fragments + 1))
        .map(|_| FRAGMENTS[rng.below(FRAGMENTS.len())])
        .collect()
}

/// Mostly valid positions, with lines and characters past the end now and then; characters are
/// drawn in code units, so they land inside surrogate pairs and UTF-8 sequences too.
fn random_position(
    rng: &mut Rng,
    text: &str,
    lines: &[(usize, usize)],
    e: PositionEncoding,
) -> Position {
    if rng.chance(2) {
        return at(
            rng.below(3) as u32 + lines.len() as u32,
            rng.below(5) as u32,
        );
    }
    let line = rng.below(lines.len());
    let (start, end) = lines[line];
    let width: usize = text[start..end].chars().map(|c| units(c, e)).sum();
    let character = if rng.chance(3) {
        u32::MAX
    } else {
        rng.below(width + 3) as u32
    };
    at(line as u32, character)
}

fn fuzz(encoding: PositionEncoding, seed: u64, steps: usize) {
    let mut rng = Rng(seed);
    let mut store = DocumentStore::new(encoding);
    let mut reference = String::from("fn main() {\r\n    println!(\"😀 中文\");\r}\n");
    store.open(URI, "rust", 0, &reference);
    for step in 1..=steps {
        let mut changes = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let lines = reference_lines(&reference);
            let change = if rng.chance(2) {
                TextChange::full(random_text(&mut rng, 20))
            } else {
                let start = random_position(&mut rng, &reference, &lines, encoding);
                let end = if reference.len() > 2000 || rng.chance(30) {
                    random_position(&mut rng, &reference, &lines, encoding)
                } else {
                    start
                };
                TextChange::replace(Range::new(start, end), random_text(&mut rng, 4))
            };
            match change.range {
                None => reference = change.text.clone(),
                Some(r) => {
                    let a = reference_offset(&reference, &lines, r.start, encoding);
                    let b = reference_offset(&reference, &lines, r.end, encoding);
                    reference.replace_range(a.min(b)..a.max(b), &change.text);
                }
            }
            changes.push(change);
        }
        store
            .change(URI, step as i32, &changes)
            .expect("the document is open");
        let document = store.get(URI).expect("the document is open");
        assert_eq!(
            document.text().to_string(),
            reference,
            "{encoding:?} step {step}: {changes:?}"
        );
        assert_eq!(document.version(), step as i32);
        let lines = reference_lines(&reference);
        assert_eq!(
            document.text().len_lines(),
            lines.len(),
            "{encoding:?} step {step}"
        );
        for _ in 0..4 {
            let p = random_position(&mut rng, &reference, &lines, encoding);
            let expected = reference_offset(&reference, &lines, p, encoding);
            assert_eq!(
                store.position_to_offset(URI, p),
                Ok(expected),
                "{encoding:?} step {step} {p:?}"
            );
            let offset = rng.below(reference.len() + 2);
            let expected = reference_position(&reference, &lines, offset, encoding);
            assert_eq!(
                store.offset_to_position(URI, offset),
                Ok(expected),
                "{encoding:?} step {step} @{offset}"
            );
        }
        let (p, q) = (
            random_position(&mut rng, &reference, &lines, encoding),
            random_position(&mut rng, &reference, &lines, encoding),
        );
        let (a, b) = (
            reference_offset(&reference, &lines, p, encoding),
            reference_offset(&reference, &lines, q, encoding),
        );
        let expected = reference[a.min(b)..a.max(b)].to_string();
        assert_eq!(
            store.text_in(URI, Range::new(p, q)),
            Ok(expected),
            "{encoding:?} step {step}"
        );
    }
}

#[test]
fn random_utf8_edits_match_the_reference() {
    fuzz(Utf8, 0x9E37_79B9_7F4A_7C15, 3000);
}

#[test]
fn random_utf16_edits_match_the_reference() {
    fuzz(Utf16, 0xD1B5_4A32_D192_ED03, 3000);
}

#[test]
fn random_utf32_edits_match_the_reference() {
    fuzz(Utf32, 0xA076_1D64_78BD_642F, 3000);
}

#[test]
fn changes_apply_in_order_each_against_the_previous_result() {
    let mut store = DocumentStore::new(Utf16);
    store.open(URI, "rust", 1, "abc");
    let changes = [
        TextChange::replace(range((0, 3), (0, 3)), "\r\nd😀"),
        TextChange::replace(range((1, 1), (1, 3)), "中"),
        TextChange::replace(range((0, 0), (0, 1)), ""),
    ];
    store.change(URI, 2, &changes).unwrap();
    let document = store.get(URI).unwrap();
    assert_eq!(document.text().to_string(), "bc\r\nd中");
    assert_eq!(document.version(), 2);
    assert_eq!(document.language_id(), "rust");
}

#[test]
fn full_replacement_then_incremental() {
    let mut store = DocumentStore::new(Utf8);
    store.open(URI, "python", 3, "old\ntext\n");
    let changes = [
        TextChange::full("new😀\r\nline"),
        TextChange::replace(range((0, 3), (0, 7)), "!"),
    ];
    store.change(URI, 4, &changes).unwrap();
    assert_eq!(store.get(URI).unwrap().text().to_string(), "new!\r\nline");
    assert_eq!(store.get(URI).unwrap().version(), 4);
}

#[test]
fn out_of_range_changes_are_clamped() {
    let mut store = DocumentStore::new(Utf16);
    store.open(URI, "rust", 1, "ab\ncd");
    store
        .change(URI, 2, &[TextChange::replace(range((0, 99), (0, 99)), "!")])
        .unwrap();
    store
        .change(URI, 3, &[TextChange::replace(range((7, 0), (9, 9)), "?")])
        .unwrap();
    store
        .change(URI, 4, &[TextChange::replace(range((1, 1), (0, 1)), "")])
        .unwrap();
    assert_eq!(store.get(URI).unwrap().text().to_string(), "ad?");
}

#[test]
fn empty_document_and_end_of_document() {
    let mut store = DocumentStore::new(Utf16);
    store.open(URI, "plaintext", 0, "");
    assert_eq!(store.position_to_offset(URI, at(0, 0)), Ok(0));
    assert_eq!(store.position_to_offset(URI, at(3, 3)), Ok(0));
    assert_eq!(store.offset_to_position(URI, 9), Ok(at(0, 0)));
    assert_eq!(store.text_in(URI, range((0, 0), (5, 5))), Ok(String::new()));
    store
        .change(
            URI,
            1,
            &[TextChange::replace(range((4, 0), (4, 0)), "x😀\n")],
        )
        .unwrap();
    assert_eq!(store.offset_to_position(URI, 6), Ok(at(1, 0)));
    store
        .change(URI, 2, &[TextChange::replace(range((1, 0), (1, 0)), "y")])
        .unwrap();
    assert_eq!(store.get(URI).unwrap().text().to_string(), "x😀\ny");
    assert_eq!(
        store.text_in(URI, range((0, 1), (0, 3))),
        Ok("😀".to_string())
    );
    assert_eq!(
        store.text_in(URI, range((0, 1), (0, 2))),
        Ok(String::new()),
        "an end inside the pair snaps back to the emoji's start"
    );
    assert_eq!(
        store.text_in(URI, range((0, 2), (0, 3))),
        Ok("😀".to_string()),
        "inside the pair"
    );
}

#[test]
fn unknown_documents_are_typed_errors() {
    let mut store = DocumentStore::new(Utf16);
    let missing = DocumentError::NotOpen {
        uri: "file:///nope.rs".into(),
    };
    assert_eq!(
        store.change("file:///nope.rs", 1, &[TextChange::full("x")]),
        Err(missing.clone())
    );
    assert_eq!(
        store.text_in("file:///nope.rs", Range::default()),
        Err(missing.clone())
    );
    assert_eq!(
        store.offset_to_position("file:///nope.rs", 0),
        Err(missing.clone())
    );
    assert_eq!(
        store.position_to_offset("file:///nope.rs", at(0, 0)),
        Err(missing.clone())
    );
    assert_eq!(store.close("file:///nope.rs").unwrap_err(), missing);
    assert!(missing.to_string().contains("file:///nope.rs is not open"));
    assert!(store.get("file:///nope.rs").is_none());
}

#[test]
fn open_close_reopen_and_versions() {
    let mut store = DocumentStore::new(Utf32);
    store.open("file:///b.go", "go", 7, "package b");
    store.open(URI, "rust", 1, "fn a() {}");
    assert_eq!(store.uris().collect::<Vec<_>>(), ["file:///b.go", URI]);
    let before = store.get(URI).unwrap();
    store
        .change(URI, 2, &[TextChange::replace(range((0, 3), (0, 4)), "b")])
        .unwrap();
    assert_eq!(
        before.text().to_string(),
        "fn a() {}",
        "a snapshot does not change"
    );
    assert_eq!(before.version(), 1);
    let closed = store.close(URI).unwrap();
    assert_eq!(
        (closed.text().to_string(), closed.version()),
        ("fn b() {}".to_string(), 2)
    );
    assert!(!store.is_open(URI));
    assert!(store.change(URI, 3, &[]).is_err());
    store.open(URI, "rust", 10, "again");
    assert_eq!(store.get(URI).unwrap().version(), 10);
    store.open(URI, "rust", 11, "replaced");
    assert_eq!(store.get(URI).unwrap().text().to_string(), "replaced");
    assert_eq!(store.get("file:///b.go").unwrap().language_id(), "go");
}

#[test]
fn encoding_is_set_after_negotiation() {
    let mut store = DocumentStore::default();
    assert_eq!(store.encoding(), Utf16);
    store.set_encoding(PositionEncoding::negotiate(&["utf-8", "utf-16"]));
    store.open(URI, "rust", 0, "😀x");
    assert_eq!(store.position_to_offset(URI, at(0, 4)), Ok(4));
    assert_eq!(store.offset_to_position(URI, 5), Ok(at(0, 5)));
}
